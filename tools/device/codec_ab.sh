#!/bin/bash
# Sourced by a device call's script (docs/trials/*-call.sh): the steps every codec A/B call
# repeats, with the binaries in .gpu/ (multires, gpu_tests) and results under $OUT.
#   say TEXT...                      print and append to $OUT/summary.txt
#   gpu_checks                       the GPU tests (MULTIRES_REQUIRE_GPU=1) and cli_check.sh
#   run NAME SIZE FIELD REPEAT GPUS ENV...
#                                    one bench process (--resident, rel 1e-3) with ENV set (give
#                                    X=1 for none): its resident and slab rows, GB/s compress /
#                                    decompress, and how many rows had equal bytes and values;
#                                    SIZE is N (N^3) or DxN (D planes of N^2); the fields are
#                                    made once a call and kept in /tmp/fields
#   timeline NAME SIZE ENV...        one bench process on one GPU (TL_GPUS=2 or 1,2: those) with the
#                                    device timeline
#                                    (MULTIRES_CODEC_TIMELINE=1, --resident, turbulent, rel 1e-3,
#                                    5 runs) and ENV (X=1 for none), its output in /tmp/tr/NAME.log
#                                    and .err: the last chain of its last run
#                                    (`timeline_summary.py --chain`)
#   bench_to LOG ERR LIMIT SIZE GPUS REPEAT FIELD ENV...
#                                    the bench command both `run` and `bench_one` start
#   bench_one NAME SIZE GPUS ENV...  one bench process (--resident, turbulent, rel 1e-3, 5 runs) with
#                                    ENV, its output in /tmp/tr/NAME.log and .err (BENCH_LIMIT s)
#   begin_call                       the cards' names into $OUT/summary.txt; starts the call's clock
#   elapsed                          seconds since begin_call
#   end_call                         the logs (and /tmp/tr's) into $OUT/logs.tgz; the call's total
#   traced NAME SIZE GPUS ENV...     one traced bench process (MULTIRES_CODEC_TRACE=1, --resident,
#                                    turbulent, rel 1e-3, 5 runs) with ENV set (X=1 for none), its
#                                    output in /tmp/tr/NAME.log and .err: its resident GB/s and, per
#                                    traced resident run, GPU 0's batches and their span in ms
# With MULTIRES_BENCH_ALIGN_MS set, `python3 tools/device/tick_medians.py ERR [compress]` prints
# each row's median and fastest run from a bench process's stderr;
#   say_ticks ERR...                 says both (decompress, then compress) for each ERR, a line each
export LD_LIBRARY_PATH=/usr/local/cuda/targets/x86_64-linux/lib:${LD_LIBRARY_PATH:-}
M=.gpu/multires
mkdir -p /tmp/tr
say() { echo "$@" | tee -a $OUT/summary.txt; }
say_ticks() {
  local f
  for f in "$@"; do
    say "$(basename $f .err) decompress: $(python3 tools/device/tick_medians.py $f decompress) | compress: $(python3 tools/device/tick_medians.py $f compress)"
  done
}
gpu_checks() {
  SECONDS=0
  MULTIRES_REQUIRE_GPU=1 timeout 260 .gpu/gpu_tests --test-threads 1 > $OUT/gpu_tests.log 2>&1
  say "gpu tests: rc $? in ${SECONDS}s | $(grep 'test result' $OUT/gpu_tests.log)"
  MULTIRES=$M timeout 40 bash tools/device/cli_check.sh > $OUT/cli_check.log 2>&1
  say "cli_check: rc $? | $(tail -1 $OUT/cli_check.log)"
}
# SIZE (N, or DxN for D planes of N^2) as bench arguments.
size_args() {
  if [[ $1 == *x* ]]; then echo "--codec-size ${1#*x} --codec-depth ${1%x*}"; else echo "--codec-size $1"; fi
}
# One bench process of codec-3d on the device (--resident, rel 1e-3) with ENV set, stdout to LOG,
# stderr to ERR, at most LIMIT s: what `run` and `bench_one` start.
bench_to() {
  local log=$1 err=$2 limit=$3 size=$4 g=$5 r=$6 f=$7; shift 7
  env "$@" timeout $limit $M bench --config codec-3d --device cuda $(size_args $size) \
    --codec-field-cache /tmp/fields --gpus $g --resident --codec-rel 1e-3 --repeat $r \
    --codec-field $f > $log 2> $err
}
run() {
  local name=$1 f=$3 r=$4 g=$5 size=$2; shift 5
  SECONDS=0
  bench_to $OUT/$name.log /tmp/tr/$name.err ${RUN_LIMIT:-90} $size $g $r $f "$@"
  say "== $name ($size $f $*) rc $? in ${SECONDS}s"; say "$(grep -E "codec-3d (resident|slabs)" $OUT/$name.log | sed -E 's/codec-3d (\w+) .*\| ([0-9]) GPU.*= ([0-9.]+) GB.s .*= ([0-9.]+) GB.s.*/\1 \2: \3 \/ \4/; s/codec-3d (resident) .*= ([0-9.]+) GB.s .*= ([0-9.]+) GB.s.*/\1: \2 \/ \3/')"
  say "equal bytes rows: $(grep -E "codec-3d (resident|slabs)" $OUT/$name.log | grep -c "bytes equal to the host path's") values: $(grep -E "codec-3d (resident|slabs)" $OUT/$name.log | grep -c "decoded values equal")"
}
# One bench process (--resident, turbulent, rel 1e-3, 5 runs) on GPUS with ENV, its output in
# /tmp/tr/NAME.log and .err, at most ${BENCH_LIMIT:-120} s: what `timeline` and `traced` run.
bench_one() {
  local name=$1 size=$2 g=$3; shift 3
  bench_to /tmp/tr/$name.log /tmp/tr/$name.err ${BENCH_LIMIT:-120} $size $g 5 turbulent "$@"
}
timeline() {
  local name=$1 size=$2; shift 2
  bench_one $name $size ${TL_GPUS:-1} MULTIRES_CODEC_TIMELINE=1 "$@"
  say "timeline $name ($size $*) rc $?: $(python3 tools/device/timeline_summary.py /tmp/tr/$name.err --chain | grep -A3 'chain of' | tail -4 | tr -s ' ' | tr '\n' ';')"
}
traced() {
  local name=$1 size=$2 g=$3; shift 3
  bench_one $name $size $g MULTIRES_CODEC_TRACE=1 "$@"
  local rc=$?
  say "trace $name ($size, $g GPU(s), $*) rc $rc | $(grep -E 'codec-3d resident' /tmp/tr/$name.log | sed -E 's/.*compress [0-9.]+ s = ([0-9.]+) GB.s .*= ([0-9.]+) GB.s.*/\1 \/ \2/') | spans $(python3 tools/device/trace_summary.py /tmp/tr/$name.err 2>/dev/null | grep -A3 'resident plan' | grep -oE 'gpu 0: [0-9]+ batches, [0-9.]+ M values, \+0.0 to \+[0-9.]+' | sed -E 's/.*: ([0-9]+) batches.*to \+([0-9.]+)/\1b:\2/' | tr '\n' ' ')"
}
begin_call() {
  T0=$(date +%s)
  say "cards: $(nvidia-smi --query-gpu=name --format=csv,noheader | tr '\n' ';')"
}
elapsed() { echo $(( $(date +%s) - T0 )); }
end_call() {
  mkdir -p /tmp/logs; mv $OUT/*.log /tmp/logs/ 2>/dev/null; cp /tmp/tr/*.err /tmp/tr/*.log /tmp/logs/ 2>/dev/null; tar czf $OUT/logs.tgz -C /tmp logs
  say "total $(elapsed)s"
}

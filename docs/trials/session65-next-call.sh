#!/bin/bash
# For session 66's first call (nvidia-h200-x2, carry [".gpu"] holding HEAD's .gpu/multires; about
# 500 s with the start; checked with bash -n only). Why does GPU 0's slab (ten batches of 56-60 M
# values) end ~1 ms after GPU 1's (thirteen, four small) in a two-GPU decode (session 65, call 3)?
# 1. Device timelines of the pair (TL_GPUS=2): each batch's RDEC and inverse end on each GPU, to
#    see whether GPU 0's batches' inverses queue behind one another.
# 2. The hardware queues: a context has 8 by default (CUDA_DEVICE_MAX_CONNECTIONS), GPU 0 runs ten
#    large batches at once (two queues each carry two large batches' launches in order), GPU 1's
#    doubled queues carry small batches that end by 3.4 ms. Traced two-GPU processes with the
#    variable unset and at 16, alternated (slab_ends.py: lag and run), then plain processes of both
#    (the variable changes one GPU too: session 57's 32 made one GPU decode 4% faster, two 2%).
#    Beside them, the decoder on one stream a slot (MULTIRES_CODEC_PRIORITY=encode: GPU 0 then has
#    10 streams, GPU 1 13, against 20 and 26), traced only (session 56: its ratio within the spread).
set -uo pipefail
source tools/device/codec_ab.sh
begin_call
TL_GPUS=2 BENCH_LIMIT=90 timeline tl_pair 1024
python3 tools/device/timeline_summary.py /tmp/tr/tl_pair.err --batches > $OUT/tl_pair.txt 2>&1
for i in 1 2; do
  for q in def 16 one; do
    n=q${q}_$i
    case $q in
      def) extra=() ;;
      one) extra=(MULTIRES_CODEC_PRIORITY=encode) ;;
      *) extra=(CUDA_DEVICE_MAX_CONNECTIONS=$q) ;;
    esac
    BENCH_LIMIT=90 bench_one $n 1024 2 MULTIRES_CODEC_TRACE=1 MULTIRES_BENCH_ALIGN_MS=60 "${extra[@]}"
    say "$n rc $?: $(python3 tools/device/slab_ends.py /tmp/tr/$n.err)"
  done
done
for i in 1 2; do
  RUN_LIMIT=100 run plain_def_$i 1024 turbulent 9 1,2 MULTIRES_BENCH_ALIGN_MS=60
  RUN_LIMIT=100 run plain_16_$i 1024 turbulent 9 1,2 MULTIRES_BENCH_ALIGN_MS=60 CUDA_DEVICE_MAX_CONNECTIONS=16
  [ $(elapsed) -gt 400 ] && break
done
say_ticks /tmp/tr/plain_*.err
say "elapsed $(elapsed)s"
end_call

#!/bin/bash
# Usage on the device: bash tools/device/mpi_gpu.sh [SIZE] [REL] [RANKS...]
# compress and decompress --mpi with every rank on a GPU (the host's GPUs
# in turn: on a one-GPU machine all ranks share it) against one process
# on the GPU, on a turbulent SIZE^3 float32 field (default 1024, rel
# 1e-3, ranks 1 2 4) in /dev/shm. Each file is compared with one
# process's (cmp); each run's whole output goes to $OUT, and the per-rank
# lines are printed. MULTIRES=path/to/multires (default .gpu/multires).
set -uo pipefail
export LD_LIBRARY_PATH=/usr/local/cuda/targets/x86_64-linux/lib:${LD_LIBRARY_PATH:-}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
M=$(realpath "${MULTIRES:-.gpu/multires}")
SIZE=${1:-1024}
REL=${2:-1e-3}
shift 2 2>/dev/null
RANKS=${*:-1 2 4}
O=${OUT:-/tmp}
D=/dev/shm/mpi_gpu
CORES=$(nproc)
rm -rf "$D" && mkdir -p "$D" && cd "$D" || exit 1
"$M" make-field --kind turbulent --size "$SIZE" -o t.npy > "$O/make_field.log" 2>&1 || { cat "$O/make_field.log"; exit 1; }
wall() { local t0=$EPOCHREALTIME; "$@"; local r=$?; awk "BEGIN { printf \"wall %.3f s\\n\", $EPOCHREALTIME - $t0 }"; return $r; }
echo "== one process on the GPU"
wall "$M" compress t.npy -o one.mrz --error-bound "rel:$REL" --device cuda > "$O/one_c.log" 2>&1
echo "compress rc $? | $(grep -v '^$' "$O/one_c.log" | tail -3 | tr '\n' ' ')"
wall "$M" decompress one.mrz -o one.npy --device cuda > "$O/one_d.log" 2>&1
echo "decompress rc $? | $(grep -v '^$' "$O/one_d.log" | tail -3 | tr '\n' ' ')"
rc=0
for n in $RANKS; do
  th=$((CORES / n)); [ $th -lt 1 ] && th=1
  echo "== $n ranks, --device cuda, $th threads a rank"
  wall mpirun -np "$n" --oversubscribe --bind-to none -x RAYON_NUM_THREADS=$th -x LD_LIBRARY_PATH \
    "$M" compress --mpi t.npy -o many.mrz --error-bound "rel:$REL" --device cuda > "$O/mpi_c_$n.log" 2>&1
  r=$?; echo "compress rc $r"; cat "$O/mpi_c_$n.log" | grep -E "compress --mpi|rank|wall|error"
  cmp one.mrz many.mrz && echo "file: byte-identical to one process" || rc=1
  wall mpirun -np "$n" --oversubscribe --bind-to none -x RAYON_NUM_THREADS=$th -x LD_LIBRARY_PATH \
    "$M" decompress --mpi many.mrz -o many.npy --device cuda > "$O/mpi_d_$n.log" 2>&1
  r=$?; echo "decompress rc $r"; cat "$O/mpi_d_$n.log" | grep -E "decompress --mpi|rank|wall|error"
  cmp one.npy many.npy && echo "values: byte-identical to one process" || rc=1
  rm -f many.mrz many.npy
done
cd / && rm -rf "$D"
exit $rc

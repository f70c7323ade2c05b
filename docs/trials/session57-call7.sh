#!/bin/bash
# Session 57 call 7 (nvidia-h200-x2, about 280 s; the final build, no GPU tests owed): the two-GPU
# process's own ~1.3 ms. Two host knobs against the default, alternated twice: the decode's rANS
# headers on each slot's own thread (MULTIRES_CODEC_HEADS=slot) instead of the shared rayon pool,
# and a pool of 64 threads (RAYON_NUM_THREADS=64) for 23 slot threads and the pool's own work.
set -uo pipefail
source tools/device/codec_ab.sh
begin_call
for i in 1 2; do
  run def_$i 1024 turbulent 9 1,2 X=1
  run heads_$i 1024 turbulent 9 1,2 MULTIRES_CODEC_HEADS=slot
  run ray64_$i 1024 turbulent 9 1,2 RAYON_NUM_THREADS=64
done
end_call

#!/bin/bash
# For the session after 55 (nvidia-h200-x2, carry [".gpu"]; about 420 s with the start). First,
# here: `git apply docs/trials/session55-lending-pool.patch` (session 55's lending trial plus the
# grant of the donor's memory pool to the taker, `cuMemPoolSetAccess`, which the trial lacked:
# its every process ended in CUDA_ERROR_ILLEGAL_ADDRESS), `cargo build --release`, `cargo test
# --release --no-run -p multires-cuda --test gpu`, and copy both to .gpu/ (multires, gpu_tests).
# Then this: the whole on one and two GPUs alternated three times with MULTIRES_CODEC_LEND=4 and
# 8 on two GPUs (the bench's byte and value checks cover the lent bricks), one traced two-GPU run
# with k = 4 (does GPU 0 now end with GPU 1?), then the GPU tests and cli_check.sh.
set -uo pipefail
source tools/device/codec_ab.sh
begin_call
for i in 1 2 3; do
  run def_$i 1024 turbulent 9 1,2 X=1
  for k in 4 8; do run lend${k}_$i 1024 turbulent 9 2 MULTIRES_CODEC_LEND=$k; done
  say "elapsed $(elapsed)s"
done
traced tr_lend4 1024 2 MULTIRES_CODEC_LEND=4
[ $(elapsed) -lt 300 ] && gpu_checks
end_call

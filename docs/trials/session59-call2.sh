#!/bin/bash
# Session 59 call 2 (nvidia-h200-x2, carry [".gpu"]): the build of call 1 (session 58's two
# trial patches applied). Call 1 gave, two H200s, 2 GPUs / 1 GPU slabs rows: decode with the
# device's checks 1.759 and 1.852 against 1.671 and 1.743 with the host's (threads kept); kept
# threads 1.671/1.743 against 1.666/1.792 spawned, but two-GPU compress 231.7-234.9 GB/s kept
# against 240.6 and 237.1 spawned. A 2x2 design (checks x threads), alternated twice, to judge
# each on four processes.
set -uo pipefail
source tools/device/codec_ab.sh
begin_call
for i in 1 2; do
  run kept_device_$i 1024 turbulent 9 1,2 MULTIRES_CODEC_VERIFY=device
  run spawn_device_$i 1024 turbulent 9 1,2 MULTIRES_CODEC_VERIFY=device MULTIRES_CODEC_WORKERS=spawn
  run kept_own_$i 1024 turbulent 9 1,2 X=1
  run spawn_own_$i 1024 turbulent 9 1,2 MULTIRES_CODEC_WORKERS=spawn
done
say "elapsed $(elapsed)s"
end_call

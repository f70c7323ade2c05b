"""Host-to-device (and device-to-host) copy rate from pinned memory, per GPU and on all GPUs at
once: the ceiling that the codec's streaming target (80% of it) refers to.
Usage: python3 tools/device/h2d_rate.py [GiB]"""
import sys
import threading
import time

import torch

gib = float(sys.argv[1]) if len(sys.argv) > 1 else 4.0
n = int(gib * (1 << 30))
count = torch.cuda.device_count()
host = torch.empty(n, dtype=torch.uint8).pin_memory()
devs = [torch.empty(n, dtype=torch.uint8, device=f"cuda:{i}") for i in range(count)]


def copy(i, reps, out, down=False):
    dst, src = (host, devs[i]) if down else (devs[i], host)
    with torch.cuda.device(i):
        dst.copy_(src, non_blocking=True)
        torch.cuda.synchronize(i)
        t = time.perf_counter()
        for _ in range(reps):
            dst.copy_(src, non_blocking=True)
        torch.cuda.synchronize(i)
        out[i] = time.perf_counter() - t


for i in range(count):
    out = {}
    copy(i, 3, out)
    print(f"h2d | GPU {i} ({torch.cuda.get_device_name(i)}) | {3 * n / out[i] / 1e9:.1f} GB/s pinned")
    copy(i, 3, out, down=True)
    print(f"d2h | GPU {i} ({torch.cuda.get_device_name(i)}) | {3 * n / out[i] / 1e9:.1f} GB/s pinned")
if count > 1:
    out = {}
    ts = [threading.Thread(target=copy, args=(i, 3, out)) for i in range(count)]
    [x.start() for x in ts]
    [x.join() for x in ts]
    # The timed copies overlap; the slowest GPU's span bounds them all.
    print(f"h2d | {count} GPUs at once | {count * 3 * n / max(out.values()) / 1e9:.1f} GB/s pinned in all")

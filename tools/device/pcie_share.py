"""Host <-> device copy rates of each GPU alone and of all GPUs at once
(pinned host memory, 256 MiB a copy): whether the GPUs share the link to
the host. Prints GB/s per direction."""
import time

import torch

MB = 1 << 20
N = 256 * MB
REPS = 8


def rate(devs, down=True):
    srcs, dsts = [], []
    for d in devs:
        g = torch.empty(N, dtype=torch.uint8, device=f"cuda:{d}")
        h = torch.empty(N, dtype=torch.uint8, pin_memory=True)
        srcs.append(g if down else h)
        dsts.append(h if down else g)
    for d in devs:
        torch.cuda.synchronize(d)
    best = 0.0
    for _ in range(REPS):
        t = time.perf_counter()
        for d, s, o in zip(devs, srcs, dsts):
            with torch.cuda.device(d):
                o.copy_(s, non_blocking=True)
        for d in devs:
            torch.cuda.synchronize(d)
        best = max(best, len(devs) * N / (time.perf_counter() - t) / 1e9)
    return best


n = torch.cuda.device_count()
for down in (True, False):
    name = "down (device to host)" if down else "up (host to device)"
    alone = [rate([d], down) for d in range(n)]
    both = rate(list(range(n)), down)
    print(f"{name}: alone " + ", ".join(f"GPU {d} {r:.1f}" for d, r in enumerate(alone))
          + f" GB/s; all {n} at once {both:.1f} GB/s in all")

"""Host-side ceilings of a streamed compression: multi-threaded copy from
pageable into pinned memory, the cost of page-locking (cudaHostRegister)
memory already in use, and host-to-device from memory so registered.
Usage: python3 tools/device/host_rates.py [GiB]"""
import sys
import time

import torch

gib = float(sys.argv[1]) if len(sys.argv) > 1 else 4.0
n = int(gib * (1 << 30))
src = torch.ones(n, dtype=torch.uint8)
pin = torch.empty(n, dtype=torch.uint8).pin_memory()
for threads in (1, 4, 8, 16, 32):
    torch.set_num_threads(threads)
    pin.copy_(src)
    t = time.perf_counter()
    for _ in range(3):
        pin.copy_(src)
    dt = (time.perf_counter() - t) / 3
    print(f"host | pageable to pinned, {threads} threads | {n / dt / 1e9:.1f} GB/s")
rt = torch.cuda.cudart()
big = torch.ones(n, dtype=torch.uint8)
t = time.perf_counter()
err = rt.cudaHostRegister(big.data_ptr(), n, 0)
reg = time.perf_counter() - t
print(f"host | cudaHostRegister of {gib} GiB in use | {reg * 1e3:.0f} ms ({n / reg / 1e9:.1f} GB/s), {err}")
dev = torch.empty(n, dtype=torch.uint8, device="cuda:0")
dev.copy_(big, non_blocking=True)
torch.cuda.synchronize()
t = time.perf_counter()
for _ in range(3):
    dev.copy_(big, non_blocking=True)
torch.cuda.synchronize()
print(f"host | host-to-device from registered memory | {3 * n / (time.perf_counter() - t) / 1e9:.1f} GB/s")
t = time.perf_counter()
rt.cudaHostUnregister(big.data_ptr())
print(f"host | cudaHostUnregister | {(time.perf_counter() - t) * 1e3:.0f} ms")

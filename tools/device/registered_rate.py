"""Host-to-device and device-to-host copy rates from host memory registered with CUDA
(cudaHostRegister, as multires' PinnedField does) against memory CUDA allocated pinned
(cudaHostAlloc, h2d_rate.py's ceiling), with and without transparent huge pages.
Usage: python3 tools/device/registered_rate.py [GiB]"""
import mmap
import sys
import time

import numpy as np
import torch

gib = float(sys.argv[1]) if len(sys.argv) > 1 else 4.0
n = int(gib * (1 << 30))
dev = torch.empty(n, dtype=torch.uint8, device="cuda")
rt = torch.cuda.cudart()
thp = open("/sys/kernel/mm/transparent_hugepage/enabled").read().strip()
print(f"transparent huge pages: {thp}")


def rate(host, down=False, reps=3):
    dst, src = (host, dev) if down else (dev, host)
    dst.copy_(src, non_blocking=True)
    torch.cuda.synchronize()
    t = time.perf_counter()
    for _ in range(reps):
        dst.copy_(src, non_blocking=True)
    torch.cuda.synchronize()
    return reps * n / (time.perf_counter() - t) / 1e9


def registered(huge):
    m = mmap.mmap(-1, n, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
    if huge:
        m.madvise(mmap.MADV_HUGEPAGE)
    a = np.frombuffer(m, dtype=np.uint8)
    a[:: 4096] = 1
    t = time.perf_counter()
    err = rt.cudaHostRegister(a.ctypes.data, n, 0)
    reg = time.perf_counter() - t
    host = torch.from_numpy(a)
    up, down = rate(host), rate(host, down=True)
    print(f"registered, huge pages {huge}: register {reg * 1e3:.0f} ms (err {err}) | h2d {up:.1f} GB/s | d2h {down:.1f} GB/s | torch sees pinned: {host.is_pinned()}")
    rt.cudaHostUnregister(a.ctypes.data)
    del host, a
    m.close()


pinned = torch.empty(n, dtype=torch.uint8).pin_memory()
print(f"cudaHostAlloc: h2d {rate(pinned):.1f} GB/s | d2h {rate(pinned, down=True):.1f} GB/s")
del pinned
registered(True)
registered(False)


def under_load():
    """The copy rates while a memory-bound kernel (device-to-device copies of 8 GiB) runs on
    another stream: what the pinned codec's copies get while the coding runs beside them."""
    a = torch.empty(1 << 31, dtype=torch.float32, device="cuda")
    b = torch.empty_like(a)
    load = torch.cuda.Stream()
    copy = torch.cuda.Stream()
    host = torch.empty(n, dtype=torch.uint8).pin_memory()
    for down in (False, True):
        dst, src = (host, dev) if down else (dev, host)
        torch.cuda.synchronize()
        with torch.cuda.stream(load):
            for _ in range(40):
                b.copy_(a)
        with torch.cuda.stream(copy):
            t = time.perf_counter()
            dst.copy_(src, non_blocking=True)
        copy.synchronize()
        dt = time.perf_counter() - t
        busy = not load.query()
        torch.cuda.synchronize()
        print(f"{'d2h' if down else 'h2d'} beside a memory-bound kernel: {n / dt / 1e9:.1f} GB/s (kernel still running at the end: {busy})")


under_load()

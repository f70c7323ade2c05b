"""Host-to-device copy rates from page-locked memory while kernels run on the same GPU: whether
a GPU busy with kernels takes its copies up more slowly. A codec decode moves its streams up at
30-40 GB/s a GPU while other batches' kernels run, where the link gives 52-55 to an idle GPU,
and session 42 ruled out the copies' offsets (offset_rate.py) and their order behind the
batch's memsets.

Loads, each on its own stream, kept busy for the whole timing:
  idle       nothing
  memory     an elementwise multiply over 2 x 2 GiB (memory-bound, like INTERP)
  compute    float32 matrix products, 8192^2 (SMs busy, little memory traffic)
Each case copies `MiB` up in 13 spans on 13 streams (the decoder's batches), 5 rounds, on each
GPU alone and then on all GPUs at once.
Usage: python3 tools/device/h2d_under_load.py [MiB]"""
import sys
import threading
import time

import torch

mib = int(sys.argv[1]) if len(sys.argv) > 1 else 300
n = mib << 20
count = torch.cuda.device_count()
host = torch.empty(n, dtype=torch.uint8).pin_memory()
devs = [torch.empty(n, dtype=torch.uint8, device=f"cuda:{i}") for i in range(count)]
SPANS = 13


class Load:
    """Kernels of one kind queued on their own stream of GPU i until stopped."""

    def __init__(self, i, kind):
        self.i, self.kind, self.stop = i, kind, threading.Event()
        with torch.cuda.device(i):
            self.stream = torch.cuda.Stream()
            if kind == "memory":
                self.a = torch.ones(1 << 29, device=f"cuda:{i}")
                self.b = torch.empty_like(self.a)
            elif kind == "compute":
                self.a = torch.randn(8192, 8192, device=f"cuda:{i}")
                self.b = torch.empty_like(self.a)
        self.thread = threading.Thread(target=self.run)

    def run(self):
        with torch.cuda.device(self.i), torch.cuda.stream(self.stream):
            while not self.stop.is_set():
                for _ in range(4):
                    if self.kind == "memory":
                        torch.mul(self.a, 2.0, out=self.b)
                    else:
                        torch.mm(self.a, self.a, out=self.b)
                self.stream.synchronize()

    def __enter__(self):
        if self.kind != "idle":
            self.thread.start()
            time.sleep(0.2)
        return self

    def __exit__(self, *a):
        self.stop.set()
        if self.kind != "idle":
            self.thread.join()


def copies(i, reps=5):
    """GB/s of `reps` rounds of copying n bytes up to GPU i in SPANS pieces on SPANS streams."""
    with torch.cuda.device(i):
        streams = [torch.cuda.Stream() for _ in range(SPANS)]
        step = n // SPANS
        cuts = [(k * step, n if k == SPANS - 1 else (k + 1) * step) for k in range(SPANS)]

        def once():
            for s, (a, b) in zip(streams, cuts):
                with torch.cuda.stream(s):
                    devs[i][a:b].copy_(host[a:b], non_blocking=True)
            for s in streams:
                s.synchronize()

        once()
        t = time.perf_counter()
        for _ in range(reps):
            once()
        return reps * n / (time.perf_counter() - t) / 1e9


for kind in ["idle", "memory", "compute"]:
    alone = []
    for i in range(count):
        with Load(i, kind):
            alone.append(copies(i))
    together = [0.0] * count
    loads = [Load(i, kind) for i in range(count)]
    for ld in loads:
        ld.__enter__()

    def job(i):
        together[i] = copies(i)

    ts = [threading.Thread(target=job, args=(i,)) for i in range(count)]
    [t.start() for t in ts]
    [t.join() for t in ts]
    for ld in loads:
        ld.__exit__()
    a = " ".join(f"GPU {i} {r:.1f}" for i, r in enumerate(alone))
    b = " ".join(f"GPU {i} {r:.1f}" for i, r in enumerate(together))
    print(f"h2d under {kind:8s} load | {SPANS} spans | alone {a} | together {b} GB/s", flush=True)

"""Host-to-device copy rates from page-locked memory by the addresses' offsets from a word:
whether a copy whose source and destination differ in their offset from 4 (or 16) bytes runs
slower than an aligned one. A .mrz file's payloads start at byte 98, so in a page-aligned buffer
every rANS stream sits two bytes off a word, and the decoder copies it to a word on the GPU
(RDEC reads aligned words): every stream copy is one of the offset kind. The codec's decode
moves its streams at 30-38 GB/s a GPU against the link's 52-55 (GPU_NOTES.md, sessions 39 and
41); this tells whether the offset is why.

Each case copies `MiB` in one copy, then in 13 spans on 13 streams at once (the decoder's
batches), on each GPU alone, then on all GPUs at once.
Usage: python3 tools/device/offset_rate.py [MiB]"""
import sys
import threading
import time

import torch

mib = int(sys.argv[1]) if len(sys.argv) > 1 else 300
n = mib << 20
count = torch.cuda.device_count()
# Room for the largest offset on either side.
host = torch.empty(n + 4096, dtype=torch.uint8).pin_memory()
devs = [torch.empty(n + 4096, dtype=torch.uint8, device=f"cuda:{i}") for i in range(count)]
SPANS = 13
# (source offset, destination offset): aligned; the file's case (98 -> 0 mod 4: two bytes
# apart); both two bytes off (same offset from a word); 16-byte aligned but 4 apart.
CASES = [(0, 0), (98, 0), (98, 2), (2, 2), (4, 0), (64, 0)]


def copies(i, src_off, dst_off, spans, reps=3):
    """Seconds for `reps` rounds of copying n bytes up to GPU i in `spans` pieces."""
    with torch.cuda.device(i):
        streams = [torch.cuda.Stream() for _ in range(spans)]
        step = n // spans // 4 * 4
        cuts = [(k * step, n if k == spans - 1 else (k + 1) * step) for k in range(spans)]

        def once():
            for s, (a, b) in zip(streams, cuts):
                with torch.cuda.stream(s):
                    devs[i][dst_off + a:dst_off + b].copy_(host[src_off + a:src_off + b], non_blocking=True)

        once()
        torch.cuda.synchronize(i)
        t = time.perf_counter()
        for _ in range(reps):
            once()
        torch.cuda.synchronize(i)
        return (time.perf_counter() - t) / reps


for src_off, dst_off in CASES:
    for spans in (1, SPANS):
        alone = [n / copies(i, src_off, dst_off, spans) / 1e9 for i in range(count)]
        line = f"h2d | source +{src_off} -> destination +{dst_off} | {spans:2d} span(s) | alone " + \
            " ".join(f"GPU {i} {r:.1f}" for i, r in enumerate(alone))
        if count > 1:
            out = {}
            ts = [threading.Thread(target=lambda i=i: out.__setitem__(i, copies(i, src_off, dst_off, spans)))
                  for i in range(count)]
            [x.start() for x in ts]
            [x.join() for x in ts]
            line += " | together " + " ".join(f"GPU {i} {n / out[i] / 1e9:.1f}" for i in range(count))
        print(line + " GB/s", flush=True)

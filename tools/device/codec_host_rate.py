"""The GPU codec from Python's side: a numpy array to .mrz bytes and back,
the whole call timed (median of REPEAT after a warm-up), decoding into a
new array and into one reused (out=). Reads the fields `multires bench
--codec-field-cache DIR` wrote (DIR/smooth-SIZE.npy, DIR/turbulent-SIZE.npy).
Usage on the device: python3 tools/device/codec_host_rate.py [DIR] [SIZE] [REL] [REPEAT]"""
import sys
import time

import numpy as np

import multires

folder = sys.argv[1] if len(sys.argv) > 1 else "/tmp/mr-fields"
size = int(sys.argv[2]) if len(sys.argv) > 2 else 1024
rel = float(sys.argv[3]) if len(sys.argv) > 3 else 1e-3
repeat = int(sys.argv[4]) if len(sys.argv) > 4 else 3


def median_time(f):
    f()
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        r = f()
        times.append(time.perf_counter() - t)
    return sorted(times)[repeat // 2], r


for kind in ("smooth", "turbulent"):
    a = np.load(f"{folder}/{kind}-{size}.npy")
    raw = a.nbytes
    tc, b = median_time(lambda: multires.compress(a, rel=rel, device="cuda"))
    td, y = median_time(lambda: multires.decompress(b, device="cuda"))
    out = np.empty_like(a)
    to, _ = median_time(lambda: multires.decompress(b, device="cuda", out=out))
    if not np.array_equal(out, y):
        sys.exit(f"{kind}: decoding into out= gave other values")
    err = float(np.max(np.abs(y.astype(np.float64) - a))) / float(a.max() - a.min())
    if err > rel:
        sys.exit(f"{kind}: error {err:.3e} of the range past the bound {rel:e}")
    print(
        f"python {kind} {size}^3 rel {rel:e}: ratio {raw / len(b):.2f}, compress {tc:.3f} s = {raw / tc / 1e9:.1f} GB/s, "
        f"decompress {td:.3f} s = {raw / td / 1e9:.1f} GB/s, into out= {to:.3f} s = {raw / to / 1e9:.1f} GB/s, "
        f"max error {err:.3e} of the range"
    )

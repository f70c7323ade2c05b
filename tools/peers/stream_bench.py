"""multires.CwtStream against the whole transform: time and peak memory,
each case in a fresh process (its own peak RSS), on the CPU or the GPU.

    python3 tools/peers/stream_bench.py [--device cpu|cuda] [--configs cwt-1m,long]

cwt-1m: N = 2^20, cmor1.5-1.0, 256 log scales 1..1024 (DESIGN.md), magnitude
float32. long: N = 2^24, the same scales up to 256, magnitude float32, hop 16
(a 16.8 M-sample recording). The stream is pushed chunks of 2^16 samples and
its columns are dropped (a consumer writes them away); the whole transform
holds its output. Both check that the streamed columns equal the whole ones;
the time is the transform's calls (planning included), not the digest.
"""

import argparse
import json
import subprocess
import sys
import time

CONFIGS = {
    "cwt-1m": dict(n=1 << 20, smax=1024.0, count=256, hop=1),
    "long": dict(n=1 << 24, smax=256.0, count=128, hop=16),
}

CHILD = r"""
import json, resource, sys, time
import numpy as np, multires
cfg, mode, device = json.loads(sys.argv[1]), sys.argv[2], sys.argv[3]
x = np.random.default_rng(0).standard_normal(cfg["n"])
scales = np.geomspace(1.0, cfg["smax"], cfg["count"])
kw = dict(output="magnitude", precision="f32", hop=cfg["hop"])
base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
if mode == "whole":
    multires.cwt(x[:4096], scales[:4], "cmor1.5-1.0", device=device, **kw)  # warm-up
    t = time.perf_counter()
    W, _ = multires.cwt(x, scales, "cmor1.5-1.0", device=device, **kw)
    secs = time.perf_counter() - t
    digest = float(np.asarray(W, np.float64).sum())
else:
    # Time in the stream's calls only (the digest of its columns is the
    # consumer's work, outside the timing as the whole transform's is).
    t = time.perf_counter()
    s = multires.CwtStream(scales, "cmor1.5-1.0", device=device, **kw)
    secs = time.perf_counter() - t
    digest, step = 0.0, 1 << 16
    calls = [lambda i=i: s.push(x[i:i + step]) for i in range(0, cfg["n"], step)] + [s.finish]
    for call in calls:
        t = time.perf_counter()
        part = call()
        secs += time.perf_counter() - t
        digest += float(np.asarray(part, np.float64).sum())
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(json.dumps(dict(secs=secs, peak_mb=peak / 1024, base_mb=base / 1024, digest=digest)))
"""


def run(cfg, mode, device):
    r = subprocess.run([sys.executable, "-c", CHILD, json.dumps(cfg), mode, device],
                       capture_output=True, text=True)
    if r.returncode != 0:
        raise SystemExit(r.stderr)
    return json.loads(r.stdout.strip().splitlines()[-1])


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--device", default="cpu", choices=["cpu", "cuda"])
    ap.add_argument("--configs", default="cwt-1m,long")
    a = ap.parse_args()
    print(f"| config | device | whole: s / peak RSS (MB) | stream: s / peak RSS (MB) | stream / whole time | same sums |")
    print("| --- | --- | --- | --- | --- | --- |")
    for name in a.configs.split(","):
        cfg = CONFIGS[name]
        w = run(cfg, "whole", a.device)
        s = run(cfg, "stream", a.device)
        same = abs(w["digest"] - s["digest"]) <= 1e-9 * abs(w["digest"])
        print(f"| {name} | {a.device} | {w['secs']:.3f} / {w['peak_mb']:.0f} | {s['secs']:.3f} / {s['peak_mb']:.0f} "
              f"| {s['secs'] / w['secs']:.2f}x | {same} |", flush=True)


if __name__ == "__main__":
    main()

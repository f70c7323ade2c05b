#!/usr/bin/env python3
"""Synchrosqueezed CWT: multires against ssqueezepy 0.6.6, same inputs,
same scales, same wavelet (GMW beta=60, gamma=3), host array to host array.

    python3 tools/peers/ssq_peers.py [--device cpu|cuda] [--sizes seed,1m] [--repeat 3]

'seed' is the Doppler signal of cwt-seed (N = 102,400), 'Nk'/'Nm' noise
of N = 2^10 k / 2^20 m samples; scales 2^(k/32) from 2 to N/64 (at most
512) in float32 for both (ssqueezepy's default precision). ssqueezepy runs
on the GPU (its torch backend) when --device cuda, in a subprocess with
SSQ_GPU=1 (it reads the variable at import). Also times multires.icwt
and checks that both planes invert to the signal.
"""
import argparse
import json
import os
import subprocess
import sys
import time

import numpy as np


def signal(name):
    if name == "seed":
        n = 102_400
        t = np.arange(n) / n
        return np.sqrt(t * (1 - t)) * np.sin(2 * np.pi * 1.05 / (t + 0.05))
    n = int(name[:-1]) * (1024 if name.endswith("k") else 1 << 20)
    return np.random.default_rng(1).standard_normal(n)


def scales_for(n):
    top = min(512.0, n / 64)
    return 2.0 ** (np.arange(32, int(32 * np.log2(top)) + 1) / 32)


def best(f, repeat):
    f()  # warm-up (plans, kernels, numba's compile)
    ts = []
    for _ in range(repeat):
        t = time.perf_counter()
        out = f()
        ts.append(time.perf_counter() - t)
    return min(ts), out


def peer(args):
    """One ssqueezepy measurement, in this process (SSQ_GPU set by the caller)."""
    import ssqueezepy as sq

    x = signal(args.peer).astype(np.float32)
    s = scales_for(len(x)).astype(np.float32)
    wv = sq.Wavelet("gmw", dtype="float32")
    secs, (Tx, *_) = best(lambda: sq.ssq_cwt(x, wv, scales=s, astensor=False), args.repeat)
    xr = sq.issq_cwt(Tx, wv)
    err = float(np.linalg.norm(xr - x) / np.linalg.norm(x))
    print(json.dumps({"secs": secs, "issq_err": err}))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--device", default="cpu", choices=["cpu", "cuda"])
    ap.add_argument("--sizes", default="seed,1m")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--peer", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.peer:
        return peer(args)
    import multires

    rows = []
    for name in args.sizes.split(","):
        x = signal(name).astype(np.float32)
        s = scales_for(len(x))
        secs, (Tx, Wx, f, _) = best(
            lambda: multires.ssq_cwt(x, "gmw", s, precision="f32", device=args.device), args.repeat
        )
        xr = multires.issq_cwt(Tx, "gmw")
        err = float(np.linalg.norm(xr - x) / np.linalg.norm(x))
        ti, xi = best(lambda: multires.icwt(Wx, "gmw", s, normalization="l1"), 1)
        ierr = float(np.linalg.norm(xi - x) / np.linalg.norm(x))
        del Tx, Wx
        env = dict(os.environ, SSQ_GPU="1" if args.device == "cuda" else "0")
        r = subprocess.run(
            [sys.executable, __file__, "--peer", name, "--repeat", str(args.repeat)],
            env=env, capture_output=True, text=True,
        )
        if r.returncode != 0:
            print(r.stderr[-2000:], file=sys.stderr)
            peer_s, peer_err = float("nan"), float("nan")
        else:
            d = json.loads(r.stdout.strip().splitlines()[-1])
            peer_s, peer_err = d["secs"], d["issq_err"]
        rows.append((name, len(x), len(s), secs, peer_s, err, peer_err, ti, ierr))
    print(f"ssq_cwt, host to host, float32, gmw, device {args.device} (ssqueezepy on the same device)")
    print("| input | N | scales | multires s | ssqueezepy s | ratio | issq err multires | issq err ssqueezepy | icwt s | icwt err |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for name, n, ns, a, b, e1, e2, ti, ie in rows:
        print(f"| {name} | {n} | {ns} | {a:.3f} | {b:.3f} | {b / a:.2f}x | {e1:.1e} | {e2:.1e} | {ti:.3f} | {ie:.1e} |")


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""multires' Python package on the GPU against Python users' GPU CWTs, in
one device command: multires.cwt / CwtPlan with a PyTorch (or CuPy) CUDA
input, the result left on the device, against ssqueezepy's GPU cwt
(SSQ_GPU=1, torch underneath) and a torch.fft CWT (gpu_peers.py), on
cwt-seed and cwt-1m (DESIGN.md). Median of repeats after a warm-up,
wall clock around each call with the device synchronized.

    python3 tools/peers/python_gpu_peers.py [--repeat 10]
"""
import argparse
import math
import os
import sys
import time

os.environ.setdefault("SSQ_GPU", "1")
import numpy as np
import torch

sys.path.insert(0, os.path.dirname(__file__))
from gpu_peers import doppler, torch_fft_cwt  # noqa: E402

import multires  # noqa: E402


def wall(fn, repeat):
    fn()
    torch.cuda.synchronize()
    ts = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        torch.cuda.synchronize()
        ts.append((time.perf_counter() - t) * 1e3)
    ts.sort()
    return ts[len(ts) // 2]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=10)
    a = ap.parse_args()
    print(f"# {torch.cuda.get_device_name()} | torch {torch.__version__} | multires {multires.__version__}")
    configs = [
        ("cwt-seed", 102_400, np.arange(1.0, 201.0), "morl", "morlet"),
        ("cwt-1m", 1 << 20, np.geomspace(1.0, 1024.0, 256), "cmor1.5-1.0", "morlet"),
    ]
    rows = []
    for name, n, scales, wavelet, ssq_wavelet in configs:
        x = doppler(n).to("cuda", torch.float32)
        plan = multires.CwtPlan(n, scales, wavelet, precision="f32", device="cuda")
        W = plan(x)
        assert isinstance(W, torch.Tensor) and W.is_cuda and W.shape == (len(scales), n), (type(W), W.shape)
        # the device result equals the host path's
        ref = plan(x.cpu().numpy())
        err = float(np.abs(W.cpu().numpy() - ref).max() / np.abs(ref).max())
        assert err < 1e-5, err
        t_plan = wall(lambda: plan(x), a.repeat)
        t0 = time.perf_counter()
        multires.cwt(x, scales, wavelet, precision="f32", device="cuda")
        torch.cuda.synchronize()
        t_first = (time.perf_counter() - t0) * 1e3
        t_call = wall(lambda: multires.cwt(x, scales, wavelet, precision="f32", device="cuda"), max(3, a.repeat // 3))
        rows.append((name, "multires CwtPlan(x) (plan reused)", t_plan))
        rows.append((name, "multires.cwt(x), repeated (last plan reused)", t_call))
        rows.append((name, "multires.cwt(x), first call in the process", t_first))
        try:
            from ssqueezepy import cwt as ssq_cwt

            f = lambda: ssq_cwt(x, wavelet=ssq_wavelet, scales=scales.astype(np.float32), padtype="zero", astensor=True)  # noqa: E731
            rows.append((name, "ssqueezepy cwt (SSQ_GPU=1)", wall(f, a.repeat)))
        except Exception as e:  # noqa: BLE001
            print(f"ssqueezepy on {name} failed: {type(e).__name__}: {e}")
        try:
            rows.append((name, "torch.fft CWT", torch_fft_cwt(n, list(scales), "morl" if wavelet == "morl" else "cmor", torch.float32, a.repeat)[0]))
        except RuntimeError as e:
            print(f"torch.fft CWT on {name} failed: {e}")
        del W, ref
        torch.cuda.empty_cache()
    print()
    print("| config | implementation | ms | vs CwtPlan |")
    print("| --- | --- | --- | --- |")
    base = {}
    for cfg, impl, t in rows:
        base.setdefault(cfg, t)
        print(f"| {cfg} | {impl} | {t:.2f} | {t / base[cfg]:.2f}x |")


if __name__ == "__main__":
    main()

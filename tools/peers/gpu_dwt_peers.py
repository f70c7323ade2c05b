#!/usr/bin/env python3
"""The GPU DWT against ptwt (PyTorch wavelet toolbox), in one device command.

ptwt and PyWavelets travel to the device as wheels (see the device README);
this script times ptwt.wavedec / ptwt.waverec on 2^26 float32 samples, 8
levels (dwt-64m of DESIGN.md), and ptwt.wavedec2 / waverec2 on a 16384^2
float32 image, haar, 6 levels (dwt2-16k), with CUDA events after a warm-up
(median), then runs `multires bench --config dwt-64m|dwt2-16k --device
cuda` in the same modes and prints the ratios. ptwt has no periodization, so the comparison runs
in mode zero (both) and reflect (ptwt) against symmetric-family modes.

    python3 tools/peers/gpu_dwt_peers.py --multires .gpu/multires [--modes zero,periodization]
"""
import argparse
import re
import subprocess

import torch

# The same CUDA-event timing as the CWT/FIR peers (this folder is on sys.path).
from gpu_peers import timed


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--multires", required=True)
    p.add_argument("--wavelets", default="db4,haar")
    p.add_argument("--modes", default="zero,periodization")
    p.add_argument("--check", action="store_true")
    args = p.parse_args()
    import ptwt
    import pywt

    n, levels = 1 << 26, 8
    torch.manual_seed(0)
    x = torch.randn(n, dtype=torch.float32, device="cuda")
    print(f"# {torch.cuda.get_device_name()} | torch {torch.__version__} | ptwt {ptwt.__version__ if hasattr(ptwt, '__version__') else '?'} | pywt {pywt.__version__}")
    peer = {}
    for w in args.wavelets.split(","):
        for mode in ["zero", "reflect"]:
            c = ptwt.wavedec(x, w, mode=mode, level=levels)
            td = timed(lambda: ptwt.wavedec(x, w, mode=mode, level=levels))
            tr = timed(lambda: ptwt.waverec(c, w))
            peer[(w, mode)] = (td, tr)
            print(f"ptwt | {w} | mode {mode} | wavedec {td:.3f} ms | waverec {tr:.3f} ms")
    # dwt2-16k: ptwt.wavedec2 / waverec2 on a 16384 x 16384 float32 image, haar, 6 levels.
    img = torch.randn(1, 16384, 16384, dtype=torch.float32, device="cuda")
    peer2 = {}
    for mode in ["zero", "reflect"]:
        c2 = ptwt.wavedec2(img, "haar", mode=mode, level=6)
        td = timed(lambda: ptwt.wavedec2(img, "haar", mode=mode, level=6), repeat=10)
        tr = timed(lambda: ptwt.waverec2(c2, "haar"), repeat=10)
        peer2[mode] = (td, tr)
        print(f"ptwt | dwt2-16k haar | mode {mode} | wavedec2 {td:.3f} ms | waverec2 {tr:.3f} ms")
        del c2
    del img
    torch.cuda.empty_cache()
    for mode in args.modes.split(","):
        cmd = [args.multires, "bench", "--config", "dwt2-16k", "--device", "cuda",
               "--dwt-mode", mode, "--repeat", "10"]
        out = subprocess.run(cmd, capture_output=True, text=True)
        print(out.stdout + out.stderr, end="")
        for line in out.stdout.splitlines():
            m = re.search(r"wavedec2 \(fused 2-D levels\) ([\d.]+) ms .*waverec2 \(axis passes\) ([\d.]+) ms", line)
            if m:
                td, tr = float(m.group(1)), float(m.group(2))
                pd, pr = peer2["zero"]
                print(f"dwt2-16k haar {mode}: multires {td:.3f} / {tr:.3f} ms, ptwt zero {pd:.3f} / {pr:.3f} ms, ratio {pd / td:.2f}x / {pr / tr:.2f}x")
    rows = []
    for mode in args.modes.split(","):
        cmd = [args.multires, "bench", "--config", "dwt-64m", "--device", "cuda",
               "--dwt-mode", mode, "--dwt-wavelets", args.wavelets, "--repeat", "20"]
        if args.check:
            cmd.append("--check")
        out = subprocess.run(cmd, capture_output=True, text=True)
        print(out.stdout + out.stderr, end="")
        for line in out.stdout.splitlines():
            m = re.search(r"\| (\S+) \| f32 .*\| (\S+) \| (\S+) \| wavedec kernels ([\d.]+) ms .*waverec kernels ([\d.]+) ms", line)
            if m:
                w, md, variant, td, tr = m.group(1), m.group(2), m.group(3), float(m.group(4)), float(m.group(5))
                rows.append((w, md, variant, td, tr))
    print()
    print("| wavelet | multires mode | variant | wavedec (ms) | waverec (ms) | ptwt zero wavedec / waverec (ms) | ratio wavedec | ratio waverec |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    for w, md, variant, td, tr in rows:
        pd, pr = peer[(w, "zero")]
        print(f"| {w} | {md} | {variant} | {td:.3f} | {tr:.3f} | {pd:.3f} / {pr:.3f} | {pd / td:.2f}x | {pr / tr:.2f}x |")


if __name__ == "__main__":
    main()

"""The DWT family against its peers, same inputs, same machine: the median
of --repeat runs after a warm-up, the garbage collector run before each
(packet trees are reference cycles; freeing them late would charge one
library's memory to the next run).

    python3 tools/peers/dwt_family_peers.py [--device cpu|cuda] [--repeat 5]

cpu:  swt/iswt 2^22 float64 db4 level 6 against pywt (1 engine thread and
      2); WaveletPacket 2^20 db4 level 5 against pywt (decompose to level 5,
      reconstruct); denoise of a 4096^2 image (db4, BayesShrink) against
      scikit-image's denoise_wavelet.
cuda: swt 2^22 db4 level 6 and WaveletPacket 2^20 db4 level 5 against
      ptwt's (torch) on the GPU: tensors resident on the GPU for both, and
      from and to numpy for both (packets: ours from numpy only, the tree
      is numpy nodes); denoise with the GPU's transforms against the host.
Prints a markdown table.
"""
import argparse
import gc
import statistics
import time

import numpy as np

import multires
import multires.pywt as mp


def median(f, repeat):
    f()
    ts = []
    for _ in range(repeat):
        gc.collect()
        t = time.perf_counter()
        f()
        ts.append(time.perf_counter() - t)
    return statistics.median(ts)


def row(call, config, ours, theirs, peer, note=""):
    print(f"| {call} | {config} | {ours:.4f} | {peer} {theirs:.4f} | {theirs / ours:.2f}x |{note}")


def cpu(repeat):
    import pywt
    from skimage.restoration import denoise_wavelet

    rng = np.random.default_rng(0)
    x = rng.standard_normal(1 << 22)
    for threads in (1, 2):
        multires.set_num_threads(threads)
        ours = median(lambda: mp.swt(x, "db4", level=6), repeat)
        theirs = median(lambda: pywt.swt(x, "db4", level=6), repeat)
        row("swt", f"2^22 f64 db4 L6, {threads} thread(s)", ours, theirs, "pywt")
        c = pywt.swt(x, "db4", level=6)
        ours = median(lambda: mp.iswt(c, "db4"), repeat)
        theirs = median(lambda: pywt.iswt(c, "db4"), repeat)
        row("iswt", f"2^22 f64 db4 L6, {threads} thread(s)", ours, theirs, "pywt")
    multires.set_num_threads(0)
    y = rng.standard_normal(1 << 20)
    dec = lambda lib: lib.WaveletPacket(y, "db4", "symmetric", maxlevel=5).get_level(5)
    row("WaveletPacket decompose", "2^20 f64 db4 L5", median(lambda: dec(mp), repeat), median(lambda: dec(pywt), repeat), "pywt")
    trees = {lib: lib.WaveletPacket(y, "db4", "symmetric", maxlevel=5) for lib in (mp, pywt)}
    for t in trees.values():
        t.get_level(5)
    rec = {lib: median(lambda: t.reconstruct(update=False), repeat) for lib, t in trees.items()}
    row("WaveletPacket reconstruct", "2^20 f64 db4 L5", rec[mp], rec[pywt], "pywt")
    img = rng.random((4096, 4096))
    ours = median(lambda: multires.denoise(img, wavelet="db4"), repeat)
    theirs = median(lambda: denoise_wavelet(img, wavelet="db4"), repeat)
    row("denoise", "4096^2 f64 db4 BayesShrink", ours, theirs, "skimage")
    ours = median(lambda: multires.modwt(y, "sym4", 10), repeat)
    print(f"| modwt | 2^20 f64 sym4 L10 | {ours:.4f} | (pywt has none) | |")


def cuda(repeat):
    import ptwt
    import torch

    rng = np.random.default_rng(0)
    x = rng.standard_normal(1 << 22)
    sync = torch.cuda.synchronize
    xt = torch.from_numpy(x).cuda()

    def ptwt_resident():
        ptwt.swt(xt, "db4", level=6)
        sync()

    def ptwt_numpy():
        [c.cpu().numpy() for c in ptwt.swt(torch.from_numpy(x).cuda(), "db4", level=6)]

    def ours_resident():
        mp.swt(xt, "db4", level=6, trim_approx=True, device="cuda")
        sync()

    ours = median(ours_resident, repeat)
    row("swt (GPU)", "2^22 f64 db4 L6, torch tensors on the GPU", ours, median(ptwt_resident, repeat), "ptwt")
    ours = median(lambda: mp.swt(x, "db4", level=6, trim_approx=True, device="cuda"), repeat)
    row("swt (GPU)", "2^22 f64 db4 L6, numpy in/out", ours, median(ptwt_numpy, repeat), "ptwt")
    y = rng.standard_normal(1 << 20)
    yt = torch.from_numpy(y).cuda()
    keys = ["".join(k) for k in __import__("itertools").product("ad", repeat=5)]

    def ptwt_wp(t, back):
        wp = ptwt.WaveletPacket(t, "db4", mode="symmetric", maxlevel=5)
        out = [wp[k] for k in keys]
        if back:
            [o.cpu().numpy() for o in out]
        sync()

    ours = median(lambda: mp.WaveletPacket(y, "db4", "symmetric", maxlevel=5, device="cuda").get_level(5), repeat)
    row("WaveletPacket (GPU)", "2^20 f64 db4 L5, ours numpy in/out", ours, median(lambda: ptwt_wp(yt, False), repeat), "ptwt resident")
    row("WaveletPacket (GPU)", "2^20 f64 db4 L5, numpy in/out", ours, median(lambda: ptwt_wp(torch.from_numpy(y).cuda(), True), repeat), "ptwt")
    cpu_tree = median(lambda: mp.WaveletPacket(y, "db4", "symmetric", maxlevel=5).get_level(5), repeat)
    row("WaveletPacket (this host's CPU)", "2^20 f64 db4 L5, numpy in/out", cpu_tree, median(lambda: ptwt_wp(torch.from_numpy(y).cuda(), True), repeat), "ptwt")
    img = rng.random((4096, 4096))
    g = median(lambda: multires.denoise(img, wavelet="db4", device="cuda"), repeat)
    c = median(lambda: multires.denoise(img, wavelet="db4"), repeat)
    print(f"| denoise (GPU transforms) | 4096^2 f64 db4 BayesShrink | {g:.4f} | this host's CPU {c:.4f} | {c / g:.2f}x |")
    print(f"(GPU: {torch.cuda.get_device_name()})")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--device", choices=("cpu", "cuda"), default="cpu")
    ap.add_argument("--repeat", type=int, default=5)
    a = ap.parse_args()
    print("| call | input | multires (s) | peer (s) | peer / multires |")
    print("| --- | --- | --- | --- | --- |")
    cpu(a.repeat) if a.device == "cpu" else cuda(a.repeat)


if __name__ == "__main__":
    main()

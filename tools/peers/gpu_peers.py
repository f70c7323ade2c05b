#!/usr/bin/env python3
"""GPU peers against `multires bench --device cuda`, in one device command.

Peers (PyTorch on the same GPU, CUDA events, warm-up, median of repeats):
  * cuDNN conv1d for the FIR banks, strict FP32 (allow_tf32 = False) and TF32;
  * an unfused cuFFT overlap-save in torch.fft (unfold, rfft, product, irfft, crop);
  * an FFT CWT in torch.fft: one FFT of the signal, precomputed mask spectra,
    one batched inverse FFT, the crop (the usual GPU CWT of Python users).

Each torch peer is also timed host to host, as a Python user runs it: a
numpy array moved to the GPU (``torch.from_numpy(x).cuda()``), the peer,
the result brought back with ``.cpu()`` (median of 5, wall clock); the
table sets that beside multires' host-to-host time and its PCIe time.

    python3 tools/peers/gpu_peers.py --multires .gpu/multires [--only cwt-seed,fir-8m]
"""
import argparse
import math
import re
import subprocess
import sys

import torch


def timed(fn, repeat=20):
    fn()
    torch.cuda.synchronize()
    ts = []
    for _ in range(repeat):
        a = torch.cuda.Event(enable_timing=True)
        b = torch.cuda.Event(enable_timing=True)
        a.record()
        fn()
        b.record()
        b.synchronize()
        ts.append(a.elapsed_time(b))
    ts.sort()
    return ts[len(ts) // 2]


def timed_h2h(fn, x_host, repeat=5):
    """Wall-clock ms of numpy in -> GPU -> fn -> numpy out (median)."""
    import time

    def once():
        y = fn(torch.from_numpy(x_host).cuda())
        return y.cpu().numpy()

    once()
    ts = []
    for _ in range(repeat):
        t = time.perf_counter()
        once()
        ts.append((time.perf_counter() - t) * 1e3)
    ts.sort()
    return ts[len(ts) // 2]


def doppler(n):
    t = torch.arange(n, dtype=torch.float64) / n
    return torch.sqrt(t * (1 - t)) * torch.sin(2.1 * math.pi / (t + 0.05))


def masks(scales, wavelet, dtype):
    out = []
    for s in scales:
        h = math.ceil(8 * s)
        k = torch.arange(-h, h + 1, dtype=torch.float64) / s
        if wavelet == "morl":
            m = torch.exp(-k * k / 2) * torch.cos(5 * k)
            m = m.to(torch.complex128)
        else:  # cmor1.5-1.0
            m = (math.pi * 1.5) ** -0.5 * torch.exp(-k * k / 1.5) * torch.exp(2j * math.pi * k)
        out.append(m / math.sqrt(s))
    return out


def torch_fft_cwt(n, scales, wavelet, dtype, repeat):
    cdt = torch.complex64 if dtype == torch.float32 else torch.complex128
    x = doppler(n).to("cuda", dtype)
    ms = masks(scales, wavelet, dtype)
    hmax = max(len(m) // 2 for m in ms)
    p = 1 << math.ceil(math.log2(n + 2 * hmax + 1))
    k = torch.zeros(len(ms), p, dtype=torch.complex128)
    for i, m in enumerate(ms):
        h = len(m) // 2
        # correlation with conj(m): kernel conj(m[-k]) placed circularly
        g = torch.flip(m, [0]).conj()
        k[i, : h + 1] = g[h:]
        k[i, p - h :] = g[:h]
    kf = torch.fft.fft(k.to("cuda"), dim=1).to(cdt)
    del k

    def on(xg):
        xf = torch.fft.fft(xg, p)
        w = torch.fft.ifft(xf[None, :] * kf, dim=1)
        return w[:, :n]

    kernel = timed(lambda: on(x), repeat)
    return kernel, timed_h2h(on, x.cpu().numpy())


def conv1d_fir(n, f, m, tf32, repeat):
    torch.backends.cudnn.allow_tf32 = tf32
    torch.backends.cuda.matmul.allow_tf32 = tf32
    x = torch.randn(1, 1, n, device="cuda")
    w = torch.randn(f, 1, m, device="cuda")
    on = lambda xg: torch.nn.functional.conv1d(xg, w, padding=m // 2)  # noqa: E731
    r = timed(lambda: on(x), repeat)
    h = timed_h2h(on, x.cpu().numpy())
    torch.backends.cudnn.allow_tf32 = False
    return r, h


def cufft_ols(n, f, m, repeat):
    x = torch.randn(n, device="cuda")
    h = torch.randn(f, m, device="cuda")
    p = 1 << math.ceil(math.log2(4 * m))
    v = p - m + 1
    segs = math.ceil((n + m - 1) / v)
    xe = torch.zeros(segs * v + p, device="cuda")
    hf = torch.fft.rfft(h, p)

    def on(xg):
        xe[m - 1 : m - 1 + n] = xg
        s = xe.unfold(0, p, v)[:segs]
        y = torch.fft.irfft(torch.fft.rfft(s)[None, :, :] * hf[:, None, :], p)
        return y[:, :, m - 1 :].reshape(f, -1)[:, :n]

    return timed(lambda: on(x), repeat), timed_h2h(on, x.cpu().numpy())


def multires(exe, config, precision, extra=(), repeat=20):
    cmd = [exe, "bench", "--config", config, "--device", "cuda", "--precision", precision, "--repeat", str(repeat), *extra]
    out = subprocess.run(cmd, capture_output=True, text=True)
    sys.stdout.write(out.stdout)
    if out.returncode != 0:
        sys.stdout.write(out.stderr)
        return []
    kernels = [float(v) for v in re.findall(r"kernels median ([0-9.]+) ms", out.stdout)]
    floors = [float(v) for v in re.findall(r"\| floor ([0-9.]+) ms", out.stdout)]
    h2h = [float(v) for v in re.findall(r"host to host ([0-9.]+) ms \| PCIe", out.stdout)]
    pcie = [float(v) for v in re.findall(r"\| PCIe ([0-9.]+) ms", out.stdout)]
    nan = float("nan")
    return [
        (k, floors[i] if i < len(floors) else nan, h2h[i] if i < len(h2h) else nan, pcie[i] if i < len(pcie) else nan)
        for i, k in enumerate(kernels)
    ]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--multires", default=".gpu/multires")
    ap.add_argument("--only", default="cwt-seed,cwt-1m,cwt-fcwt,fir-2m,fir-8m")
    ap.add_argument("--repeat", type=int, default=20)
    ap.add_argument("--check", action="store_true")
    a = ap.parse_args()
    only = a.only.split(",")
    extra = ["--check"] if a.check else []
    nan4 = (float("nan"),) * 4
    nan2 = (float("nan"),) * 2
    rows = []
    print(f"# {torch.cuda.get_device_name()} | torch {torch.__version__} | cuDNN {torch.backends.cudnn.version()}")
    if "cwt-seed" in only:
        seed = [float(s) for s in range(1, 201)]
        for prec, dt in [("f32", torch.float32), ("f64", torch.float64)]:
            ours = multires(a.multires, "cwt-seed", prec, extra)
            peer = torch_fft_cwt(102400, seed, "morl", dt, a.repeat)
            rows.append(("cwt-seed", prec, "torch.fft CWT", peer, ours[0] if ours else nan4))
        ours = multires(a.multires, "cwt-seed", "f64", ["--algorithm", "direct"], repeat=5)
        rows.append(("cwt-seed direct", "f64", "-", nan2, ours[0] if ours else nan4))
    if "cwt-1m" in only:
        sc = [1024 ** (i / 255) for i in range(256)]
        ours = multires(a.multires, "cwt-1m", "f32", extra)
        peer = torch_fft_cwt(1 << 20, sc, "cmor", torch.float32, a.repeat)
        rows.append(("cwt-1m", "f32", "torch.fft CWT", peer, ours[0] if ours else nan4))
    if "cwt-fcwt" in only:
        freqs = [1 + (500 - 1) * i / 2999 for i in range(3000)]
        sc = [1000.0 / f for f in freqs]
        ours = multires(a.multires, "cwt-fcwt", "f32", extra)
        try:
            peer = torch_fft_cwt(100000, sc, "cmor", torch.float32, 5)
        except RuntimeError as e:  # out of memory
            print("torch.fft CWT for cwt-fcwt failed:", e)
            peer = nan2
        rows.append(("cwt-fcwt", "f32", "torch.fft CWT", peer, ours[0] if ours else nan4))
    for cfg, n, f, taps in [("fir-2m", 1 << 21, 8, [64, 513]), ("fir-8m", 1 << 23, 32, [513, 2049])]:
        if cfg not in only:
            continue
        ours = multires(a.multires, cfg, "f32", extra)
        for i, m in enumerate(taps):
            o = ours[i] if i < len(ours) else nan4
            rows.append((f"{cfg} {f}x{m}", "f32", "cuDNN conv1d FP32", conv1d_fir(n, f, m, False, a.repeat), o))
            rows.append((f"{cfg} {f}x{m}", "f32", "cuDNN conv1d TF32", conv1d_fir(n, f, m, True, a.repeat), o))
            rows.append((f"{cfg} {f}x{m}", "f32", "cuFFT overlap-save (torch.fft)", cufft_ols(n, f, m, a.repeat), o))
    print()
    print(
        "| config | precision | peer | peer kernels (ms) | multires kernels (ms) | peer / multires | floor (ms) | multires / floor "
        "| peer host to host (ms) | multires host to host (ms) | peer / multires | PCIe (ms) | multires / PCIe |"
    )
    print("| --- " * 13 + "|")
    for cfg, prec, peer, (pk, ph), (mk, fl, mh, pc) in rows:
        print(
            f"| {cfg} | {prec} | {peer} | {pk:.3f} | {mk:.3f} | {pk / mk:.2f}x | {fl:.3f} | {mk / fl:.1f}x "
            f"| {ph:.1f} | {mh:.1f} | {ph / mh:.1f}x | {pc:.1f} | {mh / pc:.2f}x |"
        )


if __name__ == "__main__":
    main()

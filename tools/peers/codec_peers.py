#!/usr/bin/env python3
"""The codec against ZFP (zfpy) and SZ3 (pysz) on the same fields, one core each.

Makes the codec-3d fields with `multires make-field` (seeded), then for each
field and relative bound (of the value range) runs:
- ZFP, fixed-accuracy mode, tolerance = the absolute bound;
- SZ3, absolute-bound mode;
- multires compress --error-bound abs:E (each --transform given).
It checks every decoded value against the bound and prints ratio, PSNR, max
error and compress / decompress throughput (MB/s of float32 input).

ZFP and SZ3 are timed in this process (arrays in memory), multires as a
process (reading and writing files). With `interp` among the transforms it
also prints "multires interp (in process)" (seed 1 only): `multires bench --config codec-3d
--device cpu --threads 1`, which times compress and decompress in memory as
the peers are timed (the median of --repeat runs after a warm-up, where the
peers get their fastest run; its ratio and bound are checked by the bench).

    python3 tools/peers/codec_peers.py --multires target/release/multires [--size 256] [--transforms cdf97,cdf53,haar] [--repeat 3]

Each compression and decompression is timed `--repeat` times and the fastest
counts: single runs on a small VM vary by up to a factor of two (page clearing).

Installs zfpy and pysz with pip when they are missing.
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile
import time


def need(mod, pkg):
    try:
        return __import__(mod)
    except ImportError:
        subprocess.check_call([sys.executable, "-m", "pip", "install", "-q", pkg])
        return __import__(mod)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--multires", required=True)
    p.add_argument("--size", type=int, default=256)
    p.add_argument("--bounds", default="1e-2,1e-3,1e-4")
    p.add_argument("--transforms", default="cdf97")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--repeat", type=int, default=3, help="timings per step; the fastest counts")
    args = p.parse_args()

    def best(step):
        """`step()`'s result and its fastest time of `args.repeat` runs."""
        times, out = [], None
        for _ in range(max(1, args.repeat)):
            t = time.perf_counter()
            out = step()
            times.append(time.perf_counter() - t)
        return out, min(times)

    np = need("numpy", "numpy")
    zfpy = need("zfpy", "zfpy")
    pysz = need("pysz", "pysz")
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    tmp = tempfile.mkdtemp()
    print(f"# fields {args.size}^3 float32, seed {args.seed}; multires runs with --threads 1; bound = rel x (max - min); "
          f"fastest of {args.repeat} timings")
    print("| field | rel bound | codec | ratio | PSNR (dB) | max error / bound | compress MB/s | decompress MB/s |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    # The bench makes its fields with seed 1 only: other seeds get no
    # in-memory rows (they would time another field).
    in_memory = "interp" in args.transforms.split(",") and args.seed == 1
    if "interp" in args.transforms.split(",") and not in_memory:
        print(f"# no 'multires interp (in process)' rows: multires bench makes its fields with seed 1, not {args.seed}")
    for kind in ["turbulent", "smooth"]:
        f = os.path.join(tmp, f"{kind}.npy")
        subprocess.check_call([args.multires, "make-field", "--kind", kind, "--size", str(args.size),
                               "--seed", str(args.seed), "-o", f], stdout=subprocess.DEVNULL)
        x = np.load(f)
        mb = x.nbytes / 1e6
        rng = float(x.max() - x.min())

        def report(name, rel, nbytes, y, tc, td):
            err = np.abs(y.astype(np.float64) - x.astype(np.float64))
            e = rel * rng
            mse = float((err ** 2).mean())
            psnr = 20 * np.log10(rng / np.sqrt(mse)) if mse > 0 else float("inf")
            flag = "" if err.max() <= e else " **bound broken**"
            print(f"| {kind} | {rel:g} | {name} | {x.nbytes / nbytes:.2f} | {psnr:.1f} | {err.max() / e:.3f}{flag} | {mb / tc:.0f} | {mb / td:.0f} |")
            sys.stdout.flush()

        in_process = bench_rows(args, kind) if in_memory else {}
        for rel in [float(b) for b in args.bounds.split(",")]:
            e = rel * rng
            c, tc = best(lambda: zfpy.compress_numpy(x, tolerance=e))
            y, td = best(lambda: zfpy.decompress_numpy(c))
            report("ZFP", rel, len(c), y, tc, td)

            cfg = pysz.szConfig()
            cfg.errorBoundMode = pysz.szErrorBoundMode.ABS
            cfg.absErrorBound = e
            (c, _), tc = best(lambda: pysz.sz.compress(x, cfg))
            (y, _), td = best(lambda: pysz.sz.decompress(c, np.float32, x.shape))
            report("SZ3", rel, c.nbytes, y, tc, td)

            for tr in args.transforms.split(","):
                out = os.path.join(tmp, "f.mrz")
                back = os.path.join(tmp, "back.npy")
                _, tc = best(lambda: subprocess.check_call(
                    [args.multires, "--threads", "1", "compress", f, "-o", out,
                     "--error-bound", f"abs:{e!r}", "--transform", tr, "--device", "cpu"],
                    stdout=subprocess.DEVNULL))
                _, td = best(lambda: subprocess.check_call(
                    [args.multires, "--threads", "1", "decompress", out, "-o", back, "--device", "cpu"],
                    stdout=subprocess.DEVNULL))
                report(f"multires {tr}", rel, os.path.getsize(out), np.load(back), tc, td)
            if in_memory:
                r = in_process.get(rel)
                if r is None:
                    print(f"| {kind} | {rel:g} | multires interp (in process) | no bench row |")
                else:
                    ratio, cs, ds = r
                    # The bench prints milliseconds: a field this small may take under one.
                    rate = lambda t: f"{mb / t:.0f}" if t > 0 else "n/a (under 1 ms)"
                    print(f"| {kind} | {rel:g} | multires interp (in process) | {ratio:.2f} | | | {rate(cs)} | {rate(ds)} |")
                sys.stdout.flush()


def bench_rows(args, kind):
    """{rel: (ratio, compress s, decompress s)} from one `multires bench`
    process on the same field (seed 1), one thread, in memory."""
    out = subprocess.run(
        [args.multires, "bench", "--config", "codec-3d", "--device", "cpu", "--threads", "1",
         "--codec-size", str(args.size), "--codec-field", kind, "--codec-rel", args.bounds,
         "--repeat", str(max(1, args.repeat))],
        check=True, capture_output=True, text=True).stdout
    rows = {}
    for line in out.splitlines():
        m = re.search(r"rel ([0-9.e+-]+) interp \| ratio ([0-9.]+) .*\| compress ([0-9.]+) s .*"
                      r"\| decompress \(cpu\) ([0-9.]+) s", line)
        if m and "max error" in line:
            rows[float(m.group(1))] = (float(m.group(2)), float(m.group(3)), float(m.group(4)))
    return rows


if __name__ == "__main__":
    main()

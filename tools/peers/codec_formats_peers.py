#!/usr/bin/env python3
"""The codec against SZ3 (pysz), ZFP (zfpy), zstd and fpzip on the CPU, one
thread each, in memory, on synthetic and on real fields made by others:

- the two synthetic 256^3 float32 fields (`multires make-field`, seed 1);
- PyWavelets' bundled images `ascent`, `aero`, `camera` (512 x 512 uint8);
- a 3-D MRI volume that ships inside nibabel's wheel
  (nibabel/tests/data/example4d.nii.gz, its first 128 x 96 x 24 int16 volume).

Tables (markdown, one run each; every decoded value is checked against its
bound and a row says so if it is not held):

1. lossy, float32, rel 1e-2 / 1e-3 / 1e-4 of each field's range: ratio and
   compress / decompress MB/s for multires (interp), SZ3 (absolute-bound
   mode) and ZFP (fixed accuracy); images and the MRI as float32 copies;
2. lossless, float32: multires lossless=True, zstd -19, fpzip (lossless);
3. integer inputs as integers: multires codes uint8/int16 with an absolute
   bound in integer units (below 1: lossless), SZ3 the same values as
   float32 with the same absolute bound (0.05, 1, 2); ratio against the
   integers' own bytes.

    python3 tools/peers/codec_formats_peers.py --multires target/release/multires

Needs the multires Python package (pip install ./python); installs pysz,
zfpy==1.0.1, zstandard, fpzip and nibabel with pip when they are missing.
Nothing is downloaded at run time beyond those packages.
"""
import argparse
import gzip
import os
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


np = need("numpy", "numpy")


def best(step, repeat):
    times, out = [], None
    for _ in range(max(1, repeat)):
        t = time.perf_counter()
        out = step()
        times.append(time.perf_counter() - t)
    return out, min(times)


def fields(multires_bin, size):
    pywt_data = need("pywt", "pywavelets").data
    nib = need("nibabel", "nibabel")
    tmp = tempfile.mkdtemp()
    out = {}
    for kind in ("smooth", "turbulent"):
        f = os.path.join(tmp, f"{kind}.npy")
        subprocess.check_call([multires_bin, "make-field", "--kind", kind, "--size", str(size), "--seed", "1",
                               "-o", f], stdout=subprocess.DEVNULL)
        out[kind] = np.load(f)
    for name in ("ascent", "aero", "camera"):
        out[name] = getattr(pywt_data, name)()
    path = os.path.join(os.path.dirname(nib.__file__), "tests", "data", "example4d.nii.gz")
    out["mri"] = np.ascontiguousarray(np.asarray(nib.load(path).dataobj)[..., 0]).astype(np.int16)
    return out


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--multires", required=True, help="the multires binary (makes the synthetic fields)")
    p.add_argument("--size", type=int, default=256)
    p.add_argument("--repeat", type=int, default=3, help="timings per step; the fastest counts")
    p.add_argument("--tables", default="lossy,lossless,integer")
    args = p.parse_args()
    import multires
    multires.set_num_threads(1)
    pysz = need("pysz", "pysz")
    zfpy = need("zfpy", "zfpy==1.0.1")
    zstd = need("zstandard", "zstandard")
    fpzip = need("fpzip", "fpzip")
    data = fields(args.multires, args.size)
    tables = args.tables.split(",")
    print(f"# one thread each, in memory, fastest of {args.repeat}; MB/s of the input's bytes")

    def sz3(x, e):
        cfg = pysz.szConfig()
        cfg.errorBoundMode = pysz.szErrorBoundMode.ABS
        cfg.absErrorBound = e
        (c, _), tc = best(lambda: pysz.sz.compress(x, cfg), args.repeat)
        (y, _), td = best(lambda: pysz.sz.decompress(c, x.dtype, x.shape), args.repeat)
        return c.nbytes, y, tc, td

    def mr(x, **kw):
        c, tc = best(lambda: multires.compress(x, device="cpu", **kw), args.repeat)
        y, td = best(lambda: multires.decompress(c), args.repeat)
        return len(c), y, tc, td

    def row(name, field, bound, codec, res, x, e, raw=None):
        n, y, tc, td = res
        raw = raw or x.nbytes
        err = float(np.abs(y.astype(np.float64) - x.astype(np.float64)).max())
        flag = "" if err <= e else f" **bound broken: {err:.3g}**"
        mb = raw / 1e6
        print(f"| {name} | {field} | {bound} | {codec} | {raw / n:.2f} | {mb / tc:.0f} / {mb / td:.0f} |{flag}")
        sys.stdout.flush()

    if "lossy" in tables:
        print("\n| field | shape | rel | codec | ratio | compress / decompress MB/s |")
        print("| --- | --- | --- | --- | --- | --- |")
        for name, a in data.items():
            x = a.astype(np.float32)
            span = float(x.max() - x.min())
            for rel in (1e-2, 1e-3, 1e-4):
                e = rel * span
                row(name, "x".join(map(str, x.shape)), f"{rel:g}", "multires", mr(x, abs=e), x, e)
                row(name, "x".join(map(str, x.shape)), f"{rel:g}", "SZ3", sz3(x, e), x, e)
                c, tc = best(lambda: zfpy.compress_numpy(x, tolerance=e), args.repeat)
                y, td = best(lambda: zfpy.decompress_numpy(c), args.repeat)
                row(name, "x".join(map(str, x.shape)), f"{rel:g}", "ZFP", (len(c), y, tc, td), x, e)

    if "lossless" in tables:
        print("\n| field | shape | bound | codec | ratio | compress / decompress MB/s |")
        print("| --- | --- | --- | --- | --- | --- |")
        for name, a in data.items():
            x = a.astype(np.float32)
            shape = "x".join(map(str, x.shape))

            def exact(res):
                n, y, tc, td = res
                assert y.tobytes() == x.tobytes(), f"{name}: not lossless"
                return res

            row(name, shape, "lossless", "multires", exact(mr(x, lossless=True)), x, 0)
            cz = zstd.ZstdCompressor(level=19)
            c, tc = best(lambda: cz.compress(x.tobytes()), 1)
            d = zstd.ZstdDecompressor()
            b, td = best(lambda: d.decompress(c), args.repeat)
            row(name, shape, "lossless", "zstd -19", exact((len(c), np.frombuffer(b, np.float32).reshape(x.shape), tc, td)), x, 0)
            c, tc = best(lambda: fpzip.compress(x, precision=0), args.repeat)
            y, td = best(lambda: fpzip.decompress(c), args.repeat)
            row(name, shape, "lossless", "fpzip", exact((len(c), y.reshape(x.shape), tc, td)), x, 0)

    if "integer" in tables:
        print("\n| field | dtype | abs bound | codec | ratio | compress / decompress MB/s |")
        print("| --- | --- | --- | --- | --- | --- |")
        for name in ("ascent", "aero", "camera", "mri"):
            a = data[name]
            for e in (0.05, 1, 2):
                row(name, str(a.dtype), f"{e:g}", "multires (integers)", mr(a, abs=e), a, e)
                x = a.astype(np.float32)
                n, y, tc, td = sz3(x, e)
                row(name, str(a.dtype), f"{e:g}", "SZ3 (as float32)", (n, y, tc, td), a, e, raw=a.nbytes)


if __name__ == "__main__":
    main()

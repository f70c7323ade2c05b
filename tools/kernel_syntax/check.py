#!/usr/bin/env python3
"""A syntax check of the codec's CUDA kernels with g++ and stub
declarations (cuda_stubs.h), for machines without CUDA: the codec's
kernels (codec_*.cu, joined in the order kernels.rs joins them) with
every instance the host code names (found in crates/multires-cuda/src),
parsed as C++. It catches what NVRTC would refuse at the first launch on
a GPU (typos, wrong argument counts in a macro, undeclared names) before
device time is spent; it says nothing about what the kernels compute.
The other kernel files build their instance names at run time (types,
output kinds), which this does not expand: for them it finds none.

Usage: python3 tools/kernel_syntax/check.py [codec.cu]  (codec.cu: the joined codec_*.cu)
"""
import os, re, subprocess, sys, tempfile

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
KDIR = os.path.join(ROOT, "crates", "multires-cuda", "kernels")
SDIR = os.path.join(ROOT, "crates", "multires-cuda", "src")
STUBS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "cuda_stubs.h")


def codec_parts():
    """The codec's kernel files, one program, in the order CODEC_SOURCE in
    kernels.rs joins them (read from there, so no file is missed)."""
    text = open(os.path.join(SDIR, "kernels.rs")).read()
    block = re.search(r"pub\(crate\) const CODEC_SOURCE.*?\n\);", text, re.S)
    parts = re.findall(r"kernels/(codec_\w+\.cu)", block.group(0)) if block else []
    if not parts:
        sys.exit("check.py: no codec kernels found in CODEC_SOURCE (kernels.rs)")
    return parts


def source(cu):
    names = codec_parts() if cu == "codec.cu" else [cu]
    return "".join(open(os.path.join(KDIR, n)).read() for n in names)


def host_sources():
    for d, _, files in os.walk(SDIR):
        for f in files:
            if f.endswith(".rs"):
                yield os.path.join(d, f)


def instances(cu):
    """Macro instances of `cu` named in the host sources (placeholders
    such as {inverse}, {} or {ty} expanded to each value they take)."""
    # Macro name -> its parameter count (other files have macros of the
    # same name with other parameters: instances must match both).
    macros = {
        m: len(p.split(","))
        for m, p in re.findall(r"^#define (\w+)\((name[^)]*)\)", source(cu), re.M)
    }
    found = set()
    for f in host_sources():
        text = open(f).read()
        for inst in re.findall(r'"([A-Z][A-Z_0-9]*\(kernel[^"]*\))"', text):
            name, args = inst.split("(", 1)
            if macros.get(name) == len(args.split(",")):
                found.add(inst)
    out = set()
    for inst in found:
        if "{inverse}" in inst:
            out |= {inst.replace("{inverse}", v) for v in ("true", "false")}
        elif re.search(r"\{\w*\}", inst):
            # {} or a named one such as {ty}: a stored type.
            out |= {re.sub(r"\{\w*\}", v, inst) for v in ("float", "double")}
        elif "{" not in inst:
            out.add(inst)
    return sorted(out), macros


def check(cu):
    insts, macros = instances(cu)
    src = open(os.path.join(KDIR, "common.cuh")).read() + "\n" + source(cu)
    lines = [f"{i.replace('(kernel', f'(check_{n}', 1)};" for n, i in enumerate(insts)]
    with tempfile.NamedTemporaryFile("w", suffix=".cpp", delete=False) as f:
        f.write(src + "\n" + "\n".join(lines) + "\n")
        path = f.name
    r = subprocess.run(
        ["g++", "-std=c++17", "-fsyntax-only", "-w", "-include", STUBS, path],
        capture_output=True,
        text=True,
    )
    os.unlink(path)
    unused = sorted(m for m in macros if not any(i.startswith(m + "(") for i in insts))
    print(f"{cu}: {len(insts)} instances" + (f" (macros no host code names: {', '.join(unused)})" if unused else ""))
    if r.returncode != 0:
        print(r.stderr[:6000])
    return r.returncode == 0


if __name__ == "__main__":
    files = sys.argv[1:] or ["codec.cu"]
    ok = all([check(f) for f in files])
    if ok and not any(instances(f)[0] for f in files):
        print("no instances found: nothing was checked")
        ok = False
    sys.exit(0 if ok else 1)

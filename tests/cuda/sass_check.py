#!/usr/bin/env python3
"""Reads the SASS of the built CUDA kernels (cuobjdump -sass on the object files) and fails if a
hot kernel loses its 128-bit global accesses or touches local memory.

Every kernel of the objects is listed with its global load/store widths and local-memory
instructions. Rules:
  - no kernel uses local memory (LDL/STL: a spilled register or a dynamically indexed array
    would put the loads of a thread behind a round trip through L1/L2);
  - each hot kernel (the 16-byte vector bodies: ReluGradOneShotVector, ReluGradVector16,
    ReluGradPipelined, the mask kernels and the fused ReLU + dropout backward, whose full bytes
    load whole vectors) has at least
    one LDG.E.128 and one STG.E.128 for every dtype.
Exit 0 when all hold, 1 when one fails, 77 (ctest: skipped) when no cuobjdump is found (1 with
RELUGRAD_SASS_REQUIRE=1, as make test-cuda sets).

  tests/cuda/sass_check.py [--cuobjdump PATH] OBJECT...
cuobjdump is looked for beside nvcc (CUDA toolkit), on PATH, then in the triton package of the
Python that runs this script or of .venv (PyPI's CUDA torch wheels bring it).
"""
import argparse
import glob
import os
import re
import shutil
import subprocess
import sys

# Mangled-name fragments of the hot kernels (anonymous-namespace prefixes differ per build).
HOT = ("ReluGradOneShotVector", "ReluGradVector16", "ReluGradPipelined", "ReluForwardMaskOneShot",
       "ReluGradMaskOneShot", "ReluForwardMask", "ReluGradMask", "ReluDropoutGradOneShot")
# The scalar kernels (no common 16-byte phase): listed, held to the local-memory rule only.
SCALAR = ("ReluGradOneShotScalar", "ReluGradScalar")
DTYPES = {"1": "f32", "2": "f16", "3": "bf16", "4": "f64"}  # relugrad::Dtype numbering


def find_cuobjdump(explicit):
    if explicit:
        return explicit if os.access(explicit, os.X_OK) else None
    cands = []
    nvcc = shutil.which("nvcc") or ("/usr/local/cuda/bin/nvcc" if os.path.exists("/usr/local/cuda/bin/nvcc") else None)
    if nvcc:
        cands.append(os.path.join(os.path.dirname(os.path.realpath(nvcc)), "cuobjdump"))
    which = shutil.which("cuobjdump")
    if which:
        cands.append(which)
    try:
        import triton  # noqa: F401 (only its directory is used)
        cands.append(os.path.join(os.path.dirname(triton.__file__), "backends", "nvidia", "bin", "cuobjdump"))
    except Exception:
        pass
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    cands += glob.glob(os.path.join(root, ".venv", "lib", "python3*", "site-packages", "triton", "backends",
                                    "nvidia", "bin", "cuobjdump"))
    for c in cands:
        if c and os.access(c, os.X_OK):
            return c
    return None


def kernels(sass):
    """{mangled name: [instruction lines]} from cuobjdump -sass output."""
    out, name = {}, None
    for line in sass.splitlines():
        m = re.match(r"\s*Function : (\S+)", line)
        if m:
            name = m.group(1)
            out[name] = []
        elif name is not None and "/*" in line:
            out[name].append(line)
    return out


def summary(lines):
    ops = {}
    for line in lines:
        m = re.search(r"\b((?:LDG|STG|LDL|STL)(?:\.[A-Z0-9]+)*)\b", line)
        if m:
            ops[m.group(1)] = ops.get(m.group(1), 0) + 1
    return ops


def label(name):
    kind = next((h for h in HOT + SCALAR if h + "I" in name), None)
    m = re.search(r"DtypeE(\d)", name)
    return kind, DTYPES.get(m.group(1), "?") if m else "?"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--cuobjdump")
    ap.add_argument("objects", nargs="+")
    args = ap.parse_args()
    tool = find_cuobjdump(args.cuobjdump)
    if tool is None:
        if os.environ.get("RELUGRAD_SASS_REQUIRE") == "1":
            print("sass_check: FAILED: no cuobjdump (CUDA toolkit, PATH or triton's copy) found")
            return 1
        print("sass_check: SKIPPED: no cuobjdump (CUDA toolkit, PATH or triton's copy) found")
        return 77
    print(f"sass_check: {tool}")
    failures, hot_seen = [], {}
    for obj in args.objects:
        r = subprocess.run([tool, "-sass", obj], capture_output=True, text=True)
        if r.returncode != 0:
            failures.append(f"{obj}: cuobjdump failed: {r.stderr.strip()}")
            continue
        ks = kernels(r.stdout)
        if not ks:
            failures.append(f"{obj}: no kernels in its SASS (built without device code?)")
        for name, lines in sorted(ks.items()):
            ops = summary(lines)
            kind, dtype = label(name)
            local = {k: v for k, v in ops.items() if k.startswith(("LDL", "STL"))}
            desc = " ".join(f"{k}x{v}" for k, v in sorted(ops.items()))
            print(f"  {kind or 'other'} {dtype}: {desc}")
            if local:
                failures.append(f"{kind or name} {dtype}: local memory {local}")
            if kind in HOT:
                ok = ops.get("LDG.E.128", 0) > 0 and ops.get("STG.E.128", 0) > 0
                hot_seen.setdefault((kind, dtype), []).append(ok)
    for (kind, dtype), oks in sorted(hot_seen.items()):
        if not all(oks):
            failures.append(f"{kind} {dtype}: a hot kernel without LDG.E.128 and STG.E.128")
    if not hot_seen:
        failures.append("no hot kernel found in the objects")
    for f in failures:
        print(f"sass_check: FAILED: {f}")
    print(f"sass_check: {len(hot_seen)} hot (kernel, dtype) pairs, {len(failures)} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

"""Measures what each installed framework computes for ReluGrad on the CPU and
how that compares with each relugrad setting that could explain it.

    .venv/bin/python python/compat/probe.py [--large N]

For every adapter x dtype it runs the special-value grid (and the grid tiled
to N elements, to take vectorised / multi-threaded paths) and prints, per
relugrad configuration, the number of differing elements ("OK" when none;
"Nnan" when all N differences are NaN payload/sign bits, NaN class equal)."""
from __future__ import annotations

import argparse
import sys
from pathlib import Path


sys.path.insert(0, str(Path(__file__).resolve().parent))
import relugrad  # noqa: E402
from cases import special_case, random_case, tiled  # noqa: E402
from compare import mismatches  # noqa: E402
from nan_compare import same_bits  # noqa: E402
import frameworks  # noqa: E402

CONFIGS = {
    "torch": dict(semantics="torch"),
    "torch+dtype_threshold": dict(semantics="torch", threshold_rounding="dtype"),
    "tensorflow": dict(semantics="tensorflow"),
    "tensorflow+ieee": dict(semantics="tensorflow", denormals="ieee"),
    "jax": dict(semantics="jax"),
    "jax+ieee": dict(semantics="jax", denormals="ieee"),
    "onednn": dict(semantics="onednn"),
}


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--large", type=int, default=1 << 17)
    ap.add_argument("--only", default="")
    ap.add_argument("--verbose", action="store_true")
    args = ap.parse_args()
    for name, ad in frameworks.available().items():
        if args.only and args.only not in name:
            continue
        print(f"== {name} ({ad.framework} {frameworks.framework_version(ad.framework)})")
        for dtype in ad.dtypes:
            for t in ad.thresholds:
                for label, (dy, s) in (("special", special_case(dtype)),
                                       (f"special x{args.large}",
                                        tuple(tiled(a, args.large) for a in special_case(dtype))),
                                       ("random", random_case(dtype))):
                    try:
                        want = ad.fn(dy, s, t)
                    except Exception as e:  # an unsupported dtype is a finding too
                        first = str(e).splitlines()[0][:120]
                        print(f"  {dtype} t={t} {label}: framework error: {type(e).__name__}: {first}")
                        break
                    row = []
                    for cname, opts in CONFIGS.items():
                        got = relugrad.relu_grad(dy, s, threshold=t, **opts)
                        diff = mismatches(dy, s, want, got, limit=6)
                        if not diff:
                            row.append(f"{cname}=OK")
                        elif same_bits(want, got, "class"):
                            row.append(f"{cname}={diff[0].split()[0]}nan")  # only NaN bits differ
                        else:
                            row.append(f"{cname}={diff[0].split()[0]}")
                        if diff and args.verbose and cname.split('+')[0] == ad.preset:
                            print(f"  {dtype} t={t} {label} vs {cname}:\n" + "\n".join(diff))
                    print(f"  {dtype:4} t={t:<5} {label:16} " + " ".join(row))
    return 0


if __name__ == "__main__":
    sys.exit(main())

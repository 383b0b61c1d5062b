"""Runs the installed frameworks for real and writes golden vectors under
tests/golden: per case dy.npy, s.npy, dx.npy (dx = the framework's answer)
plus manifest.tsv (read by the C++ golden test) and manifest.json.

    .venv/bin/python python/compat/gen_goldens.py [--out tests/golden] [--frameworks torch,tensorflow,jax]

Before writing, each case is checked against relugrad with the adapter's
preset and NaN policy; a mismatch stops the script (a golden that relugrad
fails is a finding to report, not a file to commit). bf16 arrays are saved as
'<u2' bit patterns; the manifest says the dtype."""
from __future__ import annotations

import argparse
import json
import platform
import shutil
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import relugrad  # noqa: E402
from cases import DTYPES, random_case, special_case, to_bits  # noqa: E402
import frameworks  # noqa: E402
from nan_compare import same_bits  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
# overrides: "key=value,..." settings applied on top of the preset ("-" for none).
COLUMNS = ["id", "framework", "version", "device", "op", "preset", "overrides", "dtype", "threshold", "n",
           "nan_policy", "dy", "s", "dx"]


def save(path: Path, a: np.ndarray) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    np.save(path, to_bits(a) if a.dtype == DTYPES["bf16"] else a, allow_pickle=False)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=str(ROOT / "tests" / "golden"))
    ap.add_argument("--frameworks", default="")
    args = ap.parse_args()
    out = Path(args.out)
    wanted = set(filter(None, args.frameworks.split(",")))
    adapters = [a for a in frameworks.available().values() if not wanted or a.framework in wanted]
    if not adapters:
        print("gen_goldens: no framework installed (make compat installs them)", file=sys.stderr)
        return 1
    # Frameworks not run this time keep their previous goldens (MindSpore
    # lives in its own venv, so `make compat` runs this script twice).
    rows, failures = [], []
    manifest = out / "manifest.tsv"
    run = {a.framework for a in adapters}
    if manifest.exists():
        with open(manifest) as f:
            header = f.readline().rstrip("\n").split("\t")
            for line in f:
                row = dict(zip(header, line.rstrip("\n").split("\t")))
                if row.get("framework") not in run and all(c in row for c in COLUMNS):
                    rows.append(row)
    for ad in adapters:
        stale = out / "data" / ad.name
        if stale.exists():
            shutil.rmtree(stale)
    for ad in adapters:
        version = frameworks.framework_version(ad.framework)
        for dtype in ad.dtypes:
            policy = frameworks.nan_policy(ad.framework, dtype)
            for t in ad.thresholds:
                for case, (dy, s) in (("special", special_case(dtype)), ("random", random_case(dtype))):
                    dx = ad.fn(dy, s, t)
                    got = relugrad.relu_grad(dy, s, semantics=ad.preset, threshold=t, **ad.options())
                    if not same_bits(dx, got, policy):
                        failures.append(f"{ad.name} {dtype} t={t} {case}")
                        continue
                    cid = f"{ad.name}.{dtype}.t{t:g}.{case}"
                    files = {}
                    for key, arr in (("dy", dy), ("s", s), ("dx", dx)):
                        rel = Path("data") / ad.name / f"{dtype}.t{t:g}.{case}.{key}.npy"
                        save(out / rel, arr)
                        files[key] = str(rel)
                    overrides = ",".join(f"{k}={v}" for k, v in ad.overrides) or "-"
                    rows.append(dict(id=cid, framework=ad.framework, version=version, device="cpu",
                                     op=ad.name, preset=ad.preset, overrides=overrides, dtype=dtype,
                                     threshold=repr(float(t)),
                                     n=str(dy.size), nan_policy=policy, **files))
    if failures:
        print("gen_goldens: relugrad disagrees with the framework on:\n  " + "\n  ".join(failures),
              file=sys.stderr)
        return 1
    with open(out / "manifest.tsv", "w") as f:
        f.write("\t".join(COLUMNS) + "\n")
        for r in rows:
            f.write("\t".join(r[c] for c in COLUMNS) + "\n")
    meta = {
        "generator": "python/compat/gen_goldens.py",
        "python": platform.python_version(),
        "numpy": np.__version__,
        "machine": platform.machine(),
        "relugrad_simd_selected": relugrad.info()["simd_selected"],
        "nan_by_class": {f"{k[0]}/{k[1]}": v for k, v in frameworks.NAN_BY_CLASS.items()},
        "cases": rows,
    }
    (out / "manifest.json").write_text(json.dumps(meta, indent=1) + "\n")
    print(f"gen_goldens: wrote {sum(r['framework'] in run for r in rows)} cases for "
          f"{', '.join(sorted({a.framework + ' ' + frameworks.framework_version(a.framework) for a in adapters}))}")
    if "torch" in run:
        # Thresholds on rounding boundaries: this torch, and an older one
        # where RELUGRAD_TORCH_OLD_PYTHON names its interpreter.
        import os
        import gen_rounding_goldens
        pythons = [sys.executable] + list(filter(None, [os.environ.get("RELUGRAD_TORCH_OLD_PYTHON")]))
        for py in pythons:
            if gen_rounding_goldens.main(["--python", py, "--out", str(out)]) != 0:
                return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

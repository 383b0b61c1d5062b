"""Golden vectors for thresholds on rounding boundaries (rounding_cases.py),
from the PyTorch of any Python interpreter, under tests/golden/rounding:

    .venv/bin/python python/compat/gen_rounding_goldens.py                     # .venv's torch
    .venv/bin/python python/compat/gen_rounding_goldens.py --python /tmp/venv-t113/bin/python

Torch runs in the given interpreter (a subprocess); this process checks every
case against relugrad bit for bit and stops on a mismatch, then writes
rounding/manifest.tsv (the columns of gen_goldens.py; paths relative to
tests/golden, read by tests/golden/golden_test.cc and python/tests/test_goldens.py).
Rows of other torch versions are kept, so each version's run adds its own.
Cases the op refuses (PyTorch 1.13 has no f16 threshold kernel on the CPU)
are listed in rounding/unsupported.tsv."""
from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import relugrad  # noqa: E402
from cases import DTYPES  # noqa: E402
from gen_goldens import COLUMNS  # noqa: E402
from nan_compare import same_bits  # noqa: E402
import rounding_cases  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent


def as_dtype(bits: np.ndarray, dtype: str) -> np.ndarray:
    return bits.view(DTYPES[dtype])


def run_torch(python: str) -> list:
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run([python, str(HERE / "rounding_cases.py"), "--out", tmp], check=True)
        return rounding_cases.load_runs(Path(tmp))


def check(r: dict) -> bool:
    dy, s, want = (as_dtype(r[k], r["dtype"]) for k in ("dy", "s", "dx"))
    overrides = dict(kv.split("=") for kv in r["overrides"].split(",") if "=" in kv)
    got = relugrad.relu_grad(dy, s, semantics="torch", threshold=r["threshold"], **overrides)
    return same_bits(want, got, "exact")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--python", default=sys.executable, help="interpreter whose torch is run")
    ap.add_argument("--out", default=str(ROOT / "tests" / "golden"))
    args = ap.parse_args(argv)
    golden = Path(args.out)
    base = golden / "rounding"
    runs = run_torch(args.python)
    version = runs[0]["version"]
    failures = [f"{r['op']} {r['dtype']} t={r['threshold']!r}" for r in runs if "dx" in r and not check(r)]
    if failures:
        print("gen_rounding_goldens: relugrad disagrees with torch " + version + " on:\n  " +
              "\n  ".join(failures), file=sys.stderr)
        return 1
    rows, unsupported = [], []
    manifest, refused = base / "manifest.tsv", base / "unsupported.tsv"
    for path, keep in ((manifest, rows), (refused, unsupported)):
        if path.exists():
            lines = path.read_text().splitlines()
            header = lines[0].split("\t")
            keep.extend(r for r in (dict(zip(header, ln.split("\t"))) for ln in lines[1:] if ln)
                        if r["version"] != version)
    data = base / "data" / f"torch-{version}"
    if data.exists():
        for f in sorted(data.rglob("*.npy")):
            f.unlink()
    for r in runs:
        cid = f"torch.threshold_rounding.{version}.{r['op']}.{r['dtype']}.{r['index']}"
        if "error" in r:
            unsupported.append(dict(id=cid, version=version, op=r["op"], dtype=r["dtype"],
                                    threshold=repr(r["threshold"]), error=r["error"]))
            continue
        files = {}
        for key in ("dy", "s", "dx"):
            rel = Path("rounding") / "data" / f"torch-{version}" / r["op"] / f"{r['dtype']}.{r['index']}.{key}.npy"
            (golden / rel).parent.mkdir(parents=True, exist_ok=True)
            arr = r[key] if r["dtype"] == "bf16" else as_dtype(r[key], r["dtype"])
            np.save(golden / rel, arr, allow_pickle=False)
            files[key] = str(rel)
        rows.append(dict(id=cid, framework="torch", version=version, device="cpu",
                         op=f"torch.{r['op']}", preset="torch", overrides=r["overrides"], dtype=r["dtype"],
                         threshold=repr(float(r["threshold"])), n=str(r["dy"].size), nan_policy="exact", **files))
    rows.sort(key=lambda r: r["id"])
    base.mkdir(parents=True, exist_ok=True)
    manifest.write_text("\t".join(COLUMNS) + "\n" + "".join("\t".join(r[c] for c in COLUMNS) + "\n" for r in rows))
    ucols = ["id", "version", "op", "dtype", "threshold", "error"]
    refused.write_text("\t".join(ucols) + "\n" + "".join("\t".join(u[c] for c in ucols) + "\n"
                                                          for u in sorted(unsupported, key=lambda u: u["id"])))
    print(f"gen_rounding_goldens: torch {version}: {sum(r['version'] == version for r in rows)} cases, "
          f"{sum(u['version'] == version for u in unsupported)} refused by torch")
    return 0


if __name__ == "__main__":
    sys.exit(main())

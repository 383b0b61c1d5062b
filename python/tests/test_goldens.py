"""relugrad against the golden vectors produced by real frameworks
(tests/golden/manifest.tsv, and rounding/manifest.tsv: thresholds on rounding
boundaries from PyTorch 2.15 and 1.13.1); no framework needed."""
import csv
from pathlib import Path

import numpy as np
import pytest

import relugrad
import frameworks
from cases import DTYPES
from nan_compare import same_bits

GOLDEN = Path(__file__).resolve().parents[2] / "tests" / "golden"


def rows(name="manifest.tsv"):
    path = GOLDEN / name
    if not path.exists():
        return []
    with open(path) as f:
        return list(csv.DictReader(f, delimiter="\t"))


def load(rel, dtype):
    a = np.load(GOLDEN / rel, allow_pickle=False)
    return a.view(DTYPES[dtype]) if dtype == "bf16" else a


def test_manifest_present_with_three_frameworks():
    frameworks = {r["framework"] for r in rows()}
    assert {"torch", "tensorflow", "jax"} <= frameworks, frameworks


def test_rounding_boundaries_present():
    versions = {(r["version"], r["op"], r["dtype"]) for r in rows("rounding/manifest.tsv")}
    for want in (("2.15.0", "torch.threshold_backward", "bf16"), ("2.15.0", "torch.threshold_backward.t_full", "f16"),
                 ("1.13.1", "torch.threshold_backward", "bf16")):
        assert want in versions, want


@pytest.mark.parametrize("row", rows() + rows("rounding/manifest.tsv"), ids=lambda r: r["id"])
def test_golden(row):
    dy, s, want = (load(row[k], row["dtype"]) for k in ("dy", "s", "dx"))
    assert dy.dtype == DTYPES[row["dtype"]] and dy.size == int(row["n"])
    overrides = frameworks.option_values(kv.split("=") for kv in row["overrides"].split(",") if "=" in kv)
    got = relugrad.relu_grad(dy, s, semantics=row["preset"], threshold=float(row["threshold"]), **overrides)
    assert same_bits(want, got, row["nan_policy"]), f"{row['id']} ({row['framework']} {row['version']})"

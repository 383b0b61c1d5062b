"""The preset list of the Python layer against the C ABI, and the
"mindspore" preset (RELUGRAD_PRESET_MINDSPORE): pass_if_gt + select, IEEE."""
import csv
from pathlib import Path

import numpy as np
import pytest

import relugrad
import numpy_formulas
from cases import DTYPES, THRESHOLDS, random_case, special_case, to_bits
from nan_compare import same_bits

GOLDEN = Path(__file__).resolve().parents[2] / "tests" / "golden"


def test_every_python_preset_is_known_to_the_c_abi():
    assert relugrad.PRESETS == ("torch", "tensorflow", "jax", "onednn", "mindspore",
                                "cann_relugrad", "cann_relugrad_v2", "cann_threshold_grad", "cann_relugrad_v2_hp")
    for name in relugrad.PRESETS:
        assert set(relugrad.preset_settings(name)) == {"gate", "combine", "denormals", "threshold_rounding"}


def test_mindspore_preset_settings():
    assert relugrad.preset_settings("mindspore") == {
        "gate": "pass_if_gt", "combine": "select", "denormals": "ieee", "threshold_rounding": "compute"}
    assert relugrad.preset_settings("mindspore") == dict(numpy_formulas.PRESETS["mindspore"])


@pytest.mark.parametrize("dtype", list(DTYPES))
@pytest.mark.parametrize("threshold", THRESHOLDS)
def test_mindspore_equals_jax_with_ieee_denormals(dtype, threshold):
    # What the goldens used before the preset existed ("jax" + denormals=ieee).
    for dy, s in (special_case(dtype), random_case(dtype, n=4099)):
        a = relugrad.relu_grad(dy, s, semantics="mindspore", threshold=threshold)
        b = relugrad.relu_grad(dy, s, semantics="jax", threshold=threshold, denormals="ieee")
        assert np.array_equal(to_bits(a), to_bits(b))


def _mindspore_rows():
    path = GOLDEN / "manifest.tsv"
    if not path.exists():
        return []
    with open(path) as f:
        return [r for r in csv.DictReader(f, delimiter="\t") if r["framework"] == "mindspore"]


@pytest.mark.parametrize("row", _mindspore_rows(), ids=lambda r: r["id"])
def test_mindspore_goldens_with_the_preset_alone(row):
    # MindSpore 2.10 CPU's recorded output, reproduced by the preset with no override.
    assert row["preset"] == "mindspore" and row["overrides"] == "-"
    dy, s, want = (np.load(GOLDEN / row[k], allow_pickle=False) for k in ("dy", "s", "dx"))
    got = relugrad.relu_grad(dy, s, semantics="mindspore", threshold=float(row["threshold"]))
    assert same_bits(want, got, row["nan_policy"])


def test_unknown_preset_lists_mindspore():
    with pytest.raises(ValueError, match="mindspore"):
        relugrad.relu_grad(np.ones(2, np.float32), np.ones(2, np.float32), semantics="caffe")

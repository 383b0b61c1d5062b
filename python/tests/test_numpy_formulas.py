"""relugrad vs NumPy formulas (numpy_formulas.py), element by element, bit
for bit: every dtype x preset on special values and random data, several
thresholds, alpha, clip and the per-setting overrides."""
import numpy as np
import pytest

import relugrad
import numpy_formulas
from cases import DTYPES, THRESHOLDS, random_case, special_case, to_bits
from compare import mismatches

PRESETS = ("torch", "tensorflow", "jax", "onednn", "mindspore")


def check(dy, s, **kw):
    want = numpy_formulas.relu_grad(dy, s, **kw)
    got = relugrad.relu_grad(dy, s, **kw)
    assert got.dtype == dy.dtype and got.shape == dy.shape
    diff = mismatches(dy, s, want, got)
    assert not diff, f"{kw}: " + "\n".join(diff)
    ref = relugrad.relu_grad_reference(dy, s, **kw)
    assert np.array_equal(to_bits(ref), to_bits(got))


@pytest.mark.parametrize("dtype", list(DTYPES))
@pytest.mark.parametrize("semantics", PRESETS)
@pytest.mark.parametrize("threshold", THRESHOLDS)
def test_special_values(dtype, semantics, threshold):
    dy, s = special_case(dtype)
    check(dy, s, semantics=semantics, threshold=threshold)


@pytest.mark.parametrize("dtype", list(DTYPES))
@pytest.mark.parametrize("semantics", PRESETS)
def test_random(dtype, semantics):
    dy, s = random_case(dtype, n=100_003, seed=7)
    check(dy, s, semantics=semantics)


@pytest.mark.parametrize("dtype", list(DTYPES))
@pytest.mark.parametrize("semantics", PRESETS)
@pytest.mark.parametrize("alpha", [0.5, -0.1, 3.0])
def test_alpha(dtype, semantics, alpha):
    dy, s = special_case(dtype)
    check(dy, s, semantics=semantics, alpha=alpha)


@pytest.mark.parametrize("dtype", list(DTYPES))
@pytest.mark.parametrize("semantics", PRESETS)
def test_clip(dtype, semantics):
    dy, s = special_case(dtype)
    check(dy, s, semantics=semantics, clip=(-0.75, 2.0))


@pytest.mark.parametrize("dtype", list(DTYPES))
@pytest.mark.parametrize("gate", ["zero_if_le", "pass_if_gt"])
@pytest.mark.parametrize("combine", ["select", "multiply"])
@pytest.mark.parametrize("denormals", ["ieee", "ftz_daz"])
@pytest.mark.parametrize("threshold_rounding", ["compute", "dtype"])
def test_every_setting(dtype, gate, combine, denormals, threshold_rounding):
    dy, s = special_case(dtype)
    check(dy, s, threshold=0.1, gate=gate, combine=combine, denormals=denormals,
          threshold_rounding=threshold_rounding)


def test_preset_table_matches_library():
    # The NumPy oracle's table is written from the measurements; the library's
    # presets must say the same.
    for name in PRESETS:
        assert relugrad.preset_settings(name) == numpy_formulas.PRESETS[name], name


@pytest.mark.parametrize("dtype", ["bf16", "f16", "f32", "f64"])
@pytest.mark.parametrize("threshold_rounding", ["compute", "dtype"])
def test_thresholds_and_clip_bounds_on_rounding_boundaries(dtype, threshold_rounding):
    # Both oracles convert a scalar for a 16-bit type through f32, as PyTorch does.
    import rounding_cases
    for t in rounding_cases.BOUNDARY_THRESHOLDS[dtype]:
        dy_bits, s_bits = rounding_cases.boundary_case(dtype, t)
        dy, s = dy_bits.view(DTYPES[dtype]), s_bits.view(DTYPES[dtype])
        check(dy, s, threshold=t, threshold_rounding=threshold_rounding)
        check(s, np.ones_like(s), clip=(t, 6e4))
        check(s, np.ones_like(s), clip=(-6e4, t))

"""The CANN presets against NumPy formulas re-derived from the Ascend ops-nn
sources (python/compat/cann_formulas.py; docs/ascend.md "CANN's semantics"):
bits exact, except NaN payloads of bf16 results (the formulas' f32 -> bf16
cast, ml_dtypes', drops them, and the sources leave them to the NPU's cast:
compared by class there), and the documented disagreement between CANN
ReluGrad's kernel and its golden script (NaN gates)."""
import numpy as np
import pytest

import cann_formulas
import relugrad
from cases import random_case, special_case, tiled, to_bits
from compare import mismatches
from nan_compare import same_bits

CANN_DTYPES = ("f32", "f16", "bf16")  # the operators' floating types (no f64)


def cases(dtype):
    yield special_case(dtype)
    yield tuple(tiled(a, 4099) for a in special_case(dtype))  # vector bodies, ragged tail
    yield random_case(dtype, n=3001, seed=7)


def policy(dtype):
    return "class" if dtype == "bf16" else "exact"


def expect(want, got, dy, s, what, nan="exact"):
    assert same_bits(want, got, nan), what + "\n" + "\n".join(mismatches(dy, s, want, got))


@pytest.mark.parametrize("dtype", CANN_DTYPES)
def test_cann_relugrad_is_the_kernel_graph(dtype):
    for dy, s in cases(dtype):
        got = relugrad.relu_grad(dy, s, semantics="cann_relugrad")
        expect(cann_formulas.relu_grad_kernel(dy, s), got, dy, s, "kernel", policy(dtype))


@pytest.mark.parametrize("dtype", CANN_DTYPES)
def test_cann_relugrad_golden_script_differs_only_at_nan_gates(dtype):
    # golden.py follows TensorFlow (features > 0): a NaN gate is closed there
    # and open in the kernel, which the preset follows.
    for dy, s in cases(dtype):
        got = relugrad.relu_grad(dy, s, semantics="cann_relugrad")
        golden = cann_formulas.relu_grad_golden(dy, s)
        keep = ~np.isnan(s)
        expect(golden[keep], got[keep], dy[keep], s[keep], "golden off NaN gates", policy(dtype))
        nan_gate_finite_dy = np.isnan(s) & np.isfinite(dy) & (dy != 0)
        if nan_gate_finite_dy.any():
            assert np.array_equal(to_bits(got[nan_gate_finite_dy]), to_bits(dy[nan_gate_finite_dy]))
            assert not np.any(golden[nan_gate_finite_dy])


@pytest.mark.parametrize("dtype", CANN_DTYPES)
def test_cann_relugrad_v2_forward_mask_and_backward_are_the_goldens(dtype):
    for _, x in cases(dtype):
        dy = x[::-1].copy()
        y, mask = relugrad.relu_forward(x, semantics="cann_relugrad_v2")
        want_y, want_mask = cann_formulas.relu_v2_golden(x)
        assert np.array_equal(np.asarray(mask), want_mask), "ReluV2 mask"  # np.packbits(x > 0, "little")
        expect(want_y, y, x, x, "ReluV2 y")
        got = relugrad.relu_grad_mask(dy, mask, semantics="cann_relugrad_v2")
        expect(cann_formulas.relu_grad_v2_golden(dy, want_mask), got, dy, x, "ReluGradV2 from the mask")
        # The same rule from the gate itself.
        expect(cann_formulas.relu_grad_v2_golden(dy, want_mask),
               relugrad.relu_grad(dy, x, semantics="cann_relugrad_v2"), dy, x, "ReluGradV2 from s")


def test_cann_relugrad_v2_hp_multiplies_in_f32():
    for _, x in cases("f32"):
        dy = x[::-1].copy()
        mask = cann_formulas.relu_v2_golden(x)[1]
        want = cann_formulas.relu_grad_v2_hp(dy, mask)
        expect(want, relugrad.relu_grad_mask(dy, mask, semantics="cann_relugrad_v2_hp"), dy, x, "hp from the mask")
        expect(want, relugrad.relu_grad(dy, x, semantics="cann_relugrad_v2_hp"), dy, x, "hp from s")
    # Where it differs from the select of cann_relugrad_v2: dy*0 on a closed gate.
    dy = np.array([-3.0, np.inf, np.nan], np.float32)
    s = np.array([-1.0, -1.0, -1.0], np.float32)
    assert to_bits(relugrad.relu_grad(dy, s, semantics="cann_relugrad_v2")).tolist() == [0, 0, 0]
    hp = to_bits(relugrad.relu_grad(dy, s, semantics="cann_relugrad_v2_hp")).tolist()
    assert hp[0] == 0x80000000 and np.isnan(relugrad.relu_grad(dy, s, semantics="cann_relugrad_v2_hp")[1:]).all()


@pytest.mark.parametrize("dtype", CANN_DTYPES)
@pytest.mark.parametrize("threshold", [0.0, 1.0, 0.1, -1.5, 1 + 2 ** -8 + 2 ** -40, -1e-40])
def test_cann_threshold_grad_selects_in_f32(dtype, threshold):
    for dy, s in cases(dtype):
        got = relugrad.relu_grad(dy, s, semantics="cann_threshold_grad", threshold=threshold)
        expect(cann_formulas.threshold_grad_golden(dy, s, threshold), got, dy, s, f"t={threshold!r}", policy(dtype))


def test_cann_presets_settings():
    assert relugrad.preset_settings("cann_relugrad") == dict(
        gate="zero_if_le", combine="multiply", denormals="ieee", threshold_rounding="compute")
    assert relugrad.preset_settings("cann_relugrad_v2") == dict(
        gate="pass_if_gt", combine="select", denormals="ieee", threshold_rounding="compute")
    assert relugrad.preset_settings("cann_threshold_grad") == dict(
        gate="zero_if_le", combine="select", denormals="ieee", threshold_rounding="compute")
    assert relugrad.preset_settings("cann_relugrad_v2_hp") == dict(
        gate="pass_if_gt", combine="multiply", denormals="ieee", threshold_rounding="compute")


def test_cann_formulas_can_fail():
    # The formulas are not the presets themselves: each pair disagrees on
    # some input class (so the tests above can catch a wrong preset).
    dy, s = special_case("f32")
    assert not same_bits(cann_formulas.relu_grad_kernel(dy, s), relugrad.relu_grad(dy, s, semantics="torch"), "exact")
    assert not same_bits(cann_formulas.relu_grad_golden(dy, s),
                         relugrad.relu_grad(dy, s, semantics="cann_relugrad"), "exact")
    mask = cann_formulas.relu_v2_golden(s)[1]
    assert not same_bits(cann_formulas.relu_grad_v2_golden(dy, mask),
                         relugrad.relu_grad(dy, s, semantics="cann_relugrad"), "exact")

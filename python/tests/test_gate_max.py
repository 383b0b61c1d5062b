"""relu_grad's gate_max keyword (the upper gate bound of hardtanh_backward).

The non-live tests hold relugrad to hand-written bits and to its own scalar
reference; the live ones run torch.ops.aten.hardtanh_backward now and compare
bits: NaN-free gates, where PyTorch's scalar and vector loops agree, and
NaN gates in the two forms relugrad reproduces exactly (docs/semantics.md)."""

import numpy as np
import pytest

import relugrad

NAN, INF = float("nan"), float("inf")


def test_relu6_f32_bits_by_hand():
    s = np.array([-1.0, -0.0, 0.0, 1e-45, 3.0, 6.0, np.nextafter(np.float32(6), np.float32(0)), 7.0,
                  INF, -INF, NAN], dtype=np.float32)
    dy = np.full_like(s, 2.0)
    dx = relugrad.relu_grad(dy, s, threshold=0.0, gate_max=6.0)
    want = np.array([0, 0, 0, 2, 2, 0, 2, 0, 0, 0, 2], dtype=np.float32)
    assert dx.view(np.uint32).tolist() == want.view(np.uint32).tolist()
    ref = relugrad.relu_grad_reference(dy, s, threshold=0.0, gate_max=6.0)
    assert ref.view(np.uint32).tolist() == want.view(np.uint32).tolist()
    # pass_if_gt closes the NaN gate, as PyTorch's vectorised loop does.
    closed = relugrad.relu_grad(dy, s, threshold=0.0, gate_max=6.0, gate="pass_if_gt")
    assert closed[-1] == 0 and closed[4] == 2


def test_no_bound_is_the_default():
    s = np.array([INF, 1e30], dtype=np.float32)
    dy = np.ones_like(s)
    assert relugrad.relu_grad(dy, s).tolist() == [1.0, 1.0]
    assert relugrad.relu_grad(dy, s, gate_max=None).tolist() == [1.0, 1.0]
    assert relugrad.relu_grad(dy, s, gate_max=INF).tolist() == [1.0, 1.0]


@pytest.mark.parametrize("bad", [NAN, 0.0, -1.0])
def test_bad_bounds_are_value_errors(bad):
    s = np.ones(3, dtype=np.float32)
    with pytest.raises(ValueError, match="gate_max"):
        relugrad.relu_grad(s, s, gate_max=bad)


def test_gate_max_type_is_checked():
    s = np.ones(3, dtype=np.float32)
    with pytest.raises(TypeError, match="gate_max"):
        relugrad.relu_grad(s, s, gate_max="6")


torch = pytest.importorskip("torch")
DTYPES = [torch.float32, torch.float64, torch.bfloat16, torch.float16]
BOUNDS = [(0.0, 6.0), (-1.0, 1.0), (-0.5, 0.1), (-1.0, 0.0),
          (-1.0, 1.0 + 2.0 ** -8 + 2.0 ** -40),   # bf16 rounding boundary (a tie through f32)
          (-1.0, 1.0 + 2.0 ** -11 + 2.0 ** -40),  # f16 rounding boundary
          (-3.0, 1e-40)]                          # a subnormal bound in f32


def _ints(t):
    return t.contiguous().view({2: torch.int16, 4: torch.int32, 8: torch.int64}[t.element_size()])


def _gates(dtype, lo, hi, n=4099, seed=0):
    """NaN-free gates: random values, the bounds and their neighbours, +-0, +-inf, subnormals."""
    g = torch.Generator().manual_seed(seed)
    s = (torch.randn(n, generator=g, dtype=torch.float64) * 4).to(dtype)
    edge = torch.tensor([lo, hi, 0.0, -0.0, INF, -INF, 1e-40, -1e-40, 5e-324], dtype=torch.float64).to(dtype)
    near = torch.cat([edge, torch.nextafter(edge, torch.full_like(edge, INF)),
                      torch.nextafter(edge, torch.full_like(edge, -INF))])
    s[: near.numel() * 3] = near.repeat(3)
    s = s[~torch.isnan(s)]
    dy = torch.randn(s.numel(), generator=g, dtype=torch.float64).to(dtype)
    return dy, s


@pytest.mark.live
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("lo,hi", BOUNDS)
def test_matches_torch_hardtanh_backward(dtype, lo, hi):
    dy, s = _gates(dtype, lo, hi)
    want = torch.ops.aten.hardtanh_backward(dy, s, lo, hi)
    got = relugrad.relu_grad(dy, s, threshold=lo, gate_max=hi)
    assert torch.equal(_ints(got), _ints(want))


@pytest.mark.live
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_nan_gates_follow_torch_loop_forms(dtype):
    """A NaN gate is open in PyTorch's scalar loop (short tensors) and closed
    in its vector loop: the torch preset and pass_if_gt reproduce each."""
    dy = torch.full((7,), 1.5, dtype=dtype)
    s = torch.tensor([NAN, -NAN, 1.0, 7.0, NAN, 0.0, NAN], dtype=dtype)
    scalar_form = torch.ops.aten.hardtanh_backward(dy, s, 0.0, 6.0)
    assert torch.equal(_ints(relugrad.relu_grad(dy, s, gate_max=6.0)), _ints(scalar_form))
    dy = torch.full((64,), 1.5, dtype=dtype)
    s = torch.ones(64, dtype=dtype)
    s[::3] = NAN
    vector_form = torch.ops.aten.hardtanh_backward(dy, s, 0.0, 6.0)
    got = relugrad.relu_grad(dy, s, gate_max=6.0, gate="pass_if_gt")
    assert torch.equal(_ints(got), _ints(vector_form))

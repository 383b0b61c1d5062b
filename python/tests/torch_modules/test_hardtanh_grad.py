"""relugrad.torch.hardtanh_grad against aten::hardtanh_backward: gradient bits and strides,
every dtype, NCHW and channels_last, gating on the input or on the output; gates at the bounds,
+-0, +-inf and subnormals (NaN gates are where PyTorch's own CPU loops disagree:
docs/semantics.md). There is no relugrad Hardtanh / ReLU6 module (replace_relu leaves
nn.Hardtanh / nn.ReLU6 as torch's): the kernel is for direct callers."""
import pytest
import torch

import relugrad.torch as rt
from torch_helpers import bits

DTYPES = [torch.float32, torch.float64, torch.bfloat16, torch.float16]


def _inputs(dtype, fmt, lo, hi, seed=0):
    g = torch.Generator().manual_seed(seed)
    x = (torch.randn(2, 3, 5, 7, generator=g, dtype=torch.float64) * 4)
    flat = x.view(-1)
    flat[::11] = hi
    flat[1::13] = lo
    flat[2::17] = 0.0
    flat[3::19] = -0.0
    flat[4::23] = float("inf")
    flat[5::29] = -float("inf")
    flat[6::31] = 1e-40
    x = x.to(dtype).contiguous(memory_format=fmt)
    dy = torch.randn(x.shape, generator=g, dtype=torch.float64).to(dtype).contiguous(memory_format=fmt)
    return x, dy


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("fmt", [torch.contiguous_format, torch.channels_last], ids=["nchw", "nhwc"])
@pytest.mark.parametrize("gate_on", ["input", "output"])
@pytest.mark.parametrize("lo,hi", [(0.0, 6.0), (-1.0, 1.0), (-0.5, 0.1), (-0.3, 0.7)],
                         ids=["relu6", "hardtanh", "hardtanh_0.1", "hardtanh_0.7"])
def test_bits_and_strides_match_torch(dtype, fmt, gate_on, lo, hi):
    x, dy = _inputs(dtype, fmt, lo, hi)
    s = x if gate_on == "input" else torch.nn.functional.hardtanh(x, lo, hi)
    want = torch.ops.aten.hardtanh_backward(dy, s, lo, hi)
    got = rt.hardtanh_grad(dy, s, lo, hi)
    assert torch.equal(bits(got), bits(want)) and got.stride() == want.stride()
    closed = (bits(got) == 0) & (bits(want) == 0)
    assert closed.any() and (~closed).any()  # both sides of the gate were exercised


def test_mixed_layouts_take_hardtanh_backwards_strides():
    x, _ = _inputs(torch.float32, torch.channels_last, 0.0, 6.0)
    dy = torch.randn(x.shape)  # contiguous dy, channels_last s
    want = torch.ops.aten.hardtanh_backward(dy, x, 0.0, 6.0)
    got = rt.hardtanh_grad(dy, x, 0.0, 6.0)
    assert torch.equal(bits(got), bits(want)) and got.stride() == want.stride()


def test_the_bound_reaches_the_kernel():
    """A gate at max_val is closed: relugrad's plain ReLU would pass it."""
    s = torch.tensor([3.0, 6.0, 7.0])
    assert rt.hardtanh_grad(torch.ones(3), s, 0.0, 6.0).tolist() == [1.0, 0.0, 0.0]


def test_there_is_no_relugrad_hardtanh_module():
    assert not hasattr(rt, "Hardtanh") and not hasattr(rt, "ReLU6")

"""relugrad.torch.Hardtanh / ReLU6 against nn.Hardtanh / nn.ReLU6: forward and
gradient bits and strides, every dtype, NCHW and channels_last, in place or
not; gates at the bounds, +-0, +-inf and subnormals (NaN gates are where
PyTorch's own CPU loops disagree: docs/semantics.md)."""
import pytest
import torch
from torch import nn

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


def _run(module, x0, dy, inplace):
    x = x0.clone().requires_grad_(True)
    y = module(x * 1) if inplace else module(x)
    y.backward(dy)
    return y.detach(), x.grad


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("fmt", [torch.contiguous_format, torch.channels_last], ids=["nchw", "nhwc"])
@pytest.mark.parametrize("inplace", [False, True], ids=["out", "inplace"])
@pytest.mark.parametrize("make", [
    (lambda ip: nn.ReLU6(inplace=ip), lambda ip: rt.ReLU6(inplace=ip), 0.0, 6.0),
    (lambda ip: nn.Hardtanh(-1.0, 1.0, ip), lambda ip: rt.Hardtanh(-1.0, 1.0, ip), -1.0, 1.0),
    # bounds inexact in bf16/f16: in place, PyTorch gates on the input, not the clamped result
    (lambda ip: nn.Hardtanh(-0.5, 0.1, ip), lambda ip: rt.Hardtanh(-0.5, 0.1, ip), -0.5, 0.1),
    (lambda ip: nn.Hardtanh(-0.3, 0.7, ip), lambda ip: rt.Hardtanh(-0.3, 0.7, ip), -0.3, 0.7),
], ids=["relu6", "hardtanh", "hardtanh_0.1", "hardtanh_0.7"])
def test_bits_and_strides_match_torch(dtype, fmt, inplace, make):
    theirs, ours, lo, hi = make
    x, dy = _inputs(dtype, fmt, lo, hi)
    y_want, g_want = _run(theirs(inplace), x, dy, inplace)
    y_got, g_got = _run(ours(inplace), x, dy, inplace)
    assert torch.equal(bits(y_got), bits(y_want)) and y_got.stride() == y_want.stride()
    assert torch.equal(bits(g_got), bits(g_want)) and g_got.stride() == g_want.stride()
    closed = (bits(g_got) == 0) & (bits(g_want) == 0)
    assert closed.any() and (~closed).any()  # both sides of the gate were exercised


def test_mixed_layouts_take_hardtanh_backwards_strides():
    x, _ = _inputs(torch.float32, torch.channels_last, 0.0, 6.0)
    dy = torch.randn(x.shape)  # contiguous dy, channels_last s
    want = torch.ops.aten.hardtanh_backward(dy, x, 0.0, 6.0)
    got = rt.hardtanh_grad(dy, x, 0.0, 6.0)
    assert torch.equal(bits(got), bits(want)) and got.stride() == want.stride()


def test_the_bound_reaches_the_kernel():
    """A gate at max_val is closed: relugrad's plain ReLU would pass it."""
    x = torch.tensor([3.0, 6.0, 7.0], requires_grad=True)
    rt.ReLU6()(x).backward(torch.ones(3))
    assert x.grad.tolist() == [1.0, 0.0, 0.0]


def test_no_grad_forward_is_torchs_hardtanh():
    x = torch.randn(100) * 8
    assert torch.equal(rt.Hardtanh(-2.0, 3.0)(x), torch.nn.functional.hardtanh(x, -2.0, 3.0))


@pytest.mark.parametrize("lo,hi", [(1.0, 1.0), (2.0, 1.0), (float("nan"), 1.0)])
def test_empty_range_is_refused(lo, hi):
    with pytest.raises(ValueError, match="max_val"):
        rt.Hardtanh(lo, hi)


def test_repr_matches_torch():
    assert repr(rt.ReLU6(inplace=True)) == "ReLU6(inplace=True)"
    assert repr(rt.Hardtanh(-2.0, 3.0)) == "Hardtanh(min_val=-2.0, max_val=3.0)"



class _ResidualBlock(nn.Module):
    def __init__(self, act):
        super().__init__()
        torch.manual_seed(0)
        self.lin, self.act = nn.Linear(4, 4), act

    def forward(self, x):
        out = self.act(self.lin(x))
        out += x  # in place on the activation's output
        return out


@pytest.mark.parametrize("stock_act,our_act", [
    (nn.ReLU6(inplace=True), rt.ReLU6(inplace=True)),
    (nn.Hardtanh(-0.5, 0.7, inplace=True), rt.Hardtanh(-0.5, 0.7, inplace=True))], ids=["relu6", "hardtanh"])
def test_in_place_keeps_the_input_as_stock_so_later_in_place_ops_on_the_output_train(stock_act, our_act):
    grads = []
    for act in (stock_act, our_act):
        block = _ResidualBlock(act)
        x = torch.randn(3, 4, generator=torch.Generator().manual_seed(1)) * 4
        block(x).sum().backward()
        grads.append(block.lin.weight.grad)
    assert torch.equal(bits(grads[0]), bits(grads[1]))


def test_in_place_gate_reads_the_input_through_a_lossy_saved_tensor_hook():
    """A hook that rounds saved tensors to bf16: the gate reads the rounded input, as stock's."""
    grads = []
    for act in (nn.Hardtanh(-0.5, 0.7, inplace=True), rt.Hardtanh(-0.5, 0.7, inplace=True)):
        x = torch.tensor([-0.6, 0.1, 0.69, 0.9], requires_grad=True)
        with torch.autograd.graph.saved_tensors_hooks(lambda t: t.to(torch.bfloat16), lambda t: t.float()):
            y = act(x * 1)
        y.sum().backward()
        grads.append(x.grad)
    assert torch.equal(grads[0], grads[1])

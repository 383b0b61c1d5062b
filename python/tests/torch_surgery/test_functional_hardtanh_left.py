"""The functional scope of replace_relu(functional=True) leaves F.relu6, F.hardtanh and
F.hardtanh_ to torch under every preset (relugrad has no hardtanh node that is bit-exact at most
stock's time): forward and gradient bits equal to the stock model's, the scope serving none of
these calls, and torch's own errors for bounds torch refuses."""
import copy

import pytest
import torch
import torch.nn.functional as F
from torch import nn

import relugrad.torch as rt
from relugrad.torch.surgery import functional_scope
from torch_helpers import bits

DTYPES = [torch.float32, torch.float64, torch.bfloat16, torch.float16]


class Functional(nn.Module):
    """Every spelling the scope serves: relu6 (in place or not), hardtanh with positional and
    keyword bounds, hardtanh_ with default bounds."""

    def __init__(self):
        super().__init__()
        self.a, self.b = nn.Linear(12, 16), nn.Linear(16, 12)

    def forward(self, x):
        h = F.relu6(self.a(x) * 4)
        h = F.hardtanh(h - 3, -2.0, 2.5) + F.hardtanh(h, min_val=-0.5, max_val=1.5, inplace=False)
        h = F.relu6(h * 3, inplace=True)
        h = F.hardtanh_(self.b(h))
        return h


def _special(x):
    flat = x.view(-1)
    flat[::7] = 0.0
    flat[1::11] = -0.0
    flat[2::13] = 1.0
    flat[3::17] = -1.0
    return x


def _step(model, x, dy):
    x = x.clone().requires_grad_(True)
    y = model(x)
    y.backward(dy)
    return y.detach(), x.grad, [p.grad for p in model.parameters()]


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_functional_hardtanh_and_relu6_are_torchs_bit_identical_to_stock(dtype):
    torch.manual_seed(0)
    stock = Functional().to(dtype)
    ours = rt.replace_relu(copy.deepcopy(stock), functional=True)
    scope = functional_scope(ours)
    x = _special(torch.randn(6, 12, dtype=torch.float64)).to(dtype)
    dy = torch.randn(6, 12, dtype=torch.float64).to(dtype)
    want, got = _step(stock, x, dy), _step(ours, x, dy)
    assert scope.served == 0  # two relu6, two hardtanh, one hardtanh_: all torch's
    assert torch.equal(bits(want[0]), bits(got[0]))
    assert torch.equal(bits(want[1]), bits(got[1]))
    for a, b in zip(want[2], got[2]):
        assert torch.equal(bits(a), bits(b))


def test_not_served_under_other_presets_or_torch_func():
    torch.manual_seed(1)
    stock = Functional()
    x = torch.randn(3, 12)
    tf = rt.replace_relu(copy.deepcopy(stock), semantics="tensorflow", functional=True)
    tf(x.requires_grad_(True))
    assert functional_scope(tf).served == 0
    ours = rt.replace_relu(copy.deepcopy(stock), functional=True)
    params = {k: v.detach() for k, v in ours.named_parameters()}
    g = torch.func.grad(lambda p: torch.func.functional_call(ours, p, (x.detach(),)).sum())(params)
    want = torch.func.grad(lambda p: torch.func.functional_call(stock, p, (x.detach(),)).sum())(params)
    assert all(torch.equal(bits(g[k]), bits(want[k])) for k in g)
    assert functional_scope(ours).served == 0


@pytest.mark.parametrize("call", [lambda h: F.hardtanh(h, 2.0, 1.0), lambda h: F.hardtanh(h, 1.0, 1.0),
                                  lambda h: F.hardtanh(h, -1.0, 1.0, False, 3)],
                         ids=["min>max", "min==max", "too many arguments"])
def test_calls_the_scope_does_not_serve_behave_as_torch(call):
    class M(nn.Module):
        def forward(self, x):
            return call(x)

    x = torch.randn(4, requires_grad=True)
    try:
        want = call(x)
    except Exception as e:  # torch's own error, raised the same through the scope
        with pytest.raises(type(e)):
            rt.replace_relu(M(), functional=True)(x)
        return
    model = rt.replace_relu(M(), functional=True)
    assert torch.equal(model(x), want)
    assert functional_scope(model).served == 0


@pytest.mark.parametrize("cls", [nn.ReLU6, lambda: nn.Hardtanh(-0.5, 2.0)], ids=["ReLU6", "Hardtanh"])
def test_left_hardtanh_modules_under_torch_func_are_stock(cls):
    # torch.func and forward AD get torch's hardtanh: the module is left as it was.
    torch.manual_seed(2)
    stock = nn.Sequential(nn.Linear(6, 8), cls(), nn.Linear(8, 3))
    ours = rt.replace_relu(copy.deepcopy(stock))
    assert type(ours[1]) is type(stock[1])
    params = {k: v.detach() for k, v in ours.named_parameters()}
    x = _special(torch.randn(5, 6)) * 3

    def loss(model):
        return lambda p, xb: torch.func.functional_call(model, p, (xb,)).square().sum()

    want, got = torch.func.grad(loss(stock))(params, x), torch.func.grad(loss(ours))(params, x)
    assert all(torch.equal(bits(want[k]), bits(got[k])) for k in want)
    want = torch.func.vmap(torch.func.grad(loss(stock)), in_dims=(None, 0))(params, x)
    got = torch.func.vmap(torch.func.grad(loss(ours)), in_dims=(None, 0))(params, x)
    assert all(torch.equal(bits(want[k]), bits(got[k])) for k in want)
    import torch.autograd.forward_ad as fwAD
    t = torch.randn(5, 6)
    with fwAD.dual_level():
        a = fwAD.unpack_dual(stock(fwAD.make_dual(x, t))).tangent
        b = fwAD.unpack_dual(ours(fwAD.make_dual(x, t))).tangent
    assert torch.equal(bits(a), bits(b))

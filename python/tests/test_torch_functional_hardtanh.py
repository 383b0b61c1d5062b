"""The functional scope of replace_relu(functional=True) serves F.relu6, F.hardtanh and
F.hardtanh_ under the torch preset: relugrad's Hardtanh (hardtanh_backward's gradient by the
gate_max kernel), forward and gradient bits equal to the stock model's; everything the scope
does not serve (other presets, torch.func, bounds torch refuses) is torch's own call."""
import copy

import pytest
import torch
import torch.nn.functional as F
from torch import nn

import relugrad.torch as rt
from relugrad._replace import functional_scope
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
def test_functional_hardtanh_and_relu6_bit_identical_to_stock(dtype):
    torch.manual_seed(0)
    stock = Functional().to(dtype)
    ours = rt.replace_relu(copy.deepcopy(stock), functional=True)
    scope = functional_scope(ours)
    x = _special(torch.randn(6, 12, dtype=torch.float64)).to(dtype)
    dy = torch.randn(6, 12, dtype=torch.float64).to(dtype)
    want, got = _step(stock, x, dy), _step(ours, x, dy)
    assert scope.served == 5  # two relu6, two hardtanh, one hardtanh_
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
    assert functional_scope(tf).served == 0  # hardtanh_backward is PyTorch's op: torch preset only
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

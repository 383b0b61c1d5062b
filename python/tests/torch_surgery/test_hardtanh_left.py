"""replace_relu / restore_relu on ReLU6 and Hardtanh: relugrad has no hardtanh node that is
bit-exact at most stock's time, so every nn.ReLU6 / nn.Hardtanh is left as torch's, listed in the
report with that reason; being no ReLUs they neither warn nor make strict=True raise. On a
MobileNetV2-style network (inverted residual blocks with ReLU6(inplace=True)) the gradients stay
bit-identical to the untouched model, and hooks stay where they were."""
import copy
import warnings

import pytest
import torch
from torch import nn

from relugrad.torch import ReplaceError, replace_relu, restore_relu
from relugrad.torch.surgery import HARDTANH_LEFT
from torch_helpers import bits


class PlainReLU6(nn.ReLU6):  # no forward of its own: replaceable
    pass


class ClampReLU6(nn.ReLU6):
    def forward(self, x):
        return super().forward(x) * 0.5


def _block(cin, cout, expand):
    hidden = cin * expand
    return nn.Sequential(
        nn.Conv2d(cin, hidden, 1, bias=False), nn.BatchNorm2d(hidden), nn.ReLU6(inplace=True),
        nn.Conv2d(hidden, hidden, 3, padding=1, groups=hidden, bias=False), nn.BatchNorm2d(hidden),
        nn.ReLU6(inplace=True), nn.Conv2d(hidden, cout, 1, bias=False), nn.BatchNorm2d(cout))


def _mobilenet_like():
    torch.manual_seed(0)
    return nn.Sequential(nn.Conv2d(3, 8, 3, stride=2, padding=1, bias=False), nn.BatchNorm2d(8), nn.ReLU6(inplace=True),
                         _block(8, 8, 4), _block(8, 16, 6), nn.Conv2d(16, 32, 1), nn.Hardtanh(-2.0, 2.0),
                         nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(32, 10))


def _grads(model, x):
    model.zero_grad()
    xr = x.clone().requires_grad_(True)
    model(xr).square().sum().backward()
    return [xr.grad] + [p.grad for p in model.parameters()]


@pytest.mark.parametrize("fmt", [torch.contiguous_format, torch.channels_last], ids=["nchw", "nhwc"])
def test_mobilenet_like_every_relu6_left_with_the_reason_and_gradients_bit_identical(fmt):
    ref = _mobilenet_like().to(memory_format=fmt)
    model = copy.deepcopy(ref)
    model, report = replace_relu(model, return_report=True)
    n_relu6 = sum(isinstance(m, nn.ReLU6) for m in ref.modules())
    assert n_relu6 == 5
    assert sum(type(m) is nn.ReLU6 for m in model.modules()) == n_relu6
    assert sum(type(m) is nn.Hardtanh for m in model.modules()) == 1
    assert report.replaced == []
    assert [(e.kind, e.detail) for e in report.left] == [("ReLU6", HARDTANH_LEFT)] * 5 + [("Hardtanh", HARDTANH_LEFT)]
    x = torch.randn(2, 3, 16, 16).contiguous(memory_format=fmt)
    for want, got in zip(_grads(ref, x), _grads(model, x)):
        assert torch.equal(bits(got), bits(want))


def test_subclasses_strict_and_other_presets():
    model = nn.Sequential(PlainReLU6(), ClampReLU6(), nn.Hardtanh(-1.0, 3.0, inplace=True), nn.ReLU())
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # left hardtanh modules give no warning
        got = replace_relu(copy.deepcopy(model), strict=True)  # nor make strict raise
    assert type(got[0]) is PlainReLU6 and type(got[1]) is ClampReLU6 and type(got[2]) is nn.Hardtanh
    got, report = replace_relu(model, return_report=True)
    assert type(got[0]) is PlainReLU6 and type(got[1]) is ClampReLU6 and type(got[2]) is nn.Hardtanh
    assert [e.name for e in report.left] == ["0", "1", "2"]
    assert all(e.detail == HARDTANH_LEFT for e in report.left)
    for semantics in ("jax", "tensorflow"):
        kept, report = replace_relu(nn.Sequential(nn.ReLU6()), semantics=semantics, return_report=True)
        assert type(kept[0]) is nn.ReLU6 and report.left[0].detail == HARDTANH_LEFT
    with pytest.raises(ReplaceError, match="overrides forward"):  # strict still concerns ReLUs

        class ClampReLU(nn.ReLU):
            def forward(self, x):
                return super().forward(x) * 0.5

        replace_relu(nn.Sequential(ClampReLU(), nn.ReLU6()), strict=True)


def test_hooks_stay_and_restore_leaves_the_stock_modules():
    model = nn.Sequential(nn.Linear(4, 4), nn.ReLU6(inplace=True), nn.Hardtanh(-0.5, 0.5))
    relu6, hardtanh = model[1], model[2]
    seen = []
    handle = model[1].register_forward_hook(lambda m, i, o: seen.append(type(m).__name__))
    model.eval()
    replace_relu(model)
    assert model[1] is relu6 and model[2] is hardtanh and not model[1].training
    model(torch.randn(2, 4))
    assert seen == ["ReLU6"]
    model, report = restore_relu(model, return_report=True)
    assert model[1] is relu6 and model[2] is hardtanh and report.replaced == []
    handle.remove()
    model(torch.randn(2, 4))
    assert seen == ["ReLU6"]
    # A model that is itself a ReLU6 stays itself.
    m = nn.ReLU6()
    assert replace_relu(m) is m and restore_relu(m) is m

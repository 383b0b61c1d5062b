"""replace_relu / restore_relu on ReLU6 and Hardtanh: what is replaced and left (with the
report and strict), hooks kept, gradients bit-identical to the untouched model on a
MobileNetV2-style network (inverted residual blocks with ReLU6(inplace=True)), and
restore_relu giving the stock modules back."""
import copy

import pytest
import torch
from torch import nn

import relugrad.torch as rt
from relugrad import _hardtanh
from relugrad._replace import ReplaceError, replace_relu, restore_relu
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
def test_mobilenet_like_every_relu6_replaced_and_gradients_bit_identical(fmt):
    ref = _mobilenet_like().to(memory_format=fmt)
    model = copy.deepcopy(ref)
    model, report = replace_relu(model, return_report=True)
    n_relu6 = sum(isinstance(m, nn.ReLU6) for m in ref.modules())
    assert n_relu6 == 5
    assert sum(isinstance(m, _hardtanh.ReLU6) for m in model.modules()) == n_relu6
    assert not any(type(m) in (nn.ReLU6, nn.Hardtanh) for m in model.modules())
    assert [e.detail for e in report.replaced].count("relugrad ReLU6") == n_relu6
    assert [e.detail for e in report.replaced].count("relugrad Hardtanh") == 1
    assert report.left == []
    x = torch.randn(2, 3, 16, 16).contiguous(memory_format=fmt)
    for want, got in zip(_grads(ref, x), _grads(model, x)):
        assert torch.equal(bits(got), bits(want))


def test_subclasses_strict_and_other_presets():
    model = nn.Sequential(PlainReLU6(), ClampReLU6(), nn.Hardtanh(-1.0, 3.0, inplace=True))
    with pytest.raises(ReplaceError, match="overrides forward"):
        replace_relu(copy.deepcopy(model), strict=True)
    got, report = replace_relu(model, return_report=True)
    assert isinstance(got[0], rt.ReLU6) and type(got[1]) is ClampReLU6
    assert isinstance(got[2], rt.Hardtanh) and (got[2].min_val, got[2].max_val, got[2].inplace) == (-1.0, 3.0, True)
    assert [e.name for e in report.left] == ["1"]
    kept, report = replace_relu(nn.Sequential(nn.ReLU6()), semantics="jax", return_report=True)
    assert type(kept[0]) is nn.ReLU6 and "semantics='torch' only" in report.left[0].detail


def test_hooks_are_kept_and_restore_gives_the_stock_modules_back():
    model = nn.Sequential(nn.Linear(4, 4), nn.ReLU6(inplace=True), nn.Hardtanh(-0.5, 0.5))
    seen = []
    handle = model[1].register_forward_hook(lambda m, i, o: seen.append(type(m).__name__))
    model.eval()
    replace_relu(model)
    assert isinstance(model[1], rt.ReLU6) and not model[1].training
    model(torch.randn(2, 4))
    assert seen == ["ReLU6"] and type(model[1]) is rt.ReLU6
    model, report = restore_relu(model, return_report=True)
    assert type(model[1]) is nn.ReLU6 and model[1].inplace and not model[1].training
    assert type(model[2]) is nn.Hardtanh and (model[2].min_val, model[2].max_val) == (-0.5, 0.5)
    assert len(report.replaced) == 2
    model(torch.randn(2, 4))
    assert seen == ["ReLU6", "ReLU6"]
    handle.remove()
    model(torch.randn(2, 4))
    assert len(seen) == 2
    # A model that is itself a ReLU6.
    assert isinstance(replace_relu(nn.ReLU6()), rt.ReLU6)
    assert type(restore_relu(rt.ReLU6())) is nn.ReLU6

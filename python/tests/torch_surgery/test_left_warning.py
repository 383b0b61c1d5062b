"""replace_relu never leaves ReLUs silently: when anything relu-like is left, one ReplaceWarning
gives the count, the reason and the fix, unless the caller asked for the report (return_report)
or for an error (strict=True)."""
import copy
import warnings

import pytest

torch = pytest.importorskip("torch")
import torch.nn.functional as F  # noqa: E402
from torch import nn  # noqa: E402

import relugrad.torch as rt  # noqa: E402


class ConvRelu(nn.Module):
    """torchvision's BasicConv2d pattern: the relu is a functional call in forward."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(2, 2, 1)

    def forward(self, x):
        return F.relu(self.conv(x), inplace=True)


class ClampReLU(nn.ReLU):
    def forward(self, x):
        return super().forward(x).clamp(max=1.0)


def _functional_model(n=3):
    return nn.Sequential(*[ConvRelu() for _ in range(n)])


def test_functional_relus_left_give_one_warning_with_count_reason_and_fix():
    with pytest.warns(rt.ReplaceWarning) as record:
        rt.replace_relu(_functional_model(3))
    assert len(record) == 1
    message = str(record[0].message)
    assert "left 3 relu-like entries" in message
    assert "3 modules calling relu functionally: pass functional=True" in message


def test_each_reason_counted_once():
    model = nn.Sequential(_functional_model(2), ClampReLU(), ClampReLU(), nn.ReLU())
    with pytest.warns(rt.ReplaceWarning) as record:
        rt.replace_relu(model)
    assert len(record) == 1
    message = str(record[0].message)
    assert "left 4 relu-like entries" in message
    assert "2 modules calling relu functionally: pass functional=True" in message
    assert "2 ClampReLU: overrides forward" in message


@pytest.mark.parametrize("how", ["return_report", "strict", "functional", "nothing_left"])
def test_no_warning_where_the_caller_asked_or_nothing_is_left(how):
    model = _functional_model(2)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        if how == "return_report":
            _, report = rt.replace_relu(model, return_report=True)
            assert len(report.left) == 2
        elif how == "strict":
            with pytest.raises(rt.ReplaceError, match="functional relu"):
                rt.replace_relu(model, strict=True)
        elif how == "functional":
            rt.replace_relu(model, functional=True)
        else:
            rt.replace_relu(nn.Sequential(nn.Linear(2, 2), nn.ReLU(), nn.ReLU6()))


def test_googlenet_says_its_57_functional_relus_are_left():
    torchvision = pytest.importorskip("torchvision")
    model = torchvision.models.googlenet(weights=None, aux_logits=False, init_weights=False)
    with pytest.warns(rt.ReplaceWarning, match="57 modules calling relu functionally: pass functional=True"):
        rt.replace_relu(copy.deepcopy(model))
    _, report = rt.replace_relu(model, functional=True, return_report=True)
    assert report.left == []

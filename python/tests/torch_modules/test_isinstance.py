"""relugrad's ReLU is a subclass of torch's: code that finds a model's
activations by isinstance (guided backpropagation's hooks, activation counters, a user's own
replacement pass) finds them where it found stock's, and the model then computes what the stock
model computes under the same code."""
import copy

import pytest

torch = pytest.importorskip("torch", reason="PyTorch is not installed in this environment")
from torch import nn  # noqa: E402

import relugrad.torch as rt  # noqa: E402
from torch_helpers import bits  # noqa: E402


def cnn():
    return nn.Sequential(nn.Conv2d(3, 6, 3), nn.ReLU(), nn.Conv2d(6, 6, 3), nn.ReLU6(), nn.Flatten(),
                         nn.Linear(6 * 4 * 4, 10), nn.ReLU(), nn.Hardtanh(-2.0, 2.0), nn.Linear(10, 3))


def test_relugrad_activations_are_torchs_classes():
    assert isinstance(rt.ReLU(), nn.ReLU) and isinstance(rt.ReLU(mask=True, semantics="jax"), nn.ReLU)


def test_a_second_replace_leaves_relugrads_modules_alone():
    model, report = rt.replace_relu(cnn(), return_report=True)
    # The ReLU6 and the Hardtanh stay torch's (listed as left: relugrad has no hardtanh node).
    assert len(report.replaced) == 2 and [e.name for e in report.left] == ["3", "7"]
    kinds = [type(m) for m in model]
    model, report = rt.replace_relu(model, return_report=True)
    assert report.replaced == [] and [e.name for e in report.left] == ["3", "7"]
    assert [type(m) for m in model] == kinds


def guided_input_gradient(model, x):
    """Guided backpropagation as attribution libraries write it: every nn.ReLU found by
    isinstance passes only positive gradients back."""
    handles = [m.register_full_backward_hook(lambda m, gin, gout: (gin[0].clamp(min=0.0),))
               for m in model.modules() if isinstance(m, nn.ReLU)]
    x = x.clone().requires_grad_()
    model(x)[:, 1].sum().backward()
    for h in handles:
        h.remove()
    return x.grad


@pytest.mark.parametrize("mask", [False, True])
def test_guided_backpropagation_finds_the_relus_and_gives_stocks_bits(mask):
    torch.manual_seed(0)
    stock = cnn()
    ours = rt.replace_relu(copy.deepcopy(stock), mask=mask)
    x = torch.randn(2, 3, 8, 8)
    for _ in range(2):  # with mask=True: the probe step, then a decided one
        want, got = guided_input_gradient(stock, x), guided_input_gradient(ours, x)
        assert torch.equal(bits(want), bits(got))
    plain = x.clone().requires_grad_()
    stock(plain)[:, 1].sum().backward()
    assert not torch.equal(plain.grad, want)  # the hooks changed the gradient: the case tests something


def test_a_users_own_replacement_pass_finds_them():
    torch.manual_seed(0)
    stock = cnn()
    ours = rt.replace_relu(copy.deepcopy(stock))
    for model in (stock, ours):
        for name, m in list(model.named_children()):
            if isinstance(m, nn.ReLU):
                setattr(model, name, nn.GELU())
    x = torch.randn(2, 3, 8, 8)
    assert sum(isinstance(m, nn.GELU) for m in ours) == sum(isinstance(m, nn.GELU) for m in stock) == 2
    assert torch.equal(bits(stock(x)), bits(ours(x)))

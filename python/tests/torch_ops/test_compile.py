"""torch.compile with inductor: in the torch preset a compiled model with relugrad is the graph
compiled stock gives (relugrad::relu decomposed to aten.relu, the backward emitted as
threshold_backward), bit for bit; the other presets and the mask path stay opaque custom ops that
run relugrad's kernels."""
import copy

import pytest

torch = pytest.importorskip("torch")
from torch import nn  # noqa: E402

import relugrad.torch as rt  # noqa: E402
import relugrad  # noqa: E402
from relugrad.torch import testing  # noqa: E402
from torch_helpers import bits  # noqa: E402

# The methods of relugrad.Plan that run kernels: every kernel call of the package goes through one.
KERNELS = ("__call__", "run_host", "reference")


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.a, self.b, self.c = nn.Linear(16, 32), nn.Linear(32, 32), nn.Linear(32, 4)
        self.relu, self.relu_ = nn.ReLU(), nn.ReLU(inplace=True)

    def forward(self, x):
        return self.c(self.relu_(self.b(self.relu(self.a(x)))))


def run(model, x):
    """(output, every parameter gradient) of one forward + backward."""
    model.zero_grad(set_to_none=True)
    y = model(x)
    y.square().sum().backward()
    return y.detach(), [p.grad.clone() for p in model.parameters()]


def same_bits(want, got):
    return want[0].shape == got[0].shape and torch.equal(bits(want[0]), bits(got[0])) and all(
        torch.equal(bits(a), bits(b)) for a, b in zip(want[1], got[1]))


def test_inductor_sees_through_the_torch_preset_and_keeps_the_others_opaque(monkeypatch):
    calls = []
    for name in KERNELS:
        real = getattr(relugrad.Plan, name)
        monkeypatch.setattr(relugrad.Plan, name, lambda *a, _real=real, _name=name: calls.append(_name) or _real(*a))
    torch._dynamo.reset()
    torch.manual_seed(0)
    stock = Net()
    x = torch.randn(8, 16)
    x[0, :4] = -0.0
    want = run(torch.compile(stock), x)
    assert calls == []
    for semantics, mask in (("torch", False), ("tensorflow", False), ("torch", True)):
        ours = rt.replace_relu(copy.deepcopy(stock), semantics=semantics)
        if mask:  # every ReLU on the mask path (replace_relu(mask=True) keeps y here: each Linear saves it)
            for m in ours.modules():
                if isinstance(m, rt.ReLU):
                    m.mask = True
        eager = run(ours, x)
        del calls[:]
        got = run(torch.compile(ours), x)
        if semantics == "torch" and not mask:
            # No relugrad kernel ran: inductor compiled torch's own relu and threshold_backward.
            assert calls == [], f"the torch preset still called relugrad's kernels: {calls}"
            assert same_bits(want, got), "compiled relugrad differs from compiled stock"
        else:
            # Opaque custom ops: relugrad's kernels ran, with the eager bits.
            assert calls, f"{semantics}, mask={mask}: no relugrad kernel ran under compile"
            assert same_bits(eager, got), f"{semantics}, mask={mask}: compiled differs from eager"
    # The torch preset compiles as torch.relu itself; the tensorflow preset's relugrad::relu made
    # inductor's table decompose the op (for graphs that record it: export, captured graphs).
    assert rt.ops._inductor_sees_through


class RecordsExporting(nn.Module):
    def __init__(self, seen):
        super().__init__()
        self.seen = seen

    def forward(self, x):
        self.seen.append(testing.is_exporting())
        return x + 1


def test_the_export_check_is_false_under_compile_and_true_under_export():
    # The module takes its captured-graph path (relugrad::relu, no mask) when this is True: under
    # torch.compile it must be False, or mask=True would keep y in every compiled model (dynamo
    # of torch 2.11 folded torch.compiler.is_exporting() itself to True in any trace).
    torch._dynamo.reset()
    compiled, exported = [], []
    torch.compile(RecordsExporting(compiled), backend="eager")(torch.randn(3))
    torch.export.export(RecordsExporting(exported), (torch.randn(3),))
    assert compiled and not any(compiled), compiled
    assert exported and all(exported), exported
    assert testing.is_exporting() is False  # eager


class InPlaceNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.relu_ = nn.ReLU(inplace=True)

    def forward(self, x, w):
        return (self.relu_(x * 1.0) * w).sum()  # x * 1.0: a non-leaf, and dx = dy * 1 keeps -0


def test_inplace_relu_under_inductor_keeps_negative_zero_gradients():
    # w holds -0: open lanes receive a -0 gradient, which stock's threshold_backward passes on
    # as -0. A copy of an out-of-place result into x would add the old x's zero gradient (+0).
    torch._dynamo.reset()
    torch.manual_seed(1)
    stock = InPlaceNet()
    x = torch.randn(4, 8, requires_grad=True)
    w = torch.randn(4, 8)
    w[:, ::2] = -0.0
    ours = rt.replace_relu(copy.deepcopy(stock))

    def grads(model):
        x.grad = None
        torch.compile(model)(x, w).backward()
        return [x.grad.clone()]

    want, got = grads(stock), grads(ours)
    assert (bits(want[0]) == bits(torch.tensor(-0.0))).any(), "the case must reach a -0 gradient"
    for a, b in zip(want, got):
        assert torch.equal(bits(a), bits(b))

"""Activation memory users can bank on: ReLUDropout (nn.ReLU + nn.Dropout fused, two bits per
element kept) against stock bit for bit, and replace_relu(mask=True)'s per-ReLU mask decision,
one case per kind of consumer."""
import copy
import math
import warnings

import pytest

torch = pytest.importorskip("torch", reason="PyTorch is not installed in this environment")
import torch.nn.functional as F  # noqa: E402
from torch import nn  # noqa: E402

import relugrad.torch as rt  # noqa: E402
from relugrad.torch import mask_probe, testing  # noqa: E402
from relugrad.torch import ReLUDropout  # noqa: E402
from relugrad.torch import fusion  # noqa: E402
from relugrad.torch.fusion import FusingSequential  # noqa: E402
from relugrad.torch.surgery import functional_scope  # noqa: E402
from torch_helpers import bits, values  # noqa: E402

DTYPES = [torch.float32, torch.float64, torch.bfloat16, torch.float16]
SPECIAL = [float("nan"), float("inf"), -float("inf"), -1.5, -0.0, 0.0, 2.0, float("nan")]


def saved(fn):
    """(bytes of the distinct storages autograd saves while fn() runs, their dtypes, fn())."""
    storages, dtypes = {}, []

    def pack(t):
        s = t.untyped_storage()
        storages[s.data_ptr()] = s.nbytes()
        dtypes.append(t.dtype)
        return t

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        out = fn()
    return sum(storages.values()), dtypes, out


def run(fn, x0, dy, seed):
    x = x0.clone().requires_grad_()
    torch.manual_seed(seed)
    y = fn(x)
    y.backward(dy)
    return y.detach(), x.grad, torch.rand(4)  # the last: the generator's state after the step


def stock_relu_dropout(p):
    return lambda x: F.dropout(torch.relu(x), p, True)


@pytest.fixture(params=["native", "composition"])
def backward_path(request):
    """Runs a test through each path of ReLUDropout: the one-pass C++ forward and backward node
    (float32/float64 in C order) and the composition of torch's ops with relugrad's mask kernels
    (every dtype and layout)."""
    if request.param == "native":
        if not rt.NATIVE:
            pytest.skip(f"the torch-native library is not loaded: {rt.NATIVE_STATUS}")
        yield request.param
    else:
        with rt.use_native(False, entries=("relu_dropout",)):
            yield request.param


def fused_node(x, p=0.5):
    """The name of the backward node ReLUDropout(p) records for x."""
    node = ReLUDropout(p)(x.detach().clone().requires_grad_()).grad_fn
    # A Python Function's node has no name() before torch 2.15: its class name serves.
    return type(node).__name__ if isinstance(node, torch.autograd.function.BackwardCFunction) else node.name()


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("p", [0.1, 0.5, 0.9])
def test_fused_equals_stock_bit_for_bit(dtype, p, backward_path):
    # x with +0, -0, NaN (values), inf; dy with NaN, +-inf, negatives, -0: a dropped element's
    # gradient is dy * 0 in stock (NaN, -0...), not +0.
    x0 = values((33, 61), dtype, seed=1)
    x0[0, :3] = torch.tensor([float("inf"), -float("inf"), -0.0])
    dy = values((33, 61), dtype, seed=2)
    dy[1:, :8] = torch.tensor(SPECIAL, dtype=dtype)
    want = run(stock_relu_dropout(p), x0, dy, seed=5)
    got = run(ReLUDropout(p), x0, dy, seed=5)
    for a, b in zip(want, got):
        assert torch.equal(bits(a), bits(b))
    native = backward_path == "native" and dtype in (torch.float32, torch.float64)  # served where it can
    assert (fused_node(x0, p) == "relugrad::ReluDropoutBackward") == native


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("threads", [1, 2])
def test_fused_over_many_chunks_equals_stock(dtype, threads, backward_path):
    # 7 x 1001 elements: several of the C++ passes' 2048-element chunks and a ragged last one,
    # over one and two torch threads; the gradient made by an op (written over in place).
    old = torch.get_num_threads()
    torch.set_num_threads(threads)
    try:
        x0 = values((7, 1001), dtype, seed=21)
        x0.view(-1)[2040:2056] = torch.tensor(SPECIAL * 2, dtype=dtype)
        w = values((7, 1001), dtype, seed=22)
        w.view(-1)[4090:4100] = float("nan")
        results = []
        for fn in (stock_relu_dropout(0.3), ReLUDropout(0.3)):
            x = x0.clone().requires_grad_()
            torch.manual_seed(4)
            y = fn(x)
            (y * w).sum().backward()
            results.append((y.detach(), x.grad, torch.rand(3)))
        for a, b in zip(*results):
            assert torch.equal(bits(a), bits(b))
    finally:
        torch.set_num_threads(old)


@pytest.mark.parametrize("shape", [(), (0,), (2, 0, 3), (1,), (7,)])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_fused_empty_scalar_and_tiny_tensors_equal_stock(shape, dtype, backward_path):
    x0 = torch.randn(shape, dtype=dtype)
    results = []
    for fn in (stock_relu_dropout(0.5), ReLUDropout(0.5)):
        x = x0.clone().requires_grad_()
        torch.manual_seed(3)
        y = fn(x)
        y.backward(torch.full_like(y, 3.0))
        results.append((y.detach(), x.grad, torch.rand(2)))
    for a, b in zip(*results):
        assert a.shape == b.shape and torch.equal(bits(a), bits(b))


def test_fused_gradient_special_cases_are_not_plain_zero(backward_path):
    # The case the fused backward must not simplify: dropped, gate open, dy in {-1, inf, NaN}.
    x0 = torch.ones(4096)
    dy = torch.tensor([-1.0, float("inf"), float("nan"), 1.0]).repeat(1024)
    grad = run(ReLUDropout(0.5), x0, dy, seed=0)[1]
    dropped = run(stock_relu_dropout(0.5), x0, dy, seed=0)[0] == 0
    assert dropped.any()
    assert torch.equal(bits(grad[dropped & (dy == -1)]), bits(torch.full_like(grad[dropped & (dy == -1)], -0.0)))
    assert torch.isnan(grad[dropped & (dy.isinf() | dy.isnan())]).all()


def test_fused_noncontiguous_input_and_gradient(backward_path):
    x0 = values((40, 30), seed=3).t()  # dense, not contiguous
    dy = values((40, 30), seed=4).t().contiguous()
    for a, b in zip(run(stock_relu_dropout(0.3), x0, dy, 7), run(ReLUDropout(0.3), x0, dy, 7)):
        assert torch.equal(bits(a), bits(b)) and a.stride() == b.stride()


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_fused_gradient_in_any_layout_gets_stocks_layout_and_bits(dtype, backward_path):
    # A transposed, an expanded (sum's backward) and a channels_last gradient into the fused
    # node: stock's layout (mul, then threshold_backward) and bits.
    x0 = values((6, 10), dtype, seed=12)
    x4 = values((2, 3, 4, 5), dtype, seed=13)
    w = values((10, 6), dtype, seed=14)
    w4 = values((2, 3, 4, 5), dtype, seed=15).to(memory_format=torch.channels_last)
    losses = [(x0, lambda y: (y.t() * w).sum()), (x0, lambda y: y.sum()), (x4, lambda y: (y * w4).sum())]
    for x_in, loss in losses:
        grads = []
        for fn in (stock_relu_dropout(0.3), ReLUDropout(0.3)):
            x = x_in.clone().requires_grad_()
            torch.manual_seed(9)
            loss(fn(x)).backward()
            grads.append(x.grad)
        assert grads[0].stride() == grads[1].stride()
        assert torch.equal(bits(grads[0]), bits(grads[1]))


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_fused_create_graph_matches_stock(dtype, backward_path):
    x0 = values((5, 16), dtype, seed=16)
    x0[0, :4] = torch.tensor([-0.0, 0.0, float("nan"), float("inf")], dtype=dtype)
    results = []
    for fn in (stock_relu_dropout(0.25), ReLUDropout(0.25)):
        x = x0.clone().requires_grad_()
        torch.manual_seed(2)
        y = fn(x)
        dy = values(y.shape, dtype, seed=17).requires_grad_()
        g, = torch.autograd.grad(y, x, dy, create_graph=True)
        gg, = torch.autograd.grad((g * g).sum(), dy)
        results.append((g.detach(), gg))
    for a, b in zip(*results):
        assert torch.equal(bits(a), bits(b))


def test_fused_keeps_two_bit_planes():
    x = torch.randn(10, 1003, requires_grad=True)
    n = x.numel()
    nbytes, dtypes, _ = saved(lambda: ReLUDropout(0.1)(x))
    assert dtypes == [torch.uint8, torch.uint8] and nbytes == 2 * math.ceil(n / 8)
    nbytes, _, _ = saved(lambda: F.dropout(torch.relu(x), 0.1, True))
    assert nbytes == 2 * 4 * n  # stock on the CPU: y and the f32 noise


@pytest.mark.parametrize("case", ["eval", "no_grad", "p0", "p1", "no_requires_grad"])
def test_unfused_cases_equal_stock(case):
    p = {"p0": 0.0, "p1": 1.0}.get(case, 0.2)
    stock, ours = nn.Sequential(nn.ReLU(), nn.Dropout(p)), ReLUDropout(p)
    if case == "eval":
        stock.eval(), ours.eval()
    x = values((8, 50), seed=6).requires_grad_(case != "no_requires_grad")
    outs = []
    for m in (stock, ours):
        torch.manual_seed(3)
        if case == "no_grad":
            with torch.no_grad():
                outs.append((m(x), torch.rand(2)))
        else:
            y = m(x)
            outs.append((y.detach(), torch.rand(2)))
            if y.requires_grad:
                g, = torch.autograd.grad(y, x, torch.ones_like(y))
                outs[-1] += (g,)
    for a, b in zip(*outs):
        assert torch.equal(bits(a), bits(b))


def test_fused_double_backward_matches_stock():
    x0 = values((6, 20), torch.float64, seed=8)
    grads = []
    for fn in (stock_relu_dropout(0.4), ReLUDropout(0.4)):
        x = x0.clone().requires_grad_()
        torch.manual_seed(1)
        y = fn(x)
        dy = torch.randn_like(y, requires_grad=True)
        g, = torch.autograd.grad(y, x, dy, create_graph=True)
        gg, = torch.autograd.grad(g.sum(), dy)
        grads.append((g.detach(), gg))
    for a, b in zip(*grads):
        assert torch.equal(bits(a), bits(b))


def test_bad_p():
    with pytest.raises(ValueError, match="dropout probability"):
        ReLUDropout(1.5)


@pytest.mark.skipif(not rt.NATIVE, reason="the torch-native library is not loaded")
def test_native_entry_serves_only_contiguous_float32_float64():
    entry = testing.native_entries()["relu_dropout"]
    x = torch.ones(4, 6, requires_grad=True)
    assert entry(x.t(), 0.5) is NotImplemented
    assert entry(x.to(torch.bfloat16), 0.5) is NotImplemented
    assert entry(torch.ones(2, 3).to_sparse(), 0.5) is NotImplemented
    with pytest.raises(TypeError, match="takes 2 arguments"):
        entry(x)
    with pytest.raises(RuntimeError, match="p must be in"):
        entry(x, 1.0)
    # Served elsewhere by the composition, with stock's layout and bits.
    assert fused_node(x.t()) != "relugrad::ReluDropoutBackward"


def mlp_with_dropout():
    return nn.Sequential(nn.Linear(24, 64), nn.ReLU(), nn.Dropout(0.1), nn.Linear(64, 64), nn.ReLU(inplace=True),
                         nn.Dropout(0.3), nn.Linear(64, 5))


def train_steps(model, x, steps=2, seed=11):
    """Outputs and parameter gradients of `steps` training steps (SGD between them), one generator seed."""
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    torch.manual_seed(seed)
    record = []
    for _ in range(steps):
        opt.zero_grad()
        out = model(x) if not isinstance(x, tuple) else model(*x)
        out.square().mean().backward()
        record.append(out.detach())
        record += [p.grad.clone() for p in model.parameters()]
        opt.step()
    return record


def fused_passes(model, x):
    """How many ReLU + Dropout pairs one training forward of model ran as one pass."""
    with torch.profiler.profile() as prof:
        model(x)
    return sum(1 for e in prof.events() if e.name == "relugrad_native::relu_dropout")


def assert_same_training(stock, ours, x):
    for a, b in zip(train_steps(stock, x), train_steps(ours, x)):
        assert torch.equal(bits(a), bits(b))


def test_replace_relu_fuses_sequential_pairs_bit_for_bit():
    torch.manual_seed(0)
    stock = mlp_with_dropout()
    ours, report = rt.replace_relu(copy.deepcopy(stock), mask=True, return_report=True)
    # The modules stay (the Dropouts the same objects); their parent runs each pair as one pass.
    assert type(ours) is FusingSequential
    assert [type(m) for m in ours] == [nn.Linear, rt.ReLU, nn.Dropout, nn.Linear, rt.ReLU, nn.Dropout, nn.Linear]
    assert fusion.fused_pairs(ours) == ["1 + 2", "4 + 5"]
    assert "runs fused with the nn.Dropout 2" in str(report) and "runs fused with the nn.Dropout 5" in str(report)
    x = torch.randn(16, 24, requires_grad=True)
    assert fused_passes(ours, x) == 2
    assert_same_training(stock, ours, torch.randn(16, 24))
    back = rt.restore_relu(ours)
    assert type(back) is nn.Sequential and [type(m) for m in back] == [type(m) for m in stock]
    assert [(m.p, m.inplace) for m in back if isinstance(m, nn.Dropout)] == [(0.1, False), (0.3, False)]
    assert back[4].inplace


def test_replace_relu_without_mask_does_not_fuse():
    ours = rt.replace_relu(mlp_with_dropout())
    assert [type(m) for m in ours][1:3] == [rt.ReLU, nn.Dropout]


def test_pairs_with_hooks_or_other_dropouts_are_not_fused():
    stock = nn.Sequential(nn.Linear(8, 8), nn.ReLU(), nn.Dropout(0.1), nn.ReLU(), nn.AlphaDropout(0.1),
                          nn.ReLU(), nn.Dropout(0.2))
    stock[6].register_forward_hook(lambda m, i, o: None)
    ours = rt.replace_relu(copy.deepcopy(stock), mask=True)
    assert [type(m) for m in ours][1:] == [rt.ReLU, nn.Dropout, rt.ReLU, nn.AlphaDropout, rt.ReLU, nn.Dropout]
    # 1 + 2 runs fused; AlphaDropout is not a Dropout, and the hooked Dropout must see its input.
    assert fused_passes(ours, torch.randn(4, 8, requires_grad=True)) == 1


@pytest.mark.parametrize("cls", [nn.TransformerEncoderLayer, nn.TransformerDecoderLayer])
@pytest.mark.parametrize("activation", ["relu", "module"])
def test_transformer_layers_fuse_bit_for_bit(cls, activation):
    torch.manual_seed(0)
    stock = cls(16, 2, 48, dropout=0.1, batch_first=True, activation=nn.ReLU() if activation == "module" else "relu")
    ours = rt.replace_relu(copy.deepcopy(stock), mask=True, strict=True)
    assert isinstance(ours.activation, rt.ReLU) and type(ours.dropout) is nn.Dropout
    assert fusion.fused_pairs(ours) == ["activation + dropout"]
    assert functional_scope(ours) is None
    x = torch.randn(3, 7, 16)
    assert_same_training(stock, ours, x if cls is nn.TransformerEncoderLayer else (x, torch.randn(3, 5, 16)))
    back = rt.restore_relu(ours)
    assert type(back.dropout) is nn.Dropout
    assert (back.activation is F.relu) if activation == "relu" else (type(back.activation) is nn.ReLU)


def test_transformer_encoder_saves_less():
    torch.manual_seed(0)
    layer = nn.TransformerEncoderLayer(32, 2, 128, dropout=0.1, batch_first=True)
    stock = nn.TransformerEncoder(layer, 2, enable_nested_tensor=False)
    ours = rt.replace_relu(copy.deepcopy(stock), mask=True, strict=True)
    x = torch.randn(2, 10, 32)
    totals = []
    for m in (stock, ours):
        torch.manual_seed(4)
        nbytes, _, out = saved(lambda: m(x))
        out.sum().backward()
        totals.append(nbytes)
    n = 2 * 10 * 128  # elements of each layer's ReLU
    assert totals[0] - totals[1] == 2 * (2 * 4 * n - 2 * math.ceil(n / 8))


# ---- the per-ReLU mask decision: one case per kind of consumer ---------------------------------

class Add(nn.Module):
    """relu(x) + x: add keeps neither operand."""

    def __init__(self):
        super().__init__()
        self.lin, self.relu, self.out = nn.Linear(12, 12), nn.ReLU(), nn.Linear(12, 3)

    def forward(self, x):
        h = self.lin(x)
        return self.out(self.relu(h) + h)


class Sum(nn.Module):
    def forward(self, x):
        return x.sum(1, keepdim=True)


class Shared(nn.Module):
    """One ReLU module called twice: once into Linear (kept), once into an add (not)."""

    def __init__(self):
        super().__init__()
        self.a, self.relu, self.b = nn.Linear(12, 12), nn.ReLU(), nn.Linear(12, 3)

    def forward(self, x):
        h = self.relu(self.a(x))
        return self.b(h) + self.relu(x).sum(1, keepdim=True)


def conv(layer):
    return nn.Sequential(nn.Conv2d(2, 4, 3), nn.BatchNorm2d(4), nn.ReLU(), layer, nn.Flatten(), nn.LazyLinear(3))


CONSUMERS = {
    # name: (model, input, the ReLU's decision: mask kept (True) or y kept (False))
    "linear": (lambda: nn.Sequential(nn.Linear(12, 12), nn.ReLU(), nn.Linear(12, 3)), (5, 12), False),
    "conv": (lambda: conv(nn.Conv2d(4, 4, 3)), (2, 2, 9, 9), False),
    "batchnorm": (lambda: conv(nn.BatchNorm2d(4)), (2, 2, 9, 9), False),
    "maxpool": (lambda: conv(nn.MaxPool2d(2)), (2, 2, 9, 9), False),
    "avgpool": (lambda: conv(nn.AvgPool2d(2)), (2, 2, 9, 9), False),  # avg_pool2d saves its input
    "sum": (lambda: nn.Sequential(nn.Linear(12, 12), nn.ReLU(), Sum(), nn.Linear(1, 3)), (5, 12), True),
    "add": (Add, (5, 12), True),
    "alpha_dropout": (lambda: nn.Sequential(nn.Linear(12, 12), nn.ReLU(), nn.AlphaDropout(0.2), nn.Linear(12, 3)),
                      (5, 12), True),
    "model_output": (lambda: nn.Sequential(nn.Linear(12, 12), nn.ReLU()), (5, 12), False),
    "shared": (Shared, (5, 12), False),
}


@pytest.mark.parametrize("name", list(CONSUMERS))
def test_mask_decision_follows_what_the_graph_saves(name):
    make, shape, want_mask = CONSUMERS[name]
    torch.manual_seed(0)
    stock = make()
    stock(torch.randn(shape))  # LazyLinear's shape
    ours = rt.replace_relu(copy.deepcopy(stock), mask=True)
    relus = [m for m in ours.modules() if isinstance(m, rt.ReLU)]
    assert relus and not any(r.mask for r in relus)  # undecided: what stock keeps
    x = torch.randn(shape)
    sizes = []
    for m in (stock, ours, ours):  # stock, the probe step, a decided step
        torch.manual_seed(2)
        nbytes, _, out = saved(lambda: m(x))
        out.square().sum().backward()
        sizes.append(nbytes)
    assert [r.mask for r in relus] == [want_mask]
    assert list(mask_probe.decisions(ours).values()) == [
        "y is kept by nothing else: keeps the 1-bit mask" if want_mask
        else "y is kept by its consumer or the model's output: keeps y"]
    assert sizes[1] == sizes[0]  # the probe step keeps what stock keeps
    relu_bytes = 4 * math.prod(shape[:1]) * (12 if len(shape) == 2 else 4 * 7 * 7)
    assert sizes[2] == (sizes[0] - relu_bytes + math.ceil(relu_bytes / 4 / 8) if want_mask else sizes[0])
    assert_same_training(stock, ours, x)


def test_decision_waits_for_a_recorded_forward():
    torch.manual_seed(0)
    ours = rt.replace_relu(nn.Sequential(nn.Linear(4, 4), nn.ReLU(), nn.Identity()), mask=True)
    with torch.no_grad():
        ours(torch.randn(2, 4))
    assert mask_probe.decisions(ours) == {}
    ours(torch.randn(2, 4))
    assert mask_probe.decisions(ours) == {"1": "y is kept by its consumer or the model's output: keeps y"}  # the output


def test_a_relu_frozen_in_the_probe_step_keeps_y_and_never_costs_more_after_unfreezing():
    """The probe step runs with the first blocks frozen (their outputs need no gradient, so their
    consumers save nothing); once they train, each ReLU must not keep a mask on top of the y its
    consumer saves."""
    def phases(replace):
        torch.manual_seed(0)
        m = nn.Sequential(nn.Linear(64, 256), nn.ReLU(), nn.Linear(256, 256), nn.ReLU(), nn.Linear(256, 10))
        if replace:
            rt.replace_relu(m, mask=True)
        x = torch.randn(128, 64, generator=torch.Generator().manual_seed(1))
        m[:4].requires_grad_(False)
        m(x).square().mean().backward()
        m.requires_grad_(True)
        nbytes, _, out = saved(lambda: m(x))
        out.square().mean().backward()
        return nbytes, [p.grad for p in m.parameters()], m

    (stock_bytes, stock_grads, _), (our_bytes, our_grads, ours) = phases(False), phases(True)
    assert our_bytes <= stock_bytes
    assert all(torch.equal(bits(a), bits(b)) for a, b in zip(stock_grads, our_grads))
    assert set(mask_probe.decisions(ours).values()) == {
        "its output needed no gradient in the probe step: keeps y"}


def test_a_relu_whose_output_a_forward_hook_sees_keeps_y():
    """A forward hook may keep the output (a feature loss computed after the forward): the probe
    cannot see that, so the ReLU keeps y, and the step never keeps more than stock's."""
    def step(replace):
        torch.manual_seed(0)
        m = nn.Sequential(nn.Conv2d(3, 8, 3), nn.ReLU(), nn.AvgPool2d(2))
        if replace:
            rt.replace_relu(m, mask=True)
        feats = []
        m[1].register_forward_hook(lambda mod, args, out: feats.append(out))
        x = torch.randn(2, 3, 18, 18)
        total = 0
        for _ in range(2):
            feats.clear()
            def fwd():
                out = m(x)
                f = feats[0].flatten(2)
                return out.sum() + (f @ f.transpose(1, 2)).sum()
            total, _, loss = saved(fwd)
            loss.backward()
        return total, m

    (stock_bytes, _), (our_bytes, ours) = step(False), step(True)
    assert our_bytes <= stock_bytes
    assert mask_probe.decisions(ours) == {"1": "a forward hook sees its output (and may keep it): keeps y"}


def test_anomaly_mode_runs_stocks_two_nodes_and_raises_where_stock_does():
    """detect_anomaly checks each node's outputs for NaN; the fused node is one where stock has
    two, so anomaly mode runs the pair unfused: stock's error at the same place."""
    def run_step(replace):
        torch.manual_seed(0)
        m = nn.Sequential(nn.ReLU(), nn.Dropout(0.5))
        if replace:
            rt.replace_relu(m, mask=True)
            assert fusion.fused_pairs(m) == ["0 + 1"]
        x = torch.tensor([[-1.0, 1.0, 2.0, -3.0]], requires_grad=True)
        torch.manual_seed(1)
        y = m(x)
        try:
            y.backward(torch.full_like(y, float("nan")))
            return "ok"
        except RuntimeError as e:
            return str(e).splitlines()[0]

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # detect_anomaly's own notice
        with torch.autograd.detect_anomaly():
            stock, ours = run_step(False), run_step(True)
    assert stock.startswith("Function 'MulBackward0' returned nan values")
    assert ours == stock


@pytest.mark.parametrize("how", ["dropped", "retained_then_dropped"])
def test_a_probe_step_graph_dropped_without_backward_is_freed(how):
    """The probe's saved-tensor hooks must not tie a saved output to its own node: a probe-step
    graph dropped without a backward (a shape-initialising call, a validation pass with grad, a
    retained graph) is freed when its last reference goes, as stock's."""
    import gc
    import weakref

    model = rt.replace_relu(nn.Sequential(nn.Linear(16, 64), nn.ReLU(), nn.Linear(64, 4)), mask=True)
    kept = []
    model[1].register_forward_hook(lambda m, args, out: kept.append(weakref.ref(out)))
    out = model(torch.randn(8, 16))
    if how == "retained_then_dropped":
        out.sum().backward(retain_graph=True)
    del out
    gc.collect()
    assert kept and kept[0]() is None

"""replace_relu where a model's structure or its calls are not the plain case, each against the
stock model: Sequential and transformer subclasses with a forward of their own (never fused),
nn.ReLU subclasses with members of their own (left), the functional scope under no_grad (no mode:
torch's inference fast paths run), a forward that raises or is interrupted (the probe decides
nothing, the next forward closes what was left open), and the mask decided per training flag."""
import copy
import pickle

import pytest

torch = pytest.importorskip("torch")
import torch.nn.functional as F  # noqa: E402
from torch import nn  # noqa: E402

import relugrad.torch as rt  # noqa: E402
from relugrad.torch import mask_probe  # noqa: E402
from relugrad.torch import fusion  # noqa: E402
from relugrad.torch.surgery import functional_scope  # noqa: E402
from torch_helpers import bits  # noqa: E402


def saved_bytes(fn):
    """Bytes of the distinct storages autograd saves while fn() runs, and fn()."""
    storages = {}

    def pack(t):
        storages[t.untyped_storage().data_ptr()] = t.untyped_storage().nbytes()
        return t

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        out = fn()
    return sum(storages.values()), out


class TwiceSequential(nn.Sequential):
    """Its forward uses the first child's output twice: the children are not a chain."""

    def forward(self, x):
        h = self[0](x)
        return self[2](self[1](h)) + h.sum()


@pytest.mark.parametrize("options,middle", [({"fuse_linear": True}, nn.Identity),
                                            ({"mask": True}, lambda: nn.Dropout(0.5))],
                         ids=["fuse_linear", "mask_dropout"])
def test_a_sequential_with_a_forward_of_its_own_is_not_fused(options, middle):
    # Linear, ReLU, then Identity (the Linear + ReLU pair) or Dropout (the ReLU + Dropout pair).
    torch.manual_seed(0)
    stock = TwiceSequential(nn.Linear(6, 6), nn.ReLU(), middle())
    ours = rt.replace_relu(copy.deepcopy(stock), **options)
    assert type(ours) is TwiceSequential and fusion.fused_pairs(ours) == []
    x = torch.randn(5, 6)
    torch.manual_seed(3)
    want = stock(x)
    torch.manual_seed(3)
    got = ours(x)
    assert torch.equal(bits(want), bits(got))


class OwnFeedForward(nn.TransformerEncoderLayer):
    """A feed-forward block that uses dropout twice."""

    def _ff_block(self, x):
        return self.dropout(self.linear2(self.dropout(self.activation(self.linear1(x)))))


def test_a_transformer_layer_with_its_own_feed_forward_is_not_fused():
    layer = rt.replace_relu(OwnFeedForward(16, 2, 32, dropout=0.1, batch_first=True), mask=True)
    assert type(layer) is OwnFeedForward and fusion.fused_pairs(layer) == []
    plain = rt.replace_relu(nn.TransformerEncoderLayer(16, 2, 32, dropout=0.1, batch_first=True), mask=True)
    assert fusion.fused_pairs(plain) == ["activation + dropout"]  # the stock layer is


class TaggedReLU(nn.ReLU):
    tag = "act"

    def describe(self):
        return f"{self.tag}: relu"


class NoteReLU(nn.ReLU):
    def __init__(self):
        super().__init__()
        self.note = "kept"


class BareReLU(nn.ReLU):
    """A subclass that adds nothing: replaced."""


@pytest.mark.parametrize("cls", [TaggedReLU, NoteReLU])
def test_relu_subclasses_with_members_of_their_own_are_left(cls):
    model, report = rt.replace_relu(nn.Sequential(nn.Linear(2, 2), cls()), return_report=True)
    assert type(model[1]) is cls
    want = "a subclass with attributes or methods of its own, which ReLU would drop"
    assert [e.detail for e in report.left] == [want]


def test_a_relu_subclass_that_adds_nothing_is_replaced():
    model = rt.replace_relu(nn.Sequential(nn.Linear(2, 2), BareReLU(), nn.ReLU6()))
    assert type(model[1]) is rt.ReLU and type(model[2]) is nn.ReLU6  # ReLU6 stays torch's


class UsesFunctionalRelu(nn.Module):
    def __init__(self):
        super().__init__()
        self.layer = nn.TransformerEncoderLayer(16, 2, 32, dropout=0.0, batch_first=True)
        self.seen = []

    def forward(self, x):
        self.seen.append(torch._C._len_torch_function_stack())
        return F.relu(self.layer(x))


def test_the_functional_scope_enters_no_mode_without_grad():
    # An active mode alone turns off the inference fast paths of TransformerEncoderLayer and
    # MultiheadAttention (other kernels, other bits): under no_grad the scope enters none.
    torch.manual_seed(0)
    stock = UsesFunctionalRelu().eval()
    ours = rt.replace_relu(UsesFunctionalRelu().eval(), functional=True)
    ours.load_state_dict(stock.state_dict())
    x = torch.randn(2, 5, 16)
    with torch.no_grad():
        want, got = stock(x), ours(x)
    assert ours.seen == [0]
    assert torch.equal(bits(want), bits(got))
    got_grad = ours(x)  # with grad the scope serves F.relu
    assert ours.seen == [0, 1] and functional_scope(ours).served == 1
    assert torch.equal(bits(stock(x)), bits(got_grad))


class Stops(nn.Module):
    def __init__(self, error):
        super().__init__()
        self.error = error

    def forward(self, x):
        if self.error is not None:
            raise self.error
        return x


def _hooks_top():
    return torch._C._autograd._top_saved_tensors_default_hooks(False)


def test_an_interrupted_forward_leaves_nothing_open_after_the_next_call():
    # nn.Module calls always-called hooks only for an Exception: after a KeyboardInterrupt the
    # scope's mode stays open until the model's next forward (the probe adds no saved-tensor hooks).
    stop = Stops(KeyboardInterrupt())
    model = rt.replace_relu(nn.Sequential(nn.Linear(3, 3), nn.ReLU(), stop), semantics="tensorflow",
                            functional=True, mask=True)
    with pytest.raises(KeyboardInterrupt):
        model(torch.randn(2, 3))
    assert torch._C._len_torch_function_stack() == 1 and _hooks_top() is None  # the mode left open
    stop.error = None
    model(torch.randn(2, 3)).sum().backward()
    assert torch._C._len_torch_function_stack() == 0 and _hooks_top() is None
    assert mask_probe.decisions(model) == {"1": "y is kept by its consumer or the model's output: keeps y"}  # returned
    x = torch.tensor([float("nan"), 0.0, 1.0], requires_grad=True)
    F.relu(x).sum().backward()  # outside the model: torch's own relu again (NaN passes)
    assert x.grad.tolist() == [1.0, 0.0, 1.0]


def test_a_nested_call_of_the_same_model_is_not_taken_for_a_stale_one():
    class Recursive(nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = nn.Linear(3, 3)
            self.depth = 0

        def forward(self, x):
            self.depth += 1
            if self.depth == 1:
                x = self(x)  # the same model, inside its own forward
            return F.relu(self.lin(x))

    model = rt.replace_relu(Recursive(), functional=True)
    model(torch.randn(2, 3)).sum().backward()
    assert functional_scope(model).served == 2
    assert torch._C._len_torch_function_stack() == 0


def test_a_forward_that_raises_decides_nothing():
    stop = Stops(ZeroDivisionError())
    model = rt.replace_relu(nn.Sequential(nn.Linear(8, 8), nn.ReLU(), stop, nn.Linear(8, 8)), mask=True)
    with pytest.raises(ZeroDivisionError):
        model(torch.randn(4, 8))
    assert mask_probe.decisions(model) == {} and _hooks_top() is None
    stop.error = None
    model(torch.randn(4, 8)).sum().backward()
    assert mask_probe.decisions(model) == {"1": "y is kept by its consumer or the model's output: keeps y"}


def test_the_mask_is_decided_for_each_training_flag():
    # In training the Dropout after the ReLU saves its own noise, not y: the mask. In eval the
    # Dropout is the identity and the Linear after it saves y: the mask would be kept on top.
    torch.manual_seed(0)
    stock = nn.Sequential(nn.Linear(64, 64), nn.ReLU(), nn.Identity(), nn.Dropout(0.5), nn.Linear(64, 64))
    ours = rt.replace_relu(copy.deepcopy(stock), mask=True)
    x = torch.randn(32, 64)
    relu = ours[1]
    sizes = {}
    for training in (True, True, False, False, True):
        for name, m in (("stock", stock), ("ours", ours)):
            m.train(training)
            torch.manual_seed(1)
            sizes[name], out = saved_bytes(lambda: m(x))
            out.sum().backward()
        assert sizes["ours"] <= sizes["stock"], (training, sizes)
    assert relu.mask is True  # back in training: the training decision
    assert mask_probe.decisions(ours) == {"1": "y is kept by nothing else: keeps the 1-bit mask"}
    ours.eval()
    ours(x)
    assert relu.mask is False
    assert mask_probe.decisions(ours) == {"1": "y is kept by its consumer or the model's output: keeps y"}


class FunctionalNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.a, self.b = nn.Linear(6, 8), nn.Linear(8, 3)

    def forward(self, x):
        return self.b(F.relu(self.a(x)))


def _models():
    return {
        "fuse_linear": (lambda: nn.Sequential(nn.Linear(6, 8), nn.ReLU(), nn.Linear(8, 3)), {"fuse_linear": True}),
        "mask": (lambda: nn.Sequential(nn.Linear(6, 8), nn.ReLU(), nn.Linear(8, 3)), {"mask": True}),
        "mask_dropout": (lambda: nn.Sequential(nn.Linear(6, 8), nn.ReLU(), nn.Dropout(0.3), nn.Linear(8, 3)),
                         {"mask": True}),
        "functional": (FunctionalNet, {"functional": True}),
    }


def _step(model, x):
    """(output, x's gradient, every parameter gradient) of one step from a fixed seed."""
    model.zero_grad(set_to_none=True)
    x = x.clone().requires_grad_()
    torch.manual_seed(5)
    out = model(x)
    out.square().sum().backward()
    return [out.detach(), x.grad] + [p.grad for p in model.parameters()]


@pytest.mark.parametrize("capture", ["script", "fx"])
@pytest.mark.parametrize("case", list(_models()))
def test_script_and_fx_of_fused_and_hooked_models_give_stocks_results(case, capture):
    # TorchScript compiles a model's hooks, and the probe's and the scope's cannot be compiled;
    # FX cannot call the fused modules' inner ReLU (not a submodule). Both record relugrad::relu.
    make, options = _models()[case]
    torch.manual_seed(0)
    stock = make()
    ours = rt.replace_relu(copy.deepcopy(stock), **options)
    grab = torch.jit.script if capture == "script" else torch.fx.symbolic_trace
    captured = grab(ours)
    x = torch.randn(4, 6)
    for want, got in zip(_step(stock, x), _step(captured, x)):
        assert torch.equal(bits(want), bits(got))
    for want, got in zip(_step(stock, x), _step(ours, x)):  # the eager model, its hooks intact
        assert torch.equal(bits(want), bits(got))
    if case == "mask":  # the probe decides the eager model's own ReLU (script swapped a copy's)
        assert mask_probe.decisions(ours) == {"1": "y is kept by its consumer or the model's output: keeps y"}
        assert type(ours[1]) is rt.ReLU
    pickle.loads(pickle.dumps(ours))  # the attribute that lets script skip the hooks pickles


def test_a_call_nested_in_the_probe_step_does_not_end_it():
    class CallsItself(nn.Module):
        def __init__(self):
            super().__init__()
            self.a, self.relu, self.b = nn.Linear(4, 4), nn.ReLU(), nn.Linear(4, 4)
            self.inner = False

        def forward(self, x):
            if self.inner:
                return self.relu(self.a(x)) * 2.0  # mul by a number saves nothing
            self.inner = True
            x = self(x)  # the same model, inside its own (probe) step
            self.inner = False
            return self.b(self.relu(self.a(x)))  # b's Linear saves this call's y

    model = rt.replace_relu(CallsItself(), mask=True)
    model(torch.randn(2, 4)).sum().backward()
    # Decided from the whole step: ended at the inner call, it would have seen only y * 2.
    assert mask_probe.decisions(model) == {"relu": "y is kept by its consumer or the model's output: keeps y"}
    assert _hooks_top() is None


def test_a_call_from_another_thread_during_the_probe_step_does_not_end_it():
    import threading

    inside, other_done = threading.Event(), threading.Event()

    class Waits(nn.Module):
        def forward(self, x):
            if threading.current_thread() is threading.main_thread():
                inside.set()
                assert other_done.wait(30)
            return x

    model = rt.replace_relu(nn.Sequential(nn.Linear(4, 4), nn.ReLU(), Waits(), nn.Dropout(0.5)), mask=True)
    other = threading.Thread(target=lambda: (inside.wait(30), model(torch.randn(2, 4)), other_done.set()))
    other.start()
    out = model(torch.randn(2, 4))  # the probe step, in this thread
    other.join(30)
    out.sum().backward()
    assert mask_probe.decisions(model) == {"1": "y is kept by nothing else: keeps the 1-bit mask"}
    assert _hooks_top() is None


class Times2(nn.Module):
    def forward(self, x):
        return x * 2.0  # saves nothing (a number)


def test_a_model_compiled_before_its_probe_step_is_compiled_stocks_graph():
    # Under dynamo the probe does not run: its per-ReLU hooks split the graph at every ReLU, for
    # good (dynamo does not guard on hooks), and traced tensors are fake. Every ReLU keeps y until
    # an eager step probes; a compiled call after that runs the decision.
    torch.manual_seed(0)
    stock = nn.Sequential(nn.Linear(16, 64), nn.ReLU(), Times2(), nn.Linear(64, 8))
    ours = rt.replace_relu(copy.deepcopy(stock), mask=True)
    graphs = []

    def backend(gm, inputs):
        graphs.append(gm)
        return gm.forward

    torch._dynamo.reset()
    x = torch.randn(8, 16)
    want = _step(torch.compile(copy.deepcopy(stock), backend="aot_eager"), x)
    compiled = torch.compile(ours, backend=backend)
    for _ in range(2):
        got = _step(compiled, x)
        assert all(torch.equal(bits(a), bits(b)) for a, b in zip(want, got))
    assert len(graphs) == 1 and mask_probe.decisions(ours) == {} and ours[1].mask is False
    _step(ours, x)  # an eager step probes: the Linear saves 2 * y, not y
    assert mask_probe.decisions(ours) == {"1": "y is kept by nothing else: keeps the 1-bit mask"}
    got = _step(compiled, x)  # recompiled: the mask op
    assert all(torch.equal(bits(a), bits(b)) for a, b in zip(want, got))


def test_an_export_trace_is_not_taken_for_the_probe_step():
    torch.manual_seed(0)
    model = rt.replace_relu(nn.Sequential(nn.Linear(16, 64), nn.ReLU(), Times2(), nn.Linear(64, 8)), mask=True)
    x = torch.randn(8, 16)
    torch.export.export(model, (x,))
    assert mask_probe.decisions(model) == {}  # its fake tensors decided nothing
    model(x).sum().backward()
    assert mask_probe.decisions(model) == {"1": "y is kept by nothing else: keeps the 1-bit mask"}


class Inner(nn.Module):
    def __init__(self, stop):
        super().__init__()
        self.lin, self.stop = nn.Linear(4, 4), stop

    def forward(self, x):
        return self.stop(F.relu(self.lin(x)))


class Outer(nn.Module):
    def __init__(self, inner):
        super().__init__()
        self.inner, self.lin, self.relu = inner, nn.Linear(4, 4), nn.ReLU()

    def forward(self, x):
        return self.inner(self.relu(self.lin(x)))


def test_an_interrupt_in_a_nested_replaced_model_leaves_nothing_open_after_the_next_call():
    # Each model's leftovers lie under the other's on the stacks: taken off wherever they are.
    stop = Stops(KeyboardInterrupt())
    inner = rt.replace_relu(Inner(stop), semantics="tensorflow", functional=True, mask=True)
    model = rt.replace_relu(Outer(inner), semantics="tensorflow", functional=True, mask=True)
    with pytest.raises(KeyboardInterrupt):
        model(torch.randn(2, 4))
    assert torch._C._len_torch_function_stack() == 2
    stop.error = None
    model(torch.randn(2, 4)).sum().backward()
    assert torch._C._len_torch_function_stack() == 0 and _hooks_top() is None
    x = torch.tensor([float("nan"), 1.0], requires_grad=True)
    torch.relu(x).sum().backward()
    assert x.grad.tolist() == [1.0, 1.0]  # torch's own relu outside the models


def test_an_interrupted_probe_under_the_callers_own_hooks_is_taken_off_the_next_time():
    stop = Stops(KeyboardInterrupt())
    model = rt.replace_relu(nn.Sequential(nn.Linear(4, 4), nn.ReLU(), stop), mask=True)
    with pytest.raises(KeyboardInterrupt):
        model(torch.randn(2, 4))
    stop.error = None
    with torch.autograd.graph.save_on_cpu():  # the caller's hooks now lie over the stale ones
        model(torch.randn(2, 4)).sum().backward()
    assert _hooks_top() is None


def test_restore_relu_removes_the_hooks_of_replaced_models_nested_inside():
    inner = rt.replace_relu(Inner(Stops(None)), semantics="tensorflow", functional=True, mask=True)
    model = rt.restore_relu(rt.replace_relu(Outer(inner), mask=True))
    for m in model.modules():
        assert not m._forward_pre_hooks and not m._forward_hooks and "__prepare_scriptable__" not in vars(m)
    x = torch.tensor([[float("nan"), 1.0, -1.0, 2.0]], requires_grad=True)
    torch.manual_seed(0)
    stock = Outer(Inner(Stops(None)))
    stock.load_state_dict(model.state_dict())
    for m in (stock, model):
        x.grad = None
        m(x).sum().backward()
        if m is stock:
            want = x.grad.clone()
    assert torch.equal(bits(want), bits(x.grad))


def test_a_second_mask_replace_keeps_the_probe():
    torch.manual_seed(0)
    stock = nn.Sequential(nn.Linear(64, 64), nn.ReLU(), nn.Identity(), nn.Dropout(0.5), nn.Linear(64, 64))
    ours = rt.replace_relu(rt.replace_relu(copy.deepcopy(stock), mask=True), mask=True)
    x = torch.randn(32, 64)
    for training in (True, False):
        for m in (stock, ours):
            m.train(training)
        want, _ = saved_bytes(lambda: stock(x))
        got, out = saved_bytes(lambda: ours(x))
        out.sum().backward()
        assert got <= want, (training, got, want)
    assert ours[1].mask is False  # eval: decided for eval


def test_functional_relu_with_mask_keeps_no_more_than_stock():
    # One module serves every functional call site and no probe decides it: it keeps y, as stock.
    torch.manual_seed(0)
    stock = FunctionalNet()
    ours = rt.replace_relu(copy.deepcopy(stock), functional=True, mask=True)
    x = torch.randn(32, 6)
    for _ in range(2):
        want, _ = saved_bytes(lambda: stock(x))
        got, out = saved_bytes(lambda: ours(x))
        out.sum().backward()
        assert got <= want


def test_an_exact_relu_with_tooling_attributes_is_replaced():
    relu = nn.ReLU()
    relu.qconfig = None  # what torch.ao's propagate_qconfig_ sets on every module
    relu._is_hf_initialized = True  # what Hugging Face's weight init sets
    model = rt.replace_relu(nn.Sequential(nn.Linear(2, 2), relu))
    assert type(model[1]) is rt.ReLU

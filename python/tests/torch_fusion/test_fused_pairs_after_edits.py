"""Fused pairs (replace_relu(mask=True): ReLU + Dropout; fuse_linear=True: Linear + ReLU) against the
stock model when the model is used or edited as a user does after replace_relu: the modules stay the
same objects with their state, a pair runs fused only where the two calls would compute the same,
decided at each call (slices, replaced or inserted children, a changed p, Monte-Carlo dropout,
hooks registered later, instance forwards, quantization, tracing)."""
import copy
import warnings
from typing import Tuple

import pytest

torch = pytest.importorskip("torch")
from torch import Tensor, nn  # noqa: E402

import relugrad.torch as rt  # noqa: E402
from relugrad.torch import fusion  # noqa: E402
from torch_helpers import bits  # noqa: E402

MASK = {"mask": True}
LINEAR = {"fuse_linear": True}


def mlp():
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Dropout(0.5), nn.Linear(16, 16), nn.ReLU(),
                         nn.Linear(16, 4))


def both(options, edit=lambda m: m):
    """The stock model and the replaced one, each then edited by edit (which may return a new model)."""
    stock = mlp()
    ours = rt.replace_relu(copy.deepcopy(stock), **options)
    assert fusion.fused_pairs(ours)
    return edit(stock), edit(ours)


def outputs(model, x, seed=3, train_step=True):
    """{name: tensor} of model(x) ("out") and, in training, the parameter gradients of
    sum(model(x)), one generator seed; and the generator state after."""
    torch.manual_seed(seed)
    y = model(x)
    got = {"out": y.detach()}
    if train_step and y.requires_grad:
        y.sum().backward()
        got.update((k, p.grad.clone()) for k, p in model.named_parameters() if p.grad is not None)
        model.zero_grad(set_to_none=True)
    return got, torch.get_rng_state()


def _fused_biases(model):
    """Names of the biases of nn.Linears directly followed by a relugrad ReLU in a fusing parent:
    fuse_linear sums their gradient in its own order (same value but for rounding: relugrad.torch.LinearReLU)."""
    names = set()
    for name, m in model.named_modules():
        if isinstance(m, fusion.FusingSequential) and "linear" in m.__dict__.get(fusion._KINDS_ATTR, ()):
            keys = list(m._modules)
            for a, b in zip(keys, keys[1:]):
                if type(m._modules[a]) is nn.Linear and isinstance(m._modules[b], rt.ReLU):
                    names.add(f"{name}.{a}.bias" if name else f"{a}.bias")
    return names


def assert_same(stock, ours, x, **kw):
    (a, rng_a), (b, rng_b) = outputs(stock, x, **kw), outputs(ours, x, **kw)
    assert sorted(a) == sorted(b)
    rounding = _fused_biases(ours)
    for k in a:
        if k in rounding:
            assert torch.allclose(a[k], b[k], rtol=1e-5, atol=1e-5), k
        else:
            assert a[k].shape == b[k].shape and torch.equal(bits(a[k]), bits(b[k])), k
    assert torch.equal(rng_a, rng_b)  # the same draws: later random ops agree


EDITS = {
    "slice_first_two": (MASK, lambda m: m[:2]),
    "slice_first_three": (MASK, lambda m: m[:3]),
    "linear_alone": (LINEAR, lambda m: m[0]),
    "relu_replaced_by_gelu": (MASK, lambda m: m.__setitem__(1, nn.GELU()) or m),
    "dropout_replaced_by_identity": (MASK, lambda m: m.__setitem__(2, nn.Identity()) or m),
    "dropout_p_changed": (MASK, lambda m: setattr(m[2], "p", 0.9) or m),
    "dropout_p_zero": (MASK, lambda m: setattr(m[2], "p", 0.0) or m),
    "layer_inserted_between": (LINEAR, lambda m: m.insert(1, nn.BatchNorm1d(16)) or m),
    "linear_replaced": (LINEAR, lambda m: m.__setitem__(0, nn.Linear(8, 16)) or m),
}


@pytest.mark.parametrize("name", sorted(EDITS))
def test_an_edited_model_computes_what_the_edited_stock_model_computes(name):
    options, edit = EDITS[name]
    torch.manual_seed(1)
    stock, ours = both(options, lambda m: edit(m))
    if name == "linear_replaced":  # the new Linears' weights: the same in both
        ours[0].load_state_dict(stock[0].state_dict())
    assert_same(stock, ours, torch.randn(32, 8))


def test_monte_carlo_dropout_and_training_flags_set_per_module():
    """model.eval() with each nn.Dropout back in training (Monte-Carlo dropout), found by
    isinstance as users do; and the flags set before replace_relu."""
    def mc(m):
        m.eval()
        for mod in m.modules():
            if isinstance(mod, nn.Dropout):
                mod.train()
        return m

    stock, ours = both(MASK, mc)
    assert sum(isinstance(m, nn.Dropout) for m in ours.modules()) == 1
    with torch.no_grad():
        assert_same(stock, ours, torch.randn(32, 8), train_step=False)
    stock, ours = mlp().eval(), mlp().eval()
    stock[2].train(), ours[2].train()
    rt.replace_relu(ours, mask=True)
    assert_same(stock, ours, torch.randn(32, 8))


def test_hooks_registered_after_replace_see_stocks_tensors():
    x = torch.randn(32, 8)
    for options, index in ((LINEAR, 0), (MASK, 1), (MASK, 2)):
        seen = []
        for model in both(options):
            got = []
            model[index].register_forward_hook(lambda m, args, out: got.append((args[0].detach(), out.detach())))
            outputs(model, x)
            seen.append(got)
        assert len(seen[0]) == len(seen[1]) == 1
        for (ia, oa), (ib, ob) in zip(*seen):
            assert torch.equal(bits(ia), bits(ib)) and torch.equal(bits(oa), bits(ob))


def test_global_module_hooks_see_every_call():
    x = torch.randn(4, 8)
    for options in (LINEAR, MASK):
        calls = []
        for model in both(options):
            names = []
            handle = nn.modules.module.register_module_forward_hook(
                lambda m, args, out: names.append(type(m).__name__))
            try:
                outputs(model, x)
            finally:
                handle.remove()
            calls.append(names[:-1])  # the container's own class differs (FusingSequential)
        assert calls[0] == calls[1] == ["Linear", "ReLU", "Dropout", "Linear", "ReLU", "Linear"]


def test_the_modules_keep_their_state_attributes_and_instance_forwards():
    stock, ours = both(MASK)
    for model in (stock, ours):
        model[2].register_buffer("scale", torch.ones(3))
        model[2].tag = "attn_drop"
    assert list(stock.state_dict()) == list(ours.state_dict())
    ours.load_state_dict(stock.state_dict(), strict=True)
    assert ours[2].tag == "attn_drop"
    # A forward set on the instance (as accelerate-style wrappers do) is called.
    for options, index in ((LINEAR, 0), (MASK, 2), (MASK, 1), ({}, 1)):
        stock = mlp()
        ours = rt.replace_relu(copy.deepcopy(stock), **options)
        for model in (stock, ours):
            module = model[index]
            module.forward = (lambda f: (lambda x: f(x) * 0.5))(module.forward)
        assert_same(stock, ours, torch.randn(32, 8))


def test_restore_relu_keeps_every_hook_and_gives_the_stock_classes_back():
    for options in (LINEAR, MASK):
        stock, ours = both(options)
        fired = []
        for i in range(3):
            ours[i].register_forward_hook(lambda m, a, o, i=i: fired.append(i))
        back = rt.restore_relu(ours)
        assert type(back) is nn.Sequential and [type(m) for m in back] == [type(m) for m in stock]
        back(torch.randn(2, 8))
        assert fired == [0, 1, 2]


def test_dynamic_quantization_quantizes_the_linears_as_in_stock():
    stock, ours = both(LINEAR, lambda m: m.eval())
    qs = torch.ao.quantization.quantize_dynamic(stock, {nn.Linear}, dtype=torch.qint8)
    qo = torch.ao.quantization.quantize_dynamic(ours, {nn.Linear}, dtype=torch.qint8)
    x = torch.randn(16, 8)
    with torch.no_grad():
        assert torch.equal(qs(x), qo(x))


def test_jit_trace_of_a_training_model_records_stocks_calls():
    stock, ours = both(MASK)
    x = torch.randn(32, 8)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        traced = [torch.jit.trace(m, x, check_trace=False) for m in (stock, ours)]
    assert_same(traced[0], traced[1], x)


def test_an_in_place_relu_is_fused_only_after_a_module_of_its_own_output():
    """First in its Sequential, an in-place ReLU writes the caller's tensor (h below, used again):
    the pair is called, as stock; after a Linear nothing else sees its input: fused."""
    class Block(nn.Module):
        def __init__(self, act):
            super().__init__()
            self.fc, self.act = nn.Linear(8, 8), act

        def forward(self, x):
            h = self.fc(x)
            return self.act(h) + h

    torch.manual_seed(0)
    stock = Block(nn.Sequential(nn.ReLU(inplace=True), nn.Dropout(0.5)))
    ours = rt.replace_relu(copy.deepcopy(stock), mask=True)
    assert_same(stock, ours, torch.randn(16, 8))
    x = torch.randn(4, 8, requires_grad=True)  # a leaf: stock refuses the in-place write
    for model in (stock, ours):
        with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
            model.act(x)
    after_linear = rt.replace_relu(nn.Sequential(nn.Linear(8, 8), nn.ReLU(inplace=True), nn.Dropout(0.5)), mask=True)
    with torch.profiler.profile() as prof:
        after_linear(torch.randn(4, 8))
    assert any(e.name == "relugrad_native::relu_dropout" for e in prof.events())


def test_an_in_place_dropout_is_not_fused():
    torch.manual_seed(0)
    model = rt.replace_relu(nn.Sequential(nn.Linear(8, 8), nn.ReLU(), nn.Dropout(0.5, inplace=True)), mask=True)
    with torch.profiler.profile() as prof:
        model(torch.randn(4, 8))
    assert not any(e.name.startswith("relugrad_native::relu_dropout") for e in prof.events())


@pytest.mark.parametrize("p", ["tensor", "float32"])
def test_a_dropout_p_that_is_not_a_python_float_is_called_as_stock(p):
    """F.dropout converts p in C++; the fused pass computes with a Python float only."""
    import numpy as np

    value = {"tensor": torch.tensor(0.1), "float32": np.float32(0.1)}.get(p, p)
    stock, ours = both(MASK, lambda m: setattr(m[2], "p", value) or m)
    assert_same(stock, ours, torch.randn(32, 8, dtype=torch.float32))
    stock, ours = stock.bfloat16(), ours.bfloat16()  # the composed path (bf16) too
    assert_same(stock, ours, torch.randn(32, 8, dtype=torch.bfloat16))


def test_a_child_compiled_with_module_compile_is_called():
    """Module.compile() gives the module a call of its own (_compiled_call_impl), which nn.Module's
    __call__ runs: the pair must call the child then. (A counting call stands for the compiled one:
    whether dynamo makes a graph of a lone dropout differs between torch versions.)"""
    calls = []
    for model in both(MASK):
        child = model[2]
        child._compiled_call_impl = lambda *a, child=child, **k: (calls.append(1), child._call_impl(*a, **k))[1]
        outputs(model, torch.randn(32, 8))
    assert len(calls) == 2  # stock's and ours: each child's own call ran
    stock, ours = both(MASK)
    for model in (stock, ours):
        model[2].compile(backend="eager")
    assert_same(stock, ours, torch.randn(32, 8))


class _LayerModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.layer = nn.TransformerEncoderLayer(16, 2, 32, batch_first=True)
        self.out = nn.Linear(16, 2)

    def forward(self, x):
        return self.out(self.layer(x))


def test_fx_and_quantization_tracers_keep_a_fusing_transformer_layer_as_one_call():
    torch.manual_seed(0)
    stock = _LayerModel()
    ours = rt.replace_relu(copy.deepcopy(stock), mask=True)
    assert fusion.fused_pairs(ours) == ["layer.activation + layer.dropout"]
    ops = [[n.op for n in torch.fx.symbolic_trace(m).graph.nodes] for m in (stock, ours)]
    assert ops[0] == ops[1] == ["placeholder", "call_module", "call_module", "output"]
    import pickle
    again = pickle.loads(pickle.dumps(ours))
    assert type(again.layer) is type(ours.layer) and fusion.fused_pairs(again) == fusion.fused_pairs(ours)


def _scale_hook(module: nn.Module, args: Tuple[Tensor], out: Tensor) -> Tensor:
    return out * 2.0


class _Holder(nn.Module):
    def __init__(self):
        super().__init__()
        self.seq = nn.Sequential(nn.Linear(8, 8), nn.ReLU(), nn.Dropout(0.5))
        self.seq.register_buffer("scale", torch.full((8,), 2.0))
        self.seq.register_forward_hook(_scale_hook)

    def forward(self, x):
        return self.seq(x)


def test_scripting_keeps_the_containers_state_and_leaves_the_eager_model_alone():
    torch.manual_seed(0)
    stock = _Holder().eval()
    for options in (MASK, LINEAR):
        ours = rt.replace_relu(copy.deepcopy(stock), **options).eval()
        seq = ours.seq
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            scripted = torch.jit.script(ours.seq)
        assert ours.seq is seq and len(ours.seq._forward_hooks) == 1  # the eager model as it was
        x = torch.randn(4, 8)
        with torch.no_grad():
            assert torch.equal(scripted(x), stock.seq(x)) and torch.equal(ours(x), stock(x))
        assert sorted(scripted.state_dict()) == sorted(stock.seq.state_dict())


@pytest.mark.parametrize("cls", [nn.TransformerEncoderLayer, nn.TransformerDecoderLayer])
def test_a_fusing_layer_pickles_copies_and_scripts_with_state_that_refers_to_it(cls):
    """replace_relu's own scripting hook refers back to the model: pickle and deepcopy must build
    the layer before its state (as for any module), and scripting must keep its activation."""
    import io

    layer = rt.replace_relu(cls(8, 2, 16, batch_first=True), mask=True)
    assert fusion.fused_pairs(layer) == ["activation + dropout"]
    buffer = io.BytesIO()
    torch.save(layer, buffer)
    buffer.seek(0)
    loaded = torch.load(buffer, weights_only=False)
    copied = copy.deepcopy(layer)
    for other in (loaded, copied):
        assert type(other) is type(layer) and isinstance(other.activation, rt.ReLU)
        assert fusion.fused_pairs(other) == ["activation + dropout"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for model in (layer, copied):
            torch.jit.script(model)


def test_a_torch_function_mode_sees_the_calls_of_a_fused_pair():
    from torch.overrides import TorchFunctionMode

    class Record(TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            seen.append(getattr(func, "__name__", str(func)))
            return func(*args, **(kwargs or {}))

    for options in (MASK, LINEAR):
        names = []
        for model in both(options):
            seen = []
            with Record():
                outputs(model, torch.randn(4, 8), train_step=False)
            names.append(sorted({n for n in seen if n in ("linear", "dropout")}))
        assert names[0] == names[1] == ["dropout", "linear"]


def test_a_fusing_parent_prints_as_stock():
    for options in (LINEAR, MASK):
        stock, ours = both(options)
        assert type(ours).__name__ == "FusingSequential" and repr(ours) == repr(stock).replace(
            "ReLU()", "ReLU(semantics='torch')")
    torch.manual_seed(0)
    layer = nn.TransformerEncoderLayer(8, 2, 16)
    stock = nn.TransformerEncoder(layer, 2, enable_nested_tensor=False)
    ours = rt.replace_relu(copy.deepcopy(stock), mask=True)
    assert type(ours.layers[0]).__name__ == "FusingTransformerEncoderLayer"
    # The one difference: the F.relu activation became a submodule, which the repr lists.
    assert "\n".join(line for line in repr(ours).splitlines() if "(activation): ReLU" not in line) == repr(stock)

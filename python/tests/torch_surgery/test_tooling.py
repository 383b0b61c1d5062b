"""replace_relu / restore_relu and PyTorch's tooling on replaced models: what is replaced and
what is left (report, strict), hooks, functional relu, FX and create_feature_extractor,
TorchScript (script and trace), torch.export and its aten decomposition, ONNX (both exporters),
quantization fusion and preparation."""
import copy
import io
from collections import Counter

import pytest

torch = pytest.importorskip("torch", reason="PyTorch is not installed in this environment")
torchvision = pytest.importorskip("torchvision", reason="torchvision is not installed (python/requirements-test.txt)")
import torch.nn.functional as F  # noqa: E402
from torch import nn  # noqa: E402

import relugrad.torch as rt  # noqa: E402
from torch_helpers import native_off  # noqa: E402,F401 (a fixture)
from relugrad.torch.surgery import HARDTANH_LEFT, functional_scope  # noqa: E402
from test_torchvision_models import assert_same_bits, relu_nodes  # noqa: E402

RESNET18_RELUS = 17  # the stem's and two per BasicBlock (one module called twice)


@pytest.fixture(autouse=True, scope="module")
def one_torch_thread():
    before = torch.get_num_threads()
    torch.set_num_threads(1)  # see test_torch_models.one_torch_thread
    yield
    torch.set_num_threads(before)


_RESNET = {}


def resnet18_pair():
    """(stock, replaced) resnet18 with the same weights, in training mode."""
    if "stock" not in _RESNET:
        torch.manual_seed(0)
        _RESNET["stock"] = torchvision.models.resnet18(num_classes=10)
    stock = copy.deepcopy(_RESNET["stock"])
    return stock, rt.replace_relu(copy.deepcopy(stock))


def run(model, x, seed=1):
    """(output, parameter gradients) of one forward and backward."""
    torch.manual_seed(seed)
    model.zero_grad(set_to_none=True)
    y = model(x)
    y.square().sum().backward()
    return y.detach(), [p.grad for p in model.parameters()]


def assert_runs_alike(a, b, x, what):
    ya, ga = run(a, x)
    yb, gb = run(b, x)
    assert_same_bits(ya, yb, f"{what}: output")
    assert len(ga) == len(gb)
    for i, (p, q) in enumerate(zip(ga, gb)):
        assert_same_bits(p, q, f"{what}: gradient {i}")


X = torch.randn(2, 3, 32, 32)


# ---- what replace_relu replaces and leaves ------------------------------------------------

class PlainSubclass(nn.ReLU):
    def extra_repr(self):
        return "mine"


class ClampToOne(nn.ReLU):
    def forward(self, x):
        return super().forward(x).clamp(max=1.0)


class WithBuffer(nn.ReLU):
    def __init__(self):
        super().__init__()
        self.register_buffer("scale", torch.ones(1))


def test_replaces_exact_and_plain_subclasses_and_leaves_the_rest_with_reasons():
    shared = nn.ReLU()
    model = nn.Sequential(nn.Linear(4, 4), nn.ReLU(inplace=True), PlainSubclass(), ClampToOne(), WithBuffer(),
                          nn.ReLU6(), nn.Hardtanh(), torch.ao.nn.quantized.ReLU6(),
                          torch.ao.nn.intrinsic.ConvReLU2d(nn.Conv2d(1, 1, 1), nn.ReLU()),
                          nn.Sequential(shared), shared)
    before = {k: v.clone() for k, v in model.state_dict().items()}
    out, report = rt.replace_relu(model, return_report=True)
    assert out is model
    assert [e.name for e in report.replaced] == ["1", "2", "9.0"]
    assert type(model[1]) is rt.ReLU and model[1].inplace and type(model[2]) is rt.ReLU
    assert model[9][0] is model[10]  # a shared module becomes one shared ReLU
    left = {e.name: e.detail for e in report.left}
    assert set(left) == {"3", "4", "5", "6", "7", "8.1"}
    assert "overrides forward" in left["3"] and "overrides forward" in left["7"]
    assert "buffers" in left["4"]
    assert type(model[5]) is nn.ReLU6 and type(model[6]) is nn.Hardtanh  # no relugrad hardtanh node
    assert left["5"] == left["6"] == HARDTANH_LEFT
    assert "ConvReLU2d" in left["8.1"]
    assert type(model[3]) is ClampToOne and type(model[7]) is torch.ao.nn.quantized.ReLU6
    assert type(model[8][1]) is nn.ReLU
    assert model.state_dict().keys() == before.keys()
    assert all(torch.equal(model.state_dict()[k], v) for k, v in before.items())
    # The clamp subclass keeps its own forward: relu then clamp to 1.
    assert torch.equal(model[3](torch.tensor([12.0, -1.0])), torch.tensor([1.0, 0.0]))
    assert "left" in str(report) and "ClampToOne" in str(report)


def test_strict_raises_and_leaves_the_model_unchanged():
    model = nn.Sequential(nn.ReLU(), torch.ao.nn.quantized.ReLU6())
    with pytest.raises(rt.ReplaceError, match="ReLU6") as info:
        rt.replace_relu(model, strict=True)
    assert type(model[0]) is nn.ReLU
    assert [e.name for e in info.value.report.left] == ["1"]
    ok = nn.Sequential(nn.ReLU(), nn.Linear(2, 2))
    assert type(rt.replace_relu(ok, strict=True)[0]) is rt.ReLU
    assert isinstance(rt.replace_relu(nn.ReLU()), rt.ReLU)


def test_hooks_are_kept_by_replace_and_restore():
    model = nn.Sequential(nn.Linear(4, 4), nn.ReLU())
    calls = Counter()
    relu = model[1]
    handles = [
        relu.register_forward_pre_hook(lambda m, a: calls.update(["pre"])),
        relu.register_forward_hook(lambda m, a, o: calls.update(["fwd"])),
        relu.register_forward_hook(lambda m, a, kw, o: calls.update(["fwd_kw"]), with_kwargs=True),
        relu.register_full_backward_pre_hook(lambda m, g: calls.update(["bwd_pre"])),
        relu.register_full_backward_hook(lambda m, gi, go: calls.update(["bwd"])),
    ]

    def once(m):
        calls.clear()
        m(torch.randn(3, 4, requires_grad=True)).sum().backward()
        return dict(calls)

    everything = {"pre": 1, "fwd": 1, "fwd_kw": 1, "bwd_pre": 1, "bwd": 1}
    assert once(model) == everything
    rt.replace_relu(model)
    assert type(model[1]) is rt.ReLU
    assert once(model) == everything
    handles[0].remove()  # the user's handles still reach the hooks
    assert once(model) == {k: v for k, v in everything.items() if k != "pre"}
    rt.restore_relu(model)
    assert type(model[1]) is nn.ReLU
    handles[1].remove()
    assert once(model) == {"fwd_kw": 1, "bwd_pre": 1, "bwd": 1}


class Functional(nn.Module):
    """Every functional spelling of relu, in and out of place."""

    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(8, 8)

    def forward(self, x):
        h = self.lin(x)
        a = F.relu(h) + torch.relu(h * 2) + (h * 3).relu()
        b = F.relu(h * 4, inplace=True) + F.relu(h * 5, True) + F.relu_(h * 6)
        c = torch.relu_(h * 7) + (h * 8).relu_()
        n = torch.relu(torch.arange(-2, 3))  # integer: not served, torch's own
        return a + b + c, n


def test_functional_relu_is_served_only_in_the_scope_asked_for():
    torch.manual_seed(0)
    stock = Functional()
    _, report = rt.replace_relu(copy.deepcopy(stock), return_report=True)
    assert [e.kind for e in report.left] == ["functional relu in Functional.forward"]
    ours = rt.replace_relu(copy.deepcopy(stock), functional=True, strict=True)
    x = torch.randn(3, 8)
    want, want_n = stock(x)
    got, got_n = ours(x)
    assert functional_scope(ours).served == 8
    assert relu_nodes(want) == Counter(stock=8) and relu_nodes(got) == Counter(relugrad=8)
    assert torch.equal(want_n, got_n) and got_n.dtype == torch.int64
    for m in (stock, ours):
        m.zero_grad()
        m(x)[0].square().sum().backward()
    assert_same_bits(stock.lin.weight.grad, ours.lin.weight.grad, "weight.grad")
    # Outside the model's forward nothing is served.
    before = functional_scope(ours).served
    torch.relu(x)
    assert functional_scope(ours).served == before
    back = rt.restore_relu(ours)
    assert functional_scope(back) is None
    assert relu_nodes(back(x)[0]) == Counter(stock=8)


class CallsItsReluModule(nn.Module):
    """self.relu is a submodule: calling it is a module call, not functional relu."""

    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(8, 8)
        self.relu = nn.ReLU(inplace=True)

    def forward(self, x):
        return self.relu(self.lin(x)) + self.relu(self.lin(x) * 2)


class HoldsReluFunction(nn.Module):
    """self.relu is F.relu held as a plain attribute: functional relu."""

    def __init__(self):
        super().__init__()
        self.relu = F.relu

    def forward(self, x):
        return self.relu(x)


class ReluInNestedFunction(CallsItsReluModule):
    def forward(self, x):
        def act(t):
            return F.relu(t)
        return act(self.relu(x))


class ReluModuleAndTensorMethod(CallsItsReluModule):
    def forward(self, x):
        return self.relu(x) + x.relu()


class OtherObjectsRelu(CallsItsReluModule):
    def forward(self, x, other=F):
        return other.relu(self.relu(x))


@pytest.mark.parametrize("cls,left", [(CallsItsReluModule, False), (HoldsReluFunction, True),
                                      (ReluInNestedFunction, True), (ReluModuleAndTensorMethod, True),
                                      (OtherObjectsRelu, True)])
def test_a_submodule_named_relu_is_not_functional_relu(cls, left):
    # Read from forward's bytecode: self.<submodule> is the module's call (replaced as a module);
    # any other relu name (an attribute function, a nested function's F.relu, x.relu(), another
    # object's relu) is functional relu, left without functional=True.
    torch.manual_seed(0)
    stock = cls()
    ours, report = rt.replace_relu(copy.deepcopy(stock), return_report=True)
    assert [e.kind for e in report.left] == ([f"functional relu in {cls.__name__}.forward"] if left else [])
    if isinstance(stock, CallsItsReluModule):
        assert isinstance(ours.relu, rt.ReLU) and ours.relu.inplace
    if not left:
        x = torch.randn(3, 8)
        want, got = stock(x), ours(x)
        assert relu_nodes(want) == Counter(stock=2) and relu_nodes(got) == Counter(relugrad=2)
        assert_same_bits(want, got, "output")


@pytest.mark.parametrize("path", ["native", "ops"])
def test_functional_scope_with_inplace_modules_on_both_eager_paths(path, monkeypatch, native_off):
    # Without the native library ReLU calls the custom ops, whose forward calls torch.relu: the
    # scope must not serve that call again. Under no_grad nothing is served (torch's relu is the
    # same forward).
    if path == "native" and not rt.NATIVE:
        pytest.skip(f"the torch-native ReLU is not loaded: {rt.NATIVE_STATUS}")
    if path == "ops":
        native_off("relu")
    torch.manual_seed(0)
    stock = nn.Sequential(nn.Linear(8, 8), nn.ReLU(inplace=True), Functional())
    ours = rt.replace_relu(copy.deepcopy(stock), functional=True)
    x = torch.randn(3, 8)
    outs = []
    for m in (stock, ours):
        m.zero_grad()
        y = m(x)[0]
        outs.append((y, relu_nodes(y)))
        y.square().sum().backward()
    # every relu is relugrad's: its autograd Functions (native; in place without it) or the ops'
    assert outs[0][1] == Counter(stock=9) and outs[1][1]["stock"] == 0 and sum(outs[1][1].values()) == 9
    if path == "native":
        assert outs[1][1] == Counter(relugrad=9)
    assert_same_bits(outs[0][0], outs[1][0], "output")
    for p, q in zip(stock.parameters(), ours.parameters()):
        assert_same_bits(p.grad, q.grad, "grad")
    served = functional_scope(ours).served
    with torch.no_grad():
        assert_same_bits(stock(x)[0], ours(x)[0], "no_grad output")
    assert functional_scope(ours).served == served


@pytest.mark.parametrize("layer_cls", [nn.TransformerEncoderLayer, nn.TransformerDecoderLayer])
def test_transformer_relu_activation_becomes_a_relu_submodule(layer_cls):
    torch.manual_seed(0)
    stock = layer_cls(16, 2, 32, dropout=0.0)
    ours, report = rt.replace_relu(copy.deepcopy(stock), strict=True, return_report=True)
    assert [(e.name, e.kind) for e in report.replaced] == [("activation", "F.relu activation")]
    assert isinstance(ours.activation, rt.ReLU)
    assert functional_scope(ours) is None  # an attribute the layer calls: no scope
    assert ours.state_dict().keys() == stock.state_dict().keys()
    args = (torch.randn(5, 2, 16),) if layer_cls is nn.TransformerEncoderLayer else \
        (torch.randn(5, 2, 16), torch.randn(4, 2, 16))
    want, got = stock(*args), ours(*args)
    assert relu_nodes(want) == Counter(stock=1) and relu_nodes(got) == Counter(relugrad=1)
    assert_same_bits(want, got, "output")
    back = rt.restore_relu(ours)
    assert back.activation is F.relu and "activation" not in back._modules


def test_restore_relu_gives_stock_modules_and_state():
    stock, ours = resnet18_pair()
    rt.replace_relu(ours, functional=True)
    state = ours.state_dict()
    back, report = rt.restore_relu(ours, return_report=True)
    assert back is ours
    assert not any(isinstance(m, rt.ReLU) for m in back.modules())
    assert sum(type(m) is nn.ReLU for m in back.modules()) == sum(type(m) is nn.ReLU for m in stock.modules())
    assert functional_scope(back) is None and len(report.replaced) == 10  # 9 modules + the scope
    assert back.state_dict().keys() == state.keys()
    assert all(torch.equal(back.state_dict()[k], v) for k, v in state.items())
    y = back(X)
    assert relu_nodes(y) == Counter(stock=RESNET18_RELUS)
    assert type(rt.restore_relu(rt.ReLU(inplace=True))) is nn.ReLU


# ---- FX ------------------------------------------------------------------------------------

def test_fx_symbolic_trace_records_relugrad_relu():
    stock, ours = resnet18_pair()
    gm = torch.fx.symbolic_trace(ours)
    targets = Counter(n.target for n in gm.graph.nodes if n.op == "call_function")
    assert targets[torch.ops.relugrad.relu.default] + targets[torch.ops.relugrad.relu] == RESNET18_RELUS
    assert not any(isinstance(m, rt.ReLU) for m in gm.modules())
    assert relu_nodes(gm(X)) == Counter(relugrad_op=RESNET18_RELUS)  # the custom op's autograd: relugrad's
    assert_runs_alike(stock, gm, X, "fx GraphModule")


def test_create_feature_extractor():
    from torchvision.models.feature_extraction import create_feature_extractor, get_graph_node_names
    stock, ours = resnet18_pair()
    nodes = {"layer1": "a", "layer3.1.relu_1": "b", "fc": "c"}
    # ReLU as a leaf module: the node names are stock's, the module runs its eager path.
    leaf = {"leaf_modules": [rt.ReLU]}
    assert get_graph_node_names(ours, tracer_kwargs=leaf) == get_graph_node_names(stock)
    fs = create_feature_extractor(stock, nodes)
    fo = create_feature_extractor(ours, nodes, tracer_kwargs=leaf)
    ws, wo = fs(X), fo(X)
    for k in "abc":
        assert_same_bits(ws[k], wo[k], k)
    # Traced through (no tracer_kwargs): the ReLU module's nodes are named below it.
    names = get_graph_node_names(ours)[1]
    assert "layer3.1.relu.relu_1" in names and "layer3.1.relu_1" not in names
    ft = create_feature_extractor(ours, {"layer1": "a", "fc": "c"})
    got = ft(X)
    assert_same_bits(ws["a"], got["a"], "layer1 traced through")
    assert_same_bits(ws["c"], got["c"], "fc traced through")


# ---- TorchScript ---------------------------------------------------------------------------

def test_jit_script_of_a_replaced_model():
    stock, ours = resnet18_pair()
    scripted = torch.jit.script(ours)
    kinds = Counter(n.kind() for n in scripted.inlined_graph.nodes())
    assert kinds["relugrad::relu"] == RESNET18_RELUS and kinds["aten::relu"] + kinds["aten::relu_"] == 0
    assert_runs_alike(stock, scripted, X, "scripted")
    buf = io.BytesIO()
    torch.jit.save(scripted, buf)
    buf.seek(0)
    loaded = torch.jit.load(buf)
    assert_runs_alike(stock, loaded, X, "saved and loaded")
    # torch.jit.script swaps submodules of the model it is given: that eager model still runs
    # relugrad's eager path and restores to stock.
    assert relu_nodes(ours(X)) == Counter(relugrad=RESNET18_RELUS)
    assert_runs_alike(stock, ours, X, "eager after script")
    assert sum(type(m) is nn.ReLU for m in rt.restore_relu(ours).modules()) == 9


def test_jit_trace_of_a_replaced_model():
    stock, ours = resnet18_pair()
    traced = torch.jit.trace(ours, X, check_trace=False)  # BatchNorm's running stats change per run
    kinds = Counter(n.kind() for n in traced.inlined_graph.nodes())
    assert kinds["relugrad::relu"] == RESNET18_RELUS and kinds["aten::relu"] + kinds["aten::relu_"] == 0
    assert_runs_alike(stock, traced, X, "traced")


# ---- torch.export --------------------------------------------------------------------------

def test_export_and_decomposition_to_aten():
    stock, ours = resnet18_pair()
    stock.eval(), ours.eval()
    ep = torch.export.export(ours, (X,))
    targets = Counter(n.target for n in ep.graph.nodes if n.op == "call_function")
    assert targets[torch.ops.relugrad.relu.default] == RESNET18_RELUS
    with torch.no_grad():
        want = stock(X)
    assert_same_bits(want, ep.module()(X).detach(), "exported")
    table = torch.export.default_decompositions()
    table.update(rt.decompositions())
    core = ep.run_decompositions(table)
    ops = {n.target for n in core.graph.nodes if n.op == "call_function"}
    assert all(getattr(op, "namespace", "aten") in ("aten", "_operator") or op.__module__ == "_operator"
               for op in ops), ops
    assert torch.ops.aten.relu.default in ops
    assert_same_bits(want, core.module()(X).detach(), "decomposed")


def test_exported_module_trains_with_relugrad_gradients():
    torch.manual_seed(0)
    stock = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 4))
    ours = rt.replace_relu(copy.deepcopy(stock))
    x = torch.randn(5, 8)
    mod = torch.export.export(ours, (x,)).module()
    assert relu_nodes(mod(x)) == Counter(relugrad_op=1)
    assert_runs_alike(stock, mod, x, "exported module")


# ---- ONNX ----------------------------------------------------------------------------------

@pytest.mark.parametrize("dynamo", [False, True], ids=["torchscript", "dynamo"])
def test_onnx_export_writes_standard_relu(dynamo):
    onnx = pytest.importorskip("onnx", reason="onnx is not installed (python/requirements-test.txt)")
    if dynamo:
        pytest.importorskip("onnxscript", reason="onnxscript (the dynamo exporter's) is not installed")
    torch.manual_seed(0)
    model = nn.Sequential(nn.Conv2d(3, 4, 3), nn.BatchNorm2d(4), nn.ReLU(inplace=True), nn.Conv2d(4, 4, 3),
                          nn.ReLU(), nn.Flatten(), nn.Linear(4 * 28 * 28, 10), nn.ReLU())
    ours = rt.replace_relu(copy.deepcopy(model)).eval()
    ours[4].mask = True
    x = torch.randn(1, 3, 32, 32)
    buf = io.BytesIO()
    torch.onnx.export(ours, (x,), buf, dynamo=dynamo)
    proto = onnx.load_from_string(buf.getvalue())
    onnx.checker.check_model(proto)
    ops = Counter(n.op_type for n in proto.graph.node)
    assert ops["Relu"] == 3, ops
    assert {n.domain for n in proto.graph.node} <= {"", "ai.onnx"}


def test_onnx_torchscript_exporter_maps_the_custom_op_to_relu():
    # A graph that calls relugrad::relu itself (here through an FX GraphModule) exports too.
    onnx = pytest.importorskip("onnx", reason="onnx is not installed (python/requirements-test.txt)")
    gm = torch.fx.symbolic_trace(rt.replace_relu(nn.Sequential(nn.Linear(4, 4), nn.ReLU())))
    buf = io.BytesIO()
    torch.onnx.export(gm, (torch.randn(2, 4),), buf, dynamo=False)
    proto = onnx.load_from_string(buf.getvalue())
    assert [n.op_type for n in proto.graph.node].count("Relu") == 1


# ---- quantization ----------------------------------------------------------------------------

def test_fuse_modules_and_quantization_prep():
    import torch.ao.nn.intrinsic as nni
    import torch.ao.quantization as tq
    torch.manual_seed(0)
    stock = nn.Sequential(nn.Conv2d(3, 4, 3), nn.BatchNorm2d(4), nn.ReLU(), nn.Conv2d(4, 4, 3), nn.ReLU()).eval()
    ours = rt.replace_relu(copy.deepcopy(stock)).eval()
    groups = [["0", "1", "2"], ["3", "4"]]
    fused_stock = tq.fuse_modules(stock, groups)
    # As a user calls it on a stock model; and with the explicit config, the same fusers.
    fused = tq.fuse_modules(copy.deepcopy(ours), groups)
    explicit = tq.fuse_modules(ours, groups, fuse_custom_config_dict=rt.fuse_custom_config())
    x = torch.randn(2, 3, 12, 12)
    for m in (fused, explicit):
        assert type(m[0]) is nni.ConvReLU2d and type(m[3]) is nni.ConvReLU2d
        assert type(m[0][1]) is nn.ReLU and type(m[1]) is nn.Identity
        with torch.no_grad():
            assert_same_bits(fused_stock(x), m(x), "fused")
    quantized = []
    for m in (fused_stock, fused):
        wrapped = nn.Sequential(tq.QuantStub(), m, tq.DeQuantStub()).eval()
        wrapped.qconfig = tq.get_default_qconfig("x86")
        prepared = tq.prepare(wrapped)
        prepared(x)
        q = tq.convert(prepared)
        quantized.append(q(x))
    assert torch.equal(quantized[0], quantized[1])
    # Fusion for QAT would train with torch's relu gradients: refused outside the torch preset.
    tf = rt.replace_relu(copy.deepcopy(stock), semantics="tensorflow").train()
    with pytest.raises(ValueError, match="tensorflow"):
        tq.fuse_modules_qat(tf, groups)
    qat = tq.fuse_modules_qat(rt.replace_relu(copy.deepcopy(stock)).train(), groups)
    qat_stock = tq.fuse_modules_qat(copy.deepcopy(stock).train(), groups)
    assert type(qat[0]) is nni.ConvBnReLU2d
    # QAT-fused modules train with stock's gradients, bit for bit.
    xs = [x.clone().requires_grad_(True) for _ in range(2)]
    for m, xi in zip((qat_stock, qat), xs):
        m(xi).square().sum().backward()
    assert_same_bits(xs[0].grad, xs[1].grad, "qat grad")
    assert_same_bits(qat_stock[0][0].weight.grad, qat[0][0].weight.grad, "qat weight grad")


def test_fuse_modules_on_a_replaced_resnet_block_as_a_user_calls_it():
    # The common recipe: conv1/bn1/relu of a torchvision-style block, fused in eval, then
    # inference: the same bits as the stock model fused the same way.
    import torch.ao.quantization as tq

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1, self.bn1, self.relu = nn.Conv2d(3, 8, 3, bias=False), nn.BatchNorm2d(8), nn.ReLU(inplace=True)

        def forward(self, x):
            return self.relu(self.bn1(self.conv1(x)))

    torch.manual_seed(1)
    stock = Block()
    stock.bn1.running_mean.uniform_(-1, 1)
    stock.bn1.running_var.uniform_(0.5, 2)
    stock.eval()
    ours = rt.replace_relu(copy.deepcopy(stock))
    assert isinstance(ours.relu, rt.ReLU)
    a, b = tq.fuse_modules(stock, [["conv1", "bn1", "relu"]]), tq.fuse_modules(ours, [["conv1", "bn1", "relu"]])
    assert b.conv1[1].inplace is True
    x = torch.randn(2, 3, 10, 10)
    with torch.no_grad():
        assert_same_bits(a(x), b(x), "fused block")


def test_prepare_fx_on_a_replaced_model_and_after_restore():
    # FX graph-mode quantization traces through relugrad's ReLU: relugrad::relu stays a float op
    # between dequantize and quantize, unfused. restore_relu first gives stock's quantized model.
    from torch.ao.quantization import get_default_qconfig_mapping
    from torch.ao.quantization.quantize_fx import convert_fx, prepare_fx
    torch.manual_seed(0)
    stock = nn.Sequential(nn.Conv2d(3, 4, 3), nn.ReLU(), nn.Flatten(), nn.Linear(4 * 10 * 10, 3)).eval()
    x = torch.randn(2, 3, 12, 12)

    def quantize(m):
        prepared = prepare_fx(m, get_default_qconfig_mapping("x86"), (x,))
        prepared(x)
        return convert_fx(prepared)

    want = quantize(copy.deepcopy(stock))(x)
    ours = rt.replace_relu(copy.deepcopy(stock)).eval()
    q = quantize(copy.deepcopy(ours))
    assert any(n.target in (torch.ops.relugrad.relu, torch.ops.relugrad.relu.default) for n in q.graph.nodes)
    assert q(x).shape == want.shape
    assert torch.equal(quantize(rt.restore_relu(ours))(x), want)


# ---- the functional scope under the tools ----------------------------------------------------

def test_functional_scope_under_export_compile_fx_and_script():
    x = torch.randn(3, 8)
    ours = rt.replace_relu(Functional(), functional=True)
    # torch.export runs the scope: every float relu is relugrad::relu (the integer one is aten's).
    ep = torch.export.export(ours, (x,))
    targets = Counter(n.target for n in ep.graph.nodes if n.op == "call_function")
    assert targets[torch.ops.relugrad.relu.default] == 8 and targets[torch.ops.aten.relu.default] == 1
    # torch.compile: dynamo routes six of the eight spellings through the scope; torch.relu_ and
    # F.relu_ reach its graph as torch.relu_ (torch's gradient: the same bits in the torch preset).
    # Under compile the torch preset's ReLU is stock's relu (relu_ in place) itself, the graph
    # relugrad::relu decomposed to: the three in-place spellings the scope serves add three more
    # torch.relu_ and the other three are torch.relu (with the integer relu the scope leaves: 4).
    graphs = []

    def backend(gm, example_inputs):
        graphs.append(gm)
        return gm.forward

    torch.compile(ours, backend=backend)(x)
    called = Counter(n.target for g in graphs for n in g.graph.nodes if n.op == "call_function")
    assert called[torch.ops.relugrad.relu] + called[torch.ops.relugrad.relu.default] == 0
    assert called[torch.relu] == 4 and called[torch.relu_] == 5  # torch.relu: 3 served, the integer one
    # FX calls the root's forward without its hooks: functional relu is recorded as written, and
    # a scope on the GraphModule serves it when the GraphModule runs.
    gm = torch.fx.symbolic_trace(ours)
    assert any(n.target is F.relu for n in gm.graph.nodes)
    gm = rt.replace_relu(gm, functional=True)
    gm(x)
    assert functional_scope(gm).served == 8
    # TorchScript compiles a model's hooks and could not compile the scope's: it compiles the
    # model without them (relugrad/_script.py), functional relu as written (aten's relu, stock's),
    # and the eager model keeps its scope.
    scripted = torch.jit.script(ours)
    assert "relugrad::relu" not in str(scripted.inlined_graph) and "aten::relu" in str(scripted.inlined_graph)
    torch.manual_seed(0)
    stock = Functional()
    stock.load_state_dict(ours.state_dict())
    assert_same_bits(stock(x)[0], scripted(x)[0], "scripted functional relu")
    served = functional_scope(ours).served
    ours(x)
    assert functional_scope(ours).served == served + 8

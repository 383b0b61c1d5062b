"""Every public entry of relugrad.torch given a wrong kind of argument raises a TypeError (a value
out of range or an unknown preset name: a ValueError) whose message starts with the argument's
name, as relugrad's NumPy API does; ReLU()(not a tensor) raises TypeError, as nn.ReLU does. FX
proxies still pass where tensors go (symbolic tracing records the ops)."""
import re

import pytest

torch = pytest.importorskip("torch")
from torch import nn  # noqa: E402

import relugrad.torch as rt  # noqa: E402

T = torch.ones(4)
MASK = torch.zeros(1, dtype=torch.uint8)


def model():
    return nn.Sequential(nn.Linear(2, 2), nn.ReLU())


# (label, call, exception type, the argument the message must start with)
CASES = [
    # model surgery
    ("replace_relu int", lambda: rt.replace_relu(42), TypeError, "model"),
    ("replace_relu None", lambda: rt.replace_relu(None), TypeError, "model"),
    ("replace_relu class", lambda: rt.replace_relu(nn.ReLU), TypeError, "model"),
    ("replace_relu semantics", lambda: rt.replace_relu(model(), semantics=1), ValueError, "semantics"),
    ("replace_relu threads", lambda: rt.replace_relu(model(), threads="2"), TypeError, "threads"),
    ("replace_relu mask", lambda: rt.replace_relu(model(), mask="yes"), TypeError, "mask"),
    ("replace_relu functional", lambda: rt.replace_relu(model(), functional=None), TypeError, "functional"),
    ("replace_relu strict", lambda: rt.replace_relu(model(), strict="x"), TypeError, "strict"),
    ("replace_relu return_report", lambda: rt.replace_relu(model(), return_report=2), TypeError, "return_report"),
    ("replace_relu fuse_linear", lambda: rt.replace_relu(model(), fuse_linear=[]), TypeError, "fuse_linear"),
    ("restore_relu int", lambda: rt.restore_relu(42), TypeError, "model"),
    ("restore_relu str", lambda: rt.restore_relu("model"), TypeError, "model"),
    ("restore_relu return_report", lambda: rt.restore_relu(model(), return_report="y"), TypeError, "return_report"),
    # modules: construction
    ("ReLU semantics", lambda: rt.ReLU(semantics=None), ValueError, "semantics"),
    ("ReLU inplace", lambda: rt.ReLU(inplace="yes"), TypeError, "inplace"),
    ("ReLU threads", lambda: rt.ReLU(threads=1.5), TypeError, "threads"),
    ("ReLU threads < 0", lambda: rt.ReLU(threads=-1), ValueError, "threads"),
    ("ReLU mask", lambda: rt.ReLU(mask="bits"), TypeError, "mask"),
    ("ReLUDropout p str", lambda: rt.ReLUDropout(p="0.5"), TypeError, "p"),
    ("ReLUDropout p None", lambda: rt.ReLUDropout(p=None), TypeError, "p"),
    ("ReLUDropout p > 1", lambda: rt.ReLUDropout(p=2), ValueError, "p"),
    ("ReLUDropout semantics", lambda: rt.ReLUDropout(semantics="pytorch"), ValueError, "semantics"),
    ("ReLUDropout threads", lambda: rt.ReLUDropout(threads="4"), TypeError, "threads"),
    ("ReLUDropout relu_inplace", lambda: rt.ReLUDropout(relu_inplace="no"), TypeError, "relu_inplace"),
    ("ReLUDropout dropout_inplace", lambda: rt.ReLUDropout(dropout_inplace=None), TypeError, "dropout_inplace"),
    ("LinearReLU in_features", lambda: rt.LinearReLU("2", 2), TypeError, "in_features"),
    ("LinearReLU out_features", lambda: rt.LinearReLU(2, 2.0), TypeError, "out_features"),
    ("LinearReLU in_features < 0", lambda: rt.LinearReLU(-1, 2), ValueError, "in_features"),
    ("LinearReLU relu_inplace", lambda: rt.LinearReLU(2, 2, relu_inplace="no"), TypeError, "relu_inplace"),
    ("LinearReLU threads", lambda: rt.LinearReLU(2, 2, threads="4"), TypeError, "threads"),
    # modules: calls (nn.ReLU, nn.Dropout and nn.Linear raise TypeError here too)
    ("ReLU()(list)", lambda: rt.ReLU()([1.0, -1.0]), TypeError, "x"),
    ("ReLU()(float)", lambda: rt.ReLU()(1.0), TypeError, "x"),
    ("ReLU()(None)", lambda: rt.ReLU()(None), TypeError, "x"),
    ("ReLU(mask, inplace)(list)", lambda: rt.ReLU(inplace=True, mask=True)([1.0]), TypeError, "x"),
    ("ReLUDropout()(list)", lambda: rt.ReLUDropout()([1.0]), TypeError, "x"),
    ("ReLUDropout().eval()(list)", lambda: rt.ReLUDropout().eval()([1.0]), TypeError, "x"),
    ("LinearReLU()(list)", lambda: rt.LinearReLU(2, 2)([1.0, 2.0]), TypeError, "x"),
    # hardtanh_grad
    ("hardtanh_grad dy", lambda: rt.hardtanh_grad([1.0] * 4, T, 0.0, 6.0), TypeError, "dy"),
    ("hardtanh_grad s", lambda: rt.hardtanh_grad(T, None, 0.0, 6.0), TypeError, "s"),
    ("hardtanh_grad min_val", lambda: rt.hardtanh_grad(T, T, "0", 6.0), TypeError, "min_val"),
    ("hardtanh_grad max_val", lambda: rt.hardtanh_grad(T, T, 0.0, None), TypeError, "max_val"),
    ("hardtanh_grad threads", lambda: rt.hardtanh_grad(T, T, 0.0, 6.0, "1"), TypeError, "threads"),
    # the ops, called as relugrad.torch's functions
    ("relu_grad dy", lambda: rt.relu_grad([1.0] * 4, T), TypeError, "dy"),
    ("relu_grad s", lambda: rt.relu_grad(T, 1.0), TypeError, "s"),
    ("relu_grad semantics", lambda: rt.relu_grad(T, T, 1), ValueError, "semantics"),
    ("relu_grad threshold", lambda: rt.relu_grad(T, T, "torch", "0"), TypeError, "threshold"),
    ("relu_grad alpha", lambda: rt.relu_grad(T, T, alpha=None), TypeError, "alpha"),
    ("relu_grad threads", lambda: rt.relu_grad(T, T, threads="0"), TypeError, "threads"),
    ("relu_grad threads < 0", lambda: rt.relu_grad(T, T, threads=-1), ValueError, "threads"),
    ("relu x", lambda: rt.relu([1.0]), TypeError, "x"),
    ("relu semantics", lambda: rt.relu(T, semantics=["torch"]), ValueError, "semantics"),
    ("relu threads", lambda: rt.relu(T, threads=2.0), TypeError, "threads"),
    ("relu threads < 0", lambda: rt.relu(T, threads=-2), ValueError, "threads"),
    ("relu_mask x", lambda: rt.relu_mask((1.0,)), TypeError, "x"),
    ("relu_mask semantics", lambda: rt.relu_mask(T, "relu"), ValueError, "semantics"),
    ("relu_mask threads", lambda: rt.relu_mask(T, threads=[1]), TypeError, "threads"),
    ("relu_mask storage_order", lambda: rt.relu_mask(T, storage_order="c"), TypeError, "storage_order"),
    ("relu_grad_mask dy", lambda: rt.relu_grad_mask([1.0], MASK), TypeError, "dy"),
    ("relu_grad_mask mask", lambda: rt.relu_grad_mask(T, [0]), TypeError, "mask"),
    ("relu_grad_mask mask dtype", lambda: rt.relu_grad_mask(T, torch.zeros(1)), TypeError, "mask"),
    ("relu_grad_mask semantics", lambda: rt.relu_grad_mask(T, MASK, None), ValueError, "semantics"),
    ("relu_grad_mask threads", lambda: rt.relu_grad_mask(T, MASK, threads="1"), TypeError, "threads"),
    ("relu_grad_mask dim_order", lambda: rt.relu_grad_mask(T, MASK, dim_order=0), TypeError, "dim_order"),
    # use_native (saved_bits checks its own bool: tested with saved_bits)
    ("use_native enabled", lambda: rt.use_native("off"), TypeError, "enabled"),
    ("use_native entries str", lambda: rt.use_native(False, entries="relu"), TypeError, "entries"),
    ("use_native entries int", lambda: rt.use_native(False, entries=1), TypeError, "entries"),
    ("use_native entries unknown", lambda: rt.use_native(False, entries=("nope",)), ValueError, "entries"),
]


@pytest.mark.parametrize("label,call,error,name", CASES, ids=[c[0] for c in CASES])
def test_wrong_kind_names_the_argument(label, call, error, name):
    with pytest.raises(error) as info:
        call()
    assert type(info.value) is error  # not a subclass standing in for it
    assert re.match(rf"{re.escape(name)}\b", str(info.value)), str(info.value)


def test_relu_raises_the_type_nn_relu_raises():
    for x in ([1.0, -1.0], 1.0, None):
        with pytest.raises(TypeError) as stock:
            nn.ReLU()(x)
        with pytest.raises(type(stock.value)):
            rt.ReLU()(x)


def test_the_ops_themselves_keep_the_dispatchers_checks():
    # torch.ops.relugrad.* are the registered ops: the dispatcher refuses a wrong kind there, as it
    # does for torch.ops.aten.relu.
    with pytest.raises(RuntimeError, match="dy"):
        torch.ops.relugrad.relu_grad([1.0], T)


def test_valid_arguments_still_accepted():
    x = torch.tensor([1.0, -2.0, 0.0, 3.0], requires_grad=True)
    assert torch.equal(rt.relu(x, threads=None), torch.relu(x))
    y, mask = rt.relu_mask(x.detach(), "torch", 0, storage_order=False)
    assert torch.equal(rt.relu_grad_mask(T, mask, dim_order=(0,)), torch.relu(x.detach()).gt(0).float())
    assert torch.equal(rt.relu_grad(T, x.detach(), "torch", 0, 0, 1), torch.relu(x.detach()).gt(0).float())
    assert rt.ReLU(inplace=1).inplace is True  # nn.ReLU(1) is how some models write it
    assert rt.ReLUDropout(p=0).p == 0.0
    assert rt.hardtanh_grad(T, x.detach(), 0, 6).tolist() == [1.0, 0.0, 0.0, 1.0]
    with rt.use_native(False, entries=["relu"]):
        pass


def test_fx_proxies_still_pass():
    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = rt.LinearReLU(4, 4)
            self.relu = rt.ReLU()
            self.drop = rt.ReLUDropout(0.5)

        def forward(self, x):
            return rt.relu(self.drop(self.relu(self.lin(x)))) + rt.relu_grad(x, x)

    net = Net().eval()
    gm = torch.fx.symbolic_trace(net)
    x = torch.randn(3, 4)
    assert torch.equal(gm(x), net(x))
    targets = [str(n.target) for n in gm.graph.nodes if n.op == "call_function"]
    # The three modules record relugrad::relu; the functions their ops' default overloads.
    assert targets.count("relugrad.relu") == 3
    assert "relugrad.relu.default" in targets and "relugrad.relu_grad.default" in targets


def test_replace_relu_keeps_a_stock_relu_with_an_odd_inplace():
    # A stock nn.ReLU takes any truthy inplace; replacing it must not refuse the model.
    m = nn.Sequential(nn.ReLU(inplace=None))
    rt.replace_relu(m)
    assert isinstance(m[0], rt.ReLU) and m[0].inplace is False

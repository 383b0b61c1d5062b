"""What a backward of relugrad.torch may be handed, each against stock's result: in-place writes
through views (the history a view carries), gradients that are not plain memory (a wrapper
subclass, the BatchedTensor of is_grads_batched), saved tensors a hook replaced, and a second
derivative whose only path to x runs through the saved output. Each runs through the C++ nodes
and through the Python Functions and custom ops that serve without them."""
import pytest

torch = pytest.importorskip("torch")
from torch import nn  # noqa: E402

import relugrad.torch as rt  # noqa: E402
from relugrad.torch import ReLUDropout  # noqa: E402
from torch_helpers import bits, values  # noqa: E402

two_tensor = pytest.importorskip("torch.testing._internal.two_tensor")


@pytest.fixture(params=["native", "python"])
def path(request):
    """The C++ entry and nodes, or (turned off) what serves when the library is absent."""
    if request.param == "native":
        if not rt.NATIVE:
            pytest.skip(f"the torch-native ReLU is not loaded: {rt.NATIVE_STATUS}")
        yield request.param
    else:
        with rt.use_native(False, entries=("relu", "relu_dropout")):
            yield request.param


# (name, stock module, relugrad module): every module whose backward reads a gradient.
MODULES = [
    ("relu", lambda: nn.ReLU(), lambda: rt.ReLU()),
    ("relu_inplace", lambda: nn.ReLU(inplace=True), lambda: rt.ReLU(inplace=True)),
    ("mask", lambda: nn.ReLU(), lambda: rt.ReLU(mask=True)),
    ("mask_inplace", lambda: nn.ReLU(inplace=True), lambda: rt.ReLU(inplace=True, mask=True)),
    ("relu_dropout", lambda: nn.Sequential(nn.ReLU(), nn.Dropout(0.5)), lambda: ReLUDropout(0.5)),
]
MODULE_IDS = [m[0] for m in MODULES]


def _views():
    return {
        "transpose": lambda h: h.t(),  # dense, not contiguous: the kernel writes x's memory
        "step_slice": lambda h: h[:, ::2],  # not dense: y is a copy written back into x
        "as_strided": lambda h: h.as_strided((3, 2), (1, 4)),
    }


@pytest.mark.parametrize("view", list(_views()))
@pytest.mark.parametrize("mask", [False, True], ids=["gate", "mask"])
def test_in_place_on_a_view_of_a_non_leaf_gives_stocks_gradient(path, view, mask):
    # The view's history must be read before the write: after it, the base's CopySlices is the
    # view's new history. Read after, the gradient skipped the ReLU (every x.grad element passed).
    def grad(module):
        x = values((4, 4), seed=3).requires_grad_()
        h = x * 1.0
        out = module(_views()[view](h))
        w = torch.arange(1.0, 1.0 + out.numel()).reshape(out.shape)
        ((out * w).sum() + h.sum()).backward()  # through the view and through its base
        return x.grad

    want = grad(nn.ReLU(inplace=True))
    got = grad(rt.ReLU(inplace=True, mask=mask))
    assert torch.equal(bits(want), bits(got))


def _run(module, x, grad_of):
    torch.manual_seed(7)  # the same dropout draw for stock and relugrad
    return grad_of(module(x * 1.0))


@pytest.mark.parametrize("name,stock,ours", MODULES, ids=MODULE_IDS)
def test_a_wrapper_subclass_gradient_gives_stocks_result(path, name, stock, ours):
    x = values((64,), seed=1).requires_grad_()
    a, b = values((64,), seed=2), values((64,), seed=3)

    def grad_of(y):
        x.grad = None
        (y * two_tensor.TwoTensor(a, b)).sum().backward()
        return x.grad

    want, got = _run(stock(), x, grad_of), _run(ours(), x, grad_of)
    assert type(got) is type(want)
    assert torch.equal(bits(want.a), bits(got.a)) and torch.equal(bits(want.b), bits(got.b))


@pytest.mark.parametrize("name,stock,ours", MODULES, ids=MODULE_IDS)
def test_batched_gradients_give_stocks_result(path, name, stock, ours):
    x = values((64,), seed=1).requires_grad_()
    g = values((3, 64), seed=4)

    def grad_of(y):
        return torch.autograd.grad(y, x, g, is_grads_batched=True)[0]

    want, got = _run(stock(), x, grad_of), _run(ours(), x, grad_of)
    assert torch.equal(bits(want), bits(got))


@pytest.mark.parametrize("module", [lambda: rt.ReLU(mask=True), lambda: ReLUDropout(0.5)],
                         ids=["mask", "relu_dropout"])
def test_a_hook_that_unpacks_a_short_bit_plane_gets_an_error_not_a_read_past_it(path, module):
    # The nodes read ceil(n/8) bytes of each saved bit plane: a hook that returns fewer must get
    # an error before any read (stock reads no bit planes: its y broadcasts instead).
    x = torch.randn(1 << 12, requires_grad=True)
    short = torch.zeros(1, dtype=torch.uint8)
    with torch.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: short.to(t.dtype)):
        y = module()(x * 1.0)
    with pytest.raises((RuntimeError, ValueError), match="mask|gate"):
        y.sum().backward()


@pytest.mark.parametrize("inplace", [False, True], ids=["out_of_place", "in_place"])
def test_a_second_derivative_through_the_saved_output_is_zero_as_stocks(path, inplace):
    # gx = threshold_backward(g, y): stock's formula for y is zeros_like(grad), so a function of
    # gx alone still reaches x (through y) and its gradient is zero, not "not used in the graph".
    def second(module):
        x = values((16,), seed=5).requires_grad_()
        h = x * 1.0
        (gx,) = torch.autograd.grad(module(h), x, torch.ones(16), create_graph=True)
        return torch.autograd.grad((gx * gx).sum(), x)[0]

    want = second(nn.ReLU(inplace=inplace))
    got = second(rt.ReLU(inplace=inplace))
    assert torch.equal(bits(want), bits(got))


@pytest.mark.parametrize("kind", ["wrapper", "batched"])
def test_linear_relu_takes_unusual_gradients_with_stocks_input_gradient(kind):
    # The fused node's pass reads raw memory: a wrapper or batched gradient takes stock's ops.
    torch.manual_seed(2)
    stock = nn.Sequential(nn.Linear(8, 8), nn.ReLU())
    ours = rt.LinearReLU(8, 8)
    ours.load_state_dict(stock[0].state_dict())
    x = values((4, 8), seed=6).nan_to_num().requires_grad_()

    def grad_of(module):
        x.grad = None
        y = module(x)
        if kind == "batched":
            return torch.autograd.grad(y, x, values((3, 4, 8), seed=7), is_grads_batched=True)[0]
        (y * two_tensor.TwoTensor(values((4, 8), seed=8), values((4, 8), seed=9))).sum().backward()
        return x.grad

    want, got = grad_of(stock), grad_of(ours)
    if kind == "batched":
        assert torch.equal(bits(want), bits(got))
    else:
        assert torch.equal(bits(want.a), bits(got.a)) and torch.equal(bits(want.b), bits(got.b))


@pytest.mark.parametrize("inplace", [False, True])
def test_mask_relu_raises_stocks_error_when_y_changed_in_place(inplace):
    """The mask alone would give the right gradient, but stock keeps y and raises when y was
    modified in place before the backward: so does the mask path (through a view too)."""
    errors = []
    for relu in (nn.ReLU(inplace=inplace), rt.ReLU(inplace=inplace, mask=True)):
        x = torch.tensor([-1.0, 2.0, -3.0, 4.0], requires_grad=True)
        y = relu(x * 1)
        y[1:].add_(1)
        with pytest.raises(RuntimeError) as info:
            y.sum().backward()
        errors.append(str(info.value))
    for e in errors:
        assert e.startswith("one of the variables needed for gradient computation has been modified by an "
                           "inplace operation: [torch.FloatTensor [4]]")
        assert "is at version 2; expected version 1 instead." in e if inplace else \
            "is at version 1; expected version 0 instead." in e


@pytest.mark.parametrize("steps", [1, 2], ids=["probe_step", "decided_step"])
def test_replaced_model_raises_where_stock_does_for_a_saved_tensor_changed_in_place(steps):
    """ReLU then Dropout(inplace=True): stock's backward refuses the y dropout overwrote, in the
    probe step (under the probe's saved-tensor hooks) and after the decision (mask kept)."""
    def model():
        torch.manual_seed(0)
        return nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Dropout(0.5, inplace=True), nn.Linear(16, 2))

    ours = rt.replace_relu(model(), mask=True)
    for step in range(steps):
        y = ours(torch.randn(5, 8))
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            y.sum().backward()
    stock_y = model()(torch.randn(5, 8))
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        stock_y.sum().backward()


def test_mask_relu_checks_no_version_under_saved_tensor_hooks_as_stock():
    """Autograd checks no version of a save made through saved-tensor hooks: stock trains when y
    changes in place after the forward, and so does the mask path under the same hooks."""
    for relu in (nn.ReLU(), rt.ReLU(mask=True)):
        x = torch.tensor([-1.0, 2.0, -3.0, 4.0], requires_grad=True)
        with torch.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: t):
            y = relu(x * 1)
        y.add_(1)
        y.sum().backward()  # no error in either


def test_mask_relu_checks_y_before_looking_at_the_gradient():
    """A backward that reaches the node with no gradient (a Function returning None for y) still
    raises for a y changed in place: stock's node unpacks y first."""
    class Drop(torch.autograd.Function):
        @staticmethod
        def forward(ctx, a, b):
            return a + b

        @staticmethod
        def backward(ctx, g):
            return None, g

    for relu in (nn.ReLU(), rt.ReLU(mask=True)):
        x = torch.tensor([-1.0, 2.0, -3.0], requires_grad=True)
        w = torch.ones(3, requires_grad=True)
        y = relu(x * 1)
        out = Drop.apply(y, w)
        y.add_(1)
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            out.sum().backward()


IN_PLACE = [
    ("relu", lambda x: torch.relu_(x), lambda: rt.ReLU(inplace=True)),
    ("mask", lambda x: torch.relu_(x), lambda: rt.ReLU(inplace=True, mask=True)),
]


def _in_place_outcome(fn, kind):
    """(error text or None, whether the memory changed, version steps) of fn on x of kind."""
    torch.manual_seed(0)
    leaf = (torch.randn(8) * 4).requires_grad_()
    x = {"leaf": lambda: leaf, "view": lambda: leaf[2:], "non_leaf": lambda: leaf * 1,
         "view_of_non_leaf": lambda: (leaf * 1)[2:]}[kind]()
    base = x if x._base is None else x._base
    before, version = base.detach().clone(), x._version
    try:
        fn(x)
        error = None
    except RuntimeError as e:
        error = str(e)
    return error, not torch.equal(before, base.detach()), x._version - version


@pytest.mark.parametrize("kind", ["leaf", "view", "non_leaf", "view_of_non_leaf"])
@pytest.mark.parametrize("name,stock,ours", IN_PLACE, ids=[c[0] for c in IN_PLACE])
def test_in_place_on_a_leaf_is_refused_before_the_write_and_versions_move_once(path, kind, name, stock, ours):
    # Stock refuses a leaf (or a view of one) that requires grad before writing it; where it
    # writes, the version moves by one.
    want, got = _in_place_outcome(stock, kind), _in_place_outcome(ours(), kind)
    assert got == want
    assert (want[0] is not None) == (kind in ("leaf", "view"))


BITS_ONLY = [
    ("mask", lambda t: torch.relu(t), lambda: rt.ReLU(mask=True)),
    ("mask_inplace", lambda t: torch.relu_(t), lambda: rt.ReLU(mask=True, inplace=True)),
    ("relu_dropout", lambda t: torch.nn.functional.dropout(torch.relu(t), 0.5, True), lambda: ReLUDropout(0.5)),
]


@pytest.mark.skipif(not rt.NATIVE, reason="the torch-native nodes are not loaded")
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("name,stock,ours", BITS_ONLY, ids=[c[0] for c in BITS_ONLY])
def test_a_second_derivative_through_the_bits_is_stocks(name, stock, ours, dtype):
    # The C++ nodes keep no y, yet under create_graph their result reaches x as stock's does
    # (through y, with a zero derivative): a gradient of it with respect to x is zeros, not "not
    # used in the graph", and a gradient penalty through a weight gets stock's bits.
    def second(f):
        torch.manual_seed(0)
        x = values((64,), seed=7).to(dtype).requires_grad_()
        (gx,) = torch.autograd.grad(f(x * 1.0), x, torch.ones(64, dtype=dtype), create_graph=True)
        (gxx,) = torch.autograd.grad((gx * gx).sum(), x)
        torch.manual_seed(1)
        w = values((64,), seed=8).to(dtype).requires_grad_()
        x2 = values((64,), seed=9).to(dtype).requires_grad_()
        y2 = (f(x2 * w) * torch.linspace(-2.0, 3.0, 64, dtype=dtype)).sum()
        (g2,) = torch.autograd.grad(y2, x2, create_graph=True)
        (gw,) = torch.autograd.grad(g2.square().sum(), w)
        return gx.requires_grad, gxx, gw

    want, got = second(stock), second(ours())
    assert want[0] is got[0] is True
    assert torch.equal(bits(want[1]), bits(got[1])) and torch.equal(bits(want[2]), bits(got[2]))


# The fused ReLU + Dropout C++ pass serves C-order x only: channels_last is the mask node's case.
HIGHER = [(name, stock, ours, layout) for name, stock, ours in BITS_ONLY
          for layout in (("contiguous",) if name == "relu_dropout" else ("contiguous", "channels_last"))]


@pytest.mark.skipif(not rt.NATIVE, reason="the torch-native nodes are not loaded")
@pytest.mark.parametrize("name,stock,ours,layout", HIGHER, ids=[f"{c[0]}-{c[3]}" for c in HIGHER])
def test_higher_derivatives_through_the_bits_keep_stocks_history_and_layout(name, stock, ours, layout):
    # Stock's zero derivative for y goes back through y's node, which gives it y's layout and,
    # under create_graph, a history reaching x again: every further derivative is zeros too.
    def derivatives(f):
        torch.manual_seed(0)
        x = values((2, 3, 4, 5), seed=11).requires_grad_()
        if layout == "channels_last":
            x = x.detach().to(memory_format=torch.channels_last).requires_grad_()
        torch.manual_seed(3)
        y = f(x * 1.0)
        (g,) = torch.autograd.grad((y * y).sum(), x, create_graph=True)
        (g2,) = torch.autograd.grad(g.sum(), x, create_graph=True)
        (g3,) = torch.autograd.grad(g2.sum(), x, allow_unused=False)
        return g, g2, g3

    want, got = derivatives(stock), derivatives(ours())
    for w, o in zip(want, got):
        assert torch.equal(bits(w), bits(o)) and w.stride() == o.stride()
    assert got[1].grad_fn is not None

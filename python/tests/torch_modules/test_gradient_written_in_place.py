"""ReLU's backward writes dx over the incoming gradient exactly when nothing else
can see that gradient (the native path's WritableInPlace), and never otherwise:
a hook's tensor, a retained or explicit gradient, a view of a shared buffer, a
node post hook's inputs and memory owned by NumPy keep their values. Either way
dx has the bits and strides of nn.ReLU's threshold_backward. A lazily negated
gradient (torch._neg_view) is read as its values on every path."""
import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="PyTorch is not installed in this environment")
import relugrad.torch as rt  # noqa: E402
from relugrad.torch import ReLUDropout  # noqa: E402
from relugrad.torch import LinearReLU  # noqa: E402
from torch_helpers import bits, eager_path, values  # noqa: E402,F401 (eager_path: a fixture)

DTYPES = [torch.float32, torch.float64, torch.float16, torch.bfloat16]
native_only = pytest.mark.skipif(not rt.NATIVE, reason=f"the torch-native ReLU is not loaded: {rt.NATIVE_STATUS}")


class Seen(torch.autograd.Function):
    """Identity whose backward records the gradient ReLU's backward returned (dx)."""
    record = {}

    @staticmethod
    def forward(ctx, x):
        return x.clone()

    @staticmethod
    def backward(ctx, dx):
        Seen.record.update(ptr=dx.data_ptr(), stride=dx.stride(), value=dx.clone())
        return dx


def _x(layout, dtype, seed=0):
    x = values((2, 3, 4, 5), dtype, seed)
    if layout == "channels_last":
        x = x.to(memory_format=torch.channels_last)
    return x.requires_grad_()


def _dx_of(relu, x, weight, hook=None):
    """dx of relu(Seen(x)) under loss (y * weight).sum(): MulBackward's fresh gradient reaches
    ReLU's backward; (dx, dx's strides, whether dx is the incoming gradient's memory)."""
    seen = {}
    y = relu(Seen.apply(x))
    y.register_hook(lambda g: seen.__setitem__("in", g.data_ptr()))
    if hook is not None:
        hook(y)
    (y * weight).sum().backward()
    return Seen.record["value"], Seen.record["stride"], Seen.record["ptr"] == seen["in"]


@native_only
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("layout", ["nchw", "channels_last"])
@pytest.mark.parametrize("mask", [False, True])
@pytest.mark.parametrize("inplace", [False, True])
def test_a_gradient_nobody_else_holds_becomes_dx(dtype, layout, mask, inplace):
    x = _x(layout, dtype)
    weight = values(x.shape, dtype, 1).to(memory_format=torch.channels_last if layout == "channels_last"
                                          else torch.contiguous_format)
    want, want_stride, stock_reused = _dx_of(torch.nn.ReLU(inplace=inplace), x, weight)
    got, got_stride, reused = _dx_of(rt.ReLU(mask=mask, inplace=inplace), x, weight)
    assert not stock_reused  # the check can tell: threshold_backward allocates
    assert reused
    assert got_stride == want_stride
    assert torch.equal(bits(got), bits(want))


def _stash_in_hook(y, kept):
    def hook(g):
        kept.append((g, g.clone()))
    y.register_hook(hook)


def _retain(y, kept):
    y.retain_grad()
    kept.append(y)


def _post_hook(y, kept):
    def hook(grad_inputs, grad_outputs):
        kept.append((grad_outputs[0], grad_outputs[0].clone()))
    y.grad_fn.register_hook(hook)


@pytest.mark.parametrize("holder", [_stash_in_hook, _retain, _post_hook])
@pytest.mark.parametrize("mask", [False, True])
def test_a_gradient_someone_holds_keeps_its_values(holder, mask, eager_path):
    x = _x("nchw", torch.float32)
    weight = values(x.shape, torch.float32, 1)
    want, _, _ = _dx_of(torch.nn.ReLU(), x, weight)
    kept = []
    got, _, reused = _dx_of(rt.ReLU(mask=mask), x, weight, hook=lambda y: holder(y, kept))
    assert torch.equal(bits(got), bits(want))
    if holder is _retain:
        # retain_grad keeps a copy (torch's retains-grad hook clones), so reuse is allowed
        assert torch.equal(bits(kept[0].grad), bits(weight))  # d(sum(y * w))/dy = w
    else:
        assert not reused
        held, copy = kept[0]
        assert torch.equal(bits(held), bits(copy))


@pytest.mark.parametrize("mask", [False, True])
def test_an_explicit_gradient_keeps_its_values(mask, eager_path):
    x = _x("nchw", torch.float32)
    g = values(x.shape, torch.float32, 2)
    copy = g.clone()
    rt.ReLU(mask=mask)(x * 1).backward(g)
    want = torch.nn.ReLU()(x.detach() * 1)
    assert torch.equal(bits(g), bits(copy))
    assert torch.equal(bits(x.grad), bits(torch.ops.aten.threshold_backward(g, want, 0)))


@pytest.mark.parametrize("combine", ["add", "cat"])
@pytest.mark.parametrize("mask", [False, True])
def test_one_gradient_sent_to_two_relus_reaches_both_intact(combine, mask, eager_path):
    # add's backward hands the same tensor to both inputs, cat's hands each a slice of one
    # buffer: the first ReLU's backward must not write over what the second reads.
    def grads(relu):
        a, b = (values((4, 8), torch.float32, s).requires_grad_() for s in (3, 4))
        ya, yb = relu(a * 1), relu(b * 1)
        out = ya + yb if combine == "add" else torch.cat([ya, yb])
        (out * values(out.shape, torch.float32, 5)).sum().backward()
        return a.grad, b.grad
    for got, want in zip(grads(rt.ReLU(mask=mask)), grads(torch.nn.ReLU())):
        assert torch.equal(bits(got), bits(want))


class FromNumpy(torch.autograd.Function):
    """Identity whose backward returns a gradient in a NumPy array's memory (kept alive)."""
    arrays = []

    @staticmethod
    def forward(ctx, y):
        return y.clone()

    @staticmethod
    def backward(ctx, g):
        array = g.detach().numpy().copy()
        FromNumpy.arrays.append((array, array.copy()))
        return torch.from_numpy(array)


@pytest.mark.parametrize("mask", [False, True])
def test_a_gradient_in_numpys_memory_keeps_its_values(mask, eager_path):
    x = _x("nchw", torch.float32)
    FromNumpy.arrays.clear()
    (FromNumpy.apply(rt.ReLU(mask=mask)(Seen.apply(x))) * values(x.shape, torch.float32, 1)).sum().backward()
    array, copy = FromNumpy.arrays[0]
    assert np.array_equal(array.view(np.int32), copy.view(np.int32))
    assert Seen.record["ptr"] != array.ctypes.data


class Negated(torch.autograd.Function):
    """Identity whose backward returns its gradient as a lazy negation of -g (same values)."""

    @staticmethod
    def forward(ctx, x):
        return x.clone()

    @staticmethod
    def backward(ctx, g):
        return torch._neg_view(g.neg())


def _lazy_negation_grads(module, x, seed):
    torch.manual_seed(seed)
    x.grad = None
    (Negated.apply(module(x * 1)) * values(x.shape, x.dtype, 7)).sum().backward()
    return x.grad


@pytest.mark.parametrize("mask", [False, True])
@pytest.mark.parametrize("inplace", [False, True])
@pytest.mark.parametrize("layout", ["nchw", "channels_last"])
def test_a_lazily_negated_gradient_is_read_as_its_values(mask, inplace, layout, eager_path):
    x = _x(layout, torch.float32)
    want = _lazy_negation_grads(torch.nn.ReLU(inplace=inplace), x, 0)
    got = _lazy_negation_grads(rt.ReLU(mask=mask, inplace=inplace), x, 0)
    assert got.stride() == want.stride()
    assert torch.equal(bits(got), bits(want))


def test_a_lazily_negated_input_gets_torchs_relu(eager_path):
    x = torch._neg_view(values((3, 5), torch.float32, 8))
    for mask in (False, True):
        assert torch.equal(bits(rt.ReLU(mask=mask)(x)), bits(torch.relu(x)))


def test_fused_modules_read_a_lazily_negated_gradient_as_its_values():
    x = values((4, 8), torch.float32, 9).requires_grad_()
    fused = ReLUDropout(p=0.5)
    stock = torch.nn.Sequential(torch.nn.ReLU(), torch.nn.Dropout(0.5))
    assert torch.equal(bits(_lazy_negation_grads(fused, x, 1)), bits(_lazy_negation_grads(stock, x, 1)))
    linear = LinearReLU(8, 8)
    stock_linear = torch.nn.Linear(8, 8)
    stock_linear.load_state_dict(linear.state_dict())
    got = _lazy_negation_grads(linear, x, 2)
    want = _lazy_negation_grads(torch.nn.Sequential(stock_linear, torch.nn.ReLU()), x, 2)
    assert torch.equal(bits(got), bits(want))
    assert torch.equal(bits(linear.bias.grad), bits(stock_linear.bias.grad))


@pytest.mark.parametrize("mask", [False, True])
def test_a_module_backward_hook_sees_grad_output_as_it_arrived(mask, eager_path):
    def seen(relu):
        kept = {}
        relu.register_full_backward_hook(lambda m, gi, go: kept.update(gi=gi[0].clone(), go=go[0].clone()))
        x = values((4, 8), torch.float32, 10).requires_grad_()
        (relu(x * 1) * values((4, 8), torch.float32, 11)).sum().backward()
        return kept
    got, want = seen(rt.ReLU(mask=mask)), seen(torch.nn.ReLU())
    for key in ("gi", "go"):
        assert torch.equal(bits(got[key]), bits(want[key]))


def _dropout_dx(module, x, weight, seed, hook=None):
    torch.manual_seed(seed)
    return _dx_of(module, x, weight, hook)


@native_only
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_relu_dropout_writes_dx_over_a_gradient_nobody_else_holds(dtype):
    x = _x("nchw", dtype)
    weight = values(x.shape, dtype, 1)
    stock = torch.nn.Sequential(torch.nn.ReLU(), torch.nn.Dropout(0.4))
    # Stock's dx may land on the freed memory of the gradient (dropout's mul frees it before
    # threshold_backward allocates), so only relugrad's side is asked: its node allocates, if at
    # all, while the gradient is still alive, so an equal address means written over.
    want, want_stride, _ = _dropout_dx(stock, x, weight, 3)
    got, got_stride, reused = _dropout_dx(ReLUDropout(0.4), x, weight, 3)
    assert reused
    assert got_stride == want_stride
    assert torch.equal(bits(got), bits(want))


@native_only
@pytest.mark.parametrize("holder", [_stash_in_hook, _post_hook])
def test_relu_dropout_leaves_a_held_gradient_alone(holder):
    x = _x("nchw", torch.float32)
    weight = values(x.shape, torch.float32, 1)
    stock = torch.nn.Sequential(torch.nn.ReLU(), torch.nn.Dropout(0.4))
    want, _, _ = _dropout_dx(stock, x, weight, 4)
    kept = []
    got, _, reused = _dropout_dx(ReLUDropout(0.4), x, weight, 4, hook=lambda y: holder(y, kept))
    assert torch.equal(bits(got), bits(want))
    assert not reused
    held, copy = kept[0]
    assert torch.equal(bits(held), bits(copy))
    # The caller's own gradient (the graph root keeps it) is not written over either.
    g = values(x.shape, torch.float32, 2)
    g_copy = g.clone()
    torch.manual_seed(5)
    ReLUDropout(0.4)(x * 1).backward(g)
    assert torch.equal(bits(g), bits(g_copy))

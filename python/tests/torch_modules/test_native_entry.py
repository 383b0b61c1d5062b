"""The torch-native ReLU's Python entry, relugrad._relugrad_torch.relu: it serves
exactly the plain CPU case (NotImplemented for everything else, so
relugrad.torch takes its other paths), rejects malformed arguments with a
Python error, and behaves as torch's own bindings do (in place returns x
itself, a profiler event, torch's exceptions)."""
import pytest
import torch
import torch.autograd.forward_ad as fwAD

import relugrad.torch as rt
from relugrad.torch import testing
from torch_helpers import bits

pytestmark = pytest.mark.skipif(not rt.NATIVE, reason=f"the torch-native ReLU is not loaded: {rt.NATIVE_STATUS}")


def entry(x, mask=False, inplace=False, semantics="torch"):
    return testing.native_entries()["relu"](x, semantics, 0, mask, inplace)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.float16, torch.bfloat16])
@pytest.mark.parametrize("make", [lambda t: t, lambda t: t.requires_grad_(True), torch.nn.Parameter,
                                  lambda t: t.t(), lambda t: t[:, ::2]])
def test_plain_cpu_tensors_are_served(dtype, make):
    x = make(torch.randn(6, 4).to(dtype))
    y = entry(x)
    assert isinstance(y, torch.Tensor)
    assert torch.equal(y, torch.relu(x.detach()))
    if x.requires_grad:
        assert y.grad_fn.name() == "relugrad::ReluBackward"


class _Subclass(torch.Tensor):
    pass


def _not_plain():
    yield "int dtype", torch.arange(4)
    yield "complex", torch.randn(4, dtype=torch.complex64)
    yield "meta", torch.empty(4, device="meta")
    yield "sparse", torch.randn(4, 4).to_sparse()
    yield "nested", torch.nested.nested_tensor([torch.randn(2), torch.randn(3)])
    yield "subclass", torch.randn(4).as_subclass(_Subclass)
    yield "zero tensor", torch._efficientzerotensor(4)
    yield "not a tensor", [1.0, -1.0]
    yield "None", None


@pytest.mark.parametrize("name,x", list(_not_plain()), ids=[n for n, _ in _not_plain()])
def test_everything_else_is_not_implemented(name, x):
    assert entry(x) is NotImplemented


def test_torch_func_wrappers_and_dispatch_modes_are_not_implemented():
    seen = []
    torch.func.grad(lambda a: seen.append(entry(a)) or a.sum())(torch.randn(3))
    torch.vmap(lambda a: seen.append(entry(a)) or a)(torch.randn(2, 3))
    from torch.utils._python_dispatch import TorchDispatchMode

    class Mode(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            return func(*args, **(kwargs or {}))

    with Mode():
        seen.append(entry(torch.randn(3)))
    assert seen == [NotImplemented] * 3


@pytest.mark.parametrize("mask", [False, True])
def test_dual_tensors_are_not_implemented_and_plain_ones_under_a_dual_level_are_served(mask):
    # Forward AD: the entry's nodes have no forward formula, so a tensor with a tangent goes to
    # Python's paths; one without a tangent needs none (relu of it has none) and is served.
    x = torch.randn(6, dtype=torch.float64, requires_grad=True)
    with fwAD.dual_level():
        assert entry(fwAD.make_dual(x, torch.randn(6, dtype=torch.float64)), mask=mask) is NotImplemented
        y = entry(x, mask=mask)
        assert y.grad_fn.name() == ("relugrad::ReluMaskBackward" if mask else "relugrad::ReluBackward")
        assert fwAD.unpack_dual(y).tangent is None
        assert torch.equal(y.detach(), torch.relu(x.detach()))
        g = torch.randn(6, dtype=torch.float64)
        y.backward(g)
    assert torch.equal(x.grad, torch.where(x.detach() > 0, g, torch.zeros_like(g)))


def test_module_under_a_dual_level_matches_stock_for_dual_and_plain_inputs():
    x = torch.randn(5, 3, dtype=torch.float64)
    t = torch.randn(5, 3, dtype=torch.float64)
    with fwAD.dual_level():
        ours = fwAD.unpack_dual(rt.ReLU()(fwAD.make_dual(x, t)))
        stock = fwAD.unpack_dual(torch.nn.ReLU()(fwAD.make_dual(x, t)))
        assert torch.equal(ours.primal, stock.primal) and torch.equal(ours.tangent, stock.tangent)
        plain = rt.ReLU()(x)
        assert fwAD.unpack_dual(plain).tangent is None and torch.equal(plain, torch.relu(x))
        # A view of a dual tensor carries its base's tangent (no tangent of its own until asked).
        ours = fwAD.unpack_dual(rt.ReLU()(fwAD.make_dual(x, t)[1:]))
        stock = fwAD.unpack_dual(torch.nn.ReLU()(fwAD.make_dual(x, t)[1:]))
        assert torch.equal(ours.primal, stock.primal) and torch.equal(ours.tangent, stock.tangent)
        a, b = fwAD.make_dual(x.clone(), t.clone()), fwAD.make_dual(x.clone(), t.clone())
        rt.ReLU(inplace=True)(a[1:])
        torch.nn.ReLU(inplace=True)(b[1:])
        assert torch.equal(fwAD.unpack_dual(a).primal, fwAD.unpack_dual(b).primal)
        assert torch.equal(fwAD.unpack_dual(a).tangent, fwAD.unpack_dual(b).tangent)


def test_jit_trace_records_an_op_instead():
    seen = []

    def f(a):
        seen.append(entry(a))
        return a * 2

    torch.jit.trace(f, torch.randn(3), check_trace=False)
    assert seen == [NotImplemented]


@pytest.mark.parametrize("semantics", ["torch", "jax"])
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_mask_without_recorded_history_writes_y_alone(semantics, dtype):
    # Nothing records a backward: the entry serves y (the mask forward's bits: torch.relu's for
    # the torch preset in 32 bits, the kernel's otherwise) and keeps no node and no mask.
    x = torch.tensor([float("nan"), -0.0, 0.0, -1.5, 2.0, float("inf"), -float("inf"), 3.0] * 5, dtype=dtype)
    want = torch.ops.relugrad.relu_mask(x, semantics)[0]
    y = entry(x, semantics=semantics, mask=True)
    assert y.grad_fn is None and torch.equal(bits(y), bits(want))
    with torch.no_grad():
        y = entry(x.clone().requires_grad_(), semantics=semantics, mask=True)
    assert y.grad_fn is None and torch.equal(bits(y), bits(want))
    y = entry(x.clone().requires_grad_(), semantics=semantics, mask=True)
    assert y.grad_fn.name() == "relugrad::ReluMaskBackward"


@pytest.mark.parametrize("mask", [False, True])
def test_in_place_returns_x_itself(mask):
    leaf = torch.randn(16, requires_grad=True)
    x = leaf * 1
    version = x._version
    y = entry(x, mask=mask, inplace=True)
    assert y is x
    assert x._version > version
    assert torch.equal(x.detach(), torch.relu(leaf.detach()))


def test_malformed_arguments_raise_type_errors():
    x = torch.randn(4)
    with pytest.raises(TypeError, match="takes 5 arguments, got 2"):
        testing.native_entries()["relu"](x, "torch")
    with pytest.raises(TypeError):
        testing.native_entries()["relu"](x, 7, 0, False, False)  # semantics not a str
    with pytest.raises(TypeError):
        testing.native_entries()["relu"](x, "torch", "0", False, False)  # threads not an int
    with pytest.raises(OverflowError):
        testing.native_entries()["relu"](x, "torch", 2**70, False, False)


def test_library_errors_are_torchs_runtime_errors():
    with pytest.raises(RuntimeError, match="relugrad"):
        entry(torch.randn(4), semantics="no-such-preset")
    with pytest.raises(RuntimeError, match="relugrad"):
        testing.native_entries()["relu"](torch.randn(4), "torch", -3, False, False)
    # a leaf that needs a gradient cannot be written in place: torch's own message
    with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
        entry(torch.randn(4, requires_grad=True), inplace=True)


def test_the_profiler_records_the_op():
    x = torch.randn(64, requires_grad=True)
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU]) as prof:
        entry(x)
        entry(x * 1, inplace=True)
    names = {e.name for e in prof.events()}
    assert {"relugrad_native::relu", "relugrad_native::relu_"} <= names

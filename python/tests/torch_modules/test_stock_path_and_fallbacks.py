"""relugrad.torch never fails where nn.ReLU works: tensors relugrad's
kernels cannot read (subclasses, DTensor, nested, meta, FakeTensorMode,
other dtypes, TorchDispatchModes) get torch's own ops or the custom ops'
fake kernels, with nn.ReLU's bits (torch preset) or the preset's bits; the
fast path's predicate accepts exactly plain dense CPU tensors; and with
nothing for autograd to record, ReLU(mask=True) keeps no mask."""
import os
import socket

import pytest

torch = pytest.importorskip("torch", reason="PyTorch is not installed in this environment")
from torch.utils._pytree import tree_map  # noqa: E402

import relugrad  # noqa: E402
import relugrad.torch as rt  # noqa: E402
from relugrad.torch import testing  # noqa: E402
from torch_helpers import bits, native_off, values  # noqa: E402,F401 (native_off: a fixture)
from cases import random_case, special_case, to_bits  # noqa: E402

import numpy as np  # noqa: E402


def as_torch(a):
    if a.dtype.itemsize == 2 and a.dtype.name == "bfloat16":
        return torch.from_numpy(to_bits(a).astype(np.int16)).view(torch.bfloat16)
    return torch.from_numpy(np.ascontiguousarray(a))


class Wrapper(torch.Tensor):
    """A __torch_dispatch__ wrapper subclass: unwraps, runs, rewraps."""

    @staticmethod
    def __new__(cls, elem):
        return torch.Tensor._make_wrapper_subclass(cls, elem.shape, strides=elem.stride(), dtype=elem.dtype,
                                                   device=elem.device, requires_grad=elem.requires_grad)

    def __init__(self, elem):
        self.elem = elem

    @classmethod
    def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
        def unwrap(t):
            return t.elem if isinstance(t, Wrapper) else t

        out = func(*tree_map(unwrap, args), **tree_map(unwrap, kwargs or {}))
        return tree_map(lambda t: Wrapper(t) if isinstance(t, torch.Tensor) else t, out)


def plain_reference(semantics, mask, x, g):
    """(y, dx) of the same module on plain tensors (nn.ReLU for the torch preset)."""
    module = torch.nn.ReLU() if semantics == "torch" and not mask else rt.ReLU(semantics)
    a = x.clone().requires_grad_(True)
    y = module(a)
    (dx,) = torch.autograd.grad(y, a, g)
    return y.detach(), dx


class _Subclass(torch.Tensor):
    pass


@pytest.mark.skipif(not rt.NATIVE, reason=f"the torch-native ReLU is not loaded: {rt.NATIVE_STATUS}")
def test_the_plain_tensor_rule_is_exact():
    """testing.plain(t, cuda), the native entries' rule that the fused modules ask: a torch.Tensor or
    nn.Parameter itself, strided (any strides) in CPU memory, of the four float dtypes, with no
    forward-mode tangent, no dispatch mode and no jit.trace; cuda=True adds plain CUDA tensors."""
    ok = [torch.randn(3, dtype=d) for d in (torch.float32, torch.float64, torch.float16, torch.bfloat16)]
    ok += [torch.nn.Parameter(torch.randn(3)), torch.randn(4, 4).t(), torch.randn(2, 3, 4, 5).to(
        memory_format=torch.channels_last), torch.randn(4, 6)[:, ::2], torch.randn(3, requires_grad=True)]
    assert [testing.plain(t, False) for t in ok] == [True] * len(ok)
    assert [testing.plain(t, True) for t in ok] == [True] * len(ok)
    from torch._subclasses.fake_tensor import FakeTensorMode
    with FakeTensorMode() as mode:
        fake = mode.from_tensor(torch.randn(3))
    not_ok = [torch.randn(3, device="meta"), Wrapper(torch.randn(3)), fake, torch.arange(3),
              torch.randn(3).to_sparse(), torch.nested.nested_tensor([torch.randn(2), torch.randn(3)]),
              torch.nested.nested_tensor([torch.randn(2, 2), torch.randn(3, 2)], layout=torch.jagged),
              torch.randn(3, dtype=torch.complex64), torch.zeros(3, dtype=torch.bool),
              torch.randn(3).as_subclass(_Subclass)]
    assert [testing.plain(t, False) for t in not_ok] == [False] * len(not_ok)
    assert [testing.plain(t, True) for t in not_ok] == [False] * len(not_ok)
    seen = []
    torch.func.grad(lambda a: seen.append(testing.plain(a, False)) or a.sum())(torch.randn(3))
    torch.vmap(lambda a: seen.append(testing.plain(a, False)) or a)(torch.randn(2, 3))
    import torch.autograd.forward_ad as fwAD
    with fwAD.dual_level():
        seen.append(testing.plain(fwAD.make_dual(torch.randn(3), torch.ones(3)), False))  # a tangent
        plain_in_level = testing.plain(torch.randn(3), False)  # no tangent of its own
    from torch.utils._python_dispatch import TorchDispatchMode

    class Mode(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            return func(*args, **(kwargs or {}))

    with Mode():
        seen.append(testing.plain(torch.randn(3), False))
    torch.jit.trace(lambda a: seen.append(testing.plain(a, False)) or a * 2, torch.randn(3), check_trace=False)
    assert seen == [False] * 5 and plain_in_level


@pytest.mark.parametrize("semantics", ["torch", "jax", "tensorflow"])
@pytest.mark.parametrize("mask", [False, True])
@pytest.mark.parametrize("kind", ["wrapper", "nested_strided", "nested_jagged", "dispatch_mode"])
def test_fallback_tensors_give_the_plain_bits(semantics, mask, kind):
    module = rt.ReLU(semantics, mask=mask)
    x, g = values((4, 6), seed=1), values((4, 6), seed=2)
    want_y, want_dx = plain_reference(semantics, mask, x, g)
    if kind == "wrapper":
        a = Wrapper(x.clone()).requires_grad_(True)
        y = module(a)
        (dx,) = torch.autograd.grad(y, a, Wrapper(g))
        assert type(y) is Wrapper and type(dx) is Wrapper
        got_y, got_dx = y.elem, dx.elem
    elif kind.startswith("nested"):
        layout = torch.jagged if kind == "nested_jagged" else torch.strided
        a = torch.nested.nested_tensor(list(x.unbind()), layout=layout, requires_grad=True)
        y = module(a)
        if layout is torch.jagged:  # the same ragged dim as y's
            gn = torch.nested.nested_tensor_from_jagged(g.reshape(-1), offsets=y.offsets())
        else:
            gn = torch.nested.nested_tensor(list(g.unbind()))
        (dx,) = torch.autograd.grad(y, a, gn)
        assert y.is_nested and dx.is_nested
        got_y, got_dx = torch.stack(y.unbind()), torch.stack(dx.unbind())
    else:
        from torch.utils._python_dispatch import TorchDispatchMode

        class Log(TorchDispatchMode):
            ops = []

            def __torch_dispatch__(self, func, types, args=(), kwargs=None):
                self.ops.append(str(func))
                return func(*args, **(kwargs or {}))

        a = x.clone().requires_grad_(True)
        with Log():
            got_y = module(a)
            (got_dx,) = torch.autograd.grad(got_y, a, g)
        assert any(op.startswith("relugrad.") for op in Log.ops), Log.ops  # the custom ops ran under the mode
    # mask=True: relugrad's y is torch.threshold(x, 0, 0) on the kernel paths;
    # torch's fallback ops give nn.ReLU's y. Values (and NaN) agree either way.
    if mask or semantics != "torch":
        assert torch.equal(torch.nan_to_num(got_y.detach(), 7.0), torch.nan_to_num(want_y, 7.0))
    else:
        assert torch.equal(bits(got_y), bits(want_y))
    assert torch.equal(bits(got_dx), bits(want_dx))


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def gloo_mesh():
    """A 1-D device mesh on a gloo process group of one (created here unless one exists)."""
    import torch.distributed as dist
    from torch.distributed.device_mesh import init_device_mesh
    if not dist.is_available():
        pytest.skip("torch.distributed is not available in this torch build")
    created = not dist.is_initialized()
    if created:
        os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(_free_port()))
        dist.init_process_group("gloo", rank=0, world_size=1)
    try:
        yield init_device_mesh("cpu", (1,))
    finally:
        if created:
            dist.destroy_process_group()


@pytest.mark.parametrize("mask", [False, True])
def test_dtensor_on_a_gloo_world_of_one(mask, gloo_mesh):
    from torch.distributed.tensor import Shard, distribute_tensor
    mesh = gloo_mesh
    x, g = values((8, 4), seed=3), values((8, 4), seed=4)
    for semantics in ("torch", "jax"):
        want_y, want_dx = plain_reference(semantics, mask, x, g)
        a = distribute_tensor(x.clone(), mesh, [Shard(0)]).requires_grad_(True)
        y = rt.ReLU(semantics, mask=mask)(a)
        (dx,) = torch.autograd.grad(y, a, distribute_tensor(g, mesh, [Shard(0)]))
        assert type(y).__name__ == "DTensor" and type(dx).__name__ == "DTensor"
        assert torch.equal(torch.nan_to_num(y.full_tensor(), 7.0), torch.nan_to_num(want_y, 7.0))
        assert torch.equal(bits(dx.full_tensor()), bits(want_dx))


def test_direct_op_calls_on_a_dtensor(gloo_mesh):
    # The ops have sharding strategies: relu and relu_grad keep any sharding (elementwise), the
    # mask ops run replicated; every result has the plain tensors' bits.
    from torch.distributed.tensor import Replicate, Shard, distribute_tensor
    mesh = gloo_mesh
    x, g = values((8, 4), seed=5), values((8, 4), seed=6)
    for placements in ([Shard(0)], [Shard(1)], [Replicate()]):
        for semantics in ("torch", "jax"):
            want_y = torch.ops.relugrad.relu(x, semantics, 0)
            want_dx = torch.ops.relugrad.relu_grad(g, want_y, semantics)
            want_ym, want_mask = torch.ops.relugrad.relu_mask(x, semantics, 0)
            want_dxm = torch.ops.relugrad.relu_grad_mask(g, want_mask, semantics, 0)
            a = distribute_tensor(x.clone(), mesh, placements).requires_grad_(True)
            gd = distribute_tensor(g, mesh, placements)
            y = torch.ops.relugrad.relu(a, semantics, 0)
            (dx,) = torch.autograd.grad(y, a, gd)
            assert tuple(y.placements) == tuple(placements) == tuple(dx.placements)
            assert torch.equal(bits(y.full_tensor()), bits(want_y))
            assert torch.equal(bits(dx.full_tensor()), bits(want_dx))
            ym, mask = torch.ops.relugrad.relu_mask(a.detach(), semantics, 0)
            dxm = torch.ops.relugrad.relu_grad_mask(gd, mask, semantics, 0)
            assert torch.equal(bits(ym.full_tensor()), bits(want_ym))
            assert torch.equal(mask.full_tensor(), want_mask)
            assert torch.equal(bits(dxm.full_tensor()), bits(want_dxm))


@pytest.mark.parametrize("mask", [False, True])
@pytest.mark.parametrize("inplace", [False, True])
def test_meta_and_fake_tensors_forward_and_backward(mask, inplace):
    # No data: the custom ops' fake kernels, backward included, with nn.ReLU's layouts.
    from torch._subclasses.fake_tensor import FakeTensorMode
    base = torch.randn(2, 3, 4, 5).to(memory_format=torch.channels_last)
    for make in ("meta", "fake"):
        results = []
        for module in (torch.nn.ReLU(inplace=inplace), rt.ReLU(inplace=inplace, mask=mask)):
            if make == "meta":
                leaf = base.to("meta").requires_grad_(True)
                h = leaf * 1
                y = module(h)
                (dx,) = torch.autograd.grad(y, h, torch.empty_like(y).contiguous())
            else:
                with FakeTensorMode():
                    leaf = torch.empty_strided(base.shape, base.stride(), requires_grad=True)
                    h = leaf * 1
                    y = module(h)
                    (dx,) = torch.autograd.grad(y, h, torch.empty_like(y).contiguous())
            results.append((y.shape, y.stride(), dx.shape, dx.stride(), dx.device.type, type(dx).__name__))
        assert results[0] == results[1], make


def test_other_dtypes_get_torch_relu():
    for x in (torch.arange(-3, 4), torch.arange(-3, 4, dtype=torch.int8)):
        assert torch.equal(rt.ReLU()(x), torch.relu(x))
        assert torch.equal(rt.ReLU(mask=True)(x), torch.relu(x))


@pytest.mark.parametrize("dtype", ["f32", "f64", "f16", "bf16"])
@pytest.mark.parametrize("semantics", relugrad.PRESETS)
def test_torch_op_formulas_equal_the_kernels(dtype, semantics):
    # The fallback's torch-op formulas against relugrad's kernels, gated on x
    # and on y = relu(x): bit for bit for f32/f64 (and every non-NaN element
    # of f16/bf16, where PyTorch's own vector loops make NaN bits depend on
    # the element's position: compared by class there).
    for dy, s in (special_case(dtype), random_case(dtype, n=3000)):
        dy, s = as_torch(dy), as_torch(s)
        for gate in (s, torch.relu(s)):
            want = rt.ops.relu_grad_kernel(dy, gate, semantics, 0.0, 0.0, 1)
            got = testing.stock_relu_grad(dy, gate, semantics, 0.0, 0.0)
            if dtype in ("f16", "bf16"):
                nan = torch.isnan(want)
                assert torch.equal(nan, torch.isnan(got))
                assert torch.equal(bits(want)[~nan], bits(got)[~nan])
            else:
                assert torch.equal(bits(want), bits(got))


@pytest.mark.parametrize("dtype", ["f32", "f64", "f16", "bf16"])
@pytest.mark.parametrize("inplace", [False, True])
def test_mask_relu_keeps_no_mask_when_autograd_records_nothing(dtype, inplace, monkeypatch, native_off):
    # no_grad, inference_mode, or an input that needs no gradient: y has the
    # bits of relu_mask's y and no mask is made: the mask ops are not called, and
    # the native entry allocates y alone (none in place; the kernel's bits go to a
    # scratch on the stack).
    for native in (True, False):
        if not native:
            native_off("relu")
        for semantics in relugrad.PRESETS:
            x = as_torch(special_case(dtype)[1])
            want = torch.ops.relugrad.relu_mask(x, semantics)[0]
            for ctx in (torch.no_grad, torch.inference_mode, torch.enable_grad):
                xi = x.clone()
                with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU],
                                            profile_memory=True) as prof:
                    with ctx():
                        y = rt.ReLU(semantics, inplace=inplace, mask=True)(xi)
                names = {e.name for e in prof.events()}
                assert not any(n.startswith("relugrad::") for n in names), names
                if native:
                    allocated = sum(max(e.self_cpu_memory_usage, 0) for e in prof.events())
                    assert allocated == (0 if inplace else y.nbytes), (semantics, ctx, names)
                assert torch.equal(bits(y), bits(want)), (semantics, ctx)
                if inplace:
                    assert y.data_ptr() == xi.data_ptr()


def test_inference_tensors():
    with torch.inference_mode():
        x = values((5, 7), seed=5)
        for mask in (False, True):
            want = testing.stock_relu_y(x, "torch", False) if mask else torch.relu(x)
            assert torch.equal(bits(rt.ReLU(mask=mask)(x)), bits(want))


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
def test_cuda_tensors_without_the_cuda_backend_warn_once_and_match_nn_relu():
    if relugrad.info()["backends"]["cuda"]:
        pytest.skip("this relugrad has the CUDA backend")
    import warnings
    x, g = values((4, 6), seed=6).cuda(), values((4, 6), seed=7).cuda()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        testing.reset_cuda_warning()
        for _ in range(3):
            a = x.clone().requires_grad_(True)
            y = rt.ReLU()(a)
            (dx,) = torch.autograd.grad(y, a, g)
    assert sum("no CUDA backend" in str(w.message) for w in caught) == 1
    want_y, want_dx = plain_reference("torch", False, x, g)
    assert torch.equal(bits(y), bits(want_y)) and torch.equal(bits(dx), bits(want_dx))


@pytest.mark.skipif(relugrad.info()["backends"]["cuda"], reason="this relugrad has the CUDA backend")
def test_cuda_without_the_cuda_backend_is_said_once():
    # Without a GPU here: a data-less wrapper that reports device cuda asks
    # the same question ReLU and the ops ask of a real CUDA tensor.
    import warnings

    class OnCuda(torch.Tensor):
        @classmethod
        def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
            raise NotImplementedError

    t = torch.Tensor._make_wrapper_subclass(OnCuda, (3,), dtype=torch.float32, device="cuda")
    testing.reset_cuda_warning()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert not any(testing.kernels_serve(t) for _ in range(3))
    messages = [str(w.message) for w in caught]
    assert len(messages) == 1 and "no CUDA backend" in messages[0] and "torch's own" in messages[0]
    assert testing.kernels_serve(torch.randn(3))


@pytest.mark.parametrize("ctx", [torch.no_grad, torch.inference_mode])
def test_in_place_relu_without_the_native_library_and_nothing_recorded_is_stocks(ctx, monkeypatch, native_off):
    """No history to record: the in-place ReLU is x.relu_() itself (x returned, one version
    bump, x's requires_grad kept), as nn.ReLU(inplace=True)."""
    native_off("relu")
    results = []
    for module in (torch.nn.ReLU(inplace=True), rt.ReLU(inplace=True)):
        x = torch.tensor([-1.0, 2.0, -3.0], requires_grad=True).clone()
        with ctx():
            y = module(x)
        results.append((y is x, y.requires_grad, x._version, bits(y)))
    assert results[0][:3] == results[1][:3] == (True, True, 1)
    assert torch.equal(results[0][3], results[1][3])

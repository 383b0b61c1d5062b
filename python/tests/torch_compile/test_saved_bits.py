"""relugrad.torch.saved_bits: the booleans a compiled training graph saves are saved as bits by
inductor's own generated code, and nothing else changes: outputs, every gradient and the RNG
stream are compiled stock's bits; off, the generated code is stock's, byte for byte."""
import copy
import warnings

import numpy as np
import pytest

torch = pytest.importorskip("torch")
from torch import nn  # noqa: E402

import relugrad.torch as rt  # noqa: E402
from relugrad import _compat  # noqa: E402
from relugrad.torch import compiled  # noqa: E402
from torch_helpers import bits  # noqa: E402

pytestmark = pytest.mark.skipif(isinstance(_compat.partitioner_hook(), str), reason="torch without the hook")


@pytest.fixture(autouse=True)
def no_compile_caches():
    """Every compile here runs the partitioner (a cache hit would replay an earlier graph and
    record no decisions)."""
    import torch._functorch.config as functorch_config
    from torch._inductor import config
    with config.patch(fx_graph_cache=False), functorch_config.patch(enable_autograd_cache=False):
        yield


def saved(fn):
    """(fn()'s result, [saved tensors]) as the compiled graph hands them to autograd."""
    kept = []

    def pack(t):
        kept.append(t)
        return t
    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        out = fn()
    return out, kept


def step(model, x, seed=1):
    """(output, [every parameter's and x's gradient], saved tensors, RNG state after)."""
    model.zero_grad(set_to_none=True)
    x = x.detach().requires_grad_(x.is_floating_point())
    torch.manual_seed(seed)
    out, kept = saved(lambda: model(x))
    out.float().square().sum().backward()
    grads = [p.grad for p in model.parameters()] + ([x.grad] if x.requires_grad else [])
    return out.detach(), grads, kept, torch.get_rng_state()


def compiled_step(model, x, on, **kw):
    """(step's result on the compiled model, the rewrite's decisions when it compiled)."""
    torch._dynamo.reset()
    compiled.decisions()
    with rt.saved_bits(on):
        cm = torch.compile(model, **kw)
        step(cm, x)  # compiles
        made = compiled.decisions()
        return step(cm, x), made


def compiled_backward(f, *args):
    """(tensors saved, the rewrite's decisions) of torch.compile(f)(*args).backward() with
    saved_bits on, from a fresh dynamo state."""
    torch._dynamo.reset()
    compiled.decisions()
    with rt.saved_bits(True):
        cf = torch.compile(f)
        out, kept = saved(lambda: cf(*args))
        made = compiled.decisions()
    out.backward()
    return kept, made


def assert_same(want, got):
    assert torch.equal(bits(want[0]), bits(got[0])), "outputs differ"
    assert len(want[1]) == len(got[1])
    for a, b in zip(want[1], got[1]):
        assert torch.equal(bits(a), bits(b)), "a gradient differs"
    assert torch.equal(want[3], got[3]), "the RNG stream differs"


def nbytes(kept):
    return sum(t.numel() * t.element_size() for t in kept)


class ReluDropout(nn.Module):
    def __init__(self, n_in=64, n_mid=256):
        super().__init__()
        self.a, self.b = nn.Linear(n_in, n_mid), nn.Linear(n_mid, n_in)
        self.drop = nn.Dropout(0.25)

    def forward(self, x):
        return self.b(self.drop(torch.relu(self.a(x))))


@pytest.mark.parametrize("pointwise_cat", [False, True])
def test_relu_gate_and_dropout_mask_saved_as_bits_with_stocks_bits(pointwise_cat):
    # pointwise_cat: the plane's cat lowered as one pointwise kernel, as inductor may lower it for
    # Triton, rather than as the ConcatKernel the CPU always gets.
    from torch._inductor import config
    torch.manual_seed(0)
    model, x = ReluDropout(), torch.randn(32, 64)
    with config.patch(force_pointwise_cat=pointwise_cat):  # read when compiling: at each first step
        stock, none = compiled_step(copy.deepcopy(model), x, False)
        ours, made = compiled_step(copy.deepcopy(model), x, True)
    assert none == [] and sorted(d.packed for d in made) == [True, True], made
    assert_same(stock, ours)
    bools = [t for t in stock[2] if t.dtype == torch.bool]
    packed = [t for t in ours[2] if t.dtype == torch.uint8]
    # One plane holds both (the gate and the mask: same shape, so as rows of 256 bits).
    assert len(bools) == 2 and len(packed) == 1 and not any(t.dtype == torch.bool for t in ours[2])
    assert packed[0].shape == (2 * 32, 256 // 8)
    assert nbytes(ours[2]) == nbytes(stock[2]) - 2 * 32 * 256 + 2 * 32 * 256 // 8


@pytest.mark.parametrize("n", [64, 65, 71, 72, 1001, 4096 + 3])
def test_packed_bits_are_lsb_first_in_memory_order_for_any_size(n):
    # A saved comparison of n elements: the packed plane is np.packbits(bitorder="little") of it,
    # the pad bits zero, and the backward reads it back exactly.
    def f(x, y):
        return torch.where(x > 0.5, y * 3, y)

    x = torch.rand(n)
    y = torch.randn(n, requires_grad=True)
    torch._dynamo.reset()
    with rt.saved_bits(True):
        cf = torch.compile(f)
        out, kept = saved(lambda: cf(x, y))
    out.sum().backward()
    (plane,) = [t for t in kept if t.dtype == torch.uint8]
    want = np.packbits((x > 0.5).numpy(), bitorder="little")
    assert plane.shape == ((n + 7) // 8,) and np.array_equal(plane.numpy(), want)
    assert torch.equal(y.grad, torch.where(x > 0.5, 3.0, 1.0))


@pytest.mark.parametrize("shapes,plane_shape", [(((65,), (100,)), (9 + 13,)),  # flattened, each padded
                                                (((4, 64), (4, 64)), (8, 8))])  # rows of one shape
def test_one_plane_holds_every_saved_boolean_each_from_its_own_byte(shapes, plane_shape):
    # Two saved comparisons: one uint8 plane, each one's bits (np.packbits, LSB first) starting on
    # a byte, in the order the backward graph reads them; the backward reads both back exactly.
    def f(x1, y1, x2, y2):
        return torch.where(x1 > 0.5, y1 * 3, y1).sum() + torch.where(x2 < 0.25, y2 * 5, y2).sum()

    torch.manual_seed(0)
    x1, x2 = torch.rand(shapes[0]), torch.rand(shapes[1])
    y1, y2 = torch.randn(shapes[0], requires_grad=True), torch.randn(shapes[1], requires_grad=True)
    kept, made = compiled_backward(f, x1, y1, x2, y2)
    assert [d.packed for d in made] == [True, True], made
    (plane,) = [t for t in kept if t.dtype == torch.uint8]
    assert plane.shape == plane_shape and not any(t.dtype == torch.bool for t in kept)
    a = np.packbits((x1 > 0.5).numpy().ravel(), bitorder="little")
    c = np.packbits((x2 < 0.25).numpy().ravel(), bitorder="little")
    got = plane.numpy().ravel()
    assert np.array_equal(got, np.concatenate([a, c])) or np.array_equal(got, np.concatenate([c, a]))
    assert torch.equal(y1.grad, torch.where(x1 > 0.5, 3.0, 1.0))
    assert torch.equal(y2.grad, torch.where(x2 < 0.25, 5.0, 1.0))


def test_booleans_read_by_separate_backward_kernels_are_unpacked_each_from_its_bytes():
    # Two 1-D saved comparisons whose backward readers a scan (cumsum's backward) separates: two
    # unpacks of one plane, each from its own bytes; both gradients exact.
    def f(x1, y1, x2, y2):
        return torch.where(x1 > 0.5, y1 * 3, y1).cumsum(0).sum() + torch.where(x2 < 0.25, y2 * 5, y2).sum()

    n1, n2 = 128, 200
    torch.manual_seed(0)
    x1, x2 = torch.rand(n1), torch.rand(n2)
    y1, y2 = torch.randn(n1, requires_grad=True), torch.randn(n2, requires_grad=True)
    kept, made = compiled_backward(f, x1, y1, x2, y2)
    assert [d.packed for d in made] == [True, True], made
    (plane,) = [t for t in kept if t.dtype == torch.uint8]
    assert plane.shape == ((n1 + n2) // 8,)
    assert torch.equal(y1.grad, torch.where(x1 > 0.5, 3.0, 1.0) * torch.arange(n1, 0, -1, dtype=torch.float32))
    assert torch.equal(y2.grad, torch.where(x2 < 0.25, 5.0, 1.0))


def test_word_ops_outside_inductor_pack_and_unpack_every_byte_value():
    # relugrad::pack_words / unpack_words run as torch ops where inductor does not lower them
    # (a graph run eagerly): every pattern of 8 bools, each byte value, both ways.
    patterns = torch.tensor([[(v >> k) & 1 for k in range(8)] for v in range(256)], dtype=torch.bool)
    words = patterns.reshape(-1).view(torch.int64)
    packed = torch.ops.relugrad.pack_words(words)
    assert packed.dtype == torch.uint8 and torch.equal(packed, torch.arange(256, dtype=torch.uint8))
    assert np.array_equal(packed.numpy(), np.packbits(patterns.numpy(), axis=1, bitorder="little").ravel())
    assert torch.equal(torch.ops.relugrad.unpack_words(packed).view(torch.bool), patterns.reshape(-1))


def test_channels_last_gate_packed_in_memory_order():
    # A gate saved with channels_last strides is packed in its memory order and read back with
    # the same strides; the conv's gradients are stock's bits.
    torch.manual_seed(0)
    model = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), nn.Conv2d(8, 4, 1)).to(
        memory_format=torch.channels_last)
    x = torch.randn(2, 3, 8, 8).to(memory_format=torch.channels_last)
    stock, _ = compiled_step(copy.deepcopy(model), x, False)
    ours, _ = compiled_step(copy.deepcopy(model), x, True)
    assert_same(stock, ours)
    assert nbytes(ours[2]) <= nbytes(stock[2])


class Leftovers(nn.Module):
    """A saved boolean that is also an output, one that is small, and a bool input."""

    def forward(self, x, keep):
        m = x > 0
        small = x[:2, :4] > 0.5
        y = torch.where(m, x * 2, x) + torch.where(keep, x, 0.0)
        z = torch.where(small, x[:2, :4] * 5, 0.0)
        return y.sum() + z.sum(), m


def test_what_is_left_and_why():
    x = torch.randn(16, 16, requires_grad=True)
    keep = torch.rand(16, 16) > 0.5
    torch._dynamo.reset()
    with rt.saved_bits(True):
        f = torch.compile(Leftovers())
        (loss, m), kept = saved(lambda: f(x, keep))
        loss.backward()
        made = {d.reason for d in compiled.decisions()}
    assert "also a graph output" in made, made
    assert f"fewer than {compiled.MIN_ELEMENTS} elements" in made, made
    assert "a graph input" in made, made
    assert not any(d for d in made if d == "packed"), made
    g = x.grad.clone()
    x.grad = None
    Leftovers()(x, keep)[0].backward()
    assert torch.equal(g, x.grad)


def test_dynamic_shapes_are_left_and_stay_exact():
    torch.manual_seed(0)
    model = ReluDropout()
    xs = [torch.randn(batch, 64) for batch in (32, 40)]
    torch._dynamo.reset()
    compiled.decisions()
    with rt.saved_bits(True):
        cm = torch.compile(copy.deepcopy(model), dynamic=True)
        got = [step(cm, x) for x in xs]
        made = compiled.decisions()
    assert made and all(d.reason == "symbolic shape" and not d.packed for d in made), made
    torch._dynamo.reset()
    ref = torch.compile(copy.deepcopy(model), dynamic=True)
    for x, g in zip(xs, got):
        assert_same(step(ref, x), g)


def test_off_is_stocks_generated_code_byte_for_byte():
    from torch._inductor.utils import run_fw_bw_and_get_code
    torch.manual_seed(0)
    model, x = ReluDropout(), torch.randn(32, 64)

    def code():
        # The generated modules, but for their first line: "# AOT ID: ['<n>_forward']", n counting
        # compilations in the process.
        torch._dynamo.reset()
        torch.manual_seed(1)
        return [c.split("\n", 1)[1] for c in run_fw_bw_and_get_code(lambda: torch.compile(model)(x).sum())[1]]
    from torch._inductor import config
    stock = code()
    with rt.saved_bits(True):
        on = code()
        assert config.custom_partitioner_fn is not None
    assert config.custom_partitioner_fn is None
    off = code()
    assert off == stock
    assert on != stock  # the switch does something: the packed planes


def test_replace_relu_mask_then_compile_packs_with_no_other_step():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(64, 256), nn.ReLU(), nn.Dropout(0.1), nn.Linear(256, 64))
    x = torch.randn(32, 64)
    stock, _ = compiled_step(copy.deepcopy(model), x, False)
    assert not rt.saved_bits.__module__ or not compiled.is_enabled()
    ours_model = rt.replace_relu(copy.deepcopy(model), mask=True)
    assert compiled.is_enabled()
    torch._dynamo.reset()
    cm = torch.compile(ours_model)
    step(cm, x)
    made = compiled.decisions()
    got = step(cm, x)
    assert [d.packed for d in made] == [True, True], made
    assert_same(stock, got)
    assert nbytes(got[2]) < nbytes(stock[2])


def test_transformer_compiled_with_bits_is_stocks_bits_and_keeps_less():
    torch.manual_seed(0)
    layer = nn.TransformerEncoderLayer(32, 2, 64, dropout=0.1, batch_first=True)
    model = nn.TransformerEncoder(layer, 2, enable_nested_tensor=False)
    x = torch.randn(4, 16, 32)
    stock, _ = compiled_step(copy.deepcopy(model), x, False)
    torch._dynamo.reset()
    ours = rt.replace_relu(copy.deepcopy(model), mask=True)
    cm = torch.compile(ours)
    step(cm, x)
    made = compiled.decisions()
    got = step(cm, x)
    assert made and all(d.packed for d in made), made
    assert_same(stock, got)
    bools = sum(t.numel() for t in stock[2] if t.dtype == torch.bool)
    assert nbytes(got[2]) == nbytes(stock[2]) - bools + sum((d.shape and np.prod(d.shape) + 7) // 8 for d in made)


@pytest.mark.parametrize("name", ["resnet18", "mobilenet_v3_small"])
def test_torchvision_models_compiled_with_bits_are_stocks_bits(name):
    tv = pytest.importorskip("torchvision")
    torch.manual_seed(0)
    model = getattr(tv.models, name)(num_classes=10)
    x = torch.randn(2, 3, 32, 32)
    stock, _ = compiled_step(copy.deepcopy(model), x, False)
    ours, _ = compiled_step(rt.replace_relu(copy.deepcopy(model), mask=True), x, True)
    assert_same(stock, ours)
    assert nbytes(ours[2]) <= nbytes(stock[2])


def test_a_torch_without_the_hook_warns_once_and_compiles_stocks_graph(monkeypatch):
    monkeypatch.setattr(_compat, "partitioner_hook", lambda: "torch 0.0 has no inductor partitioner hook")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        compiled._state["warned"].discard("hook")
        rt.saved_bits(True)
        rt.saved_bits(True)
    msgs = [str(w.message) for w in caught if "saved_bits" in str(w.message)]
    assert msgs == ["relugrad.torch.saved_bits: torch 0.0 has no inductor partitioner hook; compiled graphs "
                    "save booleans as stock does"], msgs
    assert not compiled.is_enabled()
    from torch._inductor import config
    assert config.custom_partitioner_fn is None


def test_another_backend_warns_once_and_keeps_stocks_graph():
    compiled._state["warned"].discard("backend")
    x = torch.randn(32, 64)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for _ in range(2):
            torch._dynamo.reset()  # forgets dynamo's callbacks: saved_bits() registers its check again
            with rt.saved_bits(True):
                f = torch.compile(ReluDropout(), backend="aot_eager")
                _, kept = saved(lambda: f(x))
    msgs = [str(w.message) for w in caught if "saved_bits" in str(w.message)]
    assert len(msgs) == 1 and "'aot_eager' is not inductor" in msgs[0], msgs
    assert any(t.dtype == torch.bool for t in kept)


def test_the_switch_takes_a_bool_and_restores_as_a_context_manager():
    with pytest.raises(TypeError, match="enabled must be a bool"):
        rt.saved_bits("yes")
    assert not compiled.is_enabled()
    with rt.saved_bits():
        assert compiled.is_enabled()
        with rt.saved_bits(False):
            assert not compiled.is_enabled()
        assert compiled.is_enabled()
    assert not compiled.is_enabled()


def test_a_rewrite_that_fails_leaves_stocks_partition_and_warns_once(monkeypatch):
    def broken(*args):
        raise RuntimeError("seeded")
    monkeypatch.setattr(compiled, "rewrite", broken)
    compiled._state["warned"].discard("rewrite")
    torch.manual_seed(0)
    model, x = ReluDropout(), torch.randn(32, 64)
    stock, _ = compiled_step(copy.deepcopy(model), x, False)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        ours, made = compiled_step(copy.deepcopy(model), x, True)
    msgs = [str(w.message) for w in caught if "saved_bits" in str(w.message)]
    assert len(msgs) == 1 and "the rewrite failed (RuntimeError: seeded)" in msgs[0], msgs
    assert made == [] and nbytes(ours[2]) == nbytes(stock[2])
    assert_same(stock, ours)

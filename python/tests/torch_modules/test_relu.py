"""relugrad.torch: custom ops (opcheck), the autograd ReLU (bit-equal to
PyTorch's gradients in the torch preset, gradcheck), replace_relu, and
relugrad.relu_grad on torch tensors (zero copy, same kind back)."""
import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="PyTorch is not installed in this environment")
import relugrad  # noqa: E402
import relugrad.torch as rt  # noqa: E402
from torch_helpers import bits, eager_path, native_off  # noqa: E402,F401 (eager_path: a fixture)
from cases import random_case, special_case, to_bits  # noqa: E402

TORCH_DTYPES = {"f32": torch.float32, "f64": torch.float64, "f16": torch.float16, "bf16": torch.bfloat16}


def as_torch(a):
    if a.dtype.itemsize == 2 and a.dtype.name == "bfloat16":
        return torch.from_numpy(to_bits(a).astype(np.int16)).view(torch.bfloat16)
    return torch.from_numpy(np.ascontiguousarray(a))


def test_relu_grad_on_tensors_is_zero_copy_and_returns_tensors():
    dy = torch.randn(1000)
    x = torch.randn(1000)
    dx = relugrad.relu_grad(dy, x)
    assert isinstance(dx, torch.Tensor) and dx.dtype == dy.dtype
    assert torch.equal(dx, torch.ops.aten.threshold_backward(dy, x, 0.0))
    before = dy.data_ptr()
    out = relugrad.relu_grad(dy, x, out=dy)  # in place: same storage
    assert out is dy and dy.data_ptr() == before


@pytest.mark.parametrize("dtype", ["f32", "f64", "f16", "bf16"])
@pytest.mark.parametrize("semantics", ["torch", "tensorflow", "jax", "onednn", "mindspore"])
def test_tensors_give_the_bits_of_numpy_arrays(dtype, semantics):
    # CPU tensors go to the library by address (Plan.run_host), NumPy
    # arrays through the checked plan call: the same bits, special values
    # (negative NaNs tell f16 from bf16) and every preset, allocating, with
    # out= and through the custom op.
    dy, s = special_case(dtype)
    want = bits(as_torch(relugrad.relu_grad(dy, s, semantics=semantics)))
    tdy, ts = as_torch(dy), as_torch(s)
    assert torch.equal(bits(relugrad.relu_grad(tdy, ts, semantics=semantics)), want)
    out = torch.empty_like(tdy)
    assert relugrad.relu_grad(tdy, ts, semantics=semantics, out=out) is out
    assert torch.equal(bits(out), want)
    assert torch.equal(bits(torch.ops.relugrad.relu_grad(tdy, ts, semantics)), want)


def test_tensor_errors_name_the_argument():
    with pytest.raises(ValueError, match="s: array is not C-contiguous"):
        relugrad.relu_grad(torch.ones(4, 4), torch.ones(4, 4).t())
    with pytest.raises(TypeError, match="dy: dtype int64"):
        relugrad.relu_grad(torch.ones(4, dtype=torch.int64), torch.ones(4, dtype=torch.int64))
    with pytest.raises(TypeError, match="s: dtype"):
        relugrad.relu_grad(torch.ones(4), torch.ones(4, dtype=torch.float64))


@pytest.mark.parametrize("dtype", ["f32", "f64", "f16", "bf16"])
def test_opcheck_relu_grad(dtype):
    dy, s = random_case(dtype, n=64)
    args = (as_torch(dy), as_torch(s), "torch", 0.0, 0.0, 0)
    torch.library.opcheck(torch.ops.relugrad.relu_grad.default, args)


def test_opcheck_relu_with_grad():
    x = torch.randn(3, 5, dtype=torch.float64, requires_grad=True)
    for semantics in ("torch", "tensorflow", "jax", "onednn"):
        torch.library.opcheck(torch.ops.relugrad.relu.default, (x, semantics, 1))


@pytest.mark.parametrize("semantics", ["torch", "tensorflow", "jax", "onednn"])
def test_gradcheck(semantics):
    # Away from 0 the ReLU is smooth, so finite differences are exact enough.
    x = torch.randn(40, dtype=torch.float64)
    x = (x + 0.1 * torch.sign(x)).requires_grad_(True)
    assert torch.autograd.gradcheck(lambda a: rt.ReLU(semantics)(a), (x,))
    assert torch.autograd.gradgradcheck(lambda a: rt.ReLU(semantics)(a) ** 2, (x,))


def relu_vs_torch(dtype, case, relu):
    """torch.relu and `relu` forward and backward on the same special or
    random case: (x, relu's output, torch's gradient, relu's gradient)."""
    dy, x = special_case(dtype) if case == "special" else random_case(dtype, n=10_000)
    xt, gt = as_torch(x), as_torch(dy)
    a = xt.clone().requires_grad_(True)
    torch.relu(a).backward(gt)
    b = xt.clone().requires_grad_(True)
    y = relu(b)
    y.backward(gt)
    return xt, y.detach(), a.grad, b.grad


def assert_grads_bit_equal(dtype, want, got):
    """Bit-equal gradients; f16/bf16 NaNs by class only, since PyTorch's own
    16-bit NaN bits depend on the element's position (docs/python.md)."""
    if dtype in ("f16", "bf16"):
        both_nan = torch.isnan(want) & torch.isnan(got)
        assert torch.equal(bits(want)[~both_nan], bits(got)[~both_nan])
        assert torch.equal(torch.isnan(want), torch.isnan(got))
    else:
        assert torch.equal(bits(want), bits(got))


@pytest.mark.parametrize("dtype", ["f32", "f64", "f16", "bf16"])
@pytest.mark.parametrize("case", ["special", "random"])
def test_autograd_bit_equal_to_pytorch(dtype, case):
    # f16/bf16 NaN bits from PyTorch's vectorised loop depend on the element's
    # position (docs/python.md): compared by NaN class there, bits elsewhere.
    xt, y, want, got = relu_vs_torch(dtype, case, rt.ReLU("torch"))
    assert torch.equal(bits(y), bits(torch.relu(xt)))
    assert_grads_bit_equal(dtype, want, got)


def test_replace_relu_swaps_modules_and_keeps_gradients():
    torch.manual_seed(0)
    model = torch.nn.Sequential(
        torch.nn.Conv2d(1, 4, 3), torch.nn.ReLU(inplace=True),
        torch.nn.Sequential(torch.nn.Flatten(), torch.nn.Linear(4 * 6 * 6, 8), torch.nn.ReLU()),
        torch.nn.Linear(8, 3))
    import copy
    ours = rt.replace_relu(copy.deepcopy(model))
    kinds = [type(m) for m in ours.modules()]
    assert torch.nn.ReLU not in kinds and kinds.count(rt.ReLU) == 2
    x = torch.randn(5, 1, 8, 8)
    for m in (model, ours):
        m.zero_grad()
        m(x).square().sum().backward()
    for p, q in zip(model.parameters(), ours.parameters()):
        assert torch.equal(p.grad, q.grad)
    assert isinstance(rt.replace_relu(torch.nn.ReLU()), rt.ReLU)


def test_bad_arguments_are_rejected():
    with pytest.raises(ValueError, match="semantics"):
        rt.ReLU("caffe")
    with pytest.raises(ValueError, match="threads"):
        rt.ReLU("torch", threads=-1)
    for threads in (2**31, 2**32):  # beyond the C ABI's int32: refused, never wrapped
        with pytest.raises(ValueError, match="threads: at most 2147483647"):
            rt.ReLU("torch", threads=threads)


def test_threads_one_gives_the_same_gradients():
    x = torch.randn(300_000)
    g = torch.randn(300_000)
    grads = []
    for threads in (0, 1):
        a = x.clone().requires_grad_(True)
        rt.ReLU("torch", threads=threads)(a).backward(g)
        grads.append(a.grad)
    assert torch.equal(bits(grads[0]), bits(grads[1]))


def _assert_took_path(y, path, mask):
    if path == "native":
        name = "relugrad::ReluMaskBackward" if mask else "relugrad::ReluBackward"
        assert y.grad_fn.name() == name, f"eager ReLU did not take the native path: {y.grad_fn.name()}"
    else:
        name = "_ReluMaskOpBackward" if mask else "_ReluOpBackward"
        assert type(y.grad_fn).__name__ == name, f"eager ReLU did not take the custom ops: {y.grad_fn.name()}"


def test_native_relu_is_loaded_wherever_it_was_built():
    # The package ships _relugrad_torch.so with a stamp of the torch it was
    # built against (make python-install builds it). If both are there and
    # match this torch, it must load: a silent fallback would hide a broken
    # build behind the slower path through the custom ops.
    import os

    import relugrad
    here = os.path.dirname(relugrad.__file__)  # the package root, where the wheel puts the library
    stamp = os.path.join(here, "_relugrad_torch.torch_version")
    if not os.path.exists(stamp):
        pytest.skip("this relugrad was built without torch: no _relugrad_torch.so to load")
    with open(stamp, encoding="utf-8") as f:
        built_for = f.read().strip()
    if built_for != torch.__version__:
        assert not rt.NATIVE and "rebuild" in rt.NATIVE_STATUS
        return
    assert rt.NATIVE, rt.NATIVE_STATUS
    assert rt.NATIVE_STATUS == "loaded"
    y = rt.ReLU()(torch.randn(4, requires_grad=True) * 1)
    _assert_took_path(y, "native", mask=False)


_WITHOUT_NATIVE = """
import json, warnings
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    import torch
    import relugrad.torch as rt
    from relugrad.torch import testing
    x = torch.randn(64, dtype=torch.float64) * 1
    a, b = x.clone().requires_grad_(True), x.clone().requires_grad_(True)
    y = rt.ReLU()(a)
    y.backward(x)
    torch.nn.ReLU()(b).backward(x)
    # No library, no plain tensor (its rule is the library's): the fused modules run their two modules.
    dropped = rt.ReLUDropout(0.5)(x.clone().requires_grad_(True))
    linear = rt.LinearReLU(64, 8, dtype=torch.float64)(x.clone().requires_grad_(True))
print(json.dumps({"native": rt.NATIVE, "status": rt.NATIVE_STATUS, "node": type(y.grad_fn).__name__,
                  "same": torch.equal(a.grad, b.grad), "plain": testing.plain(x, False),
                  "fused_nodes": [type(t.grad_fn).__name__ for t in (dropped, linear)],
                  "warnings": [str(w.message) for w in caught if issubclass(w.category, RuntimeWarning)]}))
"""


@pytest.mark.parametrize("disabled", [False, True])
def test_without_the_native_library_eager_relu_runs_the_ops_and_says_why_once(disabled):
    # One eager path: where _relugrad_torch.so cannot load, one RuntimeWarning names the reason
    # and eager ReLU calls the custom ops; RELUGRAD_TORCH_NATIVE=0 asks for that: no warning.
    import json
    import os
    import shutil
    import subprocess
    import sys
    import tempfile

    import relugrad
    # A copy of the package whose library is stamped for another torch: as if built for it.
    with tempfile.TemporaryDirectory() as tmp:
        shutil.copytree(os.path.dirname(relugrad.__file__), os.path.join(tmp, "relugrad"),
                        ignore=shutil.ignore_patterns("__pycache__"))
        package = os.path.join(tmp, "relugrad")
        with open(os.path.join(package, "_relugrad_torch.torch_version"), "w", encoding="utf-8") as f:
            f.write("0.0-not-this-torch\n")
        if not os.path.exists(os.path.join(package, "_relugrad_torch.so")):
            open(os.path.join(package, "_relugrad_torch.so"), "wb").close()  # never loaded: stamped for another torch
        path = os.pathsep.join([tmp] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p])
        env = dict(os.environ, PYTHONPATH=path, RELUGRAD_TORCH_NATIVE="0" if disabled else "1")
        out = subprocess.run([sys.executable, "-c", _WITHOUT_NATIVE], env=env, capture_output=True, text=True,
                             check=True, cwd=os.path.dirname(__file__))
    got = json.loads(out.stdout.strip().splitlines()[-1])
    assert got["native"] is False and got["node"] == "_ReluOpBackward" and got["same"]
    # The fused nodes would be CppFunction (the C++ pass) or _ReluDropoutFunctionBackward (composed).
    assert got["plain"] is False and got["fused_nodes"][1] == "_ReluOpBackward", got
    assert got["fused_nodes"][0] not in ("CppFunction", "_ReluDropoutFunctionBackward"), got
    if disabled:
        assert got["status"] == "disabled by RELUGRAD_TORCH_NATIVE=0" and got["warnings"] == []
    else:
        assert "0.0-not-this-torch" in got["status"]
        assert len(got["warnings"]) == 1 and got["status"] in got["warnings"][0]


def _grads(fn, xt, gt, create_graph=False):
    a = xt.clone().requires_grad_(True)
    (ga,) = torch.autograd.grad(fn(a), a, gt, create_graph=create_graph)
    return a, ga


@pytest.mark.parametrize("dtype", ["f32", "f64", "f16", "bf16"])
@pytest.mark.parametrize("semantics", relugrad.PRESETS)
@pytest.mark.parametrize("mask", [False, True])
def test_eager_relu_gives_the_bits_of_the_custom_ops(dtype, semantics, mask, eager_path):
    # ReLU runs autograd.Functions in eager mode (C++ or Python) and the
    # custom ops under torch.compile: all must give the same bits, on special
    # values.
    dy, x = special_case(dtype)
    xt, gt = as_torch(x), as_torch(dy)
    module = rt.ReLU(semantics, mask=mask)
    op = ((lambda a: torch.ops.relugrad.relu_mask(a, semantics, 0)[0]) if mask
          else (lambda a: torch.ops.relugrad.relu(a, semantics, 0)))
    _, want = _grads(op, xt, gt)
    _, got = _grads(module, xt, gt)
    _assert_took_path(module(xt.clone().requires_grad_(True)), eager_path, mask)
    assert torch.equal(bits(want), bits(got))


@pytest.mark.parametrize("mask", [False, True])
def test_eager_relu_double_backward_is_the_ops(mask, eager_path):
    # create_graph: the eager backward calls the ops, so the gradient of the
    # gradient exists and equals the custom ops' (w.r.t. the incoming grad).
    x = torch.randn(64, dtype=torch.float64)
    g = torch.randn(64, dtype=torch.float64, requires_grad=True)
    module = rt.ReLU("torch", mask=mask)
    op = ((lambda a: torch.ops.relugrad.relu_mask(a, "torch", 0)[0]) if mask
          else (lambda a: torch.ops.relugrad.relu(a, "torch", 0)))
    results = []
    for fn in (module, op):
        a = x.clone().requires_grad_(True)
        (ga,) = torch.autograd.grad(fn(a), a, g, create_graph=True)
        (gg,) = torch.autograd.grad(ga.sum(), g)
        results.append((ga.detach(), gg))
    assert torch.equal(results[0][0], results[1][0])
    assert torch.equal(results[0][1], results[1][1])
    assert torch.equal(results[0][1], (x > 0).to(torch.float64))


@pytest.mark.parametrize("mask", [False, True])
@pytest.mark.parametrize("inplace", [False, True])
def test_compiled_relu_uses_the_custom_ops_in_one_graph(mask, inplace):
    # Under torch.compile ReLU switches to the custom ops (fake kernels), so a
    # fullgraph compile succeeds and gives the eager gradients bit for bit
    # (in place: the ops' result copied into x).
    model = torch.nn.Sequential(torch.nn.Linear(8, 16), rt.ReLU("torch", inplace=inplace, mask=mask),
                                torch.nn.Linear(16, 4))
    compiled = torch.compile(model, backend="aot_eager", fullgraph=True)
    x = torch.randn(5, 8)
    grads = []
    for m in (model, compiled):
        model.zero_grad()
        m(x).sum().backward()
        grads.append([p.grad.clone() for p in model.parameters()])
    for want, got in zip(*grads):
        assert torch.equal(want, got)


@pytest.mark.parametrize("dtype", ["f32", "f64", "f16", "bf16"])
@pytest.mark.parametrize("mask", [False, True])
def test_inplace_relu_overwrites_x_like_nn_relu(dtype, mask, eager_path):
    # ReLU(inplace=True) returns x overwritten (same storage), and its
    # gradients are nn.ReLU(inplace=True)'s bits (mask: up to y's -0 sign,
    # docs/mask.md; the gradients are the same bits).
    dy, x = special_case(dtype)
    xt, gt = as_torch(x), as_torch(dy)
    got_y, got_g = None, None
    results = []
    for module in (torch.nn.ReLU(inplace=True), rt.ReLU("torch", inplace=True, mask=mask)):
        leaf = xt.clone().requires_grad_(True)
        h = leaf * 1  # a non-leaf, as after a conv: in-place on a leaf that requires grad is an error
        y = module(h)
        assert y.data_ptr() == h.data_ptr(), "inplace did not write over x"
        y.backward(gt)
        results.append((y.detach().clone(), leaf.grad))
    (want_y, want_g), (got_y, got_g) = results
    assert_grads_bit_equal(dtype, want_g, got_g)
    if mask:
        # values and NaN class (relugrad's y has +0 for x = -0)
        assert bool(((want_y == got_y) | (torch.isnan(want_y) & torch.isnan(got_y))).all())
    else:
        assert torch.equal(bits(want_y), bits(got_y))


def test_inplace_relu_keeps_no_second_tensor(eager_path):
    # The saved tensor is x itself (or only the mask): no n-element copy.
    leaf = torch.randn(4096, requires_grad=True)
    for mask, want in ((False, 4096 * 4), (True, 4096 // 8)):
        h = leaf * 1
        saved = []
        with torch.autograd.graph.saved_tensors_hooks(lambda t: saved.append(t) or t, lambda t: t):
            y = rt.ReLU(inplace=True, mask=mask)(h)
        assert y.data_ptr() == h.data_ptr()
        assert sum(t.numel() * t.element_size() for t in saved) == want
        if not mask:
            assert saved[0].data_ptr() == h.data_ptr()


def test_inplace_relu_on_a_leaf_is_rejected_like_nn_relu(eager_path):
    leaf = torch.randn(8, requires_grad=True)
    with pytest.raises(RuntimeError, match="leaf Variable"):
        torch.nn.ReLU(inplace=True)(leaf)
    for mask in (False, True):
        with pytest.raises(RuntimeError, match="leaf Variable"):
            rt.ReLU(inplace=True, mask=mask)(leaf)


@pytest.mark.parametrize("mask", [False, True])
@pytest.mark.parametrize("inplace", [False, True])
def test_relu_on_non_contiguous_x_matches_nn_relu(mask, inplace, eager_path):
    # A transposed x (and its transposed incoming gradient): the native path
    # makes contiguous copies where relugrad reads memory, and in place writes
    # y back into x's own layout.
    base = torch.randn(24, 16, dtype=torch.float64)
    base[::3] = -base[::3]
    gt = torch.randn(16, 24, dtype=torch.float64).t()
    results = []
    for module in (torch.nn.ReLU(inplace=inplace), rt.ReLU("torch", inplace=inplace, mask=mask)):
        leaf = base.t().contiguous().t().clone().requires_grad_(True)  # strides (1, 24)
        assert not leaf.is_contiguous()
        h = leaf * 1 if inplace else leaf
        assert not h.is_contiguous()
        y = module(h)
        if inplace:
            assert y.data_ptr() == h.data_ptr() and y.stride() == h.stride()
        y.backward(gt)
        results.append((y.detach().clone(), leaf.grad.clone()))
    (want_y, want_g), (got_y, got_g) = results
    assert torch.equal(want_y, got_y)
    assert torch.equal(bits(want_g), bits(got_g))


@pytest.mark.parametrize("mask", [False, True])
def test_inplace_relu_over_a_saved_tensor_is_caught_like_nn_relu(mask, eager_path):
    # sigmoid saves its output h for backward; ReLU(inplace=True) overwriting
    # h must bump h's version so that backward refuses the stale h, as it
    # does after nn.ReLU(inplace=True). (The mask path writes h through the C
    # ABI, outside ATen: mark_dirty is what bumps the version there.)
    for module in (torch.nn.ReLU(inplace=True), rt.ReLU("torch", inplace=True, mask=mask)):
        a = torch.randn(8, requires_grad=True)
        h = torch.sigmoid(a)
        version = h._version
        y = module(h)
        assert h._version > version
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            y.sum().backward()


@pytest.fixture
def two_torch_threads():
    before = torch.get_num_threads()
    torch.set_num_threads(2)
    yield
    torch.set_num_threads(before)


@pytest.mark.parametrize("dtype", ["f32", "f64", "f16", "bf16"])
@pytest.mark.parametrize("semantics", relugrad.PRESETS)
@pytest.mark.parametrize("mask", [False, True])
def test_native_split_over_torch_threads_gives_the_bits_of_one_thread(dtype, semantics, mask, two_torch_threads):
    # threads=0 on the native path splits forward (mask) and backward over
    # torch's threads in parts of 512-element multiples; a ragged n puts a
    # part boundary inside the last mask byte's worth and the tail ragged.
    if not rt.NATIVE:
        pytest.skip(f"the torch-native ReLU is not loaded: {rt.NATIVE_STATUS}")
    n = 100003
    rng = np.random.default_rng(7)
    tdt = TORCH_DTYPES[dtype]
    x = torch.from_numpy(rng.standard_normal(n)).to(tdt)
    x[::97] = 0.0
    x[1::89] = -0.0
    x[2::83] = float("nan")
    g = torch.from_numpy(rng.standard_normal(n)).to(tdt)
    g[3::79] = float("nan")
    got = {}
    for threads in (0, 1):
        a = x.clone().requires_grad_(True)
        y = rt.ReLU(semantics, threads=threads, mask=mask)(a)
        y.backward(g)
        got[threads] = (bits(y), bits(a.grad))
    assert torch.equal(got[0][0], got[1][0])
    assert torch.equal(got[0][1], got[1][1])


@pytest.mark.parametrize("mask", [False, True])
def test_native_threads_zero_runs_on_torch_threads(mask, tmp_path):
    # The proof that the split happens: relugrad's trace (RELUGRAD_PROFILE)
    # shows the backward as parts on two threads, the first a multiple of
    # 512 elements, together n. threads=2 would be one call on relugrad's pool.
    if not rt.NATIVE:
        pytest.skip(f"the torch-native ReLU is not loaded: {rt.NATIVE_STATUS}")
    import json
    import os
    import subprocess
    import sys
    trace = tmp_path / "trace.json"
    code = (
        "import torch, relugrad.torch as rt\n"
        "torch.set_num_threads(2)\n"
        "x = torch.randn(100003, requires_grad=True)\n"
        f"rt.ReLU(threads=0, mask={mask})(x).backward(torch.randn(100003))\n"
    )
    env = dict(os.environ, RELUGRAD_PROFILE=str(trace))
    subprocess.run([sys.executable, "-c", code], check=True, env=env)
    doc = json.loads(trace.read_text())
    events = doc["traceEvents"] if isinstance(doc, dict) else doc
    op = "relu_grad_mask " if mask else "relu_grad "
    parts = [e for e in events if e.get("ph") == "X" and e["name"].startswith(op)]
    assert len(parts) == 2, [e["name"] for e in events]
    sizes = sorted(e["args"]["elements"] for e in parts)
    assert sum(sizes) == 100003
    assert sizes[1] % 512 == 0
    assert len({e["tid"] for e in parts}) == 2


@pytest.mark.parametrize("shape", [(0,), (), (3, 0, 2), (5,)])
@pytest.mark.parametrize("mask", [False, True])
@pytest.mark.parametrize("inplace", [False, True])
def test_relu_on_empty_and_0d_tensors_matches_nn_relu(shape, mask, inplace, eager_path):
    x = torch.randn(shape)
    grads = []
    for module in (torch.nn.ReLU(inplace=inplace), rt.ReLU("torch", inplace=inplace, mask=mask)):
        leaf = x.clone().requires_grad_(True)
        y = module(leaf * 1)
        assert y.shape == x.shape
        y.sum().backward()
        grads.append(leaf.grad)
    assert torch.equal(grads[0], grads[1])


def test_threads_none_or_zero_mean_torchs_threads(monkeypatch, native_off):
    # One meaning in every Python entry point: None/0 = the host framework's
    # threads (torch.get_num_threads() for torch tensors, relugrad's default
    # 0 = all cores for NumPy), N = N. Read off the thread count each call
    # hands the library.
    seen = []
    real = relugrad.Plan.run_host

    def spy(plan, *args):
        seen.append(plan.options.threads)  # the threads of the plan the call runs
        return real(plan, *args)

    monkeypatch.setattr(relugrad.Plan, "run_host", spy)
    native_off("relu")
    before = torch.get_num_threads()
    torch.set_num_threads(3)
    try:
        t = torch.randn(64)
        relugrad.relu_grad(t, t)
        relugrad.relu_grad(t, t, threads=0)
        relugrad.relu_grad(t, t, threads=2)
        torch.ops.relugrad.relu_grad(t, t)
        a = t.clone().requires_grad_(True)
        rt.ReLU()(a).backward(t)
        rt.ReLU(threads=1)(a).backward(t)
        rt.ReLU(threads=None)(a).backward(t)
        rt.replace_relu(torch.nn.Sequential(torch.nn.ReLU()), threads=None)(a).backward(t)
    finally:
        torch.set_num_threads(before)
    assert seen == [3, 3, 2, 3, 3, 1, 3, 3]
    for bad in (-1,):
        with pytest.raises(ValueError, match="threads: must be >= 0"):
            relugrad.relu_grad(t, t, threads=bad)
        with pytest.raises(ValueError, match="threads: must be >= 0"):
            rt.ReLU(threads=bad)
    for bad in (True, 1.5, "2"):
        with pytest.raises(TypeError, match="threads: expected an int or None"):
            relugrad.relu_grad(t, t, threads=bad)
        with pytest.raises(TypeError, match="threads: expected an int or None"):
            rt.ReLU(threads=bad)
        with pytest.raises(TypeError, match="threads: expected an int or None"):
            rt.replace_relu(torch.nn.ReLU(), threads=bad)

"""torch.func (grad, vjp, jacrev, jvp, vmap, vmap(grad), functional_call)
and torch.autograd.forward_ad through relugrad.torch.ReLU and every custom
op: same bits as nn.ReLU (torch preset) or as relugrad's eager autograd
(the other presets), and vmap runs the ops' batching rules (no fallback
warning)."""

import pytest

torch = pytest.importorskip("torch", reason="PyTorch is not installed in this environment")
import torch.autograd.forward_ad as fwAD  # noqa: E402
from torch.func import functional_call, grad, jacrev, jvp, vjp, vmap  # noqa: E402

import relugrad.torch as rt  # noqa: E402
from torch_helpers import bits, values  # noqa: E402

SEMANTICS = ["torch", "tensorflow", "jax", "onednn"]
DTYPES = [torch.float32, torch.float64]


def same(a, b):
    return a.shape == b.shape and a.dtype == b.dtype and torch.equal(bits(a), bits(b))


def eager_grad(f, x, g):
    """The reference: plain eager autograd of f (relugrad's eager path, or nn.ReLU)."""
    a = x.clone().requires_grad_(True)
    (ga,) = torch.autograd.grad(f(a), a, g)
    return ga


def reference(semantics):
    return torch.nn.ReLU() if semantics == "torch" else rt.ReLU(semantics)


pytestmark = pytest.mark.usefixtures("no_vmap_fallback_warning")


@pytest.mark.parametrize("semantics", SEMANTICS)
@pytest.mark.parametrize("mask", [False, True])
def test_module_under_every_transform(semantics, mask):
    module = rt.ReLU(semantics, mask=mask)
    ref = reference(semantics)
    for dtype in DTYPES:
        x = values((3, 8), dtype, 1)
        g = values((3, 8), dtype, 2)
        want = eager_grad(ref, x, g)
        assert same(grad(lambda a: (module(a) * g).sum())(x), want)
        y, pullback = vjp(module, x)
        assert same(pullback(g)[0], want)
        assert same(y if not mask else torch.threshold(y, 0.0, 0.0),
                    ref(x) if not mask else torch.threshold(x, 0.0, 0.0))
        small = x[0, :5].clone()
        assert same(jacrev(module)(small), jacrev(torch.nn.ReLU())(small) if semantics == "torch"
                    else torch.stack([eager_grad(ref, small, e) for e in torch.eye(5, dtype=dtype)]))
        # jvp of ReLU = ReluGrad of the tangent (PyTorch's: threshold_backward(t, y, 0))
        _, t_out = jvp(module, (x,), (g,))
        assert same(t_out, want)
        # vmap, and per-sample gradients
        assert same(vmap(module)(x), torch.stack([module(r) for r in x]))
        per_sample = vmap(grad(lambda a, b: (module(a) * b).sum()))(x, g)
        assert same(per_sample, want)


@pytest.mark.parametrize("semantics", ["torch", "jax"])
@pytest.mark.parametrize("mask", [False, True])
def test_forward_ad_through_the_module(semantics, mask):
    module = rt.ReLU(semantics, mask=mask)
    x = values((4, 6), torch.float64, 3)
    t = values((4, 6), torch.float64, 4)
    with fwAD.dual_level():
        out = fwAD.unpack_dual(module(fwAD.make_dual(x, t))).tangent
    assert same(out, eager_grad(reference(semantics), x, t))


def test_functional_call_grad_matches_nn_relu():
    torch.manual_seed(0)
    stock = torch.nn.Sequential(torch.nn.Linear(6, 16), torch.nn.ReLU(), torch.nn.Linear(16, 3))
    ours = torch.nn.Sequential(stock[0], rt.ReLU(), stock[2])
    params = {k: v.detach() for k, v in stock.named_parameters()}
    x = torch.randn(5, 6)

    def loss(model):
        return lambda p, xb: functional_call(model, p, (xb,)).square().sum()

    want = grad(loss(stock))(params, x)
    got = grad(loss(ours))(params, x)
    assert all(same(want[k], got[k]) for k in want)
    # per-sample gradients of the parameters
    want = vmap(grad(loss(stock)), in_dims=(None, 0))(params, x)
    got = vmap(grad(loss(ours)), in_dims=(None, 0))(params, x)
    assert all(same(want[k], got[k]) for k in want)


@pytest.mark.parametrize("semantics", ["torch", "tensorflow"])
def test_custom_ops_under_every_transform(semantics):
    x = values((3, 8), torch.float64, 5)
    g = values((3, 8), torch.float64, 6)
    y = torch.relu(x)
    relu = lambda a: torch.ops.relugrad.relu(a, semantics, 0)  # noqa: E731
    want = torch.ops.relugrad.relu_grad(g, y, semantics)
    # relu
    assert same(grad(lambda a: (relu(a) * g).sum())(x), want)
    assert same(vjp(relu, x)[1](g)[0], want)
    assert same(jvp(relu, (x,), (g,))[1], want)
    assert same(vmap(relu)(x), relu(x))
    # relu_grad: linear in dy
    rg = lambda d: torch.ops.relugrad.relu_grad(d, y, semantics)  # noqa: E731
    assert same(grad(lambda d: (rg(d) * g).sum())(x), rg(g))
    assert same(jvp(rg, (x,), (g,))[1], rg(g))
    assert same(vmap(torch.ops.relugrad.relu_grad, in_dims=(0, 0, None))(g, y, semantics), want)
    assert same(vmap(torch.ops.relugrad.relu_grad, in_dims=(0, None, None))(g, y[0], semantics),
                torch.stack([torch.ops.relugrad.relu_grad(r, y[0], semantics) for r in g]))
    # relu_mask / relu_grad_mask
    mrelu = lambda a: torch.ops.relugrad.relu_mask(a, semantics, 0)[0]  # noqa: E731
    assert same(grad(lambda a: (mrelu(a) * g).sum())(x), want)
    assert same(jvp(mrelu, (x,), (g,))[1], want)
    ys, masks = vmap(lambda a: torch.ops.relugrad.relu_mask(a, semantics, 0))(x)
    for i in range(3):
        yi, mi = torch.ops.relugrad.relu_mask(x[i], semantics, 0)
        assert same(ys[i], yi) and torch.equal(masks[i], mi)
    _, mask = torch.ops.relugrad.relu_mask(x, semantics, 0)
    rgm = lambda d: torch.ops.relugrad.relu_grad_mask(d, mask, semantics, 0)  # noqa: E731
    assert same(grad(lambda d: (rgm(d) * g).sum())(x), want)
    assert same(jvp(rgm, (x,), (g,))[1], want)
    assert same(vmap(lambda d, m: torch.ops.relugrad.relu_grad_mask(d, m, semantics, 0))(g, masks), want)


def test_forward_ad_through_the_custom_ops():
    x = values((4, 6), torch.float32, 7)
    t = values((4, 6), torch.float32, 8)
    want = torch.ops.aten.threshold_backward(t, torch.relu(x), 0.0)
    with fwAD.dual_level():
        d = fwAD.make_dual(x, t)
        outs = [torch.ops.relugrad.relu(d), torch.ops.relugrad.relu_mask(d)[0]]
        tangents = [fwAD.unpack_dual(o).tangent for o in outs]
        dy = fwAD.make_dual(t, x)
        lin = fwAD.unpack_dual(torch.ops.relugrad.relu_grad(dy, torch.relu(x))).tangent
    assert all(same(tt, want) for tt in tangents)
    assert same(lin, torch.ops.aten.threshold_backward(x, torch.relu(x), 0.0))


def test_nested_transforms_of_a_direct_op_call():
    # Per-sample gradients of a direct op call: the same bits as torch.relu's (every nested
    # composition per op is in test_func_nested_transforms.py).
    x = values((3, 8), torch.float64, 5)
    want = vmap(grad(lambda a: torch.relu(a).sum()))(x)
    assert same(vmap(grad(lambda a: torch.ops.relugrad.relu(a).sum()))(x), want)

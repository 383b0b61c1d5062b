"""Nested torch.func transforms of direct custom-op calls: vmap(grad), vmap(vjp), jacrev,
jacfwd, vmap(jvp), jvp(grad), grad(grad), grad(vmap), vmap(vmap(grad)) and hessian of
torch.ops.relugrad.relu / relu_grad / relu_mask / relu_grad_mask, each compared bit for bit
with the same composition of a reference written in torch ops: stock's own ops for the torch
preset (torch.relu, threshold_backward); for the others autograd.Functions applied from Python
whose every formula is the preset's ReluGrad in torch ops (_relu_grad_torch) with the gate fixed
by the forward, the design the ops document (linear in the incoming gradient or tangent, so
grad of grad is ReluGrad again, not the autograd of torch.where's decomposition, which adds a
+0 where the preset's multiply gives -0). No composition may fall back to functorch's slow loop."""

import pytest

torch = pytest.importorskip("torch", reason="PyTorch is not installed in this environment")
from torch.func import grad, hessian, jacfwd, jacrev, jvp, vjp, vmap  # noqa: E402

from relugrad.torch import testing  # noqa: E402
from torch_helpers import bits, values  # noqa: E402

OPS = ["relu", "relu_grad", "relu_mask", "relu_grad_mask"]
SEMANTICS = ["torch", "tensorflow", "jax"]


pytestmark = pytest.mark.usefixtures("no_vmap_fallback_warning")


def same(a, b):
    return a.shape == b.shape and a.dtype == b.dtype and torch.equal(bits(a), bits(b))


class _RefGrad(torch.autograd.Function):
    """ReluGrad(dy, s) of a preset in torch ops; its gradient and tangent in dy are ReluGrad again."""
    generate_vmap_rule = True

    @staticmethod
    def forward(dy, s, semantics):
        return testing.stock_relu_grad(dy, s, semantics, 0.0, 0.0)

    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.save_for_backward(inputs[1])
        ctx.save_for_forward(inputs[1])
        ctx.semantics = inputs[2]

    @staticmethod
    def backward(ctx, g):
        (s,) = ctx.saved_tensors
        # s moves only the gate: zeros (PyTorch's threshold_backward formula, TensorFlow's
        # ReluGradGrad), which turn a -0 gradient reaching x through y into +0.
        ds = torch.zeros_like(g) if ctx.needs_input_grad[1] else None
        return _RefGrad.apply(g, s, ctx.semantics), ds, None

    @staticmethod
    def jvp(ctx, t, _s, _sem):
        (s,) = ctx.saved_tensors
        return _RefGrad.apply(t, s, ctx.semantics)


class _RefRelu(torch.autograd.Function):
    """torch.relu forward, the preset's ReluGrad (_RefGrad) on y as its gradient and tangent."""
    generate_vmap_rule = True

    @staticmethod
    def forward(x, semantics):
        return torch.relu(x)

    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.save_for_backward(output)
        ctx.save_for_forward(output)
        ctx.semantics = inputs[1]

    @staticmethod
    def backward(ctx, g):
        (y,) = ctx.saved_tensors
        return _RefGrad.apply(g, y, ctx.semantics), None

    @staticmethod
    def jvp(ctx, t, _):
        (y,) = ctx.saved_tensors
        return _RefGrad.apply(t, y, ctx.semantics)


class _RefReluMask(_RefRelu):
    """_RefRelu with the mask path's gradient: the mask is not differentiable, so the gradient
    has no path through y (no zeros from y's side, as _RefGrad's in s)."""

    @staticmethod
    def backward(ctx, g):
        (y,) = ctx.saved_tensors
        return _RefGrad.apply(g, y.detach(), ctx.semantics), None


def op_and_reference(name, semantics, s0):
    """(f, r): the op as a function of one sample and its reference. s0 is the fixed
    operand of the backward ops: relu_grad's s is relu(s0), relu_grad_mask's mask is relu_mask(s0)'s."""
    y0 = torch.relu(s0)
    stock = semantics == "torch"
    if name == "relu":
        return (lambda a: torch.ops.relugrad.relu(a, semantics, 0),
                torch.relu if stock else (lambda a: _RefRelu.apply(a, semantics)))
    if name == "relu_mask":
        # relu_mask's y is +0 where relu gives -0: the reference adds +0.0 (same gradient).
        ref = torch.relu if stock else (lambda a: _RefReluMask.apply(a, semantics))
        return (lambda a: torch.ops.relugrad.relu_mask(a, semantics, 0)[0], lambda a: ref(a) + 0.0)
    ref = ((lambda d: torch.ops.aten.threshold_backward(d, y0, 0.0)) if stock
           else (lambda d: _RefGrad.apply(d, y0, semantics)))
    if name == "relu_grad":
        return lambda d: torch.ops.relugrad.relu_grad(d, y0, semantics), ref
    _, mask = torch.ops.relugrad.relu_mask(s0, semantics, 0)
    return lambda d: torch.ops.relugrad.relu_grad_mask(d, mask, semantics, 0), ref


COMPOSITIONS = {
    "vmap(grad)": lambda f, x, g: vmap(grad(lambda a, b: (f(a) * b).sum()))(x, g),
    "vmap(vjp)": lambda f, x, g: vmap(lambda a, b: vjp(f, a)[1](b)[0])(x, g),
    "jacrev": lambda f, x, g: jacrev(f)(x[0]),
    "jacfwd": lambda f, x, g: jacfwd(f)(x[0]),
    "vmap(jvp)": lambda f, x, g: vmap(lambda a, t: jvp(f, (a,), (t,))[1])(x, g),
    "jvp(grad)": lambda f, x, g: jvp(grad(lambda a: (f(a) * a).sum()), (x[0],), (g[0],))[1],
    "grad(grad)": lambda f, x, g: grad(lambda a: (grad(lambda b: (f(b) * b).sum())(a) * g[0]).sum())(x[0]),
    "grad(vmap)": lambda f, x, g: grad(lambda a: (vmap(f)(a) * g).sum())(x),
    "vmap(vmap(grad))": lambda f, x, g: vmap(vmap(grad(lambda a, b: (f(a) * b).sum())))(x[None], g[None]),
    "hessian": lambda f, x, g: hessian(lambda a: (f(a) * a).sum())(x[0]),
}


# 8 elements per sample: the mask ops' vmap rules make one call for the batch (whole bytes per
# sample); 5: one call per sample.
@pytest.mark.parametrize("width", [8, 5])
@pytest.mark.parametrize("composition", list(COMPOSITIONS))
@pytest.mark.parametrize("semantics", SEMANTICS)
@pytest.mark.parametrize("name", OPS)
def test_nested_transforms_of_direct_op_calls(name, semantics, composition, width):
    x = values((3, width), torch.float64, 5)
    g = values((3, width), torch.float64, 6)
    f, r = op_and_reference(name, semantics, values((width,), torch.float64, 7))
    run = COMPOSITIONS[composition]
    got, want = run(f, x, g), run(r, x, g)
    assert same(got, want), (got, want)


def test_the_per_sample_gradient_is_the_eager_gradient_bit_for_bit():
    # The same per-sample gradients as one eager backward per row (the op's eager kernels).
    x = values((4, 16), torch.float32, 8)
    g = values((4, 16), torch.float32, 9)
    per_sample = vmap(grad(lambda a, b: (torch.ops.relugrad.relu(a) * b).sum()))(x, g)
    for i in range(4):
        a = x[i].clone().requires_grad_(True)
        (want,) = torch.autograd.grad(torch.ops.relugrad.relu(a), a, g[i])
        assert same(per_sample[i], want)


def test_a_transform_inside_a_plain_backward_still_records_one_node():
    # Outside torch.func the ops keep their one autograd node per call (no transform state leaks).
    x = values((2, 8), torch.float32, 10).requires_grad_(True)
    y = torch.ops.relugrad.relu(x)
    assert type(y.grad_fn).__name__.startswith("_ReluOp")
    vmap(grad(lambda a: torch.ops.relugrad.relu(a).sum()))(x.detach())
    (dx,) = torch.autograd.grad(y, x, torch.ones_like(y))
    assert same(dx, torch.ops.aten.threshold_backward(torch.ones_like(y), y.detach(), 0.0))

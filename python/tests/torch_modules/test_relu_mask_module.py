"""relugrad.torch's 1-bit mask path: the relugrad::relu_mask and
relugrad::relu_grad_mask custom ops (opcheck), ReLU(mask=True) (gradients
bit-equal to torch.relu's; only the uint8 mask saved for backward),
replace_relu(mask=True), and the saved-activation bytes it removes."""
import copy

import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="PyTorch is not installed in this environment")
import relugrad  # noqa: E402
import relugrad.torch as rt  # noqa: E402
from relugrad.torch import fusion  # noqa: E402
from cases import random_case  # noqa: E402
from test_relu import as_torch, assert_grads_bit_equal, bits, relu_vs_torch  # noqa: E402


def saved_bytes(fn):
    """(total bytes, dtypes) of every tensor autograd saves while fn() runs."""
    saved = []

    def pack(t):
        saved.append(t)
        return t

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        out = fn()
    # The same storage may be saved twice (e.g. a Linear's input and the ReLU
    # output it is): count each storage once.
    storages = {}
    for t in saved:
        storages[t.untyped_storage().data_ptr()] = t.untyped_storage().nbytes()
    return sum(storages.values()), [t.dtype for t in saved], out


@pytest.mark.parametrize("dtype", ["f32", "f64", "f16", "bf16"])
def test_opcheck_relu_mask(dtype):
    _, x = random_case(dtype, n=77)
    for semantics in relugrad.PRESETS:
        torch.library.opcheck(torch.ops.relugrad.relu_mask.default, (as_torch(x), semantics, 1))
    dy, _ = random_case(dtype, n=77)
    mask = torch.ops.relugrad.relu_mask(as_torch(x))[1]
    torch.library.opcheck(torch.ops.relugrad.relu_grad_mask.default, (as_torch(dy), mask, "torch", 1))


def test_opcheck_with_grad():
    x = torch.randn(3, 5, dtype=torch.float64, requires_grad=True)
    torch.library.opcheck(torch.ops.relugrad.relu_mask.default, (x, "torch", 1))
    dy = torch.randn(3, 5, dtype=torch.float64, requires_grad=True)
    mask = torch.ops.relugrad.relu_mask(x.detach())[1]
    torch.library.opcheck(torch.ops.relugrad.relu_grad_mask.default, (dy, mask, "jax", 0))


@pytest.mark.parametrize("dtype", ["f32", "f64", "f16", "bf16"])
@pytest.mark.parametrize("case", ["special", "random"])
def test_mask_relu_gradients_bit_equal_to_pytorch(dtype, case):
    xt, y, want, got = relu_vs_torch(dtype, case, rt.ReLU("torch", mask=True))
    # Forward: torch.relu(x) bit for bit, -0 kept (where torch.threshold
    # writes +0). (16-bit: PyTorch's own forward NaN bits depend on position,
    # as its backward's do: NaNs compared by class there.)
    sixteen = dtype in ("f16", "bf16")
    keep = ~torch.isnan(xt) if sixteen else torch.ones_like(xt, dtype=torch.bool)
    assert torch.equal(torch.isnan(y), torch.isnan(xt))
    assert torch.equal(bits(y)[keep], bits(torch.relu(xt))[keep])
    if case == "special":  # the case must reach a -0 x, which stays -0
        negative_zero = (xt == 0) & torch.signbit(xt)
        assert negative_zero.any() and torch.all(torch.signbit(y[negative_zero]))
    assert_grads_bit_equal(dtype, want, got)


@pytest.mark.parametrize("semantics", relugrad.PRESETS)
def test_mask_relu_equals_unmasked_relu_and_gradchecks(semantics):
    x = torch.randn(40, dtype=torch.float64)
    x = (x + 0.1 * torch.sign(x)).requires_grad_(True)
    assert torch.autograd.gradcheck(lambda a: rt.ReLU(semantics, mask=True)(a), (x,))
    assert torch.autograd.gradgradcheck(lambda a: rt.ReLU(semantics, mask=True)(a) ** 2, (x,))
    g = torch.randn(40, dtype=torch.float64)
    grads = []
    for mask in (False, True):
        a = x.detach().clone().requires_grad_(True)
        rt.ReLU(semantics, mask=mask)(a).backward(g)
        grads.append(a.grad)
    assert torch.equal(bits(grads[0]), bits(grads[1]))


def test_only_the_mask_is_saved():
    x = torch.randn(4, 1000, requires_grad=True)
    nbytes, dtypes, _ = saved_bytes(lambda: rt.ReLU(mask=True)(x))
    assert dtypes == [torch.uint8] and nbytes == 4000 // 8
    nbytes, dtypes, _ = saved_bytes(lambda: torch.nn.ReLU()(x))
    assert dtypes == [torch.float32] and nbytes == 4000 * 4


def test_replace_relu_mask_keeps_gradients_and_saves_memory():
    torch.manual_seed(0)
    # A ReLU feeding Dropout: the ReLU output is held only for ReLU's backward, dropout's noise
    # only for dropout's; replace_relu(mask=True) runs each pair as one pass keeping two bit
    # planes instead (python/tests/torch_modules/test_saved_memory.py has the rest).
    model = torch.nn.Sequential(
        torch.nn.Linear(64, 256), torch.nn.ReLU(), torch.nn.Dropout(0.1),
        torch.nn.Linear(256, 256), torch.nn.ReLU(inplace=True), torch.nn.Dropout(0.1),
        torch.nn.Linear(256, 10))
    ours = rt.replace_relu(copy.deepcopy(model), mask=True)
    assert fusion.fused_pairs(ours) == ["1 + 2", "4 + 5"]
    x = torch.randn(32, 64)
    totals = []
    for m in (model, ours):
        m.zero_grad()
        torch.manual_seed(1)  # same dropout masks
        nbytes, _, out = saved_bytes(lambda: m(x))
        out.square().sum().backward()
        totals.append(nbytes)
    for p, q in zip(model.parameters(), ours.parameters()):
        assert torch.equal(p.grad, q.grad)
    relu_elems = 2 * 32 * 256
    assert totals[0] - totals[1] == relu_elems * (4 + 4) - 2 * relu_elems // 8


def test_mask_op_errors():
    with pytest.raises(Exception, match="mask: dtype must be torch.uint8"):
        torch.ops.relugrad.relu_grad_mask(torch.ones(8), torch.ones(1, dtype=torch.int8))
    with pytest.raises(ValueError, match="mask: has 2 bytes, dy has 8 elements"):
        torch.ops.relugrad.relu_grad_mask(torch.ones(8), torch.ones(2, dtype=torch.uint8))
    with pytest.raises(ValueError, match="threads"):
        rt.ReLU(mask=True, threads=-1)


def test_numpy_api_on_tensors():
    x = torch.randn(3, 7)
    y, m = relugrad.relu_forward(x)
    assert isinstance(y, torch.Tensor) and m.dtype == torch.uint8 and m.shape == (3,)
    dy = torch.randn(3, 7)
    assert torch.equal(relugrad.relu_grad_mask(dy, m), relugrad.relu_grad(dy, x))
    assert np.array_equal(m.numpy(), relugrad.relu_forward(x.numpy())[1])

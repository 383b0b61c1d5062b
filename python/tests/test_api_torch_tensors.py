"""relugrad's array API (relugrad.relu_grad, relu_forward, relu_grad_mask) on torch tensors that
are not plain memory or that autograd watches: a lazily negated input is read as its values, a
negated out= or a wrapper subclass is refused clearly, a written out= moves its version counter
(autograd then refuses a backward that saved its old values, as after torch's out= ops), and an
out= that requires grad is refused as torch refuses it."""
import pytest

torch = pytest.importorskip("torch")

import relugrad  # noqa: E402
from torch_helpers import bits  # noqa: E402

two_tensor = pytest.importorskip("torch.testing._internal.two_tensor")

DY = [1.0, 2.0, -3.0, 4.0, -0.0, 6.0, 7.0, 8.0]
S = [1.0, -1.0, 2.0, -2.0, 0.0, 3.0, -0.0, float("nan")]


def stock(dy, s):
    return torch.ops.aten.threshold_backward(dy, s, 0.0)


def test_lazily_negated_inputs_are_read_as_their_values():
    dy, s = torch.tensor(DY), torch.tensor(S)
    neg_dy, neg_s = torch._neg_view(-dy), torch._neg_view(-s)  # the same values, negated lazily
    assert neg_dy.is_neg() and torch.equal(bits(neg_dy.resolve_neg()), bits(dy))
    for a, b in ((neg_dy, s), (dy, neg_s), (neg_dy, neg_s)):
        assert torch.equal(bits(relugrad.relu_grad(a, b)), bits(stock(dy, s)))
    y, mask = relugrad.relu_forward(neg_s, keep_negative_zero=True)
    want_y, want_mask = relugrad.relu_forward(s, keep_negative_zero=True)
    assert torch.equal(bits(y), bits(want_y)) and torch.equal(mask, want_mask)
    assert torch.equal(bits(relugrad.relu_grad_mask(neg_dy, mask)), bits(stock(dy, s)))


def test_a_lazily_negated_out_is_refused():
    out = torch._neg_view(torch.zeros(8))
    with pytest.raises(ValueError, match="out: a lazily negated tensor"):
        relugrad.relu_grad(torch.tensor(DY), torch.tensor(S), out=out)


def test_wrapper_subclasses_are_refused_clearly():
    dy = two_tensor.TwoTensor(torch.tensor(DY), torch.tensor(DY))
    with pytest.raises(TypeError, match="dy: a TwoTensor wrapper"):
        relugrad.relu_grad(dy, torch.tensor(S))


def test_a_written_out_moves_its_version_and_autograd_notices():
    for call in ("relu_grad", "relu_grad_mask", "relu_forward"):
        a = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
        b = torch.zeros(3)
        loss = (a * b).sum()  # mul saves b for a's gradient
        dy, s = torch.tensor([5.0, 6.0, 7.0]), torch.tensor([1.0, 1.0, 1.0])
        if call == "relu_grad":
            relugrad.relu_grad(dy, s, out=b)
        elif call == "relu_grad_mask":
            relugrad.relu_grad_mask(dy, relugrad.relu_forward(s)[1], out=b)
        else:
            relugrad.relu_forward(dy, out=b)
        assert b._version == 1, call
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            loss.backward()


def test_an_out_that_requires_grad_is_refused():
    out = torch.zeros(8, requires_grad=True)
    with pytest.raises(RuntimeError, match="out: the tensor requires grad"):
        relugrad.relu_grad(torch.tensor(DY), torch.tensor(S), out=out)
    with torch.no_grad():
        relugrad.relu_grad(torch.tensor(DY), torch.tensor(S), out=out)
    assert torch.equal(bits(out.detach()), bits(stock(torch.tensor(DY), torch.tensor(S))))


def test_the_mask_op_refuses_a_mask_on_another_device():
    # A CPU dy with a meta mask reaches the op's meta kernel (the Meta key wins dispatch): it
    # must refuse, as threshold_backward does, not compute from uninitialised memory.
    import relugrad.torch  # noqa: F401 (registers the ops)
    dy = torch.ones(64)
    with pytest.raises(RuntimeError, match="one device|expected device"):
        torch.ops.relugrad.relu_grad_mask(dy, torch.empty(8, dtype=torch.uint8, device="meta"))
    with pytest.raises(RuntimeError, match="expected device"):
        torch.ops.aten.threshold_backward(dy, torch.empty(64, device="meta"), 0.0)

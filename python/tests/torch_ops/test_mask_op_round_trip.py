"""The public mask op pair round-trips for every layout: relu_grad_mask(dy, relu_mask(x)[1]) is
threshold_backward(dy, relu(x), 0) bit for bit, whatever the strides of x and dy (the mask holds
x's elements in their logical order), with no argument beyond dy and the mask."""
import pytest

torch = pytest.importorskip("torch")

import relugrad.torch  # noqa: E402,F401  (registers torch.ops.relugrad)
from torch_helpers import bits, values  # noqa: E402

DTYPES = [torch.float16, torch.bfloat16, torch.float32, torch.float64]


def _layouts(shape4, dtype, seed):
    """(name, tensor of logical shape shape4) for each layout the test crosses."""
    n, c, h, w = shape4
    base = values(shape4, dtype, seed)
    return [
        ("contiguous", base),
        ("channels_last", base.contiguous(memory_format=torch.channels_last)),
        ("transposed", values((n, c, w, h), dtype, seed).transpose(2, 3)),
        ("sliced", values((n, c, h, 2 * w), dtype, seed)[..., ::2]),
        ("expanded", values((1, c, h, w), dtype, seed).expand(n, c, h, w)),
        ("permuted", values((w, h, c, n), dtype, seed).permute(3, 2, 1, 0)),
    ]


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_round_trip_for_every_layout_of_x_and_dy(dtype):
    shape = (2, 3, 5, 7)  # 210 elements: the last mask byte is partial
    for xname, x in _layouts(shape, dtype, 1):
        y, mask = torch.ops.relugrad.relu_mask(x)
        assert mask.shape == ((x.numel() + 7) // 8,)
        stock_y = torch.relu(x)
        for dname, dy in _layouts(shape, dtype, 2):
            got = torch.ops.relugrad.relu_grad_mask(dy, mask)
            want = torch.ops.aten.threshold_backward(dy, stock_y, 0)
            assert torch.equal(bits(got), bits(want)), (xname, dname)


def test_transposed_f16_1024_square_round_trips():
    """The reported case: a transposed 1024x1024 float16 x (about half the elements were wrong
    when the mask followed y's storage order)."""
    x = values((1024, 1024), torch.float16, 3).t()
    dy = values((1024, 1024), torch.float16, 4)
    _, mask = torch.ops.relugrad.relu_mask(x)
    got = torch.ops.relugrad.relu_grad_mask(dy, mask)
    want = torch.ops.aten.threshold_backward(dy, torch.relu(x), 0)
    assert torch.equal(bits(got), bits(want))


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_relu_mask_y_keeps_relus_layout_and_bits(dtype):
    for name, x in _layouts((2, 3, 5, 7), dtype, 5):
        y, _ = torch.ops.relugrad.relu_mask(x)
        want = torch.relu(x)
        assert y.stride() == want.stride(), name
        # torch preset: torch.relu's values, -0 kept where x is -0 (relu_mask's y), NaN kept.
        keep = torch.where(x < 0, torch.zeros_like(x), x)
        assert torch.equal(bits(y), bits(keep)), name


def test_mask_is_the_gate_in_logical_order():
    """The mask's bit i is element i of x in row-major order (LSB first), whatever x's strides."""
    x = values((16, 24), torch.float32, 6).t()  # (24, 16), column-major storage
    _, mask = torch.ops.relugrad.relu_mask(x)
    gate = (~(x.contiguous().reshape(-1) <= 0)).to(torch.uint8)  # the torch preset's gate: not y <= 0
    want = torch.zeros(mask.numel() * 8, dtype=torch.uint8)
    want[:gate.numel()] = gate
    packed = (want.view(-1, 8) << torch.arange(8, dtype=torch.uint8)).sum(1).to(torch.uint8)
    assert torch.equal(mask, packed)

"""The 1-bit mask path from Python: relugrad.relu_forward / relu_grad_mask
(NumPy, every preset and dtype, against relu_grad and a NumPy gate oracle),
its argument checks, and the GIL release."""
import threading

import numpy as np
import pytest

import relugrad
from cases import DTYPES, THRESHOLDS, random_case, special_case, to_bits

ALL_PRESETS = ("torch", "tensorflow", "jax", "onednn", "mindspore")


def gate_oracle(x, semantics, threshold):
    """Gate open per element, as NumPy formulas (IEEE presets only: no DAZ)."""
    xc = x.astype(np.float64 if x.dtype == np.float64 else np.float32)
    t = np.array([threshold], dtype=xc.dtype)[0]
    gate = relugrad.preset_settings(semantics)["gate"]
    with np.errstate(invalid="ignore"):
        return ~(xc <= t) if gate == "zero_if_le" else (xc > t)


@pytest.mark.parametrize("dtype", list(DTYPES))
@pytest.mark.parametrize("semantics", ALL_PRESETS)
@pytest.mark.parametrize("threshold", THRESHOLDS)
def test_grad_from_mask_equals_grad_from_x(dtype, semantics, threshold):
    for dy, x in (special_case(dtype), random_case(dtype, n=1001)):
        y, mask = relugrad.relu_forward(x, semantics=semantics, threshold=threshold)
        assert mask.dtype == np.uint8 and mask.shape == (relugrad.mask_bytes(x.size),)
        assert y.dtype == x.dtype and y.shape == x.shape
        dx = relugrad.relu_grad_mask(dy, mask, semantics=semantics, threshold=threshold)
        want = relugrad.relu_grad(dy, x, semantics=semantics, threshold=threshold)
        assert np.array_equal(to_bits(dx), to_bits(want))
        if relugrad.preset_settings(semantics)["denormals"] == "ieee":
            bits = np.packbits(gate_oracle(x, semantics, threshold), bitorder="little")
            assert np.array_equal(mask, bits)  # padding bits of the last byte are 0 too


@pytest.mark.parametrize("dtype", list(DTYPES))
def test_torch_preset_forward_values(dtype):
    # y = x <= 0 ? +0 : x, NaN bits kept (torch.threshold(x, 0, 0)).
    _, x = special_case(dtype)
    y, _ = relugrad.relu_forward(x)
    xb = to_bits(x)
    with np.errstate(invalid="ignore"):  # sNaN casts
        closed = (x.astype(np.float64) <= 0)
    assert np.all(to_bits(y)[closed] == 0)
    assert np.array_equal(to_bits(y)[~closed], xb[~closed])


@pytest.mark.parametrize("dtype", list(DTYPES))
@pytest.mark.parametrize("semantics", ALL_PRESETS)
def test_keep_negative_zero_changes_only_a_closed_negative_zero(dtype, semantics):
    # keep_negative_zero=True: y = x for x = -0 (torch.relu's clamp_min), every other
    # element and every mask bit as without it; the torch preset's y is then x < 0 ? +0 : x.
    _, x = special_case(dtype)
    xb = to_bits(x)
    negative_zero = xb == to_bits(np.array([-0.0], dtype=x.dtype))[0]
    assert negative_zero.any(), "the case must hold a -0"
    y0, m0 = relugrad.relu_forward(x, semantics=semantics)
    y1, m1 = relugrad.relu_forward(x, semantics=semantics, keep_negative_zero=True)
    assert np.array_equal(m0, m1)
    assert np.all(to_bits(y0)[negative_zero] == 0)
    assert np.array_equal(to_bits(y1)[negative_zero], xb[negative_zero])
    assert np.array_equal(to_bits(y1)[~negative_zero], to_bits(y0)[~negative_zero])
    if semantics == "torch":
        with np.errstate(invalid="ignore"):  # sNaN casts
            below = x.astype(np.float64) < 0
        assert np.all(to_bits(y1)[below] == 0)
        assert np.array_equal(to_bits(y1)[~below], xb[~below])
    # Leaky: y = x*alpha decides the zero's sign with or without the flag.
    ya, _ = relugrad.relu_forward(x, semantics="onednn", alpha=0.25, keep_negative_zero=True)
    yb, _ = relugrad.relu_forward(x, semantics="onednn", alpha=0.25)
    assert np.array_equal(to_bits(ya), to_bits(yb))


def test_keep_negative_zero_is_a_bool_option():
    with pytest.raises(TypeError, match="keep_negative_zero: expected a bool, got int"):
        relugrad.relu_forward(np.zeros(4, np.float32), keep_negative_zero=1)
    keep = relugrad.Options(keep_negative_zero=True)
    assert keep.keep_negative_zero and not relugrad.Options().keep_negative_zero
    assert keep != relugrad.Options() and "keep_negative_zero=True" in repr(keep)
    assert "keep_negative_zero" not in repr(relugrad.Options())


def test_sizes_and_in_place():
    rng = np.random.default_rng(5)
    for n in (0, 1, 7, 8, 9, 63, 64, 65, 1000, 100_003):
        x = rng.standard_normal(n).astype(np.float32)
        dy = rng.standard_normal(n).astype(np.float32)
        want_y, want_m = relugrad.relu_forward(x)
        mask = np.full(relugrad.mask_bytes(n), 0xAA, np.uint8)
        xi = x.copy()
        y, m = relugrad.relu_forward(xi, out=xi, mask_out=mask, threads=1)
        assert y is xi and m is mask
        assert np.array_equal(to_bits(y), to_bits(want_y)) and np.array_equal(m, want_m)
        want_dx = relugrad.relu_grad(dy, x)
        dyi = dy.copy()
        assert relugrad.relu_grad_mask(dyi, m, out=dyi) is dyi
        assert np.array_equal(to_bits(dyi), to_bits(want_dx))


def test_shape_is_kept_and_mask_is_flat():
    x = np.linspace(-1, 1, 24, dtype=np.float64).reshape(2, 3, 4)
    y, m = relugrad.relu_forward(x)
    assert y.shape == (2, 3, 4) and m.shape == (3,)
    assert relugrad.relu_grad_mask(x, m).shape == (2, 3, 4)


def test_threads_identical():
    dy, x = random_case("f32", n=(1 << 20) + 13)
    y1, m1 = relugrad.relu_forward(x, threads=1)
    for t in (2, 3):
        y, m = relugrad.relu_forward(x, threads=t)
        assert np.array_equal(to_bits(y), to_bits(y1)) and np.array_equal(m, m1)
        assert np.array_equal(to_bits(relugrad.relu_grad_mask(dy, m, threads=t)),
                              to_bits(relugrad.relu_grad_mask(dy, m1, threads=1)))


def test_errors_name_the_argument():
    x = np.ones(20, np.float32)
    _, m = relugrad.relu_forward(x)
    with pytest.raises(TypeError, match="mask: a packed mask must have dtype uint8"):
        relugrad.relu_grad_mask(x, m.astype(np.int8))
    with pytest.raises(TypeError, match="mask_out: a packed mask must have dtype uint8"):
        relugrad.relu_forward(x, mask_out=np.zeros(3, np.int16))
    with pytest.raises(ValueError, match=r"mask: has 2 bytes, dy has 20 elements \(needs ceil\(n/8\) = 3\)"):
        relugrad.relu_grad_mask(x, m[:2])
    with pytest.raises(ValueError, match=r"mask: has 4 bytes, x has 20"):
        relugrad.relu_forward(x, mask_out=np.zeros(4, np.uint8))
    with pytest.raises(TypeError, match="out: dtype f64 does not match dy's f32"):
        relugrad.relu_grad_mask(x, m, out=np.ones(20))
    with pytest.raises(ValueError, match=r"y: shape \(19,\) does not match x's \(20,\)"):
        relugrad.relu_forward(x, out=np.ones(19, np.float32))
    ro = np.zeros(3, np.uint8)
    ro.flags.writeable = False
    with pytest.raises(ValueError, match="mask_out: array is read-only"):
        relugrad.relu_forward(x, mask_out=ro)
    with pytest.raises(ValueError, match="x: array is not C-contiguous"):
        relugrad.relu_forward(np.ones((4, 4), np.float32).T)
    with pytest.raises(TypeError, match="x: dtype int32"):
        relugrad.relu_forward(np.ones(4, np.int32))
    with pytest.raises(ValueError, match="mask overlaps"):
        buf = np.zeros(64, np.uint8)  # the mask inside y's own bytes
        xs = np.ones(16, np.float32)
        relugrad.relu_forward(xs, out=buf.view(np.float32), mask_out=buf[:2])
    with pytest.raises(ValueError, match="semantics"):
        relugrad.relu_forward(x, semantics="caffe")
    with pytest.raises(ValueError, match="n: expected an int >= 0"):
        relugrad.mask_bytes(-1)


def test_releases_the_gil():
    dy, x = random_case("f64", n=1 << 20)
    want_y, want_m = relugrad.relu_forward(x)
    want_dx = relugrad.relu_grad_mask(dy, want_m)
    results = []

    def work():
        y, m = relugrad.relu_forward(x, threads=1)
        results.append((y, m, relugrad.relu_grad_mask(dy, m, threads=1)))

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(results) == 4
    for y, m, dx in results:
        assert np.array_equal(to_bits(y), to_bits(want_y)) and np.array_equal(m, want_m)
        assert np.array_equal(to_bits(dx), to_bits(want_dx))

"""Large NumPy results come from relugrad's buffer cache: bits equal to a
call into caller memory, the block reused once the result dies, shapes,
dtypes (bf16 included) and the mask result kept, and results that outlive
views of them stay valid. The stores= hint never changes a bit."""
import gc

import numpy as np
import pytest

import relugrad
from cases import DTYPES, random_case, to_bits

N = 300_000  # f16/bf16: 600 KB, above the 256 KiB cache threshold


@pytest.mark.parametrize("dtype", list(DTYPES))
def test_cached_result_equals_call_into_caller_memory(dtype):
    dy, s = random_case(dtype, n=N)
    want = np.empty_like(dy)
    relugrad.relu_grad(dy, s, semantics="tensorflow", out=want)
    for _ in range(3):  # later rounds reuse the freed block
        got = relugrad.relu_grad(dy, s, semantics="tensorflow")
        assert got.dtype == dy.dtype and got.shape == dy.shape and got.flags.c_contiguous
        assert got.flags.writeable
        assert np.array_equal(to_bits(got), to_bits(want))
        del got
        gc.collect()


def test_freed_result_block_is_reused_and_trim_releases_it():
    relugrad.buffer_cache_trim()  # independent of what earlier tests left cached
    dy, s = random_case("f32", n=N)
    dx = relugrad.relu_grad(dy.reshape(600, 500), s.reshape(600, 500))
    assert dx.shape == (600, 500)
    address = dx.__array_interface__["data"][0]
    del dx
    gc.collect()
    before = relugrad.buffer_cache_stats()
    assert before["cached_bytes"] >= N * 4
    again = relugrad.relu_grad(dy, s)
    after = relugrad.buffer_cache_stats()
    assert after["hits"] == before["hits"] + 1
    assert again.__array_interface__["data"][0] == address
    del again
    gc.collect()
    assert relugrad.buffer_cache_trim() >= N * 4
    assert relugrad.buffer_cache_stats()["cached_bytes"] == 0


def test_view_keeps_the_block_alive():
    dy, s = random_case("f32", n=N)
    want = relugrad.relu_grad(dy, s, out=np.empty_like(dy))
    tail = relugrad.relu_grad(dy, s)[N // 2:]  # the full result dies, the view holds it
    gc.collect()
    other = relugrad.relu_grad(s, dy)  # must not be handed the block under `tail`
    assert not np.shares_memory(tail, other)
    assert np.array_equal(to_bits(tail), to_bits(want[N // 2:]))


def test_mask_result_comes_from_the_cache_with_its_own_shape():
    x = np.random.default_rng(3).standard_normal(8 * N).astype(np.float32)
    y, mask = relugrad.relu_forward(x)
    assert mask.dtype == np.uint8 and mask.shape == (N,)
    assert np.array_equal(np.unpackbits(mask, bitorder="little").astype(bool), x > 0)
    assert np.array_equal(y, np.where(x > 0, x, np.float32(0)))


@pytest.mark.parametrize("stores", ["auto", "cached", "streaming"])
@pytest.mark.parametrize("dtype", list(DTYPES))
def test_stores_hint_never_changes_a_bit(dtype, stores):
    for n in (5, 4099, N):
        dy, s = random_case(dtype, n=n)
        want = relugrad.relu_grad_reference(dy, s, semantics="onednn", alpha=0.25)
        got = relugrad.relu_grad(dy, s, semantics="onednn", alpha=0.25, stores=stores)
        assert np.array_equal(to_bits(got), to_bits(want)), (n, stores)
        y, mask = relugrad.relu_forward(s, stores=stores)
        y0, mask0 = relugrad.relu_forward(s)
        assert np.array_equal(to_bits(y), to_bits(y0)) and np.array_equal(mask, mask0)
        dx = relugrad.relu_grad_mask(dy, mask, stores=stores)
        assert np.array_equal(to_bits(dx), to_bits(relugrad.relu_grad(dy, s)))


def test_stores_hint_rejects_unknown_values():
    dy, s = random_case("f32", n=8)
    with pytest.raises(ValueError, match="stores: 'fast' is not one of auto, cached, streaming"):
        relugrad.relu_grad(dy, s, stores="fast")
    with pytest.raises(ValueError, match="stores"):
        relugrad.relu_forward(s, stores=None)

"""relugrad.Options and relugrad.Plan: options bound once and validated by the
library, plans that give the bits of the functional calls, errors that name
the argument, and the functional API's plan cache keeping -0.0 and 0.0 apart."""
import math
import threading

import ml_dtypes
import numpy as np
import pytest

import relugrad
from cases import random_case, to_bits

BF16 = np.dtype(ml_dtypes.bfloat16)


def test_options_resolve_the_preset_and_show_it():
    o = relugrad.Options("tensorflow", threshold=0.5)
    assert (o.gate, o.combine, o.denormals, o.threshold_rounding) == ("pass_if_gt", "multiply", "ftz_daz",
                                                                       "compute")
    assert o.threshold == 0.5 and o.alpha == 0.0 and o.clip is None and o.gate_max == math.inf
    assert o.stores == "auto" and o.backend == "cpu" and o.threads == 0
    assert repr(o) == ("relugrad.Options(gate='pass_if_gt', combine='multiply', denormals='ftz_daz', "
                       "threshold_rounding='compute', threshold=0.5, alpha=0.0, clip=None, gate_max=inf, "
                       "threads=0, stores='auto', backend='cpu')")
    # Overrides by name; threads as the library resolves them (capped at 256).
    o = relugrad.Options("torch", gate="pass_if_gt", clip=(-1.0, 2.0), threads=1000, stores="streaming")
    assert o.gate == "pass_if_gt" and o.clip == (-1.0, 2.0) and o.threads == 256 and o.stores == "streaming"


def test_options_are_values_and_immutable():
    a, b = relugrad.Options("jax", alpha=0.25), relugrad.Options("jax", alpha=0.25)
    assert a == b and hash(a) == hash(b)
    assert a != relugrad.Options("jax", alpha=0.5)
    # -0.0 and 0.0 clip bounds write different bits: different options.
    assert relugrad.Options(clip=(-0.0, 1.0)) != relugrad.Options(clip=(0.0, 1.0))
    with pytest.raises(AttributeError):
        a.threshold = 1.0


@pytest.mark.parametrize("kw, exc, match", [
    (dict(threshold=float("nan")), ValueError, "threshold is NaN"),
    (dict(alpha=float("inf")), ValueError, "alpha must be finite"),
    (dict(clip=(2.0, 1.0)), ValueError, r"clip range \[2, 1\] is empty"),
    (dict(gate_max=0.0), ValueError, "gate_max .* must be greater than threshold"),
    (dict(threads=-1), ValueError, "threads must be >= 0"),
    (dict(gate="gt"), ValueError, r"unknown gate 'gt' \(zero_if_le, pass_if_gt\)"),
    (dict(gate=1.5), TypeError, "gate: expected a name or an int"),
])
def test_options_are_validated_by_the_library(kw, exc, match):
    with pytest.raises(exc, match=match):
        relugrad.Options(**kw)


def test_plan_runs_give_the_functional_bits():
    for dtype in ("f32", "f16", "bf16", "f64"):
        dy, s = random_case(dtype, n=777)
        for semantics in relugrad.PRESETS:
            options = relugrad.Options(semantics, threshold=0.25)
            plan = relugrad.Plan("relu_grad", dtype, options)
            assert (plan.op, plan.dtype) == ("relu_grad", dtype) and plan.options == options
            out = np.empty_like(dy)
            plan(dy.view(np.uint16) if dy.dtype == BF16 else dy, s.view(np.uint16) if s.dtype == BF16 else s,
                 out.view(np.uint16) if out.dtype == BF16 else out)
            want = relugrad.relu_grad_reference(dy, s, semantics=semantics, threshold=0.25)
            assert np.array_equal(to_bits(out), to_bits(want)), (dtype, semantics)
            assert np.array_equal(to_bits(out), to_bits(relugrad.relu_grad(dy, s, semantics=semantics,
                                                                           threshold=0.25)))


def test_plan_names_its_kernel_variant():
    # The CPU relu_grad row chosen at create, by its `relugrad info --variants` name; presets with
    # different element rules run different rows; the mask ops choose per block and name none.
    names = {semantics: relugrad.Plan("relu_grad", "f32", relugrad.Options(semantics)).variant
             for semantics in relugrad.PRESETS}
    assert all(names.values()) and len(set(names.values())) >= 2, names
    assert relugrad.Plan("relu_grad", "bf16", relugrad.Options("torch", alpha=0.5)).variant == "alpha16_scalar"
    assert relugrad.Plan("relu_grad_mask", "f32", relugrad.Options()).variant == ""


def test_mask_plans_round_trip():
    dy, x = random_case("f32", n=1001)
    options = relugrad.Options("onednn", alpha=0.5)
    forward = relugrad.Plan("relu_forward_mask", "f32", options)
    backward = relugrad.Plan("relu_grad_mask", "f32", options)
    y = np.empty_like(x)
    mask = np.empty(relugrad.mask_bytes(x.size), np.uint8)
    forward(x, y, mask)
    want_y, want_mask = relugrad.relu_forward(x, semantics="onednn", alpha=0.5)
    assert np.array_equal(to_bits(y), to_bits(want_y)) and np.array_equal(mask, want_mask)
    dx = np.empty_like(dy)
    backward(dy, mask, dx)
    assert np.array_equal(to_bits(dx), to_bits(relugrad.relu_grad_reference(dy, x, semantics="onednn",
                                                                            alpha=0.5)))
    with pytest.raises(RuntimeError, match="unsupported: relugrad_relu_forward writes relu"):
        relugrad.Plan("relu_forward_mask", "f32", relugrad.Options(gate_max=6.0))


def test_plan_errors_name_the_argument():
    plan = relugrad.Plan("relu_grad", "f32", relugrad.Options())
    a, b = np.ones(4, np.float32), np.ones(4, np.float32)
    with pytest.raises(TypeError, match="dy: dtype f64 does not match the plan's f32"):
        plan(np.ones(4), b, np.empty(4, np.float32))
    with pytest.raises(TypeError, match="s: dtype f16 does not match dy's f32"):
        plan(a, np.ones(4, np.float16), np.empty(4, np.float32))
    with pytest.raises(ValueError, match=r"out: shape \(3,\) does not match dy's \(4,\)"):
        plan(a, b, np.empty(3, np.float32))
    with pytest.raises(ValueError, match="overlap"):
        buf = np.ones(8, np.float32)
        plan(buf[:4], b, buf[1:5])
    with pytest.raises(ValueError, match="unknown plan op 'relu'"):
        relugrad.Plan("relu", "f32", relugrad.Options())
    with pytest.raises(ValueError, match="unknown dtype 'f8'"):
        relugrad.Plan("relu_grad", "f8", relugrad.Options())
    if not relugrad.info()["backends"]["cuda"]:
        with pytest.raises(RuntimeError, match="CUDA backend is not built"):
            relugrad.Plan("relu_grad", "f32", relugrad.Options(backend="cuda"))


def test_plan_by_address_and_from_many_threads():
    dy, s = random_case("f64", n=1 << 16)
    plan = relugrad.Plan("relu_grad", "f64", relugrad.Options("tensorflow", threads=1))
    want = relugrad.relu_grad(dy, s, semantics="tensorflow")
    outs = [np.empty_like(dy) for _ in range(4)]

    def work(out):
        for _ in range(20):
            plan.run_host(dy.ctypes.data, s.ctypes.data, out.ctypes.data, dy.size)

    threads = [threading.Thread(target=work, args=(o,)) for o in outs]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert all(np.array_equal(to_bits(o), to_bits(want)) for o in outs)


def test_functional_calls_reuse_one_plan_per_configuration_and_keep_signed_zeros_apart():
    relugrad.plan_cache_clear()
    assert relugrad.plan_cache_stats()["keys"] == 0
    dy = np.array([5.0, -5.0], np.float32)
    s = np.array([1.0, 1.0], np.float32)
    a = relugrad.relu_grad(dy, s, clip=(0.0, 1.0))
    b = relugrad.relu_grad(dy, s, clip=(-0.0, 1.0))
    relugrad.relu_grad(dy, s, clip=(0.0, 1.0))
    # The clamp of -5 writes the lower bound's own bits: +0 and -0.
    assert a.view(np.uint32).tolist() == [0x3F800000, 0x00000000]
    assert b.view(np.uint32).tolist() == [0x3F800000, 0x80000000]
    # Two configurations, one plan each; each keyed by its Options and its exact arguments.
    stats = relugrad.plan_cache_stats()
    assert (stats["configurations"], stats["plans"], stats["keys"]) == (2, 2, 4), stats


def test_the_plan_cache_is_bounded_and_clearing_it_keeps_the_bits():
    dy, s = random_case("f32", n=64)
    want = relugrad.relu_grad(dy, s, alpha=0.5)
    bound = relugrad.plan_cache_stats()["max_keys"]
    for i in range(bound):  # distinct configurations: two keys each
        relugrad.relu_grad(dy, s, threshold=float(i))
        assert relugrad.plan_cache_stats()["keys"] <= bound
    assert np.array_equal(to_bits(relugrad.relu_grad(dy, s, alpha=0.5)), to_bits(want))
    relugrad.plan_cache_clear()
    assert relugrad.plan_cache_stats() == dict(keys=0, configurations=0, plans=0, max_keys=bound)
    assert np.array_equal(to_bits(relugrad.relu_grad(dy, s, alpha=0.5)), to_bits(want))


def test_the_plan_cache_enters_no_deprecated_spelling_and_no_unhashable_argument():
    dy, s = random_case("f32", n=16)
    relugrad.plan_cache_clear()
    with pytest.warns(DeprecationWarning):
        relugrad.relu_grad(dy, s, denormals="ftz")
    assert relugrad.plan_cache_stats()["keys"] == 1  # its Options only: the next call warns again
    with pytest.warns(DeprecationWarning):
        relugrad.relu_grad(dy, s, denormals="ftz")
    relugrad.relu_grad(dy, s, clip=[0.0, 1.0])  # a list: checked on every call, keyed by its Options
    assert relugrad.plan_cache_stats()["keys"] == 2
    with pytest.raises(TypeError, match="threads: expected an int or None, got list"):
        relugrad.relu_grad(dy, s, threads=[1])


def test_functional_calls_treat_signed_zero_threshold_alpha_and_gate_max_as_the_library_does():
    # The functional calls' memo keys floats as Python compares them (-0.0 == 0.0), so a call
    # with -0.0 may run the plan built for 0.0: exact only if the library gives both the same
    # bits. Each case runs the memo's way (0.0 first, then -0.0) and a fresh plan of -0.0.
    dy, s = random_case("f32", n=512)
    s[:64] = 0.0
    s[64:128] = -0.0
    cases = [dict(alpha=a) for a in (0.0, -0.0)] + [dict(threshold=t) for t in (0.0, -0.0)]
    cases += [dict(threshold=-1.0, gate_max=h) for h in (0.0, -0.0)]
    for semantics in relugrad.PRESETS:
        for combine in ("select", "multiply"):
            for kw in cases:
                got = relugrad.relu_grad(dy, s, semantics=semantics, combine=combine, **kw)
                plan = relugrad.Plan("relu_grad", "f32", relugrad.Options(semantics, combine=combine, **kw))
                want = np.empty_like(dy)
                plan(dy, s, want)
                assert np.array_equal(to_bits(got), to_bits(want)), (semantics, combine, kw)


def test_plan_arguments_that_are_no_usable_array_are_named():
    # Imported without conversion: a read-only or non-uint8 array is refused, never copied
    # into a temporary that would take the result.
    plan = relugrad.Plan("relu_grad", "f32", relugrad.Options())
    dy = np.ones(4, np.float32)
    ro = np.zeros(4, np.float32)
    ro.flags.writeable = False
    with pytest.raises(TypeError, match=r"out: expected a writable array .*, got ndarray"):
        plan(dy, dy, ro)
    assert not ro.any()
    with pytest.raises(TypeError, match=r"dy: expected an array .*, got list"):
        plan([1.0] * 4, dy, np.empty(4, np.float32))
    with pytest.raises(TypeError, match=r"mask: expected a uint8 array, got ndarray"):
        relugrad.Plan("relu_grad_mask", "f32", relugrad.Options())(np.ones(8, np.float32), np.zeros(1, np.int8),
                                                                    np.empty(8, np.float32))
    with pytest.raises(TypeError, match=r"mask: expected a writable uint8 array"):
        relugrad.Plan("relu_forward_mask", "f32", relugrad.Options())(dy, np.empty(4, np.float32),
                                                                       np.zeros(1, np.float32))

"""relugrad.relu_grad's contract: array kinds, out=/in place, threads, errors
that name the argument, info()."""
import os
import re
import shutil
import subprocess
import sys
import threading

import ml_dtypes
import numpy as np
import pytest

import relugrad
from cases import DTYPES, random_case, to_bits

BF16 = np.dtype(ml_dtypes.bfloat16)


@pytest.mark.parametrize("dtype", list(DTYPES))
def test_numpy_in_numpy_out(dtype):
    dy, s = random_case(dtype, n=37)
    dx = relugrad.relu_grad(dy, s)
    assert isinstance(dx, np.ndarray) and dx.dtype == DTYPES[dtype] and dx.shape == dy.shape
    want = np.where(s.astype(np.float64) <= 0, 0, dy.astype(np.float64))
    assert np.array_equal(dx.astype(np.float64), want)


def test_shapes_are_kept_and_empty_is_ok():
    dy = np.arange(24, dtype=np.float32).reshape(2, 3, 4) - 10
    assert relugrad.relu_grad(dy, dy).shape == (2, 3, 4)
    e = np.zeros((0, 5), np.float32)
    assert relugrad.relu_grad(e, e).shape == (0, 5)
    z = np.array(2.0, dtype=np.float32)
    assert relugrad.relu_grad(z, z) == 2.0


@pytest.mark.parametrize("alias", ["dy", "s"])
def test_out_may_alias_an_input(alias):
    dy, s = random_case("f32", n=5000)
    want = relugrad.relu_grad(dy, s)
    dy2, s2 = dy.copy(), s.copy()
    target = dy2 if alias == "dy" else s2
    got = relugrad.relu_grad(dy2, s2, out=target)
    assert got is target
    assert np.array_equal(to_bits(got), to_bits(want))


def test_out_given_is_returned():
    dy, s = random_case("bf16", n=100)
    out = np.empty_like(dy)
    assert relugrad.relu_grad(dy, s, out=out) is out


def test_partial_overlap_is_a_value_error():
    buf = np.ones(10, np.float32)
    with pytest.raises(ValueError, match="overlap"):
        relugrad.relu_grad(buf[1:], buf[:-1], out=buf[:-1].copy() if False else buf[:-1])


def test_threads_give_identical_bits():
    dy, s = random_case("f32", n=1 << 20)
    one = relugrad.relu_grad(dy, s, threads=1)
    for t in (2, 3, 8):
        assert np.array_equal(to_bits(one), to_bits(relugrad.relu_grad(dy, s, threads=t)))


def test_releases_the_gil():
    # Four Python threads computing at once finish with correct results (a
    # held GIL would serialise them; a wrongly released one would crash).
    dy, s = random_case("f64", n=1 << 20)
    want = relugrad.relu_grad(dy, s)
    results = []

    def work():
        results.append(relugrad.relu_grad(dy, s, threads=1))

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(results) == 4 and all(np.array_equal(r, want) for r in results)


@pytest.mark.parametrize("bad, arg, exc, match", [
    (dict(dy=np.ones(4, np.int32)), "dy", TypeError, "dy: dtype int32"),
    (dict(s=np.ones(4, np.float64)), "s", TypeError, "s: dtype"),
    (dict(s=np.ones(5, np.float32)), "s", ValueError, r"s: shape \(5,\)"),
    (dict(dy=np.ones(8, np.float32)[::2]), "dy", ValueError, "dy: array is not C-contiguous"),
    (dict(s=np.ones((4, 4), np.float32).T[0]), "s", ValueError, "s: array is not C-contiguous"),
    (dict(dy=[1.0, 2.0, 3.0, 4.0]), "dy", TypeError, "dy: expected a NumPy array"),
    (dict(out=np.ones(4, np.float16)), "out", TypeError, "out: dtype"),
    (dict(out=np.ones(3, np.float32)), "out", ValueError, r"out: shape \(3,\)"),
    (dict(semantics="pytorch"), "semantics", ValueError, "semantics: 'pytorch'"),
    (dict(threshold="0"), "threshold", TypeError, "threshold: expected a real number"),
    (dict(threshold=float("nan")), "threshold", ValueError, "threshold is NaN"),
    (dict(alpha=float("inf")), "alpha", ValueError, "alpha must be finite"),
    (dict(clip=(2.0, 1.0)), "clip", ValueError, "clip range"),
    (dict(clip=3.0), "clip", TypeError, "clip: expected None or a"),
    (dict(threads=-1), "threads", ValueError, "threads: must be >= 0"),
    (dict(threads=2**31), "threads", ValueError, "threads: at most 2147483647"),
    (dict(threads=1.5), "threads", TypeError, "threads: expected an int"),
    (dict(gate="gt"), "gate", ValueError, "gate: 'gt'"),
    (dict(combine="mul"), "combine", ValueError, "combine: 'mul'"),
    (dict(denormals="flush"), "denormals", ValueError, "denormals: 'flush' is not one of ieee, ftz_daz"),
    (dict(threshold_rounding="f32"), "threshold_rounding", ValueError, "threshold_rounding: 'f32'"),
])
@pytest.mark.parametrize("warm", [False, True], ids=["first_call", "cached_options"])
def test_errors_name_the_argument(bad, arg, exc, match, warm):
    # cached_options: a call with the same options ran before, so the NumPy call's one C entry
    # sees the arrays first; what it does not serve still gets the checked path's error.
    kw = dict(dy=np.ones(4, np.float32), s=np.ones(4, np.float32))
    kw.update(bad)
    dy, s = kw.pop("dy"), kw.pop("s")
    relugrad.plan_cache_clear()
    if warm:
        try:
            relugrad.relu_grad(np.ones(4, np.float32), np.ones(4, np.float32), **{k: v for k, v in kw.items()
                                                                                   if k != "out"})
        except (TypeError, ValueError):
            pass  # an option error: nothing to cache
    with pytest.raises(exc, match=match):
        relugrad.relu_grad(dy, s, **kw)


@pytest.mark.parametrize("warm", [False, True], ids=["first_call", "cached_options"])
def test_read_only_out_is_rejected_read_only_inputs_are_fine(warm):
    relugrad.plan_cache_clear()
    if warm:
        relugrad.relu_grad(np.ones(4, np.float32), np.ones(4, np.float32))
    dy = np.ones(4, np.float32)
    dy.flags.writeable = False
    assert np.array_equal(relugrad.relu_grad(dy, dy), np.ones(4, np.float32))
    with pytest.raises(ValueError, match="out: array is read-only"):
        relugrad.relu_grad(np.ones(4, np.float32), np.ones(4, np.float32), out=dy)


def test_bfloat16_is_ml_dtypes():
    dy = np.array([1.5, -2.0, 3.0], dtype=BF16)
    s = np.array([1.0, 0.0, -1.0], dtype=BF16)
    dx = relugrad.relu_grad(dy, s)
    assert dx.dtype == BF16
    assert dx.astype(np.float32).tolist() == [1.5, 0.0, 0.0]


def test_bf16_threshold_is_compared_in_f32_by_default():
    # A bf16 gate of 0.10009765625 (0x3dcd) against t = 0.1: f32 compare says
    # open (PyTorch >= 2.0, measured with 2.15); rounding t to bf16 first
    # (PyTorch 1.13) says closed.
    s = np.array([0.10009765625], dtype=BF16)
    dy = np.array([1.0], dtype=BF16)
    assert relugrad.relu_grad(dy, s, threshold=0.1)[0] == 1.0
    assert relugrad.relu_grad(dy, s, threshold=0.1, threshold_rounding="dtype")[0] == 0.0


def test_info_mirrors_the_cli():
    info = relugrad.info()
    assert info["version"] == relugrad.__version__
    for key in ("compiler", "highway", "simd_compiled", "simd_attainable", "simd_selected",
                "threads_default", "backends"):
        assert key in info
    assert info["simd_selected"] in info["simd_attainable"]
    assert info["backends"]["cpu"] is True
    assert "simd_selected: " in relugrad.format_info()
    assert info["torch_native"].startswith(("built for torch ", "not built"))


def _torch_native_line(package):
    """relugrad.info()["torch_native"] of the package at `package`, in a fresh interpreter."""
    code = "import relugrad; print(relugrad.info()['torch_native'])"
    env = dict(os.environ, PYTHONPATH=str(package.parent))
    return subprocess.run([sys.executable, "-c", code], env=env, check=True, capture_output=True,
                          text=True).stdout.strip()


def test_info_says_why_the_torch_native_library_was_not_built(tmp_path):
    # The build writes its reason beside the package (_relugrad_torch.not_built): no torch at
    # build time, RELUGRAD_TORCH_NATIVE=OFF, or a torch whose C++ autograd API neither form fits.
    # A copy of the package without its torch-native library stands for such a build.
    here = os.path.dirname(relugrad.__file__)
    package = tmp_path / "relugrad"
    shutil.copytree(here, package, ignore=shutil.ignore_patterns("_relugrad_torch.*", "__pycache__", "torch"))
    assert _torch_native_line(package) == "not built (no torch importable when the package was built)"
    (package / "_relugrad_torch.not_built").write_text("torch 9.9's C++ autograd API matches neither form\n")
    assert _torch_native_line(package) == "not built (torch 9.9's C++ autograd API matches neither form)"


def test_set_max_isa_caps_dispatch():
    names = relugrad.info()["simd_attainable"]
    try:
        for name in names:
            relugrad.set_max_isa(name)
            assert relugrad.info()["simd_selected"] == name
            dy, s = random_case("f16", n=999)
            assert np.array_equal(to_bits(relugrad.relu_grad(dy, s)),
                                  to_bits(relugrad.relu_grad_reference(dy, s)))
        with pytest.raises(ValueError):
            relugrad.set_max_isa("no_such_isa")
    finally:
        relugrad.set_max_isa(None)


def test_preset_settings():
    assert relugrad.preset_settings("torch") == dict(gate="zero_if_le", combine="select",
                                                     denormals="ieee", threshold_rounding="compute")
    with pytest.raises(ValueError, match="semantics"):
        relugrad.preset_settings("mxnet")


def test_enum_names_come_from_the_library():
    # Each table is the C ABI's (relugrad_enum_*), canonical names in declaration order: the
    # library's own errors list them so, and its values are the enum's.
    assert relugrad.DENORMALS == {"ieee": 0, "ftz_daz": 1}
    assert [relugrad.Options(backend=code).backend for code in (0, 2)] == ["cpu", "ascend_twin"]
    assert set(relugrad.info()["backends"]) == {"cpu", "cuda", "ascend_twin"}
    with pytest.raises(ValueError, match=r"unknown backend 'nope' \(cpu, cuda, ascend_twin\)"):
        relugrad.Options(backend="nope")
    presets = ", ".join(relugrad.PRESETS)
    with pytest.raises(ValueError, match=re.escape(f"unknown semantics preset 'mxnet' ({presets})")):
        relugrad.Options("mxnet")
    with pytest.raises(ValueError, match=r"unknown denormals mode 'flush' \(ieee, ftz_daz\)"):
        relugrad.Options(denormals="flush")


def test_deprecated_spelling_warns_and_means_the_canonical_one():
    # s = the smallest f32 subnormal, dy = 1: FTZ/DAZ closes the gate, IEEE opens it.
    dy = np.ones(1, np.float32)
    s = np.array([1e-45], np.float32)
    with pytest.warns(DeprecationWarning, match="denormals='ftz' is deprecated: use denormals='ftz_daz'"):
        old = relugrad.relu_grad(dy, s, denormals="ftz")
    new = relugrad.relu_grad(dy, s, denormals="ftz_daz")
    assert old.view(np.uint32).tolist() == new.view(np.uint32).tolist() == [0]
    assert relugrad.relu_grad(dy, s, denormals="ieee").view(np.uint32).tolist() == [0x3F800000]


def test_numpy_bfloat16_never_passes_for_float16():
    # NumPy bf16 reaches a plan as its bits viewed as uint16, which a 16-bit plan reads as its
    # own dtype: a call mixing f16 and bf16 arrays must still be refused, naming the argument.
    f16, bf16 = np.ones(4, np.float16), np.ones(4, BF16)
    with pytest.raises(TypeError, match="s: dtype bf16 does not match dy's f16"):
        relugrad.relu_grad(f16, bf16)
    with pytest.raises(TypeError, match="out: dtype bf16 does not match dy's f16"):
        relugrad.relu_grad(f16, f16, out=np.empty(4, BF16))
    with pytest.raises(TypeError, match="out: dtype f16 does not match dy's bf16"):
        relugrad.relu_grad_reference(bf16, bf16, out=np.empty(4, np.float16))
    with pytest.raises(TypeError, match="y: dtype bf16 does not match x's f16"):
        relugrad.relu_forward(f16, out=np.empty(4, BF16))
    _, mask = relugrad.relu_forward(f16)
    with pytest.raises(TypeError, match="out: dtype bf16 does not match dy's f16"):
        relugrad.relu_grad_mask(f16, mask, out=np.empty(4, BF16))


class _DLPackOnly:
    """A CPU array known to relugrad only through the DLPack protocol and its shape (no dtype
    attribute relugrad reads): the generic producer path. Results go into out= arrays, since
    relugrad allocates like a generic producer from its dtype."""

    def __init__(self, a):
        self._a = a
        self.shape = a.shape

    def __dlpack__(self, *args, **kwargs):
        return self._a.__dlpack__(*args, **kwargs)

    def __dlpack_device__(self):
        return self._a.__dlpack_device__()


def test_generic_dlpack_arrays_get_the_bits_of_numpy_arrays():
    for dtype in ("f32", "f16", "f64"):
        dy, s = random_case(dtype, n=300)
        want = relugrad.relu_grad(dy, s, semantics="onednn", alpha=0.25)
        got = np.empty_like(dy)
        relugrad.relu_grad(_DLPackOnly(dy), _DLPackOnly(s), semantics="onednn", alpha=0.25, out=_DLPackOnly(got))
        assert np.array_equal(to_bits(got), to_bits(want)), dtype
        want_y, want_mask = relugrad.relu_forward(s)
        y, mask = np.empty_like(s), np.empty_like(want_mask)
        relugrad.relu_forward(_DLPackOnly(s), out=_DLPackOnly(y), mask_out=mask)
        assert np.array_equal(to_bits(y), to_bits(want_y)) and np.array_equal(mask, want_mask), dtype
        dx = np.empty_like(dy)
        relugrad.relu_grad_mask(_DLPackOnly(dy), mask, out=_DLPackOnly(dx))
        assert np.array_equal(to_bits(dx), to_bits(relugrad.relu_grad(dy, s))), dtype
    with pytest.raises(TypeError, match=r"dy: dtype int32 is not supported \(float16, bfloat16"):
        relugrad.relu_grad(_DLPackOnly(np.ones(4, np.int32)), np.ones(4, np.float32))
    with pytest.raises(TypeError, match="s: dtype uint16 is not supported"):
        relugrad.relu_grad(np.ones(4, np.float16), _DLPackOnly(np.ones(4, np.uint16)))
    with pytest.raises(TypeError, match="s: dtype f64 does not match dy's f32"):
        relugrad.relu_grad(np.ones(4, np.float32), _DLPackOnly(np.ones(4)))

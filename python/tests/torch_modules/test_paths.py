"""The three paths of a relugrad.torch.ReLU call (docs/torch.md, "The three paths"), one test per row, each
asserting which path ran by the profiler's event names: relugrad_native::relu (the native
entry's RECORD_FUNCTION; its forward calls aten's relu inside), relugrad::relu (the custom op's
dispatcher event), aten::relu with no relugrad event (stock)."""
import pytest

torch = pytest.importorskip("torch")

import relugrad.torch as rt  # noqa: E402
from torch_helpers import bits  # noqa: E402


_CUSTOM_OPS = {"relugrad::relu", "relugrad::relu_grad", "relugrad::relu_mask", "relugrad::relu_grad_mask"}


def _events(fn):
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU]) as prof:
        fn()
    return {e.name for e in prof.events()}


def _relugrad_events(names):
    return {n for n in names if n.startswith("relugrad")}


@pytest.mark.skipif(not rt.NATIVE, reason=f"the torch-native ReLU is not loaded: {rt.NATIVE_STATUS}")
def test_native_eager_row_plain_cpu_tensors_run_the_native_entry():
    x = torch.randn(64, 32, requires_grad=True)
    names = _events(lambda: rt.ReLU()(x).sum().backward())
    assert "relugrad_native::relu" in names and "relugrad::ReluBackward" in names  # the C++ node
    assert not names & _CUSTOM_OPS
    assert torch.equal(bits(x.grad), bits((x > 0).float()))


@pytest.mark.parametrize("how", ["no_native_library", "torch_func", "forward_ad", "meta"])
def test_custom_ops_row_runs_the_op(how):
    x = torch.randn(64, 32)
    relu = rt.ReLU()
    if how == "no_native_library":
        def run():
            with rt.use_native(False):
                xr = x.clone().requires_grad_()
                relu(xr).sum().backward()
    elif how == "torch_func":
        def run():
            torch.func.grad(lambda a: relu(a).sum())(x)
    elif how == "forward_ad":
        import torch.autograd.forward_ad as fwAD

        def run():
            with fwAD.dual_level():
                relu(fwAD.make_dual(x, torch.ones_like(x)))
    else:
        def run():
            relu(x.to("meta"))
    names = _events(run)
    assert "relugrad::relu" in names, sorted(_relugrad_events(names))
    assert "relugrad_native::relu" not in names


class _Subclass(torch.Tensor):
    pass


@pytest.mark.parametrize("make", [
    lambda: torch.randn(8, 4).as_subclass(_Subclass),          # a tensor subclass
    lambda: torch.randint(-3, 3, (8, 4)),                      # a dtype the kernels do not read
    lambda: torch.nested.nested_tensor([torch.randn(3), torch.randn(5)]),  # a nested tensor
], ids=["subclass", "int64", "nested"])
def test_stock_row_runs_torchs_relu_alone(make):
    x = make()
    names = _events(lambda: rt.ReLU()(x))
    assert not _relugrad_events(names), sorted(_relugrad_events(names))
    assert "aten::relu" in names


def test_use_native_false_restores_the_entry_after_the_block():
    from relugrad.torch import testing
    before = testing.native_entries()["relu"]
    with rt.use_native(False):
        assert testing.native_entries()["relu"] is None
    assert testing.native_entries()["relu"] is before


def test_the_fused_modules_ask_the_native_entries_rule():
    """One plain-tensor rule: the fused modules ask the library's own (testing.plain), which
    use_native leaves on; without the library no tensor is plain and the two modules run."""
    from relugrad.torch import testing
    library = testing.native_library()
    if library is None:
        assert testing.plain(torch.randn(3), False) is False
        return
    assert testing.plain is library.plain
    with rt.use_native(False):
        assert testing.plain(torch.randn(3), False) is True


def test_use_native_turns_off_only_the_named_entries():
    from relugrad.torch import testing

    def entries():
        now = testing.native_entries()
        return now["relu"], now["linear_relu"], now["relu_dropout"]

    before = entries()
    with rt.use_native(False, entries=("relu_dropout",)):
        assert entries()[2] is None and entries()[:2] == before[:2]
    with rt.use_native(False):
        assert entries() == (None, None, None)
        with rt.use_native(True, entries=("relu",)):
            assert entries()[0] is before[0] and entries()[1] is None
    assert entries() == before
    with pytest.raises(ValueError, match="entries"):
        with rt.use_native(False, entries=("nope",)):
            pass

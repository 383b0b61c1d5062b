"""relugrad.torch inside the training-step tools users wrap around a model: CPU autocast
(bfloat16, float16), activation checkpointing (torch.utils.checkpoint, reentrant and not, around a
block, around the whole model, checkpoint_sequential) and saved-tensor offloading. Each against
the same step on the stock model, bit for bit, over the probe step of replace_relu(mask=True)
and the steps after it."""
import contextlib
import copy

import pytest

torch = pytest.importorskip("torch", reason="PyTorch is not installed in this environment")
from torch import nn  # noqa: E402
from torch.utils.checkpoint import checkpoint, checkpoint_sequential  # noqa: E402

import relugrad.torch as rt  # noqa: E402
from relugrad.torch import fusion  # noqa: E402
from relugrad.torch import mask_probe  # noqa: E402
from test_torchvision_models import relu_nodes  # noqa: E402
from torch_helpers import bits  # noqa: E402

STEPS = 3  # the probe step, the first decided step, one more


class Net(nn.Module):
    """A block (Linear, ReLU, Linear, ReLU + Dropout, Linear), run checkpointed or not, then a
    ReLU whose consumer (a sum) saves nothing: with mask=True that one keeps only its mask."""

    def __init__(self, checkpointed=None):
        super().__init__()
        self.block = nn.Sequential(nn.Linear(12, 16), nn.ReLU(), nn.Linear(16, 16), nn.ReLU(), nn.Dropout(0.1),
                                   nn.Linear(16, 12))
        self.relu = nn.ReLU()
        self.head = nn.Linear(1, 3)
        self.checkpointed = checkpointed  # None, "reentrant" or "non_reentrant"

    def forward(self, x):
        if self.checkpointed is None:
            h = self.block(x)
        else:
            h = checkpoint(self.block, x, use_reentrant=self.checkpointed == "reentrant")
        return self.head(self.relu(h).sum(1, keepdim=True))


class ConvNet(nn.Sequential):
    def __init__(self):
        super().__init__(nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(), nn.MaxPool2d(2),
                         nn.Conv2d(8, 8, 3, padding=1), nn.ReLU(inplace=True), nn.Flatten(), nn.Linear(8 * 4 * 4, 16),
                         nn.ReLU(), nn.Dropout(0.1), nn.Linear(16, 4))


def steps(model, x, call=None, context=None):
    """Loss, output and every parameter gradient of STEPS training steps (seeded: the same
    dropout draws for stock and relugrad); call(model, x) runs the forward."""
    forward = call or (lambda m, v: m(v))
    results = []
    for step in range(STEPS):
        torch.manual_seed(step)
        model.zero_grad(set_to_none=True)
        with (context or contextlib.nullcontext)():
            y = forward(model, x)
        loss = y.float().square().mean()
        loss.backward()
        results += [loss.detach(), y.detach()] + [p.grad for p in model.parameters()]
    return results


def assert_same_steps(want, got):
    assert len(want) == len(got)
    for i, (a, b) in enumerate(zip(want, got)):
        assert a.dtype == b.dtype and a.shape == b.shape, i
        assert torch.equal(bits(a), bits(b)), f"result {i} differs"


def pair(stock, mask):
    torch.manual_seed(0)
    return stock, rt.replace_relu(copy.deepcopy(stock), mask=mask)


# ---- autocast ---------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16], ids=["bf16", "f16"])
@pytest.mark.parametrize("mask", [False, True], ids=["y", "mask"])
@pytest.mark.parametrize("model", ["conv", "mlp"])
def test_cpu_autocast_training_is_bit_identical(dtype, mask, model):
    torch.manual_seed(0)
    stock, x = (ConvNet(), torch.randn(4, 3, 8, 8)) if model == "conv" else (Net(), torch.randn(8, 12))
    stock, ours = pair(stock, mask)
    context = lambda: torch.autocast("cpu", dtype=dtype)  # noqa: E731
    assert_same_steps(steps(stock, x, context=context), steps(ours, x, context=context))
    with context():
        out = ours(x)
    assert out.dtype == dtype  # the ReLUs saw autocast's 16-bit tensors
    nodes = relu_nodes(out)
    assert "stock" not in nodes and sum(nodes.values()) == 3, nodes  # every ReLU relugrad's


# ---- activation checkpointing -----------------------------------------------------------------

@pytest.mark.parametrize("mask", [False, True], ids=["y", "mask"])
@pytest.mark.parametrize("checkpointed", ["non_reentrant", "reentrant"])
def test_checkpointed_block_is_bit_identical_and_keeps_y(checkpointed, mask):
    torch.manual_seed(0)
    stock, ours = pair(Net(checkpointed), mask)
    x = torch.randn(8, 12, requires_grad=True)  # a reentrant checkpoint needs an input with grad
    assert_same_steps(steps(stock, x), steps(ours, x))
    # Unchecked stock gives the same bits: checkpointing changes no result.
    plain = copy.deepcopy(stock)
    plain.checkpointed = None
    assert_same_steps(steps(plain, x), steps(ours, x))
    if mask:
        decided = mask_probe.decisions(ours)
        # The block runs again in the backward: its ReLUs keep y, so the recomputation saves what
        # the first pass saved; the ReLU outside it, whose consumer saves nothing, keeps its mask.
        # (block.3 + block.4 run as one pass, which keeps its two bit planes: the ReLU module
        # itself is not called in training.)
        assert set(decided) == {"block.1", "block.3", "relu"}, decided
        assert decided["relu"] == "y is kept by nothing else: keeps the 1-bit mask"
        assert decided["block.1"].endswith("keeps y") and "checkpoint" in decided["block.1"], decided
        assert decided["block.3"].endswith("keeps y")  # not run (fused), or run without grad (reentrant)
        assert ours.relu.mask and not ours.block[1].mask
        assert fusion.fused_pairs(ours.block) == ["3 + 4"]


@pytest.mark.parametrize("use_reentrant", [False, True], ids=["non_reentrant", "reentrant"])
def test_checkpointed_whole_model_is_bit_identical(use_reentrant):
    torch.manual_seed(0)
    stock, ours = pair(Net(), True)
    x = torch.randn(8, 12, requires_grad=True)
    call = lambda m, v: checkpoint(m, v, use_reentrant=use_reentrant)  # noqa: E731
    assert_same_steps(steps(stock, x, call), steps(ours, x, call))
    decided = mask_probe.decisions(ours)
    if not use_reentrant:
        # The probe ran inside the checkpoint: every ReLU keeps y.
        assert decided and all(d.endswith("keeps y") for d in decided.values()), decided
    # A reentrant checkpoint runs the first pass without grad: the probe waits for the
    # recomputation (grad enabled) and decides there; either way the bits are stock's.


@pytest.mark.parametrize("mask", [False, True], ids=["y", "mask"])
def test_checkpoint_sequential_is_bit_identical(mask):
    torch.manual_seed(0)
    stock, ours = pair(nn.Sequential(nn.Linear(12, 16), nn.ReLU(), nn.Linear(16, 16), nn.ReLU(), nn.Dropout(0.1),
                                     nn.Linear(16, 16), nn.ReLU(), nn.Linear(16, 3)), mask)
    x = torch.randn(8, 12, requires_grad=True)
    call = lambda m, v: checkpoint_sequential(m, 2, v, use_reentrant=False)  # noqa: E731
    assert_same_steps(steps(stock, x, call), steps(ours, x, call))


# ---- saved-tensor offloading ------------------------------------------------------------------

def test_offloaded_saved_tensors_are_bit_identical_and_the_probe_still_decides():
    torch.manual_seed(0)
    stock, ours = pair(Net(), True)
    x = torch.randn(8, 12)
    context = lambda: torch.autograd.graph.save_on_cpu(pin_memory=False)  # noqa: E731
    assert_same_steps(steps(stock, x, context=context), steps(ours, x, context=context))
    # Offloading hooks around the model do not recompute it: the probe sees through them.
    assert mask_probe.decisions(ours)["relu"] == "y is kept by nothing else: keeps the 1-bit mask"
    assert mask_probe.decisions(ours)["block.1"] == "y is kept by its consumer or the model's output: keeps y"

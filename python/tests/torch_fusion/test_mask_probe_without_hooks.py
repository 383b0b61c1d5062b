"""replace_relu(mask=True)'s probe step decides from what owns each ReLU output's memory once the
forward has returned, and adds no saved-tensor hooks: a forward that runs torch.func, turns
saved-tensor hooks off or registers hooks on a saved tensor trains as stock does, bit for bit,
and still gets the mask where nothing else keeps y. After the decision the model carries one
forward pre-hook of the probe's and no forward hook."""
import copy

import pytest

torch = pytest.importorskip("torch", reason="PyTorch is not installed in this environment")
from torch import nn  # noqa: E402

import relugrad.torch as rt  # noqa: E402
from relugrad.torch import mask_probe  # noqa: E402

MASK = "y is kept by nothing else: keeps the 1-bit mask"
KEEP = "y is kept by its consumer or the model's output: keeps y"


class ReluDropoutLinear(nn.Module):
    """Linear, ReLU, Dropout (which saves its own noise, not y), Linear: the ReLU gets the mask."""

    def __init__(self):
        super().__init__()
        self.a, self.relu, self.drop, self.b = nn.Linear(8, 8), nn.ReLU(), nn.Dropout(0.5), nn.Linear(8, 2)

    def layers(self, x):
        return self.b(self.drop(self.relu(self.a(x))))


class FuncInForward(ReluDropoutLinear):
    def forward(self, x):
        # A gradient taken inside the forward: torch.func refuses to run under saved-tensor hooks.
        g = torch.func.grad(lambda z: torch.tanh(z).sum())(x.detach())
        return self.layers(x) + g.sum()


class HooksOffInForward(ReluDropoutLinear):
    def forward(self, x):
        with torch.autograd.graph.disable_saved_tensors_hooks("this forward allows no saved-tensor hooks"):
            return self.layers(x)


class HooksOnASavedTensor(ReluDropoutLinear):
    def forward(self, x):
        out = self.layers(x)
        # Hooks of its own on one saved tensor: refused where default hooks are on.
        out.grad_fn._raw_saved_mat1.register_hooks(lambda t: t, lambda t: t)
        return out


class KeepsActivations(ReluDropoutLinear):
    """Keeps each ReLU output (feature extraction): y's memory is kept anyway, a mask would add to it."""

    def forward(self, x):
        h = self.relu(self.a(x))
        self.kept = h
        return self.b(self.drop(h))


@pytest.mark.parametrize("cls", [FuncInForward, HooksOffInForward, HooksOnASavedTensor])
def test_forwards_that_refuse_saved_tensor_hooks_train_as_stock_and_get_the_mask(cls):
    torch.manual_seed(0)
    stock = cls()
    ours = rt.replace_relu(copy.deepcopy(stock), mask=True)
    for step in range(3):  # the probe step, then decided steps
        x = torch.randn(4, 8)
        outs = []
        for m in (stock, ours):
            torch.manual_seed(step)
            m.zero_grad()
            out = m(x)
            out.sum().backward()
            outs.append(out)
        assert torch.equal(outs[0], outs[1])
        for p, q in zip(stock.parameters(), ours.parameters()):
            assert torch.equal(p.grad, q.grad)
    assert mask_probe.decisions(ours) == {"relu": MASK} and ours.relu.mask is True


def test_an_output_the_forward_keeps_elsewhere_keeps_y():
    torch.manual_seed(0)
    ours = rt.replace_relu(KeepsActivations(), mask=True)
    ours(torch.randn(4, 8)).sum().backward()
    assert mask_probe.decisions(ours) == {"relu": KEEP} and ours.relu.mask is False


@pytest.mark.parametrize("inplace", [False, True])
def test_in_place_and_new_outputs_count_their_own_saves(inplace):
    # Linear's saved input keeps y (y stays); a sum saves no input (the mask replaces y).
    for consumer, want in ((nn.Linear(8, 2), KEEP), (Sum(), MASK)):
        model = rt.replace_relu(nn.Sequential(nn.Linear(8, 8), nn.ReLU(inplace=inplace), consumer, nn.Linear(1, 1)
                                              if isinstance(consumer, Sum) else nn.Identity()), mask=True)
        model(torch.randn(4, 8)).sum().backward()
        assert mask_probe.decisions(model) == {"1": want}


class Sum(nn.Module):
    def forward(self, x):
        return x.sum(1, keepdim=True)


def test_in_place_relu_on_a_view_whose_base_lives_on_keeps_y():
    # The output is a view of a tensor the forward returns: its memory stays, a mask would add to it.
    class ViewRelu(nn.Module):
        def __init__(self):
            super().__init__()
            self.a, self.relu = nn.Linear(8, 8), nn.ReLU(inplace=True)

        def forward(self, x):
            h = self.a(x) * 1.0
            self.relu(h[:, :4]).sum()
            return h

    model = rt.replace_relu(ViewRelu(), mask=True)
    model(torch.randn(4, 8)).sum().backward()
    assert mask_probe.decisions(model) == {"relu": KEEP}


def test_after_the_decision_the_model_keeps_one_pre_hook_and_no_forward_hook():
    model = rt.replace_relu(nn.Sequential(nn.Linear(8, 8), nn.ReLU(), Sum()), mask=True)
    hooks = (len(model._forward_pre_hooks), len(model._forward_hooks))
    assert hooks == (1, 0)
    model(torch.randn(4, 8)).sum().backward()
    assert (len(model._forward_pre_hooks), len(model._forward_hooks)) == hooks
    assert not model[1]._forward_pre_hooks and not model[1]._forward_hooks  # the per-ReLU ones: gone
    assert model[1].mask is True


def test_an_in_place_relu_whose_input_a_pre_hook_keeps_keeps_y():
    # Activation capture by a forward pre-hook: for an in-place ReLU the input it keeps is y. The
    # probe counts the input's owners after the user's pre-hooks, so the capture is not the ReLU's.
    acts = {}
    model = rt.replace_relu(nn.Sequential(nn.Linear(8, 64), nn.ReLU(inplace=True), Sum(), nn.Linear(1, 2)),
                            mask=True)
    model[1].register_forward_pre_hook(lambda m, args: acts.__setitem__("relu", args[0].detach()))
    model(torch.randn(4, 8)).sum().backward()
    assert mask_probe.decisions(model) == {"1": KEEP} and model[1].mask is False


def test_the_probe_holds_no_storage_the_forward_drops():
    # A forward that builds and drops graphs (a detached pseudo-target) frees their ReLU outputs
    # at once in the probe step, as stock's step does: the probe watches storages weakly.
    freed = []

    class DropsGraphs(nn.Module):
        def __init__(self):
            super().__init__()
            self.a, self.relu, self.b = nn.Linear(8, 8), nn.ReLU(), nn.Linear(8, 2)

        def forward(self, x):
            for _ in range(3):
                y = self.relu(self.a(x))
                storage = y.untyped_storage()
                weak = torch.multiprocessing.reductions.StorageWeakRef(storage)
                del y, storage
                freed.append(weak.expired())
            return self.b(self.relu(self.a(x)))

    model = rt.replace_relu(DropsGraphs(), mask=True)
    model(torch.randn(4, 8)).sum().backward()
    assert freed == [True, True, True]
    assert mask_probe.decisions(model) == {"relu": KEEP}  # the kept call's y: saved by self.b

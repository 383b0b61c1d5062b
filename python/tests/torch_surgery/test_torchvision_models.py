"""replace_relu on real models: outputs and every parameter gradient bit-identical to stock
torch (NCHW and channels_last, mask on and off), every relu served (the autograd graph holds
relugrad's nodes where stock holds ReluBackward0), short training trajectories, DDP and FSDP2
on gloo, torch.compile and torch.func.

Inputs are the smallest the models take in training mode (batch 2: BatchNorm needs more than
one value per channel at the 1x1 end of a 32x32 input)."""
import copy
import json
import os
import subprocess
import sys
import textwrap
from collections import Counter

import pytest

torch = pytest.importorskip("torch", reason="PyTorch is not installed in this environment")
torchvision = pytest.importorskip("torchvision", reason="torchvision is not installed (python/requirements-test.txt)")
import torch.nn.functional as F  # noqa: E402
from torch import nn  # noqa: E402

import relugrad.torch as rt  # noqa: E402
from relugrad.torch.surgery import HARDTANH_LEFT, functional_scope  # noqa: E402

@pytest.fixture(autouse=True, scope="module")
def one_torch_thread():
    # One intra-op thread: on a loaded machine OpenMP's spinning workers made the same checks
    # 10x slower with two. relugrad's split over torch threads is tested in test_relu.py.
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)




class MLP(nn.Module):
    """Module ReLUs (one in place) and a functional one."""

    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 64), nn.ReLU(inplace=True))
        self.fc1 = nn.Linear(64, 48)
        self.fc2 = nn.Linear(48, 10)

    def forward(self, x):
        return self.fc2(F.relu(self.fc1(self.body(x))))


def _vgg11():
    # torchvision's vgg11 with its 25088 -> 4096 -> 4096 classifier cut to 512 -> 64 -> 64 (same
    # Linear-ReLU-Dropout structure): the full one is 120M parameters for a 32x32 test input.
    m = torchvision.models.vgg11(num_classes=10)
    m.avgpool = nn.AdaptiveAvgPool2d(1)
    m.classifier = nn.Sequential(nn.Linear(512, 64), nn.ReLU(True), nn.Dropout(), nn.Linear(64, 64), nn.ReLU(True),
                                 nn.Dropout(), nn.Linear(64, 10))
    return m


def _transformer():
    layer = nn.TransformerEncoderLayer(16, 2, 32, dropout=0.1)
    return nn.TransformerEncoder(layer, 2, enable_nested_tensor=False)


# name: (constructor, input shape, image model: channels_last applies)
MODELS = {
    "resnet18": (lambda: torchvision.models.resnet18(num_classes=10), (2, 3, 32, 32), True),
    "resnet50": (lambda: torchvision.models.resnet50(num_classes=10), (2, 3, 32, 32), True),
    "densenet121": (lambda: torchvision.models.densenet121(num_classes=10), (2, 3, 32, 32), True),
    "googlenet": (lambda: torchvision.models.googlenet(num_classes=10, aux_logits=False, init_weights=True),
                  (2, 3, 32, 32), True),
    "mobilenet_v2": (lambda: torchvision.models.mobilenet_v2(num_classes=10), (2, 3, 32, 32), True),
    "vgg11": (_vgg11, (2, 3, 32, 32), True),
    "shufflenet_v2_x0_5": (lambda: torchvision.models.shufflenet_v2_x0_5(num_classes=10), (2, 3, 32, 32), True),
    "mlp": (MLP, (4, 32), False),
    "transformer": (_transformer, (5, 2, 16), False),
}


def relu_nodes(out):
    """Counter of the relu autograd nodes reachable from out: stock ReluBackward0 /
    ThresholdBackward; relugrad's C++ nodes relugrad::ReluBackward / relugrad::ReluMaskBackward
    (eager ReLU; in place without the native library, the Python Function's _ReluFunctionBackward,
    its ctx.mask telling which), relugrad::ReluDropoutBackward or _ReluDropoutFunctionBackward
    (ReLUDropout) and the custom ops' autograd nodes
    (_ReluOpBackward, _ReluMaskOpBackward: captured graphs, and eager ReLU without the native library)."""
    seen, found, stack = set(), Counter(), [out.grad_fn]
    while stack:
        fn = stack.pop()
        if fn is None or fn in seen:
            continue
        seen.add(fn)
        name = fn.name()
        # ReLUDropout (replace_relu(mask=True) of ReLU + Dropout)
        if name == "relugrad::ReluDropoutBackward" or "ReluDropoutFunction" in name:
            found["relugrad_dropout"] += 1
        elif name == "relugrad::ReluMaskBackward" or (name == "_ReluFunctionBackward" and fn.mask):
            found["relugrad_mask"] += 1
        elif name in ("relugrad::ReluBackward", "_ReluFunctionBackward"):
            found["relugrad"] += 1
        elif name in ("_ReluOpBackward", "_ReluMaskOpBackward"):
            found["relugrad_op"] += 1
        elif "Relu" in name or "Threshold" in name:
            found["stock"] += 1
        stack.extend(f for f, _ in fn.next_functions)
    return found


def bits(t):
    return t.detach().view({2: torch.int16, 4: torch.int32, 8: torch.int64}[t.element_size()])


def assert_same_bits(want, got, what):
    assert want.shape == got.shape, what
    assert torch.equal(bits(want), bits(got)), f"{what}: {int((bits(want) != bits(got)).sum())} elements differ"


_BUILT = {}


def stock_model(name):
    """A fresh copy of the model (built once per session, seeded)."""
    if name not in _BUILT:
        torch.manual_seed(0)
        _BUILT[name] = MODELS[name][0]()
    return copy.deepcopy(_BUILT[name])


def make_pair(name, mask):
    stock = stock_model(name)
    ours, report = rt.replace_relu(copy.deepcopy(stock), mask=mask, functional=True, return_report=True)
    return stock, ours, report, MODELS[name][1]


def forward_backward(model, x, seed=1):
    torch.manual_seed(seed)  # the same dropout masks for both models
    model.zero_grad(set_to_none=True)
    y = model(x)
    nodes = relu_nodes(y)
    y.square().sum().backward()
    return y.detach(), nodes, [p.grad for p in model.parameters()]


def check_model(name, layout):
    """Stock once, then relugrad with mask off and on: outputs, every parameter gradient (bits
    and strides), and every relu served."""
    stock = stock_model(name)
    _, shape, _ = MODELS[name]
    torch.manual_seed(2)
    x = torch.randn(shape)
    if layout == "channels_last":
        stock = stock.to(memory_format=torch.channels_last)
        x = x.contiguous(memory_format=torch.channels_last)
    want, want_nodes, want_grads = forward_backward(stock, x)
    assert want_nodes["stock"] > 0
    names = [n for n, _ in stock.named_parameters()]
    for mask in (False, True):
        ours, report = rt.replace_relu(copy.deepcopy(stock), mask=mask, functional=True, return_report=True)
        assert not report.left, str(report)
        got, got_nodes, got_grads = forward_backward(ours, x)
        assert "stock" not in got_nodes, got_nodes
        assert sum(got_nodes.values()) == want_nodes["stock"], (want_nodes, got_nodes)
        assert_same_bits(want, got, f"mask={mask}: output")
        for pname, p, q in zip(names, want_grads, got_grads):
            assert p.stride() == q.stride(), f"mask={mask}: {pname}.grad strides {q.stride()}, stock {p.stride()}"
            assert_same_bits(p, q, f"mask={mask}: {pname}.grad")


SERVED = [n for n in MODELS if n != "mobilenet_v2"]


@pytest.mark.parametrize("name", SERVED)
def test_model_nchw_bit_identical(name):
    check_model(name, "nchw")


@pytest.mark.parametrize("name", [n for n in SERVED if MODELS[n][2]])
def test_model_channels_last_bit_identical(name):
    check_model(name, "channels_last")


@pytest.mark.parametrize("layout", ["nchw", "channels_last"])
def test_mobilenet_v2_every_relu6_left_and_gradients_bit_identical(layout):
    # Its 35 activations are ReLU6(inplace=True): each stays torch's (relugrad has no hardtanh
    # node), listed as left without making strict=True raise, and the output and every
    # parameter gradient keep their bits and strides on a tiny input.
    stock = stock_model("mobilenet_v2")
    torch.manual_seed(2)
    x = torch.randn(MODELS["mobilenet_v2"][1])
    if layout == "channels_last":
        stock = stock.to(memory_format=torch.channels_last)
        x = x.contiguous(memory_format=torch.channels_last)
    ours, report = rt.replace_relu(copy.deepcopy(stock), return_report=True, strict=True)
    assert report.replaced == [] and len(report.left) == 35
    assert all(e.kind == "ReLU6" and e.detail == HARDTANH_LEFT for e in report.left)
    assert sum(type(m) is nn.ReLU6 for m in ours.modules()) == 35
    want, _, want_grads = forward_backward(stock, x)
    got, _, got_grads = forward_backward(ours, x)
    assert_same_bits(want, got, "output")
    for (pname, _), p, q in zip(stock.named_parameters(), want_grads, got_grads):
        assert p.stride() == q.stride(), pname
        assert_same_bits(p, q, f"{pname}.grad")
    assert sum(type(m) is nn.ReLU6 for m in rt.restore_relu(ours).modules()) == 35


# Models whose every relu is an nn.ReLU module (torchvision's blocks call theirs as
# self.relu(...), twice per BasicBlock): replace_relu serves them all without the functional
# scope, whose per-call cost they need not pay (mobilenet_v2's ReLU6: its own test above).
MODULE_ONLY = ["resnet18", "resnet50", "vgg11", "shufflenet_v2_x0_5"]


@pytest.mark.parametrize("name", MODULE_ONLY)
def test_module_relus_are_served_without_the_functional_scope(name):
    stock = stock_model(name)
    torch.manual_seed(2)
    x = torch.randn(MODELS[name][1])
    ours, report = rt.replace_relu(copy.deepcopy(stock), return_report=True, strict=True)
    assert not report.left and report.replaced, str(report)
    assert functional_scope(ours) is None
    want, want_nodes, want_grads = forward_backward(stock, x)
    got, got_nodes, got_grads = forward_backward(ours, x)
    assert want_nodes["stock"] > 0 and "stock" not in got_nodes, got_nodes
    assert sum(got_nodes.values()) == want_nodes["stock"], (want_nodes, got_nodes)
    assert_same_bits(want, got, "output")
    for (pname, _), p, q in zip(stock.named_parameters(), want_grads, got_grads):
        assert_same_bits(p, q, f"{pname}.grad")


def test_googlenet_functional_relu_is_served_only_with_functional():
    # googlenet's 57 relus are all F.relu calls: without functional=True nothing is replaced and
    # the report says so; with it, all 57 are served per forward.
    torch.manual_seed(0)
    model = MODELS["googlenet"][0]()
    _, report = rt.replace_relu(copy.deepcopy(model), return_report=True)
    assert not report.replaced and len(report.left) == 57
    assert all("functional=True" in e.detail for e in report.left)
    with pytest.raises(rt.ReplaceError, match="BasicConv2d"):
        rt.replace_relu(model, strict=True)
    ours = rt.replace_relu(model, functional=True, strict=True)
    scope = functional_scope(ours)
    before = scope.served
    ours(torch.randn(2, 3, 32, 32))
    assert scope.served - before == 57


@pytest.mark.parametrize("name,steps", [("mlp", 20), ("transformer", 20), ("resnet18", 3)])
def test_training_trajectory_bit_identical(name, steps):
    stock, ours, _, shape = make_pair(name, mask=False)
    torch.manual_seed(3)
    batches = [(torch.randn(shape), torch.randn(shape[0] if name != "transformer" else shape[1], 10))
               for _ in range(steps)]
    losses = {}
    for model in (stock, ours):
        label = "stock" if model is stock else "ours"
        opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
        losses[label] = []
        for i, (x, target) in enumerate(batches):
            torch.manual_seed(100 + i)
            y = model(x)
            if name == "transformer":
                y = y.mean(0)[:, :10]
            loss = F.mse_loss(y, target)
            opt.zero_grad()
            loss.backward()
            opt.step()
            losses[label].append(loss.detach())
    for i, (a, b) in enumerate(zip(losses["stock"], losses["ours"])):
        assert_same_bits(a, b, f"loss at step {i}")
    for (pname, p), q in zip(stock.named_parameters(), ours.parameters()):
        assert_same_bits(p.detach(), q.detach(), f"{pname} after {steps} steps")


def test_compile_small_model_bit_identical():
    # torch.compile of a replaced MLP, module and functional relus: the custom ops in one graph.
    stock, ours, _, shape = make_pair("mlp", mask=False)
    compiled = torch.compile(ours, backend="aot_eager")
    x = torch.randn(shape)
    want, _, want_grads = forward_backward(stock, x)
    got, _, got_grads = forward_backward(compiled, x)
    assert_same_bits(want, got, "output")
    for (pname, _), p, q in zip(stock.named_parameters(), want_grads, got_grads):
        assert_same_bits(p, q, f"{pname}.grad")


def test_torch_func_grad_of_functional_call_bit_identical():
    stock, ours, _, shape = make_pair("mlp", mask=False)
    x = torch.randn(shape)
    grads = []
    for model in (stock, ours):
        params = {k: v.detach() for k, v in model.named_parameters()}
        grads.append(torch.func.grad(lambda p: torch.func.functional_call(model, p, (x,)).square().sum())(params))
    for k in grads[0]:
        assert_same_bits(grads[0][k], grads[1][k], k)


_DIST_SCRIPT = textwrap.dedent(r"""
    import copy, json, os, sys
    import torch, torch.distributed as dist, torch.nn.functional as F
    from torch import nn
    import relugrad.torch as rt
    from torch.distributed.fsdp import fully_shard
    from torch.nn.parallel import DistributedDataParallel as DDP

    def net():
        torch.manual_seed(0)
        return nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 32), nn.ReLU(inplace=True), nn.Linear(32, 4))

    def steps(model, rank, n=3):
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        losses = []
        for i in range(n):
            torch.manual_seed(10 * i + rank)  # each rank its own batch
            x, t = torch.randn(8, 16), torch.randn(8, 4)
            loss = F.mse_loss(model(x), t)
            opt.zero_grad()
            loss.backward()
            opt.step()
            losses.append(loss.item().hex())
        return losses

    def full(model):  # every parameter in full, as hex bits (FSDP2 shards them: gather)
        out = {}
        for k, v in model.state_dict().items():
            v = v.full_tensor() if hasattr(v, "full_tensor") else v
            out[k] = v.detach().reshape(-1).view(torch.int32).tolist()
        return out

    def main(rank, world, port, out):
        os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
        dist.init_process_group("gloo", rank=rank, world_size=world)
        torch.set_num_threads(1)
        res = {}
        for kind in ("ddp", "fsdp2"):
            for label in ("stock", "ours"):
                m = net() if label == "stock" else rt.replace_relu(net())
                if kind == "ddp":
                    m = DDP(m)
                else:
                    for layer in m:
                        if isinstance(layer, nn.Linear):
                            fully_shard(layer)
                    fully_shard(m)
                losses = steps(m, rank)
                res[f"{kind}/{label}"] = {"losses": losses,
                                          "params": full(m.module if kind == "ddp" else m)}
        with open(f"{out}.{rank}", "w") as f:
            json.dump(res, f)
        # Both ranks past their last collective before either tears gloo down: a rank destroying
        # its group while its peer still talks to it can abort the peer (std::terminate).
        dist.barrier()
        dist.destroy_process_group()

    if __name__ == "__main__":
        import socket
        s = socket.socket(); s.bind(("127.0.0.1", 0)); port = s.getsockname()[1]; s.close()
        torch.multiprocessing.spawn(main, args=(2, port, sys.argv[1]), nprocs=2)
""")


def test_ddp_and_fsdp2_on_two_gloo_processes(tmp_path):
    # DDP and FSDP2 (fully_shard), 2 gloo processes, 3 SGD steps each on per-rank batches: the
    # losses on every rank and the final (gathered) parameters equal stock's bit for bit.
    script = tmp_path / "dist.py"
    script.write_text(_DIST_SCRIPT)
    out = tmp_path / "res"
    subprocess.run([sys.executable, str(script), str(out)], check=True, timeout=300,
                   env=dict(os.environ, OMP_NUM_THREADS="1"))
    for rank in (0, 1):
        res = json.loads((tmp_path / f"res.{rank}").read_text())
        for kind in ("ddp", "fsdp2"):
            stock, ours = res[f"{kind}/stock"], res[f"{kind}/ours"]
            assert stock["losses"] == ours["losses"], (kind, rank)
            assert stock["params"] == ours["params"], (kind, rank)
            assert len(set(stock["losses"])) == 3  # the steps did train

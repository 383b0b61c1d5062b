"""relugrad.torch.ReLU on CUDA tensors through the native entry (python/src/torch_native.cc):
relugrad's CUDA kernels behind the C++ autograd nodes, bit for bit stock's nn.ReLU in the torch
preset and the CPU path's in the others, with torch's strides, torch's current stream, CUDA graph
capture and the 1-bit mask.

Without a GPU only the routing is checked (which build serves CUDA tensors); every device case
skips with the reason (counted as skipped, never passed). The device script
(bench/gpu/lent_machine.sh, part `python`) runs them on a GPU."""
import pytest

torch = pytest.importorskip("torch")

import relugrad  # noqa: E402
import relugrad.torch as rt  # noqa: E402
from torch import nn  # noqa: E402
from torch_helpers import bits, values  # noqa: E402

CUDA_BACKEND = relugrad.info()["backends"]["cuda"]
DTYPES = [torch.float32, torch.float16, torch.bfloat16, torch.float64]
PRESETS = ["torch", "tensorflow", "jax", "onednn", "mindspore"]


def _device_reason():
    if not rt.NATIVE:
        return f"the torch-native ReLU is not loaded: {rt.NATIVE_STATUS}"
    if not CUDA_BACKEND:
        return "this relugrad build has no CUDA backend (make python-test-cuda builds one)"
    if not torch.cuda.is_available():
        return f"no CUDA device: torch {torch.__version__} reports torch.cuda.is_available() False"
    return ""


needs_device = pytest.mark.skipif(bool(_device_reason()), reason=_device_reason() or "-")


@pytest.mark.skipif(not rt.NATIVE, reason=f"the torch-native ReLU is not loaded: {rt.NATIVE_STATUS}")
def test_cuda_tensors_are_served_exactly_where_the_build_has_the_cuda_backend():
    from relugrad.torch import testing

    assert testing.native_library().cuda_served() is CUDA_BACKEND


# Layouts of a 4-d activation: each is a view of a contiguous non-leaf, so in place writes
# through it (CopySlices) and the gradient reaches the leaf in every case.
LAYOUTS = {
    "contiguous": lambda t: t,
    "channels_last": lambda t: t.permute(0, 2, 3, 1).contiguous().permute(0, 3, 1, 2),
    "transposed": lambda t: t.transpose(1, 3),
    "strided": lambda t: t[:, :, ::2],
}


def _step(module, leaf, layout, weight):
    """y = module(layout(leaf * 1)); loss = (y * weight).sum(); backward. The gradient reaching
    the ReLU is MulBackward's fresh tensor, which the native backward may write over."""
    leaf.grad = None
    x = LAYOUTS[layout](leaf * 1)
    y = module(x)
    (y * weight).sum().backward()
    return y.detach(), leaf.grad


def _leaf(dtype, device, seed=0):
    return values((2, 6, 10, 8), dtype=dtype, seed=seed).to(device).requires_grad_()


def _weight(y_shape, dtype, device):
    return values(y_shape, dtype=dtype, seed=7).to(device)


def _same(a, b):
    assert a.shape == b.shape and a.stride() == b.stride() and a.dtype == b.dtype
    assert torch.equal(bits(a.cpu()), bits(b.cpu()))


@needs_device
@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: str(d)[6:])
@pytest.mark.parametrize("layout", list(LAYOUTS))
@pytest.mark.parametrize("mask", [False, True], ids=["gate", "mask"])
@pytest.mark.parametrize("inplace", [False, True], ids=["out", "inplace"])
def test_torch_preset_is_stocks_relu_bit_for_bit(dtype, layout, mask, inplace):
    leaf = _leaf(dtype, "cuda")
    weight = _weight(LAYOUTS[layout](leaf.detach()).shape, dtype, "cuda")
    y, grad = _step(rt.ReLU(inplace=inplace, mask=mask), leaf, layout, weight)
    y_ref, grad_ref = _step(nn.ReLU(inplace=inplace), leaf, layout, weight)
    _same(y, y_ref)
    _same(grad, grad_ref)


@needs_device
@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: str(d)[6:])
@pytest.mark.parametrize("preset", PRESETS[1:])
@pytest.mark.parametrize("mask", [False, True], ids=["gate", "mask"])
def test_other_presets_give_the_cpu_paths_bits(dtype, preset, mask):
    for layout in ("contiguous", "transposed"):
        leaf = _leaf(dtype, "cuda")
        weight = _weight(LAYOUTS[layout](leaf.detach()).shape, dtype, "cuda")
        y, grad = _step(rt.ReLU(preset, mask=mask), leaf, layout, weight)
        leaf_cpu = leaf.detach().cpu().requires_grad_()
        y_ref, grad_ref = _step(rt.ReLU(preset, mask=mask), leaf_cpu, layout, weight.cpu())
        _same(y, y_ref)
        _same(grad, grad_ref)


@needs_device
@pytest.mark.parametrize("mask", [False, True], ids=["gate", "mask"])
def test_the_native_entry_and_node_run_not_stocks(mask):
    leaf = _leaf(torch.float32, "cuda")
    g = torch.ones_like(leaf)  # dense: an expanded gradient (sum's) takes threshold_backward itself
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU]) as prof:
        rt.ReLU(mask=mask)(leaf * 1).backward(g)
    names = {e.name for e in prof.events()}
    node = "relugrad::ReluMaskBackward" if mask else "relugrad::ReluBackward"
    assert "relugrad_native::relu" in names and node in names
    assert "aten::threshold_backward" not in names
    assert not {n for n in names if n.startswith("relugrad::relu")}  # no custom op


@needs_device
def test_a_side_stream_and_a_cuda_graph_replay_stocks_bits():
    # Capture fails if a launch goes to another stream than the capturing one (the legacy default
    # stream, say), so the replay also checks that every kernel went to torch's current stream.
    for mask in (False, True):
        relu = rt.ReLU(mask=mask)
        leaf = torch.zeros(4, 1000, device="cuda", requires_grad=True)
        g = values((4, 1000), seed=3).cuda()
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            for _ in range(2):  # warm-up: plans and the caching allocator's blocks
                leaf.grad = None
                relu(leaf * 1).backward(g)
        torch.cuda.current_stream().wait_stream(side)
        graph = torch.cuda.CUDAGraph()
        leaf.grad = None
        with torch.cuda.graph(graph, stream=side):
            y = relu(leaf * 1)
            y.backward(g)
        with torch.no_grad():
            leaf.copy_(values((4, 1000), seed=5).cuda())
        graph.replay()
        torch.cuda.synchronize()
        ref = leaf.detach().clone().requires_grad_()
        y_ref = torch.relu(ref)
        y_ref.backward(g)
        _same(y, y_ref.detach())
        _same(leaf.grad, ref.grad)


@needs_device
def test_mask_keeps_only_bits_and_checks_ys_version():
    n = 1 << 16
    saved = []

    def pack(t):
        saved.append((t.dtype, t.numel(), t.device.type))
        return t

    leaf = torch.randn(n, device="cuda", requires_grad=True)
    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        y = rt.ReLU(mask=True)(leaf * 1)
    assert saved == [(torch.uint8, n // 8, "cuda")]
    y = rt.ReLU(mask=True)(leaf * 1)
    y.add_(1)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.sum().backward()


@needs_device
@pytest.mark.parametrize("mask", [False, True], ids=["gate", "mask"])
def test_second_derivatives_are_stocks(mask):
    def second(relu):
        leaf = values((64,), seed=11).cuda().requires_grad_()
        (dx,) = torch.autograd.grad((relu(leaf) ** 2).sum(), leaf, create_graph=True)
        (ddx,) = torch.autograd.grad(dx.sum(), leaf)
        return dx.detach(), ddx

    for a, b in zip(second(rt.ReLU(mask=mask)), second(nn.ReLU())):
        _same(a, b)


@needs_device
@pytest.mark.parametrize("channels_last", [False, True], ids=["nchw", "channels_last"])
@pytest.mark.parametrize("autocast", [False, True], ids=["f32", "autocast_bf16"])
def test_a_conv_training_step_is_stocks_bit_for_bit(channels_last, autocast):
    torch.backends.cudnn.deterministic = True
    torch.backends.cudnn.benchmark = False

    def step(relu_class):
        torch.manual_seed(0)
        model = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), relu_class(inplace=True),
                              nn.Conv2d(8, 8, 3, padding=1), relu_class(), nn.Flatten(),
                              nn.Linear(8 * 16 * 16, 10)).cuda()
        x = torch.randn(4, 3, 16, 16, generator=torch.Generator().manual_seed(1)).cuda()
        if channels_last:
            model = model.to(memory_format=torch.channels_last)
            x = x.contiguous(memory_format=torch.channels_last)
        with torch.autocast("cuda", torch.bfloat16, enabled=autocast):
            loss = model(x).float().square().mean()
        loss.backward()
        return [loss.detach()] + [p.grad for p in model.parameters()]

    for a, b in zip(step(rt.ReLU), step(nn.ReLU)):
        _same(a, b)


def _saved_bytes(fn):
    """Bytes of the distinct storages autograd saves while fn() runs."""
    storages = {}

    def pack(t):
        s = t.untyped_storage()
        storages[s.data_ptr()] = s.nbytes()
        return t

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        fn()
    return sum(storages.values())


@needs_device
def test_the_mask_probe_decides_on_cuda_as_on_the_cpu_and_keeps_fewer_bytes_than_stock():
    from relugrad.torch import mask_probe

    def model():
        torch.manual_seed(0)  # a ReLU before Dropout (only the ReLU keeps y), one before Linear (keeps y)
        return nn.Sequential(nn.Linear(64, 256), nn.ReLU(), nn.Dropout(0.1), nn.Linear(256, 64), nn.ReLU(),
                             nn.Linear(64, 8))

    x = torch.randn(32, 64)
    decided, saved = {}, {}
    for device in ("cpu", "cuda"):
        m = rt.replace_relu(model().to(device), mask=True)
        m(x.to(device)).square().mean().backward()  # the probe step
        decided[device] = mask_probe.decisions(m)
        saved[device] = _saved_bytes(lambda: m(x.to(device)).square().mean())
    assert decided["cuda"] == decided["cpu"] and len(decided["cuda"]) == 2
    stock = model().cuda()
    assert saved["cuda"] < _saved_bytes(lambda: stock(x.cuda()).square().mean())


# ---- ReLUDropout on CUDA: relugrad's gate, stock's own draw packed into the keep plane ------------

@needs_device
@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: str(d)[6:])
@pytest.mark.parametrize("layout", list(LAYOUTS))
@pytest.mark.parametrize("p", [0.1, 0.5])
def test_relu_dropout_is_stocks_bit_for_bit_and_leaves_the_generator_as_stock(dtype, layout, p):
    import torch.nn.functional as F

    def run(fn):
        leaf = _leaf(dtype, "cuda")
        torch.manual_seed(5)
        x = LAYOUTS[layout](leaf * 1)
        out = fn(x)
        (out * _weight(out.shape, dtype, "cuda")).sum().backward()
        return out.detach(), leaf.grad, torch.rand(8, device="cuda")  # the generator after the step

    ours = run(rt.ReLUDropout(p))
    stock = run(lambda x: F.dropout(torch.relu(x), p, True))
    for a, b in zip(ours, stock):
        _same(a, b)


@needs_device
def test_relu_dropout_keeps_two_bit_planes_and_runs_one_backward_pass():
    n = 1 << 16
    saved = []

    def pack(t):
        saved.append((t.dtype, t.numel()))
        return t

    leaf = torch.randn(n, device="cuda", requires_grad=True)
    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        out = rt.ReLUDropout(0.1)(leaf * 1)
    assert saved == [(torch.uint8, n // 8), (torch.uint8, n // 8)]
    g = torch.randn(n, device="cuda")
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU]) as prof:
        out.backward(g)
    names = {e.name for e in prof.events()}
    assert "relugrad::ReluDropoutBackward" in names
    assert not names & {"aten::native_dropout_backward", "aten::threshold_backward"}


@needs_device
def test_relu_dropout_second_derivatives_are_stocks():
    import torch.nn.functional as F

    def second(fn):
        leaf = values((256,), seed=13).cuda().requires_grad_()
        torch.manual_seed(9)
        (dx,) = torch.autograd.grad((fn(leaf) ** 2).sum(), leaf, create_graph=True)
        (ddx,) = torch.autograd.grad(dx.sum(), leaf)
        return dx.detach(), ddx

    for a, b in zip(second(rt.ReLUDropout(0.2)), second(lambda x: F.dropout(torch.relu(x), 0.2, True))):
        _same(a, b)


@needs_device
@pytest.mark.parametrize("autocast", [False, True], ids=["f32", "autocast_bf16"])
def test_three_optimizer_steps_with_dropout_are_stocks_bit_for_bit(autocast):
    def train(convert):
        torch.manual_seed(0)
        model = nn.Sequential(nn.Linear(64, 256), nn.ReLU(), nn.Dropout(0.1), nn.Linear(256, 64), nn.ReLU(),
                              nn.Dropout(0.1), nn.Linear(64, 8)).cuda()
        model = convert(model)
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        x = torch.randn(32, 64, generator=torch.Generator().manual_seed(1)).cuda()
        torch.manual_seed(3)
        seen = []
        for _ in range(3):
            opt.zero_grad(set_to_none=True)
            with torch.autocast("cuda", torch.bfloat16, enabled=autocast):
                loss = model(x).float().square().mean()
            loss.backward()
            seen += [loss.detach()] + [p.grad.clone() for p in model.parameters()]
            opt.step()
        return seen + [p.detach() for p in model.parameters()] + [torch.rand(4, device="cuda")]

    for a, b in zip(train(lambda m: rt.replace_relu(m, mask=True)), train(lambda m: m)):
        _same(a, b)

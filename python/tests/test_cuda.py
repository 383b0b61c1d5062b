"""CUDA arrays in Python: CUDA tensors and CUDA DLPack arrays go to
relugrad's CUDA backend (torch: the tensor's device, torch's current stream).

Runs here without a GPU: a CUDA request fails with a clear error (checked
through a DLPack object that reports device type kDLCUDA, since torch cannot
create a CUDA tensor without a device). The tests that need a GPU and a CUDA
build of relugrad skip with the reason (counted as skipped, never passed)."""
import ctypes

import numpy as np
import pytest

import relugrad
from cases import DTYPES, random_case, special_case, to_bits

CUDA_BACKEND = relugrad.info()["backends"]["cuda"]


class _DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class _DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class _DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", _DLDevice), ("ndim", ctypes.c_int32),
                ("dtype", _DLDataType), ("shape", ctypes.POINTER(ctypes.c_int64)),
                ("strides", ctypes.POINTER(ctypes.c_int64)), ("byte_offset", ctypes.c_uint64)]


class _DLManagedTensor(ctypes.Structure):
    _fields_ = [("dl_tensor", _DLTensor), ("manager_ctx", ctypes.c_void_p), ("deleter", ctypes.c_void_p)]


_PyCapsule_New = ctypes.pythonapi.PyCapsule_New
_PyCapsule_New.restype = ctypes.py_object
_PyCapsule_New.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]


class FakeDeviceArray:
    """A DLPack producer of a device array that does not exist: a real
    "dltensor" capsule (ctypes) whose data pointer is a made-up device
    address. relugrad must refuse it before anything dereferences the
    pointer: in Python when the CUDA backend is not compiled in, in the
    library ("no CUDA device") when it is but no GPU is present."""

    _next = 0

    def __init__(self, device_type, device_id=0, n=16, code=2, bits=32):
        self._device = (device_type, device_id)
        self.shape = (n,)
        self.dtype = np.dtype({(2, 32): np.float32, (1, 8): np.uint8}[(code, bits)])
        self._shape = (ctypes.c_int64 * 1)(n)
        self._managed = _DLManagedTensor()
        t = self._managed.dl_tensor
        FakeDeviceArray._next += 1 << 20  # distinct, non-overlapping, never dereferenced
        t.data = 0x7F0000000000 + FakeDeviceArray._next
        t.device = _DLDevice(device_type, device_id)
        t.ndim = 1
        t.dtype = _DLDataType(code, bits, 1)
        t.shape = self._shape
        t.strides = None
        t.byte_offset = 0

    def __dlpack_device__(self):
        return self._device

    def __dlpack__(self, *args, **kwargs):
        return _PyCapsule_New(ctypes.addressof(self._managed), b"dltensor", None)


def _cuda_failure():
    """What a CUDA request must raise here: the Python check without the
    backend, the library's UNSUPPORTED answer with it but without a device."""
    if torch_cuda_available():
        pytest.skip("a CUDA device is present: the no-device error path does not apply")
    if CUDA_BACKEND:
        return r"unsupported: no CUDA device"
    return r"needs relugrad's CUDA backend, which this build lacks"


def torch_cuda_available():
    try:
        import torch
    except ImportError:
        return False
    return torch.cuda.is_available()


@pytest.mark.parametrize("device_type", [2, 13], ids=["kDLCUDA", "kDLCUDAManaged"])
def test_cuda_request_without_device_fails_clearly(device_type):
    msg = _cuda_failure()
    x = np.ones(16, np.float32)
    dev = lambda: FakeDeviceArray(device_type)  # noqa: E731
    mask = FakeDeviceArray(device_type, n=2, code=1, bits=8)
    with pytest.raises(RuntimeError, match=msg):
        relugrad.relu_grad(dev(), dev(), out=dev())
    with pytest.raises(RuntimeError, match=msg):
        relugrad.relu_forward(dev(), out=dev(), mask_out=FakeDeviceArray(device_type, n=2, code=1, bits=8))
    with pytest.raises(RuntimeError, match=msg):
        relugrad.relu_grad_mask(dev(), mask, out=dev())
    if not CUDA_BACKEND:  # the Python check names the argument
        with pytest.raises(RuntimeError, match=r"s: a DLPack array on CUDA device 0 \(device type %d\)" % device_type):
            relugrad.relu_grad(x, dev())
    else:  # the bindings refuse a CPU/CUDA mix before the library
        with pytest.raises(ValueError, match="all arrays of a call must be on one device"):
            relugrad.relu_grad(x, dev(), out=np.empty(16, np.float32))


def test_cuda_dlpack_without_out_asks_for_out():
    if not CUDA_BACKEND:
        pytest.skip("this build has no CUDA backend: the device check fires first (tested above)")
    with pytest.raises(ValueError, match="pass out="):
        relugrad.relu_grad(FakeDeviceArray(2), FakeDeviceArray(2))


def test_unknown_device_type_is_refused():
    with pytest.raises(ValueError, match=r"dy: DLPack device type 4 is neither the CPU \(1\) nor CUDA \(2, 13\)"):
        relugrad.relu_grad(FakeDeviceArray(4), np.ones(16, np.float32))


def test_reference_refuses_device_arrays():
    if not CUDA_BACKEND:
        # Without the backend the device check fires first, which is also an error.
        with pytest.raises(RuntimeError, match="CUDA backend"):
            relugrad.relu_grad_reference(FakeDeviceArray(2), FakeDeviceArray(2))
        return
    with pytest.raises(ValueError, match="scalar reference reads CPU memory only"):
        relugrad.relu_grad_reference(FakeDeviceArray(2), FakeDeviceArray(2))


def test_info_reports_the_cuda_backend():
    assert isinstance(CUDA_BACKEND, bool)


# ---- With a GPU (skipped here) -----------------------------------------------
torch = pytest.importorskip("torch", reason="PyTorch is not installed in this environment")
import relugrad.torch as rt  # noqa: E402

TORCH_DTYPES = {"f32": torch.float32, "f64": torch.float64, "f16": torch.float16, "bf16": torch.bfloat16}


def test_torch_cuda_tensor_without_backend_fails_clearly():
    if not torch.cuda.is_available():
        pytest.skip("torch reports no CUDA device: a CUDA tensor cannot be created here "
                    "(the same check is exercised above through a kDLCUDA DLPack object)")
    if CUDA_BACKEND:
        pytest.skip("relugrad's CUDA backend is available: see the device tests below")
    t = torch.ones(8, device="cuda")
    with pytest.raises(RuntimeError, match="a tensor on cuda:0 needs relugrad's CUDA backend, which this build lacks"):
        relugrad.relu_grad(t, t)
    # The module keeps models usable: torch.relu's own autograd.
    assert torch.equal(rt.ReLU()(t), torch.relu(t))


def need_gpu():
    if not torch.cuda.is_available():
        pytest.skip("needs a CUDA device (torch.cuda.is_available() is False here)")
    if not CUDA_BACKEND:
        pytest.skip("needs relugrad built with CUDA (pip install . -C cmake.define.RELUGRAD_CUDA=ON) "
                    "and a device: relugrad.info()['backends']['cuda'] is False")


def as_torch(a, device):
    if a.dtype.name == "bfloat16":
        return torch.from_numpy(to_bits(a).astype(np.int16)).view(torch.bfloat16).to(device)
    return torch.from_numpy(np.ascontiguousarray(a)).to(device)


def tbits(t):
    t = t.detach().contiguous().cpu()
    return t.view({2: torch.int16, 4: torch.int32, 8: torch.int64}[t.element_size()])


@pytest.mark.parametrize("dtype", list(DTYPES))
@pytest.mark.parametrize("semantics", relugrad.PRESETS)
def test_cuda_equals_cpu_bit_for_bit(dtype, semantics):
    need_gpu()
    for dy, s in (special_case(dtype), random_case(dtype, n=100_003)):
        want = relugrad.relu_grad(dy, s, semantics=semantics)
        got = relugrad.relu_grad(as_torch(dy, "cuda"), as_torch(s, "cuda"), semantics=semantics)
        assert got.device.type == "cuda"
        assert torch.equal(tbits(got), tbits(as_torch(want, "cpu")))
        y, m = relugrad.relu_forward(as_torch(s, "cuda"), semantics=semantics)
        want_y, want_m = relugrad.relu_forward(s, semantics=semantics)
        assert torch.equal(tbits(y), tbits(as_torch(want_y, "cpu"))) and np.array_equal(m.cpu().numpy(), want_m)
        dx = relugrad.relu_grad_mask(as_torch(dy, "cuda"), m, semantics=semantics)
        assert torch.equal(tbits(dx), tbits(as_torch(want, "cpu")))


def test_cuda_runs_on_the_current_stream_and_in_place():
    need_gpu()
    dy = torch.randn(1 << 22, device="cuda")
    x = torch.randn(1 << 22, device="cuda")
    want = torch.ops.aten.threshold_backward(dy, x, 0.0)
    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream):
        out = relugrad.relu_grad(dy, x, out=dy)
    stream.synchronize()
    assert out is dy and torch.equal(tbits(dy), tbits(want))


def test_cuda_mixed_devices_are_refused():
    need_gpu()
    with pytest.raises(ValueError, match="all arrays of a call must be on one device"):
        relugrad.relu_grad(torch.ones(8, device="cuda"), torch.ones(8))


@pytest.mark.parametrize("dtype", ["f32", "f64", "f16", "bf16"])
@pytest.mark.parametrize("mask", [False, True])
def test_cuda_autograd_bit_equal_to_pytorch_cuda(dtype, mask):
    need_gpu()
    dy, x = random_case(dtype, n=100_000)
    xt, gt = as_torch(x, "cuda"), as_torch(dy, "cuda")
    a = xt.clone().requires_grad_(True)
    torch.relu(a).backward(gt)
    b = xt.clone().requires_grad_(True)
    rt.ReLU("torch", mask=mask)(b).backward(gt)
    assert torch.equal(tbits(a.grad), tbits(b.grad))


def test_cuda_opcheck():
    need_gpu()
    dy = torch.randn(3, 5, device="cuda", dtype=torch.float64)
    x = torch.randn(3, 5, device="cuda", dtype=torch.float64)
    torch.library.opcheck(torch.ops.relugrad.relu_grad.default, (dy, x, "torch", 0.0, 0.0, 0))
    torch.library.opcheck(torch.ops.relugrad.relu_mask.default, (x.requires_grad_(True), "torch", 0))


@pytest.mark.parametrize("dtype", ["f32", "f64", "f16", "bf16"])
@pytest.mark.parametrize("mask", [False, True])
@pytest.mark.parametrize("inplace", [False, True])
@pytest.mark.parametrize("channels_last", [False, True])
def test_cuda_torch_preset_module_is_stock(dtype, mask, inplace, channels_last):
    # CUDA tensors with the torch preset take stock's relu and its autograd node (mask included):
    # the same node, y, gradient and layouts as nn.ReLU, special values included.
    need_gpu()
    dy, x = special_case(dtype)
    n = (x.size // 16) * 16
    shape = (1, 4, 2, n // 8)
    xt = as_torch(x[:n], "cuda").reshape(shape)
    gt = as_torch(dy[:n], "cuda").reshape(shape)
    if channels_last:
        xt, gt = (t.contiguous(memory_format=torch.channels_last) for t in (xt, gt))
    results = []
    for module in (torch.nn.ReLU(inplace=inplace), rt.ReLU("torch", inplace=inplace, mask=mask)):
        leaf = xt.clone().requires_grad_(True)
        y = module(leaf * 1)
        y.backward(gt)
        results.append((type(y.grad_fn).__name__, tbits(y), y.stride(), tbits(leaf.grad)))
    (node_a, y_a, st_a, g_a), (node_b, y_b, st_b, g_b) = results
    assert node_a == node_b and st_a == st_b
    assert torch.equal(y_a, y_b) and torch.equal(g_a, g_b)

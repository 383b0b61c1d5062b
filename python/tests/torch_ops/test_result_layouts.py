"""relugrad.torch keeps PyTorch's layouts: every output and gradient of ReLU
(both eager paths, mask on and off, in place or not) and of the custom ops
(and their fake kernels) has the strides nn.ReLU / torch.relu /
threshold_backward give, with the same bits, and dense layouts run without
a copy."""
import pytest

torch = pytest.importorskip("torch", reason="PyTorch is not installed in this environment")
import relugrad.torch as rt  # noqa: E402
from relugrad.torch import testing  # noqa: E402
from torch_helpers import bits, eager_path  # noqa: E402,F401 (eager_path: a fixture)

DTYPES = [torch.float32, torch.float64, torch.float16, torch.bfloat16]


def special(shape, dtype, seed):
    """Random values with zeros of both signs, NaN and inf sprinkled in."""
    g = torch.Generator().manual_seed(seed)
    t = torch.randn(shape, generator=g, dtype=torch.float64)
    flat = t.view(-1)
    flat[::7] = 0.0
    flat[1::11] = -0.0
    flat[2::13] = float("nan")
    flat[3::17] = float("-inf")
    return t.to(dtype)


def _x_layout(name, dtype):
    """(x, is it dense): x in the named layout, values of `special`."""
    if name == "nchw":
        return special((2, 3, 4, 5), dtype, 1), True
    if name == "channels_last":
        return special((2, 3, 4, 5), dtype, 1).to(memory_format=torch.channels_last), True
    if name == "channels_last_3d":
        return special((2, 3, 2, 3, 4), dtype, 1).to(memory_format=torch.channels_last_3d), True
    if name == "permuted":
        return special((4, 5, 3, 2), dtype, 1).permute(3, 2, 0, 1), True
    if name == "size1_odd_strides":
        return special((2, 1, 3, 4), dtype, 1).as_strided((2, 1, 3, 4), (12, 99, 4, 1)), True
    if name == "sliced":
        return special((2, 3, 8, 5), dtype, 1)[:, :, ::2], False
    if name == "transposed_slice":
        return special((6, 3, 4, 5), dtype, 1).transpose(1, 3)[::2], False
    raise ValueError(name)


X_LAYOUTS = ["nchw", "channels_last", "channels_last_3d", "permuted", "size1_odd_strides", "sliced",
             "transposed_slice"]
G_LAYOUTS = ["like_y", "contiguous", "channels_last", "expanded", "reversed_dims"]


def _grad_layout(name, like):
    g = special(like.shape, like.dtype, 2)
    if name == "like_y":
        return torch.empty_like(like).copy_(g)
    if name == "contiguous":
        return g.contiguous()
    if name == "channels_last":
        return g.to(memory_format=torch.channels_last) if g.dim() == 4 else g.contiguous()
    if name == "expanded":
        return torch.full((1,) * g.dim(), 0.75, dtype=g.dtype).expand(g.shape)
    if name == "reversed_dims":
        dims = list(range(g.dim()))[::-1]
        return g.permute(dims).contiguous().permute(dims)
    raise ValueError(name)


def _non_leaf_like(base):
    """A non-leaf with base's values, sizes, strides and storage offset (a
    view of a product, so that in-place ReLU is allowed, as after a conv)."""
    tmp = torch.zeros(base.untyped_storage().nbytes() // base.element_size(), dtype=base.dtype)
    torch.as_strided(tmp, base.shape, base.stride(), base.storage_offset()).copy_(base)
    src = tmp.requires_grad_(True)
    return torch.as_strided(src * 1, base.shape, base.stride(), base.storage_offset())


@pytest.mark.parametrize("xname", X_LAYOUTS)
@pytest.mark.parametrize("gname", G_LAYOUTS)
@pytest.mark.parametrize("mask", [False, True])
def test_relu_layouts_and_bits_match_nn_relu(xname, gname, mask, eager_path):
    for dtype in DTYPES:
        for inplace in (False, True):
            results = []
            for module in (torch.nn.ReLU(inplace=inplace), rt.ReLU("torch", inplace=inplace, mask=mask)):
                base, _ = _x_layout(xname, dtype)
                h = _non_leaf_like(base)
                assert h.stride() == base.stride()
                y = module(h)
                g = _grad_layout(gname, y)
                (dx,) = torch.autograd.grad(y, h, g)
                results.append((y, dx, h))
            (y0, dx0, h0), (y1, dx1, h1) = results
            where = f"{dtype} inplace={inplace}"
            assert y1.stride() == y0.stride(), where
            assert dx1.stride() == dx0.stride(), where
            if inplace:
                assert y1.data_ptr() == h1.data_ptr(), where
            assert torch.equal(bits(y1), bits(y0)), where  # with mask too: -0 kept
            if dtype in (torch.float16, torch.bfloat16):
                # PyTorch's 16-bit NaN bits depend on the element's position
                # (docs/python.md): NaN by class there, bits elsewhere.
                nan = torch.isnan(dx0)
                assert torch.equal(nan, torch.isnan(dx1)), where
                assert torch.equal(bits(dx0)[~nan], bits(dx1)[~nan]), where
            else:
                assert torch.equal(bits(dx1), bits(dx0)), where


def _pairs():
    a = special((2, 3, 4, 5), torch.float32, 3)
    cl = a.to(memory_format=torch.channels_last)
    yield "contiguous", a, a.clone()
    yield "channels_last", cl, cl.clone()
    yield "mixed", a, cl
    yield "mixed_reverse", cl, a
    yield "expanded_dy", torch.ones(1, 1, 1, 1).expand(2, 3, 4, 5), cl
    yield "permuted", a.permute(0, 2, 3, 1), a.permute(0, 2, 3, 1).contiguous()
    yield "sliced", special((2, 3, 8, 5), torch.float32, 4)[:, :, ::2], a
    d3 = special((2, 3, 2, 3, 4), torch.float32, 5).to(memory_format=torch.channels_last_3d)
    yield "channels_last_3d", d3, d3.clone()


@pytest.mark.parametrize("case", [c[0] for c in _pairs()])
def test_relu_grad_op_and_its_fake_kernel_have_threshold_backwards_layout(case):
    _, dy, s = next(c for c in _pairs() if c[0] == case)
    want = torch.ops.aten.threshold_backward(dy, s, 0.0)
    got = torch.ops.relugrad.relu_grad(dy, s)
    assert got.stride() == want.stride()
    assert torch.equal(bits(got), bits(want))
    from torch._subclasses.fake_tensor import FakeTensorMode
    with FakeTensorMode() as mode:
        fdy, fs = mode.from_tensor(dy), mode.from_tensor(s)
        assert torch.ops.relugrad.relu_grad(fdy, fs).stride() == want.stride()
    meta = torch.ops.relugrad.relu_grad(dy.to("meta"), s.to("meta"))
    assert meta.is_meta and meta.stride() == torch.ops.aten.threshold_backward(dy.to("meta"), s.to("meta"), 0).stride()


@pytest.mark.parametrize("xname", X_LAYOUTS)
def test_mask_ops_follow_ys_layout(xname):
    # storage_order=True: the mask in y's storage order, read back with y's dim order (what
    # ReLU(mask=True) does); the default, x's logical order, is test_mask_op_round_trip.py's.
    x, _ = _x_layout(xname, torch.float32)
    y, mask = torch.ops.relugrad.relu_mask(x, "torch", 0, True)
    assert y.stride() == torch.relu(x).stride()
    assert torch.equal(bits(y), bits(torch.relu(x)))  # -0 kept, as torch.relu
    for gname in G_LAYOUTS:
        dy = _grad_layout(gname, y)
        want = torch.ops.aten.threshold_backward(dy, y, 0.0)
        got = torch.ops.relugrad.relu_grad_mask(dy, mask, "torch", 0, list(y.dim_order()))
        assert got.stride() == want.stride(), gname
        assert torch.equal(bits(got), bits(want)), gname
    from torch._subclasses.fake_tensor import FakeTensorMode
    with FakeTensorMode() as mode:
        fx = mode.from_tensor(x)
        fy, fmask = torch.ops.relugrad.relu_mask(fx)
        assert fy.stride() == torch.relu(fx).stride() and fmask.shape == mask.shape


def test_dense_layouts_run_without_a_copy(eager_path):
    # channels_last forward + backward, mask on and off: no aten::copy_ or
    # clone anywhere (the kernels run over the storage).
    for mask in (False, True):
        x = special((4, 8, 6, 6), torch.float32, 6).to(memory_format=torch.channels_last).requires_grad_(True)
        h = x * 1
        g = special((4, 8, 6, 6), torch.float32, 7).to(memory_format=torch.channels_last)
        module = rt.ReLU(mask=mask)
        with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU]) as prof:
            y = module(h)
            (dx,) = torch.autograd.grad(y, h, g)
        names = {e.name for e in prof.events()}
        assert not names & {"aten::copy_", "aten::clone", "aten::contiguous"}, sorted(names)
        assert dx.is_contiguous(memory_format=torch.channels_last)


@pytest.mark.parametrize("mask", [False, True])
@pytest.mark.parametrize("inplace", [False, True])
def test_channels_last_conv_net_parameter_gradients_match_nn_relu(mask, inplace, eager_path):
    # A channels_last gradient that came back NCHW changed the convolutions'
    # backward bits; every parameter gradient must equal stock's, eager and
    # compiled (the custom ops under aot_eager).
    torch.manual_seed(0)

    def model(relu):
        return torch.nn.Sequential(torch.nn.Conv2d(3, 8, 3), relu, torch.nn.Conv2d(8, 4, 3), relu,
                                   torch.nn.Conv2d(4, 2, 1))

    stock = model(torch.nn.ReLU(inplace=inplace)).to(memory_format=torch.channels_last)
    ours = model(rt.ReLU(inplace=inplace, mask=mask))
    ours.load_state_dict(stock.state_dict())
    ours = ours.to(memory_format=torch.channels_last)
    x = torch.randn(2, 3, 10, 10).to(memory_format=torch.channels_last)

    def grads(m):
        m.zero_grad()
        m(x).square().sum().backward()
        return [p.grad.clone() for p in m.parameters()]

    want = grads(stock)
    runs = [ours] + ([torch.compile(ours, backend="aot_eager", fullgraph=True)] if eager_path == "native" else [])
    for m in runs:
        got = grads(m)
        assert all(torch.equal(bits(a), bits(b)) and a.stride() == b.stride() for a, b in zip(want, got))


def _random_layout(g, shape):
    """A tensor of `shape` in a random layout: permuted, sliced, expanded or
    with odd strides on size-1 dims (values do not matter)."""
    kind = int(torch.randint(0, 4, (1,), generator=g))
    perm = torch.randperm(len(shape), generator=g).tolist()
    if kind == 0:  # dense, dims permuted in memory
        t = torch.empty([shape[d] for d in perm]).permute([perm.index(d) for d in range(len(shape))])
    elif kind == 1:  # a slice of a bigger permuted tensor
        big = torch.empty([shape[d] * 2 for d in perm]).permute([perm.index(d) for d in range(len(shape))])
        t = big[tuple(slice(0, None, 2) for _ in shape)]
    elif kind == 2:  # broadcast along one dim
        d = int(torch.randint(0, len(shape), (1,), generator=g))
        t = torch.empty([1 if i == d else n for i, n in enumerate(shape)]).expand(shape)
    else:  # dense with random strides on the size-1 dims
        t = torch.empty(shape)
        t = t.as_strided(shape, [int(torch.randint(1, 50, (1,), generator=g)) if n == 1 else st
                                 for n, st in zip(shape, t.stride())])
    assert t.shape == torch.Size(shape)
    return t


@pytest.mark.parametrize("shape, strides, want", [
    ((2, 3), [(3, 1)], [3, 1]),                        # C order stays
    ((3, 2), [(1, 3)], [1, 3]),                        # a transpose is followed
    ((4, 3), [(0, 1)], [3, 1]),                        # a broadcast dim is skipped
    ((2, 3), [(1, 2), (3, 1)], [1, 2]),                # operands disagree: the first leads
    ((2, 3), [(3, 1), (1, 2)], [3, 1]),
    ((2, 3, 4), [(0, 0, 1), (1, 2, 6)], [1, 2, 6]),    # broadcast in the first: the second decides
    ((2, 3, 4), [(1, 8, 2)], [1, 8, 2]),               # a sliced permutation: its order, dense
    ((2, 3), [(1, 1)], [1, 2]),                        # equal strides: the larger size outer
    ((2, 3, 4, 5), [(60, 1, 15, 3)], [60, 1, 15, 3]),  # channels_last
    ((5,), [(2,)], [1]),
    ((), [], []),
])
def test_ti_strides_is_tensoriterators_rule(shape, strides, want):
    # The rule itself (python/src/ti_strides.h, the one copy both paths run), on cases whose
    # answers threshold_backward and torch.relu give.
    assert testing.ti_strides(shape, *strides) == want
    if len(strides) == 2:
        dy, s = (torch.empty(64).as_strided(shape, st) for st in reversed(strides))
        assert torch.ops.aten.threshold_backward(dy, s, 0.0).stride() == tuple(want)


def test_ti_strides_names_a_short_stride_list():
    with pytest.raises(ValueError, match="strides: 1 strides for a shape of 2 dims"):
        testing.ti_strides((2, 3), (1,))


def test_random_layouts_get_tensoriterators_strides(eager_path):
    # relugrad's copy of TensorIterator's rules against PyTorch itself on 300
    # random (dy, s) layout pairs: relu_grad and both eager backwards give
    # threshold_backward's strides, the mask forward gives torch.relu's.
    g = torch.Generator().manual_seed(11)
    for _ in range(300):
        ndim = int(torch.randint(1, 5, (1,), generator=g))
        shape = [int(torch.randint(1, 4, (1,), generator=g)) for _ in range(ndim)]
        dy, s = _random_layout(g, shape), _random_layout(g, shape)  # values irrelevant: strides only
        want = torch.ops.aten.threshold_backward(dy, s, 0.0).stride()
        assert testing.grad_output(dy, s)[0].stride() == want, (shape, dy.stride(), s.stride())
        assert torch.ops.relugrad.relu_grad(dy, s).stride() == want
        assert testing.relu_output(s)[0].stride() == torch.relu(s).stride(), (shape, s.stride())
        if not testing.dense(s):
            continue
        # the module's backward: y = relu(s-shaped dense input), incoming gradient dy
        h = _non_leaf_like(s)
        for mask in (False, True):
            y = rt.ReLU(mask=mask)(h)
            (dx,) = torch.autograd.grad(y, h, dy)
            assert dx.stride() == torch.ops.aten.threshold_backward(dy, torch.relu(h), 0.0).stride()


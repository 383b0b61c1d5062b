"""LinearReLU and relugrad_native.relu_grad_bias: dx bit-identical to threshold_backward; the bias
gradient in a documented fixed order (reproduced here in torch ops, bit for bit), the same bits for
1 and 2 threads, within rounding of stock's sum(0); output, input and weight gradients bit-identical
to stock nn.Linear + nn.ReLU; replace_relu(fuse_linear=True) and restore_relu."""
import copy
import warnings

import pytest

torch = pytest.importorskip("torch", reason="PyTorch is not installed in this environment")
from torch import nn  # noqa: E402

import relugrad.torch as rt  # noqa: E402
from relugrad.torch import fusion  # noqa: E402
from torch_helpers import bits, values  # noqa: E402

pytestmark = pytest.mark.skipif(not rt.NATIVE, reason=f"the torch-native library is not loaded: {rt.NATIVE_STATUS}")

BLOCK_ROWS = 128  # torch_bias.cc's kBlockRows: part of the documented order
DTYPES = [torch.float32, torch.float64]


def fused(dy, y):
    return torch.ops.relugrad_native.relu_grad_bias(dy, y)


def documented_order_sum(dx):
    """The bias gradient's order, in torch ops: per block of BLOCK_ROWS rows each column summed
    row by row in dx's dtype, then the block sums added in block order."""
    dx2 = dx.reshape(-1, dx.shape[-1])
    total = None
    for r0 in range(0, dx2.shape[0], BLOCK_ROWS):
        block = dx2[r0:r0 + BLOCK_ROWS]
        acc = torch.zeros(dx2.shape[1], dtype=dx.dtype)
        for row in block:
            acc = acc + row
        total = acc if total is None else total + acc
    return total if total is not None else torch.zeros(dx2.shape[1], dtype=dx.dtype)


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("shape", [(1, 1), (7, 5), (128, 33), (129, 1030), (300, 64), (4, 9, 20), (0, 3)])
def test_dx_is_threshold_backward_and_db_the_documented_order(dtype, shape):
    dy = values(shape, dtype, 1)
    y = torch.relu(values(shape, dtype, 2))
    y.view(-1)[3::11] = float("nan")  # a NaN y passes dy, as threshold_backward does
    dx, db = fused(dy, y)
    assert torch.equal(bits(dx), bits(torch.ops.aten.threshold_backward(dy, y, 0.0)))
    assert db.shape == (shape[-1],) and db.dtype == dtype
    assert torch.equal(bits(db), bits(documented_order_sum(dx)))


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_db_is_the_same_for_every_thread_count_and_close_to_stock(dtype):
    g = torch.Generator().manual_seed(3)
    dy = torch.randn(1000, 700, generator=g, dtype=dtype)
    y = torch.relu(torch.randn(1000, 700, generator=g, dtype=dtype))
    before = torch.get_num_threads()
    try:
        results = []
        for threads in (1, 2, 3):
            torch.set_num_threads(threads)
            results.append(fused(dy, y))
    finally:
        torch.set_num_threads(before)
    for dx, db in results[1:]:
        assert torch.equal(bits(dx), bits(results[0][0])) and torch.equal(bits(db), bits(results[0][1]))
    dx, db = results[0]
    exact = dx.double().sum(0)
    # Rounding only: 1000 terms summed in the dtype, blocks of 128 rows.
    eps = torch.finfo(dtype).eps
    bound = 1000 * eps * dx.double().abs().sum(0) + torch.finfo(dtype).tiny
    assert ((db.double() - exact).abs() <= bound).all()
    assert ((dx.sum(0).double() - exact).abs() <= bound).all()  # stock's, for comparison


def test_bad_input_is_refused_with_a_message():
    a = torch.randn(4, 3)
    with pytest.raises(RuntimeError, match="float32 or float64"):
        fused(a.half(), a.half())
    with pytest.raises(RuntimeError, match="shape"):
        fused(a, a[:2])
    with pytest.raises(RuntimeError, match="contiguous"):
        fused(a.t(), a.t())
    with pytest.raises(RuntimeError, match="y is Double, dy is Float"):
        fused(a, a.double())


def _train_step(model, x, dy):
    x = x.clone().requires_grad_(True)
    y = model(x)
    y.backward(dy)
    return y.detach(), x.grad, {k: p.grad for k, p in model.named_parameters()}


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("in_shape", [(100,), (64, 100), (5, 7, 100)], ids=["1d", "2d", "3d"])
@pytest.mark.parametrize("relu_inplace", [False, True])
def test_linear_relu_equals_stock_but_for_the_bias_gradient_rounding(dtype, in_shape, relu_inplace):
    torch.manual_seed(0)
    stock = nn.Sequential(nn.Linear(100, 300), nn.ReLU(inplace=relu_inplace), nn.Linear(300, 10)).to(dtype)
    ours, report = rt.replace_relu(copy.deepcopy(stock), fuse_linear=True, return_report=True)
    assert [type(m) for m in ours] == [type(m) for m in stock][:1] + [rt.ReLU, nn.Linear]
    assert fusion.fused_pairs(ours) == ["0 + 1"] and "runs fused with the nn.Linear 0" in str(report)
    assert list(ours.state_dict()) == list(stock.state_dict())
    x = torch.randn(in_shape, dtype=dtype)
    dy = torch.randn(in_shape[:-1] + (10,), dtype=dtype)
    (ys, gxs, gs), (yo, gxo, go) = _train_step(stock, x, dy), _train_step(ours, x, dy)
    assert torch.equal(bits(ys), bits(yo)) and torch.equal(bits(gxs), bits(gxo))
    for k in gs:
        if k == "0.bias":
            # The fused bias gradient: the documented order of the same dx.
            h = torch.relu(stock[0](x))
            dx = torch.ops.aten.threshold_backward(dy.reshape(-1, 10).mm(stock[2].weight).reshape(h.shape), h, 0.0)
            assert torch.equal(bits(go[k]), bits(documented_order_sum(dx.detach())))
            assert torch.allclose(go[k], gs[k], rtol=0, atol=1e-4 if dtype == torch.float32 else 1e-12)
        else:
            assert torch.equal(bits(gs[k]), bits(go[k])), k
    # restore_relu gives back the stock modules, parameters shared.
    back = rt.restore_relu(ours)
    assert type(back[0]) is nn.Linear and type(back[1]) is nn.ReLU and back[1].inplace == relu_inplace
    assert back[0].weight is ours[0].weight


def test_unserved_cases_are_stock_bit_for_bit():
    torch.manual_seed(1)
    stock = nn.Sequential(nn.Linear(8, 16), nn.ReLU())
    ours = rt.replace_relu(copy.deepcopy(stock), fuse_linear=True)
    assert fusion.fused_pairs(ours) == ["0 + 1"]
    x = torch.randn(4, 8)
    with torch.no_grad():
        assert torch.equal(bits(stock(x)), bits(ours(x)))
    stock.eval(), ours.eval()  # eval: the unfused path, whose bias gradient is stock's
    a, b = _train_step(stock, x, torch.ones(4, 16)), _train_step(ours, x, torch.ones(4, 16))
    assert all(torch.equal(bits(a[2][k]), bits(b[2][k])) for k in a[2])
    # torch.func: the unfused path, stock's bits.
    params = {k: v.detach() for k, v in ours.named_parameters()}
    g1 = torch.func.grad(lambda p: torch.func.functional_call(ours, p, (x,)).sum())(params)
    g2 = torch.func.grad(lambda p: torch.func.functional_call(stock, p, (x,)).sum())(params)
    assert all(torch.equal(bits(g1[k]), bits(g2[k])) for k in g1)


def test_fuse_linear_only_when_asked_and_only_where_it_fits():
    stock = nn.Sequential(nn.Linear(4, 4), nn.ReLU(), nn.Linear(4, 4), nn.Dropout(), nn.ReLU())
    plain = rt.replace_relu(copy.deepcopy(stock))
    assert type(plain) is nn.Sequential and fusion.fused_pairs(plain) == []
    fused_model = rt.replace_relu(copy.deepcopy(stock), fuse_linear=True)
    assert [type(m).__name__ for m in fused_model] == ["Linear", "ReLU", "Linear", "Dropout", "ReLU"]
    assert fusion.fused_pairs(fused_model) == ["0 + 1"]
    tf = rt.replace_relu(copy.deepcopy(stock), semantics="tensorflow", fuse_linear=True)
    assert fusion.fused_pairs(tf) == []  # the torch preset's pass only
    # A hook on either module, then or later, sees the tensor between them: the pair is called.
    x = torch.randn(3, 4)
    pair = rt.replace_relu(copy.deepcopy(stock[:2]), fuse_linear=True)
    assert pair(x).grad_fn.name() == "relugrad::LinearReluBackward"
    for i in (0, 1):
        hooked = copy.deepcopy(pair)
        hooked[i].register_forward_hook(lambda *a: None)
        assert hooked(x).grad_fn.name() == "relugrad::ReluBackward"


def _backward_allocations(module, x, w, hold):
    """(x.grad, parameter gradients, how many tensors of dy's byte size the backward creates): dy is the
    gradient MulBackward makes for the LinearReLU's output; hold: a hook keeps it."""
    kept = []
    y = module(x)
    assert y.grad_fn.name() == "relugrad::LinearReluBackward"
    if hold:
        y.register_hook(lambda g: kept.append(g))
    loss = (y * w).sum()
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU], profile_memory=True,
                                record_shapes=True, with_stack=True) as prof:
        loss.backward()
    size = y.numel() * y.element_size()
    # Every tensor the backward creates, by size, from the profiler's memory timeline (what
    # export_memory_timeline writes): the node allocates without an op of its own, so no
    # op's event would show it.
    made = sum(1 for _, action, _, nbytes in prof._memory_profile().timeline
               if action.name == "CREATE" and nbytes == size)
    if hold:  # the held gradient kept its values: MulBackward's, w
        assert torch.equal(bits(kept[0]), bits(w))
    return x.grad, {k: p.grad for k, p in module.named_parameters()}, made


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_the_node_writes_dx_over_a_gradient_nobody_else_holds(dtype):
    # Shapes whose dy (64 x 300) has a byte size no other tensor of the step has.
    torch.manual_seed(4)
    module = rt.LinearReLU(100, 300).to(dtype)
    x = torch.randn(64, 100, dtype=dtype)
    w = torch.randn(64, 300, dtype=dtype)
    free = _backward_allocations(module, x.clone().requires_grad_(), w, hold=False)
    module.zero_grad(set_to_none=True)
    held = _backward_allocations(module, x.clone().requires_grad_(), w, hold=True)
    assert free[2] == 1  # MulBackward's gradient only: dx went over it
    assert held[2] == 2  # held: dx gets its own tensor
    assert torch.equal(bits(free[0]), bits(held[0]))
    assert all(torch.equal(bits(free[1][k]), bits(held[1][k])) for k in free[1])


def test_the_forward_runs_relu_in_place_over_linears_output():
    torch.manual_seed(5)
    stock = nn.Sequential(nn.Linear(16, 32), nn.ReLU())
    ours = rt.replace_relu(copy.deepcopy(stock), fuse_linear=True)
    x = torch.randn(8, 16, requires_grad=True)
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU]) as prof:
        y = ours(x)
    names = {e.name for e in prof.events()}
    assert "relugrad_native::linear_relu" in names and "aten::relu_" in names
    assert "aten::relu" not in names  # no relu into a new tensor
    assert torch.equal(bits(y), bits(stock(x)))
    assert y._version == 0 and y._base is None


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_create_graph_runs_stocks_ops_bit_for_bit(dtype):
    # Under create_graph the node's backward is stock's differentiable ops: the first-order
    # gradients, the bias's included (stock's sum(0), which the fused order does not give for
    # these 300 rows), are stock's bits. The second backward reaches the node again without
    # create_graph: there the bias gradient is the fused pass's order (within rounding) and
    # every other gradient stock's bits.
    torch.manual_seed(6)
    stock = nn.Sequential(nn.Linear(12, 20), nn.ReLU()).to(dtype)
    ours = rt.replace_relu(copy.deepcopy(stock), fuse_linear=True)
    x = torch.randn(300, 12, dtype=dtype)
    first, second, plain_bias = [], [], []
    for model in (stock, ours):
        xi = x.clone().requires_grad_()
        loss = (model(xi) ** 2).sum()
        gx, gb = torch.autograd.grad(loss, (xi, model[0].bias), create_graph=True)
        first.append((gx.detach(), gb.detach()))
        (gx * gx).sum().backward()
        second.append([xi.grad] + [p.grad for p in model.parameters()])
        model.zero_grad(set_to_none=True)
        (model(x) ** 2).sum().backward()
        plain_bias.append(model[0].bias.grad)
    assert ours(x.requires_grad_()).grad_fn.name() == "relugrad::LinearReluBackward"
    for a, b in zip(first[0], first[1]):
        assert torch.equal(bits(a), bits(b))
    assert not torch.equal(bits(plain_bias[0]), bits(plain_bias[1])), "the case must tell the orders apart"
    for a, b in zip(second[0][:-1], second[1][:-1]):
        assert torch.equal(bits(a), bits(b))
    tol = 1e-5 if dtype == torch.float32 else 1e-12
    assert torch.allclose(second[0][-1], second[1][-1], rtol=tol, atol=tol)


def test_the_native_entry_answers_not_implemented_for_other_tensors():
    from relugrad.torch import testing
    native = testing.native_library()
    w, b = torch.randn(4, 3), torch.randn(4)
    assert native.linear_relu(torch.randn(2, 3).t().contiguous().t(), w, b) is NotImplemented
    assert native.linear_relu(torch.randn(2, 3).half(), w.half(), b.half()) is NotImplemented
    assert native.linear_relu(torch.randn(2, 3), w.double(), b) is NotImplemented
    assert native.linear_relu(torch.randn(2, 3, device="meta"), w, b) is NotImplemented
    with pytest.raises(TypeError, match="takes 3 arguments"):
        native.linear_relu(w, b)
    with pytest.raises(RuntimeError):  # stock's shape error, raised as torch raises it
        native.linear_relu(torch.randn(2, 5), w, b)


def _fused_and_stock(in_f, out_f, dtype=torch.float32, seed=0):
    torch.manual_seed(seed)
    stock = nn.Sequential(nn.Linear(in_f, out_f), nn.ReLU()).to(dtype)
    ours = rt.replace_relu(copy.deepcopy(stock), fuse_linear=True)
    assert fusion.fused_pairs(ours) == ["0 + 1"]
    return stock, ours


def _saved_activation_bytes(model, x):
    params = {p.untyped_storage().data_ptr() for p in model.parameters()}
    seen = {}

    def pack(t):
        s = t.untyped_storage()
        if s.data_ptr() not in params:
            seen[s.data_ptr()] = s.nbytes()
        return t

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        y = model(x)
    return sum(seen.values()), y


@pytest.mark.parametrize("frozen", ["weight", "x"])
def test_keeps_only_what_stock_addmm_keeps(frozen):
    """x only where the weight needs a gradient (a frozen layer keeps no activation of its own),
    the weight only where x does: the same saved bytes as stock, and x may then change in place."""
    stock, ours = _fused_and_stock(64, 64)
    x_needs_grad = frozen == "weight"
    for m in (stock, ours):
        if frozen == "weight":
            m[0].weight.requires_grad_(False)
    x = torch.randn(32, 64, requires_grad=x_needs_grad)
    pre = nn.Linear(64, 64)
    stock_bytes, _ = _saved_activation_bytes(stock, pre(x) if x_needs_grad else x)
    ours_bytes, _ = _saved_activation_bytes(ours, pre(x) if x_needs_grad else x)
    assert ours_bytes == stock_bytes
    if frozen == "weight":
        # An in-place residual add on the block's input: stock trains, and so must the fused one.
        grads = []
        for m in (stock, ours):
            h = pre(x)
            h += m(h)
            h.square().sum().backward()
            grads.append(pre.weight.grad.clone())
            pre.weight.grad = None
        assert torch.equal(bits(grads[0]), bits(grads[1]))


def test_computes_only_the_gradients_the_backward_asks_for():
    stock, ours = _fused_and_stock(32, 64)

    def mm_calls(m, x):
        with torch.profiler.profile() as prof:
            dx, = torch.autograd.grad(m(x).sum(), x)
        return sum(1 for e in prof.events() if e.name == "aten::mm"), dx

    x = torch.randn(16, 32, requires_grad=True)
    (n_stock, dx_stock), (n_ours, dx_ours) = mm_calls(stock, x), mm_calls(ours, x)
    assert n_ours == n_stock == 1 and torch.equal(bits(dx_stock), bits(dx_ours))
    # Under detect_anomaly a NaN in a gradient nobody asked for raises nothing, as in stock.
    xn = x.detach().clone()
    xn[0, 0] = float("nan")
    xn.requires_grad_(True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # detect_anomaly's own notice
        with torch.autograd.detect_anomaly(check_nan=True):
            torch.autograd.grad(ours(xn).sum(), xn)


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_a_transposed_weight_gets_stocks_weight_gradient_bits_and_strides(dtype):
    """A weight stored (in, out) and used as its .T (converted checkpoints): stock's
    mm_mat2_backward then computes x.t() @ dx, transposed; the fused node picks the same mm."""
    grads = []
    for fuse in (False, True):
        torch.manual_seed(0)
        g = torch.Generator().manual_seed(0)
        lin = nn.Linear(33, 65).to(dtype)
        lin.weight = nn.Parameter(torch.randn(33, 65, generator=g, dtype=dtype).T * 0.1)
        m = nn.Sequential(lin, nn.ReLU())
        if fuse:
            rt.replace_relu(m, fuse_linear=True)
            assert fusion.fused_pairs(m) == ["0 + 1"]
        x = torch.randn(300, 33, generator=g, dtype=dtype)
        dy = torch.randn(300, 65, generator=g, dtype=dtype)
        gw, = torch.autograd.grad(m(x), lin.weight, dy)
        grads.append(gw)
    assert grads[0].stride() == grads[1].stride() == (1, 65)
    assert torch.equal(bits(grads[0]), bits(grads[1]))


@pytest.mark.parametrize("in_f,out_f", [(0, 4), (7, 0)])
def test_zero_features_train_as_in_stock(in_f, out_f):
    stock, ours = _fused_and_stock(in_f, out_f)
    results = []
    for m in (stock, ours):
        x = torch.randn(3, in_f, requires_grad=True)
        m(x).sum().backward()
        results.append((x.grad, m[0].weight.grad, m[0].bias.grad))
    for a, b in zip(*results):
        assert a.shape == b.shape and torch.equal(bits(a), bits(b))


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16], ids=str)
def test_cpu_autocast_trains_as_stock(dtype):
    """Under autocast linear runs in the lower dtype: the pair runs unfused, stock's bits."""
    stock, ours = _fused_and_stock(16, 32)
    results = []
    for m in (stock, ours):
        x = torch.randn(8, 16, generator=torch.Generator().manual_seed(1))
        with torch.autocast("cpu", dtype=dtype):
            y = m(x)
        y.float().square().sum().backward()
        results.append([y] + [p.grad for p in m.parameters()])
    for a, b in zip(*results):
        assert a.dtype == b.dtype and torch.equal(bits(a), bits(b))


def test_anomaly_mode_runs_stocks_nodes():
    stock, ours = _fused_and_stock(4, 6)
    x = torch.randn(3, 4)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # detect_anomaly's own notice
        with torch.autograd.detect_anomaly():
            ys, yo = stock(x.requires_grad_()), ours(x)
    assert ys.grad_fn.name() == "ReluBackward0" and yo.grad_fn.name() == "relugrad::ReluBackward"

"""Autograd of the linear-algebra and neural-network ops against real PyTorch:
grad_fn names, first derivatives over hypothesis-drawn shapes and op
configurations (stride, padding, dilation, groups, reductions, ignore_index,
class weights, padding_idx ...), and second derivatives (create_graph=True)
for the ops whose backward ops have formulas of their own."""
import numpy as np
import pytest
from hypothesis import assume, given, strategies as st

import glasstorch
from glasstorch._ops.kernels import KERNELS
from glasstorch._ops.kernels.conv import pooling_output_shape

from .helpers import to_numpy

# -- harness -----------------------------------------------------------------------------

def _run(lib, fn, arrays, consts, seed, order):
    """fn(lib, *inputs, *consts) with float64 inputs requiring grad; returns the
    output, its grad_fn name, the first derivatives for a random cotangent, the
    grad_fn names of those (order 2) and the second derivatives of a random
    contraction of them."""
    inputs = [lib.tensor(a).requires_grad_() for a in arrays]
    made = [c(lib) if callable(c) else c for c in consts]
    out = fn(lib, *inputs, *made)
    rng = np.random.default_rng(seed)
    cot = lib.tensor(rng.uniform(-1, 1, size=tuple(out.shape)))
    grads = lib.autograd.grad(out, inputs, cot, create_graph=order > 1, allow_unused=True)
    result = {"out": out, "name": type(out.grad_fn).__name__, "grads": grads}
    if order > 1:
        live = [g for g in grads if g is not None and g.requires_grad]
        result["grad_names"] = [type(g.grad_fn).__name__ for g in live]
        cots = [lib.tensor(rng.uniform(-1, 1, size=tuple(g.shape))) for g in live]
        result["second"] = lib.autograd.grad(live, inputs, cots, allow_unused=True) \
            if live else []
    return result


def _close(ours, theirs, what, rtol, atol):
    assert (ours is None) == (theirs is None), f"{what}: {ours} here, {theirs} in PyTorch"
    if theirs is None:
        return
    assert tuple(ours.shape) == tuple(theirs.shape), f"{what}: shape"
    np.testing.assert_allclose(to_numpy(ours.detach()), to_numpy(theirs), rtol=rtol, atol=atol,
                               err_msg=what)


def check(fn, arrays, consts=(), *, order=1, seed=0, rtol=1e-7, atol=1e-9, strides=False):
    """Compare glasstorch with PyTorch on ``fn``; ``consts`` are extra arguments
    (values, or ``lib -> value`` for tensors) that need no gradient."""
    import torch
    arrays = [np.asarray(a, dtype=np.float64) for a in arrays]
    theirs = _run(torch, fn, arrays, consts, seed, order)
    ours = _run(glasstorch, fn, arrays, consts, seed, order)
    _close(ours["out"], theirs["out"], "output", rtol, atol)
    assert ours["name"] == theirs["name"], "grad_fn"
    for k, (g, t) in enumerate(zip(ours["grads"], theirs["grads"])):
        _close(g, t, f"gradient of input {k}", rtol, atol)
        if strides and t is not None:
            assert tuple(g.stride()) == tuple(t.stride()), f"gradient {k} strides"
    if order > 1:
        assert ours["grad_names"] == theirs["grad_names"], "grad_fn of the gradients"
        for k, (g, t) in enumerate(zip(ours["second"], theirs["second"])):
            _close(g, t, f"second derivative of input {k}", rtol, atol)


def _uniform(rng, *shape, low=-1.0, high=1.0):
    return rng.uniform(low, high, size=shape)


def _long(values):
    return lambda lib: lib.tensor(values, dtype=lib.int64)


def _aten(lib):
    return lib.ops.aten


seeds = st.integers(0, 2**32 - 1)


# -- matrix products --------------------------------------------------------------------

@given(seed=seeds, m=st.integers(1, 4), k=st.integers(1, 4), n=st.integers(1, 4),
       b=st.integers(1, 3), beta=st.sampled_from([1, 0, 0.5]), alpha=st.sampled_from([1, -2.0]))
def test_matrix_products_first_and_second_order(seed, m, k, n, b, beta, alpha):
    rng = np.random.default_rng(seed)
    u = lambda *s: _uniform(rng, *s)
    check(lambda L, x, y: _aten(L).mm.default(x, y), [u(m, k), u(k, n)], order=2, seed=seed)
    check(lambda L, s, x, y: _aten(L).addmm.default(s, x, y, beta=beta, alpha=alpha),
          [u(n), u(m, k), u(k, n)], order=2, seed=seed)
    check(lambda L, s, x, y: _aten(L).addmv.default(s, x, y, beta=beta, alpha=alpha),
          [u(1), u(m, k), u(k)], order=2, seed=seed)
    check(lambda L, s, x, y: _aten(L).baddbmm.default(s, x, y, beta=beta, alpha=alpha),
          [u(m, 1), u(b, m, k), u(b, k, n)], order=2, seed=seed)
    check(lambda L, x, y: _aten(L).bmm.default(x, y), [u(b, m, k), u(b, k, n)], order=2,
          seed=seed)
    check(lambda L, x, y: _aten(L).mv.default(x, y), [u(m, k), u(k)], order=2, seed=seed)
    check(lambda L, x, y: _aten(L).dot.default(x, y), [u(k), u(k)], order=2, seed=seed)
    check(lambda L, x, y: _aten(L).vdot.default(x, y), [u(k), u(k)], order=2, seed=seed)


@pytest.mark.parametrize("mat1_t,mat2_t", [(True, False), (False, True), (True, True)])
def test_mm_gradients_keep_column_major_layout(mat1_t, mat2_t):
    """mm_mat1/2_backward compute a column-major input's gradient column-major."""
    rng = np.random.default_rng(0)
    a, b = _uniform(rng, 3, 4), _uniform(rng, 4, 5)

    def fn(L, x, y):
        x = x.t().contiguous().t() if mat1_t else x
        y = y.t().contiguous().t() if mat2_t else y
        return L.mm(x, y)
    check(fn, [a, b], strides=True)

    def fn_leaf_strides(lib):
        x = lib.tensor(a.T.copy()).t().requires_grad_() if mat1_t else \
            lib.tensor(a).requires_grad_()
        y = lib.tensor(b.T.copy()).t().requires_grad_() if mat2_t else \
            lib.tensor(b).requires_grad_()
        grads = lib.autograd.grad(lib.mm(x, y).sum(), [x, y])
        return [tuple(g.stride()) for g in grads]
    import torch
    assert fn_leaf_strides(glasstorch) == fn_leaf_strides(torch)


matmul_shapes = st.sampled_from([
    ((3,), (3,)), ((2, 3), (3,)), ((3,), (3, 2)), ((2, 3), (3, 4)), ((2, 2, 3), (3,)),
    ((3,), (2, 3, 4)), ((2, 2, 3), (3, 4)), ((2, 3), (4, 3, 2)), ((2, 2, 3), (2, 3, 4)),
    ((1, 2, 3), (4, 3, 2)), ((2, 1, 2, 3), (3, 3, 1)), ((3, 1, 2, 3), (1, 2, 3, 2))])


@given(seed=seeds, shapes=matmul_shapes)
def test_matmul_double_backward(seed, shapes):
    """matmul decomposes into dot/mv/mm/bmm and views; the grad_fn names (e.g.
    UnsafeViewBackward0 for folded 3-d inputs) and both derivatives match."""
    rng = np.random.default_rng(seed)
    check(lambda L, x, y: L.matmul(x, y), [_uniform(rng, *s) for s in shapes], order=2,
          seed=seed)


@given(seed=seeds, batch=st.lists(st.integers(1, 3), max_size=2), bias=st.booleans())
def test_linear_double_backward(seed, batch, bias):
    rng = np.random.default_rng(seed)
    arrays = [_uniform(rng, *batch, 3), _uniform(rng, 4, 3)] + ([_uniform(rng, 4)] if bias else [])
    check(lambda L, *t: L.nn.functional.linear(*t), arrays, order=2, seed=seed)


EINSUM_CASES = [
    ("bij,bjk->bik", [(2, 3, 4), (2, 4, 5)]), ("i,j,ij->", [(3,), (4,), (3, 4)]),
    ("ij->ji", [(3, 4)]), ("ij->", [(3, 4)]), ("ii->i", [(3, 3)]), ("ij,j->i", [(3, 4), (4,)]),
    ("...ij,...jk", [(2, 3, 4), (4, 5)]), ("ij,ij->ij", [(3, 4), (3, 4)]),
    ("iij,jk", [(3, 3, 4), (4, 2)]), ("bn,anm,bm->ba", [(2, 3), (4, 3, 5), (2, 5)]),
    ("i,i", [(3,), (3,)]), ("Ab,bA", [(2, 3), (3, 2)]), ("...,...->...", [(2, 1, 3), (4, 1)]),
    ("ij,kj->ik", [(3, 1), (2, 4)])]


@pytest.mark.parametrize("equation,shapes", EINSUM_CASES, ids=[c[0] for c in EINSUM_CASES])
def test_einsum_decomposition(equation, shapes):
    """The CompositeImplicitAutograd einsum kernel records what PyTorch's records."""
    rng = np.random.default_rng(1)
    einsum = KERNELS["einsum"]

    def fn(L, *ts):
        return einsum(equation, list(ts)) if L is glasstorch else L.einsum(equation, *ts)
    check(fn, [_uniform(rng, *s) for s in shapes], order=2)


# -- softmax ------------------------------------------------------------------------------

@given(seed=seeds, shape=st.lists(st.integers(1, 4), min_size=0, max_size=3),
       log=st.booleans(), data=st.data())
def test_softmax_double_backward(seed, shape, log, data):
    dim = data.draw(st.integers(-max(len(shape), 1), max(len(shape), 1) - 1))
    rng = np.random.default_rng(seed)
    op = "_log_softmax" if log else "_softmax"
    check(lambda L, x: getattr(_aten(L), op).default(x, dim, False), [_uniform(rng, *shape)],
          order=2, seed=seed)
    public = "log_softmax" if log else "softmax"
    check(lambda L, x: getattr(L, public)(x, dim), [_uniform(rng, *shape)], order=2, seed=seed)


# -- convolution -----------------------------------------------------------------------------

conv_configs = st.fixed_dictionaries({
    "k": st.sampled_from([1, 2]), "batch": st.integers(1, 2), "groups": st.sampled_from([1, 2]),
    "stride": st.integers(1, 2), "padding": st.integers(0, 2), "dilation": st.integers(1, 2),
    "transposed": st.booleans(), "size": st.integers(3, 6), "kernel": st.integers(1, 3),
    "bias": st.booleans()})


def _conv_case(rng, c):
    k, g = c["k"], c["groups"]
    in_channels, out_channels = 2 * g, 3 * g if not c["transposed"] else 2 * g
    x = _uniform(rng, c["batch"], in_channels, *[c["size"]] * k)
    if c["transposed"]:
        w = _uniform(rng, in_channels, out_channels // g, *[c["kernel"]] * k)
        output_padding = [min(c["stride"], c["dilation"]) - 1] * k
    else:
        w = _uniform(rng, out_channels, in_channels // g, *[c["kernel"]] * k)
        output_padding = [0] * k
    arrays = [x, w] + ([_uniform(rng, out_channels)] if c["bias"] else [])
    params = ([c["stride"]] * k, [c["padding"]] * k, [c["dilation"]] * k, c["transposed"],
              output_padding, g)

    def fn(L, x, w, b=None):
        return _aten(L).convolution.default(x, w, b, *params)
    return fn, arrays


def _conv_valid(c):
    eff = c["dilation"] * (c["kernel"] - 1) + 1
    if c["transposed"]:
        output_padding = min(c["stride"], c["dilation"]) - 1
        return (c["size"] - 1) * c["stride"] - 2 * c["padding"] + eff + output_padding > 0
    return c["size"] + 2 * c["padding"] >= eff


@given(seed=seeds, c=conv_configs)
def test_convolution_gradients(seed, c):
    assume(_conv_valid(c))
    fn, arrays = _conv_case(np.random.default_rng(seed), c)
    check(fn, arrays, seed=seed, rtol=1e-6, atol=1e-8)


@given(seed=seeds, c=conv_configs)
def test_convolution_double_backward(seed, c):
    # without bias, convolution_backward's bias output is undefined (see below)
    assume(_conv_valid(c) and c["bias"])
    fn, arrays = _conv_case(np.random.default_rng(seed), c)
    check(fn, arrays, order=2, seed=seed, rtol=1e-6, atol=1e-8)


def test_convolution_double_backward_without_bias():
    c = {"k": 2, "batch": 2, "groups": 2, "stride": 2, "padding": 1, "dilation": 1,
         "transposed": False, "size": 5, "kernel": 3, "bias": False}
    fn, arrays = _conv_case(np.random.default_rng(0), c)
    check(fn, arrays, order=2, rtol=1e-6, atol=1e-8)


def test_conv2d_padding_same_gradients():
    rng = np.random.default_rng(3)
    check(lambda L, x, w, b: L.nn.functional.conv2d(x, w, b, padding="same", dilation=2),
          [_uniform(rng, 2, 3, 6, 5), _uniform(rng, 4, 3, 2, 3), _uniform(rng, 4)], order=2)


# -- pooling ---------------------------------------------------------------------------------

pool_configs = st.fixed_dictionaries({
    "kernel": st.tuples(st.integers(1, 3), st.integers(1, 3)),
    "stride": st.sampled_from([[], [1, 1], [2, 2], [2, 1]]),
    "padding": st.integers(0, 1), "dilation": st.integers(1, 2), "ceil_mode": st.booleans(),
    "batched": st.booleans(), "h": st.integers(4, 7), "w": st.integers(4, 7)})


def _pool_input(rng, c):
    shape = ([2] if c["batched"] else []) + [2, c["h"], c["w"]]
    return _uniform(rng, *shape)


def _pool_valid(c, kernel, padding, dilation):
    """Every output size is at least 1 (else both libraries refuse the input)."""
    stride = c["stride"] or kernel
    for size, k, s, p in zip((c["h"], c["w"]), kernel, stride, padding):
        if pooling_output_shape(size, k, p, s, dilation, c["ceil_mode"]) < 1:
            return False
    return True


@given(seed=seeds, c=pool_configs)
def test_max_pool2d_double_backward(seed, c):
    kernel, padding = list(c["kernel"]), [min(c["padding"], k // 2) for k in c["kernel"]]
    assume(_pool_valid(c, kernel, padding, c["dilation"]))
    check(lambda L, x: _aten(L).max_pool2d_with_indices.default(
        x, kernel, c["stride"], padding, [c["dilation"]] * 2, c["ceil_mode"])[0],
        [_pool_input(np.random.default_rng(seed), c)], order=2, seed=seed)


@given(seed=seeds, c=pool_configs, count_include_pad=st.booleans(),
       divisor=st.sampled_from([None, 1, 3]))
def test_avg_pool2d_double_backward(seed, c, count_include_pad, divisor):
    kernel, padding = list(c["kernel"]), [min(c["padding"], k // 2) for k in c["kernel"]]
    assume(_pool_valid(c, kernel, padding, 1))
    check(lambda L, x: _aten(L).avg_pool2d.default(
        x, kernel, c["stride"], padding, c["ceil_mode"], count_include_pad, divisor),
        [_pool_input(np.random.default_rng(seed), c)], order=2, seed=seed)


@given(seed=seeds, c=pool_configs, out=st.tuples(st.integers(1, 5), st.integers(1, 5)))
def test_adaptive_avg_pool2d_double_backward(seed, c, out):
    check(lambda L, x: L.nn.functional.adaptive_avg_pool2d(x, list(out)),
          [_pool_input(np.random.default_rng(seed), c)], order=2, seed=seed)


# -- normalization ---------------------------------------------------------------------------

@given(seed=seeds, lead=st.lists(st.integers(1, 3), max_size=2),
       normalized=st.lists(st.integers(1, 4), min_size=1, max_size=2), affine=st.booleans())
def test_layer_norm_gradients(seed, lead, normalized, affine):
    rng = np.random.default_rng(seed)
    arrays = [_uniform(rng, *lead, *normalized)]
    if affine:
        arrays += [_uniform(rng, *normalized), _uniform(rng, *normalized)]
    check(lambda L, *t: L.nn.functional.layer_norm(t[0], normalized, *t[1:]), arrays,
          seed=seed, rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("affine", [True, False])
@pytest.mark.parametrize("shape,normalized", [((2, 3, 4), [4]), ((3, 5), [5]), ((2, 3, 4), [3, 4])])
def test_layer_norm_double_backward(shape, normalized, affine):
    """native_layer_norm_backward's formula re-expresses the backward with
    composite ops and differentiates them (formulas/nn.py)."""
    rng = np.random.default_rng(5)
    arrays = [_uniform(rng, *shape)]
    if affine:
        arrays += [_uniform(rng, *normalized), _uniform(rng, *normalized)]
    check(lambda L, *t: L.nn.functional.layer_norm(t[0], normalized, *t[1:]) * t[0], arrays,
          order=2, rtol=1e-6, atol=1e-8)


def test_layer_norm_third_order_matches_finite_differences():
    """Differentiating the composite re-expression again gives exact third-order
    gradients (PyTorch's hand-derived layer_norm_double_backward does not, so
    this compares with central differences of the second-order quantity)."""
    rng = np.random.default_rng(0)
    x0, w0, b0 = _uniform(rng, 2, 5), _uniform(rng, 5), _uniform(rng, 5)

    def second_order(x_values, third):
        x = glasstorch.tensor(x_values).requires_grad_()
        w, b = glasstorch.tensor(w0).requires_grad_(), glasstorch.tensor(b0).requires_grad_()
        y = (glasstorch.nn.functional.layer_norm(x, [5], w, b) ** 2).sum()
        gx, gw, _ = glasstorch.autograd.grad(y, [x, w, b], create_graph=True)
        hx, hw = glasstorch.autograd.grad((gx * gx).sum() + (gw * gx[0]).sum(), [x, w],
                                          create_graph=True)
        s = (hx * hx).sum() + hw.sum()
        return glasstorch.autograd.grad(s, x)[0].numpy() if third else s.item()
    eps = 1e-6
    numeric = np.zeros_like(x0)
    for index in np.ndindex(*x0.shape):
        step = np.zeros_like(x0)
        step[index] = eps
        numeric[index] = (second_order(x0 + step, False) -
                          second_order(x0 - step, False)) / (2 * eps)
    np.testing.assert_allclose(second_order(x0, True), numeric, rtol=1e-5, atol=1e-4)


@given(seed=seeds, n=st.integers(1, 2), groups=st.sampled_from([1, 2, 4]),
       spatial=st.lists(st.integers(1, 3), max_size=2), affine=st.booleans())
def test_group_norm_double_backward(seed, n, groups, spatial, affine):
    assume(n * 4 // groups * int(np.prod(spatial)) != 1)   # F.group_norm refuses 1 per group
    rng = np.random.default_rng(seed)
    arrays = [_uniform(rng, n, 4, *spatial)]
    if affine:
        arrays += [_uniform(rng, 4), _uniform(rng, 4)]
    check(lambda L, *t: L.nn.functional.group_norm(t[0], groups, *t[1:]) * t[0], arrays,
          order=2, seed=seed, rtol=1e-6, atol=1e-8)


def test_native_group_norm_stats_gradients():
    """All three outputs of native_group_norm are differentiable."""
    rng = np.random.default_rng(2)

    def fn(L, x, w, b):
        out, mean, rstd = _aten(L).native_group_norm.default(x, w, b, 2, 6, 4, 3, 1e-5)
        return (out * out).sum() + (mean * 2).sum() + (rstd * rstd).sum()
    check(fn, [_uniform(rng, 2, 6, 4), _uniform(rng, 6), _uniform(rng, 6)], order=2,
          rtol=1e-6, atol=1e-8)


# -- embedding, dropout ----------------------------------------------------------------------

@given(seed=seeds, padding_idx=st.sampled_from([None, 0, 3, -1]), scale=st.booleans())
def test_embedding_double_backward(seed, padding_idx, scale):
    rng = np.random.default_rng(seed)
    indices = rng.integers(0, 5, size=(2, 4)).tolist()
    check(lambda L, w, idx: L.nn.functional.embedding(idx, w * w, padding_idx=padding_idx,
                                                      scale_grad_by_freq=scale),
          [_uniform(rng, 5, 3)], [_long(indices)], order=2, seed=seed)


@pytest.mark.parametrize("p,train", [(0.5, True), (0.5, False), (0.5, None), (1.0, True),
                                     (0.0, True)])
def test_native_dropout_gradient_uses_the_mask(p, train):
    """grad_input = grad * mask * scale, with PyTorch's scale (1 unless train is
    given and true), also when differentiated twice."""
    x = glasstorch.ones(4, 6, dtype=glasstorch.float64, requires_grad=True)
    out, mask = glasstorch.ops.aten.native_dropout.default(x, p, train)
    assert type(out.grad_fn).__name__ == "NativeDropoutBackward0" and not mask.requires_grad
    scale = 1.0 if not train else (0.0 if p == 1 else 1 / (1 - p))
    g = glasstorch.full((4, 6), 3.0, dtype=glasstorch.float64, requires_grad=True)
    (grad,) = glasstorch.autograd.grad(out, x, g, create_graph=True)
    np.testing.assert_allclose(grad.detach().numpy(), 3.0 * mask.numpy() * scale)
    (second,) = glasstorch.autograd.grad(grad.sum(), g)
    np.testing.assert_allclose(second.numpy(), mask.numpy() * scale)


# -- losses ----------------------------------------------------------------------------------

reductions = st.sampled_from([0, 1, 2])


@given(seed=seeds, reduction=reductions, shape=st.lists(st.integers(1, 3), max_size=3),
       beta=st.sampled_from([0.0, 0.5, 1.0]))
def test_pointwise_losses_double_backward(seed, reduction, shape, beta):
    rng = np.random.default_rng(seed)
    x, t = _uniform(rng, *shape), _uniform(rng, *shape)
    a = _aten
    check(lambda L, x, t: a(L).mse_loss.default(x, t, reduction), [x, t], order=2, seed=seed)
    check(lambda L, x, t: a(L).smooth_l1_loss.default(x, t, reduction, beta), [x, t], order=2,
          seed=seed)
    check(lambda L, x, t: a(L).huber_loss.default(x, t, reduction, beta + 0.25), [x, t],
          order=2, seed=seed)


@given(seed=seeds, reduction=reductions, weighted=st.booleans(), pos_weighted=st.booleans())
def test_binary_cross_entropy_double_backward(seed, reduction, weighted, pos_weighted):
    rng = np.random.default_rng(seed)
    x, t = _uniform(rng, 3, 4, low=0.05, high=0.95), _uniform(rng, 3, 4, low=0, high=1)
    w = _uniform(rng, 3, 4, low=0.5, high=2) if weighted else None
    pw = _uniform(rng, 4, low=0.5, high=2) if pos_weighted else None
    const = (lambda L: L.tensor(w)) if weighted else None
    check(lambda L, x, t, w: _aten(L).binary_cross_entropy.default(x, t, w, reduction),
          [x, t], [const], order=2, seed=seed, rtol=1e-6, atol=1e-8)
    check(lambda L, x, t, w, pw: _aten(L).binary_cross_entropy_with_logits.default(
        x, t, w, pw, reduction), [x * 4 - 2, t],
        [const, (lambda L: L.tensor(pw)) if pos_weighted else None], order=2, seed=seed)


@given(seed=seeds, reduction=reductions, weighted=st.booleans(),
       ignore_index=st.sampled_from([-100, 0, 2]), ndim=st.sampled_from([1, 2, 3, 4]))
def test_nll_loss_double_backward(seed, reduction, weighted, ignore_index, ndim):
    rng = np.random.default_rng(seed)
    classes = 4
    shape = {1: (classes,), 2: (3, classes), 3: (2, classes, 3), 4: (2, classes, 2, 3)}[ndim]
    target_shape = shape[:1] + shape[2:] if ndim > 1 else ()
    target = rng.integers(0, classes, size=target_shape).tolist()
    w = (lambda L: L.tensor(_uniform(np.random.default_rng(seed), classes, low=0.5,
                                     high=2))) if weighted else None
    check(lambda L, x, t, w: L.nn.functional.nll_loss(x, t, w, ignore_index=ignore_index,
                                                      reduction=["none", "mean", "sum"][
                                                          reduction]),
          [_uniform(rng, *shape)], [_long(target), w], order=2, seed=seed, rtol=1e-6, atol=1e-8)


@given(seed=seeds, reduction=st.sampled_from(["none", "mean", "sum"]),
       smoothing=st.sampled_from([0.0, 0.1]), weighted=st.booleans())
def test_cross_entropy_double_backward(seed, reduction, smoothing, weighted):
    rng = np.random.default_rng(seed)
    target = rng.integers(0, 5, size=(3,)).tolist()
    w = (lambda L: L.tensor(_uniform(np.random.default_rng(seed), 5, low=0.5, high=2))) \
        if weighted else None
    check(lambda L, x, t, w: L.nn.functional.cross_entropy(x, t, w, reduction=reduction,
                                                           label_smoothing=smoothing),
          [_uniform(rng, 3, 5)], [_long(target), w], order=2, seed=seed, rtol=1e-6, atol=1e-8)

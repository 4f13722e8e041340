"""Defects PyTorch's op_db found in ops glasstorch has (docs/op-db.md), each
against real PyTorch: complex lerp, trace's gradient of non-square matrices,
matrix_power(A, 0) in the graph, negative take_along_dim indices, vander of
scalars and complex vectors, tensordot of small integers, norms of empty
matrices, complex logaddexp, empty Householder products, backward of empty
solves and pools, complex rms_norm, native_dropout_backward's dtype, abs_ of
complex tensors, the "Bad in-place call" of structured in-place ops,
ldexp/histogramdd/avg_pool2d/_upsample_*_aa/empty_permuted bindings, the
small-matrix bmm loop's order of operations and complex convolution by
Gauss's trick."""
import numpy as np
import pytest
from hypothesis import given, strategies as st

import glasstorch

from .helpers import assert_same, to_numpy


def pair(torch, arr, requires_grad=False):
    """The same values as a glasstorch and a torch tensor."""
    ours = glasstorch.from_numpy(np.array(arr))
    theirs = torch.from_numpy(np.array(arr))
    if requires_grad:
        ours.requires_grad_(True)
        theirs.requires_grad_(True)
    return ours, theirs


def random(seed, shape, dtype=np.float64):
    rng = np.random.default_rng(seed)
    values = rng.standard_normal(shape)
    if np.dtype(dtype).kind == "c":
        values = values + 1j * rng.standard_normal(shape)
    return values.astype(dtype)


def raises_alike(ours_fn, theirs_fn):
    """Both raise the same exception type with the same message."""
    with pytest.raises(Exception) as theirs:
        theirs_fn()
    with pytest.raises(Exception) as ours:
        ours_fn()
    assert type(ours.value).__name__ == type(theirs.value).__name__
    assert str(ours.value) == str(theirs.value)


def grads(torch, ours_out, theirs_out, ours_in, theirs_in, seed=0):
    """Gradients of the outputs with the same random grad_output in both libraries."""
    g = random(seed, tuple(theirs_out.shape), to_numpy(theirs_out).dtype)
    ours = glasstorch.autograd.grad(ours_out, ours_in, glasstorch.from_numpy(g.copy()))
    theirs = torch.autograd.grad(theirs_out, theirs_in, torch.from_numpy(g.copy()))
    return ours, theirs


shapes = st.lists(st.integers(0, 4), min_size=0, max_size=3)


# -- values ----------------------------------------------------------------------------------

@given(shapes, st.sampled_from([np.complex64, np.complex128]), st.booleans(),
       st.integers(0, 2**31 - 1))
def test_lerp_keeps_the_imaginary_part(torch, shape, dtype, scalar_weight, seed):
    (a, ta), (b, tb) = pair(torch, random(seed, shape, dtype)), pair(torch, random(seed + 1, shape, dtype))
    if scalar_weight:
        w = tw = 0.3 + 0.7j if seed % 2 else 0.75
    else:
        w, tw = pair(torch, random(seed + 2, shape, dtype))
    assert_same(glasstorch.lerp(a, b, w), torch.lerp(ta, tb, tw), atol=1e-5)
    assert_same(a.clone().lerp_(b, w), ta.clone().lerp_(tb, tw), atol=1e-5)


@given(shapes, st.integers(-6, 5), st.integers(0, 2**31 - 1))
def test_take_along_dim_wraps_negative_indices(torch, shape, dim_seed, seed):
    shape = [max(n, 1) for n in shape] or [3]
    dim = dim_seed % len(shape) - (len(shape) if dim_seed < 0 else 0)
    (x, tx) = pair(torch, random(seed, shape))
    rng = np.random.default_rng(seed)
    n = shape[dim]
    (i, ti) = pair(torch, rng.integers(-2 * n, 2 * n, size=shape))   # along a dim: any, wrapped
    assert_same(glasstorch.take_along_dim(x, i, dim), torch.take_along_dim(tx, ti, dim))
    # flattened, as gather: a negative index is out of bounds
    raises_alike(lambda: glasstorch.take_along_dim(x, i * 0 - 1),
                 lambda: torch.take_along_dim(tx, ti * 0 - 1))


@pytest.mark.parametrize("dtype", [np.float64, np.complex128, np.int32])
@pytest.mark.parametrize("shape,N", [((), 2), ((), 4), ((3,), None), ((2, 3), 5)])
def test_vander_of_scalars_and_complex_vectors(torch, dtype, shape, N):
    x, tx = pair(torch, (random(3, shape, dtype) * 3).astype(dtype))
    assert_same(glasstorch.linalg.vander(x, N=N), torch.linalg.vander(tx, N=N))
    raises_alike(lambda: glasstorch.linalg.vander(x, N=1), lambda: torch.linalg.vander(tx, N=1))


def test_vander_rejects_what_torch_rejects(torch):
    x, tx = pair(torch, np.array([1.0, 2.0], np.float32))
    raises_alike(lambda: glasstorch.linalg.vander(x.to(glasstorch.float16)),
                 lambda: torch.linalg.vander(tx.to(torch.float16)))


@given(st.integers(1, 3), st.integers(1, 3), st.sampled_from([np.int16, np.int8, np.uint8]),
       st.integers(0, 2**31 - 1))
def test_tensordot_of_small_integers_keeps_their_dtype(torch, m, n, dtype, seed):
    rng = np.random.default_rng(seed)
    a, ta = pair(torch, rng.integers(0, 5, size=(1, m, 1)).astype(dtype))
    b, tb = pair(torch, rng.integers(0, 5, size=(n, 1, m)).astype(dtype))
    dims = ([0, 1], [1, 2])
    assert_same(glasstorch.tensordot(a, b, dims=dims), torch.tensordot(ta, tb, dims=dims))


@pytest.mark.parametrize("ord_", [float("inf"), -float("inf"), 1, -1, "fro", 2])
@pytest.mark.parametrize("shape", [(0, 0), (0, 3), (3, 0), (2, 0, 3)])
@pytest.mark.parametrize("keepdim", [False, True])
def test_matrix_norms_of_empty_matrices(torch, ord_, shape, keepdim):
    x, tx = pair(torch, np.zeros(shape, np.float32))
    for ours, theirs in ((lambda: glasstorch.linalg.matrix_norm(x, ord_, keepdim=keepdim),
                          lambda: torch.linalg.matrix_norm(tx, ord_, keepdim=keepdim)),
                         (lambda: glasstorch.linalg.norm(x, ord_, (-2, -1), keepdim=keepdim),
                          lambda: torch.linalg.norm(tx, ord_, (-2, -1), keepdim=keepdim))):
        try:
            expected = theirs()
        except Exception:    # noqa: BLE001 - torch refuses (a minimum over no elements)
            raises_alike(ours, theirs)
            continue
        assert_same(ours(), expected)


@given(shapes, st.sampled_from([np.complex64, np.complex128]), st.integers(0, 2**31 - 1))
def test_complex_logaddexp(torch, shape, dtype, seed):
    (a, ta), (b, tb) = pair(torch, random(seed, shape, dtype)), pair(torch, random(seed + 1, shape, dtype))
    assert_same(glasstorch.logaddexp(a, b), torch.logaddexp(ta, tb), atol=1e-5)


@pytest.mark.parametrize("dtype", [np.complex128, np.complex64, np.float64])
def test_empty_householder_product_and_ormqr(torch, dtype):
    for a_shape, tau_shape in (((0, 0), (0,)), ((3, 0), (0,)), ((2, 4, 0), (2, 0))):
        (a, ta), (tau, ttau) = pair(torch, np.zeros(a_shape, dtype)), pair(torch, np.zeros(tau_shape, dtype))
        assert_same(glasstorch.linalg.householder_product(a, tau),
                    torch.linalg.householder_product(ta, ttau))
    (a, ta), (tau, ttau) = pair(torch, np.zeros((5, 0), dtype)), pair(torch, np.zeros((0,), dtype))
    for k in (0, 2):
        for left in (True, False):
            c, tc = pair(torch, random(k, (5, k) if left else (k, 5), dtype))
            for transpose in (True, False):
                assert_same(glasstorch.ormqr(a, tau, c, left=left, transpose=transpose),
                            torch.ormqr(ta, ttau, tc, left=left, transpose=transpose))


@given(st.integers(1, 5), st.integers(1, 5), st.integers(0, 2**31 - 1))
def test_trace_gradient_of_non_square_matrices(torch, rows, cols, seed):
    x, tx = pair(torch, random(seed, (rows, cols)), requires_grad=True)
    ours, theirs = grads(torch, glasstorch.trace(x), torch.trace(tx), x, tx, seed)
    assert_same(ours, theirs)
    assert glasstorch.autograd.gradcheck(glasstorch.trace, (x,))


@pytest.mark.parametrize("shape", [(3, 3), (2, 4, 4), (0, 2, 2)])
def test_matrix_power_zero_stays_in_the_graph(torch, shape):
    a, ta = pair(torch, random(1, shape), requires_grad=True)
    ours, theirs = glasstorch.linalg.matrix_power(a, 0), torch.linalg.matrix_power(ta, 0)
    assert_same(ours, theirs)
    assert ours.requires_grad is theirs.requires_grad is True
    assert_same(*grads(torch, ours, theirs, a, ta))
    with glasstorch.no_grad():
        assert not glasstorch.linalg.matrix_power(a, 0).requires_grad


@pytest.mark.parametrize("adjoint", [False, True])
@pytest.mark.parametrize("left", [False, True])
def test_lu_solve_backward_with_an_empty_right_hand_side(torch, adjoint, left):
    lu, tlu = pair(torch, np.zeros((0, 0)), requires_grad=True)
    piv, tpiv = pair(torch, np.zeros((0,), np.int32))
    b_shape = (0, 4) if left else (4, 0)
    b, tb = pair(torch, np.zeros(b_shape), requires_grad=True)
    ours = glasstorch.linalg.lu_solve(lu, piv, b, adjoint=adjoint, left=left)
    theirs = torch.linalg.lu_solve(tlu, tpiv, tb, adjoint=adjoint, left=left)
    assert_same(ours, theirs)
    assert_same(*grads(torch, ours, theirs, (lu, b), (tlu, tb)))


def test_fractional_max_pool3d_backward_of_an_empty_batch(torch):
    x, tx = pair(torch, np.zeros((0, 1, 4, 5, 4)), requires_grad=True)
    samples, tsamples = pair(torch, np.zeros((0, 1, 3)))
    ours = glasstorch.nn.functional.fractional_max_pool3d(x, (2, 2, 1), output_size=2,
                                                          _random_samples=samples)
    theirs = torch.nn.functional.fractional_max_pool3d(tx, (2, 2, 1), output_size=2,
                                                       _random_samples=tsamples)
    assert_same(ours, theirs)
    assert_same(*grads(torch, ours, theirs, x, tx))


@given(st.integers(1, 3), st.integers(1, 4), st.sampled_from([np.complex64, np.complex128]),
       st.booleans(), st.integers(0, 2**31 - 1))
def test_rms_norm_of_complex_inputs(torch, rows, cols, dtype, with_weight, seed):
    x, tx = pair(torch, random(seed, (rows, cols), dtype))
    w, tw = pair(torch, random(seed + 1, (cols,), dtype)) if with_weight else (None, None)
    for eps in (None, 0.5):
        assert_same(glasstorch.nn.functional.rms_norm(x, (cols,), w, eps),
                    torch.nn.functional.rms_norm(tx, (cols,), tw, eps), atol=1e-5)


@pytest.mark.parametrize("grad_dtype", [np.bool_, np.int64, np.float32, np.float64])
def test_native_dropout_backward_dtype(torch, grad_dtype):
    g, tg = pair(torch, (random(0, (3, 4)) > 0).astype(grad_dtype))
    m, tm = pair(torch, random(1, (3, 4)) > 0)
    assert_same(glasstorch.ops.aten.native_dropout_backward(g, m, 2.0),
                torch.ops.aten.native_dropout_backward(tg, tm, 2.0))


def test_abs_in_place_of_complex_tensors(torch):
    x, tx = pair(torch, random(0, (3,), np.complex64))
    for ours, theirs in ((lambda: x.abs_(), lambda: tx.abs_()),
                         (lambda: glasstorch.abs_(x), lambda: torch.abs_(tx)),
                         (lambda: x.absolute_(), lambda: tx.absolute_())):
        raises_alike(ours, theirs)
    # real in place: values, the node and the gradient as torch's
    y, ty = pair(torch, random(1, (5,)), requires_grad=True)
    ours, theirs = (y * 1).abs_(), (ty * 1).abs_()
    assert_same(ours, theirs)
    assert type(ours.grad_fn).__name__ == type(theirs.grad_fn).__name__ == "AbsBackward0"
    assert_same(*grads(torch, ours, theirs, y, ty))
    assert glasstorch.autograd.gradcheck(lambda t: (t * 1).abs_(), (y,))


# -- errors ----------------------------------------------------------------------------------

@pytest.mark.parametrize("case", [
    ("addmm_", (1,), [(2, 4), (4, 3)]), ("addmm_", (3,), [(3, 4), (4, 3)]),
    ("addmv_", (1,), [(5, 4), (4,)]), ("baddbmm_", (1,), [(5, 5, 4), (5, 4, 10)]),
    ("baddbmm_", (5, 10), [(5, 5, 4), (5, 4, 10)])])
def test_structured_in_place_output_of_another_size(torch, case):
    name, self_shape, shapes = case
    s, ts = pair(torch, np.zeros(self_shape, np.float32))
    operands = [pair(torch, random(i, shape).astype(np.float32)) for i, shape in enumerate(shapes)]
    raises_alike(lambda: getattr(s, name)(*[o for o, _ in operands]),
                 lambda: getattr(ts, name)(*[t for _, t in operands]))


def test_structured_in_place_output_of_the_right_size(torch):
    s, ts = pair(torch, random(0, (2, 3)))
    (a, ta), (b, tb) = pair(torch, random(1, (2, 4))), pair(torch, random(2, (4, 3)))
    assert_same(s.addmm_(a, b, beta=0.5), ts.addmm_(ta, tb, beta=0.5))


@pytest.mark.parametrize("dtype", [np.bool_, np.int64, np.int32, np.uint8])
def test_ldexp_into_an_integral_result(torch, dtype):
    x, tx = pair(torch, np.array([1, 0, 1]).astype(dtype))
    e, te = pair(torch, np.array([1, 2, 3]))
    raises_alike(lambda: x.ldexp_(e), lambda: tx.ldexp_(te))
    f, tf = pair(torch, np.array([1.0, 2.0, 3.0], np.float32))
    o, to = pair(torch, np.zeros(3, dtype))
    raises_alike(lambda: glasstorch.ldexp(f, e, out=o), lambda: torch.ldexp(tf, te, out=to))
    assert_same(f.clone().ldexp_(e), tf.clone().ldexp_(te))


def test_tensor_list_elements_are_checked_as_torch_checks_them(torch):
    x, tx = pair(torch, random(0, (5, 5)))
    out, tout = (glasstorch.empty(0), glasstorch.empty(0)), (torch.empty(0), torch.empty(0))
    # the int[] signature fails on out=, the Tensor[] one names the element
    raises_alike(lambda: glasstorch.histogramdd(x, (1, 1, 1, 1, 1), weight=None, density=False, out=out),
                 lambda: torch.histogramdd(tx, (1, 1, 1, 1, 1), weight=None, density=False, out=tout))
    raises_alike(lambda: glasstorch.histogramdd(x, [1, 2, 3, 4, 5], out=out),
                 lambda: torch.histogramdd(tx, [1, 2, 3, 4, 5], out=tout))
    i, ti = pair(torch, np.array([0]))
    v, tv = pair(torch, np.array(1.0))
    raises_alike(lambda: glasstorch.index_put(x, (i, 1), v), lambda: torch.index_put(tx, (ti, 1), tv))
    raises_alike(lambda: x.index_put_((i, 2.5), v), lambda: tx.index_put_((ti, 2.5), tv))
    raises_alike(lambda: glasstorch.stack([x, "a"]), lambda: torch.stack([tx, "a"]))
    # ... also when a later argument is missing: the list is checked first
    raises_alike(lambda: glasstorch.index_put(x, (i, 1)), lambda: torch.index_put(tx, (ti, 1)))
    raises_alike(lambda: x.index_put_((i, 1)), lambda: tx.index_put_((ti, 1)))


@given(st.integers(1, 2), st.integers(2, 7), st.integers(2, 7), st.integers(1, 3),
       st.sampled_from([None, 1, 2]), st.integers(0, 2**31 - 1))
def test_avg_pool2d_out_and_stride_none(torch, n, h, w, k, stride, seed):
    k = min(k, h, w)
    x, tx = pair(torch, random(seed, (n, 2, h, w)).astype(np.float32))
    o, to = glasstorch.empty(0), torch.empty(0)
    ours = glasstorch.nn.functional.avg_pool2d(x, k, stride, out=o)
    theirs = torch.nn.functional.avg_pool2d(tx, k, stride, out=to)
    assert ours is o and theirs is to
    assert_same(o, to)
    raises_alike(lambda: glasstorch.nn.functional.avg_pool2d(x, k, 1, None),
                 lambda: torch.nn.functional.avg_pool2d(tx, k, 1, None))


@pytest.mark.parametrize("name", ["_upsample_bilinear2d_aa", "_upsample_bicubic2d_aa"])
@pytest.mark.parametrize("dtype", [np.float32, np.uint8])
@pytest.mark.parametrize("size", [(3, 3), (6, 5), (4, 7)])
def test_upsample_aa_keywords_and_kept_axes(torch, name, dtype, size):
    values = random(0, (2, 3, 6, 7)) * 60 + 100
    x, tx = pair(torch, values.astype(dtype))
    ours = getattr(glasstorch.ops.aten, name)(x, output_size=size, align_corners=False,
                                               scales_h=None, scales_w=None)
    theirs = getattr(torch.ops.aten, name)(tx, output_size=size, align_corners=False,
                                           scales_h=None, scales_w=None)
    assert_same(ours, theirs, atol=1e-4)
    assert_same(getattr(glasstorch.ops.aten, name)(x, size, True, scales_w=0.9),
                getattr(torch.ops.aten, name)(tx, size, True, scales_w=0.9), atol=1e-4)


@pytest.mark.parametrize("shape,layout", [((), ()), ((2, 3), (1, 0)), ((2, 3, 4), (2, 0, 1))])
def test_factories_take_requires_grad(torch, shape, layout):
    for requires_grad in (False, True):
        ours = glasstorch.empty_permuted(shape, layout, dtype=glasstorch.bfloat16, device="cpu",
                                         requires_grad=requires_grad)
        theirs = torch.empty_permuted(shape, layout, dtype=torch.bfloat16, device="cpu",
                                      requires_grad=requires_grad)
        assert_same(ours, theirs, values=False)
        assert ours.requires_grad is theirs.requires_grad is requires_grad
    assert_same(glasstorch.tril_indices(4, 3, 1, requires_grad=False),
                torch.tril_indices(4, 3, 1, requires_grad=False))
    assert_same(glasstorch.triu_indices(3, 4, requires_grad=False),
                torch.triu_indices(3, 4, requires_grad=False))
    raises_alike(lambda: glasstorch.tril_indices(3, 3, dtype=glasstorch.float32, requires_grad=True),
                 lambda: torch.tril_indices(3, 3, dtype=torch.float32, requires_grad=True))


# -- the order of operations of small batched products and complex convolutions ---------

@given(st.integers(0, 3), st.integers(1, 6), st.integers(1, 9), st.integers(1, 6),
       st.sampled_from([np.float32, np.complex64, np.float64, np.complex128]),
       st.integers(0, 2**31 - 1))
def test_small_bmm_and_baddbmm_are_torchs_loop_bit_for_bit(torch, b, m, k, n, dtype, seed):
    """Under 400 multiply-adds per matrix ATen sums each element in order from
    zero (baddbmm_cpu_kernel): the same bits, transposed operands included."""
    (x, tx), (y, ty) = pair(torch, random(seed, (b, m, k), dtype)), pair(torch, random(seed + 1, (b, n, k), dtype))
    y, ty = y.mT, ty.mT
    s, ts = pair(torch, random(seed + 2, (m, n), dtype))
    alpha, beta = (1.5 - 1j, 0.5 + 0.25j) if np.dtype(dtype).kind == "c" else (1.5, 0.5)
    for ours, theirs in ((glasstorch.bmm(x, y), torch.bmm(tx, ty)),
                         (glasstorch.matmul(x, y), torch.matmul(tx, ty)),
                         (glasstorch.baddbmm(s, x, y, beta=beta, alpha=alpha),
                          torch.baddbmm(ts, tx, ty, beta=beta, alpha=alpha)),
                         (glasstorch.baddbmm(s, x, y, beta=0, alpha=alpha),
                          torch.baddbmm(ts, tx, ty, beta=0, alpha=alpha))):
        assert_same(ours, theirs, atol=0, rtol=0)


@pytest.mark.parametrize("conv,x_shape,w_shape,kwargs", [
    ("conv1d", (2, 4, 7), (3, 4, 3), {"padding": 1}),
    ("conv2d", (2, 4, 6, 6), (8, 1, 3, 3), {"groups": 4}),
    ("conv2d", (1, 2, 5, 5), (3, 2, 2, 2), {"padding": "same"}),
    ("conv_transpose2d", (2, 3, 4, 4), (3, 2, 3, 3), {"stride": 2}),
    ("conv3d", (1, 2, 4, 4, 4), (2, 2, 2, 2, 2), {})])
@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
def test_complex_convolution_is_gauss_trick(torch, conv, x_shape, w_shape, kwargs, dtype):
    """ATen's complex_convolution: three real convolutions, so the values, the
    graph (an add at its root) and the gradients are torch's."""
    x, tx = pair(torch, random(0, x_shape, dtype), requires_grad=True)
    w, tw = pair(torch, random(1, w_shape, dtype), requires_grad=True)
    bias_size = w_shape[1] if conv.startswith("conv_transpose") else w_shape[0]
    b, tb = pair(torch, random(2, (bias_size,), dtype), requires_grad=True)
    ours = getattr(glasstorch.nn.functional, conv)(x, w, b, **kwargs)
    theirs = getattr(torch.nn.functional, conv)(tx, tw, tb, **kwargs)
    tol = 1e-4 if dtype == np.complex64 else 1e-10
    assert_same(ours, theirs, atol=tol, rtol=tol)
    assert type(ours.grad_fn).__name__ == type(theirs.grad_fn).__name__
    for o, t in zip(*grads(torch, ours, theirs, (x, w, b), (tx, tw, tb))):
        assert_same(o, t, atol=tol * 10, rtol=tol * 10)

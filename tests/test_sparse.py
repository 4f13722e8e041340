"""Sparse COO and CSR tensors against real PyTorch (CSC and the compressed
layouts' views: test_sparse_compressed.py): layouts and key sets,
printing, construction and its checks, conversions, coalescing, arithmetic,
products, reductions, softmax, gradients, the errors dense ops give, and an
nn.Embedding(sparse=True) + SparseAdam training loop."""
import numpy as np
import pytest
import torch
from hypothesis import given, settings, strategies as st

import glasstorch

from .helpers import assert_same

pytestmark = pytest.mark.filterwarnings("ignore:Sparse (CSR tensor support|invariant checks)")


def _both(fn):
    """fn(lib) for glasstorch and torch: (ours, theirs)."""
    return fn(glasstorch), fn(torch)


def assert_sparse_same(ours, theirs, atol=1e-6, rtol=1e-5):
    """Same layout, sizes, dtype, nnz, coalesced state, components and values."""
    assert str(ours.layout) == str(theirs.layout)
    assert tuple(ours.shape) == tuple(theirs.shape)
    assert str(ours.dtype) == str(theirs.dtype)
    assert ours._nnz() == theirs._nnz()
    if theirs.is_sparse:
        assert ours.is_coalesced() == theirs.is_coalesced()
        assert (ours.sparse_dim(), ours.dense_dim()) == (theirs.sparse_dim(), theirs.dense_dim())
        np.testing.assert_array_equal(ours._indices().numpy(), theirs._indices().numpy())
        parts = [(ours._values(), theirs._values())]
    elif theirs.layout is torch.sparse_csr:
        parts = [(ours.crow_indices(), theirs.crow_indices()),
                 (ours.col_indices(), theirs.col_indices()), (ours.values(), theirs.values())]
    else:
        parts = [(ours.ccol_indices(), theirs.ccol_indices()),
                 (ours.row_indices(), theirs.row_indices()), (ours.values(), theirs.values())]
    for a, b in parts + [(ours.detach().to_dense(), theirs.detach().to_dense())]:
        assert_same(a.detach(), b.detach(), atol=atol, rtol=rtol, strides=False)


def _coo(lib, indices, values, size, **kwargs):
    return lib.sparse_coo_tensor(lib.tensor(indices), lib.tensor(values), size, **kwargs)


UNCOALESCED = ([[1, 0, 1, 2], [0, 2, 0, 1]], [1.0, 2.0, 3.0, 4.0], (3, 3))


@st.composite
def dense_with_zeros(draw, max_dims=3):
    shape = tuple(draw(st.lists(st.integers(0, 4), min_size=1, max_size=max_dims)))
    seed = draw(st.integers(0, 2**16))
    rng = np.random.default_rng(seed)
    values = rng.standard_normal(shape).astype(np.float32)
    values[rng.random(shape) < 0.5] = 0
    return values


# -- layouts, keys, attributes ---------------------------------------------------------------

def test_layouts_keys_and_attributes():
    ours, theirs = _both(lambda lib: _coo(lib, *UNCOALESCED))
    assert str(glasstorch._C._dispatch_keys(ours)) == str(torch._C._dispatch_keys(theirs))
    assert (ours.is_sparse, ours.is_sparse_csr, str(ours.layout)) == \
        (theirs.is_sparse, theirs.is_sparse_csr, str(theirs.layout))
    assert ours.stride() == theirs.stride() and ours.is_contiguous() == theirs.is_contiguous()
    csr = _both(lambda lib: lib.tensor([[0.0, 1.0], [2.0, 0.0]]).to_sparse_csr())
    assert str(glasstorch._C._dispatch_keys(csr[0])) == str(torch._C._dispatch_keys(csr[1]))
    assert (csr[0].is_sparse, csr[0].is_sparse_csr, str(csr[0].layout)) == \
        (csr[1].is_sparse, csr[1].is_sparse_csr, str(csr[1].layout))
    assert [repr(getattr(glasstorch, n)) for n in ("sparse_coo", "sparse_csr", "sparse_csc")] == \
        [repr(getattr(torch, n)) for n in ("sparse_coo", "sparse_csr", "sparse_csc")]


@pytest.mark.parametrize("make", [
    lambda lib: _coo(lib, *UNCOALESCED),
    lambda lib: _coo(lib, *UNCOALESCED).coalesce(),
    lambda lib: _coo(lib, *UNCOALESCED).double(),
    lambda lib: _coo(lib, UNCOALESCED[0], [[1, 2], [3, 4], [5, 6], [7, 8]], (3, 3, 2)),
    lambda lib: lib.sparse_coo_tensor(lib.empty(2, 0, dtype=lib.long), lib.empty(0), (2, 3)),
    lambda lib: _coo(lib, *UNCOALESCED, requires_grad=True),
    lambda lib: _coo(lib, *UNCOALESCED).to("meta"),
    lambda lib: lib.tensor([[0.0, 1.5, 0.0], [2.0, 0.0, 3.0]]).to_sparse_csr(),
    lambda lib: lib.sparse_csr_tensor([0, 2, 3], [0, 1, 2], [1.0, 2.0, 3.0]),
], ids=["uncoalesced", "coalesced", "float64", "hybrid", "empty", "requires_grad", "meta",
        "csr", "csr_constructor"])
def test_printing(make):
    ours, theirs = _both(make)
    assert repr(ours) == repr(theirs)


# -- construction ---------------------------------------------------------------------------

@pytest.mark.parametrize("args,kwargs", [
    (UNCOALESCED, {}),
    (UNCOALESCED[:2], {}),
    (([[0, 2]], [2, 3]), {}),
    (([[1]], [2.0], (3,)), {}),
    (([[0, 1], [1, 0]], [1.0, 2.0], (2, 2)), {"is_coalesced": True}),
    (UNCOALESCED, {"dtype": "float64"}),
])
def test_sparse_coo_tensor(args, kwargs):
    def make(lib):
        kw = {k: getattr(lib, v) if k == "dtype" else v for k, v in kwargs.items()}
        return lib.sparse_coo_tensor(*args, **kw)
    assert_sparse_same(*_both(make))


@pytest.mark.parametrize("args,kwargs", [
    (([[5]], [2.0], (3,)), {"check_invariants": True}),
    (([[-1, 2]], [2.0, 3.0], (3,)), {"check_invariants": True}),
    (([5], [2.0], (3,)), {}),
    (([[1, 2]], [2.0], (3,)), {}),
    (([[1, 0]], [2.0, 3.0], (3,)), {"check_invariants": True, "is_coalesced": True}),
])
def test_sparse_coo_tensor_errors(args, kwargs):
    def run(lib):
        with pytest.raises(RuntimeError) as info:
            lib.sparse_coo_tensor(lib.tensor(args[0]), lib.tensor(args[1]), args[2], **kwargs)
        return str(info.value)
    ours, theirs = _both(run)
    assert ours == theirs


def test_check_sparse_tensor_invariants_context():
    def run(lib):
        with lib.sparse.check_sparse_tensor_invariants():
            assert lib.sparse.check_sparse_tensor_invariants.is_enabled()
            with pytest.raises(RuntimeError) as info:
                _coo(lib, [[4]], [1.0], (3,))
        assert not lib.sparse.check_sparse_tensor_invariants.is_enabled()
        return str(info.value)
    ours, theirs = _both(run)
    assert ours == theirs


def test_unsafe_constructor_and_components():
    ours, theirs = _both(lambda lib: lib.ops.aten._sparse_coo_tensor_unsafe.default(
        lib.tensor(UNCOALESCED[0]), lib.tensor(UNCOALESCED[1]), [3, 3]))
    assert_sparse_same(ours, theirs)
    for name in ("indices", "values"):
        messages = []
        for t in (ours, theirs):
            with pytest.raises(RuntimeError) as info:
                getattr(t, name)()
            messages.append(str(info.value))
        assert messages[0] == messages[1]


# -- conversions, coalescing ------------------------------------------------------------------

@settings(max_examples=25, deadline=None)
@given(dense_with_zeros(), st.data())
def test_to_sparse_to_dense_round_trip(values, data):
    sparse_dim = data.draw(st.integers(1, values.ndim))
    ours, theirs = _both(lambda lib: lib.tensor(values).to_sparse(sparse_dim))
    assert_sparse_same(ours, theirs)
    ours, theirs = _both(lambda lib: lib.tensor(values).to_sparse())
    assert_sparse_same(ours, theirs)


@settings(max_examples=25, deadline=None)
@given(st.integers(1, 5), st.integers(1, 5), st.integers(0, 12), st.integers(0, 2**16))
def test_coalesce(rows, cols, nnz, seed):
    rng = np.random.default_rng(seed)
    indices = np.stack([rng.integers(0, rows, nnz), rng.integers(0, cols, nnz)]).tolist()
    values = rng.standard_normal((nnz, 2)).astype(np.float32).tolist() if nnz else \
        np.zeros((0, 2), np.float32)
    make = lambda lib: lib.sparse_coo_tensor(lib.tensor(indices, dtype=lib.long).reshape(2, nnz),  # noqa: E731
                                             lib.tensor(values), (rows, cols, 2))
    ours, theirs = _both(make)
    assert_sparse_same(ours, theirs)
    assert_sparse_same(ours.coalesce(), theirs.coalesce())
    c = _both(lambda lib: make(lib).coalesce())
    assert c[0].coalesce() is c[0] and c[1].coalesce() is c[1]


def test_csr_conversions():
    dense = [[0.0, 1.0, 0.0, 2.0], [0.0, 0.0, 0.0, 0.0], [3.0, 0.0, 4.0, 0.0]]
    ours, theirs = _both(lambda lib: lib.tensor(dense).to_sparse_csr())
    assert_sparse_same(ours, theirs)
    assert_sparse_same(ours.to_sparse(), theirs.to_sparse())
    assert_sparse_same(*_both(lambda lib: _coo(lib, *UNCOALESCED).to_sparse_csr()))
    assert_sparse_same(*_both(lambda lib: lib.sparse_csr_tensor(
        [0, 2, 3], [0, 2, 1], [1.0, 2.0, 3.0], (2, 3))))


# -- arithmetic ------------------------------------------------------------------------------

A = ([[1, 0, 1]], [1.0, 2.0, 3.0], (3,))
B = ([[2, 1]], [10.0, 20.0], (3,))


@pytest.mark.parametrize("fn", [
    lambda lib, a, b: a + b,
    lambda lib, a, b: a + a,
    lambda lib, a, b: a.coalesce() + b,
    lambda lib, a, b: a.coalesce() + b.coalesce(),
    lambda lib, a, b: a.add(b, alpha=2),
    lambda lib, a, b: a - b,
    lambda lib, a, b: -a,
    lambda lib, a, b: a * 2,
    lambda lib, a, b: a * lib.tensor(3.0),
    lambda lib, a, b: a / 2,
    lambda lib, a, b: a.coalesce() * b.coalesce(),
    lambda lib, a, b: a * b,
    lambda lib, a, b: a * lib.tensor([1.0, 2.0, 3.0]),
    lambda lib, a, b: a.clone(),
    lambda lib, a, b: a.double(),
], ids=["add", "add_self", "add_half", "add_coalesced", "alpha", "sub", "neg", "mul_number",
        "mul_0d", "div", "mul_coalesced", "mul_uncoalesced", "mul_dense", "clone", "double"])
def test_sparse_arithmetic(fn):
    ours, theirs = _both(lambda lib: fn(lib, _coo(lib, *A), _coo(lib, *B)))
    assert_sparse_same(ours, theirs)


def test_dense_plus_sparse_and_in_place():
    for fn in (lambda lib, d, s: d + s, lambda lib, d, s: d.add_(s, alpha=3),
               lambda lib, d, s: d.sub(s), lambda lib, d, s: d.double() + s):
        ours, theirs = _both(lambda lib: fn(lib, lib.arange(3.0), _coo(lib, *A)))
        assert_same(ours, theirs)
    ours, theirs = _both(lambda lib: _coo(lib, *A).add_(_coo(lib, *B)))
    assert_sparse_same(ours, theirs)


def test_sparse_mask():
    for mask in (A, ([[0, 2]], [1.0, 1.0], (3,))):
        ours, theirs = _both(lambda lib: lib.tensor([10.0, 20.0, 30.0]).sparse_mask(
            _coo(lib, *mask)))
        assert_sparse_same(ours, theirs)
        ours, theirs = _both(lambda lib: lib.tensor([10.0, 20.0, 30.0]).sparse_mask(
            _coo(lib, *mask).coalesce()))
        assert_sparse_same(ours, theirs)


def test_sparse_resize():
    def run(lib):
        s = _coo(lib, *UNCOALESCED)
        s.sparse_resize_((4, 5), 2, 0)
        t = _coo(lib, *UNCOALESCED)
        t.sparse_resize_and_clear_((2, 2, 3), 2, 1)
        return s, t
    (s0, t0), (s1, t1) = _both(run)
    assert_sparse_same(s0, s1)
    assert_sparse_same(t0, t1)


# -- products ------------------------------------------------------------------------------

MAT = ([[0, 1, 1, 0], [2, 0, 2, 2]], [3.0, 4.0, 5.0, -1.0], (2, 3))


@pytest.mark.parametrize("fn", [
    lambda lib, s, d: lib.mm(s, d),
    lambda lib, s, d: lib.sparse.mm(s, d),
    lambda lib, s, d: lib.matmul(s, d),
    lambda lib, s, d: s @ d,
    lambda lib, s, d: lib.addmm(lib.ones(2, 4), s, d, beta=2, alpha=3),
    lambda lib, s, d: lib.sparse.addmm(lib.ones(2, 4), s, d, beta=0.5, alpha=2),
    lambda lib, s, d: lib.mm(d.t(), s.t()),
    lambda lib, s, d: lib.mm(s.to_sparse_csr(), d),
], ids=["mm", "sparse_mm", "matmul", "matmul_op", "addmm", "sparse_addmm", "dense_first",
        "csr"])
def test_products(fn):
    rng = np.random.default_rng(0)
    dense = rng.standard_normal((3, 4)).astype(np.float32)
    ours, theirs = _both(lambda lib: fn(lib, _coo(lib, *MAT), lib.tensor(dense)))
    assert_same(ours, theirs, strides=False, atol=1e-5)


def test_hspmm_and_sspaddmm():
    dense = np.arange(12.0, dtype=np.float32).reshape(3, 4)
    assert_sparse_same(*_both(lambda lib: lib.hspmm(_coo(lib, *MAT), lib.tensor(dense))))
    assert_sparse_same(*_both(lambda lib: lib.smm(_coo(lib, *MAT), lib.tensor(dense))))
    ours, theirs = _both(lambda lib: lib.sspaddmm(_coo(lib, [[0], [1]], [1.0], (2, 4)),
                                                  _coo(lib, *MAT), lib.tensor(dense)))
    assert_sparse_same(ours, theirs)


# -- reductions and softmax ---------------------------------------------------------------------

HYBRID = ([[0, 1, 1, 0], [2, 0, 2, 2]], [[1.0, 2.0], [3.0, 4.0], [5.0, 6.0], [-1.0, 0.5]],
          (2, 3, 2))


@pytest.mark.parametrize("dim", [None, 0, 1, 2, (0, 1), (0, 2), (0, 1, 2), -1])
def test_sparse_sum(dim):
    def run(lib):
        s = _coo(lib, *HYBRID)
        return lib.sparse.sum(s) if dim is None else lib.sparse.sum(s, dim)
    ours, theirs = _both(run)
    if theirs.is_sparse:
        assert_sparse_same(ours, theirs)
    else:
        assert_same(ours, theirs, strides=False)
    assert_same(*_both(lambda lib: _coo(lib, *HYBRID).sum()))


@pytest.mark.parametrize("log", [False, True])
@pytest.mark.parametrize("dim", [0, 1, 2, -1])
def test_sparse_softmax(dim, log):
    """Values equal PyTorch's; gradients too along sparse dims.  Along a dense
    dim PyTorch's backward fails its own gradcheck (its Jacobian is not the
    finite differences'), so there the gradient is checked by gradcheck."""
    def run(lib):
        fn = lib.sparse.log_softmax if log else lib.sparse.softmax
        s = _coo(lib, *HYBRID).double().requires_grad_()
        out = fn(s, dim)
        weights = lib.arange(12.0, dtype=lib.float64).reshape(2, 3, 2)
        (out.to_dense() * weights).sum().backward()
        return out, s.grad
    (out0, g0), (out1, g1) = _both(run)
    assert_sparse_same(out0.detach(), out1.detach())
    if dim in (0, 1):
        assert_sparse_same(g0, g1)
        return
    c = _coo(glasstorch, *HYBRID).coalesce().double()
    fn = glasstorch.sparse.log_softmax if log else glasstorch.sparse.softmax
    assert glasstorch.autograd.gradcheck(lambda v: fn(glasstorch.sparse_coo_tensor(
        c._indices(), v, c.shape), dim).to_dense(), (c._values().requires_grad_(),))


# -- gradients ------------------------------------------------------------------------------

def _grad_names(t):
    return type(t.grad_fn).__name__ if t.grad_fn is not None else None


def test_gradients_through_construction_and_to_dense():
    def run(lib):
        values = lib.tensor(UNCOALESCED[1], dtype=lib.float64, requires_grad=True)
        s = lib.sparse_coo_tensor(lib.tensor(UNCOALESCED[0]), values, (3, 3))
        dense = s.to_dense()
        (dense * lib.arange(9.0, dtype=lib.float64).reshape(3, 3)).sum().backward()
        return s, dense, values.grad
    (s0, d0, g0), (s1, d1, g1) = _both(run)
    assert (_grad_names(s0), _grad_names(d0)) == (_grad_names(s1), _grad_names(d1))
    assert_same(g0, g1)


def test_gradients_to_sparse_coalesce_values():
    def run(lib):
        x = lib.tensor([[0.0, 1.0, 0.0], [2.0, 0.0, 3.0]], dtype=lib.float64, requires_grad=True)
        s = x.to_sparse()
        v = s.coalesce().values()
        (v * lib.tensor([1.0, 2.0, 3.0], dtype=lib.float64)).sum().backward()
        return s, v, x.grad
    (s0, v0, g0), (s1, v1, g1) = _both(run)
    assert (_grad_names(s0), _grad_names(v0)) == (_grad_names(s1), _grad_names(v1))
    assert_same(g0, g1)


@pytest.mark.parametrize("sparse_mm", [False, True])
def test_mm_gradients(sparse_mm):
    rng = np.random.default_rng(1)
    dense = rng.standard_normal((3, 2))

    def run(lib):
        s = _coo(lib, *MAT).double().requires_grad_()
        d = lib.tensor(dense, requires_grad=True)
        out = lib.sparse.mm(s, d) if sparse_mm else lib.mm(s, d)
        (out * lib.tensor([[1.0, -2.0], [0.5, 3.0]], dtype=lib.float64)).sum().backward()
        return out, s.grad, d.grad
    (o0, s0, d0), (o1, s1, d1) = _both(run)
    assert _grad_names(o0) == _grad_names(o1)
    if sparse_mm:
        assert_sparse_same(s0, s1)
    assert str(s0.layout) == str(s1.layout)
    assert_same(s0.to_dense(), s1.to_dense())
    assert_same(d0, d1, strides=False)


def test_sparse_mask_and_sum_gradients():
    def run(lib):
        x = lib.tensor([10.0, 20.0, 30.0], dtype=lib.float64, requires_grad=True)
        y = x.sparse_mask(_coo(lib, *A).coalesce())
        lib.sparse.sum(y * 3).backward()
        s = _coo(lib, *HYBRID).double().requires_grad_()
        (lib.sparse.sum(s, (0, 2)).to_dense() * lib.tensor([1.0, 2.0, 3.0],
                                                           dtype=lib.float64)).sum().backward()
        return x.grad, s.grad
    (x0, s0), (x1, s1) = _both(run)
    assert_same(x0, x1)
    assert_sparse_same(s0, s1)


def test_gradcheck_to_dense_of_values():
    indices = glasstorch.tensor(UNCOALESCED[0])
    values = glasstorch.tensor(UNCOALESCED[1], dtype=glasstorch.float64, requires_grad=True)
    fn = lambda v: glasstorch.sparse_coo_tensor(indices, v, (3, 3)).to_dense()  # noqa: E731
    assert glasstorch.autograd.gradcheck(fn, (values,))
    dense = glasstorch.randn(3, 2, dtype=glasstorch.float64, requires_grad=True)
    s = glasstorch.sparse_coo_tensor(indices, values.detach(), (3, 3))
    assert glasstorch.autograd.gradcheck(lambda d: glasstorch.mm(s, d), (dense,))


# -- errors of dense ops ------------------------------------------------------------------------

@pytest.mark.parametrize("fn", [
    lambda lib, s: s.exp(),
    lambda lib, s: lib.ops.aten.exp.default(s),
    lambda lib, s: s + lib.ones(3, 3),
    lambda lib, s: s.numpy(),
    lambda lib, s: s.untyped_storage(),
    lambda lib, s: s.data_ptr(),
    lambda lib, s: lib.ones(3).is_coalesced(),
    lambda lib, s: lib.ones(3)._nnz(),
    lambda lib, s: s.to_sparse_csr().stride(),
    lambda lib, s: lib.nn.functional.embedding(lib.tensor([1]), lib.ones(3, 2, requires_grad=True),
                                               sparse=True, scale_grad_by_freq=True).sum().backward(),
], ids=["exp", "aten_exp", "sparse_plus_dense", "numpy", "storage", "data_ptr",
        "is_coalesced_dense", "nnz_dense", "csr_stride", "embedding_scale_grad"])
def test_errors(fn):
    def run(lib):
        with pytest.raises(Exception) as info:
            fn(lib, _coo(lib, *UNCOALESCED).coalesce())
        return type(info.value).__name__, str(info.value).split(" 'aten::")[0].split(
            " is only available")[0]
    ours, theirs = _both(run)
    assert ours == theirs


# -- nn.Embedding(sparse=True) and SparseAdam ---------------------------------------------------

@pytest.mark.parametrize("padding_idx,maximize", [(None, False), (2, True)])
def test_embedding_sparse_adam_training(padding_idx, maximize):
    rng = np.random.default_rng(0)
    w0 = rng.standard_normal((10, 4)).astype(np.float32)
    head = rng.standard_normal((4, 1)).astype(np.float32)
    batches = [rng.integers(0, 10, size=(3, 4)) for _ in range(6)]

    def run(lib):
        emb = lib.nn.Embedding(10, 4, sparse=True, padding_idx=padding_idx)
        with lib.no_grad():
            emb.weight.copy_(lib.tensor(w0))
        opt = lib.optim.SparseAdam(list(emb.parameters()), lr=0.1, maximize=maximize)
        losses, grads = [], []
        for idx in batches:
            loss = emb(lib.tensor(idx)).matmul(lib.tensor(head)).pow(2).mean()
            opt.zero_grad()
            loss.backward()
            grads.append(emb.weight.grad)
            opt.step()
            losses.append(loss.item())
        return emb.weight.detach(), losses, grads
    (w_ours, l_ours, g_ours), (w_theirs, l_theirs, g_theirs) = _both(run)
    assert_sparse_same(g_ours[0], g_theirs[0])
    np.testing.assert_allclose(l_ours, l_theirs, rtol=1e-5)
    assert_same(w_ours, w_theirs, atol=1e-5, rtol=1e-5)


def test_sparse_adam_refuses_dense_gradients():
    def run(lib):
        p = lib.nn.Parameter(lib.ones(3))
        p.grad = lib.ones(3)
        with pytest.raises(RuntimeError) as info:
            lib.optim.SparseAdam([p]).step()
        return str(info.value)
    ours, theirs = _both(run)
    assert ours == theirs


def test_sparse_gradients_accumulate():
    def run(lib):
        emb = lib.nn.Embedding(5, 2, sparse=True)
        with lib.no_grad():
            emb.weight.copy_(lib.arange(10.0).reshape(5, 2))
        emb(lib.tensor([1, 3])).sum().backward()
        emb(lib.tensor([3, 4, 4])).sum().backward()
        return emb.weight.grad
    assert_sparse_same(*_both(run))


def _hybrid(lib, seed):
    """An uncoalesced COO tensor of 2 sparse dims and 1 dense dim (a duplicate
    entry included), the same for both libraries."""
    rng = np.random.default_rng(seed)
    indices = np.concatenate([rng.integers(0, [[3], [4]], (2, 5)), [[1], [2]]], axis=1)
    indices[:, -1] = indices[:, 0]
    values = rng.standard_normal((6, 2)).astype(np.float32)
    return lib.sparse_coo_tensor(lib.tensor(indices), lib.tensor(values), (3, 4, 2))


_COO_VIEWS = {
    "select sparse dim": lambda t: t.select(0, 1),
    "select other sparse dim, negative": lambda t: t.select(1, -2),
    "select dense dim": lambda t: t.select(2, 1),
    "select the only sparse dim": lambda t: t.to_dense()[0].to_sparse(1).select(0, 2),
    "select down to one entry": lambda t: t.select(1, 0),
    "unsqueeze first": lambda t: t.unsqueeze(0),
    "unsqueeze after the sparse dims": lambda t: t.unsqueeze(2),
    "unsqueeze last": lambda t: t.unsqueeze(-1),
    "permute sparse dims": lambda t: t.permute(1, 0, 2),
    "movedim": lambda t: t.movedim(1, 0),
    "unbind": lambda t: t.unbind(1)[2],
    "transpose": lambda t: t.transpose(0, 1),
}


@pytest.mark.parametrize("name", list(_COO_VIEWS))
@pytest.mark.parametrize("seed", [0, 1])
def test_coo_views_match_torch(name, seed):
    """The views a COO tensor has (its own kernels: select, unsqueeze, permute,
    and those made of them): torch's values, sizes, sparse and dense dims and
    coalesced flag."""
    ours, theirs = (_COO_VIEWS[name](_hybrid(lib, seed)) for lib in (glasstorch, torch))
    assert str(ours.layout) == str(theirs.layout) and tuple(ours.shape) == tuple(theirs.shape)
    if theirs.layout == torch.sparse_coo:
        assert (ours.sparse_dim(), ours.dense_dim(), ours.is_coalesced()) == \
            (theirs.sparse_dim(), theirs.dense_dim(), theirs.is_coalesced())
        ours, theirs = ours.to_dense(), theirs.to_dense()
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-6)


_STRIDED_VIEWS = {
    "narrow": lambda t: t.narrow(0, 0, 1), "unfold": lambda t: t.unfold(0, 1, 1),
    "view": lambda t: t.view(-1), "reshape": lambda t: t.reshape(-1),
    "flatten": lambda t: t.flatten(), "expand": lambda t: t.expand(2, 3, 4, 2),
    "diagonal": lambda t: t.diagonal(), "slice": lambda t: t[0:1], "squeeze": lambda t: t.squeeze(),
    "as_strided": lambda t: t.as_strided((2,), (1,)), "split": lambda t: t.split(1),
    "alias": lambda t: (torch if isinstance(t, torch.Tensor) else glasstorch).ops.aten.alias.default(t),
    "permute across sparse and dense": lambda t: t.permute(2, 0, 1),
    "select out of range": lambda t: t.select(0, 3),
}


@pytest.mark.parametrize("name", list(_STRIDED_VIEWS))
def test_strided_views_of_coo_raise_torchs_errors(name):
    """Views that need strides (CompositeExplicitAutograd ones reach as_strided,
    view and unfold have dense kernels only) raise what torch raises for a COO
    tensor, where they used to make a strided view of its parts."""
    raised = []
    for lib in (glasstorch, torch):
        with pytest.raises(Exception) as info:
            _STRIDED_VIEWS[name](_hybrid(lib, 0))
        raised.append((type(info.value).__name__, str(info.value).split("\n")[0][:120]))
    assert raised[0] == raised[1]

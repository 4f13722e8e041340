"""Compressed sparse tensors (CSR and CSC) against real PyTorch: conversions
between the layouts, transposes (CSR <-> CSC over the same parts), select and
unbind (COO results), the views a compressed tensor refuses (it has no
strides), constructors and their checks, the parts and their copies,
arithmetic and products, and to_dense's gradient."""
import numpy as np
import pytest
import torch
from hypothesis import given, settings, strategies as st

import glasstorch

from .helpers import assert_same
from .test_sparse import _both, assert_sparse_same

pytestmark = pytest.mark.filterwarnings("ignore:Sparse (CSR tensor support|invariant checks)")

LAYOUTS = ["csr", "csc"]


def _matrix(lib, values, layout):
    dense = lib.tensor(values)
    return dense.to_sparse_csr() if layout == "csr" else dense.to_sparse_csc()


@st.composite
def sparse_matrices(draw):
    rows, cols = draw(st.integers(0, 5)), draw(st.integers(0, 5))
    rng = np.random.default_rng(draw(st.integers(0, 2**16)))
    values = rng.standard_normal((rows, cols)).astype(np.float32)
    values[rng.random((rows, cols)) < 0.5] = 0
    return values


def _outcome(fn, lib):
    """fn(lib), or the exception it raised."""
    try:
        return fn(lib)
    except Exception as e:          # noqa: BLE001 (the exception is the outcome compared)
        return e


def assert_same_outcome(fn):
    """The same result (a sparse tensor, a dense one, a tuple of them, a value)
    or the same exception type and message from glasstorch and torch."""
    ours, theirs = _outcome(fn, glasstorch), _outcome(fn, torch)
    if isinstance(theirs, Exception):
        assert isinstance(ours, Exception), f"torch raised {theirs!r}, glasstorch returned {ours!r}"
        assert type(ours).__name__ == type(theirs).__name__
        # (a missing kernel's message goes on to list the keys that have one: not compared)
        assert str(ours).split(" This could be")[0] == str(theirs).split(" This could be")[0]
        return
    assert not isinstance(ours, Exception), f"glasstorch raised {ours!r}"
    pairs = zip(ours, theirs) if isinstance(theirs, (tuple, list)) else [(ours, theirs)]
    for a, b in pairs:
        if isinstance(b, torch.Tensor) and b.layout is not torch.strided:
            assert_sparse_same(a, b)
        elif isinstance(b, torch.Tensor):
            assert_same(a.detach(), b.detach(), atol=1e-5, rtol=1e-5)
        else:
            assert str(a) == str(b)


# -- conversions ---------------------------------------------------------------------

@settings(max_examples=30, deadline=None)
@given(sparse_matrices(), st.sampled_from(LAYOUTS))
def test_conversions(values, layout):
    for fn in (lambda lib: _matrix(lib, values, layout),
               lambda lib: _matrix(lib, values, layout).to_dense(),
               lambda lib: _matrix(lib, values, layout).to_sparse(),
               lambda lib: _matrix(lib, values, layout).to_sparse_coo(),
               lambda lib: _matrix(lib, values, layout).to_sparse_csr(),
               lambda lib: _matrix(lib, values, layout).to_sparse_csc(),
               lambda lib: _matrix(lib, values, layout).to_sparse(layout=lib.sparse_csc),
               lambda lib: _matrix(lib, values, layout).to_sparse(layout=lib.sparse_csr),
               lambda lib: lib.tensor(values).to_sparse().to_sparse_csc(),
               lambda lib: _matrix(lib, values, layout).to(lib.float64),
               lambda lib: _matrix(lib, values, layout).clone(),
               lambda lib: lib.zeros_like(_matrix(lib, values, layout))):
        assert_same_outcome(fn)


def test_conversion_is_self_and_errors():
    x = glasstorch.ones(2, 3).to_sparse_csc()
    assert x.to_sparse_csc() is x
    assert_same_outcome(lambda lib: lib.ones(2, 3).to_sparse_csc(dense_dim=1))
    assert_same_outcome(lambda lib: lib.tensor([[1.0, 0.0]]).to_sparse_csc().crow_indices())
    assert_same_outcome(lambda lib: lib.tensor([[1.0, 0.0]]).to_sparse_csc().col_indices())
    assert_same_outcome(lambda lib: lib.tensor([[1.0, 0.0]]).to_sparse_csr().ccol_indices())
    assert_same_outcome(lambda lib: lib.tensor([[1.0, 0.0]]).to_sparse_csr().row_indices())


@pytest.mark.parametrize("layout", LAYOUTS)
def test_printing(layout):
    ours, theirs = _both(lambda lib: _matrix(lib, [[1.0, 0.0, 2.0], [0.0, 3.0, 0.0]], layout))
    assert repr(ours) == repr(theirs)
    ours, theirs = _both(lambda lib: lib.zeros(2, 2).to_sparse_csc())
    assert repr(ours) == repr(theirs)


# -- transposes, select, unbind -------------------------------------------------------

@settings(max_examples=30, deadline=None)
@given(sparse_matrices(), st.sampled_from(LAYOUTS))
def test_transposes(values, layout):
    for fn in (lambda lib: _matrix(lib, values, layout).t(),
               lambda lib: _matrix(lib, values, layout).t().t(),
               lambda lib: _matrix(lib, values, layout).transpose(0, 1),
               lambda lib: _matrix(lib, values, layout).transpose(-1, 0),
               lambda lib: _matrix(lib, values, layout).transpose(1, 1),
               lambda lib: _matrix(lib, values, layout).mT,
               lambda lib: _matrix(lib, values, layout).adjoint(),
               lambda lib: _matrix(lib, values, layout).t().to_dense()):
        assert_same_outcome(fn)


def test_transpose_shares_the_parts():
    x = glasstorch.tensor([[1.0, 0.0, 2.0], [0.0, 3.0, 0.0]]).to_sparse_csr()
    t = x.t()
    assert t.layout is glasstorch.sparse_csc and not t.is_sparse_csr
    assert t.ccol_indices().data_ptr() == x.crow_indices().data_ptr()
    assert t.row_indices().data_ptr() == x.col_indices().data_ptr()
    assert t.values().data_ptr() == x.values().data_ptr()


@settings(max_examples=30, deadline=None)
@given(sparse_matrices().filter(lambda v: v.shape[0] and v.shape[1]), st.sampled_from(LAYOUTS),
       st.data())
def test_select_index_unbind(values, layout, data):
    dim = data.draw(st.sampled_from([0, 1, -1]))
    index = data.draw(st.integers(-values.shape[dim], values.shape[dim] - 1))
    for fn in (lambda lib: _matrix(lib, values, layout).select(dim, index),
               lambda lib: _matrix(lib, values, layout)[index],
               lambda lib: _matrix(lib, values, layout)[:, index % values.shape[1]],
               lambda lib: _matrix(lib, values, layout).unbind(dim),
               lambda lib: _matrix(lib, values, layout).select(dim, values.shape[dim])):
        assert_same_outcome(fn)


# -- what needs strides --------------------------------------------------------------

@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("fn", [
    lambda x: x.stride(), lambda x: x.stride(0), lambda x: x.is_contiguous(),
    lambda x: x.contiguous(), lambda x: x.view(3, 2), lambda x: x.reshape(3, 2),
    lambda x: x.flatten(), lambda x: x.narrow(0, 0, 1), lambda x: x.unsqueeze(0),
    lambda x: x.squeeze(), lambda x: x.diagonal(), lambda x: x.split(1), lambda x: x.chunk(2),
    lambda x: x[:, 1:], lambda x: x.expand(2, 2, 3), lambda x: x.permute(1, 0),
    lambda x: x.movedim(0, 1), lambda x: x.as_strided((1,), (1,)), lambda x: x.unfold(0, 1, 1),
    lambda x: x.T,
], ids=lambda f: "")
def test_strided_views_refused(layout, fn):
    assert_same_outcome(lambda lib: fn(_matrix(lib, [[1.0, 0.0, 2.0], [0.0, 3.0, 0.0]], layout)))


def test_alias_refused():
    assert_same_outcome(lambda lib: lib.ops.aten.alias(lib.ones(2, 2).to_sparse_csr()))


# -- constructors and parts ---------------------------------------------------------

@pytest.mark.parametrize("call", [
    lambda lib, T: lib.sparse_csc_tensor(T([0, 1, 2]), T([0, 1]), T([1.0, 2.0]), (3, 2)),
    lambda lib, T: lib.sparse_csc_tensor(T([0, 1, 2]), T([0, 1]), T([1.0, 2.0])),
    lambda lib, T: lib.sparse_csc_tensor([0, 1, 2], [0, 1], [1.0, 2.0], (2, 2),
                                         dtype=lib.float64),
    lambda lib, T: lib.sparse_csr_tensor(T([0, 1, 2]), T([0, 1]), T([1.0, 2.0])),
    lambda lib, T: lib.sparse_compressed_tensor(T([0, 1, 2]), T([0, 1]), T([1.0, 2.0]), (2, 2),
                                                layout=lib.sparse_csc),
    lambda lib, T: lib.sparse_compressed_tensor(T([0, 1, 2]), T([0, 1]), T([1.0, 2.0]), (2, 2)),
    lambda lib, T: lib.sparse_csc_tensor(T([0, 1, 2]), T([0, 5]), T([1.0, 2.0]), (2, 2),
                                         check_invariants=True),
    lambda lib, T: lib.sparse_csc_tensor(T([0, 1, 2, 3]), T([0, 1]), T([1.0, 2.0]), (2, 2),
                                         check_invariants=True),
    lambda lib, T: lib.sparse_csc_tensor(T([1, 1, 2]), T([0, 1]), T([1.0, 2.0]), (2, 2),
                                         check_invariants=True),
    lambda lib, T: lib.sparse_csc_tensor(T([0, 2, 1]), T([0, 1]), T([1.0, 2.0]), (2, 2),
                                         check_invariants=True),
    lambda lib, T: lib.sparse_csc_tensor(T([0, 1, 3]), T([0, 1]), T([1.0, 2.0]), (2, 2),
                                         check_invariants=True),
])
def test_constructors(call):
    assert_same_outcome(lambda lib: call(lib, lib.tensor))


def test_requires_grad_and_part_copies():
    assert_same_outcome(lambda lib: lib.sparse_csc_tensor(
        [0, 1, 2], [0, 1], [1.0, 2.0], (2, 2), requires_grad=True).requires_grad)
    for name in ("crow_indices", "col_indices", "values"):
        assert_same_outcome(lambda lib: getattr(lib, name + "_copy")(
            lib.tensor([[1.0, 0.0], [2.0, 3.0]]).to_sparse_csr()))
    for name in ("ccol_indices", "row_indices", "values"):
        assert_same_outcome(lambda lib: getattr(lib, name + "_copy")(
            lib.tensor([[1.0, 0.0], [2.0, 3.0]]).to_sparse_csc()))
    for name in ("indices", "values"):
        assert_same_outcome(lambda lib: getattr(lib, name + "_copy")(
            lib.tensor([[1.0, 0.0], [2.0, 3.0]]).to_sparse()))
    ours = glasstorch.tensor([[1.0, 0.0]]).to_sparse_csr()
    assert glasstorch.values_copy(ours).data_ptr() != ours.values().data_ptr()


# -- arithmetic and products --------------------------------------------------------

A = [[1.0, 0.0, 2.0], [0.0, 3.0, 0.0]]
B = [[0.0, 5.0, 2.0], [1.0, 0.0, 0.0]]


@pytest.mark.parametrize("fn", [
    lambda lib: _matrix(lib, A, "csr") + _matrix(lib, B, "csr"),
    lambda lib: _matrix(lib, A, "csr").add(_matrix(lib, B, "csr"), alpha=2),
    lambda lib: _matrix(lib, A, "csr") + lib.tensor(B),
    lambda lib: _matrix(lib, A, "csr").add(lib.tensor(B), alpha=2),
    lambda lib: lib.tensor(B) + _matrix(lib, A, "csr"),
    lambda lib: lib.tensor(B) + _matrix(lib, A, "csc"),
    lambda lib: _matrix(lib, A, "csr") + _matrix(lib, B, "csc"),
    lambda lib: _matrix(lib, A, "csc") + _matrix(lib, B, "csc"),
    lambda lib: _matrix(lib, A, "csr") * _matrix(lib, B, "csr"),
    lambda lib: _matrix(lib, A, "csr") * lib.tensor(B).to_sparse(),
    lambda lib: _matrix(lib, A, "csr") * lib.tensor(B),
    lambda lib: _matrix(lib, A, "csr").clone().mul_(_matrix(lib, A, "csr")),
    lambda lib: _matrix(lib, A, "csc") * 2,
    lambda lib: _matrix(lib, A, "csc") * lib.tensor(2.0),
    lambda lib: _matrix(lib, A, "csc") * lib.tensor(B),
    lambda lib: _matrix(lib, A, "csc") * _matrix(lib, B, "csc"),
    lambda lib: _matrix(lib, A, "csc") / 2,
    lambda lib: _matrix(lib, A, "csr") / 2,
    lambda lib: _matrix(lib, A, "csc").neg(),
    lambda lib: _matrix(lib, A, "csc").sum(),
    lambda lib: lib.ones(2, 3).sparse_mask(_matrix(lib, A, "csc")),
    lambda lib: lib.ones(2, 3).sparse_mask(_matrix(lib, A, "csr")),
], ids=lambda f: "")
def test_arithmetic(fn):
    assert_same_outcome(fn)


@settings(max_examples=25, deadline=None)
@given(sparse_matrices(), st.sampled_from(LAYOUTS + ["coo"]), st.integers(1, 3))
def test_products(values, layout, k):
    rng = np.random.default_rng(0)
    right = rng.standard_normal((values.shape[1], k)).astype(np.float32)
    vec = rng.standard_normal(values.shape[1]).astype(np.float32)

    def sparse(lib):
        return lib.tensor(values).to_sparse() if layout == "coo" else \
            _matrix(lib, values, layout)
    for fn in (lambda lib: sparse(lib) @ lib.tensor(right),
               lambda lib: lib.mm(sparse(lib), lib.tensor(right)),
               lambda lib: lib.sparse.mm(sparse(lib), lib.tensor(right)),
               lambda lib: lib.addmm(lib.ones(values.shape[0], k), sparse(lib), lib.tensor(right)),
               lambda lib: sparse(lib).mv(lib.tensor(vec)),
               lambda lib: sparse(lib) @ lib.tensor(vec)):
        assert_same_outcome(fn)


@pytest.mark.parametrize("layout", LAYOUTS)
def test_to_dense_gradient(layout):
    def grad(lib):
        x = _matrix(lib, A, layout).requires_grad_()
        (x.to_dense() * lib.arange(6.0).reshape(2, 3)).sum().backward()
        return x.grad
    assert_same_outcome(grad)


@pytest.mark.parametrize("layout", LAYOUTS + ["coo"])
@pytest.mark.parametrize("product", ["sparse.mm", "matmul"])
def test_product_gradients(layout, product):
    def grads(lib):
        dense = lib.tensor(A)
        x = (dense.to_sparse() if layout == "coo" else _matrix(lib, A, layout)).requires_grad_()
        w = lib.arange(6.0).reshape(3, 2).requires_grad_()
        out = lib.sparse.mm(x, w) if product == "sparse.mm" else x @ w
        (out * lib.tensor([[1.0, 2.0], [3.0, 4.0]])).sum().backward()
        return x.grad, w.grad
    assert_same_outcome(grads)


# -- torch.save / torch.load ------------------------------------------------------------

@pytest.mark.parametrize("make", [
    lambda lib: lib.tensor(A).to_sparse(),
    lambda lib: lib.tensor(A).to_sparse_csr(),
    lambda lib: lib.tensor(A).to_sparse_csc(),
    lambda lib: lib.tensor(A).to_sparse_csr().t(),
    lambda lib: {"weight": lib.tensor(A).to_sparse_csr(), "bias": lib.ones(2)},
], ids=["coo", "csr", "csc", "csr.t", "state_dict"])
def test_save_and_load(make, tmp_path):
    """Byte-identical files (a CSC tensor's parts may be laid out otherwise:
    checked by loading), each loadable by the other library."""
    (tmp_path / "ours").mkdir()
    (tmp_path / "theirs").mkdir()
    # (one file name: the zip's folder is named after it)
    ours, theirs = tmp_path / "ours" / "t.pt", tmp_path / "theirs" / "t.pt"
    glasstorch.save(make(glasstorch), ours)
    torch.save(make(torch), theirs)
    if "csc" not in str(make(torch)):
        assert ours.read_bytes() == theirs.read_bytes()

    def tensors(obj):
        return list(obj.values()) if isinstance(obj, dict) else [obj]
    for a, b in zip(tensors(glasstorch.load(theirs)), tensors(torch.load(ours))):
        assert_sparse_same(a, b) if b.layout is not torch.strided else assert_same(a, b)
    for a, b in zip(tensors(glasstorch.load(theirs, weights_only=True)),
                    tensors(torch.load(theirs, weights_only=True))):
        assert_sparse_same(a, b) if b.layout is not torch.strided else assert_same(a, b)


# -- sums, fills, copies, sparse products ------------------------------------------------

def _layout(lib, values, layout):
    return lib.tensor(values).to_sparse() if layout == "coo" else _matrix(lib, values, layout)


C = [[1.0, 0.0, 2.0], [-1.0, 3.0, 0.0]]


@pytest.mark.parametrize("layout", LAYOUTS + ["coo"])
@pytest.mark.parametrize("fn", [
    lambda x, lib: x.sum(0), lambda x, lib: x.sum(0, keepdim=True),
    lambda x, lib: x.sum(1, keepdim=True), lambda x, lib: x.sum((0, 1), keepdim=True),
    lambda x, lib: x.sum(-1, keepdim=True, dtype=lib.float64), lambda x, lib: x.sum((0, 1)),
    lambda x, lib: x.sum([]), lambda x, lib: lib.sum(x, 1),
    lambda x, lib: lib.empty_like(x).shape,
    lambda x, lib: str(lib.empty_like(x, layout=lib.strided).layout),
    lambda x, lib: lib.ones_like(x), lambda x, lib: lib.full_like(x, 3),
    lambda x, lib: lib.zeros_like(x, dtype=lib.float64), lambda x, lib: x.clone().fill_(2),
    lambda x, lib: x.clone().zero_(), lambda x, lib: x.clone().copy_(x * 2),
    lambda x, lib: x.clone().copy_(lib.ones(2, 3).to_sparse_csr()),
    lambda x, lib: x.clone().copy_(lib.ones(2, 3).to_sparse()),
    lambda x, lib: x.clone().copy_(lib.ones(2, 3)), lambda x, lib: lib.ones(2, 3).copy_(x),
    lambda x, lib: x.clone().double().copy_(x), lambda x, lib: x.type(),
    lambda x, lib: x.indices(), lambda x, lib: __import__("copy").deepcopy(x),
], ids=lambda f: "")
def test_sums_fills_copies(layout, fn):
    assert_same_outcome(lambda lib: fn(_layout(lib, C, layout), lib))


@settings(max_examples=30, deadline=None)
@given(sparse_matrices().filter(lambda v: v.size), st.integers(1, 4),
       st.sampled_from([("coo", "coo"), ("csr", "csr"), ("csr", "csc"), ("csc", "csr"),
                        ("csc", "csc")]), st.integers(0, 2**16))
def test_sparse_times_sparse(left, cols, layouts, seed):
    """COO @ COO equals torch's part for part; a compressed product (CSR) in
    its elements and values: ATen leaves a row's columns in an order of its own."""
    rng = np.random.default_rng(seed)
    right = rng.standard_normal((left.shape[1], cols)).astype(np.float32)
    right[rng.random(right.shape) < 0.5] = 0

    def product(lib):
        return _layout(lib, left, layouts[0]) @ _layout(lib, right, layouts[1])
    if layouts == ("coo", "coo"):
        assert_same_outcome(product)
        assert_same_outcome(lambda lib: lib.sparse.mm(_layout(lib, left, "coo"),
                                                      _layout(lib, right, "coo")))
        return
    ours, theirs = _both(product)
    assert str(ours.layout) == str(theirs.layout) and ours._nnz() == theirs._nnz()
    assert_same(ours.to_dense(), theirs.to_dense(), atol=1e-5, rtol=1e-5)


@pytest.mark.parametrize("layouts", [("coo", "csr"), ("coo", "csc"), ("csr", "coo")])
def test_sparse_times_sparse_mixed_layouts_refused(layouts):
    assert_same_outcome(lambda lib: _layout(lib, C, layouts[0]) @ _layout(lib, [[1.0], [0.0],
                                                                               [2.0]], layouts[1]))

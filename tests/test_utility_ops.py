"""Tensor utilities against real PyTorch (glasstorch/_ops/kernels/shape.py, sorting.py, indexing.py, ...,
glasstorch/_core/type_info.py, the torch.functional wrappers): values, dtypes,
the tuples torch.unique returns, warnings, and errors (type and message), on
random shapes and values."""
import subprocess
import sys

import numpy as np
import pytest
from hypothesis import given, strategies as st

from .differential import differential

DTYPES = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32",
          "float64", "complex64", "complex128"]
shapes = st.lists(st.integers(0, 4), min_size=0, max_size=3).map(tuple)


def values(seed, shape, dtype="float32", low=-3, high=3):
    rng = np.random.default_rng(seed)
    if dtype == "bool":
        return rng.integers(0, 2, size=shape).astype(bool)
    if dtype.startswith(("int", "uint")):
        return rng.integers(low, high, size=shape).astype(dtype)
    return rng.integers(low, high, size=shape).astype(np.float64) / 2   # ties and repeats


def make(lib, array, dtype=None):
    return lib.tensor(array, dtype=getattr(lib, dtype) if dtype else None)


# -- finfo / iinfo --------------------------------------------------------------------

@pytest.mark.parametrize("name", DTYPES)
def test_type_info_matches_pytorch(name):
    def info(lib):
        d = getattr(lib, name)
        kind = lib.iinfo if name.startswith(("int", "uint")) or name == "bool" else lib.finfo
        i = kind(d)
        fields = ("bits", "max", "min", "dtype") + (
            ("eps", "tiny", "smallest_normal", "resolution") if kind is lib.finfo else ())
        return repr(i), str(i), {f: getattr(i, f) for f in fields}, i == kind(d)
    differential(info, may_raise=True)


@pytest.mark.parametrize("call", [lambda lib: lib.finfo(lib.int32),
                                  lambda lib: lib.finfo(lib.bool),
                                  lambda lib: lib.iinfo(lib.float32),
                                  lambda lib: lib.iinfo(lib.complex64),
                                  lambda lib: lib.finfo("float32"),
                                  lambda lib: repr(lib.finfo()),
                                  lambda lib: lib.finfo(lib.float64) == lib.finfo(lib.float32)])
def test_type_info_edge_cases(call):
    differential(call, may_raise=True)


# -- equal, allclose, is_same_size, type_as, sum_to_size ----------------------------------

@given(st.integers(0, 2**31), shapes, st.sampled_from(["float32", "int64", "bool", "float64"]),
       st.booleans())
def test_equal_allclose_same_size(seed, shape, dtype, perturb):
    a = values(seed, shape, dtype)
    b = a.copy()
    if perturb and a.size:
        b.reshape(-1)[0] = not b.reshape(-1)[0] if dtype == "bool" else b.reshape(-1)[0] + 1

    def compare(lib):
        x, y = make(lib, a, dtype), make(lib, b, dtype)
        return (lib.equal(x, y), x.equal(y), lib.allclose(x, y), x.allclose(y, atol=1.5),
                lib.is_same_size(x, y), x.is_same_size(y.reshape(-1)))
    differential(compare)


@pytest.mark.parametrize("call", [
    lambda lib: lib.equal(lib.ones(2), lib.ones(2, dtype=lib.int64)),
    lambda lib: lib.equal(lib.tensor([float("nan")]), lib.tensor([float("nan")])),
    lambda lib: lib.allclose(lib.tensor([float("nan")]), lib.tensor([float("nan")]),
                             equal_nan=True),
    lambda lib: lib.allclose(lib.ones(2), lib.ones(2, dtype=lib.int64)),
    lambda lib: lib.allclose(lib.ones(2, 3), lib.ones(3)),
    lambda lib: lib.allclose(lib.ones(2), lib.ones(2), rtol=-1),
    lambda lib: lib.ones(2, 3).type_as(lib.ones(1, dtype=lib.int32)),
    lambda lib: lib.arange(6.).view(2, 3).sum_to_size(2, 1),
    lambda lib: lib.arange(6.).view(2, 3).sum_to_size([3]),
    lambda lib: lib.arange(6.).view(2, 3).sum_to_size(3, 3),
    lambda lib: lib.arange(6.).view(2, 3).sum_to_size(1, 2, 3),
])
def test_comparison_and_casting_edge_cases(call):
    differential(call, may_raise=True)


def test_meta_tensors_refuse_data_dependent_ops():
    for call in (lambda lib, m: lib.equal(m, m), lambda lib, m: lib.allclose(m, m),
                 lambda lib, m: lib.unique(m), lambda lib, m: lib.unique(m, dim=0),
                 lambda lib, m: lib.bincount(m.long()),
                 lambda lib, m: lib.repeat_interleave(m.long()),
                 lambda lib, m: lib.repeat_interleave(m.long(), output_size=5).shape):
        differential(lambda lib: call(lib, lib.empty(3, device="meta")), may_raise=True)


# -- unique, bincount ----------------------------------------------------------------------

@given(st.integers(0, 2**31), shapes, st.sampled_from(["float32", "int64", "bool", "int8"]),
       st.booleans(), st.booleans(), st.booleans())
def test_unique(seed, shape, dtype, sort, inverse, counts):
    a = values(seed, shape, dtype)
    differential(lambda lib: lib.unique(make(lib, a, dtype), sorted=sort, return_inverse=inverse,
                                        return_counts=counts))
    differential(lambda lib: make(lib, a, dtype).unique(return_inverse=inverse))
    differential(lambda lib: lib._unique2(make(lib, a, dtype), return_counts=counts))


@given(st.integers(0, 2**31), st.lists(st.integers(1, 4), min_size=1, max_size=3),
       st.integers(-3, 2), st.booleans(), st.booleans())
def test_unique_dim(seed, shape, dim, inverse, counts):
    a = values(seed, shape, "int64", 0, 2)
    differential(lambda lib: lib.unique(make(lib, a), dim=dim, return_inverse=inverse,
                                        return_counts=counts),
                 may_raise=not -len(shape) <= dim < len(shape))   # dim out of range


def test_unique_nan_and_empty():
    nan = float("nan")
    differential(lambda lib: lib.unique(lib.tensor([nan, 1.0, nan, -0.0, 0.0]),
                                        return_counts=True))
    differential(lambda lib: lib.unique(lib.tensor(5), return_inverse=True, return_counts=True))
    differential(lambda lib: lib.unique(lib.empty(0, 3), dim=0))
    differential(lambda lib: lib.unique(lib.empty(0, 3), dim=1), may_raise=True)


@given(st.integers(0, 2**31), st.integers(0, 8), st.integers(0, 12),
       st.sampled_from([None, "float32", "float64", "int32", "float16"]))
def test_bincount(seed, n, minlength, weights_dtype):
    a = values(seed, (n,), "int64", 0, 6)
    w = values(seed + 1, (n,), "float32")

    def count(lib):
        weights = None if weights_dtype is None else make(lib, w).to(getattr(lib, weights_dtype))
        return lib.bincount(make(lib, a), weights, minlength=minlength), \
            make(lib, a).bincount(minlength=minlength)
    differential(count)


@pytest.mark.parametrize("call", [
    lambda lib: lib.bincount(lib.tensor([0, -1])),
    lambda lib: lib.bincount(lib.tensor([[0, 1]])),
    lambda lib: lib.bincount(lib.tensor([0.0, 1.0])),
    lambda lib: lib.bincount(lib.tensor([True])),
    lambda lib: lib.bincount(lib.tensor([0, 1]), minlength=-1),
    lambda lib: lib.bincount(lib.tensor([0, 1]), lib.tensor([1.0])),
    lambda lib: lib.bincount(lib.tensor([0, 1], dtype=lib.uint8)),
])
def test_bincount_errors_and_dtypes(call):
    differential(call, may_raise=True)


# -- repeat_interleave, tile, broadcast_to, meshgrid, cartesian_prod ------------------------

@given(st.integers(0, 2**31), st.lists(st.integers(0, 3), min_size=1, max_size=3),
       st.integers(0, 3), st.one_of(st.none(), st.integers(-1, 0)), st.booleans())
def test_repeat_interleave(seed, shape, repeats, dim, as_tensor):
    a = values(seed, shape)
    counts = np.random.default_rng(seed).integers(0, 3, size=shape[dim if dim is not None else 0]
                                                  if dim is not None else 1)

    def run(lib):
        x = make(lib, a)
        if as_tensor:
            return lib.repeat_interleave(x, make(lib, counts), dim=dim)
        return lib.repeat_interleave(x, repeats, dim=dim), x.repeat_interleave(repeats, dim)
    differential(run)


@pytest.mark.parametrize("call", [
    lambda lib: lib.repeat_interleave(lib.tensor([1, -1])),
    lambda lib: lib.repeat_interleave(lib.tensor([[1, 1]])),
    lambda lib: lib.repeat_interleave(lib.tensor([1.0, 1.0])),
    lambda lib: lib.repeat_interleave(lib.tensor([2, 1], dtype=lib.int32)),
    lambda lib: lib.repeat_interleave(lib.ones(3, 4), lib.tensor([1, 2]), dim=0),
    lambda lib: lib.repeat_interleave(lib.ones(3, 4), lib.tensor([[1, 2]]), dim=0),
    lambda lib: lib.repeat_interleave(lib.tensor([1, 2]), output_size=4),
    lambda lib: lib.repeat_interleave(lib.ones(3, 4), -1),
    lambda lib: lib.tile(lib.ones(3, 4), (-1,)),
    lambda lib: lib.broadcast_to(lib.ones(3, 4), (2, 4)),
    lambda lib: lib.meshgrid(indexing="ij"),
    lambda lib: lib.meshgrid(lib.ones(3), indexing="foo"),
    lambda lib: lib.meshgrid(lib.ones(3), lib.ones(2, dtype=lib.int64), indexing="ij"),
    lambda lib: lib.meshgrid([lib.tensor(1.0), lib.arange(3.0)], indexing="xy"),
    lambda lib: lib.cartesian_prod(lib.ones(2, 2)),
    lambda lib: lib.cartesian_prod(lib.arange(3)),
])
def test_repeat_and_grid_edge_cases(call):
    differential(call, may_raise=True)


@given(st.integers(0, 2**31), shapes, st.lists(st.integers(0, 3), max_size=4))
def test_tile_and_kron(seed, shape, reps):
    a, b = values(seed, shape), values(seed + 1, tuple(reversed(shape)))
    differential(lambda lib: (lib.tile(make(lib, a), reps), make(lib, a).tile(reps),
                              lib.kron(make(lib, a), make(lib, b))))


@given(st.integers(0, 2**31), st.lists(st.integers(0, 3), min_size=1, max_size=3),
       st.sampled_from(["ij", "xy", None]))
def test_meshgrid_and_cartesian_prod(seed, sizes, indexing):
    arrays = [values(seed + i, (n,)) for i, n in enumerate(sizes)]

    def grids(lib):
        tensors = [make(lib, x) for x in arrays]
        kwargs = {} if indexing is None else {"indexing": indexing}
        return lib.meshgrid(*tensors, **kwargs), lib.cartesian_prod(*tensors)
    differential(grids, warning_types=())


def test_meshgrid_warns_once_without_indexing():
    """TORCH_WARN_ONCE: the first call in a process warns, later ones don't."""
    script = ("import warnings, {lib} as t\n"
              "with warnings.catch_warnings(record=True) as w:\n"
              "    warnings.simplefilter('always')\n"
              "    t.meshgrid(t.ones(2), t.ones(3)); t.meshgrid(t.ones(2))\n"
              "print([str(x.message) for x in w])\n")
    outputs = [subprocess.run([sys.executable, "-c", script.format(lib=lib)], capture_output=True,
                              text=True, check=True).stdout for lib in ("torch", "glasstorch")]
    assert outputs[0] == outputs[1]
    assert "indexing" in outputs[0]


# -- tensordot, diag, trace, block_diag ---------------------------------------------------

@given(st.integers(0, 2**31), st.lists(st.integers(1, 3), min_size=1, max_size=3),
       st.lists(st.integers(1, 3), min_size=0, max_size=2), st.integers(0, 3))
def test_tensordot(seed, contracted, free, count):
    count = min(count, len(contracted))
    a = values(seed, tuple(free) + tuple(contracted))
    b = values(seed + 1, tuple(contracted) + tuple(reversed(free)))
    differential(lambda lib: (lib.tensordot(make(lib, a), make(lib, b), len(contracted)),
                              lib.tensordot(make(lib, a), make(lib, b),
                                            ([-1], [len(contracted) - 1]))
                              if contracted[-1] == contracted[0] or len(contracted) == 1
                              else None))


@pytest.mark.parametrize("call", [
    lambda lib: lib.tensordot(lib.ones(3, 4), lib.ones(3, 4), ([0], [1])),
    lambda lib: lib.tensordot(lib.ones(3, 4), lib.ones(3, 4), -1),
    lambda lib: lib.tensordot(lib.ones(3, 4), lib.ones(3, 4), 3),
    lambda lib: lib.tensordot(lib.ones(3, 4), lib.ones(4, 3), lib.tensor(1)),
    lambda lib: lib.tensordot(lib.ones(3, 4), lib.ones(3, 4), lib.tensor([[0, 1], [0, 1]])),
    lambda lib: lib.tensordot(lib.ones(3, 4), lib.ones(3, 4, dtype=lib.float64), 2),
    lambda lib: lib.tensordot(lib.ones(3, 4), lib.ones(3, 4), "x"),
    lambda lib: lib.diag(lib.ones(1, 2, 3)),
    lambda lib: lib.diag_embed(lib.ones(2, 3), 0, 1, -2),
    lambda lib: lib.trace(lib.ones(1, 2, 3)),
    lambda lib: lib.trace(lib.ones(2, 2, dtype=lib.bool)),
    lambda lib: lib.trace(lib.ones(2, 3, dtype=lib.int8)),
    lambda lib: lib.trace(lib.ones(2, 3, dtype=lib.float16)),
    lambda lib: lib.block_diag(lib.ones(1, 2, 3)),
    lambda lib: lib.block_diag(),
    lambda lib: lib.block_diag(lib.tensor(2), lib.ones(2, dtype=lib.int64), lib.ones(2, 2)),
])
def test_contraction_and_diagonal_edge_cases(call):
    differential(call, may_raise=True)


@given(st.integers(0, 2**31), st.integers(0, 4), st.integers(0, 4), st.integers(-3, 3))
def test_diag_trace(seed, rows, cols, offset):
    m = values(seed, (rows, cols))
    differential(lambda lib: (lib.diag(make(lib, m), offset), make(lib, m).diag(),
                              lib.diag(make(lib, m[0] if rows else m.reshape(-1)), offset),
                              lib.trace(make(lib, m)), lib.diag_embed(make(lib, m), offset)))


# -- cross, rot90, ravel, atleast, diff -------------------------------------------------------

@pytest.mark.parametrize("call", [
    lambda lib: lib.linalg.cross(lib.ones(3, 4), lib.ones(3, 4)),
    lambda lib: lib.cross(lib.ones(2, 4), lib.ones(2, 4), dim=None),
    lambda lib: lib.linalg.cross(lib.ones(2, 3), lib.ones(3)),
    lambda lib: lib.linalg.cross(lib.ones(2, 3), lib.ones(2, 3, dtype=lib.int64)),
    lambda lib: lib.linalg.cross(lib.ones(2, 3), lib.ones(2, 3), dim=5),
    lambda lib: lib.rot90(lib.ones(2, 3), 1, [0]),
    lambda lib: lib.rot90(lib.ones(2, 3), 1, [0, 0]),
    lambda lib: lib.rot90(lib.ones(2, 3), 1, [0, -2]),
    lambda lib: lib.rot90(lib.ones(3), 1, [0, 1]),
    lambda lib: lib.rot90(lib.ones(2, 3), 1, [0, 5]),
    lambda lib: lib.atleast_1d(),
    lambda lib: lib.atleast_2d(lib.tensor(1.0), lib.ones(3)),
    lambda lib: lib.atleast_3d([lib.ones(2, 2)]),
    lambda lib: lib.diff(lib.ones(2, 3), n=-1),
    lambda lib: lib.diff(lib.tensor(1.0)),
    lambda lib: lib.diff(lib.ones(2, 3), prepend=lib.ones(3)),
    lambda lib: lib.diff(lib.ones(2, 3), n=10),
])
def test_shape_edge_cases(call):
    differential(call, warning_types=(), may_raise=True)


@given(st.integers(0, 2**31), st.lists(st.integers(1, 4), min_size=1, max_size=3),
       st.integers(0, 2))
def test_cross(seed, shape, position):
    shape = list(shape)
    shape.insert(min(position, len(shape)), 3)
    a, b = values(seed, tuple(shape)), values(seed + 1, tuple(shape))
    dim = min(position, len(shape) - 1)
    differential(lambda lib: (lib.linalg.cross(make(lib, a), make(lib, b), dim=dim),
                              lib.cross(make(lib, a), make(lib, b), dim=dim),
                              make(lib, a).cross(make(lib, b), dim - len(shape))))


@given(st.integers(0, 2**31), st.lists(st.integers(0, 4), min_size=2, max_size=4),
       st.integers(-5, 5), st.booleans())
def test_rot90_ravel_atleast(seed, shape, k, transpose):
    a = values(seed, tuple(shape))

    def run(lib):
        x = make(lib, a)
        if transpose:
            x = x.transpose(0, -1)
        r = lib.rot90(x, k, [0, -1])
        return (r, r.stride() if r.numel() > 1 else None, x.ravel(), lib.ravel(x),
                lib.atleast_1d(x[0, 0]), lib.atleast_2d(x[0]), lib.atleast_3d(x.reshape(-1)),
                lib.atleast_3d(x[0, 0], x[0]))
    differential(run, may_raise=0 in shape)   # x[0, 0] of an empty dim


@given(st.integers(0, 2**31), st.lists(st.integers(0, 4), min_size=1, max_size=3),
       st.integers(0, 4), st.integers(-1, 0), st.booleans(),
       st.sampled_from(["float32", "int64", "bool"]))
def test_diff(seed, shape, n, dim, extra, dtype):
    a = values(seed, tuple(shape), dtype)
    edge = list(shape)
    edge[dim] = 2
    b = values(seed + 1, tuple(edge), dtype)

    def run(lib):
        x = make(lib, a, dtype)
        kwargs = {"prepend": make(lib, b, dtype), "append": make(lib, b, dtype)} if extra else {}
        return lib.diff(x, n, dim, **kwargs), x.diff(n=n, dim=dim)
    differential(run)


# -- index_fill -----------------------------------------------------------------------------

@given(st.integers(0, 2**31), st.lists(st.integers(1, 4), min_size=0, max_size=3),
       st.integers(-3, 2), st.sampled_from(["float32", "int64", "bool", "float16"]),
       st.booleans())
def test_index_fill(seed, shape, dim, dtype, tensor_value):
    a = values(seed, tuple(shape), dtype)
    size = shape[dim % len(shape)] if shape else 1
    index = np.random.default_rng(seed).integers(-size, size, size=3)

    def run(lib):
        x = make(lib, a, dtype)
        value = lib.tensor(1) if tensor_value else 1
        return (x.index_fill(dim, lib.tensor(index), value),
                x.clone().index_fill_(dim, lib.tensor(index), value))
    ndim = max(len(shape), 1)
    differential(run, may_raise=not -ndim <= dim < ndim)   # dim out of range


@pytest.mark.parametrize("call", [
    lambda lib: lib.ones(3, 4).index_fill(2, lib.tensor([0]), 1.0),
    lambda lib: lib.ones(3, 4).index_fill(1, lib.tensor([0.0]), 1.0),
    lambda lib: lib.ones(3, 4).index_fill(1, lib.tensor([0], dtype=lib.int32), 1.0),
    lambda lib: lib.ones(3, 4).index_fill(1, lib.tensor([[0]]), 1.0),
    lambda lib: lib.ones(3, 4).index_fill(1, lib.tensor([5]), 1.0),
    lambda lib: lib.ones(3, 4).index_fill(1, lib.tensor([0]), lib.tensor([1.0, 2.0])),
    lambda lib: lib.ones(3, 4, dtype=lib.int64).index_fill(1, lib.tensor([0]), 2.5),
    lambda lib: lib.tensor(3.0).index_fill(0, lib.tensor([0]), 1.0),
])
def test_index_fill_edge_cases(call):
    differential(call, may_raise=True)


def test_gradients_of_composites_match():
    """CompositeImplicitAutograd ops record the nodes of the ops they call."""
    def grads(lib):
        x = lib.tensor(values(3, (3, 4)), requires_grad=True)
        v = lib.tensor(values(4, (4,)), requires_grad=True)
        outs = [lib.tile(x, (2,)), lib.kron(x, v), lib.diag(x), lib.diag(v, 1), lib.diff(x, 2),
                lib.tensordot(x, v, 1), lib.repeat_interleave(x, lib.tensor([1, 0, 2]), dim=0),
                lib.repeat_interleave(v, 2), lib.cartesian_prod(v, v), x.sum_to_size(1, 4),
                lib.trace(x), lib.rot90(x), lib.block_diag(x, v), x.type_as(v.double()),
                x.index_fill(1, lib.tensor([1]), v[0]), lib.meshgrid(v, v, indexing="xy")[0]]
        total = sum((o.double() * o.double()).sum() for o in outs)
        gx, gv = lib.autograd.grad(total, (x, v))
        return [o.grad_fn for o in outs], gx, gv
    differential(grads)


# -- logit, isposinf / isneginf, deg2rad / rad2deg --------------------------------------

SPECIALS = np.array([np.inf, -np.inf, np.nan, 0.0, 1.0, -0.0])


@given(st.integers(0, 2**31), shapes, st.sampled_from(["float32", "float64", "float16", "int64",
                                                       "bool", "bfloat16"]),
       st.sampled_from([None, 0.0, 0.1, 0.5, -1.0]))
def test_elementwise_utilities(seed, shape, dtype, eps):
    a = values(seed, shape, dtype, low=-1, high=3)
    if dtype.startswith(("float", "bfloat")) and a.size:
        a.reshape(-1)[: len(SPECIALS)] = SPECIALS[: a.size]

    def compute(lib):
        x = make(lib, a / 2 if dtype.startswith(("float", "bfloat")) else a, dtype)
        return (lib.logit(x, eps), x.logit(eps=eps), lib.isposinf(x), x.isneginf(),
                lib.deg2rad(x), x.rad2deg())
    differential(compute)


@pytest.mark.parametrize("call", [
    lambda lib: lib.isposinf(lib.tensor([1j])),
    lambda lib: lib.isneginf(lib.tensor([1j])),
    lambda lib: lib.deg2rad(lib.tensor([1j])),
    lambda lib: lib.rad2deg_(lib.tensor([1j])),
    lambda lib: lib.tensor([1, 2]).deg2rad_(),
    lambda lib: lib.tensor([1, 2]).logit_(),
    lambda lib: lib.isposinf(lib.tensor([1.0]), out=lib.empty(1)),
    lambda lib: str(lib.rad2deg(lib.tensor([1.0, 2.0], dtype=lib.float64)).dtype),
])
def test_elementwise_utility_errors(call):
    differential(call, may_raise=True)


@pytest.mark.parametrize("eps", [None, 0.2])
def test_logit_double_backward(eps):
    def grads(lib):
        x = lib.tensor([0.1, 0.3, 0.9, 1.2, -0.1], dtype=lib.float64, requires_grad=True)
        y = lib.logit(x, eps)
        (gx,) = lib.autograd.grad(y.sum(), x, create_graph=True)
        (ggx,) = lib.autograd.grad(gx.sum(), x)
        z = lib.deg2rad(x).rad2deg()
        return y, gx, ggx, z, lib.autograd.grad(z.sum(), x)
    differential(grads)


# -- nansum, nanmean ------------------------------------------------------------------

@given(st.integers(0, 2**31), shapes, st.sampled_from(["float32", "float64", "float16", "int64",
                                                       "bool"]),
       st.sampled_from([None, 0, -1, (0, 1)]), st.booleans())
def test_nansum_nanmean(seed, shape, dtype, dim, keepdim):
    a = np.asarray(values(seed, shape, dtype))
    if dtype.startswith("float"):
        a = np.where(a > 1, np.nan, a)

    def compute(lib):
        x = make(lib, a, dtype)
        out = [lib.nansum(x, dim, keepdim), x.nansum(dim=dim, dtype=lib.float64)]
        if dtype.startswith("float"):
            out += [lib.nanmean(x, dim, keepdim), x.nanmean(dim, dtype=lib.float64)]
        return out
    differential(compute, may_raise=dim == (0, 1) and len(shape) < 2)   # dims out of range


@pytest.mark.parametrize("call", [
    lambda lib: lib.nansum(lib.tensor([1j])),
    lambda lib: lib.nanmean(lib.tensor([1, 2])),
    lambda lib: lib.nanmean(lib.tensor([1j, float("nan")])),
    lambda lib: lib.nansum(lib.ones(2, 3), (0, 0)),
    lambda lib: lib.nansum(lib.ones(2, 3), 2),
])
def test_nan_reduction_errors(call):
    differential(call, may_raise=True)


def test_nan_reduction_gradients():
    def grads(lib):
        x = lib.tensor([[1.0, float("nan"), 2.0], [float("nan")] * 3], requires_grad=True)
        outs = [lib.nansum(x), lib.nansum(x, 1), lib.nanmean(x, 0, True), x.nanmean()]
        total = sum((o * o).sum() for o in outs)
        return [o.grad_fn for o in outs], lib.autograd.grad(total, x)
    differential(grads)


# -- cummax, cummin -------------------------------------------------------------------

@given(st.integers(0, 2**31), st.lists(st.integers(0, 4), min_size=0, max_size=3),
       st.sampled_from(["float32", "float64", "int64", "bool", "bfloat16"]), st.data())
def test_cummax_cummin(seed, shape, dtype, data):
    dim = data.draw(st.integers(-len(shape), len(shape) - 1)) if shape else 0
    a = np.asarray(values(seed, shape, dtype))
    if dtype.startswith(("float", "bfloat")):
        a = np.where(a > 1.2, np.nan, a)

    def compute(lib):
        x = make(lib, a, dtype)
        maxed, mined = lib.cummax(x, dim), x.cummin(dim=dim)
        return type(maxed).__name__, maxed.values, maxed.indices, tuple(mined)
    differential(compute)


@pytest.mark.parametrize("call", [
    lambda lib: lib.cummax(lib.ones(2, 3), 2),
    lambda lib: lib.cummin(lib.tensor([1j]), 0),
    lambda lib: lib.cummax(lib.ones(2, 3, device="meta"), 1),
    lambda lib: str(lib.cummin(lib.tensor([[2.0, 1.0]]), 1)),
])
def test_cummax_cummin_edge_cases(call):
    differential(call, may_raise=True)


def test_cummax_cummin_gradients():
    def grads(lib):
        x = lib.tensor([[1.0, 3.0, 3.0, 2.0], [float("nan"), 1.0, 0.0, 5.0]], requires_grad=True)
        outs = [lib.cummax(x, 1).values, lib.cummin(x, 0)[0], x.cummax(0).values]
        total = sum((o * o).sum() for o in outs)
        return [o.grad_fn for o in outs], lib.autograd.grad(total, x)
    differential(grads)


# -- searchsorted, bucketize --------------------------------------------------------------

@given(st.integers(0, 2**31), st.lists(st.integers(1, 3), max_size=2), st.integers(0, 5),
       st.integers(0, 4), st.sampled_from(["float32", "int64", "float64", "float16"]),
       st.sampled_from([None, "left", "right"]), st.booleans(), st.booleans(), st.booleans())
def test_searchsorted_bucketize(seed, lead, length, count, dtype, side, right, use_sorter,
                                batched):
    batch = lead if batched else []
    bounds = np.sort(values(seed, batch + [length], dtype), -1)
    wanted = values(seed + 1, batch + [count] if batched or count else [], "float32")
    order = np.argsort(np.random.default_rng(seed).random(bounds.shape), -1)
    shuffled = np.take_along_axis(bounds, np.argsort(order, -1), -1)   # bounds == shuffled[order]

    def compute(lib):
        b, v = make(lib, bounds, dtype), lib.tensor(wanted)
        out = [lib.searchsorted(b, v, side=side, right=right and side != "left"),
               lib.searchsorted(b, v, out_int32=True)]
        if use_sorter:
            out.append(lib.searchsorted(make(lib, shuffled, dtype), v, right=right,
                                        sorter=lib.tensor(order)))
        if b.dim() == 1:
            out += [lib.searchsorted(b, 1.5, right=right), lib.bucketize(v, b, right=right),
                    lib.bucketize(-1, b, out_int32=True)]
        return out
    differential(compute)


@pytest.mark.parametrize("call", [
    lambda lib: lib.searchsorted(lib.tensor([1.0, 2.0]), lib.ones(3), side="left", right=True),
    lambda lib: lib.searchsorted(lib.tensor([1.0, 2.0]), lib.ones(3), side="up"),
    lambda lib: lib.searchsorted(lib.tensor([3.0, 1.0]), lib.ones(3), sorter=lib.tensor([1])),
    lambda lib: lib.searchsorted(lib.tensor([3.0, 1.0]), lib.ones(3),
                                 sorter=lib.tensor([1.0, 0.0])),
    lambda lib: lib.searchsorted(lib.tensor([3.0, 1.0]), lib.ones(3), sorter=lib.tensor([1, 2])),
    lambda lib: lib.searchsorted(lib.ones(2, 3), lib.ones(3, 3)),
    lambda lib: lib.searchsorted(lib.ones(2, 3), 2.0),
    lambda lib: lib.searchsorted(lib.tensor(1.0), lib.ones(2)),
    lambda lib: lib.searchsorted(lib.tensor([True]), lib.tensor([False])),
    lambda lib: lib.searchsorted(lib.tensor([1j]), lib.tensor([1j])),
    lambda lib: lib.searchsorted(lib.ones(2), lib.ones(2), out_int32=True,
                                 out=lib.empty(2, dtype=lib.int64)),
    lambda lib: lib.searchsorted(lib.tensor([1.0, float("nan")]), lib.tensor([float("nan"), 2.0])),
    lambda lib: lib.bucketize(lib.ones(2), lib.ones(2, 2)),
    lambda lib: lib.bucketize(lib.ones(2, device="meta"), lib.ones(3, device="meta")),
    lambda lib: hasattr(lib.ones(1), "searchsorted") or hasattr(lib.ones(1), "bucketize"),
])
def test_searchsorted_bucketize_errors(call):
    differential(call, may_raise=True)


# -- index_copy -----------------------------------------------------------------------

@given(st.integers(0, 2**31), st.lists(st.integers(1, 4), min_size=0, max_size=3), st.data(),
       st.sampled_from(["float32", "int64", "bool", "float16"]), st.booleans())
def test_index_copy(seed, shape, data, dtype, inplace):
    dim = data.draw(st.integers(-len(shape), len(shape) - 1)) if shape else 0
    size = shape[dim] if shape else 1
    index = data.draw(st.lists(st.integers(0, size - 1), min_size=0, max_size=size))
    source_shape = list(shape)
    if shape:
        source_shape[dim] = len(index)
    elif len(index) != 1:
        index = [0]
    a, src = values(seed, shape, dtype), values(seed + 1, source_shape, dtype)

    def compute(lib):
        x, i = make(lib, a, dtype), lib.tensor(index, dtype=lib.int64)
        if inplace:
            return x.index_copy_(dim, i, make(lib, src, dtype)), x
        return lib.index_copy(x, dim, i, make(lib, src, dtype)), x.index_copy(dim, i.reshape(
            -1), make(lib, src, dtype))
    differential(compute)


@pytest.mark.parametrize("call", [
    lambda lib: lib.zeros(3, 4).index_copy(1, lib.tensor([[0]]), lib.ones(3, 1)),
    lambda lib: lib.zeros(3, 4).index_copy(1, lib.tensor([0, 1]), lib.tensor(1.0)),
    lambda lib: lib.zeros(3, 4).index_copy(1, lib.tensor([0.0, 1.0]), lib.ones(3)),
    lambda lib: lib.zeros(3, 4).index_copy(1, lib.tensor([0.0, 1.0]), lib.ones(3, 2)),
    lambda lib: lib.zeros(3, 4).index_copy(1, lib.tensor([0, 1]), lib.ones(3, 2).double()),
    lambda lib: lib.zeros(3, 4, 5).index_copy(1, lib.tensor([0]), lib.ones(2, 1, 6)),
    lambda lib: lib.zeros(3, 4).index_copy(0, lib.tensor([0]), lib.tensor(3.0)),
    lambda lib: lib.zeros(3, 4).index_copy(1, lib.tensor([0, 1, 2]), lib.ones(3, 2)),
    lambda lib: lib.zeros(3, 4).index_copy(1, lib.tensor([0, 7]), lib.ones(3, 2)),
    lambda lib: lib.zeros(3, 4).index_copy(1, lib.tensor([0, -1]), lib.ones(3, 2)),
    lambda lib: lib.zeros(3, 4).index_copy(2, lib.tensor([0]), lib.ones(3, 1)),
    lambda lib: lib.zeros(3, 4, device="meta").index_copy(
        1, lib.tensor([0, 7], device="meta"), lib.ones(3, 2, device="meta")),
])
def test_index_copy_errors(call):
    differential(call, may_raise=True)


def test_index_copy_gradients():
    def grads(lib):
        x = lib.zeros(3, 4, requires_grad=True)
        s, v = lib.ones(3, 2, requires_grad=True), lib.tensor(2.0, requires_grad=True)
        y = x.index_copy(1, lib.tensor([2, 0]), s)
        z = lib.zeros(4, requires_grad=True).index_copy(0, lib.tensor([1]), v)
        weights = lib.arange(12.0).reshape(3, 4)
        return y.grad_fn, lib.autograd.grad((y * weights).sum() + (z * z).sum(), (x, s, v))
    differential(grads)


# -- scatter_reduce ---------------------------------------------------------------------

REDUCTIONS = ["sum", "prod", "mean", "amax", "amin"]


@given(st.integers(0, 2**31), st.lists(st.integers(1, 4), min_size=1, max_size=3), st.data(),
       st.sampled_from(REDUCTIONS), st.booleans(),
       st.sampled_from(["float32", "float64", "int64", "int32"]))
def test_scatter_reduce(seed, shape, data, reduce, include_self, dtype):
    dim = data.draw(st.integers(-len(shape), len(shape) - 1))
    index_shape = [data.draw(st.integers(0, n)) for n in shape]
    index_shape[dim] = data.draw(st.integers(0, 5))
    index = np.random.default_rng(seed).integers(0, shape[dim], size=index_shape)
    a, src = values(seed, shape, dtype), values(seed + 1, index_shape, dtype)

    def compute(lib):
        x, i, s = make(lib, a, dtype), lib.tensor(index, dtype=lib.int64), make(lib, src, dtype)
        return (lib.scatter_reduce(x, dim, i, s, reduce, include_self=include_self),
                x.scatter_reduce(dim, i, s, reduce=reduce), x.clone().scatter_reduce_(
                    dim, i, s, reduce, include_self=False))
    differential(compute)


@pytest.mark.parametrize("call", [
    lambda lib: lib.zeros(3).scatter_reduce(0, lib.tensor([0]), lib.ones(1), "max"),
    lambda lib: lib.zeros(3).scatter_reduce(0, lib.tensor([0]), lib.ones(1), "min",
                                            include_self=False),
    lambda lib: lib.zeros(3).scatter_reduce(0, lib.tensor([0]), lib.ones(1), "add"),
    lambda lib: lib.zeros(3, requires_grad=True).scatter_reduce(
        0, lib.tensor([0]), lib.ones(1), "max").sum().backward(),
    lambda lib: lib.zeros(3).scatter_reduce(0, lib.tensor([0]), lib.ones(1).double(), "sum"),
    lambda lib: lib.zeros(3).scatter_reduce(0, lib.tensor([0.0]), lib.ones(1), "sum"),
    lambda lib: lib.zeros(3).scatter_reduce(0, lib.tensor([5]), lib.ones(1), "amin"),
    lambda lib: lib.tensor([True, False]).scatter_reduce(0, lib.tensor([0, 1]),
                                                         lib.tensor([True, True]), "mean"),
    lambda lib: lib.tensor([1.0, 2.0]).scatter_reduce(0, lib.tensor([0, 0]),
                                                      lib.tensor([float("nan"), 3.0]), "amax"),
])
def test_scatter_reduce_errors(call):
    differential(call, may_raise=True)


@pytest.mark.parametrize("reduce", REDUCTIONS)
@pytest.mark.parametrize("include_self", [True, False])
def test_scatter_reduce_gradients_with_ties_and_zeros(reduce, include_self):
    def grads(lib):
        x = lib.tensor([[2.0, 0.0, 1.0], [3.0, 3.0, -1.0]], dtype=lib.float64, requires_grad=True)
        s = lib.tensor([[2.0, 0.0, 3.0, 3.0], [0.0, 1.0, 5.0, 0.0]], dtype=lib.float64,
                       requires_grad=True)
        i = lib.tensor([[0, 1, 1, 0], [2, 2, 2, 0]])
        y = x.scatter_reduce(1, i, s, reduce, include_self=include_self)
        weights = lib.arange(6.0, dtype=lib.float64).reshape(2, 3)
        return y, y.grad_fn, lib.autograd.grad((y * weights).sum(), (x, s))
    differential(grads)


# -- cdist ------------------------------------------------------------------------------

@given(st.integers(0, 2**31), st.lists(st.integers(1, 2), max_size=2), st.integers(0, 4),
       st.integers(0, 30), st.integers(0, 3),
       st.sampled_from([0.0, 0.5, 1.0, 1.5, 2.0, 3.0, float("inf")]),
       st.sampled_from(["use_mm_for_euclid_dist_if_necessary", "use_mm_for_euclid_dist",
                        "donot_use_mm_for_euclid_dist"]), st.sampled_from(["float32", "float64"]))
def test_cdist(seed, batch, rows1, rows2, cols, p, mode, dtype):
    a = values(seed, batch + [rows1, cols], dtype)
    b = values(seed + 1, [rows2, cols], dtype)

    def compute(lib):
        x1 = lib.tensor(a, dtype=getattr(lib, dtype), requires_grad=True)
        x2 = lib.tensor(b, dtype=getattr(lib, dtype), requires_grad=True)
        dist = lib.cdist(x1, x2, p, compute_mode=mode)
        weights = lib.tensor(values(seed + 2, list(dist.shape), dtype), dtype=x1.dtype)
        return dist, dist.grad_fn, lib.autograd.grad((dist * weights).sum(), (x1, x2),
                                                     allow_unused=True)
    differential(compute)


@pytest.mark.parametrize("call", [
    lambda lib: lib.cdist(lib.ones(3), lib.ones(2, 3)),
    lambda lib: lib.cdist(lib.ones(2, 3), lib.ones(3)),
    lambda lib: lib.cdist(lib.ones(2, 3), lib.ones(2, 2)),
    lambda lib: lib.cdist(lib.ones(2, 3, dtype=lib.int64), lib.ones(2, 3, dtype=lib.int64)),
    lambda lib: lib.cdist(lib.ones(2, 3), lib.ones(2, 3), p=-1),
    lambda lib: lib.cdist(lib.ones(2, 3), lib.ones(2, 3), compute_mode="fast"),
    lambda lib: lib.cdist(lib.ones(2, 3), lib.ones(2, 3, dtype=lib.float64)),
    lambda lib: lib.cdist(lib.ones(2, 3, dtype=lib.float16), lib.ones(2, 3, dtype=lib.float16)),
    lambda lib: lib.cdist(lib.ones(2, 2, 3), lib.ones(3, 2, 3)),
    lambda lib: lib.ops.aten.cdist.default(lib.ones(2, 3), lib.ones(2, 3), 2.0, 5),
    lambda lib: lib.cdist(lib.ones(2, 3, device="meta"), lib.ones(4, 3, device="meta"), 1.0),
])
def test_cdist_errors(call):
    differential(call, may_raise=True)


# -- defects PyTorch's op_db samples found (issue 16) -----------------------------------

@pytest.mark.parametrize("case", ["function", "method", "scalar", "keyword_input", "not_tuple"])
def test_nonzero_as_tuple_matches_torch(case):
    values = [[0, 1, 0], [1, 1, 0]]

    def scenario(lib):
        x = lib.tensor(values)
        return {"function": lambda: lib.nonzero(x, as_tuple=True),
                "method": lambda: x.nonzero(as_tuple=True),
                "scalar": lambda: lib.nonzero(lib.tensor(5.0), as_tuple=True),
                "keyword_input": lambda: lib.nonzero(input=x, as_tuple=True),
                "not_tuple": lambda: lib.nonzero(x, as_tuple=False)}[case]()
    differential(scenario)


def test_nonzero_as_tuple_refuses_out_as_torch():
    differential(lambda lib: lib.nonzero(lib.tensor([1, 0]), out=lib.empty(0, dtype=lib.long),
                                         as_tuple=True), may_raise=True)


@pytest.mark.parametrize("dtype", ["bool", "int32", "float32"])
def test_sum_to_size_of_a_scalar_is_a_sum(dtype):
    differential(lambda lib: lib.ones((), dtype=getattr(lib, dtype)).sum_to_size(()))


@pytest.mark.parametrize("op", ["gather", "scatter", "scatter_add"])
@pytest.mark.parametrize("index_dtype", ["uint8", "float32", "int16"])
@pytest.mark.parametrize("width", [0, 1])
def test_an_empty_index_may_have_any_dtype(op, index_dtype, width):
    def scenario(lib):
        x, index = lib.ones(2, 3), lib.zeros(2, width, dtype=getattr(lib, index_dtype))
        if op == "gather":
            return lib.gather(x, 1, index)
        return getattr(lib, op)(x, 1, index, lib.ones(2, 3))
    differential(scenario, may_raise=width == 1)

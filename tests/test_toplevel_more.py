"""The second batch of issue 16's top-level functions and Tensor methods against
torch: products (addbmm, addr), angle / frexp / complex / polar, scans and
norms (logcumsumexp, dist, renorm), shape ops (combinations, vander, cov,
corrcoef, trapezoid rules, unsafe splits, narrow_copy, slice_inverse, dsplit),
indexing (masked_scatter_, fill_diagonal_, index_reduce), seeded samplers,
factories (range, tril/triu_indices, empty_permuted) and the Python-level
helpers (unravel_index, sym_*, get_device_module, DispatchKey).  Values,
dtypes, gradients (float64 gradcheck), warnings and errors; hypothesis over
shapes."""
import numpy as np
import pytest
import torch
from hypothesis import assume, given, settings, strategies as st

import glasstorch

from .differential import differential


def arr(seed, shape, low=-3, high=3, dtype=np.float32):
    return np.random.default_rng(seed).uniform(low, high, shape).astype(dtype)


def T(lib, array, **kwargs):
    return lib.tensor(array, **kwargs)


def both_gradcheck(fn, *arrays):
    """float64 gradcheck in both libraries, then the gradients compared."""
    for lib in (torch, glasstorch):
        inputs = [T(lib, a, dtype=lib.float64, requires_grad=True) for a in arrays]
        assert lib.autograd.gradcheck(lambda *xs: fn(lib, *xs), inputs)

    def scenario(lib):
        inputs = [T(lib, a, dtype=lib.float64, requires_grad=True) for a in arrays]
        out = fn(lib, *inputs)
        out.sum().backward()
        return out, [x.grad for x in inputs]
    differential(scenario)


# -- addbmm, addr, addmv_ -------------------------------------------------------------------

@settings(max_examples=20, deadline=None)
@given(seed=st.integers(0, 2**16), b=st.integers(0, 3), n=st.integers(1, 3),
       m=st.integers(1, 3), k=st.integers(0, 3), beta=st.sampled_from([0, 1, 0.5]),
       alpha=st.sampled_from([1, -2.0]))
def test_addbmm_addr(seed, b, n, m, k, beta, alpha):
    def scenario(lib):
        s = T(lib, arr(seed, (n, m)))
        b1, b2 = T(lib, arr(seed + 1, (b, n, k))), T(lib, arr(seed + 2, (b, k, m)))
        v1, v2 = T(lib, arr(seed + 3, (n,))), T(lib, arr(seed + 4, (m,)))
        return (lib.addbmm(s, b1, b2, beta=beta, alpha=alpha), s.addbmm(b1, b2),
                s.clone().addbmm_(b1, b2, alpha=alpha), lib.addr(s, v1, v2, beta=beta, alpha=alpha),
                s[0].addr(v1, v2), s.clone().addr_(v1, v2, beta=beta),
                lib.addmv_(s[:, 0].clone(), s, v2, alpha=alpha))
    differential(scenario)


@pytest.mark.parametrize("call", [
    lambda lib: lib.addbmm(lib.ones(2, 3), lib.ones(2, 5), lib.ones(4, 5, 3)),
    lambda lib: lib.addbmm(lib.ones(2, 3), lib.ones(4, 2, 5), lib.ones(3, 5, 3)),
    lambda lib: lib.addbmm(lib.ones(2, 3), lib.ones(4, 2, 5), lib.ones(4, 4, 3)),
    lambda lib: lib.addbmm(lib.ones(2, 4), lib.ones(4, 2, 5), lib.ones(4, 5, 3)),
    lambda lib: lib.addbmm(lib.ones(2, 3), lib.ones(4, 2, 5, dtype=lib.float64), lib.ones(4, 5, 3)),
    lambda lib: lib.addbmm(lib.ones(2, 3, dtype=lib.float64), lib.ones(4, 2, 5), lib.ones(4, 5, 3)),
    lambda lib: lib.addbmm(lib.ones(2, 3, dtype=lib.int64), lib.ones(4, 2, 5, dtype=lib.int64),
                           lib.ones(4, 5, 3, dtype=lib.int64)),
    lambda lib: lib.addbmm(*(lib.ones(s, dtype=lib.bool) for s in ((2, 3), (4, 2, 5), (4, 5, 3)))),
    lambda lib: lib.addr(lib.ones(2, 3), lib.ones(2, 1), lib.ones(3)),
    lambda lib: lib.addr(lib.ones(2, 3), lib.ones(2), lib.ones(3, 1)),
    lambda lib: lib.addr(lib.ones(2, 3), lib.ones(3), lib.ones(3)),
    lambda lib: lib.addr(lib.ones(1, 1, 3), lib.ones(2), lib.ones(3)),
    lambda lib: lib.addr(lib.ones(2, 3, dtype=lib.int64), lib.ones(2), lib.ones(3)),
    lambda lib: lib.addr(lib.ones(2, 3, dtype=lib.int64), lib.ones(2, dtype=lib.int64),
                         lib.ones(3, dtype=lib.int64), alpha=0.5),
    lambda lib: lib.addr(lib.ones(2, 3, dtype=lib.bool), lib.ones(2, dtype=lib.bool),
                         lib.zeros(3, dtype=lib.bool), beta=False),
    lambda lib: lib.addr(lib.ones(2, 3), lib.ones(2, dtype=lib.float16), lib.ones(3)),
])
def test_products_values_and_errors(call):
    differential(call, may_raise=True)


def test_products_gradients():
    both_gradcheck(lambda lib, s, b1, b2: lib.addbmm(s, b1, b2, beta=0.5, alpha=2),
                   arr(0, (2, 3)), arr(1, (4, 2, 5)), arr(2, (4, 5, 3)))
    both_gradcheck(lambda lib, s, v1, v2: lib.addr(s, v1, v2, beta=-1, alpha=3),
                   arr(3, (3,)), arr(4, (2,)), arr(5, (3,)))


# -- angle, frexp, complex, polar ---------------------------------------------------------------

@settings(max_examples=20, deadline=None)
@given(seed=st.integers(0, 2**16), shape=st.lists(st.integers(0, 3), max_size=3),
       dtype=st.sampled_from(["float32", "float64", "float16", "bfloat16", "int64", "bool",
                              "complex64"]))
def test_angle_frexp(seed, shape, dtype):
    def scenario(lib):
        x = T(lib, arr(seed, shape, -100, 100)).to(getattr(lib, dtype))
        return lib.angle(x), x.angle(), lib.frexp(x), x.frexp()
    differential(scenario, may_raise=dtype in ("int64", "bool", "complex64"))


@pytest.mark.parametrize("call", [
    lambda lib: lib.angle(lib.tensor([float("nan"), -0.0, 0.0, -1.0, float("-inf")])),
    lambda lib: lib.frexp(lib.tensor([0.0, -0.0, float("inf"), float("nan"), 1e-40])),
    lambda lib: lib.frexp(lib.tensor([1.5]), out=(lib.empty(1), lib.empty(1))),
    lambda lib: lib.frexp(lib.tensor([1.5]), out=(lib.empty(1, dtype=lib.float64),
                                                  lib.empty(1, dtype=lib.int32))),
    lambda lib: lib.frexp(lib.tensor([[1.5, 3.]]), out=(lib.empty(0), lib.empty(0, dtype=lib.int32))),
    lambda lib: lib.complex(lib.tensor([1., 2]), lib.tensor([0., 1], dtype=lib.float64)),
    lambda lib: lib.complex(lib.tensor([1, 2]), lib.tensor([0, 1])),
    lambda lib: lib.complex(lib.tensor([1.]), lib.tensor([0])),
    lambda lib: lib.complex(lib.ones(2, 3), lib.ones(3, 2)),
    lambda lib: lib.complex(lib.ones(2, 3).t(), lib.ones(3, 2)).stride(),
    lambda lib: lib.complex(lib.ones(2), lib.ones(2), out=lib.empty(2)),
    lambda lib: lib.complex(lib.ones(2), lib.ones(2), out=lib.empty(2, dtype=lib.complex128)),
    lambda lib: lib.polar(lib.tensor([1., 2]), lib.tensor([0., 1], dtype=lib.float64)),
    lambda lib: lib.polar(lib.tensor([1, 2]), lib.tensor([0., 1])),
    lambda lib: lib.polar(lib.tensor([2., 0.]), lib.tensor([[0.5], [-3.]]),
                          out=lib.empty(0, dtype=lib.complex64)),
])
def test_complex_parts_values_and_errors(call):
    differential(call, may_raise=True)


def test_elementwise_gradients():
    both_gradcheck(lambda lib, r, t: lib.view_as_real(lib.polar(r, t)), arr(0, (4,), 0.5, 2),
                   arr(1, (4,)))
    both_gradcheck(lambda lib, r, i: lib.complex(r, i).abs(), arr(2, (4,)), arr(3, (4,)))
    both_gradcheck(lambda lib, x: lib.frexp(x * 3).mantissa, arr(4, (5,)))
    both_gradcheck(lambda lib, x: lib.angle(x) * x, arr(5, (5,)))
    both_gradcheck(lambda lib, r, i: lib.angle(lib.complex(r, i)), arr(6, (4,)), arr(7, (4,)))


# -- logcumsumexp, dist, renorm --------------------------------------------------------------

@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**16), shape=st.lists(st.integers(0, 4), max_size=3),
       dim=st.integers(-3, 2), dtype=st.sampled_from(["float32", "float64", "bfloat16"]))
def test_logcumsumexp(seed, shape, dim, dtype):
    def scenario(lib):
        x = T(lib, arr(seed, shape, -20, 20)).to(getattr(lib, dtype))
        return lib.logcumsumexp(x, dim), x.logcumsumexp(dim)
    differential(scenario, may_raise=not -max(len(shape), 1) <= dim < max(len(shape), 1))


@pytest.mark.parametrize("call", [
    lambda lib: lib.logcumsumexp(lib.tensor([1., float("inf"), float("-inf"), float("nan"), 2.]), 0),
    lambda lib: lib.logcumsumexp(lib.tensor([float("-inf"), float("-inf"), 2.]), 0),
    lambda lib: lib.logcumsumexp(lib.tensor([1, 2]), 0),
    lambda lib: lib.logcumsumexp(lib.tensor([1.]), 0, out=lib.empty(1, dtype=lib.float64)),
    lambda lib: lib.logcumsumexp(lib.tensor([[1., 3.]]), 1, out=lib.empty(0)),
    lambda lib: lib.logcumsumexp(lib.tensor([1 + 1j, 2 - 1j, -3 + 0.5j]), 0),
    lambda lib: lib.dist(lib.tensor([1, 2]), lib.tensor([3, 5])),
    lambda lib: lib.dist(lib.tensor([1., 2]), lib.tensor([3., 5], dtype=lib.float64), 0),
    lambda lib: lib.dist(lib.ones(2, 3), lib.ones(3, 2)),
    lambda lib: lib.tensor([1 + 1j]).dist(lib.tensor([3 + 0j]), 1),
    lambda lib: lib.renorm(lib.arange(6.).view(2, 3), 2, 0, -3),
    lambda lib: lib.renorm(lib.arange(6.).view(2, 3), -1, 0, 3),
    lambda lib: lib.renorm(lib.arange(6).view(2, 3), 2, 0, 3),
    lambda lib: lib.renorm(lib.arange(3.), 2, 0, 3),
    lambda lib: lib.renorm(lib.arange(6.).view(2, 3), 2, 2, 3),
    lambda lib: lib.renorm(lib.arange(6.).view(2, 3).half(), 2, 1, 3),
    lambda lib: lib.arange(6.).view(2, 3).renorm_(float("inf"), 1, 2.5),
])
def test_scans_and_norms_values_and_errors(call):
    differential(call, may_raise=True)


def test_scans_and_norms_gradients():
    both_gradcheck(lambda lib, x: lib.logcumsumexp(x, 1), arr(0, (3, 4)))
    both_gradcheck(lambda lib, x, y: lib.dist(x, y, 3), arr(1, (3, 4)), arr(2, (4,)))
    both_gradcheck(lambda lib, x, y: lib.dist(x, y), arr(3, (5,)), arr(4, (5,)))
    both_gradcheck(lambda lib, x: lib.renorm(x, 1.5, 1, 2.0), arr(5, (3, 4)))
    both_gradcheck(lambda lib, x: x.renorm(2, 0, 0.5), arr(6, (2, 3, 2)))


# -- shape ops -----------------------------------------------------------------------------------

@settings(max_examples=20, deadline=None)
@given(seed=st.integers(0, 2**16), n=st.integers(0, 5), r=st.integers(-1, 4),
       with_replacement=st.booleans(), N=st.one_of(st.none(), st.integers(-1, 4)),
       increasing=st.booleans())
def test_combinations_vander(seed, n, r, with_replacement, N, increasing):
    def scenario(lib):
        x = T(lib, arr(seed, (n,)))
        return (lib.combinations(x, r, with_replacement),
                lib.vander(x.round().long(), N, increasing), lib.vander(x, N, increasing))
    differential(scenario, may_raise=r < 0 or (N is not None and N < 0))


@settings(max_examples=20, deadline=None)
@given(seed=st.integers(0, 2**16), variables=st.integers(0, 3), observations=st.integers(0, 5),
       correction=st.integers(0, 2), weights=st.sampled_from([None, "f", "a", "fa"]),
       complex_=st.booleans())
def test_cov_corrcoef(seed, variables, observations, correction, weights, complex_):
    # complex with no degrees of freedom: every entry is x / 0, whose infinities take
    # the sign of a zero imaginary part, which the BLAS products leave as +0 or -0
    assume(not (complex_ and correction >= observations))

    def scenario(lib):
        x = T(lib, arr(seed, (variables, observations)), dtype=lib.float64)
        if complex_:
            x = lib.complex(x, x.flip(-1))
        f = T(lib, arr(seed + 1, (observations,), 1, 4).astype(np.int64)) if "f" in (weights or "") \
            else None
        a = T(lib, arr(seed + 2, (observations,), 0.1, 2), dtype=lib.float64) \
            if "a" in (weights or "") else None
        return (lib.cov(x, correction=correction, fweights=f, aweights=a),
                x.cov(), lib.corrcoef(x), x[0].cov() if variables else None)
    differential(scenario, may_raise=True)


@pytest.mark.parametrize("call", [
    lambda lib: lib.combinations(lib.ones(2, 2)),
    lambda lib: lib.vander(lib.ones(2, 2)),
    lambda lib: lib.cov(lib.ones(2, 2, 2)),
    lambda lib: lib.cov(lib.ones(2, 3, dtype=lib.bool)),
    lambda lib: lib.cov(lib.ones(2, 3), fweights=lib.ones(3)),
    lambda lib: lib.cov(lib.ones(2, 3), fweights=lib.ones(1, 3, dtype=lib.int64)),
    lambda lib: lib.cov(lib.ones(2, 3), fweights=lib.ones(4, dtype=lib.int64)),
    lambda lib: lib.cov(lib.ones(2, 3), fweights=-lib.ones(3, dtype=lib.int64)),
    lambda lib: lib.cov(lib.ones(2, 3), aweights=lib.ones(3, dtype=lib.int64)),
    lambda lib: lib.cov(lib.ones(2, 3), aweights=-lib.ones(3)),
    lambda lib: lib.cov(lib.ones(2, 3), aweights=lib.zeros(3)),
    lambda lib: lib.cov(lib.tensor([1.])),
    lambda lib: lib.corrcoef(lib.ones(2, 2, 2)),
    lambda lib: lib.corrcoef(lib.tensor([1., 2, 3])),
])
def test_cov_family_errors(call):
    differential(call, may_raise=True)


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**16), shape=st.lists(st.integers(0, 4), min_size=1, max_size=3),
       dim=st.integers(-3, 2), x_kind=st.sampled_from(["vector", "full", "lower", "dx"]))
def test_trapezoid_family(seed, shape, dim, x_kind):
    def scenario(lib):
        y = T(lib, arr(seed, shape))
        d = dim % len(shape)
        if x_kind == "dx":
            return (lib.trapezoid(y, dx=0.5, dim=dim), lib.trapz(y, dx=2.0, dim=dim),
                    lib.cumulative_trapezoid(y, dx=0.25, dim=dim), lib.trapezoid(y, dim=dim))
        x = {"vector": lambda: T(lib, np.cumsum(arr(seed + 1, (shape[d],), 0, 1))),
             "full": lambda: T(lib, arr(seed + 1, shape)),
             "lower": lambda: T(lib, arr(seed + 1, shape[1:]))}[x_kind]()
        return (lib.trapezoid(y, x, dim=dim), lib.trapz(y, x, dim=dim),
                lib.cumulative_trapezoid(y, x, dim=dim))
    differential(scenario, may_raise=True)


@pytest.mark.parametrize("call", [
    lambda lib: lib.trapezoid(lib.ones(2, 3, dtype=lib.bool)),
    lambda lib: lib.trapezoid(lib.ones(2, 3), lib.ones(3, dtype=lib.bool)),
    lambda lib: lib.trapezoid(lib.ones(2, 3), dx=True),
    lambda lib: lib.trapezoid(lib.ones(2, 3), dx=1j),
    lambda lib: lib.trapezoid(lib.ones(2, 3), lib.ones(4)),
    lambda lib: lib.cumulative_trapezoid(lib.ones(2, 3), lib.ones(2)),
    lambda lib: lib.cumulative_trapezoid(lib.ones(2, 3, dtype=lib.bool)),
    lambda lib: lib.trapezoid(lib.ones(2, 0)),
    lambda lib: lib.trapezoid(lib.ones(2, 0), lib.ones(0)),
    lambda lib: lib.trapezoid(lib.arange(6).view(2, 3)),
])
def test_trapezoid_errors(call):
    differential(call, may_raise=True)


def test_shape_op_gradients():
    both_gradcheck(lambda lib, x, w: lib.cov(x, aweights=w.abs() + 0.1), arr(0, (3, 5)),
                   arr(1, (5,)))
    both_gradcheck(lambda lib, x: lib.corrcoef(x), arr(2, (3, 5)))
    both_gradcheck(lambda lib, y, x: lib.trapezoid(y, x), arr(3, (2, 4)), arr(4, (4,)))
    both_gradcheck(lambda lib, y: lib.cumulative_trapezoid(y, dx=0.5, dim=0), arr(5, (3, 2)))
    both_gradcheck(lambda lib, x: lib.combinations(x, 2).prod(-1), arr(6, (4,)))
    both_gradcheck(lambda lib, x: lib.narrow_copy(x, 1, 1, 2), arr(7, (3, 4)))
    both_gradcheck(lambda lib, x: lib.cat([p * (i + 1) for i, p in
                                           enumerate(lib.unsafe_chunk(x, 3))]), arr(8, (7, 2)))


def test_vander_gradient_fails_as_in_torch():
    def scenario(lib):
        x = T(lib, [1.0, 2.0, 3.0], requires_grad=True)
        lib.vander(x).sum().backward()
    differential(scenario, may_raise=True)


def test_unsafe_splits_have_their_own_version_counters():
    def scenario(lib):
        x = lib.arange(6.)
        safe, unsafe = x.split(2), x.unsafe_split(2)
        unsafe[0].add_(1)
        sizes = lib.unsafe_split_with_sizes(x, [1, 5])
        return ([p._version for p in safe], [p._version for p in unsafe], x,
                [p._base is x for p in unsafe], sizes, lib.unsafe_chunk(lib.ones(0), 2),
                x.unsafe_chunk(4))
    differential(scenario)


@pytest.mark.parametrize("call", [
    lambda lib: lib.narrow_copy(lib.arange(9.).view(3, 3), 1, -1, 1),
    lambda lib: lib.narrow_copy(lib.arange(9.).view(3, 3), 1, 4, 1),
    lambda lib: lib.narrow_copy(lib.arange(9.).view(3, 3), 2, 0, 1),
    lambda lib: lib.narrow_copy(lib.arange(9.).view(3, 3), 1, 1, -1),
    lambda lib: lib.narrow_copy(lib.tensor(1.), 0, 0, 1),
    lambda lib: lib.arange(9.).view(3, 3).t().narrow_copy(0, 1, 2).stride(),
    lambda lib: lib.unsafe_chunk(lib.tensor(1.), 2),
    lambda lib: lib.unsafe_chunk(lib.ones(3), 0),
    lambda lib: (lambda base: lib.slice_inverse(base[1:], base, 0, 1))(lib.arange(9.).view(3, 3)),
    lambda lib: (lambda base: base[:, ::2].slice_inverse(base, 1, None, None, 2).stride())(
        lib.arange(12.).view(3, 4)),
    lambda lib: lib.dsplit(lib.ones(3, 3), 1),
    lambda lib: lib.dsplit(lib.ones(3, 3, 4), 3),
    lambda lib: lib.arange(24.).view(2, 3, 4).dsplit([1, 3]),
    lambda lib: lib.dsplit(lib.arange(24.).view(2, 3, 4), 2),
])
def test_shape_ops_values_and_errors(call):
    differential(call, may_raise=True)


# -- indexing --------------------------------------------------------------------------------

@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**16), rows=st.integers(1, 4), cols=st.integers(1, 3),
       count=st.integers(0, 6), dim=st.integers(0, 1),
       reduce=st.sampled_from(["prod", "mean", "amax", "amin"]), include_self=st.booleans(),
       dtype=st.sampled_from(["float32", "float64", "int64"]))
def test_index_reduce(seed, rows, cols, count, dim, reduce, include_self, dtype):
    def scenario(lib):
        d = getattr(lib, dtype)
        x = T(lib, arr(seed, (rows, cols), -5, 5)).to(d)
        size = (rows, cols)[dim]
        index = T(lib, arr(seed + 1, (count,), 0, max(size, 1)).astype(np.int64))
        source_shape = (count, cols) if dim == 0 else (rows, count)
        source = T(lib, arr(seed + 2, source_shape, -5, 5)).to(d)
        return (x.index_reduce(dim, index, source, reduce, include_self=include_self),
                lib.index_reduce(x, dim, index.int(), source, reduce),
                x.clone().index_reduce_(dim, index, source, reduce, include_self=include_self))
    differential(scenario)


@pytest.mark.parametrize("reduce", ["prod", "mean", "amax", "amin"])
@pytest.mark.parametrize("include_self", [True, False])
def test_index_reduce_gradients(reduce, include_self):
    both_gradcheck(lambda lib, x, s: x.index_reduce(0, lib.tensor([1, 0, 1]), s, reduce,
                                                    include_self=include_self),
                   arr(0, (2, 3), 0.5, 2), arr(1, (3, 3), 0.5, 2))


@pytest.mark.parametrize("call", [
    lambda lib: lib.ones(3, 2).index_reduce(0, lib.tensor([0, 1]), lib.ones(2, 2), "sum"),
    lambda lib: lib.ones(3, 2).index_reduce(0, lib.tensor([0., 1]), lib.ones(2, 2), "prod"),
    lambda lib: lib.ones(3, 2).index_reduce(0, lib.tensor([0, 1]),
                                            lib.ones(2, 2, dtype=lib.float64), "prod"),
    lambda lib: lib.ones(3, 2).index_reduce(0, lib.tensor([0, 1, 2]), lib.ones(2, 2), "prod"),
    lambda lib: lib.ones(3, 2).index_reduce(0, lib.tensor([0, 5]), lib.ones(2, 2), "amax"),
    lambda lib: lib.ones(3, 2).index_reduce(0, lib.tensor([0, 1]), lib.ones(2, 3), "amin"),
    lambda lib: lib.ones(3, 2).index_reduce(0, lib.tensor([[0, 1]]), lib.ones(2, 2), "mean"),
    lambda lib: lib.tensor([1., float("nan")]).index_reduce(
        0, lib.tensor([0, 1]), lib.tensor([float("nan"), 1.]), "amax"),
    lambda lib: lib.zeros(2, 3).masked_scatter_(lib.tensor([True, False, True]), lib.arange(6.)),
    lambda lib: lib.zeros(2, 3).masked_scatter_(lib.tensor([1, 0, 1]), lib.arange(6.)),
    lambda lib: lib.zeros(2, 3).masked_scatter_(lib.tensor([True, False, True]), lib.arange(6)),
    lambda lib: lib.zeros(3).masked_scatter_(lib.ones(2, 3, dtype=lib.bool), lib.arange(6.)),
    lambda lib: lib.zeros(2, 3).masked_scatter_(lib.ones(2, 3, dtype=lib.bool), lib.arange(3.)),
    lambda lib: lib.ones(3).fill_diagonal_(2),
    lambda lib: lib.ones(3, 3, 2).fill_diagonal_(2),
    lambda lib: lib.ones(5, 5)[1:, ::2].fill_diagonal_(2),
    lambda lib: lib.ones(8, 3).fill_diagonal_(-1, wrap=True),
    lambda lib: lib.ones(3, 7).fill_diagonal_(-1, wrap=True),
    lambda lib: lib.index_put_(lib.zeros(3), (lib.tensor([0, 2]),), lib.tensor(5.)),
])
def test_indexing_values_and_errors(call):
    differential(call, may_raise=True)


def test_inplace_indexing_gradients():
    def scenario(lib):
        a = lib.zeros(2, 3, dtype=lib.float64, requires_grad=True)
        s = lib.arange(6., dtype=lib.float64, requires_grad=True)
        y = a.clone().masked_scatter_(lib.tensor([True, False, True]), s)
        z = a.clone().fill_diagonal_(3.0)
        (y * lib.arange(6.).view(2, 3) + z).sum().backward()
        return y, z, a.grad, s.grad
    differential(scenario)


# -- random samplers ------------------------------------------------------------------------

def test_samplers_match_torch_seeded():
    def scenario(lib):
        lib.manual_seed(5)
        g = lib.Generator().manual_seed(9)
        return (lib.empty(6).geometric_(0.3), lib.empty(3, 4, dtype=lib.int32).t().geometric_(0.7),
                lib.empty(7).log_normal_(), lib.randn(3), lib.empty(2, 3).t().log_normal_(0.5, 0.2),
                lib.empty(4, dtype=lib.float64).log_normal_(generator=g),
                lib.ops.aten.cauchy.default(lib.zeros(3)),
                lib.ops.aten.geometric.default(lib.zeros(3), 0.5),
                lib.ops.aten.log_normal.default(lib.zeros(3)), lib.rand(2))
    differential(scenario)


@pytest.mark.parametrize("call", [
    lambda lib: lib.empty(2, dtype=lib.bool).geometric_(0.3),
    lambda lib: lib.empty(2).geometric_(0),
    lambda lib: lib.empty(2).geometric_(1.5),
    lambda lib: lib.empty(2, dtype=lib.int64).log_normal_(),
    lambda lib: lib.empty(2).log_normal_(1, 0),
    lambda lib: (lambda x: (x.clone().log_normal_().sum().backward(), x.grad,
                            x.clone().geometric_(0.2).grad_fn.name()))(
        lib.ones(3, requires_grad=True)),
])
def test_sampler_errors(call):
    differential(call, may_raise=True)


# -- factories ---------------------------------------------------------------------------------

@settings(max_examples=25, deadline=None)
@given(row=st.integers(-1, 5), col=st.integers(0, 5), offset=st.integers(-6, 6),
       dtype=st.sampled_from(["int64", "int32", "float32"]))
def test_tril_triu_indices(row, col, offset, dtype):
    def scenario(lib):
        d = getattr(lib, dtype)
        return (lib.tril_indices(row, col, offset, dtype=d), lib.triu_indices(row, col, offset,
                                                                              dtype=d))
    differential(scenario, may_raise=row < 0 or dtype == "float32")


@pytest.mark.parametrize("call", [
    lambda lib: lib.range(1, 4),
    lambda lib: lib.range(1, 4, 0.5),
    lambda lib: lib.range(4, 1, -1),
    lambda lib: lib.range(1, 4, -1),
    lambda lib: lib.range(1, 4, 0),
    lambda lib: lib.range(0, 1, 0.3, dtype=lib.float64, requires_grad=True),
    lambda lib: lib.range(1, 3, dtype=lib.int32),
    lambda lib: lib.range(1, 3.5),
    lambda lib: lib.range(1, 3, out=lib.empty(0)),
    lambda lib: lib.range(0, float("inf")),
    lambda lib: lib.tril_indices(3, -1),
    lambda lib: (lambda t: (t.shape, t.stride(), t.dtype))(
        lib.empty_permuted((2, 3, 4), (2, 0, 1))),
    lambda lib: (lambda t: (t.shape, t.stride(), t.dtype))(
        lib.empty_permuted((2, 0, 3), (1, 2, 0), dtype=lib.int64)),
    lambda lib: lib.empty_permuted((2, 3, 4), (0, 0, 1)),
    lambda lib: lib.empty_permuted((2, 3, 4), (0, 1)),
    lambda lib: lib.empty_permuted((2, -3), (0, 1)),
])
def test_factories_values_warnings_and_errors(call):
    differential(call, may_raise=True)


# -- Python-level helpers -------------------------------------------------------------------------

@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**16), shape=st.lists(st.integers(1, 4), max_size=3),
       count=st.integers(0, 4), as_int=st.booleans())
def test_unravel_index(seed, shape, count, as_int):
    def scenario(lib):
        total = int(np.prod(shape))
        flat = T(lib, arr(seed, (count,), -total, total).astype(np.int64))
        target = shape[0] if as_int and shape else tuple(shape)
        return lib.unravel_index(flat, target), lib.unravel_index(flat[:1].sum(), target)
    differential(scenario)


@pytest.mark.parametrize("call", [
    lambda lib: lib.unravel_index(lib.tensor([1.]), (2, 4)),
    lambda lib: lib.unravel_index(lib.tensor([True]), (2, 4)),
    lambda lib: lib.unravel_index(lib.tensor([1]), (2, -4)),
    lambda lib: lib.unravel_index(lib.tensor([1]), (2, 4.)),
    lambda lib: lib.unravel_index(lib.tensor([1]), "ab"),
    lambda lib: (lib.sym_not(True), lib.sym_float(3), lib.sym_int(3.7), lib.sym_int(-2.5),
                 lib.sym_ite(False, 1, 2), lib.sym_sqrt(4), lib.sym_sum([1, 2, 3]),
                 lib.sym_sum(1.5, 2), lib.sym_sum([]), lib.sym_max(2, 3)),
    lambda lib: lib.sym_ite(1, 1, 2),
    lambda lib: lib.sym_ite(True, 1, 2.0),
    lambda lib: (lib.get_device_module().__name__.split(".")[-1],
                 lib.get_device_module(lib.device("cpu")).__name__.split(".")[-1]),
    lambda lib: lib.get_device_module(3),
    lambda lib: (lib.DispatchKey.CPU.name, lib.DispatchKey.AutogradCPU.name,
                 isinstance(lib.SymFloat, type), lib.ones(2).const_data_ptr() ==
                 lib.ones(2).data_ptr() or True),
])
def test_python_helpers(call):
    differential(call, may_raise=True)

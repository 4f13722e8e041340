"""Reductions, scans, sorting and softmax against real PyTorch.

Hypothesis draws shapes (0-d, size-0 and size-1 dims included), dtypes, dim
lists (negative, repeated-free), keepdim, and layouts (contiguous, transposed,
sliced); both libraries read the *same* numpy buffer through ``from_numpy``, so
non-contiguous inputs are compared with their real strides.  Where PyTorch
raises, glasstorch must raise the same exception type with the same message.
"""
from __future__ import annotations

import math
import warnings

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, strategies as st

import glasstorch

from .helpers import assert_same

DTYPES = ["float32", "float64", "float16", "bfloat16", "int64", "int32", "uint8", "bool"]
FLOATS = ["float32", "float64", "float16", "bfloat16"]


# -- inputs ------------------------------------------------------------------------

@st.composite
def inputs(draw, dtypes=DTYPES, max_dims=4, min_dims=0, nan=False, distinct=False):
    """(glasstorch tensor, torch tensor, dtype name) over one numpy buffer."""
    import torch
    shape = tuple(draw(st.lists(st.integers(0, 4), min_size=min_dims, max_size=max_dims)))
    dtype = draw(st.sampled_from(dtypes))
    layout = draw(st.sampled_from(["contiguous", "transposed", "sliced"]))
    rng = np.random.default_rng(draw(st.integers(0, 2 ** 16)))
    full = shape[:-1] + (shape[-1] * 2,) if layout == "sliced" and shape else shape
    if layout == "transposed" and len(shape) >= 2:
        full = shape[::-1]
    np_dtype = {"bfloat16": ml_dtypes.bfloat16, "bool": np.bool_}.get(dtype, dtype)
    n = math.prod(full)
    if distinct:
        values = rng.permutation(n).astype(np.float64) - n // 2
    elif dtype == "bool":
        values = rng.integers(0, 2, size=n)
    elif dtype in FLOATS:
        values = np.round(rng.uniform(-3, 3, size=n), 2)
    else:
        values = rng.integers(0 if dtype == "uint8" else -3, 4, size=n)
    if nan and dtype in FLOATS and n and draw(st.booleans()):
        values[rng.integers(0, n, size=max(1, n // 5))] = np.nan
    array = values.astype(np_dtype).reshape(full)
    if layout == "sliced" and shape:
        array = array[..., ::2]
    elif layout == "transposed" and len(shape) >= 2:
        array = array.transpose(tuple(range(len(shape) - 1, -1, -1)))
    ours = glasstorch.from_numpy(array)
    if dtype in ("bfloat16", "float16"):
        theirs = torch.from_numpy(array.view(np.int16)).view(getattr(torch, dtype))
    else:
        theirs = torch.from_numpy(array)
    return ours, theirs, dtype


@st.composite
def dim_lists(draw, ndim, allow_none=True):
    """None, [], or distinct dims in mixed positive/negative spelling."""
    if allow_none and draw(st.booleans()) and draw(st.booleans()):
        return None
    if ndim == 0:
        return draw(st.sampled_from([[], [0], [-1]]))
    dims = draw(st.lists(st.integers(0, ndim - 1), unique=True, max_size=ndim))
    return [d - ndim if draw(st.booleans()) else d for d in dims]


@st.composite
def one_dim(draw, ndim):
    lo, hi = (-ndim, ndim - 1) if ndim else (-1, 0)
    return draw(st.integers(lo, hi))


def tolerance(dtype):
    if dtype in ("float16", "bfloat16"):
        return {"atol": 2e-2, "rtol": 2e-2}
    if dtype == "float64":
        return {"atol": 1e-9, "rtol": 1e-9}
    return {"atol": 1e-4, "rtol": 1e-5}       # float32, and float results of int inputs


def check(fn, ours_in, theirs_in, **tol):
    """``fn(lib, x)`` on both libraries: the same result, or the same error."""
    import torch
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            expected = fn(torch, theirs_in)
        except Exception as error:  # noqa: BLE001 - the oracle's error is the spec
            with pytest.raises(type(error)) as info:
                fn(glasstorch, ours_in)
            assert str(info.value) == str(error).split("\n")[0] or \
                str(info.value) == str(error)
            return None
        got = fn(glasstorch, ours_in)
    assert_same(got, expected, **tol)
    return got


# -- sum / mean / prod / nansum ----------------------------------------------------------

@given(data=st.data(), op=st.sampled_from(["sum", "mean", "prod"]), keepdim=st.booleans(),
       with_dtype=st.sampled_from([None, "float64", "int64", "float32"]))
def test_sum_mean_prod(data, op, keepdim, with_dtype):
    ours, theirs, dtype = data.draw(inputs())
    dim = data.draw(dim_lists(ours.dim()))
    kwargs = {}
    if with_dtype is not None and not (op == "prod" and dim is not None and len(dim) != 1):
        kwargs["dtype"] = with_dtype

    def fn(lib, x):
        k = {n: getattr(lib, v) for n, v in kwargs.items()}
        if op == "prod":
            if dim is None or len(dim) != 1:
                return lib.prod(x, **k)
            return lib.prod(x, dim[0], keepdim, **k)
        if dim is None and not keepdim:
            return getattr(x, op)(**k)
        return getattr(lib, op)(x, dim, keepdim, **k)
    tol = tolerance(kwargs.get("dtype") or dtype)
    if op == "prod":
        tol = {"atol": tol["atol"] * 10, "rtol": max(tol["rtol"] * 10, 1e-5)}
    check(fn, ours, theirs, **tol)


def test_sum_small_cases(torch):
    x = glasstorch.tensor(np.arange(6, dtype=np.int32).reshape(2, 3))
    assert glasstorch.sum(x).dtype == glasstorch.int64
    assert glasstorch.sum(x, dtype=glasstorch.int32).dtype == glasstorch.int32
    assert glasstorch.sum(x, []).tolist() == 15
    assert x.sum(dim=None).tolist() == 15
    assert x.sum((0, 1), keepdim=True).shape == (1, 1)
    empty = glasstorch.from_numpy(np.zeros((0, 3), np.float32))
    assert empty.sum().tolist() == 0 and empty.prod().tolist() == 1
    assert math.isnan(empty.mean().tolist())


# -- max / min family ------------------------------------------------------------------

@given(data=st.data(), op=st.sampled_from(["amax", "amin", "max", "min", "argmax", "argmin",
                                           "aminmax"]),
       keepdim=st.booleans(), mode=st.sampled_from(["all", "dim", "dims"]))
def test_extrema(data, op, keepdim, mode):
    ours, theirs, dtype = data.draw(inputs(nan=True))
    ndim = ours.dim()
    d = data.draw(one_dim(ndim))
    dims = data.draw(dim_lists(ndim, allow_none=False))

    def fn(lib, x):
        if op in ("amax", "amin"):
            return getattr(lib, op)(x, dims if mode == "dims" else [d], keepdim)
        if op in ("max", "min"):
            return getattr(x, op)() if mode == "all" else getattr(lib, op)(x, d, keepdim)
        if op == "aminmax":
            return lib.aminmax(x, dim=None if mode == "all" else d, keepdim=keepdim)
        return getattr(lib, op)(x, None if mode == "all" else d, keepdim)
    check(fn, ours, theirs, atol=0, rtol=0)


def test_max_ties_and_nan(torch):
    x = glasstorch.tensor(np.array([1., 3., 3., 0.], np.float32))
    assert glasstorch.max(x, 0).indices.tolist() == 1
    assert glasstorch.argmin(glasstorch.tensor(np.array([2, 0, 0]))).tolist() == 1
    y = glasstorch.tensor(np.array([1., np.nan, 3., np.nan], np.float32))
    assert math.isnan(y.max().tolist()) and y.argmax().tolist() == 1
    assert math.isnan(glasstorch.amin(y, 0).tolist())


# -- var / std -----------------------------------------------------------------------

@given(data=st.data(), op=st.sampled_from(["var", "std", "var_mean", "std_mean"]),
       keepdim=st.booleans(), correction=st.sampled_from([None, 0, 1, 2]),
       spelling=st.sampled_from(["correction", "unbiased"]))
def test_var_std(data, op, keepdim, correction, spelling):
    ours, theirs, dtype = data.draw(inputs(dtypes=FLOATS + ["int64"]))
    dim = data.draw(dim_lists(ours.dim()))

    def fn(lib, x):
        f = getattr(lib, op)
        if spelling == "unbiased":
            if dim is None:
                return f(x, correction != 0)
            return f(x, dim, correction != 0, keepdim)
        return f(x, dim, correction=correction, keepdim=keepdim)
    check(fn, ours, theirs, **tolerance(dtype))


# -- norms ----------------------------------------------------------------------------

@given(data=st.data(), ord=st.sampled_from([2, 1, 0, 3, 0.5, math.inf, -math.inf, -1]),
       keepdim=st.booleans(), spelling=st.sampled_from(["vector_norm", "norm"]))
def test_norms(data, ord, keepdim, spelling):
    ours, theirs, dtype = data.draw(inputs(dtypes=FLOATS + ["int32"]))
    dim = data.draw(dim_lists(ours.dim()))

    def fn(lib, x):
        if spelling == "norm":
            if dim is None:
                return lib.ops.aten.norm.Scalar(x, ord)
            return lib.ops.aten.norm.ScalarOpt_dim(x, ord, dim, keepdim)
        return lib.ops.aten.linalg_vector_norm(x, ord, dim, keepdim)
    tol = tolerance(dtype)
    check(fn, ours, theirs, atol=tol["atol"], rtol=max(tol["rtol"], 1e-5))


# -- logsumexp / softmax / scans --------------------------------------------------------

@given(data=st.data(), op=st.sampled_from(["logsumexp", "softmax", "log_softmax", "cumsum",
                                           "cumprod"]),
       keepdim=st.booleans(), with_dtype=st.sampled_from([None, "float64"]))
def test_softmax_scans(data, op, keepdim, with_dtype):
    ours, theirs, dtype = data.draw(inputs(dtypes=DTYPES, max_dims=3))
    ndim = ours.dim()
    d = data.draw(one_dim(ndim))
    dims = data.draw(dim_lists(ndim, allow_none=False))

    def fn(lib, x):
        if op == "logsumexp":
            return lib.logsumexp(x, dims or [d], keepdim)
        k = {"dtype": getattr(lib, with_dtype)} if with_dtype else {}
        return getattr(lib, op)(x, d, **k)
    tol = tolerance(dtype if op == "logsumexp" else with_dtype or dtype)
    if op == "cumprod":
        tol = {"atol": tol["atol"] * 10, "rtol": max(tol["rtol"] * 10, 1e-5)}
    check(fn, ours, theirs, **tol)


def test_softmax_edge_values(torch):
    x = glasstorch.tensor(np.array([-np.inf, -np.inf], np.float32))
    assert np.isnan(x.softmax(0).numpy()).all()
    y = glasstorch.tensor(np.array([1., np.inf, 3.], np.float32))
    assert y.logsumexp(0).tolist() == math.inf
    with pytest.raises(RuntimeError, match="half to float conversion is not supported on CPU"):
        glasstorch._softmax(y, 0, True)


# -- all / any / count_nonzero ----------------------------------------------------------

@given(data=st.data(), op=st.sampled_from(["all", "any", "count_nonzero"]),
       keepdim=st.booleans(), mode=st.sampled_from(["all", "dim", "dims"]))
def test_logical(data, op, keepdim, mode):
    ours, theirs, dtype = data.draw(inputs())
    ndim = ours.dim()
    d = data.draw(one_dim(ndim))
    dims = data.draw(dim_lists(ndim, allow_none=False))

    def fn(lib, x):
        f = getattr(lib, op)
        if mode == "all":
            return f(x)
        if op == "count_nonzero":
            return f(x, d if mode == "dim" else dims)
        return f(x, d if mode == "dim" else dims, keepdim)
    check(fn, ours, theirs)


# -- sort / argsort / topk / median / mode ---------------------------------------------------

@given(data=st.data(), descending=st.booleans(), stable=st.sampled_from([None, True]))
def test_sort(data, descending, stable):
    distinct = stable is None
    ours, theirs, dtype = data.draw(inputs(nan=distinct, distinct=distinct,
                                           dtypes=DTYPES if not distinct else
                                           ["float32", "float64", "int64", "int32"]))
    d = data.draw(one_dim(ours.dim()))

    def fn(lib, x):
        if stable:
            return lib.sort(x, stable=True, dim=d, descending=descending)
        return x.sort(d, descending)
    check(fn, ours, theirs, atol=0, rtol=0)
    check(lambda lib, x: lib.argsort(x, d, descending) if not stable else
          lib.argsort(x, stable=True, dim=d, descending=descending), ours, theirs)


@given(data=st.data(), largest=st.booleans())
def test_topk(data, largest):
    ours, theirs, dtype = data.draw(inputs(dtypes=["float32", "float64", "int64", "bool"],
                                           distinct=True, max_dims=3))
    ndim = ours.dim()
    d = data.draw(one_dim(ndim))
    size = ours.shape[d] if ndim else 1
    k = data.draw(st.integers(0, size + 1))
    check(lambda lib, x: lib.topk(x, k, d, largest), ours, theirs, atol=0, rtol=0)


@given(data=st.data(), op=st.sampled_from(["median", "mode"]), keepdim=st.booleans(),
       whole=st.booleans())
def test_median_mode(data, op, keepdim, whole):
    distinct = op == "median" and not whole
    ours, theirs, dtype = data.draw(inputs(dtypes=["float32", "float64", "int64", "int32",
                                                   "bool"] if not distinct else
                                           ["float32", "int64"],
                                           distinct=distinct, max_dims=3))
    d = data.draw(one_dim(ours.dim()))

    def fn(lib, x):
        if op == "median" and whole:
            return x.median()
        return getattr(lib, op)(x, d, keepdim)
    check(fn, ours, theirs, atol=0, rtol=0)


# -- out= and named tuples ---------------------------------------------------------------

def test_return_types(torch):
    x = glasstorch.tensor(np.array([[1., 5., 2.], [7., 0., 3.]], np.float32))
    result = glasstorch.max(x, 1)
    assert type(result).__name__ == "max" and isinstance(result, tuple)
    assert result.values.tolist() == [5., 7.] and result.indices.tolist() == [1, 0]
    values, indices = result
    assert values is result[0] and indices is result.indices
    assert repr(result).startswith("torch.return_types.max(\nvalues=tensor(")
    assert type(x.sort()) is glasstorch.return_types.sort
    assert glasstorch.aminmax(x)._fields == ("min", "max")
    # the aten op itself returns a plain tuple; var_mean's returns are unnamed
    assert type(glasstorch.ops.aten.max.dim(x, 1)) is tuple
    assert type(glasstorch.var_mean(x)) is tuple
    # out= gives the <name>_out type, holding the given tensors
    v = glasstorch.from_numpy(np.empty(2, np.float32))
    i = glasstorch.from_numpy(np.empty(2, np.int64))
    out = glasstorch.max(x, 1, out=(v, i))
    assert type(out).__name__ == "max_out" and out.values is v and out.indices is i
    assert v.tolist() == [5., 7.]
    topk = glasstorch.topk(x, 2, out=(glasstorch.from_numpy(np.empty((2, 2), np.float32)),
                                      glasstorch.from_numpy(np.empty((2, 2), np.int64))))
    assert type(topk).__name__ == "topk_out" and topk.indices.tolist() == [[1, 2], [0, 2]]


def test_out_overloads(torch):
    x = glasstorch.tensor(np.arange(6, dtype=np.float32).reshape(2, 3))
    out = glasstorch.from_numpy(np.empty(3, np.float32))
    assert glasstorch.sum(x, 0, out=out) is out and out.tolist() == [3., 5., 7.]
    m = glasstorch.from_numpy(np.empty(2, np.float32))
    assert glasstorch.mean(x, 1, out=m) is m and m.tolist() == [1., 4.]
    c = glasstorch.from_numpy(np.empty((2, 3), np.float64))
    glasstorch.cumsum(x, 1, dtype=glasstorch.float64, out=c)
    assert c.tolist() == [[0., 1., 3.], [3., 7., 12.]]


@pytest.mark.parametrize("op", ["cumsum", "cumprod"])
@pytest.mark.parametrize("source,target,dtype", [
    ("float32", "int32", None), ("int32", "int16", None), ("float32", "int64", None),
    ("float16", "float32", None), ("float32", "float64", "float64"), ("int32", "int32", None)])
def test_scans_into_existing_tensors(torch, op, source, target, dtype):
    """A scan written into an existing tensor (out=, or self in place) computes in
    that tensor's dtype (or the dtype argument), as ATen's meta_func_cum_ops reads
    the output's dtype: torch's values and dtypes."""
    x = np.array([[1.5, -2.25, 3.0], [0.5, 4.0, -1.75]]).astype(source)
    results = []
    for lib in (glasstorch, torch):
        kw = {} if dtype is None else {"dtype": getattr(lib, dtype)}
        out = lib.zeros(2, 3, dtype=getattr(lib, target))
        getattr(lib, op)(lib.tensor(x), 1, out=out, **kw)
        inplace = lib.tensor(x.astype(target))
        getattr(inplace, op + "_")(1, **({} if dtype != target else kw))
        results.append((out, inplace))
    for ours, theirs in zip(*results):
        assert_same(ours, theirs)


def test_dispatch_spellings(torch):
    """The `unbiased` spellings go through var.correction; argsort through sort."""
    from glasstorch._dispatcher.dispatcher import dispatch_trace
    x = glasstorch.tensor(np.arange(6, dtype=np.float32).reshape(2, 3))
    with dispatch_trace() as trace:
        glasstorch.var(x, 1, unbiased=False)
        glasstorch.argsort(x)
        glasstorch.softmax(x, 0)
    text = str(trace)
    for name in ("var.correction", "sort", "_softmax"):
        assert name in text


# -- errors --------------------------------------------------------------------------

ERRORS = [
    "lib.ones(2, 3).sum(3)",
    "lib.ones(2, 3).sum((0, -2))",
    "lib.ones(2, 3).amax((1, 1))",
    "lib.arange(6).mean()",
    "lib.ones(3).mean(dtype=lib.int64)",
    "lib.ones(0, 3).max()",
    "lib.ones(0, 3).max(0)",
    "lib.ones(0, 3).amax()",
    "lib.ones(0, 3).amin([0, 1])",
    "lib.ones(0, 3).argmax()",
    "lib.ones(0, 3).argmin(0)",
    "lib.ones(0, 3).aminmax()",
    "lib.ones(0, 3).aminmax(dim=0)",
    "lib.ones(0, 3).median(0)",
    "lib.ones(0, 3).mode(0)",
    "lib.ones(3, dtype=lib.bool).argmax()",
    "lib.ones(3, dtype=lib.complex64).max(0)",
    "lib.ones(3, dtype=lib.complex64).sort()",
    "lib.ones(3, dtype=lib.complex64).topk(1)",
    "lib.ones(3, dtype=lib.bool).topk(1)",
    "lib.ones(3, dtype=lib.bool).median()",
    "lib.arange(6).var()",
    "lib.arange(6).std(0)",
    "lib.ones(2, 3).topk(4)",
    "lib.ones(2, 3).topk(-1)",
    "lib.arange(6).softmax(0)",
    "lib.from_numpy(np.arange(6).reshape(2, 3)).log_softmax(0)",
    "lib.ops.aten.linalg_vector_norm(lib.arange(3))",
    "lib.ops.aten.linalg_vector_norm(lib.ones(0, 3), float('inf'))",
    "lib.ops.aten.linalg_vector_norm(lib.ones(0, 3), -1, [0])",
    "lib.ops.aten.linalg_vector_norm(lib.ones(3), dtype=lib.float16)",
    "lib.ops.aten.norm.Scalar(lib.arange(3))",
    "lib.ones(2, 3).cumsum(2)",
    "lib.ones(3).cumsum_(0, dtype=lib.float64)",
    "lib.ones(3).cumprod_(0, dtype=lib.float64)",
    "lib.ones(3, dtype=lib.bool).cumsum_(0)",
    "lib.cumsum(lib.ones(3), 0, dtype=lib.float64, out=lib.ones(3))",
    "lib.cumprod(lib.ones(3), 0, out=lib.ones(3, dtype=lib.bool))",
    "lib.ones(2, 3).softmax(-3)",
    "lib.ones(2, 3).logsumexp([])",
]


def _build(lib, text):
    """Inputs via from_numpy, so the table runs whichever factories exist."""
    def ones(*shape, dtype=None):
        name = "float32" if dtype is None else str(dtype).split(".")[-1]
        return lib.from_numpy(np.ones(shape, {"bool": np.bool_}.get(name, name)))

    class Lib:
        def __getattr__(self, name):
            return getattr(lib, name)
    shim = Lib()
    shim.ones = ones
    shim.arange = lambda n: lib.from_numpy(np.arange(n, dtype=np.int64))
    return eval(text, {"lib": shim, "np": np})


@pytest.mark.parametrize("text", ERRORS)
def test_errors(text, torch):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(Exception) as expected:
            _build(torch, text)
        with pytest.raises(type(expected.value)) as got:
            _build(glasstorch, text)
    assert str(got.value) == str(expected.value)

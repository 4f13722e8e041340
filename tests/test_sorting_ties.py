"""Ties resolve as PyTorch's CPU kernels resolve them (kernels/sorting.py, Note [ties]).

The inputs are tie-heavy: values from {0, 1, 2} (floats also with NaN and both
zeros), row lengths on both sides of std::sort's insertion-sort threshold (16)
and topk's partial-sort switch (k * 64 <= n), any dim, contiguous, transposed or
sliced.  Both libraries read one numpy buffer; indices, values (the sign of
zero included), dtypes, shapes and strides must be equal.  The C kernels and
the Python fallback are both checked.
"""
from __future__ import annotations

import math
import warnings

import ml_dtypes
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import glasstorch
from glasstorch._ops.kernels import native, sorting

from .helpers import assert_same, to_numpy

FLOATS = ["float32", "float64", "float16", "bfloat16"]
INTS = ["int64", "int32", "int16", "int8", "uint8"]
SIZES = [1, 2, 3, 4, 5, 15, 16, 17, 18, 33, 63, 64, 65, 100, 127, 128, 129, 200, 640, 1000]


@st.composite
def tie_heavy(draw, dtypes=FLOATS + INTS, sizes=SIZES, nan=True):
    """(glasstorch tensor, torch tensor, dim): a 3-d tensor whose dim ``dim`` has a
    length from ``sizes``, values from {0, 1, 2} (some NaN / -0.0 for floats)."""
    import torch
    dtype = draw(st.sampled_from(dtypes))
    n = draw(st.sampled_from(sizes))
    dim = draw(st.integers(-3, 2))
    shape = [draw(st.integers(1, 3)), draw(st.integers(1, 2)), draw(st.integers(1, 3))]
    shape[dim] = n
    layout = draw(st.sampled_from(["contiguous", "transposed", "sliced"]))
    rng = np.random.default_rng(draw(st.integers(0, 2 ** 16)))
    values = rng.integers(0, draw(st.sampled_from([1, 2, 3])), size=math.prod(shape) * 2)
    values = values.astype(np.float64)
    if dtype in FLOATS:
        if nan and draw(st.booleans()):
            values[values == 1] = np.nan
        if draw(st.booleans()):
            values[(values == 0) & (rng.random(values.size) < 0.5)] = -0.0
    np_dtype = ml_dtypes.bfloat16 if dtype == "bfloat16" else dtype
    if layout == "transposed":
        array = values[:math.prod(shape)].astype(np_dtype).reshape(shape[::-1]).transpose(2, 1, 0)
    elif layout == "sliced":
        array = values.astype(np_dtype).reshape(shape[:-1] + [shape[-1] * 2])[..., ::2]
    else:
        array = values[:math.prod(shape)].astype(np_dtype).reshape(shape)
    ours = glasstorch.from_numpy(array)
    if dtype in ("bfloat16", "float16"):
        theirs = torch.from_numpy(array.view(np.int16)).view(getattr(torch, dtype))
    else:
        theirs = torch.from_numpy(array)
    return ours, theirs, dim


def assert_exact(got, expected):
    """Equal results to the bit: indices, values and the sign of every zero."""
    assert_same(got, expected, atol=0, rtol=0)
    for g, e in zip(got if isinstance(got, tuple) else (got,),
                    expected if isinstance(expected, tuple) else (expected,)):
        if e.dtype.is_floating_point:
            np.testing.assert_array_equal(np.signbit(to_numpy(g)), np.signbit(to_numpy(e)))


def both(fn, ours, theirs):
    import torch
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        expected = fn(torch, theirs)
    assert_exact(fn(glasstorch, ours), tuple(expected) if isinstance(expected, tuple) else expected)


@pytest.fixture(params=["native", "python"])
def algorithms(request, monkeypatch):
    """Run a test with sorting.c, then with the Python fallback."""
    if request.param == "native":
        if native.library() is None:
            pytest.skip("no C compiler (or GLASSTORCH_NATIVE=0)")
        assert sorting._native() is not None, "sorting.c did not compile"
    else:
        monkeypatch.setattr(sorting, "_native", lambda: None)
    return request.param


# -- sort / argsort / msort ------------------------------------------------------------

@given(data=st.data(), descending=st.booleans(), stable=st.sampled_from([None, False, True]))
def test_sort_ties(data, descending, stable):
    ours, theirs, dim = data.draw(tie_heavy(dtypes=FLOATS + INTS + ["bool"]))
    if stable is None:
        both(lambda lib, x: x.sort(dim, descending), ours, theirs)
        both(lambda lib, x: lib.argsort(x, dim, descending), ours, theirs)
    else:
        both(lambda lib, x: lib.sort(x, stable=stable, dim=dim, descending=descending),
             ours, theirs)


@given(data=st.data())
def test_msort_ties(data):
    ours, theirs, _ = data.draw(tie_heavy())
    both(lambda lib, x: lib.msort(x), ours, theirs)


def test_sort_of_expanded_row_keeps_its_order(torch):
    """A dim of stride 0 is left as is (ATen skips the sort), where std::sort
    would permute the equal elements."""
    both(lambda lib, x: x.expand(3, 40).sort(), glasstorch.zeros(3, 1), torch.zeros(3, 1))
    both(lambda lib, x: x.sort(), glasstorch.zeros(3, 40), torch.zeros(3, 40))


# -- topk / kthvalue -------------------------------------------------------------------

@given(data=st.data(), largest=st.booleans(), sorted=st.booleans())
def test_topk_ties(data, largest, sorted):
    ours, theirs, dim = data.draw(tie_heavy())
    n = ours.shape[dim]
    # both sides of the switch: partial sort for k <= n / 64, nth_element above
    k = data.draw(st.sampled_from(sorted_unique([0, 1, 2, n // 64, n // 64 + 1, n // 2, n])))
    k = min(k, n)
    both(lambda lib, x: lib.topk(x, k, dim, largest, sorted), ours, theirs)


def sorted_unique(ks):
    return sorted(set(ks))


@pytest.mark.parametrize("n", [64, 65, 127, 128, 129, 640, 1000, 4096])
@pytest.mark.parametrize("above", [0, 1])
@pytest.mark.parametrize("largest", [True, False])
def test_topk_across_the_partial_sort_switch(torch, n, above, largest):
    """k = n // 64 takes std::partial_sort, one more takes std::nth_element."""
    rng = np.random.default_rng(n)
    a = rng.integers(0, 3, size=(4, n)).astype(np.float32)
    a[1][a[1] == 2] = np.nan
    k = n // 64 + above
    for sorted in (True, False):
        both(lambda lib, x: x.topk(k, 1, largest, sorted), glasstorch.from_numpy(a),
             torch.from_numpy(a))


@given(data=st.data(), keepdim=st.booleans())
def test_kthvalue_ties(data, keepdim):
    ours, theirs, dim = data.draw(tie_heavy())
    k = data.draw(st.integers(1, ours.shape[dim]))
    both(lambda lib, x: lib.kthvalue(x, k, dim, keepdim), ours, theirs)


# -- median / nanmedian / mode -----------------------------------------------------------

@given(data=st.data(), op=st.sampled_from(["median", "nanmedian", "mode"]),
       keepdim=st.booleans())
def test_dim_order_statistics_ties(data, op, keepdim):
    ours, theirs, dim = data.draw(tie_heavy())
    both(lambda lib, x: getattr(lib, op)(x, dim, keepdim), ours, theirs)


@given(data=st.data(), op=st.sampled_from(["median", "nanmedian"]))
def test_whole_median_ties(data, op):
    """Only the sign of a zero can tell which element std::nth_element picked; the
    copy it runs on keeps a transposed input's memory order."""
    ours, theirs, _ = data.draw(tie_heavy(dtypes=FLOATS + ["int64"]))
    both(lambda lib, x: getattr(x, op)(), ours, theirs)


def test_nanmedian_of_all_nan_row(torch):
    """Every element equivalent: the index is where introselect's partitions leave it."""
    both(lambda lib, x: x.nanmedian(1), glasstorch.full((4, 37), math.nan),
         torch.full((4, 37), math.nan))


# -- max / min with dim, argmax / argmin ---------------------------------------------------

@given(data=st.data(), op=st.sampled_from(["max", "min", "argmax", "argmin"]),
       keepdim=st.booleans())
def test_extremum_ties(data, op, keepdim):
    """The first occurrence wins, and the first NaN over any number."""
    ours, theirs, dim = data.draw(tie_heavy(dtypes=FLOATS + ["int64", "int16", "uint8"]))
    both(lambda lib, x: getattr(lib, op)(x, dim, keepdim), ours, theirs)


def test_argmax_ties_over_a_large_row(torch):
    rng = np.random.default_rng(0)
    a = rng.integers(0, 2, size=(3, 100_000)).astype(np.float32)
    a[1, 50_000:] = np.nan
    for op in ("argmax", "argmin"):
        both(lambda lib, x: getattr(x, op)(1), glasstorch.from_numpy(a), torch.from_numpy(a))
        both(lambda lib, x: getattr(x, op)(), glasstorch.from_numpy(a), torch.from_numpy(a))


# -- the C kernels and the Python fallback agree with PyTorch -------------------------

SMALL = [1, 2, 3, 5, 16, 17, 40, 64, 65, 130]


@settings(max_examples=10, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data(), largest=st.booleans(), descending=st.booleans())
def test_both_implementations(algorithms, data, largest, descending):
    ours, theirs, dim = data.draw(tie_heavy(sizes=SMALL))
    n = ours.shape[dim]
    k = data.draw(st.integers(1, n))
    both(lambda lib, x: x.sort(dim, descending), ours, theirs)
    both(lambda lib, x: x.topk(k, dim, largest), ours, theirs)
    both(lambda lib, x: x.topk(min(k, max(1, n // 64)), dim, largest), ours, theirs)
    both(lambda lib, x: x.kthvalue(k, dim), ours, theirs)
    both(lambda lib, x: x.median(dim), ours, theirs)
    both(lambda lib, x: x.nanmedian(dim), ours, theirs)
    both(lambda lib, x: x.nanmedian(), ours, theirs)
    both(lambda lib, x: x.mode(dim), ours, theirs)


def quicksort_killer(n, run):
    """McIlroy's adversary ("A Killer Adversary for Quicksort"): values fixed
    lazily, as comparisons ask, so that ``run(records, less)`` partitions badly."""
    gas, values, solid, candidate = n, [n] * n, [0], [0]

    def less(x, y):
        i, j = x[1], y[1]
        if values[i] == gas and values[j] == gas:
            k = i if i == candidate[0] else j
            values[k], solid[0] = solid[0], solid[0] + 1
        if values[i] == gas:
            candidate[0] = i
        elif values[j] == gas:
            candidate[0] = j
        return values[i] < values[j]
    run([(0, i) for i in range(n)], less)
    return np.array([v if v != gas else n + i for i, v in enumerate(values)], np.float64)


def test_introsort_depth_limit(algorithms, torch, monkeypatch):
    """Inputs that drive introsort and introselect to their heap fallback (depth
    limit 2 log2 n), with every value twice: still PyTorch's permutation."""
    heap_selects = []
    select = sorting._heap_select
    monkeypatch.setattr(sorting, "_heap_select", lambda *a: heap_selects.append(1) or select(*a))
    n = 256
    sort_killer = quicksort_killer(n, lambda v, less: sorting._sort(v, 0, n, less)) // 2
    select_killer = quicksort_killer(n, lambda v, less: sorting._nth_element(v, 0, 100, n, less)) // 2
    for a in (sort_killer, -sort_killer, select_killer, -select_killer):
        ours, theirs = glasstorch.from_numpy(a), torch.from_numpy(a)
        both(lambda lib, x: x.sort(), ours, theirs)
        both(lambda lib, x: x.sort(descending=True), ours, theirs)
        both(lambda lib, x: x.topk(101, largest=False), ours, theirs)
        both(lambda lib, x: x.topk(101), ours, theirs)
        both(lambda lib, x: x.mode(), ours, theirs)
        both(lambda lib, x: x.kthvalue(101), ours, theirs)
    assert algorithms == "native" or len(heap_selects) >= 3


# -- errors ----------------------------------------------------------------------------

@pytest.mark.parametrize("call", [
    lambda lib: lib.zeros(2, 0).kthvalue(1, -1),
    lambda lib: lib.zeros(2, 3).kthvalue(4, 1),
    lambda lib: lib.zeros(2, 3).kthvalue(0, -1),
    lambda lib: lib.zeros(2, 3, dtype=lib.bool).kthvalue(1),
    lambda lib: lib.zeros(2, 3).kthvalue(1, 2),
    lambda lib: lib.zeros(2, 0).nanmedian(1),
    lambda lib: lib.tensor([True]).nanmedian(),
    lambda lib: lib.tensor([True]).nanmedian(0),
    lambda lib: lib.zeros(2, 3, dtype=lib.complex64).kthvalue(1),
])
def test_errors(torch, call):
    with pytest.raises(Exception) as expected:
        call(torch)
    with pytest.raises(type(expected.value)) as info:
        call(glasstorch)
    assert str(info.value) == str(expected.value)


@pytest.mark.parametrize("call", [
    lambda lib: lib.zeros(2, 0).kthvalue(1, 0),
    lambda lib: lib.tensor(3.).kthvalue(1),
    lambda lib: lib.zeros(2, 0).nanmedian(0),
    lambda lib: lib.tensor([]).nanmedian(),
    lambda lib: lib.tensor([], dtype=lib.int32).nanmedian(),
])
def test_edge_cases(torch, call):
    expected = call(torch)
    assert_exact(call(glasstorch), tuple(expected) if isinstance(expected, tuple) else expected)


def test_gradients(torch):
    """kthvalue and nanmedian route the gradient to the index they return."""
    a = np.array([[1.0, 2.0, 1.0, np.nan, 2.0]] * 2)
    results = []
    for lib in (glasstorch, torch):
        x = lib.tensor(a, requires_grad=True)
        (x.kthvalue(2, 1)[0].sum() + x.nanmedian(1)[0].sum() + x.nanmedian() * 3).backward()
        results.append(to_numpy(x.grad))
    np.testing.assert_array_equal(*results)


# -- makemore's greedy sampling -------------------------------------------------------

WORDS = ["emma", "olivia", "ava", "isabella", "sophia", "mia", "amelia", "ella", "anna", "lily",
         "noah", "liam", "ann", "eli", "leo", "ian", "ivan", "nia", "lia", "ollie"]


def bigram_names(lib, greedy):
    """A makemore bigram model: counts -> probabilities, sampled greedily with
    ``topk(probs, k=1)`` (ties broken as PyTorch breaks them) or with multinomial."""
    chars = sorted(set("".join(WORDS)))
    stoi = {c: i + 1 for i, c in enumerate(chars)}
    itos = {i: c for c, i in stoi.items()}
    counts = lib.zeros(len(chars) + 1, len(chars) + 1)
    for w in WORDS:
        seq = [0] + [stoi[c] for c in w] + [0]
        for a, b in zip(seq, seq[1:]):
            counts[a, b] += 1
    probs = (counts + 1) / (counts + 1).sum(1, keepdim=True)
    g = lib.Generator().manual_seed(2147483647)
    names = []
    for start in range(1, len(chars) + 1):
        out, ix = [itos[start]], start
        while ix != 0 and len(out) < 12:
            row = probs[ix].unsqueeze(0)
            if greedy:
                ix = lib.topk(row, k=1, dim=-1)[1].item()
            else:
                ix = lib.multinomial(row, num_samples=1, generator=g).item()
            out.append(itos.get(ix, "."))
        names.append("".join(out))
    return names


@pytest.mark.parametrize("greedy", [True, False])
def test_makemore_bigram_sampling(torch, greedy):
    assert bigram_names(glasstorch, greedy) == bigram_names(torch, greedy)

"""Seeded draws bit for bit equal to PyTorch's CPU streams (kernels/random.py).

Each case seeds both libraries alike, draws, and compares the raw bits of the
result and the generator's whole state afterwards (so a draw that consumed a
different number of words fails even where its values agree).  Covered:
normal_/randn/randn_like for every float dtype around the 16-element block of
the vectorized path (avx_mathfun's log/sin/cos under AVX2/AVX512, libm's under
DEFAULT: ``cpu_paths``), the scalar path of non-contiguous outputs, uniform_
with huge float64 ranges, random_/randint over ranges crossing 2^28 and 2^32
(32- versus 64-bit words), negative bases, the full 64-bit range, every dtype's
from/to adjustments, bounds errors and precision warnings; the double-based
samplers (exponential, cauchy, log_normal, geometric) for half and bfloat16;
float16/bfloat16 linspace and histc.
"""
import warnings

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import glasstorch as gt

FLOATS = ["float16", "bfloat16", "float32", "float64"]
INTS = ["uint8", "int8", "int16", "int32", "int64", "bool"]
SIZES_AROUND_16 = [1, 2, 15, 16, 17, 31, 32, 33, 100, 1003]


def _bits(t):
    """The raw bytes of a tensor of either library (half/bfloat16 read as float32,
    which holds them exactly)."""
    t = t.detach()
    if str(t.dtype) in ("torch.float16", "torch.bfloat16"):
        t = t.float()
    return t.numpy().tobytes(), str(t.dtype), tuple(t.shape)


def _draw_both(torch, seed, fn):
    """fn(torch) and fn(glasstorch) from the same seed, warnings recorded."""
    out = []
    for lib in (torch, gt):
        lib.manual_seed(seed)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            result = fn(lib)
        out.append((result, lib.get_rng_state().numpy(),
                    [str(w.message).split(" (Triggered internally")[0] for w in caught]))
    return out


# CPUGeneratorImplState's ``next`` field (bytes 16-24): after exactly 624k draws
# PyTorch keeps 624 there where glasstorch's get_state writes 0 (the same position:
# ``left`` says the twister regenerates on the next draw); compared apart, by the
# draws that follow
_NEXT = slice(16, 24)


def _same_stream(torch, seed, fn):
    (theirs, their_state, their_warnings), (ours, our_state, our_warnings) = \
        _draw_both(torch, seed, fn)
    assert _bits(ours) == _bits(theirs), (ours, theirs)
    our_state[_NEXT] = their_state[_NEXT] = 0
    assert np.array_equal(our_state, their_state), "the generators ended apart"
    assert _bits(gt.randint(0, 2**62, (3,))) == _bits(torch.randint(0, 2**62, (3,)))
    assert our_warnings == their_warnings


def _same_error(torch, fn):
    with pytest.raises(Exception) as theirs:
        fn(torch)
    with pytest.raises(Exception) as ours:
        fn(gt)
    assert type(ours.value) is type(theirs.value)
    assert str(ours.value) == str(theirs.value)


# -- normal: the vectorized fill (>= 16 contiguous elements) and the scalar path -----------

@pytest.mark.cpu_paths
@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("n", SIZES_AROUND_16)
def test_normal_fill_around_the_block_size(torch, dtype, n):
    _same_stream(torch, n, lambda L: L.empty(n, dtype=getattr(L, dtype)).normal_(2.5, 3.0))
    _same_stream(torch, n + 1, lambda L: L.randn(n, dtype=getattr(L, dtype)))


@pytest.mark.cpu_paths
@pytest.mark.parametrize("dtype", FLOATS)
def test_randn_like_and_big_draws(torch, dtype):
    _same_stream(torch, 3, lambda L: L.randn_like(L.zeros(7, 45, dtype=getattr(L, dtype))))
    _same_stream(torch, 4, lambda L: L.randn(200003, dtype=getattr(L, dtype)))


@pytest.mark.parametrize("dtype", FLOATS)
def test_normal_scalar_path_with_spare_sample(torch, dtype):
    """Non-contiguous outputs take the element-by-element Box-Muller in double; an
    odd count leaves the spare sample cached for the next draw."""
    def draw(L):
        first = L.empty(5, 7, dtype=getattr(L, dtype)).t().normal_(1.0, 2.0)
        second = L.empty(3, 2, dtype=getattr(L, dtype)).t().normal_(-1.0, 0.5)
        return L.cat([first.reshape(-1), second.reshape(-1)])
    _same_stream(torch, 11, draw)


@pytest.mark.cpu_paths
@settings(max_examples=30, deadline=None)
@given(n=st.integers(1, 3000), seed=st.integers(0, 2**63 - 1),
       dtype=st.sampled_from(FLOATS), mean=st.sampled_from([0.0, -3.25, 1e3]),
       std=st.sampled_from([1.0, 0.125, 7.5]))
def test_normal_any_size_and_seed(torch, n, seed, dtype, mean, std):
    _same_stream(torch, seed, lambda L: L.empty(n, dtype=getattr(L, dtype)).normal_(mean, std))


# -- uniform ----------------------------------------------------------------------------

@pytest.mark.cpu_paths
@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("bounds", [(0.0, 1.0), (-100.0, 100.0), (1.0, 2.0), (-7.0, 3.3),
                                    (0.0, 1e-30)])
def test_uniform_ranges(torch, dtype, bounds):
    _same_stream(torch, 5, lambda L: L.empty(125, dtype=getattr(L, dtype)).uniform_(*bounds))
    _same_stream(torch, 6, lambda L: L.rand_like(L.zeros(33, dtype=getattr(L, dtype))))


@pytest.mark.cpu_paths
@pytest.mark.parametrize("bounds", [(-1e308, 7e307), (0.0, 1.7e308), (-1.7e308, 0.0),
                                    (1e300, 1.5e308), (-1e-300, 1e-300)])
def test_uniform_huge_float64_ranges_stay_finite(torch, bounds):
    _same_stream(torch, 7, lambda L: L.empty(50, dtype=L.float64).uniform_(*bounds))


def test_uniform_range_too_wide_raises(torch):
    _same_error(torch, lambda L: L.empty(3, dtype=L.float64).uniform_(-1e308, 1e308))


# -- random_(from, to) and randint ------------------------------------------------------------

def test_randint_wide_range_after_seed_7(torch):
    _same_stream(torch, 7, lambda L: L.randint(0, 10**9, (3,)))


RANGES = [(0, 10), (-5, 7), (0, 2**28 - 1), (0, 2**28), (0, 2**28 + 1), (0, 2**32 - 1),
          (0, 2**32), (0, 2**32 + 1), (-(2**40), 2**40), (-(2**62), 2**62),
          (-(2**63), 2**63 - 1), (2**62, 2**63 - 1), (-(2**63), -(2**63) + 3)]


@pytest.mark.parametrize("lo,hi", RANGES)
def test_randint_int64_ranges(torch, lo, hi):
    _same_stream(torch, 13, lambda L: L.randint(lo, hi, (9,)))
    _same_stream(torch, 14, lambda L: L.empty(4, 3).to(L.int64).t().random_(lo, hi))


@pytest.mark.parametrize("dtype", INTS + FLOATS + ["uint16", "uint32", "uint64"])
@pytest.mark.parametrize("lo,hi", [(0, 2), (-3, 100), (0, 65504), (-(2**31), 2**31 - 1),
                                   (0, 2**28), (2049, 2051), (2**60, 2**61),
                                   (-(2**62), 2**62), (0, 2**63 - 1), (-1, 5)])
def test_random_from_to_every_dtype(torch, dtype, lo, hi):
    """update_from/update_to for floating dtypes, the bounds checks, the precision
    warnings, and the values cast as static_cast<scalar_t>(int64)."""
    def draw(L):
        return L.empty(20, dtype=getattr(L, dtype)).random_(lo, hi)
    try:
        torch.empty(20, dtype=getattr(torch, dtype)).random_(lo, hi)
    except Exception:
        _same_error(torch, draw)
        return
    _same_stream(torch, 21, draw)


@pytest.mark.parametrize("dtype", INTS + FLOATS + ["uint16", "uint32", "uint64"])
@pytest.mark.parametrize("lo", [-(2**63), -5, 0, 5, 200, 2047, 2048, 2**24 - 1, 2**24,
                                2**53])
def test_random_from_without_to(torch, dtype, lo):
    """``to=None``: up to the dtype's largest value (2^digits for floating dtypes);
    from = int64 min is the full 64-bit range, for a few dtypes only."""
    def draw(L):
        return L.empty(20, dtype=getattr(L, dtype)).random_(lo, None)
    try:
        torch.empty(20, dtype=getattr(torch, dtype)).random_(lo, None)
    except Exception:
        _same_error(torch, draw)
        return
    _same_stream(torch, 22, draw)


@pytest.mark.parametrize("dtype", INTS + FLOATS + ["uint16", "uint32", "uint64", "complex64"])
def test_random_without_bounds(torch, dtype):
    def draw(L):
        return L.empty(40, dtype=getattr(L, dtype)).random_()
    try:
        torch.empty(40, dtype=getattr(torch, dtype)).random_()
    except Exception:
        _same_error(torch, draw)
        return
    _same_stream(torch, 23, draw)


def test_random_errors_and_empty_outputs(torch):
    _same_error(torch, lambda L: L.empty(3).random_(5, 2))
    _same_error(torch, lambda L: L.empty(3, dtype=L.complex64).random_(0, 5))
    _same_error(torch, lambda L: L.empty(3, dtype=L.complex64).random_(5, None))
    _same_error(torch, lambda L: L.empty(3, dtype=L.float16).random_(-70000, 0))
    _same_error(torch, lambda L: L.empty(3, dtype=L.uint64).random_(0, None))
    # an empty output draws nothing and skips the kernel's own dtype checks
    _same_stream(torch, 24, lambda L: L.empty(0, dtype=L.int32).random_(-(2**63), None))
    _same_stream(torch, 24, lambda L: L.empty(0, dtype=L.uint16).random_())
    # the Meta kernels check nothing
    for lib in (torch, gt):
        assert lib.empty(3, device="meta").random_(5, 2).shape == (3,)
        assert lib.empty(3, dtype=lib.uint16, device="meta").random_().dtype == lib.uint16


@settings(max_examples=40, deadline=None)
@given(lo=st.integers(-(2**63), 2**63 - 2), width=st.integers(1, 2**64 - 1),
       n=st.integers(1, 40), seed=st.integers(0, 2**63 - 1))
def test_randint_any_range(torch, lo, width, n, seed):
    hi = min(lo + width, 2**63 - 1)
    if hi <= lo:
        hi = lo + 1
    _same_stream(torch, seed, lambda L: L.randint(lo, hi, (n,)))


# -- the double-based samplers: half and bfloat16 round through float ---------------------

@pytest.mark.cpu_paths
@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("sampler", [
    lambda t: t.exponential_(1.5), lambda t: t.cauchy_(0.5, 1.2),
    lambda t: t.log_normal_(0.5, 1.2), lambda t: t.geometric_(0.3),
    lambda t: t.bernoulli_(0.3)], ids=["exponential", "cauchy", "log_normal", "geometric",
                                       "bernoulli"])
def test_double_samplers(torch, dtype, sampler):
    _same_stream(torch, 31, lambda L: sampler(L.empty(3001, dtype=getattr(L, dtype))))


# -- linspace and histc in float16/bfloat16 (c10::Half/BFloat16 arithmetic) ---------------

@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("start,end", [(-2.0, 1.0), (4.3, 50.0), (-10.0, 10.0), (50.0, -3.0),
                                       (0.1, 1000.5), (-1e4, 3.14159)])
@pytest.mark.parametrize("steps", [1, 2, 3, 50, 101, 257, 1000])
def test_linspace_reduced_precision(torch, dtype, start, end, steps):
    ours = gt.linspace(start, end, steps, dtype=getattr(gt, dtype))
    theirs = torch.linspace(start, end, steps, dtype=getattr(torch, dtype))
    assert _bits(ours) == _bits(theirs)


@settings(max_examples=40, deadline=None)
@given(dtype=st.sampled_from(["float16", "bfloat16"]), bins=st.integers(1, 300),
       seed=st.integers(0, 2**32 - 1), lo=st.sampled_from([-10.0, 0.0, -1.5, 3.0]),
       width=st.sampled_from([20.0, 1.0, 7.25, 100.0]))
def test_histc_reduced_precision(torch, dtype, bins, seed, lo, width):
    """Values on and near the bin edges: each step of the bin arithmetic rounds to
    the dtype in ATen."""
    rng = np.random.default_rng(seed)
    edges = torch.linspace(lo, lo + width, bins + 1, dtype=getattr(torch, dtype)).float().numpy()
    x = np.concatenate([edges, rng.uniform(lo - 1, lo + width + 1, 64)]).astype(np.float32)
    theirs = torch.histc(torch.from_numpy(x).to(getattr(torch, dtype)), bins, lo, lo + width)
    ours = gt.histc(gt.from_numpy(x).to(getattr(gt, dtype)), bins, lo, lo + width)
    assert _bits(ours) == _bits(theirs)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32"])
@pytest.mark.parametrize("n", [5, 300, 1000, 5000])
def test_histc_counts_as_aten_accumulates_them(torch, dtype, n):
    """Per-thread rows of the input's dtype: a row's count stops at 2^digits, and an
    element rounded past the last bin lands in the next thread's row."""
    x = np.full(n, 9.9375, np.float32)
    x[::3], x[::7] = 1.0, 0.3
    for values, bins, lo, hi in ((x, 299, -10, 10), (np.zeros(n, np.float32), 3, -1, 1)):
        theirs = torch.histc(torch.from_numpy(values).to(getattr(torch, dtype)), bins, lo, hi)
        ours = gt.histc(gt.from_numpy(values).to(getattr(gt, dtype)), bins, lo, hi)
        assert _bits(ours) == _bits(theirs)

"""float32 pow with a tensor exponent: within 1 ulp of PyTorch on every CPU path.

PyTorch computes it with SLEEF's powf_u10 (vector lanes) and glibc's powf (the
tail, and everything under ATEN_CPU_CAPABILITY=default); both work in extended
precision and almost always give the correctly rounded result, which glasstorch
computes (double, rounded once).  The cubic-fit tutorial's ``x.pow([1, 2, 3])``
is one of the programs this decides: it must be equal, not close.
"""
import math

import numpy as np
import pytest
from hypothesis import given, strategies as st

import glasstorch


def _ulps_apart(a, b):
    """Distance in units of the last place of the larger magnitude (inf/nan equal)."""
    a, b = a.astype(np.float64), b.astype(np.float64)
    same = (a == b) | (np.isnan(a) & np.isnan(b))
    with np.errstate(invalid="ignore", over="ignore"):
        scale = np.spacing(np.maximum(np.abs(a), np.abs(b)).astype(np.float32)).astype(np.float64)
        return np.where(same, 0.0, np.abs(a - b) / scale)


@pytest.mark.cpu_paths
def test_tutorial_powers_are_torchs(torch):
    def powers(lib):
        x = lib.linspace(-math.pi, math.pi, 2000)
        return x.unsqueeze(-1).pow(lib.tensor([1, 2, 3])).numpy()
    ours, theirs = powers(glasstorch), powers(torch)
    np.testing.assert_array_equal(ours, theirs)


@pytest.mark.cpu_paths
@given(seed=st.integers(0, 2**32 - 1), size=st.integers(1, 70),
       low=st.floats(-4, 4), span=st.floats(0, 6))
def test_tensor_exponent_within_one_ulp(torch, seed, size, low, span):
    rng = np.random.default_rng(seed)
    base = rng.uniform(-30, 30, size).astype(np.float32)
    exponent = rng.uniform(low, low + span, size).astype(np.float32)
    exponent[::3] = np.round(exponent[::3])       # integer exponents: negative bases defined
    ours = glasstorch.pow(glasstorch.from_numpy(base), glasstorch.from_numpy(exponent)).numpy()
    theirs = torch.pow(torch.from_numpy(base), torch.from_numpy(exponent)).numpy()
    np.testing.assert_array_equal(np.isnan(ours), np.isnan(theirs))
    assert _ulps_apart(ours, theirs).max() <= 1, (seed, size, low, span)


@pytest.mark.cpu_paths
def test_special_values_are_torchs(torch):
    specials = np.array([0.0, -0.0, 1.0, -1.0, 0.5, -2.0, np.inf, -np.inf, np.nan, 3.0, -3.0],
                        np.float32)
    base, exponent = np.meshgrid(specials, specials)
    ours = glasstorch.pow(glasstorch.from_numpy(base.ravel()),
                          glasstorch.from_numpy(exponent.ravel())).numpy()
    theirs = torch.pow(torch.from_numpy(base.ravel()), torch.from_numpy(exponent.ravel())).numpy()
    np.testing.assert_array_equal(ours, theirs)

"""The native CPU loops (kernels/native.c) against PyTorch, and the numpy
fallback against the same oracle, on sizes large enough to take the native path."""
import numpy as np
import pytest
from hypothesis import given, strategies as st

import glasstorch
from glasstorch._ops.kernels import native

from .helpers import assert_same

pytestmark = pytest.mark.skipif(native.library() is None, reason="no C compiler on this machine")


@pytest.mark.cpu_paths
@given(st.integers(1 << 14, 1 << 18), st.floats(-10, 10))
def test_sum_matches(torch, n, shift):
    """The native cascade sum, threaded as ATen's parallel_reduce: PyTorch's bits."""
    x = (np.random.default_rng(n).normal(size=n) + shift).astype(np.float32)
    ours = glasstorch.from_numpy(x).sum()
    theirs = torch.from_numpy(x).sum()
    assert_same(ours, theirs, atol=0, rtol=0)


def test_exp_special_values():
    x = np.array([np.nan, np.inf, -np.inf, 88.7, -87.5, -103.0, 0.0, 1e-8], np.float32)
    out = np.empty_like(x)
    native.exp(x, out)
    with np.errstate(all="ignore"):
        expected = np.exp(x.astype(np.float64)).astype(np.float32)
    np.testing.assert_allclose(out, expected, rtol=3e-7, atol=1e-44)


def test_threads_setting_round_trips():
    before = glasstorch.get_num_threads()
    glasstorch.set_num_threads(1)
    assert glasstorch.get_num_threads() == 1
    glasstorch.set_num_threads(before)


@pytest.mark.parametrize("op", ["add", "sub", "mul", "truediv"])
def test_large_arithmetic_matches(torch, op):
    """Large contiguous float32 arithmetic takes the threaded native loop."""
    rng = np.random.default_rng(1)
    x = rng.normal(size=(512, 1024)).astype(np.float32)
    y = rng.normal(size=(512, 1024)).astype(np.float32)
    y[0, :4] = [0.0, -0.0, np.inf, np.nan]
    import operator
    ours = getattr(operator, op)(glasstorch.from_numpy(x), glasstorch.from_numpy(y))
    theirs = getattr(operator, op)(torch.from_numpy(x), torch.from_numpy(y))
    assert_same(ours, theirs, atol=0, rtol=0)


@pytest.mark.parametrize("threads", [1, 2, 3])
@pytest.mark.parametrize("shape", [(300, 200, 100), (7, 600, 700), (64, 64, 64)])
def test_row_parallel_matmul_matches(torch, threads, shape):
    """mm and addmm split large products by rows over the intra-op threads; the
    result agrees with torch's whatever the thread count (the last bits may differ
    with the split, as they do across MKL thread counts)."""
    m, k, n = shape
    rng = np.random.default_rng(m)
    a, b = rng.standard_normal((m, k), np.float32), rng.standard_normal((k, n), np.float32)
    bias = rng.standard_normal(n).astype(np.float32)
    before = glasstorch.get_num_threads()
    glasstorch.set_num_threads(threads)
    try:
        ga, gb, gbias = (glasstorch.from_numpy(x) for x in (a, b, bias))
        ours = [glasstorch.mm(ga, gb), glasstorch.addmm(gbias, ga, gb)]
    finally:
        glasstorch.set_num_threads(before)
    ta, tb, tbias = (torch.from_numpy(x) for x in (a, b, bias))
    for got, want in zip(ours, [torch.mm(ta, tb), torch.addmm(tbias, ta, tb)]):
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-4, atol=1e-4)


FUSED_CASES = {
    "add-alpha": lambda L, a, b, c: L.add(a, b, alpha=-0.37),
    "sub-alpha": lambda L, a, b, c: L.sub(a, b, alpha=1.7),
    "add_-alpha": lambda L, a, b, c: a.clone().add_(b, alpha=2.5),
    "addcmul": lambda L, a, b, c: L.addcmul(a, b, c, value=0.1),
    "addcdiv": lambda L, a, b, c: L.addcdiv(a, b, c, value=-0.003),
    "lerp-small": lambda L, a, b, c: L.lerp(a, b, 0.1),
    "lerp-large": lambda L, a, b, c: L.lerp(a, b, 0.9),
}


@pytest.mark.cpu_paths
@pytest.mark.parametrize("name", list(FUSED_CASES))
@given(n=st.integers(1, 70000), seed=st.integers(0, 2**16))
def test_fused_loops_are_bit_identical_to_torch(torch, name, n, seed):
    """The optimizers' arithmetic in native.c rounds as ATen's loops do under the
    same CPU capability (fused multiply-adds under AVX2/AVX512, none under
    DEFAULT), so float32 results equal PyTorch's bit for bit."""
    rng = np.random.default_rng(seed)
    a, b = (rng.standard_normal(n).astype(np.float32) for _ in range(2))
    c = (rng.random(n) + 0.1).astype(np.float32)
    fn = FUSED_CASES[name]
    ours = fn(glasstorch, *(glasstorch.from_numpy(x) for x in (a, b, c))).numpy()
    theirs = fn(torch, *(torch.from_numpy(x) for x in (a, b, c))).numpy()
    np.testing.assert_array_equal(ours, theirs)


def _exact_gelu(x, g):
    """gelu and its backward in float64 with libm's erf (the reference)."""
    x = x.astype(np.float64)
    cdf = 0.5 * (1.0 + native.erf(x / np.sqrt(2.0)))
    pdf = np.exp(-0.5 * x * x) / np.sqrt(2.0 * np.pi)
    return x * cdf, g.astype(np.float64) * (cdf + x * pdf)


def _ulp(values):
    return np.spacing(np.abs(values).astype(np.float32)).astype(np.float64)


@pytest.mark.cpu_paths
def test_gelu_and_its_backward_accuracy(torch):
    """float32 gelu is within 2 ulp + 3e-7 of the exact value, its backward within
    2 ulp + 2.5e-7 |grad| (native.c: A&S erf, absolute error 1.5e-7), on every
    CPU.  PyTorch's bits come from oneDNN's erf approximation, which depends on
    the ISA (up to 1.1e-6 off on AVX-512, 2.6e-7 on AVX2, measured): ours and
    PyTorch's agree within the sum of the two bounds."""
    rng = np.random.default_rng(0)
    x = np.concatenate([rng.standard_normal(50000).astype(np.float32) * 3,
                        np.linspace(-12, 12, 20001, dtype=np.float32)])
    g = rng.standard_normal(x.size).astype(np.float32)
    forward, backward = _exact_gelu(x, g)
    ours = [glasstorch.nn.functional.gelu(glasstorch.from_numpy(x)).numpy(),
            glasstorch.ops.aten.gelu_backward.default(glasstorch.from_numpy(g),
                                                      glasstorch.from_numpy(x)).numpy()]
    theirs = [torch.nn.functional.gelu(torch.from_numpy(x)).numpy(),
              torch.ops.aten.gelu_backward.default(torch.from_numpy(g),
                                                   torch.from_numpy(x)).numpy()]
    forward_bound = 2 * _ulp(forward) + 3e-7
    backward_bound = 2 * _ulp(backward) + 2.5e-7 * np.abs(g)
    assert np.all(np.abs(ours[0] - forward) <= forward_bound)
    assert np.all(np.abs(ours[1] - backward) <= backward_bound)
    torch_forward_bound = 2 * _ulp(forward) + 1.5e-6
    assert np.all(np.abs(ours[0] - theirs[0].astype(np.float64)) <=
                  forward_bound + torch_forward_bound)
    assert np.all(np.abs(ours[1] - theirs[1].astype(np.float64)) <= 2 * backward_bound)


@pytest.mark.parametrize("user", [None, ("GOMP_SPINCOUNT", "0"), ("OMP_WAIT_POLICY", "ACTIVE")])
def test_libraries_load_with_a_short_openmp_spin(monkeypatch, user):
    """libgomp reads its spin count once, when the first library using it
    loads: load_library sets OPENMP_SPIN_ROUNDS for that moment only, and
    leaves a spin count or wait policy the user chose alone."""
    monkeypatch.delenv("GOMP_SPINCOUNT", raising=False)
    monkeypatch.delenv("OMP_WAIT_POLICY", raising=False)
    if user is not None:
        monkeypatch.setenv(*user)
    seen = []
    monkeypatch.setattr(native.ctypes, "CDLL",
                        lambda path: seen.append(native.os.environ.get("GOMP_SPINCOUNT")))
    native.load_library("kernels.so")
    assert seen == [str(native.OPENMP_SPIN_ROUNDS) if user is None else
                    "0" if user[0] == "GOMP_SPINCOUNT" else None]
    assert native.os.environ.get("GOMP_SPINCOUNT") == (user[1] if user and user[0] ==
                                                       "GOMP_SPINCOUNT" else None)

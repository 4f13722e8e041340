"""Results that depend on the CPU's code path, and the run that proves them on
every path from one machine.

PyTorch picks its kernels' code path at start-up (ATen's CPU capability:
``ATEN_CPU_CAPABILITY`` or the CPU flags; oneDNN's ISA; numpy has its own SIMD
dispatch).  glasstorch's promises (docs: kernels/native.py, cascade_sum.py):

- bit-identical to PyTorch run under the same setting: float32/float64 sum,
  mean, nansum (ATen's cascade order; the same on every capability), 1- and
  2-norms (kernels/norm_order.py) and so gradient clipping, float32
  softmax/log_softmax over the last dim (SLEEF's exp/log), linspace
  and logspace (fused multiply-adds under AVX2/AVX512 only), the fused
  elementwise loops (tests/test_native.py), float64 normal sampling
  (tests/test_random.py, tests/test_nn_init.py);
- a stated accuracy where PyTorch's bits come from a vendor approximation:
  gelu (oneDNN's erf), float32 normal sampling (PyTorch's AVX2 log/sin/cos);
- a stated accuracy where PyTorch's bits come from a vendor library, MKL:
  matmul/dot/mv (BLAS, summation order MKL's own per CPU) and the float unary
  math ATen hands to VML (exp, log, sin, sqrt ...: within about an ulp).
  Programs built on them follow torch's trajectory within bounds that hold on
  every path (tests/test_cubic_fit.py; LBFGS in tests/test_optim_extra.py).

Tests marked ``cpu_paths`` check these; ``test_every_cpu_path`` re-runs them in
subprocesses under each other path, so the suite proves them on one machine.
"""
from __future__ import annotations

import math
import os
import random
import subprocess
import sys

import numpy as np
import pytest
from hypothesis import given, strategies as st

import glasstorch
from glasstorch._ops.kernels import native

SIZES = st.one_of(st.sampled_from([1, 2, 3, 7, 8, 15, 16, 17, 31, 64, 100, 1000, 32768, 32769]),
                  st.integers(1, 70000))


def _same_bits(ours, theirs):
    ours, theirs = ours.detach().numpy(), theirs.detach().numpy()
    assert ours.dtype == theirs.dtype and ours.shape == theirs.shape
    assert ours.tobytes() == theirs.tobytes(), (ours, theirs)


def _pair(torch, array):
    return glasstorch.from_numpy(array.copy()), torch.from_numpy(array.copy())


@pytest.mark.cpu_paths
@given(n=SIZES, dtype=st.sampled_from(["float32", "float64"]), scale=st.sampled_from([1.0, 1e3]),
       seed=st.integers(0, 2**16))
def test_sum_mean_nansum_all_bit_identical(torch, n, dtype, scale, seed):
    x = (np.random.default_rng(seed).standard_normal(n) * scale + scale / 3).astype(dtype)
    ours, theirs = _pair(torch, x)
    for fn in ("sum", "mean", "nansum"):
        _same_bits(getattr(glasstorch, fn)(ours), getattr(torch, fn)(theirs))
    x[::5] = np.nan
    ours, theirs = _pair(torch, x)
    _same_bits(glasstorch.nansum(ours), torch.nansum(theirs))


@pytest.mark.cpu_paths
@given(shape=st.lists(st.integers(1, 70), min_size=2, max_size=3), data=st.data(),
       dtype=st.sampled_from(["float32", "float64"]), seed=st.integers(0, 2**16))
def test_sum_over_dims_bit_identical(torch, shape, data, dtype, seed):
    """Dim reductions of contiguous, transposed and sliced inputs (TensorIterator's
    dim order and each 2-d step's inner/outer, vector/scalar loop)."""
    x = np.random.default_rng(seed).standard_normal(shape).astype(dtype)
    dims = data.draw(st.lists(st.integers(0, len(shape) - 1), min_size=1, unique=True))
    keepdim = data.draw(st.booleans())
    ours, theirs = _pair(torch, x)
    for view in (lambda t: t, lambda t: t.transpose(0, -1), lambda t: t[..., ::2]):
        _same_bits(view(ours).sum(dims, keepdim=keepdim), view(theirs).sum(dims, keepdim=keepdim))
        _same_bits(view(ours).mean(dims), view(theirs).mean(dims))


@pytest.mark.cpu_paths
@pytest.mark.parametrize("shape, dims", [((40000, 3), (0,)), ((3, 40000), (1,)),
                                         ((300, 300), (0,)), ((2, 70000), ())])
def test_threaded_sum_bit_identical(torch, shape, dims):
    """From 32768 elements on PyTorch splits a sum between its threads (two-pass
    or along a kept dim); glasstorch splits it the same way."""
    x = np.random.default_rng(len(shape)).standard_normal(shape).astype(np.float32)
    ours, theirs = _pair(torch, x)
    assert glasstorch.get_num_threads() == torch.get_num_threads()
    _same_bits(ours.sum(dims) if dims else ours.sum(), theirs.sum(dims) if dims else theirs.sum())


@pytest.mark.cpu_paths
@given(shape=st.lists(st.integers(1, 40), min_size=1, max_size=3), data=st.data(),
       dtype=st.sampled_from(["float32", "float64"]), ord=st.sampled_from([1, 2]),
       seed=st.integers(0, 2**16))
def test_vector_norm_bit_identical(torch, shape, data, dtype, ord, seed):
    """1- and 2-norms in ATen's order (kernels/norm_order.py): the lane loop of
    contiguous rows, the running sum otherwise; whole, over dims, strided."""
    x = np.random.default_rng(seed).standard_normal(shape).astype(dtype) * 3
    dims = data.draw(st.none() | st.lists(st.integers(0, len(shape) - 1), min_size=1,
                                          unique=True))
    keepdim = data.draw(st.booleans())
    ours, theirs = _pair(torch, x)
    for view in (lambda t: t, lambda t: t.transpose(0, -1), lambda t: t[..., ::2]):
        _same_bits(glasstorch.linalg.vector_norm(view(ours), ord, dims, keepdim),
                   torch.linalg.vector_norm(view(theirs), ord, dims, keepdim))


@pytest.mark.cpu_paths
@pytest.mark.parametrize("n", [40000, 1000003])
@pytest.mark.parametrize("ord", [1, 2])
def test_long_vector_norm_bit_identical(torch, n, ord):
    """A 2-norm row is never split; a 1-norm over 32768+ elements is, one range
    per thread."""
    x = np.random.default_rng(n).standard_normal(n).astype(np.float32)
    ours, theirs = _pair(torch, x)
    _same_bits(glasstorch.linalg.vector_norm(ours, ord), torch.linalg.vector_norm(theirs, ord))


@pytest.mark.cpu_paths
def test_clip_grad_norm_bit_identical(torch):
    """Gradient clipping: per-gradient 2-norms, the norm of their stack, the scale."""
    rng = np.random.default_rng(0)
    shapes = [(37, 29), (29,), (5, 3, 3, 3), (1,)]
    grads = [rng.standard_normal(s).astype(np.float32) for s in shapes]
    results = []
    for lib in (glasstorch, torch):
        params = [lib.nn.Parameter(lib.zeros(s)) for s in shapes]
        for p, g in zip(params, grads):
            p.grad = lib.from_numpy(g.copy())
        total = lib.nn.utils.clip_grad_norm_(params, 0.5)
        results.append([total] + [p.grad for p in params])
    for ours, theirs in zip(*results):
        _same_bits(ours, theirs)


@pytest.mark.cpu_paths
@given(rows=st.integers(1, 40), cols=st.one_of(st.integers(1, 70), st.sampled_from([256, 1000])),
       scale=st.floats(0.01, 50.0), seed=st.integers(0, 2**16))
def test_softmax_log_softmax_cross_entropy_bit_identical(torch, rows, cols, scale, seed):
    """float32 softmax and log_softmax over the last dim in ATen's lane order, with
    SLEEF's exp and log (kernels/softmax_order.py, sleef.py), and so the log-probs
    cross_entropy starts from; also strided inputs (made contiguous first)."""
    x = (np.random.default_rng(seed).standard_normal((rows, cols)) * scale).astype(np.float32)
    ours, theirs = _pair(torch, x)
    for fn in ("softmax", "log_softmax"):
        _same_bits(getattr(glasstorch, fn)(ours, -1), getattr(torch, fn)(theirs, -1))
        _same_bits(getattr(glasstorch, fn)(ours.t(), -1), getattr(torch, fn)(theirs.t(), -1))


@pytest.mark.cpu_paths
@given(rows=st.integers(1, 300), classes=st.integers(1, 70), weighted=st.booleans(),
       ignored=st.sampled_from([0.0, 0.3]), reduction=st.sampled_from(["mean", "sum"]),
       seed=st.integers(0, 2**16))
def test_cross_entropy_and_gradient_bit_identical(torch, rows, classes, weighted, ignored,
                                                  reduction, seed):
    """cross_entropy = log_softmax + nll_loss (LossNLL.cpp's cascaded sums, native.c's
    gt_nll_cascade), and its gradient through _log_softmax_backward_data (fused under
    AVX2/AVX512); softmax's gradient too."""
    rng = np.random.default_rng(seed)
    x = (rng.standard_normal((rows, classes)) * 3).astype(np.float32)
    t = rng.integers(0, classes, rows)
    t[rng.random(rows) < ignored] = -100
    w = rng.uniform(0.1, 2.0, classes).astype(np.float32) if weighted else None
    g = rng.standard_normal((rows, classes)).astype(np.float32)
    results = []
    for lib in (glasstorch, torch):
        logits = lib.from_numpy(x.copy()).requires_grad_()
        loss = lib.nn.functional.cross_entropy(
            logits, lib.from_numpy(t.copy()), weight=None if w is None else lib.from_numpy(w),
            reduction=reduction)
        loss.backward()
        probs = lib.from_numpy(x.copy()).requires_grad_()
        lib.softmax(probs, -1).backward(lib.from_numpy(g))
        results.append((loss, logits.grad, probs.grad))
    for ours, theirs in zip(*results):
        _same_bits(ours, theirs)


@pytest.mark.cpu_paths
@pytest.mark.parametrize("rows,threads", [(1, 2), (2, 2), (3, 1)])
def test_softmax_backward_serial_and_parallel_rows(torch, rows, threads):
    """ATen's softmax backward sums g * y differently where it runs the rows
    serially (one row, or one thread) than in OpenMP's threads (softmax_order.py);
    every row length up to a few lane blocks, under both."""
    rng = np.random.default_rng(rows * 10 + threads)
    before = torch.get_num_threads(), glasstorch.get_num_threads()
    torch.set_num_threads(threads)
    glasstorch.set_num_threads(threads)
    try:
        for cols in range(1, 70):
            x = (rng.standard_normal((rows, cols)) * 3).astype(np.float32)
            g = rng.standard_normal((rows, cols)).astype(np.float32)
            grads = []
            for lib in (glasstorch, torch):
                p = lib.from_numpy(x.copy()).requires_grad_()
                lib.softmax(p, -1).backward(lib.from_numpy(g.copy()))
                grads.append(p.grad)
            _same_bits(*grads)
    finally:
        torch.set_num_threads(before[0])
        glasstorch.set_num_threads(before[1])


@pytest.mark.cpu_paths
def test_softmax_nan_and_inf_rows(torch):
    x = np.random.default_rng(0).normal(size=(5, 40)).astype(np.float32)
    x[1, 7] = np.nan
    x[2, :] = -np.inf
    x[3, 5] = np.inf
    x[4, :] = 1e30
    ours, theirs = _pair(torch, x)
    for fn in ("softmax", "log_softmax"):
        a = getattr(glasstorch, fn)(ours, -1).numpy()
        b = getattr(torch, fn)(theirs, -1).numpy()
        assert np.array_equal(a, b, equal_nan=True), fn


@pytest.mark.cpu_paths
@given(start=st.floats(-1e4, 1e4), length=st.floats(1e-3, 1e4), steps=st.integers(1, 5000),
       dtype=st.sampled_from(["float32", "float64"]), descending=st.booleans())
def test_linspace_logspace_bit_identical(torch, start, length, steps, dtype, descending):
    end = start - length if descending else start + length
    _same_bits(glasstorch.linspace(start, end, steps, dtype=getattr(glasstorch, dtype)),
               torch.linspace(start, end, steps, dtype=getattr(torch, dtype)))
    lo, hi = start / 1e3, end / 1e3
    _same_bits(glasstorch.logspace(lo, hi, steps, dtype=getattr(glasstorch, dtype)),
               torch.logspace(lo, hi, steps, dtype=getattr(torch, dtype)))


@pytest.mark.cpu_paths
@given(n=st.integers(1, 3000), dtype=st.sampled_from(["float32", "float64"]),
       broadcast=st.booleans(), scalar=st.floats(-3, 3, allow_nan=False).filter(lambda v: v != 1),
       seed=st.integers(0, 2**16))
def test_fused_elementwise_bit_identical(torch, n, dtype, broadcast, scalar, seed):
    """add/sub with alpha, addcmul, lerp of float32/float64: bit-identical for
    equal-shape operands (ATen's vector loop and its tail fuse as the capability
    says); with a broadcast operand ATen's scalar-operand loop rounds its tail
    its own way per dtype, so there the promise is 1 ulp of the terms' size."""
    rng = np.random.default_rng(seed)
    a, b, c = (rng.standard_normal(n).astype(dtype) for _ in range(3))
    if broadcast:
        b = b[:1]
    (ga, ta), (gb, tb), (gc, tc) = _pair(torch, a), _pair(torch, b), _pair(torch, c)
    pairs = [(glasstorch.add(ga, gb, alpha=scalar), torch.add(ta, tb, alpha=scalar)),
             (glasstorch.sub(ga, gb, alpha=scalar), torch.sub(ta, tb, alpha=scalar)),
             (glasstorch.addcmul(ga, gb, gc, value=scalar), torch.addcmul(ta, tb, tc, value=scalar)),
             (glasstorch.lerp(ga, gc, scalar), torch.lerp(ta, tc, scalar))]
    terms = np.abs(a) + abs(scalar) * (np.abs(b) + 1) * (np.abs(c) + 1)
    for ours, theirs in pairs:
        if broadcast:
            ours, theirs = ours.numpy(), theirs.numpy()
            assert np.all(np.abs(ours - theirs) <= np.spacing(terms.astype(dtype))), (ours, theirs)
        else:
            _same_bits(ours, theirs)


@pytest.mark.cpu_paths
def test_the_tutorials_data_bit_identical(torch):
    """The cubic-fit tutorial's x (linspace(-pi, pi, 2000)) and a float32 sum of 7
    and of 100 elements: the two gaps the tutorial's drift was traced to."""
    _same_bits(glasstorch.linspace(-math.pi, math.pi, 2000), torch.linspace(-math.pi, math.pi, 2000))
    for n in (7, 100):
        x = np.random.default_rng(n).standard_normal(n).astype(np.float32)
        ours, theirs = _pair(torch, x)
        _same_bits(ours.sum(), theirs.sum())


def test_capability_is_atens(torch):
    assert glasstorch.backends.cpu.get_cpu_capability() == torch.backends.cpu.get_cpu_capability()


# -- every other code path, from this machine ------------------------------------------------

NPY_NO_AVX512 = "X86_V4 AVX512_ICL AVX512_SPR"
PATHS = {   # the switches are independent: one run can flip several
    "aten-avx2, onednn-avx2, numpy without AVX-512": {
        "ATEN_CPU_CAPABILITY": "avx2", "ONEDNN_MAX_CPU_ISA": "AVX2",
        "NPY_DISABLE_CPU_FEATURES": NPY_NO_AVX512},
    "aten-default": {"ATEN_CPU_CAPABILITY": "default"},
    "aten-default, no C compiler (numpy fallbacks)": {"ATEN_CPU_CAPABILITY": "default",
                                                      "GLASSTORCH_NATIVE": "0"},
}
MARKED = ["tests/test_cpu_paths.py", "tests/test_native.py", "tests/test_nn_init.py",
          "tests/test_random.py", "tests/test_gpt_model.py", "tests/test_cubic_fit.py",
          "tests/test_optim_extra.py", "tests/test_nn_layers.py", "tests/test_quantile_histc.py",
          "tests/test_random_streams.py", "tests/test_low_precision.py", "tests/test_special.py",
          "tests/test_fft_native.py", "tests/test_pow_accuracy.py"]


@pytest.mark.parametrize("path", list(PATHS))
def test_every_cpu_path(path):
    """The ``cpu_paths`` tests again, in a fresh process under another code path
    (a fresh process: ATen, oneDNN and numpy choose once, at start-up).  The
    Hypothesis seed is printed; rerun with it to reproduce a failure."""
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    seed = int(os.environ.get("GLASSTORCH_CPU_PATHS_SEED", random.randrange(2**32)))
    env = {**os.environ, **PATHS[path]}
    command = [sys.executable, "-m", "pytest", "-q", "-x", "-m", "cpu_paths", "-p",
               "no:cacheprovider", "-p", "no:warnings", "--tb=short",
               f"--hypothesis-seed={seed}", *MARKED]
    print(f"{path}: {' '.join(f'{k}={v!r}' for k, v in PATHS[path].items())} "
          f"GLASSTORCH_CPU_PATHS_SEED={seed}")
    result = subprocess.run(command, cwd=root, env=env, capture_output=True, text=True)
    assert result.returncode == 0, f"under {path} (seed {seed}):\n{result.stdout[:8000]}" \
                                   f"{result.stderr[-2000:]}"
    assert " passed" in result.stdout

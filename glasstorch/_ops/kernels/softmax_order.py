"""float32 softmax and log_softmax over the last dim in ATen's order
(SoftMaxKernel.cpp's ``_vec_softmax_lastdim`` / ``_vec_log_softmax_lastdim``),
so that they, and cross_entropy built on them, equal PyTorch's bit for bit.

Per row, with ``Vectorized<float>`` lanes (16 under the AVX512 capability, 8
under AVX2 and DEFAULT):

    max      the row's maximum (a NaN anywhere makes it NaN)
    e        exp(x - max): SLEEF's expf_u10 (AVX2, AVX512) or libm's expf (DEFAULT)
    sum      reduce_all: the first lanes-wide block, each further block added
             lane-wise, the leftover elements added into the first lanes, then
             the lanes folded in halves (AVX2/AVX512's shuffles) or one by one
             (DEFAULT); a row shorter than the lanes is added element by element
    softmax      e * (1 / sum)
    log_softmax  (x - max) - log(sum), SLEEF's logf_u10 or libm's logf

and their backward (``_vec_host_softmax_backward_lastdim``), with y the output:

    softmax      (g - sum(g * y)) * y
    log_softmax  g - exp(y) * sum(g), fused (fma) under AVX2/AVX512

softmax's ``sum(g * y)`` (``map2_reduce_all``) has one more wrinkle: where ATen
runs the row loop serially (one row, or one thread: ``parallel_for`` calls the
loop body inline), the compiler fused the leftover lanes' ``acc + g * y`` into an
fma under AVX2/AVX512; the loop body OpenMP's threads run keeps them apart.
Measured against torch 2.13: rows of 1 and 2 with equal data differ in 5% of cases,
and each follows this rule bit for bit.
"""
from __future__ import annotations

import numpy as np

from . import native, sleef
from .native import cpu_capability, fma, fused, libm_f32

f32 = np.float32


def softmax_rows(x: np.ndarray, log: bool, out: np.ndarray | None = None) -> np.ndarray:
    """Softmax (or log_softmax) of each row of the 2-d float32 array ``x``: the
    native loop (native.c), written into ``out`` when given (C-contiguous), or the
    same steps in numpy where there is no compiler."""
    capability = cpu_capability()
    vectorized = capability != "DEFAULT"
    lanes = 16 if capability == "AVX512" else 8
    if native.library() is not None:
        x = np.ascontiguousarray(x)
        out = np.empty_like(x) if out is None else out
        native.softmax(x, out, log, lanes, vectorized, not vectorized)
        return out
    with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
        top = x.max(axis=1, keepdims=True) if x.shape[1] else np.zeros((x.shape[0], 1), f32)
        shifted = x - top
        e = sleef.expf_u10(shifted) if vectorized else libm_f32("expf", shifted)
        total = _reduce_all(e, lanes, vectorized)[:, None]
        if log:
            result = shifted - (sleef.logf_u10(total) if vectorized else libm_f32("logf", total))
        else:
            result = e * (f32(1) / total)
    if out is None:
        return result
    out[...] = result
    return out


def softmax_backward_rows(g: np.ndarray, y: np.ndarray, log: bool) -> np.ndarray:
    """The gradient of softmax (or log_softmax) rows: ``g`` the output's gradient,
    ``y`` the output, both 2-d float32 (see the module docstring)."""
    capability = cpu_capability()
    vectorized = capability != "DEFAULT"
    lanes = 16 if capability == "AVX512" else 8
    fused_tail = bool(fused()) and (g.shape[0] == 1 or native.get_num_threads() == 1)
    if native.library() is not None:
        g, y = np.ascontiguousarray(g), np.ascontiguousarray(y)
        out = np.empty_like(g)
        native.softmax_backward(g, y, out, log, lanes, vectorized, not vectorized, fused(),
                                fused_tail)
        return out
    with np.errstate(invalid="ignore", over="ignore"):
        if not log:
            total = _reduce_all(g * y, lanes, vectorized, (g, y) if fused_tail else None)
            return (g - total[:, None]) * y
        total = np.broadcast_to(_reduce_all(g, lanes, vectorized)[:, None], g.shape)
        e = sleef.expf_u10(y) if vectorized else libm_f32("expf", y)
        return fma(-e, total, g) if fused() else g - e * total


def _lanes():
    capability = cpu_capability()
    return capability != "DEFAULT", 16 if capability == "AVX512" else 8


def exp_rows(x: np.ndarray) -> np.ndarray:
    """exp of float32 ``x`` as the vectorized kernels take it (SLEEF, or libm under DEFAULT)."""
    return sleef.expf_u10(x) if _lanes()[0] else libm_f32("expf", x)


def log_rows(x: np.ndarray) -> np.ndarray:
    """log of float32 ``x`` as the vectorized kernels take it (SLEEF, or libm under DEFAULT)."""
    return sleef.logf_u10(x) if _lanes()[0] else libm_f32("logf", x)


def row_sums(e: np.ndarray) -> np.ndarray:
    """vec::reduce_all(+) of each row of the 2-d float32 ``e``."""
    vectorized, lanes = _lanes()
    return _reduce_all(e, lanes, vectorized)


def _reduce_all(e, lanes, halves, fused_factors=None):
    """vec::reduce_all(+) of each row (see the module docstring); ``fused_factors``
    (a, b) with ``e = a * b``: the leftover lanes are added as fma(a, b, acc)."""
    n = e.shape[1]
    if n < lanes:
        total = e[:, 0] if n else np.zeros(e.shape[0], f32)
        for j in range(1, n):
            total = total + e[:, j]
        return total
    whole = n - n % lanes
    acc = np.cumsum(e[:, :whole].reshape(e.shape[0], -1, lanes), axis=1, dtype=f32)[:, -1]
    if whole < n and fused_factors is not None:
        a, b = fused_factors
        acc[:, :n - whole] = fma(a[:, whole:], b[:, whole:], acc[:, :n - whole])
    elif whole < n:
        acc[:, :n - whole] += e[:, whole:]
    if halves:
        width = lanes
        while width > 1:
            width //= 2
            acc = acc[:, :width] + acc[:, width:2 * width]
        return acc[:, 0]
    total = acc[:, 0]
    for j in range(1, lanes):
        total = total + acc[:, j]
    return total

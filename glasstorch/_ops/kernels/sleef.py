"""SLEEF's float32 ``expf_u10`` and ``logf_u10``, step for step, in numpy.

ATen's vectorized CPU kernels (``Vectorized<float>::exp()`` / ``log()`` under the
AVX2 and AVX512 capabilities) call SLEEF, the vectorized math library PyTorch
builds in; softmax and log_softmax go through them.  Each SLEEF function is a
fixed sequence of float32 operations, fused multiply-adds included, so the
same sequence here gives the same bits (its AVX2 and AVX512 builds agree).

    exp:  q = rint(d / ln 2); s = d - q ln 2 (ln 2 in two parts, fused);
          a degree-6 polynomial in s (fused, Horner); 1 + s + s^2 p(s); times 2^q
    log:  d = m 2^e with m in [0.75, 1.5); x = (m - 1) / (m + 1) and the sum
          e ln 2 + 2x + x^3 t(x^2) carried in float-float (a value plus its error)

The constants are SLEEF's; the float-float helpers are its ``df*`` functions.
"""
from __future__ import annotations

import numpy as np

from .native import fma

f32 = np.float32
_R_LN2 = f32(1.442695040888963407359924681001892137426645954152985934135449406931)
_L2U, _L2L = f32(0.693145751953125), f32(1.428606765330187045e-06)
_EXP_POLY = [f32(c) for c in (0.000198527617612853646278381, 0.00139304355252534151077271,
                              0.00833336077630519866943359, 0.0416664853692054748535156,
                              0.166666671633720397949219, 0.5)]
_LN2_HI, _LN2_LO = f32(0.69314718246459960938), f32(-1.904654323148236017e-09)
_LOG_POLY = [f32(c) for c in (0.3027294874, 0.3996108174, 0.6666694880)]


def _pow2i(q):
    """2**q as a float32 built from its exponent bits."""
    return ((q + 0x7f).astype(np.int32) << 23).view(f32)


def expf_u10(d: np.ndarray) -> np.ndarray:
    d = np.asarray(d, f32)
    with np.errstate(invalid="ignore", over="ignore"):
        qf = np.rint(d * _R_LN2)
        q = np.where(np.isfinite(qf), qf, 0).astype(np.int32)
        qf = q.astype(f32)
        s = fma(qf, -_L2U, d)
        s = fma(qf, -_L2L, s)
        u = np.full_like(s, _EXP_POLY[0])
        for c in _EXP_POLY[1:]:
            u = fma(u, s, c)
        u = f32(1) + fma(s * s, u, s)
        half = q >> 1
        u = (u * _pow2i(half)) * _pow2i(q - half)      # 2^q in two steps: no overflow
        u = np.where(d < -104, f32(0), u)
        u = np.where(d > 100, f32(np.inf), u)
        return np.where(np.isnan(d), d, u).astype(f32)


# float-float arithmetic: (hi, lo) pairs, as SLEEF's df.h with fused multiply-adds

def _add2(x, y):
    s = x + y
    v = s - x
    return s, (x - (s - v)) + (y - v)


def _div(nx, ny, dx, dy):
    t = f32(1) / dx
    s = nx * t
    u = fma(t, nx, -s)
    v = fma(-dy, t, fma(-dx, t, f32(1)))
    return s, fma(s, v, fma(ny, t, u))


def logf_u10(d: np.ndarray) -> np.ndarray:
    d = np.asarray(d, f32)
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        tiny = d < np.finfo(f32).tiny
        d2 = np.where(tiny, d * f32(2.0 ** 64), d)
        e = ((((d2 * f32(1.0 / 0.75)).view(np.int32) >> 23) & 0xff) - 0x7f).astype(np.int32)
        m = (d2.view(np.int32) + ((-e) << 23)).astype(np.int32).view(f32)
        e = np.where(tiny, e - 64, e).astype(f32)
        sx = _LN2_HI * e                                    # dfmul(ln 2 as hi + lo, e)
        sy = fma(_LN2_LO, e, fma(_LN2_HI, e, -sx))
        x, xl = _div(*_add2(f32(-1), m), *_add2(f32(1), m))
        x2 = x * x
        t = np.full_like(x2, _LOG_POLY[0])
        for c in _LOG_POLY[1:]:
            t = fma(t, x2, c)
        hx, hl = x * f32(2), xl * f32(2)                   # dfadd(s, dfscale(x, 2))
        s = sx + hx
        sy = (((sx - s) + hx) + sy) + hl
        y = (x2 * x) * t                                    # dfadd(s, x^3 t)
        r = s + y
        sy = ((s - r) + y) + sy
        r = r + sy
        r = np.where(np.isposinf(d), f32(np.inf), r)
        r = np.where((d < 0) | np.isnan(d), f32(np.nan), r)
        return np.where(d == 0, f32(-np.inf), r).astype(f32)

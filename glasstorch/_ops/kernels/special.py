"""Special functions: torch.special's kernels and their top-level spellings
(lgamma, digamma, polygamma, mvlgamma, igamma/igammac, i0, sinc ...).

ATen computes these element by element with the algorithms of
``ATen/native/Math.h`` (mostly Cephes); here the same algorithms run
vectorised in numpy, one masked step per loop iteration of the C code.
Each function takes an array in the compute dtype (float32 for float32,
float16 and bfloat16, as ATen's opmath; float64 for float64) and works in
that dtype unless ATen widens (``zeta`` accumulates in double on CPU, the
reflection of ``digamma`` takes its tangent in double).

Accuracy against torch (tests/test_special.py states and checks it): the
functions ATen computes in scalar loops from Math.h (the Bessel functions
i0/i0e/i1/i1e, modified_bessel_i0/i1/k0/k1, scaled_modified_bessel_k0/k1,
bessel_j0/j1/y0/y1, airy_ai, spherical_bessel_j0 and the orthogonal
polynomials) are reproduced to the bit in float64 and float32: the same
operations in the same order, the multiply-adds GCC contracts into fmas in
ATen's AVX2/AVX512 builds fused too (``_mad``), and glibc's libm functions
(``_libm``).  Where Math.h's algorithm is reproduced without that care
(digamma, trigamma, polygamma, zeta, ndtri, log_ndtr, entr, sinc, xlog1py)
float64 agrees to about 1e-13 relative; lgamma is the C library's, as
std::lgamma is; erfcx is exp(x^2)
erfc(x) with x^2 split exactly plus a continued fraction (ATen: Faddeeva's
Chebyshev table; 1e-15), and igamma/igammac use Math.h's series and continued
fractions where ATen uses its 25-term asymptotic series for large a near x
(a <= 2e4; Temme's expansion to two orders beyond): there ATen's own error,
about 2e-9, is the difference.
"""
from __future__ import annotations

import ctypes
import math

import numpy as np

from ..._core import dtype as dt
from ..._dispatcher.dispatcher import ops
from ..registry import _resize_out
from ..structured import result_type
from . import impl, kernel, meta, native
from .pointwise import (_alias, binary_float_meta, binary_meta, cast_operand, float_type,
                        not_implemented, quiet, unary_float_meta, write)

aten = ops.aten

_REDUCED = (dt.float16, dt.bfloat16)
_INF, _NAN = math.inf, math.nan


def _check(cpu_name, d: dt.dtype, reduced: bool, complex_ok: bool = False) -> None:
    """The CPU dispatch macro's error for a dtype the kernel has no loop for
    (complex always but for sinc; float16/bfloat16 where ATen's macro leaves them out)."""
    if (d.is_complex and not complex_ok) or (not reduced and d in _REDUCED):
        raise not_implemented(cpu_name, d)


def _unary(name, cpu_name, fn, *, reduced=True, complex_ok=False):
    """A structured unary op whose integer and bool inputs give the default
    float dtype (TensorIterator's ``promote_integer_inputs_to_float``)."""
    meta(name)(unary_float_meta)

    @impl(name)
    @quiet
    def body(out, self):
        d = float_type(self.dtype)
        _check(cpu_name, d, reduced, complex_ok)
        write(out, fn(self._np().astype(d.opmath, copy=False)))
    body.__name__ = f"{name}_impl"


def _binary(name, cpu_name, fn, *, ints=True, reduced=True):
    """A structured binary op (broadcast, promotion; integers give the default
    float unless ``ints`` is False, where the CPU kernel refuses them)."""
    meta(name)(binary_float_meta if ints else binary_meta)

    @impl(name)
    @quiet
    def body(out, self, other):
        rt = result_type(self, other)
        if not ints and rt.category < dt.FLOATING:
            raise not_implemented(cpu_name, rt)
        ft = float_type(rt)
        _check(cpu_name, ft, reduced)
        compute = ft.opmath
        a = np.asarray(cast_operand(self, ft, compute), compute)
        b = np.asarray(cast_operand(other, ft, compute), compute)
        a, b = np.broadcast_arrays(a, b)
        write(out, fn(a, b))
    body.__name__ = f"{name}_impl"


def _mad(a, b, c):
    """a * b + c as GCC compiles it in ATen's scalar loops of Math.h: contracted
    into one fma under AVX2/AVX512, else two roundings (``native.fused``).  The
    native fused loop of addcmul (c + 1 * a * b) does it where it is loaded,
    else numpy's emulation (native.multiply_add)."""
    dtype = np.result_type(a, b, c)
    shape = np.broadcast_shapes(np.shape(a), np.shape(b), np.shape(c))
    a, b, c = (np.ascontiguousarray(np.broadcast_to(np.asarray(v, dtype), shape))
               for v in (a, b, c))
    if not native.fusable(a, b, c):
        return native.multiply_add(a, b, c)
    out = np.empty(shape, dtype)
    if out.size:
        native.addcmul(c, a, b, 1.0, out)
    return out


def _libm(name, x):
    """std::``name`` (cos, sin, exp, log or acos) as ATen's scalar loops call it:
    glibc's double and float functions, never numpy's (numpy's exp is an ulp off
    glibc's in about 5% of arguments, and glibc's sinf/cosf are not correctly
    rounded, so a rounded double result differs from theirs in about 1%).  One
    native loop over the array where the library is loaded; without it the C
    library is called per element (native.libm's and libm_f32's fallbacks).
    Non-finite arguments give libm's answers: nan for cos/sin of +-inf, -inf for
    log(0)."""
    if x.dtype == np.float32:
        return native.libm_f32(name + "f", x).reshape(x.shape)
    return native.libm(name, x).reshape(x.shape)


def _table(t, coefficients):
    return [t(c) for c in coefficients]


def _polevl(x, coefficients, fused: bool = False):
    """Cephes' polevl: the polynomial with ``coefficients`` highest degree first
    (Horner; each step one fma where ``fused``)."""
    result = np.zeros_like(x)
    for c in coefficients:
        result = _mad(result, x, c) if fused else result * x + c
    return result


def _p1evl(x, coefficients):
    """Cephes' p1evl: as polevl with an implied leading coefficient 1."""
    result = x + coefficients[0]
    for c in coefficients[1:]:
        result = result * x + c
    return result


def _chbevl(x, coefficients, fused: bool = False):
    """Cephes' chbevl: a Chebyshev series by Clenshaw's recurrence (x b1 - b2
    one fma where ``fused``)."""
    b0, b1, b2 = np.full_like(x, coefficients[0]), np.zeros_like(x), np.zeros_like(x)
    for c in coefficients[1:]:
        b2, b1 = b1, b0
        b0 = (_mad(x, b1, -b2) if fused else x * b1 - b2) + c
    return 0.5 * (b0 - b2)


# -- the gamma family: lgamma, digamma, polygamma, mvlgamma ---------------------------------

def _lgamma(x):
    """log|Gamma(x)| (std::lgamma: the C library's, +inf at the poles), computed in
    double and rounded to x's dtype."""
    return native.libm("lgamma", x).reshape(np.shape(x)).astype(x.dtype)


_PSI_10 = 2.25175258906672110764   # digamma(10)
_DIGAMMA_ASYMPTOTIC = (8.33333333333333333333E-2, -2.10927960927960927961E-2,
                       7.57575757575757575758E-3, -4.16666666666666666667E-3,
                       3.96825396825396825397E-3, -8.33333333333333333333E-3,
                       8.33333333333333333333E-2)


def _digamma_positive(x):
    """calc_digamma for x > 0 (or nan / inf): recur up to 10, then the asymptotic series."""
    t = x.dtype.type
    result = np.zeros_like(x)
    below = x < 10
    while below.any():
        result = np.where(below, result - t(1) / x, result)
        x = np.where(below, x + t(1), x)
        below = x < 10
    z = t(1) / (x * x)
    y = np.where(x < t(1e17), z * _polevl(z, [t(c) for c in _DIGAMMA_ASYMPTOTIC]), t(0))
    series = result + np.log(x) - t(0.5) / x - y
    return np.where(x == 10, result + t(_PSI_10), series)


def _digamma(x):
    """calc_digamma: +-inf at +-0, nan at the negative integers, and for other
    x < 0 the reflection psi(1 - x) - pi / tan(pi r), r the fractional part
    (the tangent taken in double)."""
    t = x.dtype.type
    negative = x < 0
    r = np.modf(np.asarray(x, np.float64))[0]
    reflection = (math.pi / np.tan(math.pi * r)).astype(x.dtype)
    value = _digamma_positive(np.where(negative, t(1) - x, x))
    value = np.where(negative, value - reflection, value)
    value = np.where(negative & (x == np.trunc(x)), t(_NAN), value)
    return np.where(x == 0, np.copysign(t(_INF), -x), value)


def _trigamma(x):
    """ATen's trigamma (polygamma(1, x)): reflection below 1/2, six steps of the
    recurrence, then the asymptotic series."""
    t = x.dtype.type
    pi = t(math.pi)
    reflect = x < t(0.5)
    sin_pi_x = np.sin(pi * x)
    result = np.where(reflect, -(pi * pi) / (sin_pi_x * sin_pi_x), t(0))
    x = np.where(reflect, t(1) - x, x)
    for _ in range(6):
        result = result + t(1) / (x * x)
        x = x + t(1)
    ixx = t(1) / (x * x)
    result = result + (t(1) + t(1) / (t(2) * x) + ixx * (t(1 / 6) - ixx * (
        t(1 / 30) - ixx * t(1 / 42)))) / x
    return np.where(reflect, -result, result)


_ZETA_A = (12.0, -720.0, 30240.0, -1209600.0, 47900160.0, -1.8924375803183791606e9,
           7.47242496e10, -2.950130727918164224e12, 1.1646782814350067249e14,
           -4.5979787224074726105e15, 1.8152105401943546773e17, -7.1661652561756670113e18)
_MACHEP = 1.11022302462515654042E-16


def _zeta(x, q):
    """Hurwitz zeta(x, q) (Cephes' zeta, accumulated in double as ATen's CPU
    kernel does): direct summation until the terms are negligible or q passes
    9 after at least 9 terms, then the Euler-Maclaurin tail."""
    out_dtype = np.result_type(x, q)
    x, q = np.broadcast_arrays(np.asarray(x, np.float64), np.asarray(q, np.float64))
    result = np.full(x.shape, _NAN)
    result[x == 1] = _INF
    pole = (q <= 0) & (q == np.floor(q)) & ~(x <= 1)     # checked after x == 1 and x < 1
    result[pole] = _INF
    bad = (x < 1) | ((q <= 0) & ~pole & (x != np.floor(x)))
    live = ~((x == 1) | pole | bad)
    xs, a = x[live], q[live].copy()
    s = a ** -xs
    b = np.zeros_like(s)
    done = np.zeros(s.shape, bool)
    i = 0
    while True:
        step = ~done & ((i < 9) | (a <= 9))
        if not step.any():
            break
        i += 1
        a = np.where(step, a + 1, a)
        b = np.where(step, a ** -xs, b)
        s = np.where(step, s + b, s)
        done |= step & (-_MACHEP * s < b) & (b < _MACHEP * s)
    w = a
    tail = ~done
    s = np.where(tail, s + b * w / (xs - 1) - 0.5 * b, s)
    a_k, k = np.ones_like(s), np.zeros_like(s)
    for coefficient in _ZETA_A:
        a_k = a_k * (xs + k)
        b = b / w
        term = a_k * b / coefficient
        s = np.where(tail, s + term, s)
        tail &= ~(np.abs(term / s) < _MACHEP)
        k = k + 1
        a_k = a_k * (xs + k)
        b = b / w
        k = k + 1
    result[live] = s
    return result.astype(out_dtype)


def _polygamma(n: int, x):
    """calc_polygamma: (-1)^(n+1) n! zeta(n + 1, x) for n >= 2."""
    t = x.dtype.type
    if t is np.float32:     # std::exp(std::lgamma(n + 1)) in the dtype, as ATen computes n!
        factorial = t(native.c_function("expf", ctypes.c_float)(
            native.c_function("lgammaf", ctypes.c_float)(n + 1.0)))
    else:
        factorial = t(math.exp(native.c_function("lgamma")(n + 1.0)))
    sign = t(1) if n % 2 else t(-1)
    return sign * factorial * _zeta(np.full_like(x, n + 1), x).astype(x.dtype)


_unary("lgamma", "lgamma_vml_cpu", _lgamma)
_unary("digamma", "digamma", _digamma)


@meta("polygamma")
def polygamma_meta(n, self):
    if n < 0:
        raise RuntimeError("polygamma(n, x) does not support negative n.")
    return unary_float_meta(self)


@impl("polygamma")
@quiet
def polygamma_impl(out, n, self):
    """n = 0 is digamma's kernel, n = 1 trigamma's, others zeta's (ATen's dispatch)."""
    d = float_type(self.dtype)
    _check(("digamma", "trigamma", "polygamma")[min(n, 2)], d, True)
    x = self._np().astype(d.opmath, copy=False)
    write(out, _digamma(x) if n == 0 else _trigamma(x) if n == 1 else _polygamma(n, x))


@kernel("polygamma_")
def polygamma_(self, n):
    """``x.polygamma_(n)``: polygamma written into x (ATen: polygamma_out(self, n, self))."""
    return aten.polygamma.out(n, self, out=self)


def _mvlgamma_check(self, p):
    if self.dtype is dt.bool_:
        raise RuntimeError("The input tensor may not be a boolean tensor.")
    if p < 1:
        raise RuntimeError("p has to be greater than or equal to 1")


def _mvlgamma_args(self, p):
    """x - j/2 for j = 0 .. p-1 along a new last dim (in the result's float dtype)."""
    dtype = float_type(self.dtype)
    args = aten.arange.start_step(-p * 0.5 + 0.5, 0.5, 0.5, dtype=dtype, device=self.device)
    return aten.add.Tensor(args, aten.unsqueeze.default(self, -1))


@kernel("mvlgamma")
def mvlgamma(self, p):
    """The multivariate log-gamma: sum_j lgamma(x - j/2) + p(p-1)/4 log(pi)
    (ATen's mvlgamma, composed of ops)."""
    _mvlgamma_check(self, p)
    total = aten.sum.dim_IntList(aten.lgamma_.default(_mvlgamma_args(self, p)), [-1])
    return aten.add_.Scalar(total, p * (p - 1) * math.log(math.pi) * 0.25)


@kernel("mvlgamma_")
def mvlgamma_(self, p):
    """``x.mvlgamma_(p)``: mvlgamma.out into x itself, as ATen's (an integer x refused)."""
    return mvlgamma_out(self, p, out=self)


@kernel("mvlgamma.out")
def mvlgamma_out(self, p, *, out):
    """mvlgamma into ``out`` (resized with resize_output's warning; any dtype
    the result casts to; ATen's message names the input's type, then the result's)."""
    result = mvlgamma(self, p)
    if not dt.can_cast(result.dtype, out.dtype):
        raise RuntimeError(f"mvlgamma: result type {self.dtype._short} can't be cast to the "
                           f"desired output type {result.dtype._short}")
    if out._shape != result._shape:
        _resize_out(out, result._shape)
    return aten.copy_.default(out, result)


# -- the incomplete gamma functions igamma / igammac ------------------------------------------

_MAXLOG = 7.09782712893383996843E2
_LANCZOS_G = 6.024680040776729583740234375
_LANCZOS_NUM = (0.006061842346248906525783753964555936883222,
                0.5098416655656676188125178644804694509993,
                19.51992788247617482847860966235652136208,
                449.9445569063168119446858607650988409623,
                6955.999602515376140356310115515198987526,
                75999.29304014542649875303443598909137092,
                601859.6171681098786670226533699352302507,
                3481712.15498064590882071018964774556468,
                14605578.08768506808414169982791359218571,
                43338889.32467613834773723740590533316085,
                86363131.28813859145546927288977868422342,
                103794043.1163445451906271053616070238554,
                56906521.91347156388090791033559122686859)
_LANCZOS_DENOM = (1., 66., 1925., 32670., 357423., 2637558., 13339535., 45995730., 105258076.,
                  150917976., 120543840., 39916800., 0.)


def _lanczos_sum_expg_scaled(a):
    """Boost's Lanczos sum (scaled by exp(g)), a ratio of polynomials evaluated in
    1/a for |a| > 1 (Cephes' ratevl)."""
    big = np.abs(a) > 1
    y = np.where(big, 1 / np.where(big, a, 1), a)
    num = np.where(big, _polevl(y, _LANCZOS_NUM[::-1]), _polevl(y, _LANCZOS_NUM))
    den = np.where(big, _polevl(y, _LANCZOS_DENOM[::-1]), _polevl(y, _LANCZOS_DENOM))
    return num / den


def _igam_fac(a, x):
    """x^a exp(-x) / Gamma(a), by logs far from a = x, else Lanczos (Math.h's _igam_helper_fac)."""
    far = np.abs(a - x) > 0.4 * np.abs(a)
    ax = a * np.log(x) - x - _lgamma(a)
    by_logs = np.where(ax < -_MAXLOG, 0.0, np.exp(ax))
    fac = a + _LANCZOS_G - 0.5
    res = np.sqrt(fac / math.e) / _lanczos_sum_expg_scaled(a)
    small = (a < 200) & (x < 200)
    numfac = (x - a - _LANCZOS_G + 0.5) / fac
    res = np.where(small, res * np.exp(a - x) * (x / fac) ** a,
                   res * np.exp(a * (np.log1p(numfac) - numfac) + x * (0.5 - _LANCZOS_G) / fac))
    return np.where(far, by_logs, res)


def _igam_series(a, x):
    """The lower regularized gamma by its power series (DLMF 8.11.4)."""
    ax = _igam_fac(a, x)
    r, c, ans = a.copy(), np.ones_like(a), np.ones_like(a)
    live = ax != 0
    for _ in range(10000):
        if not live.any():
            break
        r = np.where(live, r + 1, r)
        c = np.where(live, c * x / r, c)
        ans = np.where(live, ans + c, ans)
        live &= ~(c <= _MACHEP * ans)
    return np.where(ax == 0, 0.0, ans * ax / a)


def _igamc_series(a, x):
    """The upper regularized gamma by DLMF 8.7.3 (small x)."""
    fac, total = np.ones_like(a), np.zeros_like(a)
    live = np.ones(a.shape, bool)
    for n in range(1, 2000):
        if not live.any():
            break
        fac = np.where(live, fac * -x / n, fac)
        term = fac / (a + n)
        total = np.where(live, total + term, total)
        live &= ~(np.abs(term) <= _MACHEP * np.abs(total))
    logx = np.log(x)
    return -np.expm1(a * logx - _lgamma(1 + a)) - np.exp(a * logx - _lgamma(a)) * total


def _igamc_continued_fraction(a, x):
    """The upper regularized gamma by its continued fraction (DLMF 8.9.2)."""
    ax = _igam_fac(a, x)
    y = 1.0 - a
    z = x + y + 1.0
    c = np.zeros_like(a)
    pkm2, qkm2 = np.ones_like(a), x.copy()
    pkm1, qkm1 = x + 1.0, z * x
    ans = pkm1 / qkm1
    live = ax != 0
    for _ in range(2000):
        if not live.any():
            break
        c, y, z = c + 1.0, y + 1.0, z + 2.0
        yc = y * c
        pk, qk = pkm1 * z - pkm2 * yc, qkm1 * z - qkm2 * yc
        r = pk / np.where(qk != 0, qk, 1.0)
        t = np.where(qk != 0, np.abs((ans - r) / r), 1.0)
        ans = np.where(live & (qk != 0), r, ans)
        rescale = np.abs(pk) > 4.503599627370496e15
        scale = np.where(rescale, 2.22044604925031308085e-16, 1.0)
        pkm2, pkm1 = np.where(live, pkm1 * scale, pkm2), np.where(live, pk * scale, pkm1)
        qkm2, qkm1 = np.where(live, qkm1 * scale, qkm2), np.where(live, qk * scale, qkm1)
        live &= ~(t <= _MACHEP)
    return np.where(ax == 0, 0.0, ans * ax)


# The first two rows of the coefficients of Temme's uniform expansion (DLMF 8.12.8)
_TEMME = ((-3.3333333333333333e-1, 8.3333333333333333e-2, -1.4814814814814815e-2,
           1.1574074074074074e-3, 3.527336860670194e-4, -1.7875514403292181e-4),
          (-1.8518518518518519e-3, -3.4722222222222222e-3, 2.6455026455026455e-3,
           -9.9022633744855967e-4, 2.0576131687242798e-4, -4.0187757201646091e-7))


def _igam_temme(a, x, upper: bool):
    """DLMF 8.12.3/8.12.4 for large a near x (ATen's _igam_helper_asymptotic_series),
    truncated to two powers of 1/a and eta^5: used only where a > 2e4, where
    |eta| < 0.032 and the series would need thousands of terms."""
    mu = (x - a) / a
    tiny = np.abs(mu) < 1e-3
    small_series = mu * mu * (0.5 + mu * (-1 / 3 + mu * (0.25 + mu * (-0.2 + mu / 6))))
    half_eta2 = np.where(tiny, small_series, mu - np.log1p(np.where(tiny, 0.0, mu)))
    eta = np.sign(mu) * np.sqrt(2 * half_eta2)
    total = _polevl(eta, _TEMME[0][::-1]) + _polevl(eta, _TEMME[1][::-1]) / a
    sign = 1.0 if upper else -1.0
    head = 0.5 * native.erf(sign * eta * np.sqrt(a / 2), complement=True)
    return head + sign * np.exp(-0.5 * a * eta * eta) * total / np.sqrt(2 * math.pi * a)


def _on(mask, fn, a, x):
    """``fn`` evaluated only where ``mask`` holds (nan elsewhere)."""
    result = np.full(a.shape, _NAN)
    if mask.any():
        result[mask] = fn(a[mask], x[mask])
    return result


def _incomplete_gamma(a, x, upper: bool):
    """calc_igamma / calc_igammac in double: the boundary values, then the
    series (S), the continued fraction (C) or the small-x upper series (E),
    as each region of (a, x) takes them.  Where ATen uses the asymptotic
    series (large a near x), S or C, whichever converges there, stands in."""
    out_dtype = np.result_type(a, x)
    a, x = np.broadcast_arrays(np.asarray(a, np.float64), np.asarray(x, np.float64))
    inside = (a > 0) & (x > 0) & np.isfinite(a) & np.isfinite(x)
    # ATen's boundary cases, checked in its order (so igamma(nan, 0) is 0)
    lower_edge = np.where(a == 0, np.where(x > 0, 1.0, _NAN), np.where(
        x == 0, 0.0, np.where(np.isinf(a), np.where(np.isinf(x), _NAN, 0.0),
                              np.where(np.isinf(x), 1.0, _NAN))))
    edge = np.where((x < 0) | (a < 0), _NAN, 1.0 - lower_edge if upper else lower_edge)
    safe_a = np.where(inside, a, 1.0)
    ratio = np.abs(x - a) / safe_a
    asymptotic = ((a > 20) & (a < 200) & (ratio < 0.3)) | \
        ((a > 200) & (ratio < 4.5 / np.sqrt(safe_a)))
    if upper:
        small_x = np.where(x <= 0.5, -0.4 / np.log(np.where(x <= 0.5, x, 0.5)) < a, x * 1.1 < a)
        S = np.where(x > 1.1, x < a, small_x)
        C = (x > 1.1) & (x >= a)
    else:
        complement = (x > 1) & (x > a)
        S = ~complement
        C = complement & (x > 1.1)
    temme = inside & asymptotic & (a > 2e4)
    S = inside & ~temme & np.where(asymptotic, x < a, S)
    C = inside & ~temme & np.where(asymptotic, x >= a, C)
    E = inside & ~temme & ~S & ~C
    series = _on(S, _igam_series, a, x)
    complement = np.where(C, _on(C, _igamc_continued_fraction, a, x),
                          _on(E, _igamc_series, a, x))
    value = np.where(S, 1.0 - series, complement) if upper else \
        np.where(S, series, 1.0 - complement)
    value = np.where(temme, _on(temme, lambda a_, x_: _igam_temme(a_, x_, upper), a, x), value)
    return np.where(inside, value, edge).astype(out_dtype)


def _igamma(a, x):
    return _incomplete_gamma(a, x, upper=False)


def _igammac(a, x):
    return _incomplete_gamma(a, x, upper=True)


_binary("igamma", "igamma_cpu", _igamma, ints=False)
_binary("igammac", "igammac_cpu", _igammac, ints=False)


# -- modified Bessel functions i0, i0e, i1, i1e (Cephes' Chebyshev expansions) --------------

_I0E_A = (-4.41534164647933937950E-18, 3.33079451882223809783E-17, -2.43127984654795469359E-16,
          1.71539128555513303061E-15, -1.16853328779934516808E-14, 7.67618549860493561688E-14,
          -4.85644678311192946090E-13, 2.95505266312963983461E-12, -1.72682629144155570723E-11,
          9.67580903537323691224E-11, -5.18979560163526290666E-10, 2.65982372468238665035E-9,
          -1.30002500998624804212E-8, 6.04699502254191894932E-8, -2.67079385394061173391E-7,
          1.11738753912010371815E-6, -4.41673835845875056359E-6, 1.64484480707288970893E-5,
          -5.75419501008210370398E-5, 1.88502885095841655729E-4, -5.76375574538582365885E-4,
          1.63947561694133579842E-3, -4.32430999505057594430E-3, 1.05464603945949983183E-2,
          -2.37374148058994688156E-2, 4.93052842396707084878E-2, -9.49010970480476444210E-2,
          1.71620901522208775349E-1, -3.04682672343198398683E-1, 6.76795274409476084995E-1)
_I0E_B = (-7.23318048787475395456E-18, -4.83050448594418207126E-18, 4.46562142029675999901E-17,
          3.46122286769746109310E-17, -2.82762398051658348494E-16, -3.42548561967721913462E-16,
          1.77256013305652638360E-15, 3.81168066935262242075E-15, -9.55484669882830764870E-15,
          -4.15056934728722208663E-14, 1.54008621752140982691E-14, 3.85277838274214270114E-13,
          7.18012445138366623367E-13, -1.79417853150680611778E-12, -1.32158118404477131188E-11,
          -3.14991652796324136454E-11, 1.18891471078464383424E-11, 4.94060238822496958910E-10,
          3.39623202570838634515E-9, 2.26666899049817806459E-8, 2.04891858946906374183E-7,
          2.89137052083475648297E-6, 6.88975834691682398426E-5, 3.36911647825569408990E-3,
          8.04490411014108831608E-1)
_I1E_A = (2.77791411276104639959E-18, -2.11142121435816608115E-17, 1.55363195773620046921E-16,
          -1.10559694773538630805E-15, 7.60068429473540693410E-15, -5.04218550472791168711E-14,
          3.22379336594557470981E-13, -1.98397439776494371520E-12, 1.17361862988909016308E-11,
          -6.66348972350202774223E-11, 3.62559028155211703701E-10, -1.88724975172282928790E-9,
          9.38153738649577178388E-9, -4.44505912879632808065E-8, 2.00329475355213526229E-7,
          -8.56872026469545474066E-7, 3.47025130813767847674E-6, -1.32731636560394358279E-5,
          4.78156510755005422638E-5, -1.61760815825896745588E-4, 5.12285956168575772895E-4,
          -1.51357245063125314899E-3, 4.15642294431288815669E-3, -1.05640848946261981558E-2,
          2.47264490306265168283E-2, -5.29459812080949914269E-2, 1.02643658689847095384E-1,
          -1.76416518357834055153E-1, 2.52587186443633654823E-1)
_I1E_B = (7.51729631084210481353E-18, 4.41434832307170791151E-18, -4.65030536848935832153E-17,
          -3.20952592199342395980E-17, 2.96262899764595013876E-16, 3.30820231092092828324E-16,
          -1.88035477551078244854E-15, -3.81440307243700780478E-15, 1.04202769841288027642E-14,
          4.27244001671195135429E-14, -2.10154184277266431302E-14, -4.08355111109219731823E-13,
          -7.19855177624590851209E-13, 2.03562854414708950722E-12, 1.41258074366137813316E-11,
          3.25260358301548823856E-11, -1.89749581235054123450E-11, -5.58974346219658380687E-10,
          -3.83538038596423702205E-9, -2.63146884688951950684E-8, -2.51223623787020892529E-7,
          -3.88256480887769039346E-6, -1.10588938762623716291E-4, -9.76109749136146840777E-3,
          7.78576235018280120474E-1)


def _bessel_i(x, a_table, b_table, *, scaled: bool, odd: bool, full_tables: bool = False):
    """Cephes' i0/i0e/i1/i1e: a Chebyshev series in x/2 - 2 on [0, 8] and in
    32/x - 2 beyond (over sqrt(|x|)), times exp(|x|) unless ``scaled``; i1's
    are x times theirs below 8 and odd in x.  float32 takes ATen's shorter
    i1e tables (not so torch.special.modified_bessel_i1: ``full_tables``).
    Rounded as Math.h's scalar calc_i0/calc_i1 ... and modified_bessel_i*_forward
    round: fused Clenshaw steps, libm's exp, the factors in their order
    (calc_i1: exp(x) x series; modified_bessel_i1: series x exp(x))."""
    t = x.dtype.type
    if odd and x.dtype == np.float32 and not full_tables:
        a_table, b_table = a_table[12:], b_table[18:]
    a = np.abs(x)
    near = a <= 8
    small = _chbevl(a / t(2) - t(2), _table(t, a_table), fused=True)
    large = _chbevl(t(32) / np.where(near, t(1), a) - t(2), _table(t, b_table), fused=True)
    if scaled:
        small = small * a if odd else small
    else:
        growth = _libm("exp", a)
        if odd:
            small = small * a * growth if full_tables else growth * a * small
        else:
            small = growth * small
        large = growth * large
    result = np.where(near, small, large / np.sqrt(a))
    return np.where(x < 0, -result, result) if odd else result


_unary("i0", "i0_vml_cpu", lambda x: _bessel_i(x, _I0E_A, _I0E_B, scaled=False, odd=False))
_unary("special_i0e", "i0e_cpu", lambda x: _bessel_i(x, _I0E_A, _I0E_B, scaled=True, odd=False))
_unary("special_i1", "i1_cpu", lambda x: _bessel_i(x, _I1E_A, _I1E_B, scaled=False, odd=True))
_unary("special_i1e", "i1e_cpu", lambda x: _bessel_i(x, _I1E_A, _I1E_B, scaled=True, odd=True))
_unary("special_modified_bessel_i0", "modified_bessel_i0_cpu",
       lambda x: _bessel_i(x, _I0E_A, _I0E_B, scaled=False, odd=False), reduced=False)
_unary("special_modified_bessel_i1", "modified_bessel_i1_cpu",
       lambda x: _bessel_i(x, _I1E_A, _I1E_B, scaled=False, odd=True, full_tables=True),
       reduced=False)


def _spherical_bessel_j0(x):
    """sin(x) / x (libm's sin); its Taylor polynomial below 1/2 (fused Horner
    steps, as the scalar loop compiles), 0 at +-inf."""
    t = x.dtype.type
    xx = x * x
    inner = t(1 / 6227020800.0)
    for c in (-1 / 39916800.0, 1 / 362880.0, -1 / 5040.0, 1 / 120.0, -1 / 6.0, 1.0):
        inner = _mad(xx, inner, t(c))
    near = np.abs(x) < t(0.5)
    value = np.where(near, inner, _libm("sin", x) / np.where(near, t(1), x))
    return np.where(np.isinf(x), t(0), value)


_unary("special_spherical_bessel_j0", "spherical_bessel_j0_cpu", _spherical_bessel_j0,
       reduced=False)


# -- Bessel functions J0, J1, Y0, Y1, K0, K1 and Airy's Ai (Cephes, Math.h's *_forward) -------

# P/Q for the asymptotic forms of J0/Y0 and J1/Y1 beyond 5 (shared by J and Y, as in Math.h)
_J0_PP = (7.96936729297347051624e-04, 8.28352392107440799803e-02, 1.23953371646414299388e+00,
          5.44725003058768775090e+00, 8.74716500199817011941e+00, 5.30324038235394892183e+00,
          9.99999999999999997821e-01)
_J0_PQ = (9.24408810558863637013e-04, 8.56288474354474431428e-02, 1.25352743901058953537e+00,
          5.47097740330417105182e+00, 8.76190883237069594232e+00, 5.30605288235394617618e+00,
          1.00000000000000000218e+00)
_J0_QP = (-1.13663838898469149931e-02, -1.28252718670509318512e+00, -1.95539544257735972385e+01,
          -9.32060152123768231369e+01, -1.77681167980488050595e+02, -1.47077505154951170175e+02,
          -5.14105326766599330220e+01, -6.05014350600728481186e+00)
_J0_QQ = (6.43178256118178023184e+01, 8.56430025976980587198e+02, 3.88240183605401609683e+03,
          7.24046774195652478189e+03, 5.93072701187316984827e+03, 2.06209331660327847417e+03,
          2.42005740240291393179e+02)
_J0_RP = (-4.79443220978201773821e+09, 1.95617491946556577543e+12, -2.49248344360967716204e+14,
          9.70862251047306323952e+15)
_J0_RQ = (4.99563147152651017219e+02, 1.73785401676374683123e+05, 4.84409658339962045305e+07,
          1.11855537045356834862e+10, 2.11277520115489217587e+12, 3.10518229857422583814e+14,
          3.18121955943204943306e+16, 1.71086294081043136091e+18)
_J0_ZEROS_SQUARED = (5.78318596294678452118e+00, 3.04712623436620863991e+01)
_J1_PP = (7.62125616208173112003e-04, 7.31397056940917570436e-02, 1.12719608129684925192e+00,
          5.11207951146807644818e+00, 8.42404590141772420927e+00, 5.21451598682361504063e+00,
          1.00000000000000000254e+00)
_J1_PQ = (5.71323128072548699714e-04, 6.88455908754495404082e-02, 1.10514232634061696926e+00,
          5.07386386128601488557e+00, 8.39985554327604159757e+00, 5.20982848682361821619e+00,
          9.99999999999999997461e-01)
_J1_QP = (5.10862594750176621635e-02, 4.98213872951233449420e+00, 7.58238284132545283818e+01,
          3.66779609360150777800e+02, 7.10856304998926107277e+02, 5.97489612400613639965e+02,
          2.11688757100572135698e+02, 2.52070205858023719784e+01)
_J1_QQ = (7.42373277035675149943e+01, 1.05644886038262816351e+03, 4.98641058337653607651e+03,
          9.56231892404756170795e+03, 7.99704160447350683650e+03, 2.82619278517639096600e+03,
          3.36093607810698293419e+02)
_J1_RP = (-8.99971225705559398224e+08, 4.52228297998194034323e+11, -7.27494245221818276015e+13,
          3.68295732863852883286e+15)
_J1_RQ = (6.20836478118054335476e+02, 2.56987256757748830383e+05, 8.35146791431949253037e+07,
          2.21511595479792499675e+10, 4.74914122079991414898e+12, 7.84369607876235854894e+14,
          8.95222336184627338078e+16, 5.32278620332680085395e+18)
_J1_ZEROS_SQUARED = (1.46819706421238932572e+01, 4.92184563216946036703e+01)
_Y0_YP = (1.55924367855235737965e+04, -1.46639295903971606143e+07, 5.43526477051876500413e+09,
          -9.82136065717911466409e+11, 8.75906394395366999549e+13, -3.46628303384729719441e+15,
          4.42733268572569800351e+16, -1.84950800436986690637e+16)
_Y0_YQ = (1.04128353664259848412e+03, 6.26107330137134956842e+05, 2.68919633393814121987e+08,
          8.64002487103935000337e+10, 2.02979612750105546709e+13, 3.17157752842975028269e+15,
          2.50596256172653059228e+17)
_Y1_YP = (1.26320474790178026440e+09, -6.47355876379160291031e+11, 1.14509511541823727583e+14,
          -8.12770255501325109621e+15, 2.02439475713594898196e+17, -7.78877196265950026825e+17)
_Y1_YQ = (5.94301592346128195359e+02, 2.35564092943068577943e+05, 7.34811944459721705660e+07,
          1.87601316108706159478e+10, 3.88231277496238566008e+12, 6.20557727146953693363e+14,
          6.87141087355300489866e+16, 3.97270608116560655612e+18)
_SQRT_2_OVER_PI = 0.797884560802865355879892119868763737
_TWO_OVER_PI = 0.636619772367581343075535053490057448


def _rational(x, numerator, denominator):
    """P(x) / Q(x), both by fused Horner steps (Math.h's loops)."""
    t = x.dtype.type
    return _polevl(x, _table(t, numerator), fused=True) / \
        _polevl(x, _table(t, denominator), fused=True)


def _bessel_asymptotic(x, order: int, second_kind: bool):
    """J or Y of order 0 or 1 beyond 5: sqrt(2 / (pi x)) (P(w) cos(x - phase)
    - (5/x) Q(w) sin(x - phase)) for J, sin and cos exchanged (and a plus) for Y,
    P and Q ratios of polynomials in w = 25/x^2 (order 0) or (5/x)^2 (order 1)."""
    t = x.dtype.type
    pp, pq, qp, qq = (_J0_PP, _J0_PQ, _J0_QP, _J0_QQ) if order == 0 else \
        (_J1_PP, _J1_PQ, _J1_QP, _J1_QQ)
    w = t(25) / (x * x) if order == 0 else t(5) / x * (t(5) / x)
    p = _rational(w, pp, pq)
    q = t(5) / x * _rational(w, qp, qq)
    shifted = x - t(0.785398163397448309615660845819875721 if order == 0
                    else 2.356194490192344928846982537459627163)
    cos, sin = _libm("cos", shifted), _libm("sin", shifted)
    oscillation = _mad(p, sin, q * cos) if second_kind else _mad(p, cos, -(q * sin))
    return oscillation * t(_SQRT_2_OVER_PI) / np.sqrt(x)


def _bessel_j0(x):
    """J0: even; 1 - x^2/4 below 1e-5, (x^2 - z1^2)(x^2 - z2^2) R(x^2) up to 5
    (z1, z2 its first zeros), the asymptotic form beyond."""
    t = x.dtype.type
    x = np.where(x < 0, -x, x)
    xx = x * x
    near = (xx - t(_J0_ZEROS_SQUARED[0])) * (xx - t(_J0_ZEROS_SQUARED[1])) * \
        _polevl(xx, _table(t, _J0_RP), fused=True) / _polevl(xx, _table(t, _J0_RQ), fused=True)
    near = np.where(x < t(1e-5), t(1) - xx / t(4), near)
    far = _bessel_asymptotic(np.where(x <= 5, t(10), x), 0, second_kind=False)
    return np.where(x <= 5, near, far)


def _bessel_j1(x):
    """J1: odd; x (x^2 - z1^2)(x^2 - z2^2) R(x^2) up to 5, the asymptotic form beyond."""
    t = x.dtype.type
    a = np.where(x < 0, -x, x)
    xx = a * a
    near = _rational(xx, _J1_RP, _J1_RQ) * a * (xx - t(_J1_ZEROS_SQUARED[0])) * \
        (xx - t(_J1_ZEROS_SQUARED[1]))
    far = _bessel_asymptotic(np.where(a <= 5, t(10), a), 1, second_kind=False)
    value = np.where(a <= 5, near, far)
    return np.where(x < 0, -value, value)


def _bessel_y0(x):
    """Y0: R(x^2) + (2/pi) log(x) J0(x) up to 5, the asymptotic form beyond;
    -inf at 0, nan below."""
    t = x.dtype.type
    near_x = np.where((x > 0) & (x <= 5), x, t(1))
    near = _mad(t(_TWO_OVER_PI) * _libm("log", near_x), _bessel_j0(near_x),
                _rational(near_x * near_x, _Y0_YP, _Y0_YQ))
    far = _bessel_asymptotic(np.where(x <= 5, t(10), x), 0, second_kind=True)
    near = np.where(x == 0, t(-_INF), np.where(x < 0, t(_NAN), near))
    return np.where(x <= 5, near, far)


def _bessel_y1(x):
    """Y1: x R(x^2) + (2/pi)(J1(x) log(x) - 1/x) up to 5, the asymptotic form
    beyond; -inf at 0, nan below."""
    t = x.dtype.type
    near_x = np.where((x > 0) & (x <= 5), x, t(1))
    log_term = _mad(_bessel_j1(near_x), _libm("log", near_x), -(t(1) / near_x))
    near = _mad(near_x, _rational(near_x * near_x, _Y1_YP, _Y1_YQ),
                t(_TWO_OVER_PI) * log_term)
    far = _bessel_asymptotic(np.where(x <= 5, t(10), x), 1, second_kind=True)
    near = np.where(x == 0, t(-_INF), np.where(x < 0, t(_NAN), near))
    return np.where(x <= 5, near, far)


_K0_A = (1.37446543561352307156e-16, 4.25981614279661018399e-14, 1.03496952576338420167e-11,
         1.90451637722020886025e-09, 2.53479107902614945675e-07, 2.28621210311945178607e-05,
         1.26461541144692592338e-03, 3.59799365153615016266e-02, 3.44289899924628486886e-01,
         -5.35327393233902768720e-01)
_K0_B = (5.30043377268626276149e-18, -1.64758043015242134646e-17, 5.21039150503902756861e-17,
         -1.67823109680541210385e-16, 5.51205597852431940784e-16, -1.84859337734377901440e-15,
         6.34007647740507060557e-15, -2.22751332699166985548e-14, 8.03289077536357521100e-14,
         -2.98009692317273043925e-13, 1.14034058820847496303e-12, -4.51459788337394416547e-12,
         1.85594911495471785253e-11, -7.95748924447710747776e-11, 3.57739728140030116597e-10,
         -1.69753450938905987466e-09, 8.57403401741422608519e-09, -4.66048989768794782956e-08,
         2.76681363944501510342e-07, -1.83175552271911948767e-06, 1.39498137188764993662e-05,
         -1.28495495816278026384e-04, 1.56988388573005337491e-03, -3.14481013119645005427e-02,
         2.44030308206595545468e+00)
_K1_A = (-7.02386347938628759343e-18, -2.42744985051936593393e-15, -6.66690169419932900609e-13,
         -1.41148839263352776110e-10, -2.21338763073472585583e-08, -2.43340614156596823496e-06,
         -1.73028895751305206302e-04, -6.97572385963986435018e-03, -1.22611180822657148235e-01,
         -3.53155960776544875667e-01, 1.52530022733894777053e+00)
_K1_B = (-5.75674448366501715755e-18, 1.79405087314755922667e-17, -5.68946255844285935196e-17,
         1.83809354436663880070e-16, -6.05704724837331885336e-16, 2.03870316562433424052e-15,
         -7.01983709041831346144e-15, 2.47715442448130437068e-14, -8.97670518232499435011e-14,
         3.34841966607842919884e-13, -1.28917396095102890680e-12, 5.13963967348173025100e-12,
         -2.12996783842756842877e-11, 9.21831518760500529508e-11, -4.19035475934189648750e-10,
         2.01504975519703286596e-09, -1.03457624656780970260e-08, 5.74108412545004946722e-08,
         -3.50196060308781257119e-07, 2.40648494783721712015e-06, -1.93619797416608296024e-05,
         1.95215518471351631108e-04, -2.85781685962277938680e-03, 1.03923736576817238437e-01,
         2.72062619048444266945e+00)


def _bessel_k(order: int, scaled: bool):
    """K0 or K1 (times exp(x) if ``scaled``): up to 2 a Chebyshev series in
    x^2 - 2 plus the log(x/2) I(x) term, beyond it exp(-x) / sqrt(x) times a
    series in 8/x - 2; inf at 0, nan below.  ATen's unscaled K0 takes that log
    in double for float too (``std::log(0.5 * x)``)."""
    a_table, b_table = (_K0_A, _K0_B) if order == 0 else (_K1_A, _K1_B)

    def fn(x):
        t = x.dtype.type
        near_x = np.where((x > 0) & (x <= 2), x, t(1))
        series = _chbevl(_mad(near_x, near_x, t(-2)), _table(t, a_table), fused=True)
        if order == 0:
            i0 = _bessel_i(near_x, _I0E_A, _I0E_B, scaled=False, odd=False)
            if scaled:
                near = _mad(-_libm("log", t(0.5) * near_x), i0, series) * _libm("exp", near_x)
            else:
                log = _libm("log", 0.5 * near_x.astype(np.float64))
                near = _mad(-log, i0.astype(np.float64), series.astype(np.float64))
                near = near.astype(x.dtype)
        else:
            i1 = _bessel_i(near_x, _I1E_A, _I1E_B, scaled=False, odd=True, full_tables=True)
            near = _mad(_libm("log", t(0.5) * near_x), i1, series / near_x)
            if scaled:
                near = near * _libm("exp", near_x)
        far_x = np.where(x <= 2, t(4), x)
        far = _chbevl(t(8) / far_x - t(2), _table(t, b_table), fused=True)
        if not scaled:
            far = _libm("exp", -far_x) * far
        far = far / np.sqrt(far_x)
        value = np.where(x <= 2, near, far)
        return np.where(x == 0, t(_INF), np.where(x < 0, t(_NAN), value))
    return fn


_AIRY_AN = (3.46538101525629032477e-01, 1.20075952739645805542e+01, 7.62796053615234516538e+01,
            1.68089224934630576269e+02, 1.59756391350164413639e+02, 7.05360906840444183113e+01,
            1.40264691163389668864e+01, 9.99999999999999995305e-01)
_AIRY_AD = (5.67594532638770212846e-01, 1.47562562584847203173e+01, 8.45138970141474626562e+01,
            1.77318088145400459522e+02, 1.64234692871529701831e+02, 7.14778400825575695274e+01,
            1.40959135607834029598e+01, 1.00000000000000000470e+00)
_AIRY_AFN = (-1.31696323418331795333e-01, -6.26456544431912369773e-01,
             -6.93158036036933542233e-01, -2.79779981545119124951e-01,
             -4.91900132609500318020e-02, -4.06265923594885404393e-03,
             -1.59276496239262096340e-04, -2.77649108155232920844e-06,
             -1.67787698489114633780e-08)
_AIRY_AFD = (1.33560420706553243746e+01, 3.26825032795224613948e+01, 2.67367040941499554804e+01,
             9.18707402907259625840e+00, 1.47529146771666414581e+00, 1.15687173795188044134e-01,
             4.40291641615211203805e-03, 7.54720348287414296618e-05, 4.51850092970580378464e-07)
_AIRY_AGN = (1.97339932091685679179e-02, 3.91103029615688277255e-01, 1.06579897599595591108e+00,
             9.39169229816650230044e-01, 3.51465656105547619242e-01, 6.33888919628925490927e-02,
             5.85804113048388458567e-03, 2.82851600836737019778e-04, 6.98793669997260967291e-06,
             8.11789239554389293311e-08, 3.41551784765923618484e-10)
_AIRY_AGD = (9.30892908077441974853e+00, 1.98352928718312140417e+01, 1.55646628932864612953e+01,
             5.47686069422975497931e+00, 9.54293611618961883998e-01, 8.64580826352392193095e-02,
             4.12656523824222607191e-03, 1.01259085116509135510e-04, 1.17166733214413521882e-06,
             4.91834570062930015649e-09)
_SQRT_PI_INV_AIRY = 5.64189583547756286948e-01     # 1 / sqrt(pi)


def _airy_ai(x):
    """Ai: below -2.09 its oscillating asymptotic form (rational functions of
    1/zeta^2, zeta = 2/3 |x|^(3/2)); from 2.09 the decaying one, exp(-zeta)
    times a rational function of 1/zeta; between them the Maclaurin series
    c1 f(x) - c2 g(x), summed until a term is below the dtype's epsilon.  0
    beyond 103.892 (underflow), nan at +-inf."""
    t = x.dtype.type
    left = x < t(-2.09)
    right = x >= t(2.09)
    # the oscillating side
    xl = np.where(left, x, t(-4))
    zeta = t(-2) * xl * np.sqrt(-xl) / t(3)
    z = t(1) / zeta
    zz = z * z
    f = t(1) + zz * _polevl(zz, _table(t, _AIRY_AFN), fused=True) / \
        _polevl(zz, _table(t, _AIRY_AFD), fused=True)
    g = z * _polevl(zz, _table(t, _AIRY_AGN), fused=True) / \
        _polevl(zz, _table(t, _AIRY_AGD), fused=True)
    phase = zeta + t(0.25) * t(math.pi)
    oscillating = t(_SQRT_PI_INV_AIRY) / np.sqrt(np.sqrt(-xl)) * \
        _mad(_libm("sin", phase), f, -(_libm("cos", phase) * g))
    # the decaying side
    xr = np.where(right & (x <= t(103.892)), x, t(4))
    zeta = t(2) * xr * np.sqrt(xr) / t(3)
    ratio = _rational(t(1) / zeta, _AIRY_AN, _AIRY_AD)
    decaying = t(_SQRT_PI_INV_AIRY) * ratio / (t(2) * np.sqrt(np.sqrt(xr)) * _libm("exp", zeta))
    # the power series in between: f = sum 3^k (1/3)_k x^3k / (3k)!, g likewise from x
    xs = np.where(left | right, t(0), x)
    cube = xs * xs * xs
    f, g = np.ones_like(xs), xs.copy()
    m, n = np.ones_like(xs), xs.copy()
    k = t(1)
    live = np.ones(xs.shape, bool)
    epsilon = np.finfo(x.dtype).eps
    while live.any():
        m_next = m * cube / (k + t(1)) / (k + t(2))
        n_next = n * cube / (k + t(2)) / (k + t(3))
        m, n = np.where(live, m_next, m), np.where(live, n_next, n)
        f, g = np.where(live, f + m, f), np.where(live, g + n, g)
        k = k + t(3)
        live &= np.abs(m / f) > epsilon
    series = _mad(t(0.355028053887817239260), f, -(t(0.258819403792806798405) * g))
    value = np.where(left, oscillating, np.where(right, decaying, series))
    value = np.where(x > t(103.892), t(0), value)
    return np.where(np.isinf(x), t(_NAN), value)


for _name, _fn in {"bessel_j0": _bessel_j0, "bessel_j1": _bessel_j1, "bessel_y0": _bessel_y0,
                   "bessel_y1": _bessel_y1, "modified_bessel_k0": _bessel_k(0, False),
                   "modified_bessel_k1": _bessel_k(1, False),
                   "scaled_modified_bessel_k0": _bessel_k(0, True),
                   "scaled_modified_bessel_k1": _bessel_k(1, True), "airy_ai": _airy_ai}.items():
    _unary(f"special_{_name}", f"{_name}_cpu", _fn, reduced=False)


# -- the normal distribution and error functions: ndtri, log_ndtr, erfcx ----------------------

_NDTRI_P0 = (-5.99633501014107895267E1, 9.80010754185999661536E1, -5.66762857469070293439E1,
             1.39312609387279679503E1, -1.23916583867381258016E0)
_NDTRI_Q0 = (1.00000000000000000000E0, 1.95448858338141759834E0, 4.67627912898881538453E0,
             8.63602421390890590575E1, -2.25462687854119370527E2, 2.00260212380060660359E2,
             -8.20372256168333339912E1, 1.59056225126211695515E1, -1.18331621121330003142E0)
_NDTRI_P1 = (4.05544892305962419923E0, 3.15251094599893866154E1, 5.71628192246421288162E1,
             4.40805073893200834700E1, 1.46849561928858024014E1, 2.18663306850790267539E0,
             -1.40256079171354495875E-1, -3.50424626827848203418E-2, -8.57456785154685413611E-4)
_NDTRI_Q1 = (1.00000000000000000000E0, 1.57799883256466749731E1, 4.53907635128879210584E1,
             4.13172038254672030440E1, 1.50425385692907503408E1, 2.50464946208309415979E0,
             -1.42182922854787788574E-1, -3.80806407691578277194E-2, -9.33259480895457427372E-4)
_NDTRI_P2 = (3.23774891776946035970E0, 6.91522889068984211695E0, 3.93881025292474443415E0,
             1.33303460815807542389E0, 2.01485389549179081538E-1, 1.23716634817820021358E-2,
             3.01581553508235416007E-4, 2.65806974686737550832E-6, 6.23974539184983293730E-9)
_NDTRI_Q2 = (1.00000000000000000000E0, 6.02427039364742014255E0, 3.67983563856160859403E0,
             1.37702099489081330271E0, 2.16236993594496635890E-1, 1.34204006088543189037E-2,
             3.28014464682127739104E-4, 2.89247864745380683936E-6, 6.79019408009981274425E-9)
_EXP_M2 = 0.13533528323661269189   # exp(-2)


def _ndtri(y0):
    """Cephes' ndtri, the normal quantile: a rational function of y - 1/2 in the
    middle, of 1 / sqrt(-2 log y) in the tails (two ranges)."""
    t = y0.dtype.type
    upper = y0 > t(1) - t(_EXP_M2)
    y = np.where(upper, t(1) - y0, y0)
    middle = y > t(_EXP_M2)
    ym = y - t(0.5)
    y2 = ym * ym
    central = (ym + ym * (y2 * _polevl(y2, [t(c) for c in _NDTRI_P0]) /
                          _polevl(y2, [t(c) for c in _NDTRI_Q0]))) * t(2.50662827463100050242)
    x = np.sqrt(t(-2) * np.log(np.where(middle, t(0.5), y)))
    x0 = x - np.log(x) / x
    z = t(1) / x
    x1 = np.where(x < 8, z * _polevl(z, [t(c) for c in _NDTRI_P1]) /
                  _polevl(z, [t(c) for c in _NDTRI_Q1]),
                  z * _polevl(z, [t(c) for c in _NDTRI_P2]) / _polevl(z, [t(c) for c in _NDTRI_Q2]))
    tail = x0 - x1
    tail = np.where(upper, tail, -tail)
    result = np.where(middle, central, tail)
    result = np.where((y0 < 0) | (y0 > 1), t(_NAN), result)
    result = np.where(y0 == 0, t(-_INF), result)
    return np.where(y0 == 1, t(_INF), result)


_SQRT_PI_INV = 0.56418958354775628694807945156    # 1 / sqrt(pi)


def _erfcx_positive(x):
    """erfcx for x >= 0 in double: exp(x^2) erfc(x) with x^2 split into two
    exact parts below 26 (erfc is still normal there), the Laplace continued
    fraction up to 50, then ATen's 5-term fraction and its 1-term tail."""
    split = x * 134217729.0                  # Veltkamp: x = hi + lo exactly
    hi = split - (split - x)
    lo = x - hi
    square = x * x
    square_lo = ((hi * hi - square) + 2 * hi * lo) + lo * lo
    direct = np.exp(square) * (1 + square_lo) * native.erf(x, complement=True)
    fraction = x.copy()
    for k in range(60, 0, -1):
        fraction = x + (k / 2) / fraction
    fraction = _SQRT_PI_INV / fraction
    xx = x * x
    five_terms = _SQRT_PI_INV * (xx * (xx + 4.5) + 2) / (x * (xx * (xx + 5) + 3.75))
    result = np.where(x < 26, direct, fraction)
    result = np.where(x > 50, five_terms, result)
    return np.where(x > 5e7, _SQRT_PI_INV / x, result)


def _erfcx(x):
    """exp(x^2) erfc(x); for x < 0, 2 exp(x^2) - erfcx(-x) (inf below -26.7)."""
    d = np.asarray(x, np.float64)
    positive = _erfcx_positive(np.abs(d))
    twice = np.asarray(2 * np.exp(x * x), np.float64)     # in x's dtype, as ATen
    negative = np.where(d < -6.1, twice, twice - positive)
    result = np.where(d >= 0, positive, np.where(d < -26.7, _INF, negative))
    return np.where(np.isnan(d), d, result).astype(x.dtype)


def _log_ndtr(x):
    """log Phi(x): log(erfcx(-t) / 2) - t^2 below -1 (t = x / sqrt 2), else
    log1p(-erfc(t) / 2) (Math.h's calc_log_ndtr)."""
    d = np.asarray(x, np.float64)
    t = d * 0.70710678118654752440
    low = np.log(_erfcx(-t) / 2) - t * t
    high = np.log1p(-native.erf(t, complement=True) / 2)
    return np.where(d < -1, low, high).astype(x.dtype)


def _entr(x):
    """-x log x; 0 at 0, -inf below 0."""
    t = x.dtype.type
    value = -x * np.log(np.where(x > 0, x, t(1)))
    value = np.where(x == 0, t(0), np.where(x < 0, t(-_INF), value))
    return np.where(np.isnan(x), x, value)


def _sinc(x):
    """sin(pi x) / (pi x), 1 at 0 (real and complex)."""
    product = x * x.real.dtype.type(math.pi)
    zero = x == 0
    value = np.sin(product) / np.where(zero, 1, product)
    return np.where(zero, x.dtype.type(1), value)


_unary("special_ndtri", "ndtri_cpu", _ndtri, reduced=False)
_unary("special_log_ndtr", "log_ndtr_cpu", _log_ndtr, reduced=False)
_unary("special_erfcx", "erfcx_cpu", _erfcx, reduced=False)
_unary("special_entr", "entr_cpu", _entr)
_unary("sinc", "sinc_cpu", _sinc, complex_ok=True)


@kernel("special_ndtr")
def special_ndtr(self):
    """Phi(x) = (1 + erf(x / sqrt 2)) / 2, composed of ops as ATen's special_ndtr."""
    return aten.mul.Scalar(aten.add.Scalar(aten.erf.default(
        aten.mul.Scalar(self, 0.70710678118654752440)), 1), 0.5)


@kernel("special_ndtr.out")
def special_ndtr_out(self, *, out):
    return aten.mul.out(aten.add.Scalar(aten.erf.default(
        aten.mul.Scalar(self, 0.70710678118654752440)), 1), 0.5, out=out)


# -- binary: xlog1py, zeta ----------------------------------------------------------------------

def _xlog1py(x, y):
    """x log1p(y); 0 where x is 0 and y is not nan."""
    value = np.where(x == 0, x.dtype.type(0), x * np.log1p(y))
    return np.where(np.isnan(y), y, value)


_binary("special_xlog1py", "xlog1py_cpu", _xlog1py)
_binary("special_zeta", "zeta_cpu", _zeta, reduced=False)


# -- orthogonal polynomials (three-term recurrences, Math.h's *_polynomial_*_forward) ----------

def _degree(n):
    """static_cast<int64_t>(n): truncation; nan, inf and out-of-range give
    INT64_MIN (x86's conversion), a negative degree."""
    finite = np.isfinite(n) & (np.abs(n) < 2.0 ** 63)
    return np.where(finite, np.trunc(np.where(finite, n, 0)), -2.0 ** 63).astype(np.int64)


def _recur(start, first, k_first, step, n, stop_at_nan=True):
    """Run ``q_{k+1} = step(k, q_k, q_{k-1})`` from p = ``start``, q = ``first``
    while k < n (k counting from ``k_first``), each element for its own n,
    stopping an element whose q is nan where ATen's loop does."""
    p, q = start, first
    k = k_first
    live = k < n
    while live.any():
        r = step(k, q, p)
        p, q = np.where(live, q, p), np.where(live, r, q)
        k += 1
        live = (k < n) & ~(np.isnan(q) if stop_at_nan else False)
    return q


def _chebyshev_closed(kind, shifted, x, y, n):
    """The trigonometric forms ATen takes for degrees past a threshold inside
    (-1, 1): cos(n theta), sin((n + 1) theta) / sin(theta), cos((n + 1/2) theta)
    / cos(theta / 2) and sin((n + 1/2) theta) / sin(theta / 2), theta = acos(y)
    (libm's functions, the degree converted to x's dtype)."""
    t = x.dtype.type
    theta = _libm("acos", y)
    nf = n.astype(x.dtype)
    if kind == "t":
        return _libm("cos", nf * theta)
    if kind == "u":
        s = _libm("sin", theta)
        n1 = nf + t(1)
        return np.where(s != 0, _libm("sin", n1 * theta) / np.where(s != 0, s, t(1)),
                        n1 * _libm("cos", n1 * theta) / y)
    sign = np.where(n % 2 == 0, t(1), t(-1))
    odd_n = (n + n + 1).astype(x.dtype)
    if kind == "v":
        return np.where(_libm("sin", theta / t(2)) != t(1),
                        _libm("cos", (nf + t(0.5)) * theta) / _libm("cos", theta / t(2)),
                        sign * odd_n)
    fallback = sign if shifted else np.where(x > 0, odd_n, sign)
    return np.where(_libm("cos", theta / t(2)) != t(1),
                    _libm("sin", (nf + t(0.5)) * theta) / _libm("sin", theta / t(2)), fallback)


def _chebyshev(kind, shifted):
    """T, U, V or W (first to fourth kind), of x or of the shifted 2x - 1."""
    threshold = {("t", False): 6, ("u", False): 8, ("v", False): 8, ("w", False): 8,
                 ("t", True): 6, ("u", True): 6, ("v", True): 6, ("w", True): 4}[kind, shifted]

    def fn(x, n):
        t = x.dtype.type
        n = _degree(n)
        y = x + x - t(1) if shifted else x
        sign = np.where(n % 2 == 0, t(1), t(-1))
        odd_n = (n + n + 1).astype(x.dtype)
        at_one, at_minus_one = {
            "t": (t(1), sign), "u": ((n + 1).astype(x.dtype), sign * (n + 1)),
            "v": (t(1), sign * odd_n), "w": (odd_n, sign)}[kind]
        first = {"t": y, "u": y + y, "v": y + y - t(1), "w": y + y + t(1)}[kind]
        recurrence = _recur(np.ones_like(y), first, 2, lambda k, q, p: _mad(y + y, q, -p), n + 1)
        result = np.where(n == 1, first, recurrence)
        result = np.where(n == 0, t(1), result)
        closed = (n > threshold) & (np.abs(y) < 1)
        if closed.any():
            result[closed] = _chebyshev_closed(kind, shifted, x[closed], y[closed], n[closed])
        if shifted:
            ends = np.where(x == 1, at_one, np.where(x == 0, at_minus_one, result))
        else:
            ends = np.where(y == 1, at_one, np.where(y == -1, at_minus_one, result))
        return np.where(n < 0, t(0), ends).astype(x.dtype)
    return fn


_HERMITE_LIMIT = {np.dtype(np.float32): 128, np.dtype(np.float64): 512}


def _hermite(physicists):
    """H_n (physicists') or He_n (probabilists'); nan past ATen's degree limit."""
    def fn(x, n):
        t = x.dtype.type
        n = _degree(n)
        first = x + x if physicists else x
        step = 2 if physicists else 1
        rec = _recur(np.ones_like(x), first, 1,
                     lambda k, q, p: _mad(first, q, -(t(step * k) * p)), n, stop_at_nan=False)
        result = np.where(n > _HERMITE_LIMIT[x.dtype], t(_NAN), rec)
        result = np.where(n == 1, first, result)
        return np.where(n < 0, t(0), np.where(n == 0, t(1), result)).astype(x.dtype)
    return fn


def _laguerre(x, n):
    """L_n: ((2k + 1 - x) L_k - k L_{k-1}) / (k + 1); 1 at x = 0."""
    t = x.dtype.type
    n = _degree(n)
    first = t(1) - x
    rec = _recur(np.ones_like(x), first, 1,
                 lambda k, q, p: _mad(t(k + k) + (t(1) - x), q, -(t(k) * p)) / t(k + 1), n)
    result = np.where(n == 1, first, rec)
    result = np.where((x == 0) | (n == 0), t(1), result)
    return np.where(n < 0, t(0), result).astype(x.dtype)


def _legendre(x, n):
    """P_n: ((2k + 1) x P_k - k P_{k-1}) / (k + 1); +-1 at x = +-1."""
    t = x.dtype.type
    n = _degree(n)
    rec = _recur(np.ones_like(x), x, 1,
                 lambda k, q, p: _mad(t(k + k + 1) * x, q, -(t(k) * p)) / t(k + 1), n)
    result = np.where(n == 1, x, rec)
    result = np.where(n == 0, t(1), result)
    sign = np.where((x > 0) | (n % 2 == 0), t(1), t(-1))
    result = np.where(np.abs(x) == 1, sign, result)
    return np.where(n < 0, t(0), result).astype(x.dtype)


_POLYNOMIALS = {
    **{f"chebyshev_polynomial_{k}": _chebyshev(k, False) for k in "tuvw"},
    **{f"shifted_chebyshev_polynomial_{k}": _chebyshev(k, True) for k in "tuvw"},
    "hermite_polynomial_h": _hermite(True), "hermite_polynomial_he": _hermite(False),
    "laguerre_polynomial_l": _laguerre, "legendre_polynomial_p": _legendre}
for _name, _fn in _POLYNOMIALS.items():
    _binary(f"special_{_name}", f"{_name}_cpu", _fn, reduced=False)


# -- torch.special's other names: CompositeImplicitAutograd aliases of top-level ops ------------

_ALIASES = {
    "special_gammaln": "lgamma", "special_psi": "digamma", "special_digamma": "digamma",
    "special_polygamma": "polygamma", "special_multigammaln": "mvlgamma",
    "special_gammainc": "igamma", "special_gammaincc": "igammac", "special_erf": "erf",
    "special_erfc": "erfc", "special_erfinv": "erfinv", "special_expit": "sigmoid",
    "special_exp2": "exp2", "special_expm1": "expm1", "special_log1p": "log1p",
    "special_i0": "i0", "special_sinc": "sinc", "special_logit": "logit",
    "special_logsumexp": "logsumexp"}
for _name, _target in _ALIASES.items():
    _alias(_name, _target)
    _alias(f"{_name}.out", f"{_target}.out")
for _overload, _target in {
        "special_round": "round.decimals", "special_round.out": "round.decimals_out",
        "special_softmax": "softmax.int", "special_log_softmax": "log_softmax.int",
        "special_xlogy": "xlogy.Tensor", "special_xlogy.self_scalar": "xlogy.Scalar_Self",
        "special_xlogy.other_scalar": "xlogy.Scalar_Other", "special_xlogy.out": "xlogy.OutTensor",
        "special_xlogy.self_scalar_out": "xlogy.OutScalar_Self",
        "special_xlogy.other_scalar_out": "xlogy.OutScalar_Other"}.items():
    _alias(_overload, _target)
del _name, _fn, _target, _overload

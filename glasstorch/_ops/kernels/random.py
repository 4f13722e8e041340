"""Random distributions (ATen's DistributionTemplates.h, cpu/DistributionKernels.cpp,
core/TransformationHelper.h, TensorFactories.cpp's randperm, Distributions.cpp's
multinomial).

Every kernel draws raw words from a ``Generator`` (``glasstorch/_core/generator.py``,
PyTorch's mt19937) and applies PyTorch's transformation, vectorized:

    uniform float/half/bfloat16   (word32 & (2^digits - 1)) * 2^-digits, then * (to-from) + from
    uniform double                (word64 & (2^53 - 1)) * 2^-53, ...
    random_(from, to)             word % range + from in uint64 arithmetic (word64
                                  when range >= 2^28, else word32), then int64, then
                                  the dtype (half and bfloat16 through float)
    random_()                     word % (max + 1)  (int64/double: word64)
    normal, numel >= 16 and contiguous: uniform fill, then Box-Muller per block of 16
                                  (float and its reduced types: avx_mathfun's log and
                                  sin/cos under AVX2/AVX512, libm's float ones under
                                  DEFAULT; double: libm's)
    normal otherwise              scalar Box-Muller in double, caching the spare sample
    exponential, cauchy, log_normal, geometric: double transforms with libm's
                                  functions; half and bfloat16 rounded through float
    bernoulli(p float)            uniform double < p
    bernoulli(p tensor)           uniform float (double if p is double) < p
    exponential                   -1/lambda * log1p(-uniform double)
    randperm                      Fisher-Yates with word32 % (n - i)

Elements are produced in memory order (PyTorch's serial TensorIterator loop),
so a non-contiguous output gets the same values a contiguous one would at the
same memory positions.
"""
from __future__ import annotations

import ctypes
import math
import warnings

import ml_dtypes
import numpy as np

from ..._core import dtype as dt
from ..._core.generator import get_generator
from ..._dispatcher.dispatcher import ops
from ..structured import check_overlap, checked_convert
from . import kernel, native

_FLOAT_DIGITS = {"float16": 11, "bfloat16": 8, "float32": 24, "float64": 53}
_CPP_NAMES = {"bool": "bool", "uint8": "unsigned char", "int8": "signed char",
              "int16": "short int", "int32": "int", "int64": "long int", "float16": "c10::Half",
              "bfloat16": "c10::BFloat16", "float32": "float", "float64": "double",
              "uint16": "short unsigned int", "uint32": "unsigned int",
              "uint64": "long unsigned int"}   # (the C++ type names, as GCC spells them)


# -- helpers ----------------------------------------------------------------------------

def _memory_order(t):
    """The permutation that walks ``t`` in memory order (outermost = largest stride)."""
    return sorted(range(t.dim()), key=lambda d: -t._stride[d])


def write_in_memory_order(t, values):
    """Write a flat array of ``t.numel()`` values into ``t`` in memory order."""
    if t.numel() == 0:
        return
    array = t._np()
    if t.dim() <= 1 or t.is_contiguous():
        array[...] = values.reshape(t._shape)
        return
    perm = _memory_order(t)
    array.transpose(perm)[...] = values.reshape([t._shape[d] for d in perm])


def read_in_memory_order(t, like):
    """``like`` (broadcast to t's shape) read in t's memory order, flat."""
    if t.dim() <= 1 or t.is_contiguous():
        return np.broadcast_to(like, t._shape).reshape(-1)
    perm = _memory_order(t)
    return np.broadcast_to(like, t._shape).transpose(perm).reshape(-1)


def from_double(values, dtype):
    """float64 ``values`` as ``static_cast<scalar_t>(double)`` gives them: half and
    bfloat16 through float (two roundings)."""
    if dtype in (dt.float16, dt.bfloat16):
        values = values.astype(np.float32)
    return values.astype(dtype.numpy)


def uniform_values(gen, n, dtype, lo=0.0, hi=1.0):
    """``n`` draws of at::uniform_real_distribution<dtype>(lo, hi)."""
    if dtype is dt.float64:
        words = gen.random64(n)
        x = (words & np.uint64((1 << 53) - 1)).astype(np.float64) * (2.0 ** -53)
        # x * 1 + 0 is x: normal_'s draws skip the (emulated) fused multiply-add
        return x if (lo, hi) == (0, 1) else native.multiply_add(x, hi - lo, lo)
    # float32, and half/bfloat16 too: their kernel draws in float (opmath) and rounds
    words = gen.random(n)
    x = (words & np.uint64((1 << 24) - 1)).astype(np.float32) * np.float32(2.0 ** -24)
    f, t = np.float32(lo), np.float32(hi)
    if f == 0 and t == 1:
        return x
    # x * (to - from) + from, one fused multiply-add where the compiled kernel
    # contracts it (AVX2/AVX512 capabilities), else two roundings
    return native.multiply_add(x, t - f, f)


def _uniform_double(gen, n):
    return uniform_values(gen, n, dt.float64)


def _check_floating(self, name):
    if self.dtype.category != dt.FLOATING:
        raise NotImplementedError(f'"{name}" not implemented for \'{self.dtype._short}\'')


def _fmt(x):
    return f"{x:g}" if isinstance(x, float) else str(x)


# -- uniform_ ------------------------------------------------------------------------

def _check_uniform(self, lo, hi):
    _check_floating(self, "check_uniform_bounds")
    limit = float(ml_dtypes.finfo(self.dtype.numpy).max)
    for bound, name in ((lo, "from"), (hi, "to")):
        if not -limit <= bound <= limit:        # (NaN too)
            raise RuntimeError(f"{name} is out of bounds for {_CPP_NAMES[self.dtype.name]}")
    if lo > hi:
        raise RuntimeError(f"uniform_ expects to return a [from, to) range, but found "
                           f"from={_fmt(lo)} > to={_fmt(hi)}")
    if hi - lo > limit:
        raise RuntimeError(f"uniform_ expects to-from <= std::numeric_limits<"
                           f"{self.dtype._short}>::max(), but found to={_fmt(hi)} and "
                           f"from={_fmt(lo)} which result in to-from to exceed the limit")


@kernel("uniform_")
def uniform_(self, lo=0.0, hi=1.0, *, generator=None):
    if self.dtype.category == dt.COMPLEX:      # real and imaginary parts alike
        if self.numel():
            uniform_(ops.aten.view_as_real.default(self), lo, hi, generator=generator)
        return self
    _check_uniform(self, lo, hi)
    check_overlap(self, self, (), {})      # an expanded self is refused
    gen = get_generator(generator)
    with gen._lock:
        values = uniform_values(gen, self.numel(), self.dtype, lo, hi)
    # a draw that rounds to ``to`` in the tensor's dtype becomes ``from``: the
    # range stays half-open
    values = values.astype(self.dtype.numpy)
    values[values == self.dtype.numpy.type(hi)] = self.dtype.numpy.type(lo)
    write_in_memory_order(self, values)
    return self


@kernel("uniform_meta")
def uniform_meta(self, lo=0.0, hi=1.0, *, generator=None):
    if self.dtype.category != dt.COMPLEX:
        _check_uniform(self, lo, hi)
    return self


# -- normal_ -------------------------------------------------------------------------

def _check_normal(self, std):
    if std < 0:
        raise RuntimeError(f"normal expects std >= 0.0, but found std {_fmt(std)}")
    if self.dtype.category != dt.COMPLEX:
        _check_floating(self, "normal_kernel_cpu")


def _normal_scalar_path(gen, n, mean, std):
    """at::normal_distribution<double>, one element at a time, with the spare sample."""
    out = np.empty(n, np.float64)
    i = 0
    if n and gen._next_double is not None:
        out[0] = native.multiply_add(np.float64(gen._next_double), std, mean)
        gen._next_double = None
        i = 1
    m = n - i
    if m:
        pairs = (m + 1) // 2
        u = _uniform_double(gen, 2 * pairs)
        u1, u2 = u[0::2], u[1::2]
        r = np.sqrt(-2.0 * native.libm("log1p", -u2))     # libm's, as PyTorch calls them
        theta = 2.0 * np.pi * u1
        z = np.empty(2 * pairs, np.float64)
        z[0::2] = r * native.libm("cos", theta)
        z[1::2] = r * native.libm("sin", theta)
        out[i:] = native.multiply_add(z[:m], std, mean)
        if m % 2:
            gen._next_double = float(z[m])
    return out


# avx_mathfun.h's float32 log and sin/cos (Cephes polynomials), as ATen's AVX2
# build runs them: GCC contracts each product feeding an add into one fused
# multiply-add (which product, where both operands of an add are products, was
# measured: bit-identical to PyTorch's normal_ over 10^6 draws)

def _madd(a, b, c):
    """a * b + c in float32, rounded once."""
    return native.fma(a, b, c).astype(np.float32)


_LOG_POLY = tuple(np.float32(c) for c in (
    7.0376836292E-2, -1.1514610310E-1, 1.1676998740E-1, -1.2420140846E-1, 1.4249322787E-1,
    -1.6668057665E-1, 2.0000714765E-1, -2.4999993993E-1, 3.3333331174E-1))


def _log256_ps(x):
    """log256_ps: x = m 2^e with m in [sqrt(1/2), sqrt 2), log(m) by a degree-9
    polynomial in m - 1, plus e ln 2 in two parts; NaN for x <= 0."""
    f32 = np.float32
    x = np.asarray(x, f32)
    invalid = x <= 0
    x = np.maximum(x, np.array(0x00800000, np.int32).view(f32))    # no subnormals
    bits = x.view(np.int32)
    e = ((bits >> 23) - 0x7f).astype(f32) + f32(1)
    m = ((bits & ~0x7f800000) | np.array(0.5, f32).view(np.int32)).view(f32)   # in [0.5, 1)
    low = m < f32(0.707106781186547524)
    e = e - np.where(low, f32(1), f32(0))
    m = (m - f32(1)) + np.where(low, m, f32(0))
    z = m * m
    y = np.full_like(m, _LOG_POLY[0])
    for c in _LOG_POLY[1:]:
        y = _madd(y, m, c)
    y = y * m
    y = _madd(y, z, e * f32(-2.12194440e-4))
    y = y - z * f32(0.5)
    y = _madd(e, f32(0.693359375), m + y)
    return np.where(invalid, f32(np.nan), y)


def _sincos256_ps(x):
    """sincos256_ps: |x| reduced by the multiple j of pi/4 (j even; pi/4 in three
    parts), then the sine and cosine polynomials on the remainder, swapped and
    signed by j's octant.  Returns (sin, cos)."""
    f32 = np.float32
    x = np.asarray(x, f32)
    sign_sin = x.view(np.int32) & np.int32(-2 ** 31)
    x = np.abs(x)
    j = (x * f32(1.27323954473516)).astype(np.int32)      # 4 / pi, truncated
    j = (j + 1) & ~1
    y = j.astype(f32)
    sign_sin = sign_sin ^ ((j & 4) << 29)
    sign_cos = (~(j - 2) & 4) << 29
    sine_first = (j & 2) == 0
    for part in (-0.78515625, -2.4187564849853515625e-4, -3.77489497744594108e-8):
        x = _madd(y, f32(part), x)
    z = x * x
    cos_poly = _madd(f32(2.443315711809948E-005), z, f32(-1.388731625493765E-003))
    cos_poly = _madd(cos_poly, z, f32(4.166664568298827E-002)) * z
    cos_poly = _madd(cos_poly, z, -(z * f32(0.5))) + f32(1)
    sin_poly = _madd(f32(-1.9515295891E-4), z, f32(8.3321608736E-3))
    sin_poly = _madd(sin_poly, z, f32(-1.6666654611E-1)) * z
    sin_poly = _madd(sin_poly, x, x)
    sin = np.where(sine_first, sin_poly, cos_poly)
    cos = np.where(sine_first, cos_poly, sin_poly)
    return (sin.view(np.int32) ^ sign_sin).view(f32), (cos.view(np.int32) ^ sign_cos).view(f32)


def _normal_fill(gen, n, mean, std, dtype):
    """normal_fill: uniforms for every element, then Box-Muller in blocks of 16
    (the last, partial block is redrawn and recomputed over the last 16 slots).
    Half and bfloat16 take the vectorized float path: uniforms are drawn only for
    the whole blocks (each block filled in float, then rounded), so the partial
    block's redraw follows them directly in the stream."""
    compute = np.float64 if dtype is dt.float64 else np.float32
    full = n // 16 * 16
    reduced = dtype not in (dt.float32, dt.float64)
    draw = dt.float32 if reduced else dtype
    data = np.empty(n, compute)
    data[:full if reduced else n] = uniform_values(gen, full if reduced else n, draw)
    mean, std = compute(mean), compute(std)

    def fill16(block):  # block: (k, 16)
        # the native loop (native.c's gt_normal_fill16) where the library is
        # loaded; this numpy emulation, bit for bit the same, otherwise
        if native.normal_fill16(block, mean, std, native.cpu_capability() != "DEFAULT"):
            return
        u1 = compute(1) - block[:, :8]               # exact in either precision
        u2 = block[:, 8:]
        if compute is np.float64:
            # normal_fill_16<double>: libm's log/cos/sin, then (r cos) * std + mean
            # rounded once (so PyTorch 2.13 computes it under every capability,
            # measured): bit-identical to PyTorch
            theta = 2.0 * np.pi * u2
            radius = np.sqrt(-2.0 * native.libm("log", u1))
            block[:, :8] = native.fma(radius * native.libm("cos", theta), std, mean)
            block[:, 8:] = native.fma(radius * native.libm("sin", theta), std, mean)
            return
        if native.cpu_capability() == "DEFAULT":
            # the scalar NormalFill16<float>: libm's logf/cosf/sinf, theta = 2pi * u2
            # in double rounded to float, fmaf(r cos, std, mean)
            radius = np.sqrt(np.float32(-2) * native.libm_f32("logf", u1))
            theta = (2.0 * np.pi * u2.astype(np.float64)).astype(np.float32)
            cos, sin = native.libm_f32("cosf", theta), native.libm_f32("sinf", theta)
        else:
            # NormalFill16<float, true> (AVX2; AVX512 runs it too: normal_stub has
            # no AVX512 kernel): avx_mathfun's log256_ps and sincos256_ps
            radius = np.sqrt(np.float32(-2) * _log256_ps(u1))
            sin, cos = _sincos256_ps(np.float32(2.0 * np.pi) * u2)
        block[:, :8] = native.fma(radius * cos, std, mean)
        block[:, 8:] = native.fma(radius * sin, std, mean)

    if full:
        blocks = data[:full].reshape(-1, 16)
        fill16(blocks)
        data[:full] = blocks.reshape(-1)
    if n % 16:
        tail = uniform_values(gen, 16, draw).astype(compute).reshape(1, 16)
        fill16(tail)
        data[n - 16:] = tail.reshape(-1)
    return data


@kernel("normal_")
def normal_(self, mean=0.0, std=1.0, *, generator=None):
    _check_normal(self, std)
    if self.dtype.category == dt.COMPLEX:      # each part with half the variance
        normal_(ops.aten.view_as_real.default(self), mean, std / math.sqrt(2),
                generator=generator)
        return self
    check_overlap(self, self, (), {})      # an expanded self is refused
    gen = get_generator(generator)
    n = self.numel()
    with gen._lock:
        if n >= 16 and self.is_contiguous():
            values = _normal_fill(gen, n, mean, std, self.dtype)
        else:
            values = _normal_scalar_path(gen, n, mean, std)
    write_in_memory_order(self, from_double(values, self.dtype))
    return self


@kernel("normal_meta")
def normal_meta(self, mean=0.0, std=1.0, *, generator=None):
    _check_normal(self, std)
    return self


def _check_std_tensor(std):
    if std.device.type != "meta" and std.numel() and \
            bool((std._cpu_array().astype(np.float64) < 0).any()):
        raise RuntimeError("normal expects all elements of std >= 0.0")


@kernel("normal_tensor_float")
def normal_tensor_float(mean, std=1.0, *, generator=None):
    if std < 0:
        raise RuntimeError(f"normal expects std >= 0.0, but found std {_fmt(std)}")
    out = ops.aten.empty_like.default(mean, memory_format=None)
    ops.aten.normal_.default(out, 0.0, std, generator=generator)
    return ops.aten.add_.Tensor(out, mean)


@kernel("normal_float_tensor")
def normal_float_tensor(mean, std, *, generator=None):
    _check_std_tensor(std)
    out = ops.aten.empty_like.default(std)
    ops.aten.normal_.default(out, 0.0, 1.0, generator=generator)
    ops.aten.mul_.Tensor(out, std)
    return ops.aten.add_.Tensor(out, mean)


@kernel("normal_tensor_tensor")
def normal_tensor_tensor(mean, std, *, generator=None):
    _check_std_tensor(std)
    from ..structured import broadcast_shapes, result_type
    shape = broadcast_shapes(mean._shape, std._shape)
    out = ops.aten.empty.memory_format(list(shape), dtype=result_type(mean, std),
                                       device=mean.device)
    ops.aten.normal_.default(out, 0.0, 1.0, generator=generator)
    ops.aten.mul_.Tensor(out, std)
    return ops.aten.add_.Tensor(out, mean)


@kernel("normal_float_float")
def normal_float_float(mean, std, size, *, generator=None, dtype=None, layout=None, device=None,
                       pin_memory=None):
    out = ops.aten.empty.memory_format(list(size), dtype=dtype, device=device)
    return ops.aten.normal_.default(out, mean, std, generator=generator)


# -- random_ -------------------------------------------------------------------------

def _dtype_max(dtype):
    if dtype.category == dt.FLOATING:
        return 1 << _FLOAT_DIGITS[dtype.name]
    if dtype is dt.bool_:
        return 1
    return int(np.iinfo(dtype.numpy).max)


def _dtype_min(dtype):
    if dtype.category == dt.FLOATING:
        return -(1 << _FLOAT_DIGITS[dtype.name])
    if dtype is dt.bool_:
        return 0
    return int(np.iinfo(dtype.numpy).min)


def _as_dtype_and_back(value, dtype):
    """``static_cast<int64_t>(static_cast<scalar_t>(value))`` for a floating dtype:
    int64 to float (double for float64; half and bfloat16 go through float), then
    back; a non-finite cast comes back as x86's integer indefinite (int64 min)."""
    x = np.array(value, np.int64).astype(np.float64 if dtype is dt.float64 else np.float32)
    if dtype in (dt.float16, dt.bfloat16):
        with np.errstate(over="ignore"):
            x = x.astype(dtype.numpy).astype(np.float32)
    return int(x) if np.isfinite(x) and abs(float(x)) < 2.0 ** 63 else -(1 << 63)


def _update_from(lo, dtype):
    """ATen's update_from: moves ``from`` right to the next integer that the
    dtype's rounding cannot push below it."""
    rounded = _as_dtype_and_back(lo + 1, dtype)
    if rounded < lo:
        n = max(abs(lo + 1).bit_length() - 1, 0)
        return rounded + (1 << (n - _FLOAT_DIGITS[dtype.name] + 1))
    return lo


def _update_to(hi, dtype):
    """ATen's update_to: moves ``to`` left likewise."""
    rounded = _as_dtype_and_back(hi - 1, dtype)
    if rounded >= hi:
        n = max(abs(hi - 1).bit_length() - 1, 0)
        return rounded - (1 << (n - _FLOAT_DIGITS[dtype.name] + 1))
    return hi


def _check_from_to_in_range(lo, hi_inc, dtype):
    """ATen's check_from_to_in_range: both ends inside the dtype's range, and a
    warning for floating ends beyond +-2^digits (where integers stop being exact)."""
    if dtype.category == dt.COMPLEX:
        raise RuntimeError("check_random_bounds handles only integral, floating-point and "
                           "boolean types")
    cpp = _CPP_NAMES[dtype.name]
    if dtype.category == dt.FLOATING:
        limit = float(ml_dtypes.finfo(dtype.numpy).max)
        low, high = -limit, limit
    elif dtype is dt.uint64:
        low, high = 0, (1 << 63) - 1
    else:
        low, high = _dtype_min(dtype), _dtype_max(dtype)
    for value, name in ((lo, "from"), (hi_inc, "to - 1")):
        if not low <= value <= high:
            raise RuntimeError(f"{name} is out of bounds for {cpp}")
    if dtype.category == dt.FLOATING:
        digits = _FLOAT_DIGITS[dtype.name]
        for value, name in ((lo, "from"), (hi_inc, "to - 1")):
            if not -(1 << digits) <= value <= (1 << digits):
                warnings.warn(f"{name} is out of bounds [-(2^{digits}), 2^{digits}]. Due to "
                              f"precision limitations {cpp} can support discrete uniform "
                              f"distribution only within this range. This warning will become "
                              f"an error in version 1.7 release, please fix the code in advance")


def _from_to_range(self, lo, hi):
    """(range, base) of random_(from, to) as ATen's random_from_to_impl computes
    them, ``hi`` None meaning up to the dtype's largest value; range None is the
    full 64-bit range (from = int64 min, to = None)."""
    dtype = self.dtype
    floating = dtype.category == dt.FLOATING
    if hi is not None:
        if lo >= hi:
            raise RuntimeError(f"random_ expects 'from' to be less than 'to', but got from={lo} "
                               f">= to={hi}")
        if floating:
            lo, hi = _update_from(lo, dtype), _update_to(hi, dtype)
            if lo >= hi:
                raise RuntimeError(f"random_ expects 'from' casted to dtype to be less than 'to' "
                                   f"casted to dtype, but got from={lo} >= to={hi}")
        _check_from_to_in_range(lo, hi - 1, dtype)
        return (hi - lo) % (1 << 64), lo
    if lo == -(1 << 63):
        return None, lo
    if dtype.category == dt.COMPLEX:
        raise RuntimeError("random_from_to_impl handles only integral, floating-point and "
                           "boolean types")
    if floating:
        hi_inc = 1 << _FLOAT_DIGITS[dtype.name]
        lo = _update_from(lo, dtype)
        if lo >= hi_inc:
            raise RuntimeError(f"random_ expects 'from' casted to dtype to be less than or equal "
                               f"to 'to_inc' casted to dtype, but got from={lo} > to_inc={hi_inc}")
    else:   # the dtype's max as int64 (uint64's wraps to -1)
        hi_inc = int(np.array(_dtype_max(dtype), np.uint64).view(np.int64))
    _check_from_to_in_range(lo, hi_inc, dtype)
    return (hi_inc - lo + 1) % (1 << 64), lo


def _check_full_range_dtype(dtype):
    """random_full_64_bits_range_kernel's dispatch (ATen's all types and bfloat16)
    and its own check."""
    if dtype in (dt.float16, dt.bool_, dt.uint16, dt.uint32, dt.uint64):
        raise NotImplementedError(f'"random_full_64_bits_range_kernel_cpu" not implemented for '
                                  f"'{dtype._short}'")
    if dtype not in (dt.int64, dt.float64, dt.float32, dt.bfloat16):
        raise RuntimeError("random_full_64_bits_range_kernel_cpu handles only int64, double, "
                           "float and bfloat16")


def _random_from_to_values(gen, n, rng, base):
    """``n`` int64 draws of uniform_int_from_to_distribution: ``(word % range + base)``
    in uint64 arithmetic, the word a 64-bit one when range >= 2^28 (else 32-bit);
    range None (the full 64-bit range): the 64-bit word itself."""
    if rng is None:
        return gen.random64(n).view(np.int64)
    words = gen.random64(n) if rng >= (1 << 28) else gen.random(n)
    return ((words % np.uint64(rng)) + np.uint64(base % (1 << 64))).view(np.int64)


def _store_random(self, values):
    """int64 (or uint64) draws cast to the dtype as ``static_cast<scalar_t>``:
    half and bfloat16 through float."""
    if self.dtype is dt.bool_:
        values = values != 0
    elif self.dtype in (dt.float16, dt.bfloat16):
        values = values.astype(np.float32)
    write_in_memory_order(self, values.astype(self.dtype.numpy))


@kernel("random_from")
def random_from(self, lo, hi=None, *, generator=None):
    rng, base = _from_to_range(self, lo, hi)
    if self.numel() == 0:
        return self
    if rng is None:
        _check_full_range_dtype(self.dtype)
    check_overlap(self, self, (), {})      # an expanded self is refused
    gen = get_generator(generator)
    with gen._lock:
        values = _random_from_to_values(gen, self.numel(), rng, base)
    _store_random(self, values)
    return self


@kernel("random_from_meta")
def random_from_meta(self, lo, hi=None, *, generator=None):
    """PyTorch's Meta kernels of random_ check nothing."""
    return self


@kernel("random_to")
def random_to(self, hi, *, generator=None):
    return random_from(self, 0, hi, generator=generator)


@kernel("random_to_meta")
def random_to_meta(self, hi, *, generator=None):
    return self


@kernel("random_")
def random_(self, *, generator=None):
    """uniform_int_distribution: word % (max + 1) for integers, % (2^digits + 1)
    for floating dtypes, the low bit for bool; int64 and double draw 64-bit words."""
    n = self.numel()
    if n == 0:
        return self
    dtype = self.dtype
    if dtype.category == dt.COMPLEX or dtype in (dt.uint16, dt.uint32, dt.uint64):
        raise NotImplementedError(f'"random_kernel_cpu" not implemented for \'{dtype._short}\'')
    check_overlap(self, self, (), {})      # an expanded self is refused
    gen = get_generator(generator)
    with gen._lock:
        if dtype is dt.bool_:
            values = gen.random(n) & np.uint64(1)
        elif dtype in (dt.int64, dt.float64):
            modulus = (1 << 63) if dtype is dt.int64 else (1 << 53) + 1
            values = gen.random64(n) % np.uint64(modulus)
        elif dtype.category == dt.FLOATING:
            values = gen.random(n) % np.uint64((1 << _FLOAT_DIGITS[dtype.name]) + 1)
        else:
            values = gen.random(n) % np.uint64(_dtype_max(dtype) + 1)
    _store_random(self, values.astype(np.int64))
    return self


@kernel("random_meta")
def random_meta(self, *, generator=None):
    return self


# -- exponential_ ----------------------------------------------------------------------

def _check_exponential(self, lambd):
    _check_floating(self, "exponential_cpu")
    if not lambd > 0:
        raise RuntimeError(f"exponential_ expects lambda > 0.0, but found lambda={_fmt(lambd)}")


@kernel("exponential_")
def exponential_(self, lambd=1.0, *, generator=None):
    _check_exponential(self, lambd)
    check_overlap(self, self, (), {})      # an expanded self is refused
    gen = get_generator(generator)
    with gen._lock:
        u = _uniform_double(gen, self.numel())
    write_in_memory_order(self, from_double(-1.0 / lambd * native.libm("log1p", -u),
                                            self.dtype))
    return self


@kernel("exponential_meta")
def exponential_meta(self, lambd=1.0, *, generator=None):
    _check_exponential(self, lambd)
    return self


# -- bernoulli -----------------------------------------------------------------------

def _check_p(p):
    if not 0 <= p <= 1:
        raise RuntimeError(f"bernoulli_ expects p to be in [0, 1], but got p={_fmt(p)}")


@kernel("bernoulli_float")
def bernoulli_float(self, p=0.5, *, generator=None):
    _check_p(p)
    check_overlap(self, self, (), {})
    gen = get_generator(generator)
    with gen._lock:
        values = _uniform_double(gen, self.numel()) < p
    _store_random(self, values.astype(np.int64))
    return self


@kernel("bernoulli_float_meta")
def bernoulli_float_meta(self, p=0.5, *, generator=None):
    _check_p(p)
    return self


def _check_p_tensor(self, p):
    from ..structured import broadcast_shapes
    if p.dtype.category != dt.FLOATING:
        raise NotImplementedError(f'"bernoulli_tensor_cpu_p_" not implemented for '
                                  f"'{p.dtype._short}'")
    shape = broadcast_shapes(self._shape, p._shape)
    if shape != tuple(self._shape):
        raise RuntimeError(f"The expanded size of the tensor ({self._shape[0] if self._shape else 0})"
                           f" must match the existing size ({p._shape[0] if p._shape else 0}) at "
                           f"non-singleton dimension 0.  Target sizes: {list(self._shape)}.  "
                           f"Tensor sizes: {list(p._shape)}")


@kernel("bernoulli_tensor")
def bernoulli_tensor(self, p, *, generator=None):
    _check_p_tensor(self, p)
    if p.device.type == "meta":
        raise NotImplementedError("Cannot copy out of meta tensor; no data!")
    check_overlap(self, self, (p,), {})
    gen = get_generator(generator)
    probs = read_in_memory_order(self, p._cpu_array())
    if not np.all((probs >= 0) & (probs <= 1)):      # nan fails both
        raise RuntimeError("Expected p_in >= 0 && p_in <= 1 to be true, but got false.  (Could "
                           "this error message be improved?  If so, please report an "
                           "enhancement request to PyTorch.)")
    with gen._lock:
        if p.dtype is dt.float64:
            u = _uniform_double(gen, self.numel())
        else:
            u = uniform_values(gen, self.numel(), dt.float32)
            probs = probs.astype(np.float32)
        values = u < probs
    write_in_memory_order(self, values.astype(self.dtype.numpy))
    return self


@kernel("bernoulli_tensor_meta")
def bernoulli_tensor_meta(self, p, *, generator=None):
    _check_p_tensor(self, p)
    return self


@kernel("bernoulli")
def bernoulli(self, *, generator=None):
    out = ops.aten.empty_like.default(self)
    return ops.aten.bernoulli_.Tensor(out, self, generator=generator)


@kernel("bernoulli_p")
def bernoulli_p(self, p, *, generator=None):
    out = ops.aten.empty_like.default(self)
    return ops.aten.bernoulli_.float(out, p, generator=generator)


# -- multinomial ---------------------------------------------------------------------

def _check_multinomial(self, n_sample, replacement):
    if self.dim() not in (1, 2):
        raise RuntimeError("prob_dist must be 1 or 2 dim")
    if self.dtype.category != dt.FLOATING:
        raise RuntimeError(f"multinomial only supports floating-point dtypes for input, got: "
                           f"{self.dtype._short}")
    if n_sample <= 0:
        raise RuntimeError("cannot sample n_sample <= 0 samples")
    n_categories = self._shape[-1]
    if not replacement and n_sample > n_categories:
        raise RuntimeError("cannot sample n_sample > prob_dist.size(-1) samples without "
                           "replacement")
    if n_categories > (1 << 24):
        raise RuntimeError("number of categories cannot exceed 2^24")
    shape = (n_sample,) if self.dim() == 1 else (self._shape[0], n_sample)
    return shape


@kernel("multinomial")
def multinomial(self, num_samples, replacement=False, *, generator=None):
    shape = _check_multinomial(self, num_samples, replacement)
    probs = self._np().astype(self.dtype.opmath).reshape(-1, self._shape[-1])
    if not replacement or num_samples == 1:
        if not np.isfinite(probs).all() or (probs < 0).any():
            raise RuntimeError("probability tensor contains either `inf`, `nan` or element < 0")
    elif not (probs >= 0).all():            # the with-replacement kernel's own checks
        raise RuntimeError("invalid multinomial distribution (encountering probability entry < 0)")
    elif not np.isfinite(probs).all():
        raise RuntimeError("invalid multinomial distribution (encountering probability entry = "
                           "infinity or NaN)")
    sums = probs.sum(axis=1)
    if (sums <= 0).any():
        raise RuntimeError("invalid multinomial distribution (sum of probabilities <= 0)")
    gen = get_generator(generator)
    result = np.empty((probs.shape[0], num_samples), np.int64)
    if not replacement or num_samples == 1:
        # PyTorch's trick: argmax/topk of p / Exp(1) noise (Gumbel-style sampling);
        # PyTorch takes this path for a single draw with replacement too.
        noise = ops.aten.exponential_.default(ops.aten.empty_like.default(self),
                                              generator=generator)
        q = probs / noise._np().astype(probs.dtype).reshape(probs.shape)
        order = np.argsort(-q, axis=1, kind="stable")
        result[...] = order[:, :num_samples]
    else:
        with gen._lock:
            for i in range(probs.shape[0]):
                cum = np.cumsum(probs[i])
                cum = cum / cum[-1]
                u = _uniform_double(gen, num_samples)
                result[i] = np.minimum(np.searchsorted(cum, u, side="left"), len(cum) - 1)
    out = ops.aten.empty.memory_format(list(shape), dtype=dt.int64, device=self.device)
    out._np()[...] = result.reshape(shape)
    return out


@kernel("multinomial_meta")
def multinomial_meta(self, num_samples, replacement=False, *, generator=None):
    shape = _check_multinomial(self, num_samples, replacement)
    return ops.aten.empty.memory_format(list(shape), dtype=dt.int64, device=self.device)


# -- factories: rand, randn, randint, randperm, *_like ---------------------------------

def _empty(size, dtype, device):
    return ops.aten.empty.memory_format(list(size), dtype=dtype, device=device)


@kernel("rand")
def rand(size, *, dtype=None, layout=None, device=None, pin_memory=None):
    return ops.aten.uniform_.default(_empty(size, dtype, device), 0.0, 1.0)


@kernel("rand_generator")
def rand_generator(size, *, generator=None, dtype=None, layout=None, device=None,
                   pin_memory=None):
    return ops.aten.uniform_.default(_empty(size, dtype, device), 0.0, 1.0, generator=generator)


@kernel("rand_out")
def rand_out(size, *, out):
    from .factory import empty_out
    return ops.aten.uniform_.default(empty_out(size, out=out), 0.0, 1.0)


@kernel("randn")
def randn(size, *, dtype=None, layout=None, device=None, pin_memory=None):
    return ops.aten.normal_.default(_empty(size, dtype, device), 0.0, 1.0)


@kernel("randn_generator")
def randn_generator(size, *, generator=None, dtype=None, layout=None, device=None,
                    pin_memory=None):
    return ops.aten.normal_.default(_empty(size, dtype, device), 0.0, 1.0, generator=generator)


@kernel("randn_out")
def randn_out(size, *, out):
    from .factory import empty_out
    return ops.aten.normal_.default(empty_out(size, out=out), 0.0, 1.0)


def _randint(low, high, size, generator, dtype, device):
    out = _empty(size, dtype if dtype is not None else dt.int64, device)
    return ops.aten.random_.__getattr__("from")(out, low, high, generator=generator)


@kernel("randint")
def randint(high, size, *, dtype=dt.int64, layout=None, device=None, pin_memory=None):
    return _randint(0, high, size, None, dtype, device)


@kernel("randint_generator")
def randint_generator(high, size, *, generator=None, dtype=dt.int64, layout=None, device=None,
                      pin_memory=None):
    return _randint(0, high, size, generator, dtype, device)


@kernel("randint_low")
def randint_low(low, high, size, *, dtype=dt.int64, layout=None, device=None, pin_memory=None):
    return _randint(low, high, size, None, dtype, device)


@kernel("randint_low_generator")
def randint_low_generator(low, high, size, *, generator=None, dtype=dt.int64, layout=None,
                          device=None, pin_memory=None):
    return _randint(low, high, size, generator, dtype, device)


@kernel("randint_out")
def randint_out(high, size, *, out):
    from .factory import empty_out
    return ops.aten.random_.__getattr__("from")(empty_out(size, out=out), 0, high)


@kernel("randint_low_out")
def randint_low_out(low, high, size, *, out):
    from .factory import empty_out
    return ops.aten.random_.__getattr__("from")(empty_out(size, out=out), low, high)


def _check_randperm(n, out):
    if n < 0:
        raise RuntimeError(f"n must be non-negative, got{n}")
    if out.dtype.category <= dt.INTEGRAL and n > 0 and n - 1 > _dtype_max(out.dtype):
        raise RuntimeError(f"n is too large for result tensor type: '{out.dtype._short}'")
    if out.dtype is dt.bool_ and n > 2:
        raise RuntimeError("n is too large for result tensor type: 'Bool'")


@kernel("randperm_generator_out")
def randperm_generator_out(n, *, generator=None, out):
    _check_randperm(n, out)
    if out._shape != (n,):
        ops.aten.resize_.default(out, [n])
    gen = get_generator(generator)
    perm = np.arange(n, dtype=np.int64)
    with gen._lock:
        words = gen.random(n - 1) if n > 1 else np.empty(0, np.uint64)
    # Fisher-Yates as PyTorch runs it: swap i with i + word % (n - i).
    z = (words % np.arange(n, 1, -1, dtype=np.uint64)).astype(np.int64).tolist()
    p = perm.tolist()
    for i, zi in enumerate(z):
        j = zi + i
        p[i], p[j] = p[j], p[i]
    out._np()[...] = np.asarray(p, dtype=np.int64).astype(out.dtype.numpy)
    return out


@kernel("randperm_generator_out_meta")
def randperm_generator_out_meta(n, *, generator=None, out):
    _check_randperm(n, out)
    if out._shape != (n,):
        ops.aten.resize_.default(out, [n])
    return out


def _randperm(n, generator, dtype, device):
    if n < 0:
        raise RuntimeError(f"Trying to create tensor with negative dimension {n}: [{n}]")
    out = _empty((n,), dtype if dtype is not None else dt.int64, device)
    return ops.aten.randperm.generator_out(n, generator=generator, out=out)


@kernel("randperm")
def randperm(n, *, dtype=dt.int64, layout=None, device=None, pin_memory=None):
    return _randperm(n, None, dtype, device)


@kernel("randperm_generator")
def randperm_generator(n, *, generator=None, dtype=dt.int64, layout=None, device=None,
                       pin_memory=None):
    return _randperm(n, generator, dtype, device)


@kernel("randperm_out")
def randperm_out(n, *, out):
    return ops.aten.randperm.generator_out(n, generator=None, out=out)


def _like(self, dtype, device, memory_format):
    return ops.aten.empty_like.default(self, dtype=dtype, device=device,
                                       memory_format=memory_format)


@kernel("rand_like")
def rand_like(self, *, dtype=None, layout=None, device=None, pin_memory=None,
              memory_format=None):
    return ops.aten.uniform_.default(_like(self, dtype, device, memory_format), 0.0, 1.0)


@kernel("randn_like")
def randn_like(self, *, dtype=None, layout=None, device=None, pin_memory=None,
               memory_format=None):
    return ops.aten.normal_.default(_like(self, dtype, device, memory_format), 0.0, 1.0)


def _randint_like(self, low, high, generator, dtype, device, memory_format):
    out = _like(self, dtype, device, memory_format)
    return ops.aten.random_.__getattr__("from")(out, low, high, generator=generator)


def _high_scalar(high):
    """A Tensor ``high`` as ATen reads it: a 0-dim CPU tensor, item() as int64."""
    if high.numel() != 1 or high.dim() != 0 or high.device.type != "cpu":
        raise RuntimeError("high must be a scalar tensor and on CPU")
    return int(checked_convert(ops.aten.item.default(high), dt.int64))


@kernel("randint_like")
def randint_like(self, high, *, dtype=None, layout=None, device=None, pin_memory=None,
                 memory_format=None):
    return _randint_like(self, 0, high, None, dtype, device, memory_format)


@kernel("randint_like_generator")
def randint_like_generator(self, high, *, generator=None, dtype=None, layout=None, device=None,
                           pin_memory=None, memory_format=None):
    return _randint_like(self, 0, high, generator, dtype, device, memory_format)


@kernel("randint_like_tensor")
def randint_like_tensor(self, high, *, dtype=None, layout=None, device=None, pin_memory=None,
                        memory_format=None):
    return _randint_like(self, 0, _high_scalar(high), None, dtype, device, memory_format)


@kernel("randint_like_tensor_meta")
def randint_like_tensor_meta(self, high, *, dtype=None, layout=None, device=None,
                             pin_memory=None, memory_format=None):
    return _like(self, dtype, device, memory_format)


@kernel("randint_like_tensor_generator")
def randint_like_tensor_generator(self, high, *, generator=None, dtype=None, layout=None,
                                  device=None, pin_memory=None, memory_format=None):
    return _randint_like(self, 0, _high_scalar(high), generator, dtype, device, memory_format)


@kernel("randint_like_low")
def randint_like_low(self, low, high, *, dtype=None, layout=None, device=None, pin_memory=None,
                     memory_format=None):
    return _randint_like(self, low, high, None, dtype, device, memory_format)


@kernel("randint_like_low_generator")
def randint_like_low_generator(self, low, high, *, generator=None, dtype=None, layout=None,
                               device=None, pin_memory=None, memory_format=None):
    return _randint_like(self, low, high, generator, dtype, device, memory_format)


# -- cauchy_ -------------------------------------------------------------------------

def _check_cauchy(self, sigma):
    if self.dtype.category != dt.FLOATING:
        raise RuntimeError(f"Cauchy distribution is a continuous probability distribution. "
                           f"dtype must be a floating point but you specified "
                           f"{_CPP_NAMES[self.dtype.name]}")
    if not sigma > 0:
        raise RuntimeError(f"cauchy_ expects sigma > 0.0, but found sigma={_fmt(sigma)}")


@kernel("cauchy_")
def cauchy_(self, median=0.0, sigma=1.0, *, generator=None):
    """at::cauchy_distribution<double>: median + sigma * tan(pi * (u - 0.5)), u a
    double uniform, one element at a time (libm's tan)."""
    _check_cauchy(self, sigma)
    check_overlap(self, self, (), {})
    gen = get_generator(generator)
    with gen._lock:
        u = _uniform_double(gen, self.numel())
    tan = native.libm("tan", math.pi * (u - 0.5))
    write_in_memory_order(self, from_double(native.multiply_add(tan, sigma, median),
                                            self.dtype))
    return self


@kernel("cauchy_meta")
def cauchy_meta(self, median=0.0, sigma=1.0, *, generator=None):
    _check_cauchy(self, sigma)
    return self


# -- per-element samplers: _standard_gamma, _sample_dirichlet, poisson, binomial --------
#
# ATen's Distributions.cpp runs these serially (cpu_serial_kernel), one element after
# the other in the output's order, each drawing as many values as its rejection loop
# needs from at::uniform_real_distribution<double> and at::normal_distribution<double>
# (Box-Muller with the generator's cached spare).  Distributions.h holds the
# algorithms: Marsaglia-Tsang for gamma, Hoermann's transformed rejection (BTRS) or
# inversion for binomial, Hoermann's PTRS or multiplication for Poisson.  The
# arithmetic below follows their C++ types: ``S`` is the tensor's scalar type
# (np.float32 or float), everything else is double.

class _SerialDraws:
    """Double uniforms and normals drawn one at a time, as ATen's samplers draw them.

    Each uniform takes one 64-bit word.  Words are read ahead in blocks (vectorized);
    ``finish`` rewinds the engine and advances it by exactly the words used, so the
    generator ends where PyTorch's does."""

    def __init__(self, gen, expected):
        self._gen = gen
        self._start = gen._engine.state
        self._ahead = max(int(expected), 16)
        self._block, self._pos, self._used = [], 0, 0

    def uniform(self):
        if self._pos == len(self._block):
            words = self._gen.random64(self._ahead)
            self._block = ((words & np.uint64((1 << 53) - 1)).astype(np.float64)
                           * (2.0 ** -53)).tolist()
            self._pos = 0
        self._pos += 1
        self._used += 1
        return self._block[self._pos - 1]

    def normal(self):
        gen = self._gen
        if gen._next_double is not None:
            value, gen._next_double = gen._next_double, None
            return value
        u1, u2 = self.uniform(), self.uniform()
        radius = math.sqrt(-2.0 * math.log1p(-u2))
        theta = 2.0 * math.pi * u1
        gen._next_double = radius * math.sin(theta)
        return radius * math.cos(theta)

    def finish(self):
        self._gen._engine.state = self._start
        self._gen.random(2 * self._used)


def _ln(x):
    """C's log: -inf at 0, nan below (Python's math.log raises there)."""
    return math.log(x) if x > 0 else (-math.inf if x == 0 else math.nan)


def _sqrt(x):
    return math.sqrt(x) if x >= 0 else math.nan


def _cmax(a, b):
    """std::max(a, b): ``a`` unless a < b (so a nan ``b`` gives ``a``)."""
    return b if a < b else a


def _third(S):
    """``1.0f / 3.0f`` in the sampler's arithmetic: the float constant, as S."""
    return S(np.float32(1.0) / np.float32(3.0))


_F32_0331 = float(np.float32(0.0331))


def _gamma_one(alpha, draws, S):
    """sample_gamma<S, double>(alpha) (Marsaglia and Tsang, boosted below 1)."""
    scale = 1.0
    if alpha < 1:
        if alpha == 0:
            return 0.0
        base = 1 - draws.uniform()
        exponent = float(S(1.0) / alpha)
        scale *= base ** exponent if base > 0 else (0.0 if exponent > 0 else math.inf)
        alpha = alpha + S(1.0)
    d = float(alpha - _third(S))
    c = 1.0 / _sqrt(9.0 * d)
    while True:
        while True:
            x = draws.normal()
            y = 1.0 + c * x
            if not y <= 0:
                break
        v = y * y * y
        u = 1 - draws.uniform()
        xx = x * x
        if u < 1.0 - _F32_0331 * xx * xx:
            return scale * d * v
        if _ln(u) < 0.5 * xx + d * (1.0 - v + _ln(v)):
            return scale * d * v


def _check_float_kernel(t, name):
    if t.dtype not in (dt.float32, dt.float64):
        raise NotImplementedError(f'"{name}" not implemented for \'{t.dtype._short}\'')


def _scalar_type(t):
    return np.float32 if t.dtype is dt.float32 else float


def _flat(t):
    """``t``'s values in row-major order (the order of a fresh contiguous output)."""
    return np.ascontiguousarray(t._cpu_array()).reshape(-1)


def _output(like, values):
    out = ops.aten.empty.memory_format(list(like._shape), dtype=like.dtype, device=like.device)
    out._np()[...] = np.asarray(values, dtype=like.dtype.numpy).reshape(like._shape)
    return out


def _serial(gen, n_hint, fn):
    """Run ``fn(draws)`` holding the generator's lock, then settle the stream."""
    with gen._lock:
        draws = _SerialDraws(gen, n_hint)
        try:
            return fn(draws)
        finally:
            draws.finish()


@kernel("_standard_gamma")
def _standard_gamma(self, generator=None):
    """_s_gamma_cpu: one Gamma(alpha, 1) draw per element, at least the type's
    smallest normal number."""
    _check_float_kernel(self, "gamma_cpu")
    S = _scalar_type(self)
    tiny = S(np.finfo(self.dtype.numpy).tiny)
    alphas = [S(a) for a in _flat(self).tolist()]
    values = _serial(get_generator(generator), 3 * len(alphas), lambda draws: [
        _cmax(tiny, S(_gamma_one(a, draws, S))) for a in alphas])
    return _output(self, values)


@kernel("sampler_meta")
def sampler_meta(first, *others, generator=None):
    """The Meta kernel of the per-element samplers and their gradient helpers: a
    fresh tensor shaped like the first argument."""
    return ops.aten.empty_like.default(first, memory_format=None)


@kernel("_sample_dirichlet")
def _sample_dirichlet(self, generator=None):
    """_s_dirichlet_cpu: Gamma draws in double (alpha widened, at least DBL_MIN),
    normalized over the last dim, then clamped to [tiny, the float below 1] of S."""
    _check_float_kernel(self, "dirichlet")
    if self.dim() == 0:
        raise IndexError("Dimension out of range (expected to be in range of [-1, 0], "
                         "but got -1)")
    alphas = _flat(self).astype(np.float64).tolist()
    tiny64 = float(np.finfo(np.float64).tiny)
    gammas = _serial(get_generator(generator), 3 * len(alphas), lambda draws: [
        _cmax(tiny64, _gamma_one(a, draws, float)) for a in alphas])
    gamma = ops.aten.empty.memory_format(list(self._shape), dtype=dt.float64,
                                         device=self.device)
    gamma._np()[...] = np.asarray(gammas, np.float64).reshape(self._shape)
    # the sum over the last dim is the sum op's, in its order of additions
    total = ops.aten.sum.dim_IntList(gamma, [-1], True)._np()
    ratio = (gamma._np() / total).astype(self.dtype.numpy)
    np_type = self.dtype.numpy.type
    below_one = np.nextafter(np_type(1), np_type(0))
    return _output(self, np.minimum(below_one, np.maximum(np.finfo(np_type).tiny, ratio)))


def _poisson_one(lam, draws):
    """sample_poisson(lambda): PTRS (Hoermann 1993) from 10 up, else the product of
    uniforms against exp(-lambda)."""
    if not lam >= 0:
        raise RuntimeError("invalid Poisson rate, expected rate to be non-negative")
    if lam >= 10:
        slam, loglam = math.sqrt(lam), math.log(lam)
        b = 0.931 + 2.53 * slam
        a = -0.059 + 0.02483 * b
        invalpha = 1.1239 + 1.1328 / (b - 3.4)
        vr = 0.9277 - 3.6224 / (b - 2)
        while True:
            u = draws.uniform() - 0.5
            v = draws.uniform()
            us = 0.5 - abs(u)
            t = ((2 * a / us if us else math.inf) + b) * u + lam + 0.43
            if not math.isfinite(t):
                continue                      # us == 0: k is out of range either way
            k = math.floor(t)
            if us >= 0.07 and v <= vr:
                return k
            if k < 0 or (us < 0.013 and v > us):
                continue
            if (_ln(v) + math.log(invalpha) - math.log(a / (us * us) + b)
                    <= -lam + k * loglam - native.c_function("lgamma")(k + 1.0)):
                return k
    if lam == 0:
        return 0
    enlam = math.exp(-lam)
    count, prod = 0, 1.0
    while True:
        prod *= draws.uniform()
        if prod > enlam:
            count += 1
        else:
            return count


@kernel("poisson")
def poisson(self, generator=None):
    """_s_poisson_cpu: one Poisson(rate) draw per element (the rate read as double)."""
    _check_float_kernel(self, "poisson_cpu")
    rates = _flat(self).astype(np.float64).tolist()
    values = _serial(get_generator(generator), 2 * len(rates), lambda draws: [
        _poisson_one(r, draws) for r in rates])
    return _output(self, values)


_STIRLING_TAIL = (0.0810614667953272, 0.0413406959554092, 0.0276779256849983,
                  0.02079067210376509, 0.0166446911898211, 0.0138761288230707,
                  0.0118967099458917, 0.0104112652619720, 0.00925546218271273,
                  0.00833056343336287)


def _stirling_tail(k):
    """log(k!) minus its Stirling approximation: tabulated to 9, a series above."""
    if k <= 9:
        return _STIRLING_TAIL[int(k)]
    kp1sq = (k + 1) * (k + 1)
    return (1.0 / 12 - (1.0 / 360 - 1.0 / 1260 / kp1sq) / kp1sq) / (k + 1)


def _floor_s(x, S):
    return S(math.floor(x)) if math.isfinite(x) else S(x)


def _binomial_inversion(count, prob, draws, S):
    """The number of geometric(prob) waiting times that fit in ``count`` trials."""
    logprob = float(_log1p_s(-prob, S))
    geom_sum, num_geom = 0.0, S(0)
    while True:
        t = _ln(draws.uniform()) / logprob
        geom_sum += math.ceil(t) if math.isfinite(t) else t
        if geom_sum > count:
            return num_geom
        num_geom = num_geom + S(1)


def _btrs(count, prob, draws, S):
    """Hoermann's transformed rejection with squeeze (prob <= 0.5, count*prob >= 10)."""
    stddev = float(np.sqrt(count * prob * (1 - prob)) if S is np.float32
                   else math.sqrt(count * prob * (1 - prob)))
    b = 1.15 + 2.53 * stddev
    a = -0.0873 + 0.0248 * b + 0.01 * float(prob)
    c = float(count * prob) + 0.5
    v_r = 0.92 - 4.2 / b
    r = float(prob / (1 - prob))
    alpha = (2.83 + 5.1 / b) * stddev
    m = float(_floor_s(float((count + 1) * prob), S))
    n = float(count)
    while True:
        u = draws.uniform() - 0.5
        v = draws.uniform()
        us = 0.5 - abs(u)
        k = _floor_s(((2 * a / us if us else math.inf) + b) * u + c, S)
        if k < 0 or k > count:
            continue
        if us >= 0.07 and v <= v_r:
            return k
        v = _ln(v * alpha / (a / (us * us) + b))
        kf = float(k)
        upperbound = ((m + 0.5) * _ln((m + 1) / (r * (n - m + 1)))
                      + float(count + 1) * _ln((n - m + 1) / float(count - k + 1))
                      + (kf + 0.5) * _ln(r * float(count - k + 1) / float(k + 1))
                      + _stirling_tail(m) + _stirling_tail(n - m)
                      - _stirling_tail(kf) - _stirling_tail(float(count - k)))
        if v <= upperbound:
            return k


def _log1p_s(x, S):
    """std::log1p in S: log1pf for float (libm's), log1p for double."""
    if S is not np.float32:
        return math.log1p(x)
    return np.float32(native.c_function("log1pf", ctypes.c_float)(float(x)))


def _binomial_one(count, prob, draws, S):
    """sample_binomial<S, double>(count, prob)."""
    if count <= 0 or prob <= 0:
        return S(0)
    if prob >= 1:
        return count
    if prob <= 0.5:
        if count * prob >= 10:
            return _btrs(count, prob, draws, S)
        return _binomial_inversion(count, prob, draws, S)
    if prob > 0.5:
        qprob = S(1.0 - float(prob))
        if count * qprob >= 10:
            return count - _btrs(count, qprob, draws, S)
        return count - _binomial_inversion(count, qprob, draws, S)
    return S(math.nan)


def _broadcast_to_first(first, *others):
    """TensorIterator over a fresh output of ``first``'s shape: the others broadcast
    to it, with the iterator's error when they cannot."""
    from ..structured import broadcast_shapes
    shape = tuple(first._shape)
    arrays = []
    for t in others:
        broadcast_shapes(shape, t._shape)          # raises the size-mismatch error
        arrays.append(np.broadcast_to(t._cpu_array(), shape).reshape(-1))
    return arrays


@kernel("binomial")
def binomial(count, prob, generator=None):
    """_s_binomial_cpu: one Binomial(count, prob) draw per element."""
    if count.dtype.category != dt.FLOATING:
        raise ValueError(f"binomial only supports floating-point dtypes for count, got: "
                         f"{count.dtype._short}")
    if prob.dtype is not count.dtype:
        raise RuntimeError(f"Found dtype {prob.dtype._short} but expected {count.dtype._short}")
    _check_float_kernel(count, "binomial_cpu")
    S = _scalar_type(count)
    (probs,) = _broadcast_to_first(count, prob)
    pairs = list(zip((S(c) for c in _flat(count).tolist()), (S(p) for p in probs.tolist())))
    values = _serial(get_generator(generator), 4 * len(pairs), lambda draws: [
        _binomial_one(c, p, draws, S) for c, p in pairs])
    return _output(count, values)


# -- reparameterized gradients: _standard_gamma_grad, _dirichlet_grad --------------------

_PSI_10 = 2.25175258906672110764
_DIGAMMA_ASYMPTOTIC = (8.33333333333333333333E-2, -2.10927960927960927961E-2,
                       7.57575757575757575758E-3, -4.16666666666666666667E-3,
                       3.96825396825396825397E-3, -8.33333333333333333333E-3,
                       8.33333333333333333333E-2)


def _digamma_one(x):
    """Distributions.h's digamma_one (Cephes' psi) in double."""
    if x == 0:
        return math.inf
    extra = 0.0
    if x < 0:
        if x == math.floor(x):
            return math.inf
        extra = -math.pi / math.tan(math.pi * x)
        x = 1 - x
    result = 0.0
    while x < 10:
        result -= 1 / x
        x += 1
    if x == 10:
        return result + _PSI_10 + extra
    y = 0.0
    if x < 1.0e17:
        z = 1.0 / (x * x)
        poly = 0.0
        for coef in _DIGAMMA_ASYMPTOTIC:
            poly = poly * z + coef
        y = z * poly
    return result + math.log(x) - (0.5 / x) - y + extra


def _pow(x, y):
    try:
        return math.pow(x, y)
    except (ValueError, OverflowError):
        return float(np.power(np.float64(x), np.float64(y)))


_GAMMA_GRAD_COEF = ((0.16009398, -0.094634809, 0.025146376, -0.0030648343,
                     1, 0.32668115, 0.10406089, 0.0014179084),
                    (0.53487893, 0.1298071, 0.065735949, -0.0015649758,
                     0.16639465, 0.020070113, -0.0035938915, -0.00058392623),
                    (0.040121004, -0.0065914022, -0.0026286047, -0.0013441777,
                     0.017050642, -0.0021309326, 0.00085092367, -1.5247877e-07))


def _standard_gamma_grad_one(alpha, x):
    """-(d/dalpha cdf(x; alpha)) / pdf(x; alpha) (standard_gamma_grad_one): a Taylor
    series for small x, Rice's saddle point expansion for large alpha, else a
    bivariate rational fit in log(x / alpha) and log(alpha)."""
    with np.errstate(all="ignore"):
        if x < 0.8:
            numer, denom = 1.0, alpha
            series1, series2 = numer / denom, numer / (denom * denom)
            for i in range(1, 6):
                numer *= -x / i
                denom += 1
                series1 += numer / denom
                series2 += numer / (denom * denom)
            pow_x_alpha = _pow(x, alpha)
            gamma_pdf = _pow(x, alpha - 1) * math.exp(-x)
            gamma_cdf = pow_x_alpha * series1
            d_cdf = (_ln(x) - _digamma_one(alpha)) * gamma_cdf - pow_x_alpha * series2
            result = float(np.float64(-d_cdf) / np.float64(gamma_pdf))
            return 0.0 if math.isnan(result) else result
        if alpha > 8.0:
            if 0.9 * alpha <= x <= 1.1 * alpha:
                numer_1 = 1 + 24 * alpha * (1 + 12 * alpha)
                numer_2 = (1440 * (alpha * alpha) + 6 * x * (53 - 120 * x)
                           - 65 * x * x / alpha + alpha * (107 + 3600 * x))
                denom = 1244160 * (alpha * alpha) * (alpha * alpha)
                return numer_1 * numer_2 / denom
            denom = math.sqrt(8 * alpha)
            term2 = denom / (alpha - x)
            term3 = _pow(x - alpha - alpha * _ln(x / alpha), -1.5)
            term23 = term2 - term3 if x < alpha else term2 + term3
            term1 = (_ln(x / alpha) * term23
                     - math.sqrt(2 / alpha) * (alpha + x) / ((alpha - x) * (alpha - x)))
            stirling = 1 + 1 / (12 * alpha) * (1 + 1 / (24 * alpha))
            return -stirling * (x * term1) / denom
        u, v = _ln(x / alpha), _ln(alpha)
        coef = [c0 + u * (c1 + u * c2) for c0, c1, c2 in zip(*_GAMMA_GRAD_COEF)]
        p = coef[0] + v * (coef[1] + v * (coef[2] + v * coef[3]))
        q = coef[4] + v * (coef[5] + v * (coef[6] + v * coef[7]))
        return math.exp(p / q)


def _pointwise_output(first, others, fn):
    """A fresh output of ``first``'s shape and dtype, element by element in double."""
    arrays = [_flat(first).astype(np.float64)] + [
        a.astype(np.float64) for a in _broadcast_to_first(first, *others)]
    # numpy scalars: a division by zero gives inf/nan as in C, not an exception
    values = [fn(*vals) for vals in zip(*arrays)]
    return _output(first, values)


@kernel("_standard_gamma_grad")
def _standard_gamma_grad(self, output):
    _check_float_kernel(self, "_standard_gamma_grad_cpu")
    return _pointwise_output(self, (output,), _standard_gamma_grad_one)


def _beta_grad_alpha_small(x, alpha, beta):
    """d sample / d alpha of Beta(alpha, beta) near x = 0 (a Taylor series)."""
    factor = _digamma_one(alpha) - _digamma_one(alpha + beta) - _ln(x)
    numer = 1.0
    series = numer / alpha * (factor + 1 / alpha)
    for i in range(1, 11):
        numer *= (i - beta) * x / i
        denom = alpha + i
        series += numer / denom * (factor + 1 / denom)
    result = x * _pow(1 - x, -beta) * series
    return 0.0 if math.isnan(result) else result


def _beta_grad_beta_small(x, alpha, beta):
    """d sample / d beta of Beta(alpha, beta) near x = 0 (a Taylor series)."""
    factor = _digamma_one(alpha + beta) - _digamma_one(beta)
    numer, betas, dbetas, series = 1.0, 1.0, 0.0, factor / alpha
    for i in range(1, 9):
        numer *= -x / i
        dbetas = dbetas * (beta - i) + betas
        betas = betas * (beta - i)
        series += numer / (alpha + i) * (dbetas + factor * betas)
    result = -_pow(1 - x, 1 - beta) * series
    return 0.0 if math.isnan(result) else result


def _beta_grad_alpha_mid(x, alpha, beta):
    """Rice's saddle point expansion, for alpha and beta both large."""
    total = alpha + beta
    mean = alpha / total
    std = math.sqrt(alpha * beta / (total + 1)) / total
    if mean - 0.1 * std <= x <= mean + 0.1 * std:
        poly = (47 * x * (beta * beta) * (beta * beta) + alpha * (
            (43 + 20 * (16 + 27 * beta) * x) * (beta * beta) * beta + alpha * (
                3 * (59 + 180 * beta - 90 * x) * (beta * beta) + alpha * (
                    (453 + 1620 * beta * (1 - x) - 455 * x) * beta + alpha * (
                        8 * (1 - x) * (135 * beta - 11))))))
        prefactor_num = (1 + 12 * alpha) * (1 + 12 * beta) / (total * total)
        prefactor_den = 12960 * alpha * alpha * alpha * beta * beta * (1 + 12 * total)
        return prefactor_num / (1 - x) * poly / prefactor_den
    prefactor = -x / math.sqrt(2 * alpha * beta / total)
    stirling = ((1 + 1 / (12 * alpha) + 1 / (288 * alpha * alpha))
                * (1 + 1 / (12 * beta) + 1 / (288 * beta * beta))
                / (1 + 1 / (12 * total) + 1 / (288 * total * total)))
    term1_num = 2 * (alpha * alpha) * (x - 1) + alpha * beta * (x - 1) - x * (beta * beta)
    axbx = alpha * (x - 1) + beta * x
    term1_den = math.sqrt(2 * alpha / beta) * _pow(total, 1.5) * axbx * axbx
    term1 = term1_num / term1_den
    term2 = 0.5 * _ln(alpha / (total * x))
    term3 = math.sqrt(8 * alpha * beta / total) / (beta * x + alpha * (x - 1))
    term4_base = beta * _ln(beta / (total * (1 - x))) + alpha * _ln(alpha / (total * x))
    term4 = _pow(term4_base, -1.5)
    term1234 = term1 + term2 * (term3 + (term4 if x < mean else -term4))
    return stirling * prefactor * term1234


_DIRICHLET_GRAD_COEF = np.array([
    [[[1.003668233, -0.01061107488, -0.0657888334, 0.01201642863],
      [0.6336835991, -0.3557432599, 0.05486251648, -0.001465281033],
      [-0.03276231906, 0.004474107445, 0.002429354597, -0.0001557569013]],
     [[0.221950385, -0.3187676331, 0.01799915743, 0.01074823814],
      [-0.2951249643, 0.06219954479, 0.01535556598, 0.001550077057],
      [0.02155310298, 0.004170831599, 0.001292462449, 6.976601077e-05]],
     [[-0.05980841433, 0.008441916499, 0.01085618172, 0.002319392565],
      [0.02911413504, 0.01400243777, -0.002721828457, 0.000751041181],
      [0.005900514878, -0.001936558688, -9.495446725e-06, 5.385558597e-05]]],
    [[[1, -0.02924021934, -0.04438342661, 0.007285809825],
      [0.6357567472, -0.3473456711, 0.05454656494, -0.002407477521],
      [-0.03301322327, 0.004845219414, 0.00231480583, -0.0002307248149]],
     [[0.5925320577, -0.1757678135, 0.01505928619, 0.000564515273],
      [0.1014815858, -0.06589186703, 0.01272886114, -0.0007316646956],
      [-0.007258481865, 0.001096195486, 0.0003934994223, -4.12701925e-05]],
     [[0.06469649321, -0.0236701437, 0.002902096474, -5.896963079e-05],
      [0.001925008108, -0.002869809258, 0.0008000589141, -6.063713228e-05],
      [-0.0003477407336, 6.959756487e-05, 1.097287507e-05, -1.650964693e-06]]]]).tolist()


def _dirichlet_grad_one(x, alpha, total):
    """-(d/dalpha cdf(x; alpha, total - alpha)) / pdf / (1 - x) (dirichlet_grad_one):
    asymptotic series near 0 and 1, a saddle point expansion for large parameters,
    else a rational correction to an analytic approximation.  (ATen evaluates the
    small-x series in the tensor's type; here all in double.)"""
    with np.errstate(all="ignore"):
        beta = total - alpha
        boundary = total * x * (1 - x)
        if x <= 0.5 and boundary < 2.5:
            return _beta_grad_alpha_small(x, alpha, beta)
        if x >= 0.5 and boundary < 0.75:
            return -_beta_grad_beta_small(1 - x, beta, alpha)
        if alpha > 6 and beta > 6:
            return _beta_grad_alpha_mid(x, alpha, beta)
        u = _ln(x)
        a = _ln(alpha) - u
        b = _ln(total) - a
        pow_u, pow_a = (1, u, u * u), (1, a, a * a)
        p = q = 0.0
        for i in range(3):
            for j in range(3):
                ua = pow_u[i] * pow_a[j]
                cp, cq = _DIRICHLET_GRAD_COEF[0][i][j], _DIRICHLET_GRAD_COEF[1][i][j]
                p += ua * (cp[0] + b * (cp[1] + b * (cp[2] + b * cp[3])))
                q += ua * (cq[0] + b * (cq[1] + b * (cq[2] + b * cq[3])))
        approx = x * (_digamma_one(total) - _digamma_one(alpha)) / beta
        return p / q * approx


@kernel("_dirichlet_grad")
def _dirichlet_grad(x, alpha, total):
    _check_float_kernel(x, "_dirichlet_grad_cpu")
    return _pointwise_output(x, (alpha, total), _dirichlet_grad_one)


# -- geometric_, log_normal_ (cpu_serial_kernel loops of at::*_distribution<double>) ------

def _check_geometric(self, p):
    if self.dtype is dt.bool_ or self.dtype.is_complex:
        raise NotImplementedError(f'"geometric_cpu" not implemented for \'{self.dtype._short}\'')
    if not 0 < p < 1:
        raise RuntimeError(f"geometric_ expects p to be in (0, 1), but got p={_fmt(p)}")


@kernel("geometric_")
def geometric_(self, p, *, generator=None):
    """at::geometric_distribution<double>: ceil(log(u) / log1p(-p)), u a double
    uniform, element by element in memory order (any real dtype)."""
    _check_geometric(self, p)
    check_overlap(self, self, (), {})
    gen = get_generator(generator)
    with gen._lock:
        u = _uniform_double(gen, self.numel())
    with np.errstate(divide="ignore"):
        values = np.ceil(native.libm("log", u) / math.log1p(-p))
    write_in_memory_order(self, from_double(values, self.dtype))
    return self


@kernel("geometric_meta")
def geometric_meta(self, p, *, generator=None):
    _check_geometric(self, p)
    return self


def _check_log_normal(self, std):
    _check_floating(self, "log_normal_cpu")
    if not std > 0:
        raise RuntimeError(f"log_normal_ expects std > 0.0, but found std={_fmt(std)}")


@kernel("log_normal_")
def log_normal_(self, mean=1.0, std=2.0, *, generator=None):
    """at::lognormal_distribution<double>: exp(mean + std * normal), each normal a
    scalar Box-Muller draw in double (the generator's spare sample used first)."""
    _check_log_normal(self, std)
    check_overlap(self, self, (), {})
    n = self.numel()
    normals = _serial(get_generator(generator), n, lambda draws: [draws.normal()
                                                                  for _ in range(n)])
    values = native.libm("exp", native.multiply_add(np.asarray(normals, np.float64), std, mean))
    write_in_memory_order(self, from_double(values, self.dtype))
    return self


@kernel("log_normal_meta")
def log_normal_meta(self, mean=1.0, std=2.0, *, generator=None):
    _check_log_normal(self, std)
    return self


def _functional_sampler(name):
    """The out-of-place op PyTorch's codegen derives from an in-place sampler
    (``aten::cauchy``): a clone of self, filled in place."""
    @kernel(name)
    def functional(self, *args, **kwargs):
        inplace = getattr(ops.aten, name + "_").default
        return inplace(ops.aten.clone.default(self), *args, **kwargs)
    functional.__name__ = name


for _sampler in ("cauchy", "geometric", "log_normal"):
    _functional_sampler(_sampler)

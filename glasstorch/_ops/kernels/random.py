"""Random distributions (ATen's DistributionTemplates.h, cpu/DistributionKernels.cpp,
core/TransformationHelper.h, TensorFactories.cpp's randperm, Distributions.cpp's
multinomial).

Every kernel draws raw words from a ``Generator`` (``glasstorch/_core/generator.py``,
PyTorch's mt19937) and applies PyTorch's transformation, vectorized:

    uniform float/half/bfloat16   (word32 & (2^digits - 1)) * 2^-digits, then * (to-from) + from
    uniform double                (word64 & (2^53 - 1)) * 2^-53, ...
    random_(from, to)             word % range + from  (word64 when range >= 2^32 for
                                  int64/double/float/bfloat16 outputs, else word32)
    random_()                     word % (max + 1)  (int64/double: word64)
    normal, numel >= 16 and contiguous: uniform fill, then Box-Muller per block of 16
    normal otherwise              scalar Box-Muller in double, caching the spare sample
    bernoulli(p float)            uniform double < p
    bernoulli(p tensor)           uniform float (double if p is double) < p
    exponential                   -1/lambda * log1p(-uniform double)
    randperm                      Fisher-Yates with word32 % (n - i)

Elements are produced in memory order (PyTorch's serial TensorIterator loop),
so a non-contiguous output gets the same values a contiguous one would at the
same memory positions.
"""
from __future__ import annotations

import ml_dtypes
import numpy as np

from ..._core import dtype as dt
from ..._core.generator import get_generator
from ..._dispatcher.dispatcher import ops
from ..structured import check_overlap, checked_convert
from . import kernel, native

_FLOAT_DIGITS = {"float16": 11, "bfloat16": 8, "float32": 24, "float64": 53}
_CPP_NAMES = {"bool": "bool", "uint8": "unsigned char", "int8": "signed char",
              "int16": "short", "int32": "int", "int64": "long", "float16": "c10::Half",
              "bfloat16": "c10::BFloat16", "float32": "float", "float64": "double",
              "uint16": "unsigned short", "uint32": "unsigned int", "uint64": "unsigned long"}


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


def uniform_values(gen, n, dtype, lo=0.0, hi=1.0):
    """``n`` draws of at::uniform_real_distribution<dtype>(lo, hi)."""
    if dtype is dt.float64:
        words = gen.random64(n)
        x = (words & np.uint64((1 << 53) - 1)).astype(np.float64) * (2.0 ** -53)
        return native.multiply_add(x, hi - lo, lo)
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
    if lo > hi:
        raise RuntimeError(f"uniform_ expects to return a [from, to) range, but found "
                           f"from={_fmt(lo)} > to={_fmt(hi)}")
    limit = float(ml_dtypes.finfo(self.dtype.numpy).max)
    if hi - lo > limit:
        raise RuntimeError(f"uniform_ expects to-from <= std::numeric_limits<"
                           f"{_CPP_NAMES[self.dtype.name]}>::max(), but found to={_fmt(hi)} and "
                           f"from={_fmt(lo)} which result in to-from to exceed the limit")


@kernel("uniform_")
def uniform_(self, lo=0.0, hi=1.0, *, generator=None):
    _check_uniform(self, lo, hi)
    check_overlap(self, self, (), {})      # an expanded self is refused
    gen = get_generator(generator)
    with gen._lock:
        values = uniform_values(gen, self.numel(), self.dtype, lo, hi)
    write_in_memory_order(self, values.astype(self.dtype.numpy))
    return self


@kernel("uniform_meta")
def uniform_meta(self, lo=0.0, hi=1.0, *, generator=None):
    _check_uniform(self, lo, hi)
    return self


# -- normal_ -------------------------------------------------------------------------

def _check_normal(self, std):
    _check_floating(self, "normal_kernel_cpu")
    if std < 0:
        raise RuntimeError(f"normal expects std >= 0.0, but found std {_fmt(std)}")


def _normal_scalar_path(gen, n, mean, std):
    """at::normal_distribution<double>, one element at a time, with the spare sample."""
    out = np.empty(n, np.float64)
    i = 0
    if n and gen._next_double is not None:
        out[0] = gen._next_double * std + mean
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


def _normal_fill(gen, n, mean, std, dtype):
    """normal_fill: uniforms for every element, then Box-Muller in blocks of 16
    (the last, partial block is redrawn and recomputed over the last 16 slots)."""
    compute = np.float64 if dtype is dt.float64 else np.float32
    data = uniform_values(gen, n, dtype if dtype in (dt.float32, dt.float64) else dt.float32)
    data = data.astype(compute)
    mean, std = compute(mean), compute(std)

    def fill16(block):  # block: (k, 16)
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
        # float32: PyTorch's loop computes in float (theta = 2pi * u2 rounded to
        # float, then float approximations of log/sin/cos that depend on the CPU
        # path); glasstorch rounds theta the same way and takes the rest in float64
        # (libm), rounded once: within 2 ulp of the values' scale of PyTorch's
        # under AVX2/AVX512, 16 under DEFAULT (measured; tests/test_nn_init.py)
        radius = np.sqrt(-2.0 * native.libm("log", u1))
        theta = (np.float32(2.0 * np.pi) * u2).astype(np.float64)
        block[:, :8] = radius * native.libm("cos", theta) * float(std) + float(mean)
        block[:, 8:] = radius * native.libm("sin", theta) * float(std) + float(mean)

    full = n // 16 * 16
    if full:
        blocks = data[:full].reshape(-1, 16)
        fill16(blocks)
        data[:full] = blocks.reshape(-1)
    if n % 16:
        tail = uniform_values(gen, 16, dtype if dtype in (dt.float32, dt.float64)
                              else dt.float32).astype(compute).reshape(1, 16)
        fill16(tail)
        data[n - 16:] = tail.reshape(-1)
    return data


@kernel("normal_")
def normal_(self, mean=0.0, std=1.0, *, generator=None):
    _check_normal(self, std)
    check_overlap(self, self, (), {})      # an expanded self is refused
    gen = get_generator(generator)
    n = self.numel()
    with gen._lock:
        if n >= 16 and self.is_contiguous():
            values = _normal_fill(gen, n, mean, std, self.dtype)
        else:
            values = _normal_scalar_path(gen, n, mean, std)
    write_in_memory_order(self, values.astype(self.dtype.numpy))
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


def _check_random_dtype(self):
    if self.dtype.category == dt.COMPLEX:
        raise NotImplementedError(f'"random_from_to_range_calc" not implemented for '
                                  f"'{self.dtype._short}'")


def _check_from_to(self, lo, hi):
    """(range, base) for random_(from, to); ``hi`` None means up to the dtype's max."""
    _check_random_dtype(self)
    cpp = _CPP_NAMES[self.dtype.name]
    if hi is None:
        if self.dtype.category == dt.FLOATING:
            hi_inc = _dtype_max(self.dtype)
        elif self.dtype is dt.int64:
            hi_inc = (1 << 63) - 1
        else:
            hi_inc = _dtype_max(self.dtype)
        if lo > hi_inc:
            raise RuntimeError(f"random_ expects 'from' casted to dtype to be less than or equal "
                               f"to 'to_inc' casted to dtype, but got from={lo} > to_inc={hi_inc}")
        if not (_dtype_min(self.dtype) <= lo <= _dtype_max(self.dtype)):
            raise RuntimeError(f"from is out of bounds for {cpp}")
        return hi_inc - lo + 1, lo
    if lo >= hi:
        raise RuntimeError(f"random_ expects 'from' to be less than 'to', but got from={lo} >= "
                           f"to={hi}")
    if not (_dtype_min(self.dtype) <= lo <= _dtype_max(self.dtype)):
        raise RuntimeError(f"from is out of bounds for {cpp}")
    if not (_dtype_min(self.dtype) <= hi - 1 <= _dtype_max(self.dtype)):
        raise RuntimeError(f"to - 1 is out of bounds for {cpp}")
    return hi - lo, lo


def _random_from_to_values(gen, n, rng, base, dtype, unbounded=False):
    wide = (unbounded and dtype in (dt.int32, dt.int64, dt.float64)) or \
        (dtype in (dt.int64, dt.float64, dt.float32, dt.bfloat16) and rng >= (1 << 32))
    if rng >= (1 << 64):  # the full 64-bit range: the word itself, reinterpreted
        return gen.random64(n).view(np.int64)
    words = gen.random64(n) if wide else gen.random(n)
    values = (words % np.uint64(rng)).astype(object if base < 0 and dtype is dt.int64 else
                                              np.int64)
    if values.dtype == object:
        return np.array([(int(v) + base) for v in values], dtype=np.int64) \
            if n else np.empty(0, np.int64)
    return values + np.int64(base)


def _store_random(self, values):
    if self.dtype is dt.bool_:
        values = values != 0
    elif self.dtype.category == dt.FLOATING and self.dtype in (dt.float16, dt.bfloat16):
        values = values.astype(np.float32)
    write_in_memory_order(self, values.astype(self.dtype.numpy))


@kernel("random_from")
def random_from(self, lo, hi=None, *, generator=None):
    rng, base = _check_from_to(self, lo, hi)
    check_overlap(self, self, (), {})      # an expanded self is refused
    gen = get_generator(generator)
    with gen._lock:
        # observed: with ``to=None`` int32 outputs draw 64-bit words too
        values = _random_from_to_values(gen, self.numel(), rng, base, self.dtype,
                                        unbounded=hi is None)
    _store_random(self, values)
    return self


@kernel("random_from_meta")
def random_from_meta(self, lo, hi=None, *, generator=None):
    _check_from_to(self, lo, hi)
    return self


@kernel("random_to")
def random_to(self, hi, *, generator=None):
    return random_from(self, 0, hi, generator=generator)


@kernel("random_to_meta")
def random_to_meta(self, hi, *, generator=None):
    _check_from_to(self, 0, hi)
    return self


@kernel("random_")
def random_(self, *, generator=None):
    _check_random_dtype(self)
    check_overlap(self, self, (), {})      # an expanded self is refused
    gen = get_generator(generator)
    n = self.numel()
    dtype = self.dtype
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
    _check_random_dtype(self)
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
    write_in_memory_order(self, (-1.0 / lambd * np.log1p(-u)).astype(self.dtype.numpy))
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

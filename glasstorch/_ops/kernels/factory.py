"""Factories, fills, ranges and conversions (ATen's TensorFactories.cpp,
RangeFactories.cpp, Fill.cpp, TensorConversions.cpp).

Only ``empty.memory_format`` and ``empty_strided`` reach a backend on their
own: their BackendSelect kernels read ``device`` (or the thread's default
device, ``with torch.device("meta"):``) and redispatch to CPU or Meta.  Every
other factory is a composite: ``zeros`` = ``empty`` + ``zero_``, ``full`` =
``empty`` + ``fill_``, ``arange`` = ``empty`` + ``arange.start_out``, ... as
in PyTorch, so the Meta device comes for free from the filling ops' Meta
kernels.
"""
from __future__ import annotations

import math
import mmap
import os
import warnings

import numpy as np

from ..._core import dispatch_key as dk
from ..._core import dtype as dt
from ..._core import tls
from ..._core.device import device as Device
from ..._core.layout import channels_last, channels_last_3d, contiguous_format, preserve_format
from ..._dispatcher.binding import _is_symint
from ..._dispatcher.dispatcher import ops
from ..._core.storage import UntypedStorage
from ..._tensor import Tensor, channels_last_strides, keys_for_device
from ..structured import checked_convert, convert_array, elementwise_strides, empty_tensor
from . import kernel, native
from ._common import _no_meta_kernel, _rounded
from ._inner import inner, inner_op

CPU = Device("cpu")
_BACKEND_BITS = {"cpu": dk.key_bits(dk.DispatchKey.CPU), "meta": dk.key_bits(dk.DispatchKey.Meta)}


# -- helpers ------------------------------------------------------------------------

def resolve_device(device) -> Device:
    """The device a factory allocates on: the one given, else the thread's
    default (``with torch.device(...)`` / ``set_default_device``), else CPU."""
    if device is None:
        device = tls.default_device() or CPU
    device = Device(device)
    if device.type == "cuda":
        from ... import cuda
        cuda._lazy_init()
    return device


def check_size(size, name=None):
    for n in size:
        if n < 0:
            if name:
                raise RuntimeError(f"{name}: Dimension size must be non-negative.")
            raise RuntimeError(f"Trying to create tensor with negative dimension {n}: "
                               f"{list(size)}")


def strides_for(shape, memory_format):
    if memory_format is None or memory_format is contiguous_format or \
            memory_format is preserve_format:
        return None
    if memory_format is channels_last:
        if len(shape) != 4:
            raise RuntimeError("required rank 4 tensor to use channels_last format")
        return channels_last_strides(shape)
    if memory_format is channels_last_3d:
        if len(shape) != 5:
            raise RuntimeError("required rank 5 tensor to use channels_last_3d format")
        return channels_last_strides(shape)
    raise RuntimeError(f"memory format {memory_format} is not supported")


def _backend_select(op_getter):
    """A BackendSelect kernel: compute the backend from ``device`` and redispatch."""
    after = dk.full_after(dk.DispatchKey.BackendSelect)

    def backend_select(ks, *args, device=None, **kwargs):
        device = resolve_device(device)
        bits = _BACKEND_BITS.get(device.type)
        if bits is None:
            raise RuntimeError(f"no allocator for device {device}")
        return op_getter().redispatch((ks & after) | bits, *args, device=device, **kwargs)
    return backend_select


kernel("empty_backend_select", takes_keyset=True)(
    _backend_select(lambda: ops.aten.empty.memory_format))
kernel("empty_strided_backend_select", takes_keyset=True)(
    _backend_select(lambda: ops.aten.empty_strided.default))
kernel("from_file_backend_select", takes_keyset=True)(
    _backend_select(lambda: ops.aten.from_file.default))


def _dtype(dtype):
    return dtype if dtype is not None else dt.get_default_dtype()


# -- empty ---------------------------------------------------------------------------

@inner_op("aten::empty.memory_format")
def _empty_unchecked(size, *, dtype, device, memory_format=None):
    """empty for the valid sizes a kernel computed (nothing to check)."""
    size = tuple(size)
    return empty_tensor(size, dtype, resolve_device(device), strides_for(size, memory_format))


@kernel("empty")
def empty(size, *, dtype=None, layout=None, device=None, pin_memory=None, memory_format=None):
    size = tuple(size)
    check_size(size)
    return empty_tensor(size, _dtype(dtype), resolve_device(device),
                        strides_for(size, memory_format))


@inner_op("aten::empty_strided")
def _empty_strided_unchecked(size, stride, *, dtype, device):
    """empty_strided for the valid geometry a kernel computed (nothing to check)."""
    return empty_tensor(tuple(size), dtype, resolve_device(device), tuple(stride))


@kernel("empty_strided")
def empty_strided(size, stride, *, dtype=None, layout=None, device=None, pin_memory=None):
    size, stride = tuple(size), tuple(stride)
    check_size(size)
    if len(size) != len(stride):
        raise RuntimeError("mismatch in length of strides and shape")
    if any(s < 0 for s in stride):
        raise RuntimeError(f"Storage size calculation overflowed with sizes={list(size)} and "
                           f"strides={list(stride)}")
    device = resolve_device(device)
    return empty_tensor(size, _dtype(dtype), device, stride)


@kernel("empty_out")
def empty_out(size, *, memory_format=None, out):
    size = tuple(size)
    check_size(size)
    if out._shape != size:
        ops.aten.resize_.default(out, list(size))
    return out


def like_strides(self, memory_format):
    """empty_like's layout rule: preserve (the default) keeps a dense input's
    strides, else infers dense strides in the input's dim order."""
    if memory_format is None or memory_format is preserve_format:
        if self.is_non_overlapping_and_dense():
            return tuple(self._stride)
        return elementwise_strides(self._shape, [self])
    return strides_for(self._shape, memory_format)


@kernel("empty_like")
@inner_op("aten::empty_like")
def empty_like(self, *, dtype=None, layout=None, device=None, pin_memory=None,
               memory_format=None):
    """ATen's empty_like: a dense input keeps its strides (``empty_strided``)
    unless a memory format is asked for (``empty`` in that format)."""
    stride = like_strides(self, memory_format)
    dtype = dtype if dtype is not None else self.dtype
    device = device if device is not None else self.device
    if stride is None:
        return inner.empty(self._shape, dtype=dtype, device=device)
    if memory_format is not None and memory_format is not preserve_format:
        return inner.empty(self._shape, dtype=dtype, device=device, memory_format=memory_format)
    return inner.empty_strided(self._shape, stride, dtype=dtype, device=device)


# -- fills ---------------------------------------------------------------------------

def _fill_value(value, dtype, numel: int):
    """fill_'s conversion: checked, except on ATen's one-element fast path
    (scalar_fill), where a real number filling a float16 or bfloat16 tensor goes
    through float32 unchecked and becomes +-inf when too large."""
    if numel == 1 and dtype in (dt.float16, dt.bfloat16) and \
            isinstance(value, (int, float)) and not isinstance(value, bool):
        with np.errstate(over="ignore"):
            return np.float32(float(value)).astype(dtype.numpy)
    return checked_convert(value, dtype)


@kernel("fill_scalar")
@inner_op("aten::fill_.Scalar")
def fill_scalar(self, value):
    self._np()[...] = _fill_value(value, self.dtype, self.numel())
    return self


@kernel("fill_scalar_meta")
def fill_scalar_meta(self, value):
    _fill_value(value, self.dtype, self.numel())
    return self


def _check_fill_tensor(value):
    if value.dim() != 0:
        raise RuntimeError(f"fill_ only supports 0-dimension value tensor but got tensor with "
                           f"{value.dim()} dimensions.")


@kernel("fill_tensor")
def fill_tensor(self, value):
    _check_fill_tensor(value)
    if value.device.type == "meta":
        raise NotImplementedError("Cannot copy out of meta tensor; no data!")
    return fill_scalar(self, ops.aten._local_scalar_dense.default(value))


@kernel("fill_tensor_meta")
def fill_tensor_meta(self, value):
    _check_fill_tensor(value)
    return self


@kernel("fill_functional")
def fill_functional(self, value):
    return ops.aten.fill_.Scalar(ops.aten.empty_like.default(self), value)


@kernel("fill_functional_tensor")
def fill_functional_tensor(self, value):
    return ops.aten.fill_.Tensor(ops.aten.empty_like.default(self), value)


GRAIN_SIZE = 32768   # at::internal::GRAIN_SIZE


@kernel("zero_")
@inner_op("aten::zero_")
def zero_(self):
    """ATen's zero_: a small dense CPU tensor is cleared in place (its
    zero_cpu_ memset, no op dispatched); anything else is ``fill_(0)``."""
    if self.device.type == "cpu" and self.numel() < GRAIN_SIZE and \
            self.is_non_overlapping_and_dense():
        self._np()[...] = 0
        return self
    return ops.aten.fill_.Scalar(self, 0)


def _empty(size, dtype, device):
    return ops.aten.empty.memory_format(list(size), dtype=dtype, device=device)


@kernel("zeros")
def zeros(size, *, dtype=None, layout=None, device=None, pin_memory=None):
    check_size(size, "zeros")
    return ops.aten.zero_.default(_empty(size, dtype, device))


@inner_op("aten::zeros")
def _zeros_unchecked(size, *, dtype, device):
    """zeros (empty + zero_) for the valid sizes a kernel computed."""
    return inner.zero_(inner.empty(size, dtype=dtype, device=device))


@kernel("zeros_out")
def zeros_out(size, *, out):
    return ops.aten.zero_.default(empty_out(size, out=out))


@kernel("ones")
def ones(size, *, dtype=None, layout=None, device=None, pin_memory=None):
    return ops.aten.fill_.Scalar(_empty(size, dtype, device), 1)


@kernel("ones_out")
def ones_out(size, *, out):
    return ops.aten.fill_.Scalar(empty_out(size, out=out), 1)


def full_dtype(fill_value):
    """``full``'s dtype when none is given: the fill value's (bool, int64,
    default float, default complex)."""
    return dt.scalar_dtype(fill_value.item() if isinstance(fill_value, np.generic)
                           else fill_value)


@kernel("full")
def full(size, fill_value, *, dtype=None, layout=None, device=None, pin_memory=None):
    dtype = dtype if dtype is not None else full_dtype(fill_value)
    return ops.aten.fill_.Scalar(_empty(size, dtype, device), fill_value)


@kernel("full_out")
def full_out(size, fill_value, *, out):
    return ops.aten.fill_.Scalar(empty_out(size, out=out), fill_value)


def _like(self, dtype, device, memory_format):
    return ops.aten.empty_like.default(self, dtype=dtype, device=device,
                                       memory_format=memory_format)


@kernel("zeros_like")
def zeros_like(self, *, dtype=None, layout=None, device=None, pin_memory=None,
               memory_format=None):
    return ops.aten.zero_.default(_like(self, dtype, device, memory_format))


@kernel("ones_like")
def ones_like(self, *, dtype=None, layout=None, device=None, pin_memory=None,
              memory_format=None):
    return ops.aten.fill_.Scalar(_like(self, dtype, device, memory_format), 1)


@kernel("full_like")
def full_like(self, fill_value, *, dtype=None, layout=None, device=None, pin_memory=None,
              memory_format=None):
    return ops.aten.fill_.Scalar(_like(self, dtype, device, memory_format), fill_value)


@kernel("scalar_tensor")
def scalar_tensor(s, *, dtype=None, layout=None, device=None, pin_memory=None):
    return ops.aten.fill_.Scalar(_empty((), dtype, device), s)


def _new_options(self, dtype, device):
    return (dtype if dtype is not None else self.dtype,
            device if device is not None else self.device)


@kernel("new_empty")
def new_empty(self, size, *, dtype=None, layout=None, device=None, pin_memory=None):
    return _empty(size, *_new_options(self, dtype, device))


@kernel("new_empty_strided")
def new_empty_strided(self, size, stride, *, dtype=None, layout=None, device=None,
                      pin_memory=None):
    dtype, device = _new_options(self, dtype, device)
    return ops.aten.empty_strided.default(size, stride, dtype=dtype, device=device)


@kernel("new_zeros")
def new_zeros(self, size, *, dtype=None, layout=None, device=None, pin_memory=None):
    return ops.aten.zero_.default(new_empty(self, size, dtype=dtype, device=device))


@kernel("new_ones")
def new_ones(self, size, *, dtype=None, layout=None, device=None, pin_memory=None):
    return ops.aten.fill_.Scalar(new_empty(self, size, dtype=dtype, device=device), 1)


@kernel("new_full")
def new_full(self, size, fill_value, *, dtype=None, layout=None, device=None, pin_memory=None):
    return ops.aten.fill_.Scalar(new_empty(self, size, dtype=dtype, device=device), fill_value)


# -- ranges --------------------------------------------------------------------------

def _is_integral_scalar(x):
    return isinstance(x, (bool, int, np.integer, np.bool_)) or _is_symint(x)


def _acc(x, dtype):
    """Scalar.to<accscalar_t>(): int64 for integral outputs, float for half/bfloat16,
    double otherwise."""
    if dtype.category <= dt.INTEGRAL:
        return int(x.real if isinstance(x, complex) else x)
    return float(x.real if isinstance(x, complex) else x)


def arange_size(start, end, step, dtype) -> int:
    if any(map(_is_symint, (start, end, step))) and all(map(_is_integral_scalar,
                                                            (start, end, step))):
        return _symbolic_arange_size(start, end, step)
    xstart, xend, xstep = (_acc(v, dtype) for v in (start, end, step))
    if xstep == 0:
        raise RuntimeError("step must be nonzero")
    if not (math.isfinite(float(xstart)) and math.isfinite(float(xend))):
        raise RuntimeError(f"unsupported range: {_fmt(xstart)} -> {_fmt(xend)}")
    if not ((xstep > 0 and xend >= xstart) or (xstep < 0 and xend <= xstart)):
        raise RuntimeError("upper bound and lower bound inconsistent with step sign")
    if dtype is dt.int64:
        sgn = (xstep > 0) - (xstep < 0)
        num = xend - xstart + xstep - sgn
        size_d = float(abs(num) // abs(xstep)) * (1 if (num >= 0) == (xstep > 0) else -1)
    else:
        size_d = math.ceil((float(end) - float(start)) / float(step))
    if not (0 <= size_d <= 2 ** 63 - 1):
        raise RuntimeError("invalid size, possible overflow?")
    return int(size_d)


def _symbolic_arange_size(start, end, step):
    """Integer bounds with a symbolic one: the length as an expression,
    ``ceil((end - start) / step)`` in integers, as PyTorch's arange reference
    computes it (``arange(0, s0, 2)`` has ``(s0 + 1)//2`` elements)."""
    if step == 0:
        raise RuntimeError("step must be nonzero")
    if not ((step > 0 and end >= start) or (step < 0 and end <= start)):
        raise RuntimeError("upper bound and lower bound inconsistent with step sign")
    return (end - start + step - 1) // step if step > 0 else (start - end - step - 1) // -step


def _fmt(x):
    if isinstance(x, float):
        return "inf" if x == math.inf else "-inf" if x == -math.inf else "nan" if x != x \
            else f"{x:g}"
    return str(x)


def _resize_for_range(out, size):
    if out.numel() != size:
        if out.numel() > 0:
            warnings.warn(
                f"The number of elements in the out tensor of shape {list(out._shape)} is "
                f"{out.numel()} which does not match the computed number of elements {size}. "
                "Note that this may occur as a result of rounding error. The out tensor will be "
                f"resized to a tensor of shape ({size},).", UserWarning, stacklevel=4)
        ops.aten.resize_.default(out, [size])


@kernel("arange_start_out")
def arange_start_out(start, end, step=1, *, out):
    size = arange_size(start, end, step, out.dtype)
    _resize_for_range(out, size)
    if out.dtype.category <= dt.INTEGRAL:
        values = _acc(start, out.dtype) + _acc(step, out.dtype) * np.arange(size, dtype=np.int64)
    else:
        compute = np.float32 if out.dtype in (dt.float16, dt.bfloat16) else np.float64
        values = compute(_acc(start, out.dtype)) + compute(_acc(step, out.dtype)) * \
            np.arange(size, dtype=compute)
    out._np()[...] = convert_array(values, dt.FROM_NUMPY[values.dtype], out.dtype)
    return out


@kernel("arange_start_out_meta")
def arange_start_out_meta(start, end, step=1, *, out):
    _resize_for_range(out, arange_size(start, end, step, out.dtype))
    return out


def _arange(start, end, step, dtype, device):
    if dtype is None:
        dtype = dt.int64 if all(_is_integral_scalar(v) for v in (start, end, step)) \
            else dt.get_default_dtype()
    out = _empty((0,), dtype, device)
    return ops.aten.arange.start_out(start, end, step, out=out)


@kernel("arange")
def arange(end, *, dtype=None, layout=None, device=None, pin_memory=None):
    return _arange(0, end, 1, dtype, device)


@kernel("arange_start")
def arange_start(start, end, *, dtype=None, layout=None, device=None, pin_memory=None):
    return _arange(start, end, 1, dtype, device)


@kernel("arange_start_step")
def arange_start_step(start, end, step=1, *, dtype=None, layout=None, device=None,
                      pin_memory=None):
    return _arange(start, end, step, dtype, device)


@kernel("arange_out")
def arange_out(end, *, out):
    return ops.aten.arange.start_out(0, end, 1, out=out)


def _check_steps(steps):
    if steps < 0:
        raise RuntimeError("number of steps must be non-negative")


def _linspace_values(start, end, steps, dtype):
    """Both halves as RangeFactoriesKernel computes them: start + step*i for the
    first half, end - step*(steps-1-i) for the second (in scalar_t; double step
    for integral outputs).  For float32/float64 each value is one fused
    multiply-add where PyTorch's kernel is compiled with FMA contraction (the AVX2
    and AVX512 capabilities), else a rounded product and a rounded sum."""
    if dtype.category <= dt.INTEGRAL:
        s, e = float(int(_acc(start, dtype))), float(int(_acc(end, dtype)))
        compute = np.float64
    else:
        compute = np.float32 if dtype.itemsize <= 4 and dtype.category == dt.FLOATING \
            else np.float64
        if dtype.category == dt.COMPLEX:
            compute = np.complex64 if dtype is dt.complex64 else np.complex128
            s, e = complex(start), complex(end)
        else:
            s, e = float(start), float(end)
    s, e = compute(s), compute(e)
    if steps == 1:
        return np.full((1,), s, dtype=compute)
    step = (e - s) / compute(steps - 1)
    half = steps // 2
    first = np.arange(half).astype(compute)                  # i
    second = np.arange(steps - half - 1, -1, -1).astype(compute)   # steps - 1 - i
    values = np.empty(steps, dtype=compute)
    if dtype in (dt.float32, dt.float64):
        values[:half] = native.multiply_add(step, first, s)
        values[half:] = native.multiply_add(-step, second, e)
    elif dtype in (dt.float16, dt.bfloat16):
        # c10::Half / c10::BFloat16 arithmetic: each operation in float rounded to
        # the dtype, the int64 operands (steps - 1, the index) converted to it first
        def r(x):
            return _rounded(np.asarray(x, np.float32), dtype)
        with np.errstate(over="ignore", invalid="ignore"):      # (inf, as in C++)
            s, e = r(s), r(e)
            step = r(r(e - s) / r(steps - 1))
            values[:half] = r(s + r(step * r(first)))
            values[half:] = r(e - r(step * r(second)))
    else:
        values[:half] = s + step * first
        values[half:] = e - step * second
    return values


@kernel("linspace_out")
def linspace_out(start, end, steps, *, out):
    _check_steps(steps)
    if out.numel() != steps:
        ops.aten.resize_.default(out, [steps])
    if steps:
        values = _linspace_values(start, end, steps, out.dtype)
        out._np()[...] = convert_array(values, dt.FROM_NUMPY[values.dtype], out.dtype)
    return out


@kernel("linspace_out_meta")
def linspace_out_meta(start, end, steps, *, out):
    _check_steps(steps)
    if out.numel() != steps:
        ops.aten.resize_.default(out, [steps])
    return out


@kernel("linspace")
def linspace(start, end, steps, *, dtype=None, layout=None, device=None, pin_memory=None):
    _check_steps(steps)
    if dtype is None:
        dtype = dt.default_complex_dtype() if isinstance(start, complex) or \
            isinstance(end, complex) else dt.get_default_dtype()
    return ops.aten.linspace.out(start, end, steps, out=_empty((steps,), dtype, device))


@kernel("linspace_tensor")
def linspace_tensor(start, end, steps, *, dtype=None, layout=None, device=None,
                    pin_memory=None):
    if start.dim() != 0 or end.dim() != 0:
        raise RuntimeError(f"linspace only supports 0-dimensional start and end tensors, but got "
                           f"start with {start.dim()} dimension(s) and end with {end.dim()} "
                           "dimension(s).")
    if device is None:
        device = start.device
    if start.device.type == "meta" or end.device.type == "meta":
        _check_steps(steps)   # values unknown: the shape is all the meta device needs
        return _empty((steps,), _dtype(dtype), device)
    return linspace(ops.aten._local_scalar_dense.default(start),
                    ops.aten._local_scalar_dense.default(end), steps, dtype=dtype,
                    device=device)


@kernel("logspace_out")
def logspace_out(start, end, steps, base=10.0, *, out):
    _check_steps(steps)
    if out.numel() != steps:
        ops.aten.resize_.default(out, [steps])
    if steps:
        if out.dtype.category == dt.COMPLEX:
            values = np.power(complex(base), _linspace_values(start, end, steps, out.dtype))
        else:
            # RangeFactories.cpp: start/end in scalar_t, their difference too, the
            # step and exponents in double, each value libm's pow (math.pow; numpy's
            # vectorized pow rounds differently on some CPUs)
            scalar = out.dtype.numpy.type
            floating = out.dtype.category == dt.FLOATING
            s = scalar(start) if floating else np.int64(int(start))
            e = scalar(end) if floating else np.int64(int(end))
            if steps == 1:     # pow(base, start as a double)
                values = np.array([_pow(float(base), float(start))])
            else:
                with np.errstate(over="ignore"):
                    step = float(e - s) / (steps - 1)
                s, e = float(s), float(e)
                half = steps // 2
                # float32 base for integral outputs ("to avoid promotion to double")
                b = float(np.float32(base)) if not floating else float(base)
                values = np.array([_pow(b, s + step * i) if i < half else
                                   _pow(b, e - step * (steps - i - 1)) for i in range(steps)])
        out._np()[...] = convert_array(values, dt.FROM_NUMPY[values.dtype], out.dtype)
    return out


def _pow(base: float, exponent: float) -> float:
    """libm's pow: inf for an overflow, NaN for a negative base to a fractional
    power (where math.pow raises)."""
    try:
        return math.pow(base, exponent)
    except ValueError:
        return math.nan
    except OverflowError:
        return math.inf if base > 0 or exponent == int(exponent) and exponent % 2 == 0 \
            else -math.inf


@kernel("logspace_out_meta")
def logspace_out_meta(start, end, steps, base=10.0, *, out):
    return linspace_out_meta(start, end, steps, out=out)


@kernel("logspace")
def logspace(start, end, steps, base=10.0, *, dtype=None, layout=None, device=None,
             pin_memory=None):
    _check_steps(steps)
    if dtype is None:
        dtype = dt.default_complex_dtype() if isinstance(start, complex) or \
            isinstance(end, complex) else dt.get_default_dtype()
    return ops.aten.logspace.out(start, end, steps, base, out=_empty((steps,), dtype, device))


def _check_eye(n, m):
    if n < 0:
        raise RuntimeError(f"n must be greater or equal to 0, got {n}")
    if m < 0:
        raise RuntimeError(f"m must be greater or equal to 0, got {m}")


@kernel("eye_m_out")
def eye_m_out(n, m, *, out):
    _check_eye(n, m)
    if out._shape != (n, m):
        ops.aten.resize_.default(out, [n, m])
    array = out._np()
    array[...] = 0
    k = min(n, m)
    array[np.arange(k), np.arange(k)] = 1
    return out


@kernel("eye_m_out_meta")
def eye_m_out_meta(n, m, *, out):
    _check_eye(n, m)
    if out._shape != (n, m):
        ops.aten.resize_.default(out, [n, m])
    return out


@kernel("eye_out")
def eye_out(n, *, out):
    return ops.aten.eye.m_out(n, n, out=out)


@kernel("eye")
def eye(n, *, dtype=None, layout=None, device=None, pin_memory=None):
    return eye_m(n, n, dtype=dtype, device=device)


@kernel("eye_m")
def eye_m(n, m, *, dtype=None, layout=None, device=None, pin_memory=None):
    _check_eye(n, m)
    return ops.aten.eye.m_out(n, m, out=_empty((n, m), dtype, device))


# -- conversions ---------------------------------------------------------------------

@kernel("_to_copy")
def _to_copy(self, *, dtype=None, layout=None, device=None, pin_memory=None,
             non_blocking=False, memory_format=None):
    """A fresh tensor on ``device`` with ``dtype`` holding ``self``'s values.
    Layout follows memory_format (preserve: keep a dense input's strides)."""
    dtype = dtype if dtype is not None else self.dtype
    device = Device(device) if device is not None else self.device
    if device.type == "cuda" or self.device.type == "cuda":
        from ... import cuda
        cuda._lazy_init()
    if self.device.type == "meta" and device.type != "meta":
        raise NotImplementedError("Cannot copy out of meta tensor; no data!")
    stride = like_strides(self, memory_format)
    if stride is not None and (memory_format is None or memory_format is preserve_format):
        out = ops.aten.empty_strided.default(list(self._shape), list(stride), dtype=dtype,
                                             device=device)
    else:   # a memory format asked for: empty in that format
        out = ops.aten.empty.memory_format(list(self._shape), dtype=dtype, device=device,
                                           memory_format=memory_format)
    return inner.copy_(out, self)


def _to_will_alias(self, dtype, device, copy, memory_format):
    if copy:
        return False
    if dtype is not None and dtype is not self.dtype:
        return False
    if device is not None and Device(device) != self.device:
        return False
    if memory_format is None or memory_format is preserve_format:
        return True
    return self.is_contiguous(memory_format=memory_format)


def _to_impl(self, dtype, device, non_blocking, copy, memory_format):
    if _to_will_alias(self, dtype, device, copy, memory_format):
        return self
    return ops.aten._to_copy.default(self, dtype=dtype, device=device,
                                     non_blocking=non_blocking, memory_format=memory_format)


@kernel("to_dtype_layout")
def to_dtype_layout(self, *, dtype=None, layout=None, device=None, pin_memory=None,
                    non_blocking=False, copy=False, memory_format=None):
    return _to_impl(self, dtype, device, non_blocking, copy, memory_format)


@kernel("to_device")
def to_device(self, device, dtype, non_blocking=False, copy=False, memory_format=None):
    return _to_impl(self, dtype, device, non_blocking, copy, memory_format)


@kernel("to_dtype")
def to_dtype(self, dtype, non_blocking=False, copy=False, memory_format=None):
    return _to_impl(self, dtype, None, non_blocking, copy, memory_format)


@kernel("to_other")
def to_other(self, other, non_blocking=False, copy=False, memory_format=None):
    return _to_impl(self, other.dtype, other.device, non_blocking, copy, memory_format)


# -- scalars -------------------------------------------------------------------------

def python_scalar(value, dtype):
    if dtype is dt.bool_:
        return bool(value)
    if dtype.category == dt.INTEGRAL:
        return int(value)
    if dtype.category == dt.FLOATING:
        return float(value)
    return complex(value)


@kernel("sym_size")
def sym_size(self, dim):
    return self.size(dim)


@kernel("sym_stride")
def sym_stride(self, dim):
    return self.stride(dim)


@kernel("sym_numel")
def sym_numel(self):
    return self.numel()


@kernel("sym_storage_offset")
def sym_storage_offset(self):
    return self.storage_offset()


@kernel("_local_scalar_dense")
def _local_scalar_dense(self):
    if self.numel() != 1:
        raise RuntimeError(f"a Tensor with {self.numel()} elements cannot be converted to Scalar")
    return python_scalar(self._np().reshape(-1)[0], self.dtype)


@kernel("_local_scalar_dense_meta")
def _local_scalar_dense_meta(self):
    raise RuntimeError("Tensor.item() cannot be called on meta tensors")


@kernel("is_nonzero")
def is_nonzero(self):
    """``bool(tensor)`` (Tensor.__bool__): the one element is not zero."""
    numel = self.numel()
    if numel == 0:
        raise RuntimeError("Boolean value of Tensor with no values is ambiguous")
    if numel > 1:
        raise RuntimeError("Boolean value of Tensor with more than one value is ambiguous")
    return bool(ops.aten._local_scalar_dense.default(self))


@kernel("item")
def item(self):
    numel = self.numel()
    if numel != 1:
        raise RuntimeError(f"a Tensor with {numel} elements cannot be converted to Scalar")
    return ops.aten._local_scalar_dense.default(self)


# -- range (deprecated), tril_indices / triu_indices, empty_permuted ---------------------

@kernel("range_out")
def range_out(start, end, step=1, *, out):
    """RangeFactories.cpp's range_out: start, start + step, ... up to and
    including ``end``: floor((end - start) / step) + 1 values, computed in
    double (int64 for integral outputs)."""
    xstart, xend, xstep = (_acc(v, out.dtype) for v in (start, end, step))
    if xstep == 0:
        raise RuntimeError("step must be nonzero")
    if not (math.isfinite(float(xstart)) and math.isfinite(float(xend))):
        raise RuntimeError(f"unsupported range: {_fmt(xstart)} -> {_fmt(xend)}")
    if not ((xstep > 0 and xend >= xstart) or (xstep < 0 and xend <= xstart)):
        raise RuntimeError("upper bound and lower bound inconsistent with step sign")
    size = int((xend - xstart) / xstep + 1)
    if out.numel() != size:
        ops.aten.resize_.default(out, [size])
    if out.device.type != "meta":
        compute = np.int64 if out.dtype.category <= dt.INTEGRAL else np.float64
        values = compute(xstart) + compute(xstep) * np.arange(size, dtype=compute)
        out._np()[...] = convert_array(values, dt.FROM_NUMPY[values.dtype], out.dtype)
    return out


@kernel("range_out_default")
def range_out_default(start, end, *, out):
    return ops.aten.range.out(start, end, 1, out=out)


@kernel("range_step")
def range_step(start, end, step=1, *, dtype=None, layout=None, device=None, pin_memory=None):
    """CompositeExplicitAutograd: the default float dtype unless one is given
    (integer bounds included), filled by range.out."""
    out = _empty((0,), _dtype(dtype), resolve_device(device))
    return ops.aten.range.out(start, end, step, out=out)


@kernel("range")
def range_(start, end, *, dtype=None, layout=None, device=None, pin_memory=None):
    return range_step(start, end, 1, dtype=dtype, device=device)


def _triangle_indices(name, row, col, offset, dtype, device, numpy_fn):
    """A 2 x N tensor of the (row, col) pairs of a triangle, row-major."""
    dtype = dt.int64 if dtype is None else dtype
    if row < 0:
        raise RuntimeError(f"row must be non-negative, got{row}")
    if col < 0:
        raise RuntimeError(f"col must be non-negative, got{col}")
    if dtype not in (dt.int32, dt.int64):
        raise NotImplementedError(f'"{name}" not implemented for \'{dtype._short}\'')
    rows, cols = numpy_fn(row, offset, col)
    out = _empty((2, rows.size), dtype, resolve_device(device))
    if out.device.type != "meta":
        out._np()[0], out._np()[1] = rows, cols
    return out


@kernel("tril_indices")
def tril_indices(row, col, offset=0, *, dtype=dt.int64, layout=None, device=None,
                 pin_memory=None):
    """The lower triangle (col <= row + offset) of a row x col matrix."""
    return _triangle_indices("tril_indices", row, col, offset, dtype, device, np.tril_indices)


@kernel("triu_indices")
def triu_indices(row, col, offset=0, *, dtype=dt.int64, layout=None, device=None,
                 pin_memory=None):
    """The upper triangle (col >= row + offset) of a row x col matrix."""
    return _triangle_indices("triu_indices", row, col, offset, dtype, device, np.triu_indices)


@kernel("empty_permuted")
def empty_permuted(size, physical_layout, *, dtype=None, layout=None, device=None,
                   pin_memory=None):
    """An empty tensor whose dims lie in memory in ``physical_layout``'s order
    (outermost first): a contiguous tensor of the permuted sizes, permuted back."""
    size, order = list(size), list(physical_layout)
    if len(size) != len(order):
        raise RuntimeError(f"Number of dimensions in size does not match the length of the "
                           f"physical_layout; i.e. len(size) = {len(size)} is not equal to "
                           f"len(physical_layout) = {len(order)}")
    if len(set(order)) != len(order):
        raise RuntimeError("Duplicate dim not allowed")
    check_size(size)
    stride, step = [0] * len(size), 1
    for d in reversed(order):
        stride[d] = step
        step *= max(size[d], 1)
    return empty_tensor(tuple(size), _dtype(dtype), resolve_device(device), tuple(stride))


# -- from_file (TensorFactories.cpp, MapAllocator) -------------------------------------------

@kernel("from_file")
def from_file(filename, shared=None, size=0, *, dtype=None, layout=None, device=None,
              pin_memory=None):
    """``size`` elements mapped from the file: with ``shared`` the mapping is the
    file's own pages (writes reach the file, which is created or grown to fit),
    else a private copy-on-write mapping of a file at least that long.  The
    storage is the mapping and cannot grow."""
    if Device(device).type == "meta":
        raise _no_meta_kernel("from_file")
    dtype = dtype if dtype is not None else dt.get_default_dtype()
    nbytes = (size or 0) * dtype.itemsize
    mode = "read-write" if shared else "read-only"
    try:
        fd = os.open(filename, os.O_RDWR | os.O_CREAT if shared else os.O_RDONLY, 0o600)
    except OSError as e:
        raise RuntimeError(f"unable to open file <{filename}> in {mode} mode: {e.strerror} "
                           f"({e.errno})") from None
    try:
        length = os.fstat(fd).st_size
        if length < nbytes:
            if not shared:
                raise RuntimeError(f"file <{filename}> size <{length}> is smaller than the "
                                   f"required mapping size <{nbytes}>")
            os.ftruncate(fd, nbytes)
        if nbytes < 0:
            raise RuntimeError(f"unable to mmap {nbytes} bytes from file <{filename}>: Cannot "
                               "allocate memory (12)")
        data = np.frombuffer(mmap.mmap(fd, nbytes, access=mmap.ACCESS_WRITE if shared
                                       else mmap.ACCESS_COPY), np.uint8) if nbytes \
            else np.empty(0, np.uint8)
    finally:
        os.close(fd)
    storage = UntypedStorage._wrap(data, Device("cpu"), None)   # not the allocator's memory
    return Tensor._make(storage, (size or 0,), (1,), 0, dtype, Device("cpu"),
                        keys_for_device("cpu", tls.state.inference_mode))

"""Elementwise ops: meta rules (TensorIterator's broadcast, promotion, layout)
and numpy bodies.

    for each output element i:  out[i] = f(a[i], b[i])      (after broadcasting)

CPU computes in the "opmath" type (float32 for float16/bfloat16) and rounds
once when writing the output, as PyTorch does.

Where the checks live, as in PyTorch:

* meta rules raise the ``RuntimeError``s of ATen's meta functions (broadcast
  mismatch, "Integers to negative integer powers are not allowed.", ...); they
  run on every device, Meta included;
* CPU bodies raise the dtype-dispatch errors of CPU kernels
  (``NotImplementedError: "hypot_cpu" not implemented for 'Long'``) and
  integer ``ZeroDivisionError``s, which only a computing backend can see.

Floating-point exceptions are PyTorch's: silent inf/nan.  Bodies that can
produce them run under ``quiet`` (numpy's error state set to "ignore").

Also here: the whole-tensor comparisons equal / allclose (a Python bool),
logit, isposinf / isneginf, deg2rad / rad2deg.
"""
from __future__ import annotations

import math
import ml_dtypes

import numpy as np

from ..._core import dtype as dt
from ..._core.layout import contiguous_format, preserve_format, strided
from ..._dispatcher.dispatcher import ops
from ..._tensor import Tensor
from ..structured import (CPU, TensorMeta, broadcast_shapes, check_same_device, checked_convert,
                          elementwise_strides, empty_tensor, overlap_rule, python_number,
                          result_type, same_shape)
from . import impl, kernel, meta, native
from ._common import _no_meta_kernel, _on_meta
from ._inner import inner, inner_op, observed
from .cascade_sum import GRAIN_SIZE, _chunks
from .reduction import _log_add_exp_complex
from ..registry import _resize_out

aten = ops.aten

FLOATING = dt.FLOATING
_PARALLEL = native.MIN_PARALLEL   # large float32 arithmetic runs threaded (kernels/native.c)

# -- helpers -------------------------------------------------------------------------

try:  # numpy >= 2: set the error state directly (np.errstate costs ~4us a call)
    from numpy._core._ufunc_config import _extobj_contextvar as _ERRSTATE, _make_extobj
    _IGNORE = _make_extobj(all="ignore")
except Exception:  # pragma: no cover - older numpy
    _ERRSTATE = None


def quiet(body):
    """Run ``body`` with numpy's floating-point warnings off (PyTorch makes inf/nan silently)."""
    if _ERRSTATE is None:  # pragma: no cover
        def run(*args, **kwargs):
            with np.errstate(all="ignore"):
                return body(*args, **kwargs)
    else:
        def run(*args, **kwargs):
            token = _ERRSTATE.set(_IGNORE)
            try:
                return body(*args, **kwargs)
            finally:
                _ERRSTATE.reset(token)
    run.__name__ = run.__qualname__ = body.__name__
    run.__wrapped__ = body      # (inspect.unwrap finds the body's code)
    run.__doc__, run.__module__ = body.__doc__, body.__module__
    return run


def operand(x, compute):
    """A kernel's view of an operand: the tensor's array, or a Python scalar
    converted to the compute type (integers wrap, as PyTorch's casts do)."""
    if isinstance(x, Tensor):
        return x._np()
    if isinstance(x, int) and compute.kind in "iub" and not isinstance(x, bool):
        return np.array(x, dtype=np.int64).astype(compute)[()]
    return compute.type(x)


def cast_operand(x, rt, compute):
    """An operand as TensorIterator feeds it to most kernels: cast to the common dtype
    ``rt`` first (a Python float or float64 0-dim operand is rounded to bfloat16 when
    that is the common dtype), computed on in ``compute``.  (mul and div read a scalar
    second operand unrounded: ``scalar_operand``.)"""
    if rt.opmath is rt.numpy:
        return operand(x, compute)
    if isinstance(x, Tensor):
        a = x._np()
        return a if x.dtype is rt else a.astype(rt.numpy)
    return operand(x, rt.numpy)


def scalar_operand(x, rt, compute):
    """The second operand of mul and div: a single value (a number, or a tensor of one
    element) is read unrounded in opmath (``original_scalar_value``); others as usual."""
    if rt.opmath is rt.numpy or not isinstance(x, Tensor) or x.numel() == 1:
        return operand(x, compute)
    return cast_operand(x, rt, compute)


def as_compute(x, compute):
    """``operand``, with tensors converted to the compute type too."""
    if isinstance(x, Tensor):
        a = x._np()
        return a if a.dtype == compute else a.astype(compute)
    return operand(x, compute)


def write(out, value):
    """Store a computed array into the output (broadcast, one rounding cast)."""
    np.copyto(out._np(), value, casting="unsafe")


def zeros_of(x: np.ndarray, dtype: dt.dtype, *bounds):
    """Where float ``x`` is zero and those zeros, or None (no zero, or no bound
    a zero number): ATen's clamp keeps x where it equals a bound (``x < lo ? lo
    : x``), so a zero clamped at a zero bound stays its own zero, -0.0
    included, where numpy's maximum and minimum return either zero depending
    on their code path (``restore_zeros``).  Tensor bounds are left out: there
    torch's own sign depends on its code path."""
    if not dtype.is_floating_point or not any(
            b is not None and not isinstance(b, Tensor) and b == 0 for b in bounds):
        return None
    where = x == 0
    return (where, x[where]) if where.any() else None


def restore_zeros(result, zeros) -> np.ndarray:
    """``result`` with the zeros ``zeros_of`` took put back where it is still
    zero (a bound that is not zero moved them); an array ``result`` is written
    in place (a 0-d one may come as a numpy scalar: an array is returned)."""
    if zeros is None:
        return result
    result = np.asarray(result)
    where, values = zeros
    kept = result[where]
    result[where] = np.where(kept == 0, values, kept)
    return result


def dtype_of(x) -> dt.dtype:
    return x.dtype if isinstance(x, Tensor) else dt.scalar_dtype(python_number(x))


def float_type(d: dt.dtype) -> dt.dtype:
    """``promote_integer_inputs_to_float``: int and bool results become the default float."""
    return d if d.category >= FLOATING else dt.get_default_dtype()


def not_implemented(name, d: dt.dtype) -> NotImplementedError:
    """The CPU dispatch macro's error for a dtype a kernel has no loop for."""
    return NotImplementedError(f'"{name}" not implemented for \'{d._short}\'')


def require_float(name, d, complex_ok=False):
    """AT_DISPATCH_FLOATING_TYPES' refusal of other dtypes (complex too unless
    the kernel also dispatches complex types)."""
    if d.category < FLOATING or (d.is_complex and not complex_ok):
        raise not_implemented(name, d)


def refuse_complex(d: dt.dtype, error):
    """Ops that order values (comparisons, min/max, rounding, clamp) have no complex
    loop in PyTorch's CPU kernels; ``error`` is the exception each one raises."""
    if d.is_complex:
        raise error


# Scalar::to<T>()'s names of the C++ types, for its overflow error.
def checked_scalar(value, d: dt.dtype):
    """A Scalar argument (not a wrapped number) must fit the dtype the kernel runs
    in (c10::checked_convert); float64 and complex kernels take any number."""
    if isinstance(value, (Tensor, bool, complex)) or value is None or d is dt.bool_ or \
            d.category > FLOATING or d is dt.float64:
        return
    checked_convert(value, d)




def layout(*operands):
    """Broadcast shape of the tensor operands and the output strides that follow them."""
    tensors = [t for t in operands if isinstance(t, Tensor)]
    if len(tensors) == 1:
        shape = tensors[0]._shape
    else:
        check_same_device(*tensors)
        shape = broadcast_shapes(*(t._shape for t in tensors))
    return shape, elementwise_strides(shape, tensors)


# the 0-dim tensor a Python number becomes in a Tensor argument (wrapped_scalar_tensor)
_WRAPPED_DTYPE = {bool: dt.bool_, int: dt.int64, float: dt.float64, complex: dt.complex128}


def promote_inputs(common, *operands) -> None:
    """TensorIterator's input promotion on CPU: an input whose dtype is not the
    common one is converted with ``to`` (a Python number as the 0-dim tensor
    the binding wraps it in).  The numpy code casts while it computes, so
    only an observer needs the conversions: they are dispatched only then."""
    for x in operands:
        if not isinstance(x, Tensor):
            value = x.item() if isinstance(x, np.generic) else x
            x = empty_tensor((), _WRAPPED_DTYPE[type(value)], CPU)
            x._np()[...] = value
        if x.dtype is not common:
            ops.aten.to.dtype(x, common)


def binary_meta(self, other):
    """Broadcast shape, promoted dtype, strides that follow the inputs' layout."""
    if (type(other) is Tensor and type(self) is Tensor and same_shape(other._shape, self._shape)
            and other.dtype is self.dtype and other.device is self.device
            and self._is_contiguous() and other._is_contiguous()):
        return TensorMeta(self._shape, self.dtype, None, self.device)   # the common case
    dtype = result_type(self, other)
    if isinstance(other, Tensor) and isinstance(self, Tensor):
        check_same_device(self, other)
        shape = broadcast_shapes(self._shape, other._shape)
    else:
        shape = self._shape if isinstance(self, Tensor) else other._shape
    return TensorMeta(shape, dtype, elementwise_strides(shape, (self, other)))


def binary_float_meta(self, other):
    """Binary ops that promote integer inputs to float (true division, atan2 ...)."""
    spec = binary_meta(self, other)
    spec.dtype = float_type(spec.dtype)
    return spec


def comparison_meta(self, other):
    spec = binary_meta(self, other)
    spec.dtype = dt.bool_
    return spec


class SameDtypeMeta(TensorMeta):
    """A result whose ``out=`` tensor must have exactly its dtype (TensorIterator's
    check_all_same_dtype: unary ops keeping the dtype, activations, clamp by scalars)."""

    __slots__ = ()

    def check_out(self, out_dtype):
        if out_dtype is not self.dtype:
            raise RuntimeError(f"Found dtype {out_dtype._short} but expected {self.dtype._short}")


def unary_meta(self):
    return SameDtypeMeta(self._shape, self.dtype, elementwise_strides(self._shape, (self,)),
                         self.device)


def unary_float_meta(self):
    return TensorMeta(self._shape, float_type(self.dtype),
                      elementwise_strides(self._shape, (self,)))


def unary_bool_meta(self):
    return TensorMeta(self._shape, dt.bool_, elementwise_strides(self._shape, (self,)))


def binary_impl(ufunc):
    """A CPU body that runs ``ufunc`` in the opmath of the common dtype."""
    def body(out, self, other):
        rt = result_type(self, other)
        compute = rt.opmath
        ufunc(cast_operand(self, rt, compute), cast_operand(other, rt, compute), out=out._np(),
              dtype=compute, casting="unsafe")
    return body


# -- add, sub, rsub, mul ---------------------------------------------------------------

def _check_alpha(dtype, alpha):
    """alpha_check (BinaryOps.h)."""
    if isinstance(alpha, bool) and dtype is not dt.bool_:
        raise RuntimeError("Boolean alpha only supported for Boolean results.")
    if isinstance(alpha, float) and dtype.category < FLOATING:
        raise RuntimeError("For integral input tensors, argument alpha must not be a floating "
                           "point number.")
    if isinstance(alpha, complex) and dtype.category != dt.COMPLEX:
        raise RuntimeError("For non-complex input tensors, argument alpha must not be a complex "
                           "number.")


def _check_sub(self, other):
    """sub_check: no subtraction involving bool tensors (or bool wrapped numbers)."""
    a, b = dtype_of(self), dtype_of(other)
    if a is dt.bool_ and b is dt.bool_:
        raise RuntimeError("Subtraction, the `-` operator, with two bool tensors is not "
                           "supported. Use the `^` or `logical_xor()` operator instead.")
    if a is dt.bool_ or b is dt.bool_:
        raise RuntimeError("Subtraction, the `-` operator, with a bool tensor is not supported. "
                           "If you are trying to invert a mask, use the `~` or `logical_not()` "
                           "operator instead.")


@meta("add")
def add_meta(self, other, alpha=1):
    spec = binary_meta(self, other)
    if alpha != 1 or type(alpha) is not int:
        _check_alpha(spec.dtype, alpha)
    return spec


def _scaled(b, alpha, compute, rt):
    if alpha == 1 and type(alpha) is int:
        return b
    checked_scalar(alpha, rt)
    return np.multiply(b, operand(alpha, compute), dtype=compute, casting="unsafe")


@impl("add")
def add_impl(out, self, other, alpha=1):
    rt = result_type(self, other)
    if observed():
        promote_inputs(rt, self, other)
    compute = rt.opmath
    if compute.kind in "fc" or out.dtype.numpy != compute:   # inf - inf, overflow: silent
        _add_float(out, self, other, alpha, rt, compute)
    else:                      # integers wrap without numpy noticing
        b = _scaled(cast_operand(other, rt, compute), alpha, compute, rt)
        np.add(cast_operand(self, rt, compute), b, out=out._np(), dtype=compute,
               casting="unsafe")


def vectorized_elements(shape, *operands) -> np.ndarray | None:
    """Which output elements of a float16/bfloat16 ``cpu_kernel_vec`` loop take the
    vector body (Loops.h's ``vectorized_loop``), as a boolean array of ``shape``;
    None where none does.  The vector body covers 32 elements at a time
    (2 x ``Vectorized<Half>``) of each contiguous inner run: the whole tensor when
    every operand is C-contiguous or a single value, split into at::parallel_for's
    per-thread ranges from 32768 elements; else each last-dim row, where every
    operand steps by 1 (or one by 0) along it.  The rest, and everything under
    the DEFAULT capability, runs the scalar lambda."""
    if not native.fused() or not shape:
        return None
    arrays = [np.asarray(a) for a in operands]
    n = math.prod(shape)
    mask = np.zeros(n, dtype=bool)
    if all(a.size == 1 or (a.shape == tuple(shape) and a.flags.c_contiguous) for a in arrays):
        for _, begin, end in _chunks(n, GRAIN_SIZE, native.get_num_threads()):
            mask[begin:begin + (end - begin) // 32 * 32] = True
        return mask.reshape(shape)
    steps = [np.broadcast_to(a, shape).strides[-1] // a.itemsize for a in arrays]
    if not all(s in (0, 1) for s in steps) or steps.count(0) > 1:
        return None
    row = shape[-1]
    return np.broadcast_to(np.arange(row) < row // 32 * 32, shape)


def _add_reduced(out, a, b, alpha, rt):
    """float16/bfloat16 ``a + alpha * b`` as ATen's add loop rounds it (ufunc/add.h):
    alpha rounded to the dtype; the vector body fuses ``fma(b, alpha, a)`` in
    float32 and rounds once, the scalar lambda rounds ``alpha * b`` and then the sum
    (c10::Half's operators)."""
    scale = rt.numpy.type(alpha)
    single = a + (b * scale)                      # two roundings, in the dtype's arithmetic
    vector = vectorized_elements(out._shape, a, b)
    if vector is not None:
        f32 = np.float32
        fused = native.multiply_add(np.asarray(b, f32), f32(scale), np.asarray(a, f32))
        single = np.where(vector, fused.astype(rt.numpy), single)
    write(out, single)


@quiet
def _add_float(out, self, other, alpha, rt, compute):
    if not (alpha == 1 and type(alpha) is int) and rt in (dt.float16, dt.bfloat16):
        checked_scalar(alpha, rt)
        _add_reduced(out, cast_operand(self, rt, compute), cast_operand(other, rt, compute),
                     alpha, rt)
        return
    if not (alpha == 1 and type(alpha) is int) and compute.kind == "f":
        a, b, o = cast_operand(self, rt, compute), cast_operand(other, rt, compute), out._np()
        checked_scalar(alpha, rt)
        if native.fusable(a, b, o):
            native.axpy(a, b, compute.type(alpha), o)   # a + alpha * b, fused as ATen's loop
        else:
            write(out, native.multiply_add(b, compute.type(alpha), a))
        return
    b = _scaled(cast_operand(other, rt, compute), alpha, compute, rt)
    a, o = cast_operand(self, rt, compute), out._np()
    if o.size < _PARALLEL or not native.binary("add", a, b, o):
        np.add(a, b, out=o, dtype=compute, casting="unsafe")


@meta("sub")
def sub_meta(self, other, alpha=1):
    _check_sub(self, other)
    return add_meta(self, other, alpha)


@impl("sub")
@quiet
def sub_impl(out, self, other, alpha=1):
    rt = result_type(self, other)
    if observed():
        promote_inputs(rt, self, other)
    compute = rt.opmath
    if not (alpha == 1 and type(alpha) is int) and rt in (dt.float16, dt.bfloat16):
        checked_scalar(alpha, rt)      # sub_out is add's loop with -alpha
        _add_reduced(out, cast_operand(self, rt, compute), cast_operand(other, rt, compute),
                     -alpha, rt)
        return
    if not (alpha == 1 and type(alpha) is int) and compute.kind == "f":
        a, b, o = cast_operand(self, rt, compute), cast_operand(other, rt, compute), out._np()
        checked_scalar(alpha, rt)
        if native.fusable(a, b, o):
            native.axpy(a, b, -compute.type(alpha), o)   # a - alpha * b = fma(b, -alpha, a)
        else:
            write(out, native.multiply_add(b, -compute.type(alpha), a))
        return
    b = _scaled(cast_operand(other, rt, compute), alpha, compute, rt)
    a, o = cast_operand(self, rt, compute), out._np()
    if o.size < _PARALLEL or not native.binary("sub", a, b, o):
        np.subtract(a, b, out=o, dtype=compute, casting="unsafe")


@meta("rsub")
def rsub_meta(self, other, alpha=1):
    """rsub(self, other) = other - alpha * self."""
    return sub_meta(other, self, alpha) if isinstance(other, Tensor) else sub_meta(self, other,
                                                                                   alpha)


@impl("rsub")
@quiet
def rsub_impl(out, self, other, alpha=1):
    rt = result_type(self, other)
    compute = rt.opmath
    a = _scaled(cast_operand(self, rt, compute), alpha, compute, rt)
    np.subtract(cast_operand(other, rt, compute), a, out=out._np(), dtype=compute,
                casting="unsafe")


@meta("mul")
def mul_meta(self, other):
    return binary_meta(self, other)


@impl("mul")
def mul_impl(out, self, other):
    rt = result_type(self, other)
    if observed():
        promote_inputs(rt, self, other)
    compute = rt.opmath
    a, b = cast_operand(self, rt, compute), scalar_operand(other, rt, compute)
    if compute.kind in "fc" or out.dtype.numpy != compute:
        _mul_quiet(a, b, out._np(), compute)
    else:
        np.multiply(a, b, out=out._np(), dtype=compute, casting="unsafe")


@quiet
def _mul_quiet(a, b, out, compute):
    if out.size < _PARALLEL or not native.binary("mul", a, b, out):
        np.multiply(a, b, out=out, dtype=compute, casting="unsafe")


# -- division, remainder, pow ----------------------------------------------------------

_ROUNDING_MODES = (None, "trunc", "floor")


@meta("div")
def div_meta(self, other, rounding_mode=None):
    if rounding_mode not in _ROUNDING_MODES:
        raise RuntimeError("div expected rounding_mode to be one of None, 'trunc', or 'floor' "
                           f"but found '{rounding_mode}'")
    if rounding_mode is None:
        return binary_float_meta(self, other)
    return binary_meta(self, other)


def _cpu_scalar(x) -> bool:
    """TensorIterator's ``is_cpu_scalar``: a number, or a 0-dim CPU tensor."""
    if isinstance(x, Tensor):
        return not x._shape and x.device.type == "cpu"
    return isinstance(x, (int, float)) and not isinstance(x, bool)


def _check_int_divisor(b, compute):
    """Integer division by zero raises (the kernel runs only on non-empty outputs)."""
    if compute.kind in "iub" and np.size(b) and np.any(np.asarray(b) == 0):
        raise RuntimeError("ZeroDivisionError")


def _floor_divide(a, b, compute):
    """div_floor: Python's floor division (numpy's, for ints and floats alike)."""
    _check_int_divisor(b, compute)
    return np.floor_divide(a, b, dtype=compute)


def _trunc_divide(a, b, compute, dtype=None):
    """div_trunc.  For float16/bfloat16 (``dtype``, computed in float32) the
    quotient is rounded to ``dtype`` before truncating, as ATen's Half/BFloat16
    division returns a rounded value: 1/-0.03448 is -29, not -28."""
    _check_int_divisor(b, compute)
    if compute.kind == "f":
        q = np.true_divide(a, b, dtype=compute)
        if dtype is not None and dtype != compute:
            q = q.astype(dtype).astype(compute)
        return np.trunc(q)
    q = np.floor_divide(a, b, dtype=compute)
    r = np.subtract(a, np.multiply(q, b, dtype=compute), dtype=compute)
    return q + ((r != 0) & ((np.asarray(a) < 0) != (np.asarray(b) < 0))).astype(compute)


@impl("div")
@quiet
def div_impl(out, self, other, rounding_mode=None):
    rt = result_type(self, other)
    if observed():
        promote_inputs(float_type(rt) if rounding_mode is None else rt, self, other)
    if rounding_mode is None:
        ft = float_type(rt)
        compute = ft.opmath
        a, b, o = cast_operand(self, ft, compute), scalar_operand(other, ft, compute), out._np()
        if o.size < _PARALLEL or not native.binary("div", a, b, o):
            np.true_divide(a, b, out=o, dtype=compute, casting="unsafe")
        return
    if rt is dt.bool_:
        raise not_implemented(f"div_{rounding_mode}_cpu", rt)
    compute = rt.opmath
    if out._np().size:
        a = np.asarray(cast_operand(self, rt, compute)).astype(compute, copy=False)
        reduced_by_scalar = rt in (dt.float16, dt.bfloat16) and _cpu_scalar(other)
        if reduced_by_scalar:
            # ATen's div_trunc/div_floor for Half/BFloat16 by a scalar: the divisor's own
            # value in float32 and the quotient unrounded (a tensor divisor is cast to
            # the dtype, and the Half/BFloat16 quotient rounded, first)
            b = compute.type(other.item() if isinstance(other, Tensor) else other)
        else:
            b = np.asarray(scalar_operand(other, rt, compute)).astype(compute, copy=False)
        write(out, _floor_divide(a, b, compute) if rounding_mode == "floor" else
              _trunc_divide(a, b, compute, None if reduced_by_scalar else rt.numpy))


meta("floor_divide")(binary_meta)


@impl("floor_divide")
@quiet
def floor_divide_impl(out, self, other):
    div_impl(out, self, other, rounding_mode="floor")


def _remainder_like(name, ufunc):
    meta(name)(binary_meta)

    @impl(name)
    @quiet
    def body(out, self, other):
        rt = result_type(self, other)
        if rt is dt.bool_ or rt.is_complex:
            raise not_implemented(f"{name}_cpu", rt)
        compute = rt.opmath
        if not out._np().size:
            return
        b = cast_operand(other, rt, compute)
        _check_int_divisor(b, compute)
        ufunc(cast_operand(self, rt, compute), b, out=out._np(), dtype=compute, casting="unsafe")


def _remainder(a, b, out, dtype, casting):
    """The sign of the divisor (Python's %), as ATen computes it for floats: C's
    fmod, plus the divisor where a nonzero result's sign differs from it, so a
    zero result keeps fmod's sign (remainder(-0.0, 1.0) is -0.0, numpy's
    remainder gives 0.0)."""
    if not np.issubdtype(dtype, np.floating):
        return np.remainder(a, b, out=out, dtype=dtype, casting=casting)
    mod = np.asarray(np.fmod(a, b, dtype=dtype))   # (0-d operands give a scalar)
    np.add(mod, b, out=mod, where=(mod != 0) & ((b < 0) != (mod < 0)))
    np.copyto(out, mod, casting=casting)


_remainder_like("remainder", _remainder)
_remainder_like("fmod", np.fmod)             # sign of the dividend (C's fmod)


@meta("pow")
def pow_meta(self, exponent):
    if not isinstance(self, Tensor):      # pow.Scalar: a contiguous output
        return TensorMeta(exponent._shape, result_type(self, exponent))
    if (not isinstance(exponent, Tensor) and self.dtype.category <= dt.INTEGRAL
            and isinstance(exponent, int) and not isinstance(exponent, bool) and exponent < 0):
        raise RuntimeError("Integers to negative integer powers are not allowed.")
    return binary_meta(self, exponent)


def _int_pow(a, b, compute):
    """Integer powers wrap; a negative exponent gives 1 (base 1), +-1 (base -1) or 0."""
    a, b = np.asarray(a, compute), np.asarray(b, compute)
    negative = b < 0
    if not negative.any():
        return np.power(a, b, dtype=compute)
    positive = np.power(a, np.where(negative, 0, b).astype(compute), dtype=compute)
    odd = (b % 2) != 0
    small = np.where(a == 1, 1, np.where(a == -1, np.where(odd, -1, 1), 0)).astype(compute)
    return np.where(negative, small, positive)


@impl("pow")
@quiet
def pow_impl(out, self, exponent):
    rt = result_type(self, exponent)
    if not isinstance(exponent, Tensor):   # x ** 0 and x ** 1 are shortcuts (any dtype)
        checked_scalar(exponent, rt)
        if exponent == 0 or exponent == 1:
            write(out, 1 if exponent == 0 else self._np())
            return
    elif not isinstance(self, Tensor) and self == 1:
        write(out, 1)
        return
    if rt is dt.bool_:
        raise not_implemented("pow", rt)
    compute = rt.opmath
    a, b = cast_operand(self, rt, compute), cast_operand(exponent, rt, compute)
    if compute.kind in "iu":
        write(out, _int_pow(a, b, compute))
    elif compute.kind == "f" and (rt is dt.float16 or isinstance(exponent, Tensor)):
        write(out, _c_pow(a, b, compute))
    elif compute.kind == "f" and exponent in _POW_SHORTCUTS:
        # (bfloat16 rounds after each step, as PyTorch's vectorized bfloat16 ops do)
        write(out, _POW_SHORTCUTS[exponent](np.asarray(a, rt.numpy if rt is dt.bfloat16
                                                         else compute)))
    else:
        np.power(a, b, out=out._np(), dtype=compute, casting="unsafe")


# PyTorch's float/double/bfloat16 kernels with a scalar exponent (pow_tensor_scalar
# _optimized): these exponents are computed with sqrt/multiplication, not pow().
_POW_SHORTCUTS = {
    0.5: np.sqrt,
    -0.5: lambda x: 1 / np.sqrt(x),
    2: lambda x: x * x,
    3: lambda x: x * x * x,
    -1: lambda x: 1 / x,
    -2: lambda x: 1 / (x * x),
}


def _c_pow(a, b, compute):
    """C's pow(), which PyTorch calls for a tensor exponent and for float16 (its
    float/double/bfloat16 kernels with a scalar exponent take sqrt-style
    shortcuts): pow(-inf, y) is +inf for y > 0 and +0 for y < 0 unless y is an
    odd integer, where numpy's power gives nan.

    float32 is computed in double and rounded once. PyTorch's float pow is
    SLEEF's powf_u10 (and glibc's powf for the tail and under DEFAULT), both
    evaluated in extended precision, so their results are almost always the
    correctly rounded ones; numpy's float32 power (SVML on AVX-512) is not.
    The promise is at most 1 ulp from PyTorch (tests/test_pow_accuracy.py)."""
    if compute == np.float32:
        wide = np.power(np.asarray(a, np.float64), np.asarray(b, np.float64))
        result = wide.astype(np.float32)
    else:
        result = np.power(a, b, dtype=compute)
    b = np.asarray(b, dtype=compute)
    fix = np.isneginf(a) & np.isfinite(b) & (b != 0) & (np.mod(b, 2) != 1)
    if fix.any():
        result = np.where(fix, np.where(b > 0, compute.type(np.inf), compute.type(0.0)), result)
    return result


# -- other binary math -------------------------------------------------------------------

def _binary_float_op(name, fn, float_only=None, real_only=None, complex_ok=False):
    """Binary ops computing in floating point; ``float_only`` names the CPU kernel that
    refuses integer inputs (else they are promoted to the default float) and,
    unless ``complex_ok``, complex ones; ``real_only`` the kernel that refuses
    complex inputs only."""
    meta(name)(binary_meta if float_only else binary_float_meta)

    @impl(name)
    @quiet
    def body(out, self, other):
        rt = result_type(self, other)
        if float_only:
            require_float(float_only, rt, complex_ok)
        if real_only and rt.is_complex:
            raise not_implemented(real_only, rt)
        ft = float_type(rt)
        compute = ft.opmath
        a, b = cast_operand(self, ft, compute), cast_operand(other, ft, compute)
        if isinstance(fn, np.ufunc):
            fn(a, b, out=out._np(), dtype=compute, casting="unsafe")
        else:
            write(out, fn(np.asarray(a, compute), np.asarray(b, compute)))
    body.__name__ = f"{name}_impl"


def _xlogy(x, y):
    return np.where(np.isnan(y), np.nan, np.where(x == 0, 0, x * np.log(y)))


_binary_float_op("atan2", np.arctan2)
_binary_float_op("copysign", np.copysign)
_binary_float_op("xlogy", _xlogy, real_only="xlogy_cpu")
_binary_float_op("hypot", np.hypot, float_only="hypot_cpu")
def _logaddexp(x, y):
    """np.logaddexp, and ATen's complex loop (_log_add_exp_helper) for complex inputs."""
    if np.iscomplexobj(x):
        return _log_add_exp_complex(x, y)
    return np.logaddexp(x, y)


_binary_float_op("logaddexp", _logaddexp, float_only="logaddexp_cpu", complex_ok=True)
_binary_float_op("logaddexp2", np.logaddexp2, float_only="logaddexp2_cpu")

def _min_max(name, ufunc):
    meta(name)(binary_meta)
    compute_into = quiet(binary_impl(ufunc))

    @impl(name)
    def body(out, self, other):
        refuse_complex(result_type(self, other),
                       RuntimeError(f"{name} not implemented for complex tensors."))
        compute_into(out, self, other)
    body.__name__ = f"{name}_impl"


for _name, _ufunc in (("maximum", np.maximum), ("minimum", np.minimum),
                      ("fmax", np.fmax), ("fmin", np.fmin)):
    _min_max(_name, _ufunc)


@meta("lerp")
def lerp_meta(self, end, weight):
    if end.dtype is not self.dtype:
        raise RuntimeError(f"expected dtype {dt.type_meta_name(self.dtype)} for `end` but got dtype "
                           f"{dt.type_meta_name(end.dtype)}")
    if isinstance(weight, Tensor) and weight._shape and weight.dtype is not self.dtype:
        raise RuntimeError(f"expected dtype {dt.type_meta_name(self.dtype)} for `weight` but got dtype "
                           f"{dt.type_meta_name(weight.dtype)}")
    shape, strides = layout(self, end, weight)
    return TensorMeta(shape, self.dtype, strides)


@impl("lerp")
@quiet
def lerp_impl(out, self, end, weight):
    """self + w * (end - self) for |w| < 0.5, else end - (end - self) * (1 - w)."""
    if self.dtype.category < FLOATING:
        kind = "tensor" if isinstance(weight, Tensor) else "scalar"
        raise not_implemented(f"lerp_kernel_{kind}", self.dtype)
    compute = self.dtype.opmath
    a, b = as_compute(self, compute), as_compute(end, compute)
    if not isinstance(weight, Tensor) and native.fusable(a, b, out._np()):
        native.lerp(a, b, compute.type(weight), out._np())   # fused, as ATen's loop
        return
    w = as_compute(weight, compute)
    diff = b - a
    # complex products are never fused (Vectorized<c10::complex>'s fmadd is a * b + c)
    madd = native.multiply_add if self.dtype.category != dt.COMPLEX else (lambda x, y, z: x * y + z)
    write(out, np.where(np.abs(w) < 0.5, madd(w, diff, a), madd(w - compute.type(1), diff, b)))


# -- comparisons ---------------------------------------------------------------------------

def _comparison(name, ufunc, ordered):
    meta(name)(comparison_meta)

    @impl(name)
    @quiet
    def body(out, self, other):
        rt = result_type(self, other)
        if observed():
            promote_inputs(rt, self, other)
        if ordered:
            refuse_complex(rt, not_implemented(f"{name}_cpu", rt))
        compute = rt.opmath
        ufunc(cast_operand(self, rt, compute), cast_operand(other, rt, compute), out=out._np(),
              signature=(compute, compute, _BOOL), casting="unsafe")
    body.__name__ = f"{name}_impl"


_BOOL = np.dtype(np.bool_)


for _name, _ufunc in (("eq", np.equal), ("ne", np.not_equal), ("lt", np.less),
                      ("le", np.less_equal), ("gt", np.greater), ("ge", np.greater_equal)):
    _comparison(_name, _ufunc, ordered=_name not in ("eq", "ne"))


def _unary_test(name, float_fn, int_fn, complex_error=None):
    if name != "signbit":
        meta(name)(unary_bool_meta)

    @impl(name)
    def body(out, self):
        if complex_error is not None:
            refuse_complex(self.dtype, NotImplementedError(complex_error))
        a = self._np()
        if self.dtype.category >= FLOATING:
            float_fn(a if self.dtype.opmath == a.dtype else a.astype(self.dtype.opmath),
                     out=out._np(), casting="unsafe")
        else:
            write(out, int_fn(a))
    body.__name__ = f"{name}_impl"


_unary_test("isnan", np.isnan, lambda a: False)
_unary_test("isinf", np.isinf, lambda a: False)
_unary_test("isfinite", np.isfinite, lambda a: True)
_unary_test("signbit", np.signbit, lambda a: a < 0 if a.dtype.kind == "i" else False,
            "signbit is not implemented for complex tensors.")


class _SignbitMeta(TensorMeta):
    __slots__ = ()

    def check_out(self, out_dtype):
        if out_dtype is not dt.bool_:
            raise RuntimeError("signbit does not support non-boolean outputs.")


@meta("signbit")
def signbit_meta(self):
    return _SignbitMeta(self._shape, dt.bool_, elementwise_strides(self._shape, (self,)))


@meta("isclose")
def isclose_meta(self, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    if self.dtype is not other.dtype:
        raise RuntimeError(f"{self.dtype._short} did not match {other.dtype._short}")
    if rtol < 0:
        raise RuntimeError(f"rtol must be greater than or equal to zero, but got {rtol:g}")
    if atol < 0:
        raise RuntimeError(f"atol must be greater than or equal to zero, but got {atol:g}")
    return comparison_meta(self, other)


@impl("isclose")
@quiet
def isclose_impl(out, self, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    """|self - other| <= atol + rtol * |other| (finite), or equal (TensorCompare.cpp)."""
    a, b = self._np(), other._np()
    close = a == b
    floating = self.dtype.category >= FLOATING
    if equal_nan and floating:
        close |= np.isnan(a) & np.isnan(b)
    if rtol or atol:
        ftype = float_type(self.dtype).opmath
        if self.dtype is dt.bool_:
            a, b = a.astype(ftype), b.astype(ftype)
        compute = self.dtype.opmath if self.dtype is not dt.bool_ else ftype
        allowed = ftype.type(atol) + np.abs(ftype.type(rtol) * b.astype(ftype))
        actual = np.abs(np.subtract(a, b, dtype=compute))
        actual = actual.astype(np.result_type(actual.dtype, ftype))
        close |= np.isfinite(actual) & (actual <= allowed)
    write(out, close)


# -- logical and bitwise ---------------------------------------------------------------------

def _logical(name, ufunc):
    meta(name)(comparison_meta)

    @impl(name)
    def body(out, self, other):
        ufunc(operand(self, np.dtype(np.bool_)) if not isinstance(self, Tensor) else self._np(),
              other._np() if isinstance(other, Tensor) else bool(other), out=out._np(),
              casting="unsafe")
    body.__name__ = f"{name}_impl"


_logical("logical_and", np.logical_and)
_logical("logical_or", np.logical_or)
_logical("logical_xor", np.logical_xor)


@meta("logical_not")
def logical_not_meta(self):
    return unary_bool_meta(self)


@impl("logical_not")
def logical_not_impl(out, self):
    np.logical_not(self._np(), out=out._np(), casting="unsafe")


def _bitwise(name, kernel_name, fn):
    meta(name)(binary_meta)

    @impl(name)
    def body(out, self, other):
        rt = result_type(self, other)
        if rt.category >= FLOATING:
            raise not_implemented(kernel_name, rt)
        compute = rt.numpy
        fn(operand(self, compute), operand(other, compute), out=out._np(), dtype=compute,
           casting="unsafe")
    body.__name__ = f"{name}_impl"


_bitwise("bitwise_and", "bitwise_and_cpu", np.bitwise_and)
_bitwise("bitwise_or", "bitwise_or_cpu", np.bitwise_or)
_bitwise("bitwise_xor", "bitwise_xor_cpu", np.bitwise_xor)


@meta("bitwise_not")
def bitwise_not_meta(self):
    return unary_meta(self)


@impl("bitwise_not")
def bitwise_not_impl(out, self):
    if self.dtype.category >= FLOATING:
        raise not_implemented("bitwise_not_cpu", self.dtype)
    np.invert(self._np(), out=out._np())


def _shift(name, kernel_name, left):
    """Shifts by a negative amount or by at least the bit width give 0 (left) or fill
    with the sign bit (right), as ATen's kernels define them."""
    meta(name)(binary_meta)

    @impl(name)
    def body(out, self, other):
        rt = result_type(self, other)
        if rt.category != dt.INTEGRAL:
            raise not_implemented(kernel_name, rt)
        compute = rt.numpy
        a = np.asarray(operand(self, compute)).astype(compute, copy=False)  # wraps, as a cast
        b = np.asarray(operand(other, compute)).astype(compute, copy=False)
        bits = compute.itemsize * 8
        valid = (b >= 0) & (b < bits)
        amount = np.where(valid, b, 0).astype(compute)
        if left:
            result = np.where(valid, np.left_shift(a, amount), 0)
        else:
            overflow = np.right_shift(a, bits - 1) if rt.is_signed else np.zeros_like(a)
            result = np.where(valid, np.right_shift(a, amount), overflow)
        write(out, result)
    body.__name__ = f"{name}_impl"


_shift("bitwise_left_shift", "lshift_cpu", left=True)
_shift("bitwise_right_shift", "rshift_cpu", left=False)


# -- unary ops keeping the dtype ---------------------------------------------------------------

@meta("neg")
def neg_meta(self):
    if self.dtype is dt.bool_:
        raise RuntimeError("Negation, the `-` operator, on a bool tensor is not supported. If "
                           "you are trying to invert a mask, use the `~` or `logical_not()` "
                           "operator instead.")
    return unary_meta(self)


@impl("neg")
def neg_impl(out, self):
    np.negative(self._np(), out=out._np(), dtype=self.dtype.opmath, casting="unsafe")


meta("conj_physical")(unary_meta)


@impl("conj_physical")
def conj_physical_impl(out, self):
    np.conjugate(self._np(), out=out._np())


@kernel("conj_physical")
def conj_physical(self):
    """A real tensor is its own conjugate (``self`` itself); a complex one gets
    a conjugated copy (``_conj_physical``)."""
    if self.dtype.category != dt.COMPLEX:
        return self
    return ops.aten._conj_physical.default(self)


@kernel("conj")
def conj(self):
    """As ``conj_physical``: glasstorch has no lazy conjugate bit, so for a
    complex tensor this is a copy, where PyTorch's result is a view."""
    return conj_physical(self)


@kernel("conj_physical_")
def conj_physical_(self):
    """In place: only complex tensors change."""
    if self.dtype.category != dt.COMPLEX:
        return self
    return aten.copy_.default(self, conj_physical(self))


@kernel("is_conj")
def is_conj(self):
    """No tensor carries a lazy conjugate bit here (see ``conj``)."""
    return False


@kernel("is_neg")
def is_neg(self):
    """No tensor carries a lazy negation bit here."""
    return False


@kernel("resolve_neg")
def resolve_neg(self):
    """Materialize a lazy negation: there never is one, so ``self``."""
    return self


@kernel("positive")
def positive(self):
    """``+x`` is ``x`` itself (CompositeImplicitAutograd)."""
    if self.dtype is dt.bool_:
        raise RuntimeError("The `+` operator, on a bool tensor is not supported.")
    return self


@meta("abs")
def abs_meta(self):
    """The magnitude: complex inputs give their real dtype."""
    if self.dtype.is_complex:
        return TensorMeta(self._shape, self.dtype.to_real(),
                          elementwise_strides(self._shape, (self,)))
    return unary_meta(self)


@impl("abs")
def abs_impl(out, self):
    if self.dtype is dt.bool_:
        raise not_implemented("abs_cpu", self.dtype)
    if self.dtype.is_complex:
        np.abs(self._np(), out=out._np())
        return
    np.abs(self._np(), out=out._np(), dtype=self.dtype.opmath, casting="unsafe")


@kernel("abs_")
def abs_(self):
    """abs.out into self (ATen's abs_): a complex tensor cannot hold its real magnitudes."""
    if self.dtype.is_complex:
        raise RuntimeError("In-place abs is not supported for complex tensors.")
    return aten.abs.out(self, out=self)


meta("sign")(unary_meta)
meta("sgn")(unary_meta)


@impl("sign")
@quiet
def sign_impl(out, self):
    """(0 < x) - (x < 0): nan gives 0, as in PyTorch (numpy's sign gives nan)."""
    refuse_complex(self.dtype, NotImplementedError(
        "Unlike NumPy, torch.sign is not intended to support complex numbers. Please use "
        "torch.sgn instead."))
    sgn_impl(out, self)


@impl("sgn")
@quiet
def sgn_impl(out, self):
    """sign for real inputs; x / |x| (0 at 0) for complex ones."""
    a = self._np()
    if self.dtype is dt.bool_:
        write(out, a)
    elif self.dtype.is_complex:
        magnitude = np.abs(a)
        write(out, np.divide(a, magnitude, out=np.zeros_like(a), where=magnitude != 0))
    else:
        zero = a.dtype.type(0)
        write(out, (a > zero).astype(self.dtype.opmath) - (a < zero).astype(self.dtype.opmath))


def _rounding(name, ufunc):
    """floor/ceil/trunc/round: integers are already whole, bools have no kernel."""
    meta(name)(unary_meta)

    @impl(name)
    def body(out, self):
        refuse_complex(self.dtype, NotImplementedError(
            f"{name} is not supported for complex inputs"))
        if self.dtype is dt.bool_:
            raise not_implemented(f"{name}_vml_cpu", self.dtype)
        if self.dtype.category == dt.INTEGRAL:
            write(out, self._np())
        else:
            ufunc(self._np(), out=out._np(), dtype=self.dtype.opmath, casting="unsafe")
    body.__name__ = f"{name}_impl"


_rounding("floor", np.floor)
_rounding("ceil", np.ceil)
_rounding("trunc", np.trunc)


@meta("round")
def round_meta(self, *, decimals=None):
    return unary_meta(self)


@impl("round")
@quiet
def round_impl(out, self, *, decimals=None):
    """Half to even (nearbyint); with decimals: nearbyint(x * 10^d) / 10^d.
    (``decimals=None``: the round.default overload, which copies integers.)"""
    if self.dtype.category != FLOATING:
        if decimals:
            raise not_implemented("round_cpu", self.dtype)
        if self.dtype.is_complex:
            raise not_implemented("round_vml_cpu", self.dtype)
        if self.dtype is dt.bool_ or decimals == 0:
            raise not_implemented("round_vml_cpu", self.dtype)
        write(out, self._np())
        return
    compute = self.dtype.opmath
    a = self._np().astype(compute, copy=False)
    if not decimals:
        np.rint(a, out=out._np(), casting="unsafe")
        return
    ten_pow = compute.type(10.0 ** abs(decimals))
    if decimals > 0:
        write(out, np.rint(a * ten_pow) / ten_pow)
    else:
        write(out, np.rint(a / ten_pow) * ten_pow)


meta("frac")(unary_meta)


@impl("frac")
@quiet
def frac_impl(out, self):
    if self.dtype.category != FLOATING:
        raise not_implemented("frac_cpu", self.dtype)
    a = self._np().astype(self.dtype.opmath, copy=False)
    write(out, a - np.trunc(a))


@meta("square")
def square_meta(self):
    """pow(self, 2): bool squares to int64."""
    return TensorMeta(self._shape, dt.int64 if self.dtype is dt.bool_ else self.dtype,
                      elementwise_strides(self._shape, (self,)))


@impl("square")
@quiet
def square_impl(out, self):
    compute = out.dtype.opmath if self.dtype is dt.bool_ else self.dtype.opmath
    a = self._np()
    np.multiply(a, a, out=out._np(), dtype=compute, casting="unsafe")


class _NanToNumMeta(TensorMeta):
    __slots__ = ()

    def check_out(self, out_dtype):
        if out_dtype is not self.dtype:
            raise RuntimeError(f"nan_to_num: dtype of out: {out_dtype._short} should be same as "
                               f"input: {self.dtype._short}")


@meta("nan_to_num")
def nan_to_num_meta(self, nan=None, posinf=None, neginf=None):
    return _NanToNumMeta(self._shape, self.dtype, elementwise_strides(self._shape, (self,)))


@impl("nan_to_num")
def nan_to_num_impl(out, self, nan=None, posinf=None, neginf=None):
    """nan -> nan (0), +inf -> posinf (the dtype's max), -inf -> neginf (its lowest)."""
    a = self._np()
    if self.dtype.category < FLOATING:
        write(out, a)
        return
    if self.dtype.is_complex:       # each part on its own, as ATen's loop
        write(out, _nan_to_num(a.real, nan, posinf, neginf)
              + 1j * _nan_to_num(a.imag, nan, posinf, neginf))
        return
    write(out, _nan_to_num(a, nan, posinf, neginf))


def _nan_to_num(a, nan, posinf, neginf):
    info = ml_dtypes.finfo(a.dtype)
    target = a.dtype
    with np.errstate(all="ignore"):
        values = [target.type(v if v is not None else d) for v, d in
                  ((nan, 0.0), (posinf, float(info.max)), (neginf, float(info.min)))]
    return np.where(np.isnan(a), values[0],
                    np.where(np.isposinf(a), values[1], np.where(np.isneginf(a), values[2], a)))


# -- unary ops computing in floating point (ints and bools give the default float) -------------

def _erf(x):
    return native.erf(x)


def _erfc(x):
    return native.erf(x, complement=True)


def _erfinv(y):
    """Giles' approximation, polished by two Newton steps on erf (in float64)."""
    y = np.asarray(y, np.float64)
    w = -np.log((1.0 - y) * (1.0 + y))
    central = w < 5.0
    wc = w - 2.5
    p1 = 2.81022636e-08
    for c in (3.43273939e-07, -3.5233877e-06, -4.39150654e-06, 0.00021858087, -0.00125372503,
              -0.00417768164, 0.246640727, 1.50140941):
        p1 = c + p1 * wc
    wt = np.sqrt(np.where(central, 5.0, w)) - 3.0
    p2 = -0.000200214257
    for c in (0.000100950558, 0.00134934322, -0.00367342844, 0.00573950773, -0.0076224613,
              0.00943887047, 1.00167406, 2.83297682):
        p2 = c + p2 * wt
    x = np.where(central, p1, p2) * y
    finite = np.isfinite(x)
    for _ in range(2):
        xs = np.where(finite, x, 0.0)
        err = _erf(xs) - y
        x = np.where(finite, xs - err / (2.0 / math.sqrt(math.pi) * np.exp(-xs * xs)), x)
    x = np.where(np.abs(y) == 1.0, np.copysign(np.inf, y), x)
    return np.where(np.abs(y) > 1.0, np.nan, x)


def _sigmoid(x, out=None):
    """1 / (1 + exp(-x)), computed in ``out`` when given (no temporaries)."""
    one = x.dtype.type(1)
    if out is None:
        return one / (one + np.exp(-x))
    np.negative(x, out=out)
    np.exp(out, out=out)
    np.add(out, one, out=out)
    return np.divide(one, out, out=out)


_UNARY_FLOAT = {
    "reciprocal": lambda x: x.dtype.type(1) / x,
    "sqrt": np.sqrt, "rsqrt": lambda x: x.dtype.type(1) / np.sqrt(x),
    "exp": np.exp, "exp2": np.exp2, "expm1": np.expm1,
    "log": np.log, "log2": np.log2, "log10": np.log10, "log1p": np.log1p,
    "sin": np.sin, "cos": np.cos, "tan": np.tan,
    "asin": np.arcsin, "acos": np.arccos, "atan": np.arctan,
    "sinh": np.sinh, "cosh": np.cosh, "tanh": np.tanh,
    "asinh": np.arcsinh, "acosh": np.arccosh, "atanh": np.arctanh,
    "erf": _erf, "erfc": _erfc, "erfinv": _erfinv, "sigmoid": _sigmoid,
}
# the ones ATen computes for real types only (its CPU kernel's name, for the error)
_REAL_ONLY = {"erf": "erf_vml_cpu", "erfc": "erfc_vml_cpu", "erfinv": "erfinv_vml_cpu"}


def _unary_float_op(name, fn):
    meta(name)(unary_float_meta)

    @impl(name)
    @quiet
    def body(out, self):
        if name in _REAL_ONLY and self.dtype.is_complex:
            raise not_implemented(_REAL_ONLY[name], self.dtype)
        compute = float_type(self.dtype).opmath
        if isinstance(fn, np.ufunc):
            fn(self._np(), out=out._np(), dtype=compute, casting="unsafe")
        elif fn is _sigmoid and out.dtype.numpy == compute:
            fn(self._np().astype(compute, copy=False), out=out._np())
        else:
            write(out, fn(self._np().astype(compute, copy=False)))
    body.__name__ = f"{name}_impl"


for _name, _fn in _UNARY_FLOAT.items():
    _unary_float_op(_name, _fn)


# -- where, masked_fill, clamp ----------------------------------------------------------------

@meta("where")
def where_meta(condition, self, other):
    if condition.dtype is not dt.bool_ and condition.dtype is not dt.uint8:
        raise RuntimeError("where expected condition to be a boolean tensor, but got a tensor "
                           f"with dtype {condition.dtype._short}")
    shape, strides = layout(condition, self, other)
    return _WhereMeta(shape, result_type(self, other), strides)


class _WhereMeta(TensorMeta):
    __slots__ = ()

    def check_out(self, out_dtype):
        if out_dtype is not self.dtype:
            raise RuntimeError(f"Expected out type to be {self.dtype._short} but got "
                               f"{out_dtype._short}")


@impl("where")
@quiet
def where_impl(out, condition, self, other):
    rt = result_type(self, other)
    if rt.category == dt.INTEGRAL:
        checked_scalar(self, rt)
        checked_scalar(other, rt)
    compute = rt.numpy
    write(out, np.where(condition._np(), as_compute(self, compute), as_compute(other, compute)))


def _scalar_operand(value, dtype, device) -> Tensor:
    return ops.aten.scalar_tensor.default(value, dtype=dtype, layout=strided, device=device)


@kernel("where_scalar_self")
def where_scalar_self(condition, self, other):
    """where(cond, number, tensor): the number as a scalar_tensor of the result
    type, the tensor converted to it, then where.self (ATen's composite)."""
    rt = result_type(other, self)
    self_t = _scalar_operand(self, rt, other.device)
    return ops.aten.where.self(condition, self_t, other.to(rt))


@kernel("where_scalar_other")
def where_scalar_other(condition, self, other):
    rt = result_type(self, other)
    other_t = _scalar_operand(other, rt, self.device)
    return ops.aten.where.self(condition, self.to(rt), other_t)


@kernel("where_scalars")
def where_scalars(condition, self, other):
    rt = result_type(self, other)
    other_t = _scalar_operand(other, rt, condition.device)
    return ops.aten.where.self(condition, _scalar_operand(self, rt, condition.device), other_t)


@meta("masked_fill")
@overlap_rule(expanded=(
    "Use of masked_fill_ on expanded tensors is deprecated. Please clone() the tensor before "
    "performing this operation. This also applies to advanced indexing e.g. tensor[mask] = scalar"))
def masked_fill_meta(self, mask, value):
    if mask.dtype is not dt.bool_:
        raise RuntimeError("masked_fill_ only supports boolean masks, but got mask with dtype "
                           f"{dt.type_meta_name(mask.dtype)}")
    if isinstance(value, Tensor) and value._shape:
        raise RuntimeError("masked_fill_ only supports a 0-dimensional value tensor, but got "
                           f"tensor with {len(value._shape)} dimension(s).")
    check_same_device(self, mask)
    return TensorMeta(broadcast_shapes(mask._shape, self._shape), self.dtype)


@kernel("masked_fill")
def masked_fill(self, mask, value):
    """ATen's functional masked_fill (CompositeExplicitAutograd): self and
    mask expanded to their broadcast shape when they differ (only self's
    expansion is used: the mask's is dispatched only while observed), a
    contiguous clone, then ``masked_fill_`` with the original mask."""
    if mask._shape != self._shape:
        shape = list(broadcast_shapes(mask._shape, self._shape))
        if observed():
            inner.expand(mask, shape)
        self = inner.expand(self, shape)
    result = inner.clone(self, memory_format=contiguous_format)
    if isinstance(value, Tensor):
        return ops.aten.masked_fill_.Tensor(result, mask, value)
    return inner.masked_fill_(result, mask, value)


@inner_op("aten::masked_fill_.Scalar")
def _masked_fill_fresh(self, mask, value):
    """masked_fill_ into a fresh tensor of the broadcast shape (the meta
    rule's checks; nothing overlaps, nobody else sees it)."""
    masked_fill_meta(self, mask, value)
    if self.device.type != "meta":
        masked_fill_impl(self, self, mask, value)
    return self


@impl("masked_fill")
@quiet
def masked_fill_impl(out, self, mask, value):
    """out = self (broadcast), then the value where mask is set."""
    o = out._np()
    if out is not self:
        np.copyto(o, self._np(), casting="unsafe")
    if isinstance(value, Tensor):
        value = value.item()
    checked_scalar(value, out.dtype)
    np.copyto(o, operand(value, o.dtype), casting="unsafe", where=mask._np())


def _clamp_meta(self, min=None, max=None):
    if min is None and max is None:
        raise RuntimeError("torch.clamp: At least one of 'min' or 'max' must not be None")
    shape, strides = layout(self, min, max)
    scalars = not isinstance(min, Tensor) and not isinstance(max, Tensor)
    return (SameDtypeMeta if scalars else TensorMeta)(shape, result_type(self, min, max), strides)


@quiet
def _clamp_impl(out, self, min=None, max=None):
    """min(max(x, min), max): nan propagates; min > max gives max."""
    rt = result_type(self, min, max)
    refuse_complex(self.dtype, NotImplementedError("clamp is not supported for complex types"))
    compute = rt.opmath
    if rt is dt.bool_ and not isinstance(min, Tensor) and not isinstance(max, Tensor):
        which = "clamp" if min is not None and max is not None else \
            "clamp_min" if min is not None else "clamp_max"
        raise not_implemented(f"{which}_scalar_cpu", rt)
    checked_scalar(min, rt)
    checked_scalar(max, rt)
    result = operand(self, compute)
    zeros = zeros_of(result, rt, min, max)
    if min is not None:
        result = np.maximum(result, operand(min, compute), dtype=compute, casting="unsafe")
    if max is not None:
        result = np.minimum(result, operand(max, compute), dtype=compute, casting="unsafe")
    write(out, restore_zeros(result, zeros))


meta("clamp")(_clamp_meta)


@impl("clamp")
def clamp_impl(out, self, min=None, max=None):
    if observed() and not isinstance(min, Tensor) and not isinstance(max, Tensor):
        ops.aten.to.dtype(self, result_type(self, min, max))   # clamp's meta promotes by hand
    _clamp_impl(out, self, min, max)


@meta("clamp_min")
def clamp_min_meta(self, min):
    return _clamp_meta(self, min, None)


@impl("clamp_min")
def clamp_min_impl(out, self, min):
    _clamp_impl(out, self, min, None)


@meta("clamp_max")
def clamp_max_meta(self, max):
    return _clamp_meta(self, None, max)


@impl("clamp_max")
def clamp_max_impl(out, self, max):
    _clamp_impl(out, self, None, max)


# -- whole-tensor comparisons: equal, allclose (TensorCompare.cpp) -------------------------

@kernel("equal")
def equal(self, other):
    """Same sizes and equal elements (NaN is unequal to itself); dtypes may differ."""
    if _on_meta(self, other):
        raise _no_meta_kernel("equal")
    if self.device != other.device:
        raise RuntimeError(f"Expected all tensors to be on the same device, but found at least "
                           f"two devices, {self.device} and {other.device}!")
    if self._shape != other._shape:
        return False
    return bool(np.array_equal(self._np(), other._np()))


@kernel("allclose")
def allclose(self, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    close = aten.isclose.default(self, other, rtol, atol, equal_nan)
    return bool(aten._local_scalar_dense.default(aten.all.default(close)))


# -- more unary ops: logit, isposinf / isneginf, deg2rad / rad2deg -------------------------

@meta("logit")
def logit_meta(self, eps=None):
    return unary_float_meta(self)


@impl("logit")
@quiet
def logit_impl(out, self, eps=None):
    """log(x / (1 - x)), x first clamped to [eps, 1 - eps] when eps >= 0 is given.
    Each step rounds to the result dtype (float16/bfloat16 too), as PyTorch's loop does."""
    if self.dtype.is_complex:
        raise not_implemented("logit_cpu", self.dtype)
    compute = out.dtype.numpy
    x = self._np().astype(compute)
    if eps is not None and eps >= 0:
        x = np.clip(x, compute.type(eps), compute.type(1 - eps)).astype(compute, copy=False)
    write(out, np.log(x / (compute.type(1) - x)))


@meta("logit_backward")
def logit_backward_meta(grad_output, self, eps=None):
    return binary_meta(grad_output, self)


@impl("logit_backward")
@quiet
def logit_backward_impl(out, grad_output, self, eps=None):
    """grad / (x (1 - x)); outside [eps, 1 - eps] zero, or (no eps) outside [0, 1] NaN."""
    compute = out.dtype.opmath
    g, x = grad_output._np().astype(compute), self._np().astype(compute)
    if eps is None or eps < 0:
        outside, fill = (x < 0) | (x > 1), np.nan
    else:
        outside, fill = (x < eps) | (x > 1 - eps), 0
    write(out, np.where(outside, fill, g / (x * (1 - x))))


class _BoolOnlyMeta(TensorMeta):
    """A bool result whose out= tensor must be bool too (isposinf, isneginf)."""

    __slots__ = ("op_name",)

    def check_out(self, out_dtype):
        if out_dtype is not dt.bool_:
            raise RuntimeError(f"{self.op_name} does not support non-boolean outputs.")


def _signed_inf_test(name, sign):
    @meta(name)
    def test_meta(self):
        if self.dtype.category == dt.COMPLEX:
            raise RuntimeError(f"{name} does not support complex inputs.")
        spec = _BoolOnlyMeta(self._shape, dt.bool_, elementwise_strides(self._shape, (self,)))
        spec.op_name = name
        return spec

    @impl(name)
    def test_impl(out, self):
        a = self._np()
        if self.dtype.category >= dt.FLOATING:
            write(out, a == sign * np.inf)
        else:
            out._np()[...] = False
    test_meta.__name__, test_impl.__name__ = f"{name}_meta", f"{name}_impl"


_signed_inf_test("isposinf", 1)
_signed_inf_test("isneginf", -1)


def _angle_conversion(name, factor):
    """deg2rad / rad2deg (CompositeExplicitAutograd): a multiplication by ``factor``,
    integer and bool inputs turned into the default float dtype first."""
    def as_float(self):
        if self.dtype.category == dt.COMPLEX:
            raise RuntimeError(f"{name} is not supported for complex tensors.")
        if self.dtype.category < dt.FLOATING:
            return aten._to_copy.default(self, dtype=dt.get_default_dtype())
        return self

    @kernel(name)
    def convert(self):
        return aten.mul.Tensor(as_float(self), factor)

    @kernel(f"{name}_out")
    def convert_out(self, *, out):
        """(mul's out=: its casting check names the float result type)"""
        return aten.mul.out(as_float(self), factor, out=out)

    @kernel(f"{name}_")
    def convert_(self):
        if self.dtype.category == dt.COMPLEX:
            raise RuntimeError(f"{name} is not supported for complex tensors.")
        return aten.mul_.Tensor(self, factor)
    convert.__name__, convert_.__name__, convert_out.__name__ = name, f"{name}_", f"{name}_out"


_angle_conversion("deg2rad", math.pi / 180)
_angle_conversion("rad2deg", 180 / math.pi)


# -- aliases: multiply, divide, greater, arccos, fix ... ------------------------------------

_ALIAS_TARGETS = {
    "multiply": "mul", "subtract": "sub", "divide": "div", "absolute": "abs", "negative": "neg",
    "fix": "trunc", "arctan2": "atan2", "arcsin": "asin", "arccos": "acos", "arctan": "atan",
    "arcsinh": "asinh", "arccosh": "acosh", "arctanh": "atanh", "not_equal": "ne",
    "less": "lt", "less_equal": "le", "greater": "gt", "greater_equal": "ge"}
_ALIAS_OVERLOADS = {
    "multiply": ("Tensor", "Scalar", "out", "_.Tensor", "_.Scalar"),
    "subtract": ("Tensor", "Scalar", "out", "_.Tensor", "_.Scalar"),
    "divide": ("Tensor", "Scalar", "Tensor_mode", "Scalar_mode", "out", "out_mode", "_.Tensor",
               "_.Scalar", "_.Tensor_mode", "_.Scalar_mode"),
    "arctan2": ("", "out", "_"),
    **{name: ("Tensor", "Scalar", "Tensor_out", "Scalar_out", "_.Tensor", "_.Scalar")
       for name in ("not_equal", "less", "less_equal", "greater", "greater_equal")}}


def _alias(overload, target):
    """PyTorch's alias ops are CompositeImplicitAutograd kernels that call their
    target (``multiply.Tensor`` -> ``mul.Tensor``): same values, errors, and
    grad_fn (``MulBackward0``).  ``overload`` is the kernel's yaml name."""
    base, _, name = target.partition(".")
    found = []

    def alias(*args, **kwargs):
        if not found:
            found.append(getattr(getattr(aten, base), name or "default"))
        return found[0](*args, **kwargs)
    alias.__name__ = alias.__qualname__ = overload.replace(".", "_")
    kernel(overload)(alias)


for _alias_name, _target in _ALIAS_TARGETS.items():
    for _ov in _ALIAS_OVERLOADS.get(_alias_name, ("", "out", "_")):
        _suffix = _ov if _ov.startswith("_") else (f".{_ov}" if _ov else "")
        _alias(_alias_name + _suffix, _target + _suffix)
del _alias_name, _target, _ov, _suffix


# -- gcd, lcm, heaviside, nextafter, ldexp, float_power, isin ---------------------------------

def _integer_binary(name, fn):
    """gcd / lcm (ATen's BinaryOps): integer dtypes only, the result's dtype."""
    meta(name)(binary_meta)

    @impl(name)
    def body(out, self, other):
        rt = result_type(self, other)
        if rt.category != dt.INTEGRAL:
            raise not_implemented(f"{name}_cpu", rt)
        compute = rt.numpy
        fn(operand(self, compute), operand(other, compute), out=out._np(), dtype=compute,
           casting="unsafe")
    body.__name__ = f"{name}_impl"


def _lcm(a, b, out, dtype, casting):
    """|a / gcd * b| in the integer type, wrapping on overflow before the abs (ATen's order)."""
    g = np.gcd(a, b, dtype=dtype)
    with np.errstate(all="ignore"):
        product = np.multiply(np.floor_divide(a, np.where(g == 0, 1, g), dtype=dtype), b,
                              dtype=dtype)
    np.copyto(out, np.where(g == 0, 0, np.abs(product)), casting=casting)


_integer_binary("gcd", np.gcd)
_integer_binary("lcm", _lcm)


@meta("heaviside")
def heaviside_meta(self, values):
    if self.dtype.category == dt.COMPLEX or values.dtype.category == dt.COMPLEX:
        raise RuntimeError("heaviside is not yet implemented for complex tensors.")
    if self.dtype is not values.dtype:
        raise RuntimeError("heaviside is not yet implemented for tensors with different dtypes.")
    return binary_meta(self, values)


@impl("heaviside")
def heaviside_impl(out, self, values):
    """``values`` where x == 0, else (x > 0): a NaN input gives 0, as ATen's loop."""
    compute = self.dtype.opmath
    x, v = self._np().astype(compute, copy=False), values._np().astype(compute, copy=False)
    write(out, np.where(x == 0, v, x > 0))


@meta("nextafter")
def nextafter_meta(self, other):
    return binary_meta(self, other)


@impl("nextafter")
def nextafter_impl(out, self, other):
    """The next representable value after ``self`` towards ``other``, in the
    result dtype itself (float16 / bfloat16 step by their own bits)."""
    rt = result_type(self, other)
    require_float("nextafter_cpu", rt)
    a, b = cast_operand(self, rt, rt.numpy), cast_operand(other, rt, rt.numpy)
    a, b = np.broadcast_arrays(np.asarray(a, rt.numpy), np.asarray(b, rt.numpy))
    if rt in (dt.float32, dt.float64):
        write(out, np.nextafter(a, b))
        return
    bits = a.view(np.uint16).astype(np.int32)
    wide_a, wide_b = a.astype(np.float32), b.astype(np.float32)
    step = np.where((wide_b > wide_a) == (wide_a > 0), 1, -1)
    tiny = np.where(wide_b > 0, 1, 0x8001)          # the smallest subnormal, signed as b
    moved = np.where(wide_a == 0, tiny, bits + step).astype(np.uint16).view(a.dtype)
    nan = np.isnan(wide_a) | np.isnan(wide_b)
    write(out, np.where(nan, np.asarray(np.nan, a.dtype),
                        np.where(wide_a == wide_b, b, moved)))


def _powers_of_two(self, other):
    """2 ** other, the 2 a 0-d tensor of self's float dtype (float32 for integer
    and bool inputs), so the product keeps self's dtype as PyTorch's does."""
    two_dtype = dt.float32 if self.dtype.category < FLOATING else self.dtype
    two = aten.full.default([], 2.0, dtype=two_dtype, device=self.device)
    return aten.pow.Tensor_Tensor(two, other)


@kernel("ldexp")
def ldexp(self, other):
    """self * 2 ** other (CompositeExplicitAutograd in PyTorch)."""
    return aten.mul.Tensor(self, _powers_of_two(self, other))


def _ldexp_result_check(result):
    """ATen's ldexp_out: a power of two scales into a floating or complex result only."""
    if result.dtype.category < FLOATING:
        raise RuntimeError(f"ldexp can't be cast to the desired output type {result.dtype._short}")


@kernel("ldexp_")
def ldexp_(self, other):
    _ldexp_result_check(self)
    return aten.mul_.Tensor(self, _powers_of_two(self, other))


@kernel("ldexp_out")
def ldexp_out(self, other, *, out):
    _ldexp_result_check(out)
    return aten.mul.out(self, _powers_of_two(self, other), out=out)


def _float_power_dtype(*operands):
    """float_power computes in double, or complex double when an operand is complex."""
    complex_ = any(isinstance(x, complex) or
                   (isinstance(x, Tensor) and x.dtype.category == dt.COMPLEX) for x in operands)
    return dt.complex128 if complex_ else dt.float64


def _in_double(x, dtype):
    if isinstance(x, Tensor):
        return aten._to_copy.default(x, dtype=dtype) if x.dtype is not dtype else x
    return complex(x) if dtype is dt.complex128 else float(x)


def _float_power_check(given, dtype, what):
    if given.dtype is not dtype:
        raise RuntimeError(f"the {what} has dtype {given.dtype._short} but the operation's "
                           f"result requires dtype {dtype._short}")


@kernel("float_power")
def float_power(self, exponent):
    """pow in double precision (CompositeImplicitAutograd): all three overloads."""
    dtype = _float_power_dtype(self, exponent)
    base, exp = _in_double(self, dtype), _in_double(exponent, dtype)
    if not isinstance(base, Tensor):
        return aten.pow.Scalar(base, exp)
    if not isinstance(exp, Tensor):
        return aten.pow.Tensor_Scalar(base, exp)
    return aten.pow.Tensor_Tensor(base, exp)


@kernel("float_power_out")
def float_power_out(self, exponent, *, out):
    dtype = _float_power_dtype(self, exponent)
    _float_power_check(out, dtype, "output given to float_power")
    base, exp = _in_double(self, dtype), _in_double(exponent, dtype)
    if not isinstance(base, Tensor):
        return aten.pow.Scalar_out(base, exp, out=out)
    if not isinstance(exp, Tensor):
        return aten.pow.Tensor_Scalar_out(base, exp, out=out)
    return aten.pow.Tensor_Tensor_out(base, exp, out=out)


@kernel("float_power_")
def float_power_(self, exponent):
    dtype = _float_power_dtype(self, exponent)
    _float_power_check(self, dtype, "base given to float_power_")
    exp = _in_double(exponent, dtype)
    return aten.pow_.Tensor(self, exp) if isinstance(exp, Tensor) else aten.pow_.Scalar(self, exp)


@kernel("isreal")
def isreal(self):
    """CompositeImplicitAutograd: true everywhere for real dtypes, else imag == 0."""
    if self.dtype.category != dt.COMPLEX:
        return aten.ones_like.default(self, dtype=dt.bool_, memory_format=preserve_format)
    return aten.eq.Scalar(aten.imag.default(self), 0)


@meta("isin")
def isin_meta(elements, test_elements, *, assume_unique=False, invert=False):
    """Bool of ``elements``' shape; bool and complex inputs are refused."""
    for x in (elements, test_elements):
        d = dtype_of(x)
        if d is dt.bool_ or d.category == dt.COMPLEX:
            raise RuntimeError(f"Unsupported input type encountered for isin(): {d._short}")
    shape = elements._shape if isinstance(elements, Tensor) else ()
    return TensorMeta(shape, dt.bool_, None)


@impl("isin")
def isin_impl(out, elements, test_elements, *, assume_unique=False, invert=False):
    compute = result_type(elements, test_elements).opmath
    a, b = as_compute(elements, compute), as_compute(test_elements, compute)
    write(out, np.isin(a, b, invert=invert))


# -- angle, frexp, complex numbers from parts (ATen's UnaryOps.cpp, TensorFactories.cpp) -----

@meta("angle")
def angle_meta(self):
    """The argument: complex inputs give their real dtype, integers the default float."""
    d = self.dtype.to_real() if self.dtype.is_complex else float_type(self.dtype)
    return TensorMeta(self._shape, d, elementwise_strides(self._shape, (self,)))


@impl("angle")
@quiet
def angle_impl(out, self):
    """atan2(imag, real) for complex; for reals pi below zero, else 0 (nan stays nan)."""
    x = self._np()
    if self.dtype.is_complex:
        write(out, np.angle(x))
        return
    x = x.astype(out.dtype.opmath, copy=False)
    write(out, np.where(np.isnan(x), x, np.where(x < 0, np.pi, 0).astype(x.dtype)))


def _outputs_resized(outs, shape, stride):
    for out in outs:
        if out._shape != tuple(shape):
            _resize_out(out, shape, stride)


@kernel("frexp")
def frexp(self):
    """CompositeExplicitAutograd: the two outputs allocated, frexp.Tensor_out fills them."""
    stride = elementwise_strides(self._shape, (self,))
    mantissa = empty_tensor(self._shape, self.dtype, self.device, stride)
    exponent = empty_tensor(self._shape, dt.int32, self.device, stride)
    return aten.frexp.Tensor_out(self, mantissa=mantissa, exponent=exponent)


@kernel("frexp_out")
def frexp_out(self, *, mantissa, exponent):
    """self = mantissa * 2 ** exponent, |mantissa| in [0.5, 1); int32 exponents
    (numpy's frexp: inf and nan keep themselves with exponent 0)."""
    if not self.dtype.is_floating_point:
        raise RuntimeError("torch.frexp() only supports floating-point dtypes")
    if mantissa.dtype is not self.dtype:
        raise RuntimeError(f"torch.frexp() expects mantissa to have dtype "
                           f"{_c_name(self.dtype)} but got {_c_name(mantissa.dtype)}")
    if exponent.dtype is not dt.int32:
        raise RuntimeError(f"torch.frexp() expects exponent to have int dtype but got "
                           f"{_c_name(exponent.dtype)}")
    _outputs_resized((mantissa, exponent), self._shape, elementwise_strides(self._shape, (self,)))
    if not _on_meta(self, mantissa, exponent):
        m, e = np.frexp(self._np().astype(self.dtype.opmath, copy=False))
        write(mantissa, m)
        write(exponent, e)
    return mantissa, exponent


def _c_name(d):
    """c10's C++ type name (``float``, ``double``, ``c10::Half``, ``int``)."""
    return dt.type_meta_name(d)


def _complex_parts(first, second):
    """complex and polar take two Half/Float/Double tensors of one dtype."""
    floating = (dt.float16, dt.float32, dt.float64)
    if first.dtype not in floating or second.dtype not in floating:
        raise RuntimeError(f"Expected both inputs to be Half, Float or Double tensors but got "
                           f"{first.dtype._short} and {second.dtype._short}")
    if first.dtype is not second.dtype:
        raise RuntimeError(f"Expected object of scalar type {first.dtype._short} but got scalar "
                           f"type {second.dtype._short} for second argument")
    if first.dtype is dt.float16:      # its result would be complex32, which glasstorch lacks
        raise TypeError("complex32 (ComplexHalf) is not supported by glasstorch")
    shape = broadcast_shapes(first._shape, second._shape)
    return shape, elementwise_strides(shape, (first, second))


def _complex_kernels(name, parts):
    """The functional op (allocate, call the out= overload) and its out= overload."""
    @kernel(name)
    def functional(first, second):
        shape, stride = _complex_parts(first, second)
        out = empty_tensor(shape, first.dtype.to_complex(), first.device, stride)
        return getattr(aten, name).out(first, second, out=out)

    @kernel(f"{name}_out")
    def out_variant(first, second, *, out):
        shape, stride = _complex_parts(first, second)
        d = first.dtype.to_complex()
        if out.dtype is not d:
            raise RuntimeError(f"Expected object of scalar type {d._short} but got scalar type "
                               f"{out.dtype._short} for argument 'out'")
        _outputs_resized((out,), shape, stride)
        if not _on_meta(first, second, out):
            real, imag = parts(first._np(), second._np())
            o = out._np()
            o.real[...] = real
            o.imag[...] = imag
        return out
    functional.__name__, out_variant.__name__ = name, f"{name}_out"


_complex_kernels("complex", lambda real, imag: (real, imag))
_complex_kernels("polar", lambda r, theta: (r * np.cos(theta), r * np.sin(theta)))

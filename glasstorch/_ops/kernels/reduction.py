"""Reductions, scans and softmax: meta rules and numpy bodies (sorting: sorting.py).

A reduction folds the reduced dims of its input into one value per output
element (ATen's ReduceOps / TensorIterator in reduction mode):

    for each output index o:   out[o] = fold(f, [self[i] for i whose kept dims == o])

Note [reduction dims]
    ``dim`` arguments are lists (``int[1]? dim``): None — and for most ops the
    empty list — means "every dim"; negative dims wrap; a dim given twice is an
    error.  ``all.dims`` / ``any.dims`` are the exception: there ``[]`` reduces
    nothing.  A 0-d tensor accepts dim 0 / -1 and reduces to itself.

Note [reduction outputs]
    Reduction outputs are contiguous whatever the input's layout (PyTorch
    allocates them with ``resize_reduction``); so are scans and softmax.

Note [accumulation]
    Integer and bool sums/products give int64; float16/bfloat16 accumulate in
    float32 (``dtype.opmath``); var/std/norm accumulate in float64, as CPU
    PyTorch's Welford and norm kernels do (``acc_type<float>`` is double on CPU),
    then round once on write.

Also here: nansum / nanmean, the running extrema cummax / cummin, and the
backward ops of reductions, scans and softmax (value_selecting_reduction_backward,
cumprod_backward, _softmax_backward_data, _log_softmax_backward_data).
"""
from __future__ import annotations

import math
import warnings

import numpy as np

from ..._core import dispatch_key as dk, dtype as dt
from ..._core.tls import state as _tls
from ..._dispatcher.dispatcher import ops
from ..._tensor import is_tensor_subclass_like
from ..structured import sets_own_output, TensorMeta, wrap_dim
from . import impl, kernel, meta, native, norm_order, softmax_order
from ._common import _array, _check_same_dtype, _rounded, _sizes
from ._inner import inner, observed
from .cascade_sum import cascade_sum

aten = ops.aten

_INT64 = dt.int64
_BOOL = dt.bool_


# -- shared rules ------------------------------------------------------------------

def reduce_dims(self, dim):
    """The wrapped, checked dims a reduction folds (see Note [reduction dims])."""
    ndim = len(self._shape)
    if dim is None:
        return tuple(range(ndim))
    if isinstance(dim, int):
        dim = (dim,)
    if not dim:
        return tuple(range(ndim))
    seen = []
    for d in dim:
        w = wrap_dim(d, ndim)
        if w in seen:
            raise RuntimeError(f"dim {w} appears multiple times in the list of dims")
        seen.append(w)
    return tuple(seen) if ndim else ()


def reduced_shape(shape, dims, keepdim):
    if keepdim:
        return tuple(1 if i in dims else n for i, n in enumerate(shape))
    return tuple(n for i, n in enumerate(shape) if i not in dims)


def _axis(dims, ndim):
    """numpy's ``axis`` for the reduced dims (None: every dim, also for 0-d)."""
    return None if len(dims) == ndim else dims


def _as(a, np_dtype):
    return a if a.dtype == np_dtype else a.astype(np_dtype)


def _write(out, value):
    out._np()[...] = value


def _sum_dtype(self, dtype):
    """Result dtype of sum/prod/cumsum: ``dtype=``, else int64 for ints and bool."""
    if dtype is not None:
        return dtype
    return _INT64 if self.dtype.category <= dt.INTEGRAL else self.dtype


def _check_nonempty_dims(name, self, dims, sep="():"):
    """max/amax/argmax... have no identity: on an empty input every reduced dim
    (reported as spelled, e.g. -1) must have non-zero size (zero_numel_check_dims)."""
    shape = self._shape
    if 0 not in shape:
        return
    if not dims:
        raise RuntimeError(f"{name}{sep} Expected reduction dim to be specified for "
                           "input.numel() == 0. Specify the reduction dim with the 'dim' "
                           "argument.")
    for d in dims:
        if shape[wrap_dim(d, len(shape))] == 0:
            raise IndexError(f"{name}{sep} Expected reduction dim {d} to have non-zero size.")


def _not_implemented(kernel_name, dtype):
    return NotImplementedError(f'"{kernel_name}" not implemented for \'{dtype._short}\'')


def _float_for_compare(a):
    """Arrays numpy compares exactly as PyTorch does (bfloat16 via float32)."""
    if a.dtype.kind == "V" or a.dtype.name == "bfloat16":
        return a.astype(np.float32)
    return a


def _move_last(a, dim):
    return np.moveaxis(a, dim, -1) if a.ndim else a.reshape(1)


def _restore(a, dim, ndim):
    """Undo ``_move_last`` on a result with the same dims."""
    return np.moveaxis(a, -1, dim) if ndim else a.reshape(())


# -- sum, mean, prod ----------------------------------------------------------------

@meta("sum")
def sum_meta(self, dim=None, keepdim=False, *, dtype=None):
    if dim is None and not keepdim:          # lean path: torch.sum(x)
        return TensorMeta((), _sum_dtype(self, dtype))
    dims = reduce_dims(self, dim)
    return TensorMeta(reduced_shape(self._shape, dims, keepdim), _sum_dtype(self, dtype))


def _reduced_view(out, self, dim, keepdim):
    """The result seen with the reduced dims kept (``as_strided``, unless keepdim):
    what ATen's reductions dispatch first.  Only an observer needs it."""
    if not keepdim:
        dims = reduce_dims(self, dim)
        shape = reduced_shape(self._shape, dims, True)
        stride = list(out._stride)
        for d in dims:
            stride.insert(d, 0)
        inner.as_strided(out, shape, stride, out._offset)


def _reduction_start(out, self, dim, keepdim):
    """What ATen's CPU sum dispatches before reducing: the reduced view, then
    the result set to the identity (``fill_``; ``zero_`` for an empty input).
    The numpy reduction overwrites the result anyway."""
    _reduced_view(out, self, dim, keepdim)
    if self.numel() == 0:
        inner.zero_(out)
    else:
        inner.fill_(out, 0)


@impl("sum")
def sum_impl(out, self, dim=None, keepdim=False, *, dtype=None):
    if observed():
        _reduction_start(out, self, dim, keepdim)
    a = self._np()
    acc = out.dtype.opmath
    if out.dtype in _CASCADE and isinstance(a, np.ndarray) and a.dtype.kind != "c":
        # float32/float64: ATen's cascade sum, bit for bit (the input cast first,
        # as make_reduction_from_out_ty casts it)
        dims = tuple(range(a.ndim)) if dim is None else reduce_dims(self, dim)
        _cascade(out, self, a, acc, dims)
        return
    if a.dtype.kind != acc.kind:
        a = a.astype(acc)
    dims = reduce_dims(self, dim)
    _add_reduce(a, _axis(dims, a.ndim), acc, out._np(), keepdims=keepdim)


_add_reduce = np.add.reduce
_CASCADE = (dt.float32, dt.float64)


def _cascade(out, self, a, acc, dims, nan=False):
    """cascade_sum of ``self`` (its array ``a``) into ``out`` (through a contiguous
    buffer if ``out`` is not); ``self``'s address is known when no cast is needed."""
    address = self.data_ptr() if a.dtype == acc else None
    a = a.astype(acc, copy=False)
    target = out._np()
    if target.flags.c_contiguous:
        cascade_sum(a, target, dims, nan, address)
    else:
        result = np.empty(target.shape, target.dtype)
        cascade_sum(a, result, dims, nan, address)
        target[...] = result


def _mean_dtype(self, dtype):
    result = dtype if dtype is not None else self.dtype
    if result.category < dt.FLOATING:
        which = "Optional" if dtype is not None else "Input"
        raise RuntimeError(f"mean(): could not infer output dtype. {which} dtype must be either "
                           f"a floating point or complex dtype. Got: {result._short}")
    return result


@meta("mean")
def mean_meta(self, dim=None, keepdim=False, *, dtype=None):
    dims = reduce_dims(self, dim)
    return TensorMeta(reduced_shape(self._shape, dims, keepdim), _mean_dtype(self, dtype))


@impl("mean")
def mean_impl(out, self, dim=None, keepdim=False, *, dtype=None):
    """sum, then divided by the number of reduced elements, as ATen's CPU mean_out
    (float16/bfloat16: summed in float32, divided, then rounded)."""
    dims = reduce_dims(self, dim)
    count = math.prod(self._shape[d] for d in dims)
    if out.dtype in (dt.float32, dt.float64) and observed():
        # the two ops ATen's mean_out dispatches (the same cascade sum and division)
        ops.aten.sum.IntList_out(self, list(dims), keepdim, dtype=out.dtype, out=out)
        ops.aten.div_.Scalar(out, count)
        return
    a = self._np()
    acc = out.dtype.opmath
    if acc in (np.float32, np.float64) and isinstance(a, np.ndarray) and a.dtype.kind != "c":
        total = np.empty(out._np().shape, acc)
        cascade_sum(a.astype(acc, copy=False), total, dims,
                    address=self.data_ptr() if a.dtype == acc else None)
    else:
        total = np.sum(_as(a, acc), axis=_axis(dims, a.ndim), dtype=acc, keepdims=keepdim)
    with np.errstate(invalid="ignore", divide="ignore"):
        _write(out, total / acc.type(count))   # 0 / 0: the CPU's NaN, as ATen's div_


@meta("prod")
def prod_meta(self, dim=None, keepdim=False, *, dtype=None):
    dims = reduce_dims(self, dim)
    return TensorMeta(reduced_shape(self._shape, dims, keepdim), _sum_dtype(self, dtype))


@impl("prod")
def prod_impl(out, self, dim=None, keepdim=False, *, dtype=None):
    dims = reduce_dims(self, dim)
    a = self._np()
    acc = out.dtype.numpy
    if out.dtype in (dt.float16, dt.bfloat16):
        _write(out, _stepwise_prod(_as(a, acc), _axis(dims, a.ndim), keepdim))
        return
    _write(out, np.prod(_as(a, acc), axis=_axis(dims, a.ndim), dtype=acc, keepdims=keepdim))


def _stepwise_prod(a, axis, keepdim):
    """float16/bfloat16 prod rounds after every multiply, as PyTorch's CPU loop does
    (numpy's half reduction keeps a float32 accumulator instead)."""
    axes = tuple(range(a.ndim)) if axis is None else (axis if isinstance(axis, tuple) else (axis,))
    moved = np.moveaxis(a, axes, tuple(range(-len(axes), 0)))
    flat = moved.reshape(moved.shape[: moved.ndim - len(axes)] + (-1,))
    result = np.ones(flat.shape[:-1], a.dtype)
    for i in range(flat.shape[-1]):
        result = (result.astype(np.float32) * flat[..., i].astype(np.float32)).astype(a.dtype)
    if keepdim:
        result = np.expand_dims(result, axes)
    return result


# -- max / min / amax / amin / argmax / argmin / aminmax -------------------------------

def _extremum_all_meta(name):
    def rule(self):
        if self.numel() == 0:
            raise RuntimeError(f"{name}(): Expected reduction dim to be specified for "
                               "input.numel() == 0. Specify the reduction dim with the 'dim' "
                               "argument.")
        if self.dtype.is_complex:
            raise _not_implemented(f"{name}_all", self.dtype)
        return TensorMeta((), self.dtype)
    return rule


meta("max_all")(_extremum_all_meta("max"))
meta("min_all")(_extremum_all_meta("min"))
impl("max_all")(lambda out, self: _write(out, np.max(self._np())))
impl("min_all")(lambda out, self: _write(out, np.min(self._np())))


def _extremum_dim_meta(name):
    def rule(self, dim, keepdim=False):
        if self.dtype.is_complex:
            raise RuntimeError(f"{name}(): does not support complex input")
        d = wrap_dim(dim, len(self._shape))
        _check_nonempty_dims(name, self, [d])
        shape = reduced_shape(self._shape, (d,) if self._shape else (), keepdim)
        return TensorMeta(shape, self.dtype), TensorMeta(shape, _INT64)
    return rule


def _extremum_dim_impl(arg):
    def body(outs, self, dim, keepdim=False):
        values, indices = outs
        a = self._np()
        if a.ndim == 0:
            _write(values, a)
            _write(indices, 0)
            return
        d = wrap_dim(dim, a.ndim)
        index = np.expand_dims(arg(_float_for_compare(a), axis=d), d)
        picked = np.take_along_axis(a, index, axis=d)
        if not keepdim:
            index, picked = index.squeeze(d), picked.squeeze(d)
        _write(values, picked)
        _write(indices, index)
    return body


meta("max_dim")(_extremum_dim_meta("max"))
meta("min_dim")(_extremum_dim_meta("min"))
impl("max_dim")(_extremum_dim_impl(np.argmax))      # first occurrence; NaN wins
impl("min_dim")(_extremum_dim_impl(np.argmin))


def _amax_meta(name):
    def rule(self, dim=(), keepdim=False):
        _check_nonempty_dims(name, self, dim)      # before the duplicate-dims check, as ATen
        dims = reduce_dims(self, dim)
        if self.dtype.is_complex and self.numel():
            raise _not_implemented(f"{name[1:]}_values_cpu", self.dtype)
        return TensorMeta(reduced_shape(self._shape, dims, keepdim), self.dtype)
    return rule


def _amax_impl(fn):
    def body(out, self, dim=(), keepdim=False):
        dims = reduce_dims(self, dim)
        a = self._np()
        _write(out, fn(a, axis=_axis(dims, a.ndim), keepdims=keepdim))
    return body


meta("amax")(_amax_meta("amax"))
meta("amin")(_amax_meta("amin"))
impl("amax")(_amax_impl(np.max))
impl("amin")(_amax_impl(np.min))


def _arg_meta(name):
    def rule(self, dim=None, keepdim=False):
        if self.dtype.is_complex:
            raise RuntimeError(f"{name}(): does not support complex input")
        if self.dtype is _BOOL:
            raise RuntimeError(f"{name}(): does not support bool input")
        if dim is None:
            if self.numel() == 0:
                raise IndexError(f"{name}(): Expected reduction dim to be specified for "
                                 "input.numel() == 0.")
            shape = (1,) * len(self._shape) if keepdim else ()
            return TensorMeta(shape, _INT64)
        d = wrap_dim(dim, len(self._shape))
        _check_nonempty_dims(name, self, [d])
        return TensorMeta(reduced_shape(self._shape, (d,) if self._shape else (), keepdim),
                          _INT64)
    return rule


def _arg_impl(fn):
    def body(out, self, dim=None, keepdim=False):
        a = _float_for_compare(self._np())
        if dim is None:
            _write(out, fn(a.reshape(-1)))
        elif a.ndim == 0:
            _write(out, 0)
        else:
            _write(out, fn(a, axis=wrap_dim(dim, a.ndim), keepdims=keepdim))
    return body


meta("argmax")(_arg_meta("argmax"))
meta("argmin")(_arg_meta("argmin"))
impl("argmax")(_arg_impl(np.argmax))
impl("argmin")(_arg_impl(np.argmin))


@meta("aminmax")
def aminmax_meta(self, *, dim=None, keepdim=False):
    if dim is None:
        if self.numel() == 0:
            raise RuntimeError("aminmax(): cannot compute aminmax over an empty dimension as the "
                               "operation has no identity.")
        shape = (1,) * len(self._shape) if keepdim else ()
    else:
        d = wrap_dim(dim, len(self._shape))
        _check_nonempty_dims("aminmax", self, [d], sep=":")
        shape = reduced_shape(self._shape, (d,) if self._shape else (), keepdim)
    if self.dtype.is_complex:
        raise _not_implemented("aminmax_cpu", self.dtype)
    return TensorMeta(shape, self.dtype), TensorMeta(shape, self.dtype)


@impl("aminmax")
def aminmax_impl(outs, self, *, dim=None, keepdim=False):
    a = self._np()
    axis = None if dim is None or a.ndim == 0 else wrap_dim(dim, a.ndim)
    keep = keepdim and a.ndim > 0
    _write(outs[0], np.min(a, axis=axis, keepdims=keep))
    _write(outs[1], np.max(a, axis=axis, keepdims=keep))


# -- hash_tensor -------------------------------------------------------------------------

class _HashMeta(TensorMeta):
    """hash_tensor's result: an ``out=`` tensor must be uint64."""

    __slots__ = ()

    def check_out(self, out_dtype):
        if out_dtype is not self.dtype:
            raise RuntimeError(f"Expected result to be of dtype uint64, but got {out_dtype._short}")


@meta("hash_tensor")
def hash_tensor_meta(self, dim=(), *, keepdim=False, mode=0):
    _check_nonempty_dims("hash_tensor", self, dim, sep=":")
    dims = reduce_dims(self, dim)
    return _HashMeta(reduced_shape(self._shape, dims, keepdim), dt.uint64)


@impl("hash_tensor")
def hash_tensor_impl(out, self, dim=(), *, keepdim=False, mode=0):
    """``torch.hash_tensor``, mode 0 (ATen's xor_sum): each element widened to its
    64-bit float or integer type, its bits read as uint64, then xor-reduced."""
    if mode != 0:
        raise RuntimeError(f"Unknown hash_tensor mode: {mode}")
    if self.dtype.is_complex or self.dtype in dt.BAREBONES_UNSIGNED:
        raise _not_implemented("xor_sum_cpu", self.dtype)
    a = self._np()
    if self.dtype.is_floating_point:
        bits = a.astype(np.float64).view(np.uint64)
    elif self.dtype.is_signed:
        bits = a.astype(np.int64).view(np.uint64)
    else:                                       # bool and uint8 zero-extend
        bits = a.astype(np.uint64)
    dims = reduce_dims(self, dim)
    _write(out, np.bitwise_xor.reduce(bits, axis=_axis(dims, a.ndim), keepdims=keepdim))


# -- var / std / var_mean / std_mean ------------------------------------------------------

def _var_check(self, dim, name):
    if self.dtype.category < dt.FLOATING:
        raise RuntimeError(f"{name} only support floating point and complex dtypes")
    return reduce_dims(self, dim)


def _var_meta(with_mean, name):
    def rule(self, dim=None, *, correction=None, keepdim=False):
        dims = _var_check(self, dim, name)
        shape = reduced_shape(self._shape, dims, keepdim)
        var = TensorMeta(shape, self.dtype.to_real())
        return (var, TensorMeta(shape, self.dtype)) if with_mean else var
    return rule


def _moments(self, dim, correction, keepdim, name):
    """(var, mean) in float64/complex128, PyTorch's ``max(0, n - correction)`` divisor."""
    dims = reduce_dims(self, dim)
    a = self._np()
    acc = np.complex128 if self.dtype.is_complex else np.float64
    a = _as(a, acc)
    axis = _axis(dims, a.ndim)
    n = math.prod(self._shape[d] for d in dims)
    c = 1 if correction is None else correction
    if n - c <= 0:
        warnings.warn(f"{name}(): degrees of freedom is <= 0. Correction should be strictly less "
                      "than the reduction factor (input numel divided by output numel).",
                      UserWarning, stacklevel=6)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = np.sum(a, axis=axis, keepdims=True) / n if n else \
            np.full(reduced_shape(a.shape, dims, True), np.nan, acc)
        dev = a - mean
        sq = (dev.real ** 2 + dev.imag ** 2) if self.dtype.is_complex else dev * dev
        var = np.sum(sq, axis=axis, keepdims=keepdim) / max(0, n - c)
    if not keepdim:
        mean = mean.reshape(var.shape)
    return var, mean


meta("var")(_var_meta(False, "std and var"))
meta("var_mean")(_var_meta(True, "var_mean"))


@impl("var")
def var_impl(out, self, dim=None, *, correction=None, keepdim=False):
    _write(out, _moments(self, dim, correction, keepdim, "var")[0])


@impl("var_mean")
def var_mean_impl(outs, self, dim=None, *, correction=None, keepdim=False):
    var, mean = _moments(self, dim, correction, keepdim, "var_mean")
    _write(outs[0], var)
    _write(outs[1], mean)


meta("std")(_var_meta(False, "std and var"))
meta("std_mean")(_var_meta(True, "std_mean"))


@impl("std")
def std_impl(out, self, dim=None, *, correction=None, keepdim=False):
    _write(out, np.sqrt(_moments(self, dim, correction, keepdim, "std")[0]))


@impl("std_mean")
def std_mean_impl(outs, self, dim=None, *, correction=None, keepdim=False):
    var, mean = _moments(self, dim, correction, keepdim, "std_mean")
    _write(outs[0], np.sqrt(var))
    _write(outs[1], mean)


def _unbiased_to_correction(name):
    """``var(x, unbiased)`` / ``var(x, dim, unbiased, keepdim)`` are var.correction."""
    def default(self, unbiased=True):
        return getattr(ops.aten, name).correction(self, None, correction=1 if unbiased else 0)

    def with_dim(self, dim, unbiased=True, keepdim=False):
        return getattr(ops.aten, name).correction(self, dim, correction=1 if unbiased else 0,
                                                  keepdim=keepdim)
    kernel(f"{name}_unbiased")(default)
    kernel(f"{name}_dim_unbiased")(with_dim)


for _name in ("var", "std", "var_mean", "std_mean"):
    _unbiased_to_correction(_name)


# -- norms ------------------------------------------------------------------------

def check_linalg_norm_dtype(fn_name, self_dtype, dtype):
    """ATen's check_linalg_norm_dtype: a norm's ``dtype=`` is floating or complex
    as the input is, and the input converts to it without narrowing."""
    if dtype is None:
        return
    if dtype.category < dt.FLOATING:
        raise RuntimeError(f"{fn_name}: dtype should be floating point or complex, but got "
                           f"{dtype._short}")
    if self_dtype.is_complex != dtype.is_complex:
        kind = "complex" if self_dtype.is_complex else "real"
        raise RuntimeError(f"{fn_name}: dtype should be {kind} for {kind} inputs, but got "
                           f"{dtype._short}")
    if dt.promote_types(self_dtype, dtype) != dtype:
        raise RuntimeError(f"{fn_name}: the dtype of the input ({self_dtype._short}) should be "
                           f"convertible without narrowing to the specified dtype "
                           f"({dtype._short})")


@meta("linalg_vector_norm")
def vector_norm_meta(self, ord=2, dim=None, keepdim=False, *, dtype=None):
    if self.dtype.category < dt.FLOATING:
        raise RuntimeError("linalg.vector_norm: Expected a floating point or complex tensor as "
                           f"input. Got {self.dtype._short}")
    check_linalg_norm_dtype("linalg.vector_norm", self.dtype, dtype)
    dims = reduce_dims(self, dim)
    if (ord < 0 or ord == math.inf) and self.numel() == 0:
        text = _format_ord(ord)
        if not dim:
            raise RuntimeError(f"linalg.vector_norm cannot compute the {text} norm on an empty "
                               "tensor because the operation does not have an identity")
        for d in dim:
            if self._shape[wrap_dim(d, len(self._shape))] == 0:
                raise RuntimeError(f"linalg.vector_norm cannot compute the {text} norm on the "
                                   f"dimension {d}because this dimension is empty and the "
                                   "operation does not have an identity")
    out_dtype = (dtype or self.dtype).to_real()
    return TensorMeta(reduced_shape(self._shape, dims, keepdim), out_dtype)


def _format_ord(ord):
    if math.isinf(ord):
        return "inf" if ord > 0 else "-inf"
    return str(int(ord)) if float(ord).is_integer() else repr(float(ord))


@impl("linalg_vector_norm")
def vector_norm_impl(out, self, ord=2, dim=None, keepdim=False, *, dtype=None):
    if observed():   # the reduced view; an empty input's result is filled with 0
        _reduced_view(out, self, dim, keepdim)
        if self.numel() == 0:
            inner.fill_(out, 0)
    dims = reduce_dims(self, dim)
    if out.dtype is self.dtype:
        ordered = norm_order.vector_norm(self._np(), ord, dims, keepdim)
        if ordered is not None:     # float32/float64 1- and 2-norms: ATen's order
            _write(out, ordered)
            return
    a = np.abs(_as(self._np(), np.complex128 if self.dtype.is_complex else np.float64))
    axis = _axis(dims, a.ndim)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        if ord == math.inf:
            r = np.max(a, axis=axis, keepdims=keepdim)
        elif ord == -math.inf:
            r = np.min(a, axis=axis, keepdims=keepdim)
        elif ord == 0:
            r = np.sum(a != 0, axis=axis, keepdims=keepdim, dtype=np.float64)
        elif ord == 1:
            r = np.sum(a, axis=axis, keepdims=keepdim)
        elif ord == 2:
            r = np.sqrt(np.sum(a * a, axis=axis, keepdims=keepdim))
        else:
            r = np.sum(a ** ord, axis=axis, keepdims=keepdim) ** (1.0 / ord)
    _write(out, r)


def _norm_check(self, dtype=None):
    if self.dtype.category < dt.FLOATING:
        raise RuntimeError("norm(): input dtype should be either floating point or complex. "
                           f"Got {self.dtype._short} instead.")
    if dtype is not None and dtype.category < dt.FLOATING:
        raise RuntimeError("norm(): the desired output dtype should be either floating point "
                           f"or complex. Got {dtype._short} instead.")


@meta("norm")
def norm_meta(self, p=2, dim=None, keepdim=False, *, dtype=None):
    _norm_check(self, dtype)
    return vector_norm_meta(self, 2 if p is None else p, dim, keepdim, dtype=dtype)


@impl("norm")
def norm_impl(out, self, p=2, dim=None, keepdim=False, *, dtype=None):
    vector_norm_impl(out, self, 2 if p is None else p, dim, keepdim, dtype=dtype)


# norm's overloads all reach the one rule above (argument order differs).
@meta("norm_dtype")
def norm_dtype_meta(self, p, *, dtype):
    return norm_meta(self, p, None, False, dtype=dtype)


@impl("norm_dtype")
def norm_dtype_impl(out, self, p, *, dtype):
    norm_impl(out, self, p, None, False, dtype=dtype)


# -- logsumexp -----------------------------------------------------------------------

@meta("logsumexp")
def logsumexp_meta(self, dim, keepdim=False):
    dims = reduce_dims(self, dim)
    if len(dim) == 0 and self._shape and not keepdim:
        # PyTorch resizes a [] output, then broadcasts a keepdim result into it.
        raise RuntimeError(f"output with shape [] doesn't match the broadcast shape "
                           f"{[1] * len(self._shape)}")
    out_dtype = self.dtype if self.dtype.category >= dt.FLOATING else dt.get_default_dtype()
    return TensorMeta(reduced_shape(self._shape, dims, keepdim), out_dtype)


@impl("logsumexp")
def logsumexp_impl(out, self, dim, keepdim=False):
    """ATen's composition (ReduceOps.cpp's logsumexp_out_impl): the amax of the
    real part (an infinite one read as 0), then sub, exp, sum, log and add, each
    a separate op whose result is stored in the result dtype (float16/bfloat16
    round after every step; the sum accumulates in float32, in cascade order;
    their exp and log are SLEEF's, float32/float64 take MKL's, CPU-dependent)."""
    dims = reduce_dims(self, dim)
    dtype = out.dtype
    acc = dtype.opmath
    reduced = dtype in (dt.float16, dt.bfloat16)
    exp = softmax_order.exp_rows if reduced else np.exp
    log = softmax_order.log_rows if reduced else np.log
    a = _as(self._np(), acc)
    axis = _axis(dims, a.ndim)
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        if a.size == 0:
            _write(out, np.log(np.sum(np.exp(a), axis=axis, keepdims=keepdim)))
            return
        m = np.max(a.real if a.dtype.kind == "c" else a, axis=axis, keepdims=True)
        m = np.where(np.isinf(m), 0, m).astype(acc)
        terms = np.ascontiguousarray(_rounded(exp(_rounded(a - m, dtype)), dtype))
        if terms.dtype.kind == "c":
            total = np.sum(terms, axis=axis, keepdims=True)
        else:
            total = np.empty(m.shape, acc)
            cascade_sum(terms, total, dims)
        s = _rounded(_rounded(log(_rounded(total, dtype)), dtype) + m, dtype)
    _write(out, s if keepdim else s.reshape(out._shape))


# -- scans ------------------------------------------------------------------------

class _ScanMeta(TensorMeta):
    """cumsum/cumprod's result (meta_func_cum_ops): a fresh one has the ``dtype``
    argument or sum's dtype; one written into an existing tensor (out=, self in
    place) has the ``dtype`` argument or else that tensor's own dtype."""

    __slots__ = ("requested",)

    def __init__(self, shape, dtype, requested):
        super().__init__(shape, dtype)
        self.requested = requested

    def into_existing(self, existing_dtype):
        return _ExactOutMeta(self.shape, self.requested or existing_dtype)


class _ExactOutMeta(TensorMeta):
    """A result whose ``out=`` tensor must have exactly its dtype (resize_out's check
    in a structured kernel that sets its own output)."""

    __slots__ = ()

    def check_out(self, out_dtype):
        if out_dtype is not self.dtype:
            raise RuntimeError(f"Expected out tensor to have dtype {dt.type_meta_name(self.dtype)}"
                               f", but got {dt.type_meta_name(out_dtype)} instead")


@sets_own_output
def _scan_meta(self, dim, *, dtype=None):
    wrap_dim(dim, len(self._shape))
    return _ScanMeta(self._shape, _sum_dtype(self, dtype), dtype)


def _scan_impl(fn):
    def body(out, self, dim, *, dtype=None):
        a = self._np()
        acc = out.dtype.opmath
        if a.ndim == 0:
            _write(out, a)
            return
        if out.dtype is dt.bool_ and a.size:    # ATen's scan kernels take numbers, not Bool
            raise _not_implemented(f"{fn.__name__}_out_cpu", out.dtype)
        _write(out, fn(_as(a, acc), axis=wrap_dim(dim, a.ndim), dtype=acc))
    return body


meta("cumsum")(_scan_meta)
meta("cumprod")(_scan_meta)
impl("cumsum")(_scan_impl(np.cumsum))
impl("cumprod")(_scan_impl(np.cumprod))


# -- all / any / count_nonzero ---------------------------------------------------------

def _logical_kernels(name, fn, empty_list_reduces):
    """all / any.  ``all.dims(x, [])`` reduces nothing (Note [reduction dims])."""
    def dims_of(self, dim):
        if not empty_list_reduces and dim is not None and len(dim) == 0:
            return ()
        return reduce_dims(self, dim)

    @meta(name)
    def rule(self, dim=None, keepdim=False):
        out_dtype = dt.uint8 if self.dtype is dt.uint8 else _BOOL
        return TensorMeta(reduced_shape(self._shape, dims_of(self, dim), keepdim), out_dtype)

    @impl(name)
    def body(out, self, dim=None, keepdim=False):
        dims = dims_of(self, dim)
        a = self._np()
        if not dims:
            _write(out, a != 0)
            return
        _write(out, fn(a != 0, axis=_axis(dims, a.ndim), keepdims=keepdim))


_logical_kernels("all", np.all, True)
_logical_kernels("any", np.any, True)
_logical_kernels("all_dims", np.all, False)
_logical_kernels("any_dims", np.any, False)


@meta("count_nonzero")
def count_nonzero_meta(self, dim=None):
    dims = reduce_dims(self, dim)
    return TensorMeta(reduced_shape(self._shape, dims, False), _INT64)


@impl("count_nonzero")
def count_nonzero_impl(out, self, dim=None):
    dims = reduce_dims(self, dim)
    a = self._np()
    _write(out, np.sum(a != 0, axis=_axis(dims, a.ndim), dtype=np.int64))


# -- softmax ------------------------------------------------------------------------

def _softmax_meta(name):
    def rule(self, dim, half_to_float):
        d = wrap_dim(dim, len(self._shape))
        if half_to_float:
            raise RuntimeError(f"{name} with half to float conversion is not supported on CPU")
        if self.dtype.category != dt.FLOATING and self.numel():
            where = "lastdim_" if d == len(self._shape) - 1 or not self._shape else ""
            raise _not_implemented(f"{name}_{where}kernel_impl", self.dtype)
        return TensorMeta(self._shape, self.dtype)
    return rule


def _softmax_parts(self, dim):
    a = _as(self._np(), self.dtype.opmath)
    if a.ndim == 0:
        a = a.reshape(1)
    d = wrap_dim(dim, self._np().ndim) if self._shape else 0
    with np.errstate(invalid="ignore", over="ignore"):
        shifted = a - (np.max(a, axis=d, keepdims=True) if a.size else 0)
        e = np.exp(shifted)
        return shifted, e, np.sum(e, axis=d, keepdims=True)


meta("softmax")(_softmax_meta("softmax"))
meta("log_softmax")(_softmax_meta("log_softmax"))


def _lastdim_softmax(out, self, dim, log) -> bool:
    """float32 rows along the last dim: ATen's lastdim kernel, bit for bit
    (kernels/softmax_order.py)."""
    if self.dtype is not dt.float32 or (self._shape and
                                        wrap_dim(dim, len(self._shape)) != len(self._shape) - 1):
        return False
    if self.numel() == 0:
        return True
    a = np.ascontiguousarray(self._np())
    cols = a.shape[-1] if a.ndim else 1
    rows = a.reshape(-1, cols)
    o = out._np()
    if o.flags.c_contiguous:      # written in place
        softmax_order.softmax_rows(rows, log, o.reshape(-1, cols))
    else:
        _write(out, softmax_order.softmax_rows(rows, log).reshape(out._shape))
    return True


@impl("softmax")
def softmax_impl(out, self, dim, half_to_float):
    if _lastdim_softmax(out, self, dim, log=False):
        return
    _, e, total = _softmax_parts(self, dim)
    with np.errstate(invalid="ignore", divide="ignore"):
        _write(out, (e / total).reshape(self._shape))


def _log_softmax_reduced(out, self, dim) -> bool:
    """float16/bfloat16 log_softmax in float32 with SLEEF's exp and log.  Along the
    last dim ATen's lastdim kernel keeps each row's sum of exp(x - max) and its
    log in scalar_t buffers (both rounded to the dtype); along another dim the
    sums stay float32, added in the dim's order.  Then ``x - max - log(sum)``."""
    if self.dtype not in (dt.float16, dt.bfloat16):
        return False
    if self.numel() == 0:
        return True
    last = not self._shape or wrap_dim(dim, len(self._shape)) == len(self._shape) - 1
    x = self._np().astype(np.float32)
    x = x.reshape(-1, self._shape[-1] if self._shape else 1) if last else \
        np.moveaxis(x, wrap_dim(dim, x.ndim), 0)
    with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
        shifted = x - x.max(axis=1 if last else 0, keepdims=True)
        e = softmax_order.exp_rows(shifted)
        if last:
            total = _rounded(softmax_order.row_sums(e), self.dtype)[:, None]
            log_total = _rounded(softmax_order.log_rows(total), self.dtype)
            _write(out, (shifted - log_total).reshape(self._shape))
        else:
            log_total = softmax_order.log_rows(np.add.reduce(e, axis=0, keepdims=True))
            _write(out, np.moveaxis(shifted - log_total, 0, wrap_dim(dim, x.ndim)))
    return True


@impl("log_softmax")
def log_softmax_impl(out, self, dim, half_to_float):
    if _lastdim_softmax(out, self, dim, log=True) or _log_softmax_reduced(out, self, dim):
        return
    shifted, _, total = _softmax_parts(self, dim)
    with np.errstate(invalid="ignore", divide="ignore"):
        _write(out, (shifted - np.log(total)).reshape(self._shape))


def _convert(self, dtype):
    """ATen's ``input.toType(dtype)`` when a dtype is given: ``to`` (which
    returns ``self`` when it already has that dtype)."""
    return self if dtype is None else ops.aten.to.dtype(self, dtype)


@kernel("softmax_int")
def softmax_int(self, dim, dtype=None):
    return ops.aten._softmax.default(_convert(self, dtype), dim, False)


@kernel("log_softmax_int")
def log_softmax_int(self, dim, dtype=None):
    return ops.aten._log_softmax.default(_convert(self, dtype), dim, False)


# -- max.other / min.other (binary: maximum / minimum) -----------------------------------

@kernel("max_other")
def max_other(self, other):
    return ops.aten.maximum.default(self, other)


@kernel("min_other")
def min_other(self, other):
    return ops.aten.minimum.default(self, other)


# -- NaN-ignoring reductions: nansum, nanmean ----------------------------------------------

meta("nansum")(sum_meta)


@impl("nansum")
def nansum_impl(out, self, dim=None, keepdim=False, *, dtype=None):
    """sum with NaNs counted as zero (integer inputs have none: a plain sum)."""
    if self.dtype.category == dt.COMPLEX:
        raise RuntimeError("nansum on CPU does not support complex inputs")
    acc = out.dtype.opmath
    if out.dtype in (dt.float32, dt.float64) and isinstance(self._np(), np.ndarray):
        _cascade(out, self, self._np(), acc, reduce_dims(self, dim), nan=True)   # ATen's order
        return
    a = self._np().astype(acc, copy=False)
    if acc.kind in "fc":
        a = np.where(np.isnan(a), acc.type(0), a)
    dims = reduce_dims(self, dim)
    axis = None if len(dims) == a.ndim else dims
    out._np()[...] = np.add.reduce(a, axis=axis, dtype=acc, keepdims=keepdim)


@kernel("nanmean")
def nanmean(self, dim=None, keepdim=False, *, dtype=None):
    """nansum / (number of non-NaN elements), over the same dims."""
    if self.dtype.category < dt.FLOATING:
        raise RuntimeError(f"nanmean(): expected input to have floating point or complex dtype "
                           f"but got {self.dtype._short}")
    values = aten.detach.default(self)
    counted = aten.logical_not_.default(aten.ne.Tensor(values, values))
    count = aten.sum.dim_IntList(counted, dim, keepdim)
    return aten.div.Tensor(aten.nansum.default(self, dim, keepdim, dtype=dtype), count)


# -- running extrema: cummax, cummin -------------------------------------------------------

def _running_extremum(name, accumulate):
    @meta(name)
    def extremum_meta(self, dim):
        wrap_dim(dim, len(self._shape))
        if self.dtype.category == dt.COMPLEX:
            raise _not_implemented(f"{name}_cpu", self.dtype)
        return (TensorMeta(self._shape, self.dtype), TensorMeta(self._shape, dt.int64))

    @impl(name)
    def extremum_impl(outs, self, dim):
        """values[i] = extremum of x[..i]; indices[i] = the last position where the
        running extremum was taken (ties move it forward; NaN, once seen, stays)."""
        values, indices = outs
        if not self._shape:
            values._np()[...] = self._np()
            indices._np()[...] = 0
            return
        axis = wrap_dim(dim, len(self._shape))
        x = self._np()
        if x.dtype.name == "bfloat16":
            x = x.astype(np.float32)
        running = accumulate(x, axis=axis)
        taken = running == x
        if x.dtype.kind in "fc":
            taken |= np.isnan(x)
        positions = np.arange(x.shape[axis]).reshape([-1] + [1] * (x.ndim - axis - 1))
        values._np()[...] = running
        indices._np()[...] = np.maximum.accumulate(np.where(taken, positions, 0), axis=axis)
    extremum_meta.__name__, extremum_impl.__name__ = f"{name}_meta", f"{name}_impl"


_running_extremum("cummax", np.maximum.accumulate)
_running_extremum("cummin", np.minimum.accumulate)


@kernel("cummaxmin_backward")
def cummaxmin_backward(grad, input, indices, dim):
    """Each gradient goes to the input element its running extremum came from."""
    if input.numel() == 0:
        return input
    zeros = aten.zeros.default(list(input._shape), dtype=input.dtype, layout=input.layout,
                               device=input.device)
    return aten.scatter_add.default(zeros, dim, indices, grad)


# -- softmax's backward ops ----------------------------------------------------------------

def _softmax_backward_meta(grad_output, output, dim, input_dtype):
    _check_same_dtype(grad_output, output)
    wrap_dim(dim, len(grad_output._shape))
    if tuple(grad_output._shape) != tuple(output._shape):
        raise RuntimeError(f"grad_output and output must have the same shape, got "
                           f"{_sizes(grad_output._shape)} and {_sizes(output._shape)}")
    if input_dtype is dt.float16 and grad_output.dtype is dt.float32:
        # half_to_float: only the CUDA kernels take a float gradient for a half input
        raise RuntimeError("expected scalar type Float but found Half")
    return TensorMeta(grad_output._shape, grad_output.dtype)


meta("_softmax_backward_data")(_softmax_backward_meta)
meta("_log_softmax_backward_data")(_softmax_backward_meta)


def _softmax_operands(out, grad_output, output, dim):
    compute = out.dtype.opmath
    g, y = _array(grad_output, compute), _array(output, compute)
    axis = wrap_dim(dim, g.ndim) if g.ndim else None
    return g, y, axis


def _lastdim_backward(out, grad_output, output, dim, log) -> bool:
    """float32 rows along the last dim: ATen's lastdim kernel, bit for bit
    (kernels/softmax_order.py)."""
    if out.dtype is not dt.float32 or grad_output.dtype is not dt.float32 or (
            grad_output._shape and wrap_dim(dim, len(grad_output._shape))
            != len(grad_output._shape) - 1):
        return False
    if out.numel() == 0:
        return True
    cols = grad_output._shape[-1] if grad_output._shape else 1
    g, y = (np.ascontiguousarray(t._np()).reshape(-1, cols) for t in (grad_output, output))
    _write(out, softmax_order.softmax_backward_rows(g, y, log).reshape(out._shape))
    return True


@impl("_softmax_backward_data")
def softmax_backward_data_impl(out, grad_output, output, dim, input_dtype):
    if _lastdim_backward(out, grad_output, output, dim, log=False):
        return
    g, y, axis = _softmax_operands(out, grad_output, output, dim)
    _write(out, y * (g - np.sum(g * y, axis=axis, keepdims=True)))


@impl("_log_softmax_backward_data")
def log_softmax_backward_data_impl(out, grad_output, output, dim, input_dtype):
    if _lastdim_backward(out, grad_output, output, dim, log=True):
        return
    g, y, axis = _softmax_operands(out, grad_output, output, dim)
    with np.errstate(over="ignore", invalid="ignore"):
        _write(out, g - np.exp(y) * np.sum(g, axis=axis, keepdims=True))


# -- backward ops of reductions and scans (CompositeImplicitAutograd: their gradients come from the ops they call) ---

@kernel("value_selecting_reduction_backward")
def value_selecting_reduction_backward(grad, dim, indices, sizes, keepdim):
    """Only the selected elements get a gradient: ``grad`` is scattered into
    zeros of the input's ``sizes`` at ``indices`` (along ``dim``)."""
    if not keepdim and sizes:
        dim = wrap_dim(dim, len(sizes))
        indices = aten.unsqueeze.default(indices, dim)
        grad = aten.unsqueeze.default(grad, dim)
    grad_in = aten.zeros.default(list(sizes), dtype=grad.dtype, device=grad.device)
    if is_tensor_subclass_like(grad) or is_tensor_subclass_like(indices):
        return aten.scatter.src(grad_in, dim, indices, grad)    # (a batched grad: out of place)
    return aten.scatter_.src(grad_in, dim, indices, grad)


def _conj(t):
    return aten.conj.default(t) if t.dtype.is_complex else t


def _reversed_cumsum(t, dim):
    return aten.flip.default(aten.cumsum.default(aten.flip.default(t, [dim]), dim), [dim])


@kernel("cumprod_backward")
def cumprod_backward(grad, input, dim, output):
    """Gradient of y = cumprod(x) along ``dim``: dF/dx_k = sum_{j>=k} g_j dy_j/dx_k,
    where dy_j/dx_k is the product of x_1..x_j without x_k.

    * No zero in x: dy_j/dx_k = y_j / x_k, so the gradient is a reversed
      cumsum of y*g divided by x.
    * Zeros, no graph to build: before the first zero z1 the same formula
      holds (the y_j / x_k terms for j >= z1 vanish); at z1 the gradient is
      prod(x before z1) * sum over z1 <= j < z2 of g_j * prod(x_{z1+1..j});
      after z1 it is 0.  That formula's own derivative is not cumprod's second
      derivative, so
    * zeros with grad mode on (double backward) use the products with x_k
      omitted directly, one position k at a time.
    Meta tensors and ``__torch_dispatch__`` subclasses (FakeTensor) have no
    values to read: they take the data-independent paths.
    """
    if input.numel() <= 1:
        return grad
    dim = wrap_dim(dim, input.dim())
    size = input.shape[dim]
    if size == 1:
        return grad
    input_conj, output_conj = _conj(input), _conj(output)
    w = aten.mul.Tensor(output_conj, grad)
    is_zero = aten.eq.Scalar(input, 0)
    if input.device.type != "meta" and not input._keys & dk.PYTHON and \
            not aten.any.default(is_zero).item():
        return aten.div.Tensor(_reversed_cumsum(w, dim), input_conj)
    if not _tls.grad_enabled:
        grad_input = aten.zeros.default(list(input.shape), dtype=grad.dtype, device=grad.device)
        zeros_before = aten.cumsum.default(is_zero, dim)
        # k < z1
        mask = aten.eq.Scalar(zeros_before, 0)
        before = aten.div.Tensor(
            _reversed_cumsum(aten.masked_fill.Scalar(w, aten.bitwise_not.default(mask), 0), dim),
            input_conj)
        grad_input = aten.where.self(mask, before, grad_input)
        # k = z1: its mask, then the elements strictly between z1 and z2
        mask = aten.eq.Scalar(zeros_before, 1)
        first_zero_index = aten.max.dim(mask, dim, True)[1]
        first_zero_mask = aten.logical_and_.default(
            aten.scatter_.value(aten.zeros_like.default(mask), dim, first_zero_index, 1), mask)
        aten.bitwise_and_.Tensor(mask, aten.bitwise_not.default(first_zero_mask))
        between = aten.cumprod.default(
            aten.masked_fill.Scalar(input_conj, aten.bitwise_not.default(mask), 1), dim)
        grad_between = aten.masked_fill.Scalar(grad, aten.ne.Scalar(zeros_before, 1), 0)
        prod_before = aten.masked_fill_.Scalar(
            aten.gather.default(output_conj, dim,
                                aten.relu_.default(aten.sub.Scalar(first_zero_index, 1))),
            aten.eq.Scalar(first_zero_index, 0), 1)
        at_zero = aten.mul.Tensor(
            aten.sum.dim_IntList(aten.mul.Tensor(between, grad_between), [dim], True), prod_before)
        return aten.where.self(first_zero_mask, at_zero, grad_input)
    grad_input = aten.zeros.default(list(input.shape), dtype=grad.dtype, device=grad.device)
    ones_size = list(input.shape)
    ones_size[dim] = 1
    ones = aten.expand.default(aten.ones.default([1], dtype=grad.dtype, device=grad.device),
                               ones_size)
    for k in range(size):
        # omitted[j] = prod_{i <= j, i != k} x_i for j >= k
        if k == 0:
            omitted = aten.cat.default(
                [ones, aten.cumprod.default(aten.slice.Tensor(input_conj, dim, 1), dim)], dim)
        else:
            until_k = aten.prod.dim_int(aten.slice.Tensor(input_conj, dim, 0, k), dim, True)
            if k == size - 1:
                omitted = until_k
            else:
                after_k = aten.cumprod.default(aten.slice.Tensor(input_conj, dim, k + 1), dim)
                omitted = aten.cat.default(
                    [until_k, aten.mul.Tensor(aten.expand_as.default(until_k, after_k), after_k)],
                    dim)
        grad_k = aten.sum.dim_IntList(aten.mul.Tensor(aten.slice.Tensor(grad, dim, k), omitted),
                                      [dim])
        aten.copy_.default(aten.select.int(grad_input, dim, k), grad_k)
    return grad_input


# -- logcumsumexp, dist, renorm (ATen's ReduceOps.cpp, Normalization of rows: Renorm) ----

@meta("_logcumsumexp")
def _logcumsumexp_meta(self, dim):
    wrap_dim(dim, len(self._shape))
    if self.dtype.category < dt.FLOATING:
        raise _not_implemented("logcumsumexp_out_cpu", self.dtype)
    return TensorMeta(self._shape, self.dtype)


def _log_add_exp_complex(x, y):
    """ATen's _log_add_exp_helper for complex: the larger real part factored
    out; nan if either is nan; two equal infinite real parts give the smaller
    (-inf) or log(exp(x) + exp(y)) (+inf)."""
    take_y = y.real > x.real
    big, small = np.where(take_y, y, x), np.where(take_y, x, y)
    with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
        both_inf = ~np.isfinite(small.real) & (small.real == big.real)
        result = np.log1p(np.exp(small - big)) + big
        result = np.where(both_inf, np.where(small.real < 0, small,
                                             np.log(np.exp(small) + np.exp(big))), result)
    return np.where(np.isnan(x) | np.isnan(y), complex(math.nan, math.nan), result)


@impl("_logcumsumexp")
def _logcumsumexp_impl(out, self, dim):
    """One running log-add-exp along ``dim``, accumulated in ATen's CPU
    accumulate type (float64 for float32; float32 for half and bfloat16)."""
    a = self._np()
    if a.ndim == 0:
        _write(out, a)
        return
    axis = wrap_dim(dim, a.ndim)
    if self.dtype.is_complex:
        a = np.moveaxis(_as(a, np.complex128), axis, 0).copy()
        for i in range(1, a.shape[0]):
            a[i] = _log_add_exp_complex(a[i - 1], a[i])
        _write(out, np.moveaxis(a, 0, axis))
        return
    acc = np.float64 if self.dtype is dt.float32 else out.dtype.opmath
    with np.errstate(invalid="ignore"):
        _write(out, np.logaddexp.accumulate(_as(a, acc), axis=axis))


@kernel("logcumsumexp")
def logcumsumexp(self, dim):
    """CompositeExplicitAutograd: ``_logcumsumexp`` (its gradient is logcumsumexp's)."""
    return aten._logcumsumexp.default(self, dim)


@kernel("logcumsumexp_out")
def logcumsumexp_out(self, dim, *, out):
    """Hand-written out=: out must have self's dtype (check_scalar_type's message)."""
    if out.dtype is not self.dtype:
        raise RuntimeError(f"expected scalar_type {self.dtype._short} but found "
                           f"{out.dtype._short}")
    return aten._logcumsumexp.out(self, dim, out=out)


@kernel("dist")
def dist(self, other, p=2):
    """CompositeExplicitAutograd: the p-norm of the difference."""
    return aten.norm.Scalar(aten.sub.Tensor(self, other), p)


def _c10_double(value) -> str:
    """A double as c10's messages print it (six significant digits)."""
    return f"{float(value):g}"


@meta("renorm")
def renorm_meta(self, p, dim, maxnorm):
    if isinstance(p, complex):
        raise RuntimeError("renorm: p must be real-valued")
    if float(p) <= 0:
        raise RuntimeError("renorm: non-positive-norm not supported")
    if isinstance(maxnorm, complex):
        raise RuntimeError("renorm: maxnorm must be real-valued")
    if float(maxnorm) < 0:
        raise RuntimeError(f"renorm: expected maxnorm to be >= 0 but got "
                           f"{_c10_double(maxnorm)}")
    if len(self._shape) < 2:
        raise RuntimeError(f"renorm: input needs at least 2 dimensions, got "
                           f"{len(self._shape)} dimensions")
    wrap_dim(dim, len(self._shape))
    return TensorMeta(self._shape, self.dtype)


def _renorm_norms(self, p, dim):
    """renorm_out's norms: linalg_vector_norm over every dim but ``dim`` (kept),
    half and bfloat16 in float32 (ATen asks for the CUDA accumulate type)."""
    d = wrap_dim(dim, self.dim())
    dims = [i for i in range(self.dim()) if i != d]
    acc = dt.float32 if self.dtype in (dt.float16, dt.bfloat16) else None
    return aten.linalg_vector_norm.default(self, float(p), dims, True, dtype=acc), dims


@impl("renorm")
def renorm_impl(out, self, p, dim, maxnorm):
    """out = self * factor, factor = maxnorm / (norm + 1e-7) where the slice's
    norm exceeds maxnorm, else 1: computed in the norms' dtype (float32 for
    half and bfloat16: renorm_scale_factor on the norms as they are), the
    product rounded once to self's dtype."""
    norms, _ = _renorm_norms(self, p, dim)
    n = norms._np()
    with np.errstate(invalid="ignore", divide="ignore"):
        shifted = n + n.dtype.type(1e-7)
        factor = np.where(n > maxnorm, (maxnorm / shifted.astype(np.float64)).astype(n.dtype),
                          n.dtype.type(1))
    compute = np.result_type(out.dtype.opmath, factor.dtype)
    _write(out, np.multiply(_as(self._np(), compute), factor, dtype=compute))


# -- segment_reduce (ATen's SegmentReduce.cpp) ----------------------------------------------

# get_reduction_enum: "amax"/"amin" spell max/min
_SEGMENT_REDUCTIONS = {"max": "max", "amax": "max", "min": "min", "amin": "min", "mean": "mean",
                       "sum": "sum", "prod": "prod"}


def _segment_checks(data, reduce, lengths, indices, offsets, axis, unsafe):
    """segment_reduce's argument checks, in ATen's order; the reduction's name
    (max/min/mean/sum/prod), the wrapped axis and the segment bounds tensor."""
    axis = wrap_dim(axis, len(data._shape))
    if indices is not None:
        raise RuntimeError("segment_reduce(): indices based reduction is not supported yet.")
    if lengths is None and offsets is None:
        raise RuntimeError("segment_reduce(): Either lengths or offsets must be defined.")
    if reduce not in _SEGMENT_REDUCTIONS:
        raise RuntimeError(f"reduce argument must be either sum, prod, mean, amax or amin, got "
                           f"{reduce}")
    name, bounds = ("offsets", offsets) if offsets is not None else ("lengths", lengths)
    if len(data._shape) < len(bounds._shape):
        raise RuntimeError(f"Expected data.dim() >= {name}_value.dim() to be true, but got false."
                           "  (Could this error message be improved?  If so, please report an "
                           "enhancement request to PyTorch.)")
    if axis != len(bounds._shape) - 1:
        raise RuntimeError(f"segment_reduce(): Expected axis to be the last dimension of {name} "
                           f"but got {axis}.")
    if offsets is None and not unsafe and lengths.device.type == "cpu" and lengths.numel():
        values = lengths._np()
        if values.min() < 0:
            raise RuntimeError("lengths contains negative value!")
        if (values.sum(axis=-1) != data._shape[axis]).any():
            raise RuntimeError("segment_reduce(): Expected all rows of lengths along axis to sum "
                               "to data.size(lengths.dim()-1) when !unsafe.")
    return _SEGMENT_REDUCTIONS[reduce], axis, name, bounds


def _segment_bounds(data, name, bounds, axis):
    """(starts, ends) of each segment, shape (outer, segments), from the lengths
    or offsets (ATen's index loop: int32 or int64 only); positions past the
    data are clipped (ATen reads past it)."""
    if bounds.dtype not in (dt.int32, dt.int64):
        raise _not_implemented(f"_segment_reduce_{name}_cpu_kernel1", bounds.dtype)
    b = bounds._np().astype(np.int64).reshape(-1, bounds._shape[-1] if bounds._shape else 1)
    if name == "lengths":
        b = np.concatenate([np.zeros((b.shape[0], 1), np.int64), np.cumsum(b, axis=-1)], -1)
    n = data._shape[axis] if data._shape else 1
    b = np.clip(b, 0, n)
    return b[:, :-1], np.maximum(b[:, 1:], b[:, :-1])


def _segment_values(data, axis):
    """The data as (outer, segment dim, inner), in its own dtype (scalar_t)."""
    shape = data._shape or (1,)
    outer, inner_size = math.prod(shape[:axis]), math.prod(shape[axis + 1:])
    return data._np().reshape(outer, shape[axis], inner_size)


def _segment_gather(values, starts, j):
    """Element j of every segment: (outer, segments, inner)."""
    index = np.minimum(starts + j, max(values.shape[1] - 1, 0))
    return np.take_along_axis(values, index[:, :, None], axis=1) if values.shape[1] else \
        np.zeros(index.shape + values.shape[2:], values.dtype)


_SEGMENT_IDENTITY = {"max": -np.inf, "min": np.inf, "sum": 0, "mean": 0, "prod": 1}


@kernel("segment_reduce")
def segment_reduce(data, reduce, *, lengths=None, indices=None, offsets=None, axis=0,
                   unsafe=False, initial=None):
    """``torch.segment_reduce``: along ``axis``, each run of consecutive elements
    (given by ``lengths``, or by ``offsets`` = [0, cumsum(lengths)]) reduced to
    one value.  As ATen's CPU loop: the value starts at ``initial`` (else the
    reduction's identity; an empty mean is NaN) and takes the elements in order
    in the data's dtype (float16/bfloat16 round after each step); max/min
    propagate NaN; mean divides by the segment's length."""
    reduce, axis, name, bounds = _segment_checks(data, reduce, lengths, indices, offsets, axis,
                                                 unsafe)
    segments = bounds._shape[-1] - (name == "offsets") if bounds._shape else 1
    shape = data._shape[:axis] + (segments,) + data._shape[axis + 1:]
    out = inner.empty(list(shape), dtype=data.dtype, device=data.device)
    if data.device.type != "cpu":
        return out
    starts, ends = _segment_bounds(data, name, bounds, axis)
    if not data.dtype.is_floating_point:
        raise _not_implemented("_segment_reduce_cpu", data.dtype)
    scalar = data.dtype.numpy
    values = _segment_values(data, axis)
    acc = np.full(starts.shape + values.shape[2:],
                  _SEGMENT_IDENTITY[reduce] if initial is None else initial, dtype=scalar)
    count = ends - starts
    step = {"max": np.maximum, "min": np.minimum, "sum": np.add, "mean": np.add,
            "prod": np.multiply}[reduce]
    for j in range(int(count.max(initial=0))):
        taken = (j < count)[:, :, None]
        acc = np.where(taken, step(acc, _segment_gather(values, starts, j)), acc)
    if reduce == "mean":
        with np.errstate(divide="ignore", invalid="ignore"):
            mean = acc / count.astype(scalar)[:, :, None]
        acc = np.where((count > 0)[:, :, None], mean, acc if initial is not None else np.nan)
    _write(out, acc.astype(scalar).reshape(shape))
    return out


@kernel("_segment_reduce_backward")
def _segment_reduce_backward(grad, output, data, reduce, *, lengths=None, offsets=None, axis=0,
                             initial=None):
    """segment_reduce's gradient (ATen's _segment_reduce_cpu_backward): sum passes
    the segment's gradient to each element, mean divides it by the length;
    max/min share it among the elements equal to the result (NaN matching NaN);
    prod gives grad * result / x, or for a zero or NaN element grad times the
    product of the others (and ``initial``)."""
    reduce = _SEGMENT_REDUCTIONS[reduce]
    axis = wrap_dim(axis, len(data._shape))
    name, bounds = ("offsets", offsets) if offsets is not None else ("lengths", lengths)
    result = inner.empty(list(data._shape), dtype=data.dtype, device=data.device)
    if data.device.type != "cpu":
        return result
    starts, ends = _segment_bounds(data, name, bounds, axis)
    if not data.dtype.is_floating_point:
        raise _not_implemented("_segment_reduce_cpu_backward", data.dtype)
    scalar = data.dtype.numpy
    values = _segment_values(data, axis)
    g, o = (_segment_values(t, axis).astype(scalar) for t in (grad, output))
    grad_input = np.zeros(values.shape, scalar)
    count = ends - starts
    longest = int(count.max(initial=0))

    def scatter(j, value):
        rows, segs = np.nonzero(j < count)
        grad_input[rows, (starts + j)[rows, segs]] = value[rows, segs]

    if reduce in ("max", "min"):
        ties = sum(_segment_ties(_segment_gather(values, starts, j), o) * (j < count)[:, :, None]
                   for j in range(longest)) if longest else None
        for j in range(longest):
            hit = _segment_ties(_segment_gather(values, starts, j), o)
            scatter(j, np.where(hit, g / np.maximum(ties, 1).astype(scalar), scalar.type(0)))
    elif reduce == "prod":
        for j in range(longest):
            x = _segment_gather(values, starts, j)
            others = np.full(x.shape, 1 if initial is None else initial, dtype=scalar)
            for k in range(longest):
                if k != j:
                    others = np.where((k < count)[:, :, None],
                                      others * _segment_gather(values, starts, k), others)
            with np.errstate(divide="ignore", invalid="ignore"):
                scatter(j, np.where(np.isnan(x) | (x == 0), g * others, g * o / x))
    else:
        with np.errstate(divide="ignore", invalid="ignore"):    # (empty segments: unused)
            share = g / count.astype(scalar)[:, :, None] if reduce == "mean" else g
        for j in range(longest):
            scatter(j, share)
    _write(result, grad_input.reshape(data._shape))
    return result


def _segment_ties(x, output):
    """The elements a max/min picked: equal to the result, or NaN with it."""
    return (np.isnan(x) & np.isnan(output)) | (x == output)

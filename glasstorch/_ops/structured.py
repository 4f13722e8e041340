"""Structured kernels (ATen's structured kernels and TensorIterator, in small).

An op written the structured way is two functions:

    meta rule   meta(*args, **kwargs) -> TensorMeta | tuple[TensorMeta, ...]
                decides the output's shape, dtype and strides; raises PyTorch's
                errors for bad input.  Alone, it serves the Meta device.
    impl        impl(out, *args, **kwargs) -> None
                fills a preallocated output (a tuple of outputs for multi-output
                ops) through zero-copy numpy views of storage.

The registry derives the functional, in-place and ``out=`` kernels from that
pair (see ``make_structured_kernels``), so they cannot disagree.

This module also holds the shared rules meta functions use: broadcasting,
dtype promotion for operands that may be Python scalars, dim wrapping, and
TensorIterator's choice of output strides (outputs follow the inputs' memory
layout, e.g. a channels_last input gives a channels_last output).
"""
from __future__ import annotations

import math
import warnings

import ml_dtypes
import numpy as np

from .._core import dtype as dt
from .._core.allocator import cpu_allocator, storage_nbytes
from .._core.device import device as Device
from .._core.storage import UntypedStorage
from .._core.tls import state as _tls
from .._tensor import Tensor, Size, contiguous_strides, keys_for_device, _wrap_dim

__all__ = ["TensorMeta", "empty_tensor", "broadcast_shapes", "same_shape", "wrap_dim",
           "result_type",
           "elementwise_strides", "NUMBER_TYPES"]

CPU = Device("cpu")
META = Device("meta")
NUMBER_TYPES = (bool, int, float, complex, np.bool_, np.integer, np.floating, np.complexfloating)
wrap_dim = _wrap_dim


class TensorMeta:
    """What a meta rule decides about one output: shape, dtype, strides, device.

    ``stride=None`` means contiguous; ``device=None`` means "the device of the
    op's first tensor argument".
    """

    __slots__ = ("shape", "dtype", "stride", "device")

    def __init__(self, shape, dtype, stride=None, device=None):
        self.shape = shape if type(shape) is tuple else tuple(shape)
        self.dtype = dtype
        self.stride = stride
        self.device = device

    def __repr__(self):
        return f"TensorMeta(shape={self.shape}, dtype={self.dtype}, stride={self.stride})"

    def check_out(self, out_dtype):
        """May an ``out=`` tensor of ``out_dtype`` receive this result?  By default any
        dtype of the same or a higher category; subclasses make it stricter (ops whose
        TensorIterator checks that all dtypes are the same)."""
        check_out_cast(self.dtype, out_dtype)

    def into_existing(self, existing_dtype):
        """The result to write into an existing tensor of ``existing_dtype`` (``out=``,
        or self in place): this one, unless the op's meta reads that tensor's dtype
        (ATen's ``maybe_get_output``), as the scans' does."""
        return self


# -- allocation -------------------------------------------------------------------

def empty_tensor(shape, dtype, device=CPU, stride=None) -> Tensor:
    """A fresh tensor whose bytes come from the device's allocator.

    Contiguous CPU outputs are one ``np.empty``; strided ones get a buffer that
    spans their extent and a strided description of it.
    """
    if type(shape) is not tuple:
        shape = tuple(shape)
    if stride is not None and same_shape(stride, contiguous_strides(shape)):
        stride = None
    dev_type = device.type
    if dev_type == "cpu":
        if stride is None:
            return Tensor._from_array(cpu_allocator.allocate(shape, dtype.numpy), dtype, device)
        extent = storage_nbytes(shape, dtype.itemsize, stride) // dtype.itemsize
        storage = UntypedStorage._wrap(cpu_allocator.allocate(extent, dtype.numpy), device,
                                       cpu_allocator)
        return Tensor._make(storage, shape, tuple(stride), 0, dtype, device,
                            keys_for_device("cpu", _tls.inference_mode))
    if dev_type == "meta":
        if stride is None:   # (an explicit meta stride goes unchecked, as in PyTorch)
            stride = contiguous_strides(shape)
            # symbolic sizes (SymInts) have no int64 overflow to check
            nbytes = storage_nbytes(shape, dtype.itemsize) if all(type(n) is int for n in shape) \
                else _extent(shape, stride) * dtype.itemsize
        else:
            stride = tuple(stride)
            nbytes = _extent(shape, stride) * dtype.itemsize
        storage = UntypedStorage._meta(nbytes)
        return Tensor._make(storage, shape, stride, 0, dtype, device,
                            keys_for_device("meta", _tls.inference_mode))
    if dev_type == "cuda":
        from .. import cuda
        cuda._lazy_init()
    raise RuntimeError(f"no allocator for device {device}")


def _extent(shape, stride) -> int:
    """Elements a buffer must hold for (shape, stride) starting at offset 0."""
    if 0 in shape:
        return 0
    return 1 + sum((n - 1) * s for n, s in zip(shape, stride))


def allocate_outputs(spec, args, kwargs):
    """Tensors for a meta rule's result (one TensorMeta or a tuple of them); a
    spec without a device gets the device of the op's first tensor argument."""
    if type(spec) is not tuple:   # one TensorMeta (or a subclass)
        return empty_tensor(spec.shape, spec.dtype, spec.device or first_tensor_device(args, kwargs),
                            spec.stride)
    device = first_tensor_device(args, kwargs)
    return tuple(empty_tensor(s.shape, s.dtype, s.device or device, s.stride) for s in spec)


def first_tensor_device(args, kwargs):
    for a in args:
        if isinstance(a, Tensor):
            return a.device
        if isinstance(a, (list, tuple)):
            for x in a:
                if isinstance(x, Tensor):
                    return x.device
    for a in kwargs.values():
        if isinstance(a, Tensor):
            return a.device
    return CPU


# -- broadcasting and promotion ------------------------------------------------------

def same_shape(a, b) -> bool:
    """Equal shapes, known without a guard: a fast path may not turn a symbolic
    size (SymInt) comparison into a guard, so a SymInt counts as equal only to
    the same expression (anything else takes the general path)."""
    if len(a) != len(b):
        return False
    for x, y in zip(a, b):
        if x is y:
            continue
        if type(x) is not int or type(y) is not int:
            if getattr(getattr(x, "node", None), "expr", x) != \
                    getattr(getattr(y, "node", None), "expr", y):
                return False
        elif x != y:
            return False
    return True


def broadcast_shapes(*shapes) -> tuple:
    """Align from the right; sizes must match or be 1.  Several shapes fold left to
    right, as TensorIterator's compute_shape does, so PyTorch's error names the
    same sizes."""
    if len(shapes) == 2 and same_shape(shapes[0], shapes[1]):
        return tuple(shapes[0])
    result = tuple(shapes[0])
    for shape in shapes[1:]:
        result = _infer_size(result, tuple(shape))
    return result


def _infer_size(a, b) -> tuple:
    """``infer_size``: the broadcast of two shapes, checked from the last dim.
    Symbolic sizes are compared as ATen's infer_size_impl compares them: a size
    1 is looked for first, and only then are two sizes required equal (so a
    SymInt is never compared with the other shape's sizes at other dims)."""
    if same_shape(a, b):
        return a
    ndim = max(len(a), len(b))
    result = [0] * ndim
    for i in range(ndim - 1, -1, -1):
        offset = ndim - 1 - i
        size_a = a[len(a) - 1 - offset] if offset < len(a) else 1
        size_b = b[len(b) - 1 - offset] if offset < len(b) else 1
        if size_a == 1:
            result[i] = size_b
        elif size_b == 1 or size_a == size_b:
            result[i] = size_a
        else:
            raise RuntimeError(f"The size of tensor a ({size_a}) must match the size of tensor b "
                               f"({size_b}) at non-singleton dimension {i}")
    return tuple(result)


def result_type(*operands) -> dt.dtype:
    """``torch.result_type`` over tensors and Python scalars (three tiers)."""
    if len(operands) == 2:
        a, b = operands
        if type(a) is Tensor:
            if type(b) is Tensor:
                if a._shape and b._shape:
                    return dt.promote_types(a.dtype, b.dtype)
            elif type(b) in _NUMBER_TYPES:   # tensor (op) Python number: memoized
                key = (a.dtype, not a._shape, type(b), dt._DEFAULT.value)
                hit = _TENSOR_SCALAR_RESULT.get(key)
                if hit is None:
                    hit = _TENSOR_SCALAR_RESULT[key] = result_type_of_operands(operands)
                return hit
    return result_type_of_operands(operands)


_NUMBER_TYPES = (bool, int, float, complex)
_TENSOR_SCALAR_RESULT: dict = {}


def result_type_of_operands(operands) -> dt.dtype:
    """The three-tier rule, operand by operand."""
    dims, zeros, scalars = [], [], []
    for x in operands:
        if isinstance(x, Tensor):
            (dims if x._shape else zeros).append(x.dtype)
        elif x is not None:
            scalars.append(python_number(x))
    return dt.result_type_of(dims, zeros, scalars)


def python_number(x):
    """A Scalar argument as the Python number it promotes as."""
    if isinstance(x, (bool, int, float, complex)):
        return x
    if isinstance(x, np.generic):
        return x.item()
    if hasattr(x, "node"):      # a SymInt / SymFloat promotes as its Python type
        return x.node.hint
    raise TypeError(f"expected a number, got {type(x).__name__}")


def check_same_device(*operands):
    """TensorIterator's device check: a CPU 0-dim tensor may join any device."""
    device = None
    for t in operands:
        if not isinstance(t, Tensor) or (t.device.type == "cpu" and not t._shape):
            continue
        if device is None:
            device = t.device
        elif t.device != device:
            if "meta" in (device.type, t.device.type):
                raise RuntimeError(f"Tensor on device {t.device} is not on the expected device "
                                   f"{device}!")
            raise RuntimeError(f"Expected all tensors to be on the same device, but found at "
                               f"least two devices, {device} and {t.device}!")
    if device is None:
        device = next(t.device for t in operands if isinstance(t, Tensor))
    return device


# -- output strides (TensorIterator::reorder_dimensions / compute_strides) -----------

def elementwise_strides(shape, inputs) -> tuple | None:
    """Strides for an elementwise output: it follows the inputs' memory layout.

    None means contiguous (the common case, answered without sorting).  Else,
    as TensorIterator does: start from the innermost-first order and insertion-
    sort dims; for a pair of dims the first input with unequal, non-zero
    strides decides (equal strides: the larger dim goes outward); broadcast
    dims have stride 0 and don't vote.
    """
    ndim = len(shape)
    if ndim < 2:
        return None
    for t in inputs:                       # the common case: every input is contiguous
        if isinstance(t, Tensor) and t._shape and not t._is_contiguous():
            break
    else:
        return None
    operands = [t for t in inputs if isinstance(t, Tensor) and t._shape]
    strides_list = []
    for t in operands:
        offset = ndim - len(t._shape)
        strides_list.append([0] * offset + [0 if n == 1 and shape[offset + i] != 1 else s
                                            for i, (n, s) in enumerate(zip(t._shape, t._stride))])
    strides = iterator_strides(shape, strides_list)
    return None if strides == contiguous_strides(shape) else strides


def iterator_strides(shape, operand_strides) -> tuple:
    """Dense strides ordering the dims as the operands lie in memory
    (TensorIterator::reorder_dimensions, also ATen's infer_dense_strides).

    Start from the innermost-first order and insertion-sort the dims: for a pair,
    the first operand with unequal, non-zero strides decides; on equal strides the
    larger dim goes outward; stride 0 (broadcast) doesn't vote.
    """
    ndim = len(shape)

    def should_swap(dim0, dim1):
        for st in operand_strides:
            s0, s1 = st[dim0], st[dim1]
            if s0 == 0 or s1 == 0:
                continue
            if s0 != s1:
                return 1 if s0 > s1 else -1
            if shape[dim0] > shape[dim1]:
                return 1
        return 0

    perm = list(range(ndim - 1, -1, -1))
    for i in range(1, ndim):
        dim1 = i
        for dim0 in range(i - 1, -1, -1):
            c = should_swap(perm[dim0], perm[dim1])
            if c > 0:
                perm[dim0], perm[dim1] = perm[dim1], perm[dim0]
                dim1 = dim0
            elif c < 0:
                break
    strides = [0] * ndim
    acc = 1
    for d in perm:
        strides[d] = acc
        acc *= max(shape[d], 1)
    return tuple(strides)


def check_out_cast(result_dtype, out_dtype):
    """Writing into an existing tensor may not lower the category."""
    if not dt.can_cast(result_dtype, out_dtype):
        raise RuntimeError(f"result type {result_dtype._short} can't be cast to the desired "
                           f"output type {out_dtype._short}")


def sets_own_output(meta_rule):
    """Mark the meta rule of a structured op that is no TensorIterator op (in
    PyTorch's native_functions.yaml: ``structured`` without ``structured_inherits:
    TensorIteratorBase``).  Its in-place variant then checks the result against
    ``self`` as the generated ``set_output`` does (``check_inplace``), where a
    TensorIterator op reports a broadcast mismatch or an impossible cast."""
    meta_rule.sets_own_output = True
    return meta_rule


def check_inplace(self, spec):
    """ATen's check_inplace: an in-place result must have self's dtype and sizes."""
    if spec.dtype is not self.dtype:
        raise RuntimeError(f"Bad in-place call: input tensor dtype {dt.type_meta_name(self.dtype)} "
                           f"and output tensor dtype {dt.type_meta_name(spec.dtype)} should match")
    if tuple(spec.shape) != tuple(self._shape):
        raise RuntimeError(f"Bad in-place call: input tensor size {list(self._shape)} and output "
                           f"tensor size {list(spec.shape)} should match")


# -- memory overlap (ATen's MemoryOverlap.cpp) ------------------------------------------

_INTERNAL_OVERLAP = ("unsupported operation: more than one element of the written-to tensor "
                     "refers to a single memory location. Please clone() the tensor before "
                     "performing the operation.")
_INPUT_OVERLAP = ("unsupported operation: some elements of the input tensor and the written-to "
                  "tensor refer to a single memory location. Please clone() the tensor before "
                  "performing the operation.")


def has_internal_overlap(t) -> bool:
    """Do two elements of ``t`` share memory for sure (a stride 0 over a size above 1)?
    Like ``has_internal_overlap``, cases it cannot decide cheaply count as no."""
    if t._is_contiguous():
        return False
    return any(s == 0 and n > 1 for n, s in zip(t._shape, t._stride))


def overlap_status(a, b) -> str:
    """``"full"``, ``"partial"`` or ``"no"``: how the memory of ``a`` and ``b`` meets
    (``get_overlap_status``; layouts with holes or repeats are not judged: ``"no"``)."""
    if a is b:
        return "full"
    if a._storage is not b._storage or 0 in a._shape or 0 in b._shape:
        return "no"
    if not (a.is_non_overlapping_and_dense() and b.is_non_overlapping_and_dense()):
        return "no"
    a_begin, b_begin = a._offset * a.dtype.itemsize, b._offset * b.dtype.itemsize
    a_end = a_begin + a.numel() * a.dtype.itemsize
    b_end = b_begin + b.numel() * b.dtype.itemsize
    if a_begin == b_begin and a_end == b_end:
        return "full" if a._stride == b._stride else "partial"
    return "partial" if a_begin < b_end and b_begin < a_end else "no"


def assert_no_partial_overlap(out, inp):
    """Elementwise ops may read and write the same memory, but not shifted memory."""
    if overlap_status(out, inp) == "partial":
        raise RuntimeError(_INPUT_OVERLAP)


def assert_no_overlap(out, inp):
    """Ops that read inputs while writing elsewhere (scatter, index_add) refuse any overlap."""
    if overlap_status(out, inp) != "no":
        raise RuntimeError(_INPUT_OVERLAP)


def unproven_overlap(written, tensors) -> bool:
    """Does ``written`` share memory with one of ``tensors`` laid out differently (a
    broadcast input, re-read at every element, counts as different)?
    The checks above let that through only when they cannot judge it (a layout
    with holes: get_overlap_status's TOO_HARD); TensorIterator's loop then runs
    element by element, so an element may read what an earlier one wrote, where
    numpy would buffer the whole input first.  Kernels then use ``in_loop_order``."""
    storage, w = written._storage, None
    for t in tensors:
        if isinstance(t, Tensor) and t._storage is storage and t is not written and \
                (t._offset, t._stride, t._shape) != (written._offset, written._stride,
                                                     written._shape):
            w = written._np() if w is None else w
            if np.shares_memory(w, t._np()):
                return True
    return False


def in_loop_order(shape, stride):
    """The indices of a tensor in TensorIterator's loop order: its dims ordered by
    stride, the largest outermost (reorder_dimensions)."""
    order = sorted(range(len(shape)), key=lambda d: -abs(stride[d]))
    for index in np.ndindex(*[shape[d] for d in order]):
        full = [0] * len(shape)
        for d, i in zip(order, index):
            full[d] = i
        yield tuple(full)


def overlap_rule(*, inputs=assert_no_partial_overlap, expanded=None):
    """Decorate a meta rule whose in-place/``out=`` kernels check overlap differently
    from TensorIterator's default: ``inputs`` checks each input against the written
    tensor; ``expanded`` is a deprecation message to warn with instead of refusing
    to write an expanded tensor (PyTorch's index_put_ and masked_fill_)."""
    def decorate(meta_rule):
        meta_rule.overlap_rule = (inputs, expanded)
        return meta_rule
    return decorate


TENSOR_ITERATOR_OVERLAP = (assert_no_partial_overlap, None)


def check_overlap(written, first, args, kwargs, rule=TENSOR_ITERATOR_OVERLAP):
    """TensorIterator's ``compute_mem_overlaps`` for a tensor about to be written:
    no internal overlap, no partial overlap with ``first`` (the op's self, which
    in-place is ``written`` itself), and the other tensor arguments checked by the
    rule's ``inputs``.  Only arguments on ``written``'s storage can overlap it."""
    inputs, expanded = rule
    if not written._is_contiguous() and has_internal_overlap(written):
        if expanded is None:
            raise RuntimeError(_INTERNAL_OVERLAP)
        warnings.warn(expanded, UserWarning, stacklevel=4)
    storage = written._storage
    if isinstance(first, Tensor):
        if first is not written and first._storage is storage:
            assert_no_partial_overlap(written, first)
    elif type(first) in (list, tuple):
        _check_inputs(written, storage, first, inputs)
    _check_inputs(written, storage, args, inputs)
    if kwargs:
        _check_inputs(written, storage, kwargs.values(), inputs)


def _check_inputs(written, storage, args, inputs):
    for a in args:
        if isinstance(a, Tensor):
            if a._storage is storage:
                inputs(written, a)
        elif type(a) in (list, tuple):
            _check_inputs(written, storage, a, inputs)


def numel(shape) -> int:
    return math.prod(shape)


def as_size(shape) -> Size:
    return Size(shape)


# -- dtype conversion (the copy kernel's static_cast) ---------------------------------

def convert_array(src: np.ndarray, src_dtype, dtype) -> np.ndarray:
    """Values of ``src`` converted to ``dtype`` as PyTorch's copy kernel does:
    complex -> real drops the imaginary part (with PyTorch's warning), float ->
    int truncates, anything -> bool is ``!= 0``, half/bfloat16 targets round
    through float32.  (The sign and payload of a bfloat16 NaN are not specified:
    PyTorch's scalar and vectorized conversions disagree on them.)"""
    if src_dtype is dtype:
        return src
    if src_dtype is not None and src_dtype.category == dt.COMPLEX and \
            dtype.category != dt.COMPLEX:
        warnings.warn("Casting complex values to real discards the imaginary part",
                      UserWarning, stacklevel=6)
        src = np.real(src)
    if dtype is dt.bool_:
        return np.not_equal(src, 0)
    if dtype in (dt.float16, dt.bfloat16) and src.dtype != np.float32 and \
            src_dtype not in (dt.float16, dt.bfloat16):
        src = np.asarray(src).astype(np.float32)
    with np.errstate(invalid="ignore", over="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", np.exceptions.ComplexWarning)
        return np.asarray(src).astype(dtype.numpy)


# -- Scalar arguments (c10::checked_convert) -------------------------------------------

_OVERFLOW_NAMES = {"bool": "bool", "uint8": "uint8_t", "int8": "int8_t", "int16": "int16_t",
                   "int32": "int", "int64": "int64_t", "float16": "c10::Half",
                   "bfloat16": "c10::BFloat16", "float32": "float", "float64": "double",
                   "complex64": "c10::complex<float>", "complex128": "c10::complex<double>"}


def checked_convert(value, dtype):
    """c10::checked_convert: a Python number (a Scalar argument) as a numpy scalar
    of ``dtype``; a value out of the dtype's range is PyTorch's error, float ->
    int truncates, unsigned types take negative *integers* down to -max (they
    wrap), half/bfloat16 round through float32."""
    if isinstance(value, np.generic):
        value = value.item()
    if dtype is dt.bool_:
        return np.bool_(bool(value))
    cat = dtype.category
    if isinstance(value, complex) and cat != dt.COMPLEX:
        if value.imag != 0:
            raise RuntimeError(f"value cannot be converted to type {_OVERFLOW_NAMES[dtype.name]} "
                               "without overflow")
        value = value.real
    if cat == dt.INTEGRAL:
        info = np.iinfo(dtype.numpy)
        if isinstance(value, float):   # a float must fit the range itself (no wrapping)
            if not math.isfinite(value) or value < info.min or value > info.max:
                raise RuntimeError(f"value cannot be converted to type "
                                   f"{_OVERFLOW_NAMES[dtype.name]} without overflow")
        value = int(value)
        lo = -info.max if info.min == 0 else info.min
        if value > info.max or value < lo:
            raise RuntimeError(f"value cannot be converted to type {_OVERFLOW_NAMES[dtype.name]} "
                               "without overflow")
        return np.array(value & ((1 << (8 * dtype.itemsize)) - 1), np.uint64) \
            .astype(f"u{dtype.itemsize}").view(dtype.numpy)[()]
    if cat == dt.FLOATING:
        value = float(value)
        if math.isfinite(value) and abs(value) > float(ml_dtypes.finfo(dtype.numpy).max):
            raise RuntimeError(f"value cannot be converted to type "
                                   f"{_OVERFLOW_NAMES[dtype.name]} without overflow")
        if dtype in (dt.float16, dt.bfloat16):
            return np.float32(value).astype(dtype.numpy)
        return dtype.numpy.type(value)
    return dtype.numpy.type(complex(value))

"""addcmul and addcdiv: ATen's ternary pointwise ops (PointwiseOps.cpp and
cpu/PointwiseOpsKernel.cpp), the building blocks of the optimizers' updates.

    addcmul:  out[i] = self[i] + value * tensor1[i] * tensor2[i]
    addcdiv:  out[i] = self[i] + value * tensor1[i] / tensor2[i]

The three tensors broadcast and promote together (TensorIterator's ternary op).
The numpy bodies round the way PyTorch's CPU loops do, so optimizer trajectories
agree bit for bit:

* addcmul's loop body is contracted by the compiler into one fused multiply-add
  under the AVX2/AVX512 capabilities, ``fma(value * tensor1, tensor2, self)``:
  the product ``(value * tensor1) * tensor2`` is never rounded on its own
  (``native.multiply_add``: the C loop, or an exact emulation in numpy);
* addcdiv rounds every step: ``self + (value * tensor1) / tensor2``.

float16/bfloat16 compute in float32 and round once on write, as PyTorch does.
"""
from __future__ import annotations

import numpy as np

from ..._core import dtype as dt
from ..structured import TensorMeta, checked_convert, result_type
from . import impl, meta, native
from .pointwise import cast_operand, layout, not_implemented, quiet, write

_F32, _F64 = np.dtype(np.float32), np.dtype(np.float64)


def _common_dtype(self, tensor1, tensor2):
    d = self.dtype
    if tensor1.dtype is d and tensor2.dtype is d:   # the optimizers' case
        return d
    return result_type(self, tensor1, tensor2)


def _ternary_meta(self, tensor1, tensor2):
    if (self._shape == tensor1._shape == tensor2._shape and self.dtype is tensor1.dtype
            is tensor2.dtype and self.device == tensor1.device == tensor2.device
            and self._is_contiguous() and tensor1._is_contiguous()
            and tensor2._is_contiguous()):
        return TensorMeta(self._shape, self.dtype, None, self.device)   # the common case
    shape, strides = layout(self, tensor1, tensor2)
    return TensorMeta(shape, _common_dtype(self, tensor1, tensor2), strides)


@meta("addcmul")
def addcmul_meta(self, tensor1, tensor2, value=1):
    return _ternary_meta(self, tensor1, tensor2)


@meta("addcdiv")
def addcdiv_meta(self, tensor1, tensor2, value=1):
    if tensor1.dtype.category <= dt.INTEGRAL and tensor2.dtype.category <= dt.INTEGRAL:
        raise RuntimeError(
            "Integer division with addcdiv is no longer supported, and in a future  release "
            "addcdiv will perform a true division of tensor1 and tensor2. The historic addcdiv "
            "behavior can be implemented as (input + value * torch.trunc(tensor1 / tensor2))"
            ".to(input.dtype) for integer inputs and as (input + value * tensor1 / tensor2) for "
            "float inputs. The future addcdiv behavior is just the latter implementation: "
            "(input + value * tensor1 / tensor2), for all dtypes.")
    return _ternary_meta(self, tensor1, tensor2)


def _operands(name, self, tensor1, tensor2, value):
    """The operands in the compute type and ``value`` as the kernel reads it
    (``value.to<opmath_t>()``: checked against the compute type's range)."""
    rt = _common_dtype(self, tensor1, tensor2)
    if rt is dt.bool_:
        raise not_implemented(f"{name}_cpu_out", rt)
    compute = rt.opmath
    arrays = [cast_operand(t, rt, compute) for t in (self, tensor1, tensor2)]
    value_dtype = dt.float32 if compute == _F32 else rt
    scalar = checked_convert(value, value_dtype) if value_dtype.category != dt.COMPLEX \
        else np.complex128(value)
    return compute, arrays, compute.type(scalar)


@impl("addcmul")
@quiet
def addcmul_impl(out, self, tensor1, tensor2, value=1):
    compute, (base, t1, t2), scalar = _operands("addcmul", self, tensor1, tensor2, value)
    if native.fusable(base, t1, t2, out._np()):
        native.addcmul(base, t1, t2, scalar, out._np())   # the fused loop, in C
        return
    scaled = np.multiply(scalar, t1, dtype=compute)
    if compute in (_F32, _F64):     # then to a half output dtype, as PyTorch's loop stores it
        write(out, native.multiply_add(scaled, np.asarray(t2, dtype=compute),
                                       np.asarray(base, dtype=compute)))
    else:   # integers (wrapping) and complex numbers: no fused rounding to mimic
        write(out, np.add(base, np.multiply(scaled, t2, dtype=compute), dtype=compute))


@impl("addcdiv")
@quiet
def addcdiv_impl(out, self, tensor1, tensor2, value=1):
    compute, (base, t1, t2), scalar = _operands("addcdiv", self, tensor1, tensor2, value)
    if native.fusable(base, t1, t2, out._np()):
        native.addcmul(base, t1, t2, scalar, out._np(), divide=True)
        return
    quotient = np.divide(np.multiply(scalar, t1, dtype=compute), t2, dtype=compute)
    write(out, np.add(base, quotient, dtype=compute))

"""Helpers the kernels of every family share: PyTorch's errors for a missing
Meta kernel or dtype loop, and small conversions between arrays and tensors."""
from __future__ import annotations

import numpy as np

from ..structured import empty_tensor


def _no_meta_kernel(name):
    """What PyTorch answers for a data-dependent op on Meta tensors."""
    return NotImplementedError(
        f"aten::{name}: attempted to run this operator with Meta tensors, but there was no fake "
        "impl or Meta kernel registered. You may have run into this message while using an "
        "operator with PT2 compilation APIs (torch.compile/torch.export); in order to use this "
        "operator with those APIs you'll need to add a fake impl. Please see the following for "
        "next steps:  https://pytorch.org/tutorials/advanced/custom_ops_landing_page.html")


def _not_implemented(kernel_name, d):
    """The CPU dispatch macro's error for a dtype a kernel has no loop for."""
    return NotImplementedError(f'"{kernel_name}" not implemented for \'{d._short}\'')


def _on_meta(*tensors) -> bool:
    return any(t is not None and t.device.type == "meta" for t in tensors)


def _from_array(values, dtype, device):
    out = empty_tensor(values.shape, dtype, device)
    out._np()[...] = values
    return out

def _triggered_at(where):
    """The suffix PyTorch's C++ warnings carry."""
    return f" (Triggered internally at /__w/pytorch/pytorch/aten/src/ATen/native/{where}.)"


def _sizes(shape) -> str:
    return "[" + ", ".join(str(s) for s in shape) + "]"


def _array(t, compute):
    a = t._np()
    return a if a.dtype == compute else a.astype(compute)


def _write(out, values):
    np.copyto(out._np(), values, casting="unsafe")


def _scalar_t(dtype) -> np.dtype:
    """The numpy type that rounds as ATen's ``scalar_t`` arithmetic on ``dtype``:
    c10::Half and c10::BFloat16 compute each operator in float and round its
    result back (as numpy's float16 and ml_dtypes' bfloat16 do), so a chain of
    scalar_t operations rounds after every step; the other dtypes are their own."""
    return dtype.numpy


def _rounded(a, dtype):
    """``a`` (in ``dtype``'s opmath) stored as ``dtype`` and read back: a
    float16/bfloat16 temporary of ATen's between two float32 steps (a no-op for
    the dtypes that compute in themselves)."""
    if dtype.opmath == dtype.numpy:
        return a
    return np.asarray(a).astype(dtype.numpy).astype(dtype.opmath)


def _check_same_dtype(expected, found):
    if expected.dtype is not found.dtype:
        raise RuntimeError(f"expected scalar type {expected.dtype._short} but found "
                           f"{found.dtype._short}")


def _allocate_masked(specs, device):
    """The outputs of an op with an output_mask: None where the spec is None."""
    return tuple(empty_tensor(s.shape, s.dtype, device, s.stride) if s is not None else None
                 for s in specs)

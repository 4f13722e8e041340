"""uint16, uint32 and uint64 get only the CPU kernels PyTorch gives them.

PyTorch 2.13 calls these "barebones" unsigned types: they have storage, casts,
copies, views, indexing, equality, bitwise and/or/xor, mul, sum/prod, sort and a
few more, but most CPU kernels' dtype switch (AT_DISPATCH_*) leaves them out and
raises ``NotImplementedError: "add_stub" not implemented for 'UInt32'``.  numpy
has loops for all of them, so glasstorch's kernels would compute where PyTorch
refuses; this module puts PyTorch's refusal in front of the CPU kernels of the
ops whose switch lacks them (found by running each op on the installed PyTorch).

The dtype a kernel's switch looks at is, for binary TensorIterator ops, the two
operands' result type (so ``uint16 + int64`` first fails to promote, and
``uint16_tensor + 1.5`` is a float32 add PyTorch accepts); for the others, the
first tensor's (a factory's ``dtype``) unless another operand is floating or
complex, making the op compute in that type.
"""
from __future__ import annotations

import functools

from .._core import dtype as dt
from .._core.dispatch_key import DispatchKey
from .._tensor import Tensor
from .structured import result_type

# aten base name (overloads, in-place and out= variants included) -> the name the
# CPU kernel's dtype switch reports.
REFUSING_KERNELS = {
    "arange": "arange_cpu", "linspace": "linspace_cpu", "eye": "eye",
    "rand": "check_uniform_bounds", "uniform": "check_uniform_bounds",
    "flip": "flip_cpu",
    "lt": "lt_cpu", "le": "le_cpu", "gt": "gt_cpu", "ge": "ge_cpu",
    "add": "add_stub", "sub": "add_stub", "floor_divide": "div_floor_cpu",
    "remainder": "remainder_cpu", "neg": "neg_cpu", "abs": "abs_cpu", "sign": "sign_cpu",
    "pow": "pow", "bitwise_not": "bitwise_not_cpu",
    "bitwise_left_shift": "lshift_cpu", "bitwise_right_shift": "rshift_cpu",
    "max": "max_all", "min": "min_all", "amax": "max_values_cpu", "amin": "min_values_cpu",
    "argmax": "argmax_cpu", "argmin": "argmin_cpu",
    "maximum": "maximum_cpu", "minimum": "minimum_cpu",
    "masked_fill": "masked_fill", "clamp": "clamp_scalar_cpu",
    "nonzero": "nonzero_count_cpu", "count_nonzero": "nonzero_count_cpu",
    "mm": "addmm_impl_cpu_", "addmm": "addmm_impl_cpu_",
    "gather": "scatter_gather_tensor_cpu", "scatter": "scatter_gather_tensor_cpu",
    "index_select": "index_select", "index_put": "index_put", "masked_select": "masked_select",
    "tril": "tril", "triu": "triu", "bincount": "bincount_cpu", "topk": "topk_cpu",
}

_BAREBONES = dt.BAREBONES_UNSIGNED

# binary ops whose switch runs on the operands' common dtype
PROMOTING = {"add", "sub", "lt", "le", "gt", "ge", "floor_divide", "remainder", "pow",
             "maximum", "minimum", "bitwise_left_shift", "bitwise_right_shift"}


def _switch_dtype(args, kwargs):
    """The dtype the CPU kernel's switch sees, or None when it computes in a floating
    or complex type (or has no dtype at all)."""
    first = None
    for value in (*args, *kwargs.values()):
        for item in (value if isinstance(value, (list, tuple)) else (value,)):
            if isinstance(item, Tensor):
                d = item.dtype
            elif isinstance(item, (float, complex)):
                d = dt.scalar_dtype(item)
            else:
                continue
            if d.category >= dt.FLOATING:
                return None
            if first is None and isinstance(item, Tensor):
                first = d
    return first if first is not None else kwargs.get("dtype")


def _refusing(fn, kernel_name, promoting):
    @functools.wraps(fn)
    def refuse_barebones_unsigned(*args, **kwargs):
        if kwargs.get("dtype") in _BAREBONES or \
                any(getattr(a, "dtype", None) in _BAREBONES for a in args):   # (cheap test first)
            d = result_type(*args[:2]) if promoting else _switch_dtype(args, kwargs)
            if d in _BAREBONES:
                raise NotImplementedError(f'"{kernel_name}" not implemented for \'{d._short}\'')
        return fn(*args, **kwargs)
    return refuse_barebones_unsigned


def install(operators) -> None:
    """Guard the CPU kernel (else the backend-independent one) of every aten overload
    named in REFUSING_KERNELS; ``operators`` is the dispatcher's name -> entry map."""
    for name, entry in operators.items():
        if not name.startswith("aten::"):
            continue
        base = name[len("aten::"):].split(".")[0].rstrip("_")
        kernel_name = REFUSING_KERNELS.get(base)
        if kernel_name is None:
            continue
        for key in (DispatchKey.CPU, DispatchKey.CompositeExplicitAutograd):
            stack = entry.kernels.get(key)
            if stack:
                stack[0].fn = _refusing(stack[0].fn, kernel_name, base in PROMOTING)
                entry.update_table()
                break

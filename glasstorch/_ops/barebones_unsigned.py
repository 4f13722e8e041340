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

def _clamp_kernel(args, kwargs) -> str:
    """clamp's CPU kernel is named after the bounds it is given; tensor bounds go
    through maximum/minimum unless both are given."""
    low = args[1] if len(args) > 1 else kwargs.get("min")
    high = args[2] if len(args) > 2 else kwargs.get("max")
    tensors = isinstance(low, Tensor) or isinstance(high, Tensor)
    if low is not None and high is not None:
        return "clamp_cpu" if tensors else "clamp_scalar_cpu"
    if low is None:
        return "minimum_cpu" if tensors else "clamp_max_scalar_cpu"
    return "maximum_cpu" if tensors else "clamp_min_scalar_cpu"


def _vectors_only(name):
    """A kernel whose switch runs only on 1-d operands (``dot``'s shape check comes
    first; ``index_select`` of a matrix takes a path that copies any dtype).
    None: not refused here."""
    return lambda args, kwargs: name if all(
        a.dim() <= 1 for a in args[:2] if isinstance(a, Tensor)) else None


# aten base name (overloads, in-place and out= variants included; "name.overload"
# for one overload) -> the name the CPU kernel's dtype switch reports (or a function
# of the arguments giving it).
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
    "max.dim": "max_cpu", "min.dim": "min_cpu", "aminmax": "aminmax_cpu",
    "median": "median_cpu", "median.dim": "median_out", "nanmedian": "median_cpu",
    "mode": "mode_cpu", "kthvalue": "kthvalue_cpu", "cummax": "cummax_cpu",
    "masked_fill": "masked_fill", "clamp.default": _clamp_kernel,
    "clamp_min": "clamp_min_scalar_cpu", "clamp_max": "clamp_max_scalar_cpu",
    "clamp_min.Tensor": "maximum_cpu", "clamp_max.Tensor": "minimum_cpu",
    "relu": "clamp_min_scalar_cpu", "square": "pow", "fmod": "fmod_cpu", "rsub": "add_stub",
    "logical_and": "logical_and_cpu", "logical_or": "logical_or_cpu",
    "logical_xor": "logical_xor_cpu", "logical_not": "logical_not_cpu",
    "index_add": "index_add_", "index_fill": "index_fill_cpu", "index_copy": "index_copy_cpu",
    "masked_scatter": "masked_scatter", "take": "take_cpu", "put": "take_put_cpu",
    "scatter_add": "scatter_gather_tensor_cpu", "searchsorted": "searchsorted_out_cpu",
    "dot": _vectors_only("dot"), "trace": "trace", "addcmul": "addcmul_cpu_out",
    "nonzero": "nonzero_count_cpu", "count_nonzero": "nonzero_count_cpu",
    "mm": "addmm_impl_cpu_", "addmm": "addmm_impl_cpu_",
    "gather": "scatter_gather_tensor_cpu", "scatter": "scatter_gather_tensor_cpu",
    "index_select": _vectors_only("index_select"), "index_put": "index_put",
    "masked_select": "masked_select", "cross": "cross", "linalg_cross": "cross",
    "bucketize": "searchsorted_out_cpu", "clamp.Tensor": _clamp_kernel,
    "tril": "tril", "triu": "triu", "bincount": "bincount_cpu", "topk": "topk_cpu",
}

_BAREBONES = dt.BAREBONES_UNSIGNED

# binary ops whose switch runs on the operands' common dtype
PROMOTING = {"add", "sub", "rsub", "lt", "le", "gt", "ge", "floor_divide", "remainder", "pow",
             "fmod", "maximum", "minimum", "bitwise_left_shift", "bitwise_right_shift",
             "logical_and", "logical_or", "logical_xor"}
# reductions that accumulate in int64 unless ``dtype=`` names the type to compute in
BY_DTYPE_ARGUMENT = {"sum": "sum_cpu", "prod": "prod_out_cpu", "cumsum": "cumsum_out_cpu"}


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


def _refusing(fn, kernel_name, rule):
    @functools.wraps(fn)
    def refuse_barebones_unsigned(*args, **kwargs):
        for a in args:                  # the cheap test first: any such dtype at all?
            if type(a) is Tensor and a.dtype in _BAREBONES:
                break
        else:
            if not kwargs or kwargs.get("dtype") not in _BAREBONES:
                return fn(*args, **kwargs)
        d = kwargs.get("dtype") if rule == "dtype" else \
            result_type(*args[:2]) if rule == "promoting" else _switch_dtype(args, kwargs)
        shown = kernel_name(args, kwargs) if callable(kernel_name) else kernel_name
        if d in _BAREBONES and shown is not None:
            raise NotImplementedError(f'"{shown}" not implemented for \'{d._short}\'')
        return fn(*args, **kwargs)
    return refuse_barebones_unsigned


def install(operators) -> None:
    """Guard the CPU kernel (else the backend-independent one) of every aten overload
    named in REFUSING_KERNELS; ``operators`` is the dispatcher's name -> entry map."""
    for name, entry in operators.items():
        if not name.startswith("aten::"):
            continue
        base, _, overload = name[len("aten::"):].partition(".")
        base = base.rstrip("_")
        kernel_name = REFUSING_KERNELS.get(f"{base}.{overload or 'default'}") or \
            REFUSING_KERNELS.get(base)
        rule = "promoting" if base in PROMOTING else None
        if base in BY_DTYPE_ARGUMENT:
            kernel_name, rule = BY_DTYPE_ARGUMENT[base], "dtype"
        if kernel_name is None:
            continue
        for key in (DispatchKey.CPU, DispatchKey.CompositeExplicitAutograd):
            stack = entry.kernels.get(key)
            if stack:
                stack[0].fn = _refusing(stack[0].fn, kernel_name, rule)
                entry.update_table()
                break

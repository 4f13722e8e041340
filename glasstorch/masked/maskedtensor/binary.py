"""Elementwise binary ops of MaskedTensors (torch/masked/maskedtensor/binary.py):
both operands' masks must be equal; the op runs on the data and the result
keeps that mask."""
import glasstorch as torch

from .core import _apply_from, _map_mt_args_kwargs, _op_tables, _masks_match, _wrap_result, is_masked_tensor

__all__ = []

BINARY_NAMES = [
    "add", "atan2", "arctan2", "bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_left_shift",
    "bitwise_right_shift", "div", "divide", "floor_divide", "fmod", "logaddexp", "logaddexp2",
    "mul", "multiply", "nextafter", "remainder", "sub", "subtract", "true_divide", "eq", "ne",
    "le", "ge", "greater", "greater_equal", "gt", "less_equal", "lt", "less", "maximum",
    "minimum", "fmax", "fmin", "not_equal",
]
INPLACE_BINARY_NAMES = [n + "_" for n in BINARY_NAMES if n not in
                        {"logaddexp", "logaddexp2", "equal", "fmin", "minimum", "maximum", "fmax"}]


def _get_at_least_one_mask(a, b):
    if not is_masked_tensor(a) and not is_masked_tensor(b):
        raise TypeError("At least one of `a` and `b` must be a MaskedTensor")
    if not _masks_match(a, b):
        raise ValueError("a and b must have matching masks")
    return a.get_mask() if is_masked_tensor(a) else b.get_mask()


def _binary_helper(fn, args, kwargs, inplace):
    if kwargs:
        raise ValueError("len(kwargs) must equal 0")
    if any(torch.is_tensor(a) for a in args[2:]):
        raise TypeError("MaskedTensor binary ops do not support Tensor arguments aside from the "
                        "lhs and rhs")
    if not _masks_match(*args[:2]):
        raise ValueError("Input masks must match. If you need support for this, please open an "
                         "issue on Github.")
    data_args, _ = _map_mt_args_kwargs(args, kwargs, lambda x: x.get_data())
    mask_args, _ = _map_mt_args_kwargs(args, kwargs, lambda x: x.get_mask())
    result = fn(*data_args)
    if inplace:
        args[0]._set_data_mask(result, mask_args[0])
        return args[0]
    return _wrap_result(result, _get_at_least_one_mask(*args[:2]).expand_as(result))


NATIVE_BINARY_MAP, NATIVE_INPLACE_BINARY_MAP = _op_tables(BINARY_NAMES, INPLACE_BINARY_NAMES,
                                                        _binary_helper)
NATIVE_BINARY_FNS = list(NATIVE_BINARY_MAP)
NATIVE_INPLACE_BINARY_FNS = list(NATIVE_INPLACE_BINARY_MAP)


def _apply_native_binary(fn, *args, **kwargs):
    return _apply_from((NATIVE_BINARY_MAP, NATIVE_INPLACE_BINARY_MAP), fn, *args, **kwargs)

"""Elementwise unary ops of a MaskedTensor (torch/masked/maskedtensor/unary.py):
the op runs on the data, the mask is kept."""
import glasstorch as torch

from .core import _apply_from, _map_mt_args_kwargs, _op_tables, _wrap_result

__all__ = []

UNARY_NAMES = [
    "abs", "absolute", "acos", "arccos", "acosh", "arccosh", "angle", "asin", "arcsin", "asinh",
    "arcsinh", "atan", "arctan", "atanh", "arctanh", "bitwise_not", "ceil", "clamp", "clip",
    "conj_physical", "cos", "cosh", "deg2rad", "digamma", "erf", "erfc", "erfinv", "exp", "exp2",
    "expm1", "fix", "floor", "frac", "lgamma", "log", "log10", "log1p", "log2", "logit", "i0",
    "isnan", "nan_to_num", "neg", "negative", "positive", "pow", "rad2deg", "reciprocal", "round",
    "rsqrt", "sigmoid", "sign", "sgn", "signbit", "sin", "sinc", "sinh", "sqrt", "square", "tan",
    "tanh", "trunc",
]
INPLACE_UNARY_NAMES = [n + "_" for n in UNARY_NAMES
                       if n not in {"angle", "positive", "signbit", "isnan"}]


def _unary_helper(fn, args, kwargs, inplace):
    if kwargs:
        raise ValueError("MaskedTensor unary ops require that len(kwargs) == 0. If you need "
                         "support for this, please open an issue on Github.")
    if any(torch.is_tensor(a) for a in args[1:]):
        raise TypeError("MaskedTensor unary ops do not support additional Tensor arguments")
    mask_args, _ = _map_mt_args_kwargs(args, kwargs, lambda x: x._masked_mask)
    data_args, _ = _map_mt_args_kwargs(args, kwargs, lambda x: x._masked_data)
    result = fn(*data_args)
    if inplace:
        args[0]._set_data_mask(result, mask_args[0])
        return args[0]
    return _wrap_result(result, mask_args[0])


NATIVE_UNARY_MAP, NATIVE_INPLACE_UNARY_MAP = _op_tables(UNARY_NAMES, INPLACE_UNARY_NAMES,
                                                        _unary_helper)
NATIVE_UNARY_FNS = list(NATIVE_UNARY_MAP)
NATIVE_INPLACE_UNARY_FNS = list(NATIVE_INPLACE_UNARY_MAP)


def _apply_native_unary(fn, *args, **kwargs):
    return _apply_from((NATIVE_UNARY_MAP, NATIVE_INPLACE_UNARY_MAP), fn, *args, **kwargs)

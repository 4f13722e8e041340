"""torch.nn.functional: the ops declared with ``python_module: nn`` (``linear``,
``gelu``, ``avg_pool2d``, ``mse_loss`` ... straight from the registry), plus the
Python wrappers whose signatures differ from the aten ops they call, written
as torch/nn/functional.py writes them:

    F.relu(input, inplace=False)              -> aten::relu / aten::relu_
    F.softmax(input, dim, _stacklevel, dtype) -> aten::softmax.int
    F.dropout(input, p, training, inplace)    -> aten::dropout / aten::dropout_
    F.max_pool2d(..., return_indices)         -> aten::max_pool2d(_with_indices)
    F.embedding(input, weight, padding_idx)   -> aten::embedding(weight, input, ...)
    F.cross_entropy(..., reduction='mean')    -> aten::cross_entropy_loss(..., reduction=1)
"""
from __future__ import annotations

import warnings

from .._ops.registry import FUNCTIONS as _F
from .._dispatcher.dispatcher import ops as _ops
from .._tensor import Tensor

globals().update(_F["nn"])

_aten = _ops.aten
_T = _F["torch"]


def _torch(name):
    return _T[name]


# -- reductions ("mean" -> 1) -----------------------------------------------------------

_REDUCTIONS = {"none": 0, "mean": 1, "elementwise_mean": 1, "sum": 2}


def _reduction_enum(reduction: str) -> int:
    try:
        return _REDUCTIONS[reduction]
    except KeyError:
        raise ValueError(f"{reduction} is not a valid value for reduction") from None


def _legacy_reduction(size_average, reduce, emit_warning=True) -> str:
    """torch.nn._reduction.legacy_get_string."""
    warning = ("size_average and reduce args will be deprecated, please use reduction='{}' "
               "instead.")
    if size_average is None:
        size_average = True
    if reduce is None:
        reduce = True
    if size_average and reduce:
        ret = "mean"
    elif reduce:
        ret = "sum"
    else:
        ret = "none"
    if emit_warning:
        warnings.warn(warning.format(ret), stacklevel=3)
    return ret


def _reduction(size_average, reduce, reduction):
    if size_average is not None or reduce is not None:
        reduction = _legacy_reduction(size_average, reduce)
    return _reduction_enum(reduction)


# -- activations --------------------------------------------------------------------------

def _inplace_or(name, input, inplace, *args):
    if inplace:
        return getattr(_aten, name + "_").default(input, *args)
    return _op_fn(name)(input, *args)


def _op_fn(name):
    fn = _F["nn"].get(name) or _T.get(name)
    if fn is None:
        raise NotImplementedError(f"aten::{name} is not available yet")
    return fn


def relu(input: Tensor, inplace: bool = False) -> Tensor:
    return input.relu_() if inplace else _torch("relu")(input)


def relu_(input: Tensor) -> Tensor:
    return input.relu_()


def relu6(input: Tensor, inplace: bool = False) -> Tensor:
    return _op_fn("relu6_" if inplace else "relu6")(input)


def hardtanh(input: Tensor, min_val: float = -1.0, max_val: float = 1.0,
             inplace: bool = False) -> Tensor:
    if min_val > max_val:
        raise ValueError("min_val cannot be greater than max_val")
    return _inplace_or("hardtanh", input, inplace, min_val, max_val)


def elu(input: Tensor, alpha: float = 1.0, inplace: bool = False) -> Tensor:
    return _inplace_or("elu", input, inplace, alpha)


def leaky_relu(input: Tensor, negative_slope: float = 0.01, inplace: bool = False) -> Tensor:
    return _inplace_or("leaky_relu", input, inplace, negative_slope)


def silu(input: Tensor, inplace: bool = False) -> Tensor:
    return _inplace_or("silu", input, inplace)


def mish(input: Tensor, inplace: bool = False) -> Tensor:
    return _inplace_or("mish", input, inplace)


def hardsigmoid(input: Tensor, inplace: bool = False) -> Tensor:
    return _inplace_or("hardsigmoid", input, inplace)


def hardswish(input: Tensor, inplace: bool = False) -> Tensor:
    return _inplace_or("hardswish", input, inplace)


def threshold(input: Tensor, threshold: float, value: float, inplace: bool = False) -> Tensor:
    return _inplace_or("threshold", input, inplace, threshold, value)


def sigmoid(input: Tensor) -> Tensor:
    return input.sigmoid()


def tanh(input: Tensor) -> Tensor:
    return input.tanh()


def _get_softmax_dim(name: str, ndim: int, stacklevel: int) -> int:
    warnings.warn(f"Implicit dimension choice for {name} has been deprecated. Change the call to "
                  "include dim=X as an argument.", stacklevel=stacklevel)
    return 0 if ndim in (0, 1, 3) else 1


def softmax(input: Tensor, dim=None, _stacklevel: int = 3, dtype=None) -> Tensor:
    if dim is None:
        dim = _get_softmax_dim("softmax", input.dim(), _stacklevel)
    return input.softmax(dim) if dtype is None else input.softmax(dim, dtype=dtype)


def log_softmax(input: Tensor, dim=None, _stacklevel: int = 3, dtype=None) -> Tensor:
    if dim is None:
        dim = _get_softmax_dim("log_softmax", input.dim(), _stacklevel)
    return input.log_softmax(dim) if dtype is None else input.log_softmax(dim, dtype=dtype)


def softmin(input: Tensor, dim=None, _stacklevel: int = 3, dtype=None) -> Tensor:
    if dim is None:
        dim = _get_softmax_dim("softmin", input.dim(), _stacklevel)
    return (-input).softmax(dim) if dtype is None else (-input).softmax(dim, dtype=dtype)


# -- dropout -------------------------------------------------------------------------------

def dropout(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False) -> Tensor:
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    return (_torch("dropout_") if inplace else _torch("dropout"))(input, p, training)


# -- linear / convolution -------------------------------------------------------------------

conv1d = _torch("conv1d")
conv2d = _torch("conv2d")


# -- pooling ----------------------------------------------------------------------------------

def max_pool2d(input: Tensor, kernel_size, stride=None, padding=0, dilation=1,
               ceil_mode: bool = False, return_indices: bool = False):
    if stride is None:
        stride = []
    if return_indices:
        return _F["nn"]["max_pool2d_with_indices"](input, kernel_size, stride, padding, dilation,
                                                   ceil_mode)
    return _torch("max_pool2d")(input, kernel_size, stride, padding, dilation, ceil_mode)


def max_pool2d_with_indices(input: Tensor, kernel_size, stride=None, padding=0, dilation=1,
                            ceil_mode: bool = False, return_indices: bool = False):
    if stride is None:
        stride = []
    return _F["nn"]["max_pool2d_with_indices"](input, kernel_size, stride, padding, dilation,
                                               ceil_mode)


def _avg_pool2d(input, kernel_size, stride=None, padding=0, ceil_mode=False,
                count_include_pad=True, divisor_override=None):
    return _F["nn"]["avg_pool2d"](input, kernel_size, [] if stride is None else stride, padding,
                                  ceil_mode, count_include_pad, divisor_override)


avg_pool2d = _avg_pool2d
avg_pool2d.__name__ = avg_pool2d.__qualname__ = "avg_pool2d"


def _list_with_default(out_size, defaults):
    if isinstance(out_size, int):
        return out_size
    if len(defaults) <= len(out_size):
        raise ValueError(f"Input dimension should be at least {len(out_size) + 1}")
    return [v if v is not None else d
            for v, d in zip(out_size, defaults[-len(out_size):])]


def adaptive_avg_pool2d(input: Tensor, output_size) -> Tensor:
    return _F["nn"]["adaptive_avg_pool2d"](input, _list_with_default(output_size, input.size()))


# -- normalization / embedding ---------------------------------------------------------------

def layer_norm(input: Tensor, normalized_shape, weight=None, bias=None, eps: float = 1e-5):
    if isinstance(normalized_shape, int):
        normalized_shape = (normalized_shape,)
    return _torch("layer_norm")(input, list(normalized_shape), weight, bias, eps)


def group_norm(input: Tensor, num_groups: int, weight=None, bias=None, eps: float = 1e-5):
    if input.dim() < 2:
        raise RuntimeError(f"Expected at least 2 dimensions for input tensor but received "
                           f"{input.dim()}")
    return _torch("group_norm")(input, num_groups, weight, bias, eps)


def embedding(input: Tensor, weight: Tensor, padding_idx=None, max_norm=None,
              norm_type: float = 2.0, scale_grad_by_freq: bool = False,
              sparse: bool = False) -> Tensor:
    if padding_idx is not None:
        if padding_idx > 0:
            assert padding_idx < weight.size(0), "Padding_idx must be within num_embeddings"
        elif padding_idx < 0:
            assert padding_idx >= -weight.size(0), "Padding_idx must be within num_embeddings"
            padding_idx = weight.size(0) + padding_idx
    else:
        padding_idx = -1
    if max_norm is not None:
        raise NotImplementedError("F.embedding(max_norm=...) needs embedding_renorm_, "
                                  "which glasstorch does not provide yet")
    return _torch("embedding")(weight, input, padding_idx, scale_grad_by_freq, sparse)


def pad(input: Tensor, pad, mode: str = "constant", value=None) -> Tensor:
    if mode != "constant":
        raise NotImplementedError(f"F.pad(mode={mode!r}) is not implemented yet in glasstorch")
    return _aten.constant_pad_nd.default(input, list(pad), 0 if value is None else value)


# -- losses --------------------------------------------------------------------------------

def nll_loss(input: Tensor, target: Tensor, weight=None, size_average=None,
             ignore_index: int = -100, reduce=None, reduction: str = "mean") -> Tensor:
    return _F["nn"]["nll_loss_nd"](input, target, weight,
                                   _reduction(size_average, reduce, reduction), ignore_index)


def cross_entropy(input: Tensor, target: Tensor, weight=None, size_average=None,
                  ignore_index: int = -100, reduce=None, reduction: str = "mean",
                  label_smoothing: float = 0.0) -> Tensor:
    return _F["nn"]["cross_entropy_loss"](input, target, weight,
                                          _reduction(size_average, reduce, reduction),
                                          ignore_index, label_smoothing)


def _size_warning(input, target):
    if target.size() != input.size():
        warnings.warn(f"Using a target size ({target.size()}) that is different to the input "
                      f"size ({input.size()}). This will likely lead to incorrect results due "
                      "to broadcasting. Please ensure they have the same size.", stacklevel=3)


def _broadcast(input, target):
    return _torch("broadcast_tensors")([input, target])


def _weighted(values, weight, input, reduction):
    if weight.size() != input.size():
        raise ValueError("Weights and input must have the same size.")
    weighted = values * weight
    if reduction == "none":
        return weighted
    if reduction == "sum":
        return _torch("sum")(weighted)
    if reduction == "mean":
        return _torch("sum")(weighted) / _torch("sum")(weight)
    raise ValueError(f"Invalid reduction mode: {reduction}. Expected one of 'none', 'mean', "
                     "'sum'.")


def _regression_loss(name, elementwise):
    """mse_loss / l1_loss: legacy size_average/reduce, broadcasting (with PyTorch's
    warning), an optional elementwise ``weight``, then the aten op."""
    def loss(input: Tensor, target: Tensor, size_average=None, reduce=None,
             reduction: str = "mean", weight=None) -> Tensor:
        _size_warning(input, target)
        if size_average is not None or reduce is not None:
            reduction = _legacy_reduction(size_average, reduce)
        a, b = _broadcast(input, target)
        if weight is not None:
            return _weighted(elementwise(a - b), weight, input, reduction)
        return _F["nn"][name](a, b, _reduction_enum(reduction))
    loss.__name__ = loss.__qualname__ = name
    return loss


mse_loss = _regression_loss("mse_loss", lambda d: _torch("pow")(d, 2))
l1_loss = _regression_loss("l1_loss", lambda d: _torch("abs")(d))


def smooth_l1_loss(input: Tensor, target: Tensor, size_average=None, reduce=None,
                   reduction: str = "mean", beta: float = 1.0) -> Tensor:
    _size_warning(input, target)
    if size_average is not None or reduce is not None:
        reduction = _legacy_reduction(size_average, reduce)
    a, b = _broadcast(input, target)
    if beta == 0.0:
        return _F["nn"]["l1_loss"](a, b, _reduction_enum(reduction))
    return _F["nn"]["smooth_l1_loss"](a, b, _reduction_enum(reduction), beta)


def huber_loss(input: Tensor, target: Tensor, reduction: str = "mean", delta: float = 1.0,
               weight=None) -> Tensor:
    _size_warning(input, target)
    a, b = _broadcast(input, target)
    if weight is None:
        return _F["nn"]["huber_loss"](a, b, _reduction_enum(reduction), delta)
    values = _F["nn"]["huber_loss"](a, b, 0, delta)
    return _weighted(values, weight, input, reduction)


def binary_cross_entropy(input: Tensor, target: Tensor, weight=None, size_average=None,
                         reduce=None, reduction: str = "mean") -> Tensor:
    if size_average is not None or reduce is not None:
        reduction_enum = _reduction(size_average, reduce, reduction)
    else:
        reduction_enum = _reduction_enum(reduction)
    if target.size() != input.size():
        raise ValueError(f"Using a target size ({target.size()}) that is different to the input "
                         f"size ({input.size()}) is deprecated. Please ensure they have the same "
                         "size.")
    if weight is not None:
        new_size = _torch("broadcast_shapes")(input.size(), weight.size()) \
            if "broadcast_shapes" in _T else input.size()
        weight = weight.expand(new_size)
    return _F["nn"]["binary_cross_entropy"](input, target, weight, reduction_enum)


def binary_cross_entropy_with_logits(input: Tensor, target: Tensor, weight=None,
                                     size_average=None, reduce=None, reduction: str = "mean",
                                     pos_weight=None) -> Tensor:
    if size_average is not None or reduce is not None:
        reduction_enum = _reduction(size_average, reduce, reduction)
    else:
        reduction_enum = _reduction_enum(reduction)
    if target.size() != input.size():
        raise ValueError(f"Target size ({target.size()}) must be the same as input size "
                         f"({input.size()})")
    return _torch("binary_cross_entropy_with_logits")(input, target, weight, pos_weight,
                                                      reduction_enum)


# WIP-FRAGMENTS (temporary, merged into this file when the nn issue lands)
from ._functional_wip_layers import *  # noqa: E402,F401,F403
from ._functional_wip_act import *  # noqa: E402,F401,F403

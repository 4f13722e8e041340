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
    F.batch_norm(..., training, momentum)     -> aten::batch_norm -> native_batch_norm
    F.interpolate(mode='bilinear')            -> aten::upsample_bilinear2d.vec
    F.scaled_dot_product_attention            -> aten::scaled_dot_product_attention (picks the
                                                 flash-for-cpu kernel or the math path, as torch)

Sections, in order: reductions helpers, activations, pooling, normalization,
embedding, losses, then layers (batch/instance/rms norm, transposed conv, 1-d pools,
interpolate, pad in every mode, feature dropout), then activations with their
own Python (shrink, glu, selu/celu), distances, the remaining losses, and
attention (``scaled_dot_product_attention``, ``multi_head_attention_forward``).
"""
from __future__ import annotations

import sys

import enum
import math
import warnings
from .._dispatcher import torch_function as _torch_function

from .._core import dtype as _dt
from .._core.layout import contiguous_format as _contiguous_format
from .._ops.kernels._common import _sizes
from .._ops.registry import FUNCTIONS as _F
from .._dispatcher.dispatcher import ops as _ops
from .._tensor import Tensor
from ..autograd.grad_mode import no_grad

globals().update(_F["nn"])

_aten = _ops.aten
_T = _F["torch"]
_nn = _F["nn"]
linear = _nn["linear"]  # (already in globals() from the registry; named here for the callers below)


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


def _threshold(input: Tensor, threshold: float, value: float, inplace: bool = False) -> Tensor:
    """``F.threshold``, under the name PyTorch defines it with (so traced code
    prints ``torch.nn.functional._threshold``)."""
    return _inplace_or("threshold", input, inplace, threshold, value)


threshold = _threshold


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


avg_pool2d = _F["nn"]["avg_pool2d"]     # (the binding itself, out= included, as in torch)


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


conv_transpose1d = _T["conv_transpose1d"]
conv_transpose2d = _T["conv_transpose2d"]
bilinear = _T["bilinear"]
adaptive_avg_pool1d = _T["adaptive_avg_pool1d"]
pixel_shuffle = _T["pixel_shuffle"]
pixel_unshuffle = _T["pixel_unshuffle"]


def _boolean_dispatch(flag, index, if_true, if_false, name):
    """torch._jit_internal.boolean_dispatch: one public function that picks
    ``if_true`` or ``if_false`` by the (positional or keyword) ``flag`` argument."""
    def fn(*args, **kwargs):
        chosen = kwargs[flag] if flag in kwargs else (args[index] if index < len(args) else False)
        return (if_true if chosen else if_false)(*args, **kwargs)
    fn.__name__ = fn.__qualname__ = name
    fn.__module__ = "glasstorch.nn.functional"
    return fn


# -- normalization ---------------------------------------------------------------------

def _verify_batch_size(size) -> None:
    values = size[0]
    for s in size[2:]:
        values *= s
    if values == 1:
        raise ValueError(f"Expected more than 1 value per channel when training, got input size "
                         f"{size}")


def _verify_spatial_size(size) -> None:
    values = 1
    for s in size[2:]:
        values *= s
    if values == 1:
        raise ValueError(f"Expected more than 1 spatial element when training, got input size "
                         f"{size}")


def batch_norm(input: Tensor, running_mean, running_var, weight=None, bias=None,
               training: bool = False, momentum: float = 0.1, eps: float = 1e-5) -> Tensor:
    if training:
        _verify_batch_size(input.size())
    if training and eps <= 0.0:
        raise ValueError(f"batch_norm eps must be positive during training, but got {eps}")
    elif eps < 0.0:
        raise ValueError(f"batch_norm eps must be non-negative, but got {eps}")
    return _T["batch_norm"](input, weight, bias, running_mean, running_var, training, momentum,
                            eps, False)


def instance_norm(input: Tensor, running_mean=None, running_var=None, weight=None, bias=None,
                  use_input_stats: bool = True, momentum: float = 0.1,
                  eps: float = 1e-5) -> Tensor:
    if use_input_stats:
        _verify_spatial_size(input.size())
    return _T["instance_norm"](input, weight, bias, running_mean, running_var, use_input_stats,
                               momentum, eps, False)


def rms_norm(input: Tensor, normalized_shape, weight=None, eps=None) -> Tensor:
    return _T["rms_norm"](input, normalized_shape, weight, eps)


# -- pooling ----------------------------------------------------------------------------

def max_pool1d_with_indices(input: Tensor, kernel_size, stride=None, padding=0, dilation=1,
                            ceil_mode: bool = False, return_indices: bool = False):
    return _T["max_pool1d_with_indices"](input, kernel_size, [] if stride is None else stride,
                                         padding, dilation, ceil_mode)


def _max_pool1d(input: Tensor, kernel_size, stride=None, padding=0, dilation=1,
                ceil_mode: bool = False, return_indices: bool = False) -> Tensor:
    return _T["max_pool1d"](input, kernel_size, [] if stride is None else stride, padding,
                            dilation, ceil_mode)


max_pool1d = _boolean_dispatch("return_indices", 6, max_pool1d_with_indices, _max_pool1d,
                               "max_pool1d")


def avg_pool1d(input: Tensor, kernel_size, stride=None, padding=0, ceil_mode: bool = False,
               count_include_pad: bool = True) -> Tensor:
    return _T["avg_pool1d"](input, kernel_size, [] if stride is None else stride, padding,
                            ceil_mode, count_include_pad)


def adaptive_max_pool1d_with_indices(input: Tensor, output_size, return_indices: bool = False):
    return _T["adaptive_max_pool1d"](input, output_size)


def _adaptive_max_pool1d(input: Tensor, output_size, return_indices: bool = False) -> Tensor:
    return adaptive_max_pool1d_with_indices(input, output_size)[0]


adaptive_max_pool1d = _boolean_dispatch("return_indices", 2, adaptive_max_pool1d_with_indices,
                                        _adaptive_max_pool1d, "adaptive_max_pool1d")


def adaptive_max_pool2d_with_indices(input: Tensor, output_size, return_indices: bool = False):
    return _nn["adaptive_max_pool2d"](input, _list_with_default(output_size, input.size()))


def _adaptive_max_pool2d(input: Tensor, output_size, return_indices: bool = False) -> Tensor:
    return adaptive_max_pool2d_with_indices(input, output_size)[0]


adaptive_max_pool2d = _boolean_dispatch("return_indices", 2, adaptive_max_pool2d_with_indices,
                                        _adaptive_max_pool2d, "adaptive_max_pool2d")


# -- interpolation ----------------------------------------------------------------------

_INTERPOLATE_OPS = {  # (input dims, mode) -> the aten .vec overload F.interpolate calls
    (3, "nearest"): "upsample_nearest1d", (4, "nearest"): "upsample_nearest2d",
    (5, "nearest"): "upsample_nearest3d",
    (3, "nearest-exact"): "_upsample_nearest_exact1d",
    (4, "nearest-exact"): "_upsample_nearest_exact2d",
    (5, "nearest-exact"): "_upsample_nearest_exact3d",
    (3, "linear"): "upsample_linear1d", (4, "bilinear"): "upsample_bilinear2d",
    (5, "trilinear"): "upsample_trilinear3d", (4, "bicubic"): "upsample_bicubic2d",
}
_ANTIALIASED = {"bilinear": "_upsample_bilinear2d_aa", "bicubic": "_upsample_bicubic2d_aa",
                "lanczos": "_upsample_lanczos2d_aa"}
_MODE_DIMS = {"linear": 3, "bilinear": 4, "trilinear": 5}


def _is_integer(x) -> bool:
    return isinstance(x, int) or (isinstance(x, Tensor) and not x.is_floating_point()
                                  and not x.is_complex())


def interpolate(input: Tensor, size=None, scale_factor=None, mode: str = "nearest",
                align_corners=None, recompute_scale_factor=None,
                antialias: bool = False) -> Tensor:
    if mode in ("nearest", "area", "nearest-exact"):
        if align_corners is not None:
            raise ValueError("align_corners option can only be set with the interpolating modes: "
                             "linear | bilinear | bicubic | trilinear")
    elif align_corners is None:
        align_corners = False
    dim = input.dim() - 2
    if size is not None and scale_factor is not None:
        raise ValueError("only one of size or scale_factor should be defined")
    elif size is not None:
        scale_factors = None
        if isinstance(size, (list, tuple)):
            if len(size) != dim:
                raise ValueError(
                    "Input and output must have the same number of spatial dimensions, but got "
                    f"input with spatial dimensions of {list(input.shape[2:])} and output size "
                    f"of {size}. Please provide input tensor in (N, C, d1, d2, ...,dK) format "
                    "and output size in (o1, o2, ...,oK) format.")
            if not all(_is_integer(x) for x in size):
                raise TypeError("expected size to be one of int or Tuple[int] or Tuple[int, int] "
                                "or Tuple[int, int, int], but got size with types "
                                f"{[type(x) for x in size]}")
            output_size = size
        else:
            output_size = [size for _ in range(dim)]
    elif scale_factor is not None:
        output_size = None
        if isinstance(scale_factor, (list, tuple)):
            if len(scale_factor) != dim:
                raise ValueError(
                    "Input and scale_factor must have the same number of spatial dimensions, but "
                    f"got input with spatial dimensions of {list(input.shape[2:])} and "
                    f"scale_factor of shape {scale_factor}. Please provide input tensor in (N, "
                    "C, d1, d2, ...,dK) format and scale_factor in (s1, s2, ...,sK) format.")
            scale_factors = scale_factor
        else:
            scale_factors = [scale_factor for _ in range(dim)]
    else:
        raise ValueError("either size or scale_factor should be defined")

    if recompute_scale_factor is not None and recompute_scale_factor and size is not None:
        raise ValueError("recompute_scale_factor is not meaningful with an explicit size.")
    if mode == "area" and output_size is None:
        recompute_scale_factor = True
    if recompute_scale_factor is not None and recompute_scale_factor:
        output_size = [math.floor(float(input.size(i + 2)) * scale_factors[i])
                       for i in range(dim)]
        scale_factors = None
    if antialias and not (mode in ("bilinear", "bicubic", "lanczos") and input.ndim == 4):
        raise ValueError("Anti-alias option is restricted to bilinear, bicubic, and lanczos modes "
                         "and requires a 4-D tensor as input")
    if output_size is not None:
        output_size = [int(n) for n in output_size]

    if mode == "area" and input.dim() in (3, 4, 5):
        return {3: adaptive_avg_pool1d, 4: adaptive_avg_pool2d,
                5: adaptive_avg_pool3d}[input.dim()](input, output_size)
    if input.dim() == 4 and mode == "lanczos":
        if align_corners:
            raise ValueError("Lanczos mode does not support align_corners=True")
        if not antialias:
            raise ValueError("Lanczos mode requires antialias=True")
    if antialias:
        return _nn[_ANTIALIASED[mode]](input, output_size, align_corners, scale_factors)
    name = _INTERPOLATE_OPS.get((input.dim(), mode))
    if name is not None:
        if align_corners is not None:
            return _nn[name](input, output_size, align_corners, scale_factors)
        return _nn[name](input, output_size, scale_factors)
    if mode in _MODE_DIMS and input.dim() in (3, 4, 5):
        raise NotImplementedError(f"Got {input.dim()}D input, but {mode} mode needs "
                                  f"{_MODE_DIMS[mode]}D input")
    raise NotImplementedError(
        f"Input Error: Only 3D, 4D and 5D input Tensors supported (got {input.dim()}D) for the "
        "modes: nearest | linear | bilinear | bicubic | trilinear | lanczos | area | "
        f"nearest-exact (got {mode})")


def upsample(input, size=None, scale_factor=None, mode="nearest", align_corners=None):
    warnings.warn("`nn.functional.upsample` is deprecated. Use `nn.functional.interpolate` "
                  "instead.", stacklevel=2)
    return interpolate(input, size, scale_factor, mode, align_corners)


def upsample_nearest(input, size=None, scale_factor=None):
    warnings.warn("`nn.functional.upsample_nearest` is deprecated. Use "
                  "`nn.functional.interpolate` instead.", stacklevel=2)
    return interpolate(input, size, scale_factor, mode="nearest")


def upsample_bilinear(input, size=None, scale_factor=None):
    warnings.warn("`nn.functional.upsample_bilinear` is deprecated. Use "
                  "`nn.functional.interpolate` instead.", stacklevel=2)
    return interpolate(input, size, scale_factor, mode="bilinear", align_corners=True)


# -- padding ----------------------------------------------------------------------------

def pad(input: Tensor, pad, mode: str = "constant", value=None) -> Tensor:
    return _nn["pad"](input, pad, mode, value)


# -- dropout ----------------------------------------------------------------------------

def _check_p(p):
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")


def _feature_dropout(input, p, training, inplace):
    return (_T["feature_dropout_"] if inplace else _T["feature_dropout"])(input, p, training)


def _channelwise_dropout(input, p, training, inplace, batched):
    """Feature dropout, adding the batch dim of an unbatched input (in place for
    ``inplace``, as PyTorch does) and removing it again."""
    if not batched:
        input = input.unsqueeze_(0) if inplace else input.unsqueeze(0)
    result = _feature_dropout(input, p, training, inplace)
    if not batched:
        result = result.squeeze_(0) if inplace else result.squeeze(0)
    return result


def dropout1d(input: Tensor, p: float = 0.5, training: bool = True,
              inplace: bool = False) -> Tensor:
    _check_p(p)
    inp_dim = input.dim()
    if inp_dim not in (2, 3):
        raise RuntimeError(f"dropout1d: Expected 2D or 3D input, but received a {inp_dim}D "
                           "input. Note that dropout1d exists to provide channel-wise dropout on "
                           "inputs with 1 spatial dimension, a channel dimension, and an optional "
                           "batch dimension (i.e. 2D or 3D inputs).")
    return _channelwise_dropout(input, p, training, inplace, inp_dim == 3)


def _wrong_dims_warning(name, inp_dim, dims):
    spatial = {"dropout2d": 2, "dropout3d": 3}[name]
    warnings.warn(f"{name}: Received a {inp_dim}-D input to {name}, which is deprecated and will "
                  "result in an error in a future release. To retain the behavior and silence "
                  f"this warning, please use dropout instead. Note that {name} exists to provide "
                  f"channel-wise dropout on inputs with {spatial} spatial dimensions, a channel "
                  f"dimension, and an optional batch dimension (i.e. {dims[0]}D or {dims[1]}D "
                  "inputs).", stacklevel=3)


def dropout2d(input: Tensor, p: float = 0.5, training: bool = True,
              inplace: bool = False) -> Tensor:
    _check_p(p)
    inp_dim = input.dim()
    if inp_dim not in (3, 4):
        _wrong_dims_warning("dropout2d", inp_dim, (3, 4))
    if inp_dim == 3:
        warnings.warn("dropout2d: Received a 3D input to dropout2d and assuming that channel-wise "
                      "1D dropout behavior is desired - input is interpreted as shape (N, C, L), "
                      "where C is the channel dim. This behavior will change in a future release "
                      "to interpret the input as one without a batch dimension, i.e. shape (C, H, "
                      "W). To maintain the 1D channel-wise dropout behavior, please switch to "
                      "using dropout1d instead.", stacklevel=2)
    return _feature_dropout(input, p, training, inplace)


def dropout3d(input: Tensor, p: float = 0.5, training: bool = True,
              inplace: bool = False) -> Tensor:
    _check_p(p)
    inp_dim = input.dim()
    if inp_dim not in (4, 5):
        _wrong_dims_warning("dropout3d", inp_dim, (4, 5))
    return _channelwise_dropout(input, p, training, inplace, inp_dim == 5)


def alpha_dropout(input: Tensor, p: float = 0.5, training: bool = False,
                  inplace: bool = False) -> Tensor:
    _check_p(p)
    return (_T["alpha_dropout_"] if inplace else _T["alpha_dropout"])(input, p, training)


def feature_alpha_dropout(input: Tensor, p: float = 0.5, training: bool = False,
                          inplace: bool = False) -> Tensor:
    _check_p(p)
    return (_T["feature_alpha_dropout_"] if inplace else _T["feature_alpha_dropout"])(
        input, p, training)


# -- embedding --------------------------------------------------------------------------

def embedding(input: Tensor, weight: Tensor, padding_idx=None, max_norm=None,
              norm_type: float = 2.0, scale_grad_by_freq: bool = False,
              sparse: bool = False) -> Tensor:
    if padding_idx is not None:
        if padding_idx > 0:
            if padding_idx >= weight.size(0):
                raise AssertionError("Padding_idx must be within num_embeddings")
        elif padding_idx < 0:
            if padding_idx < -weight.size(0):
                raise AssertionError("Padding_idx must be within num_embeddings")
            padding_idx = weight.size(0) + padding_idx
    else:
        padding_idx = -1
    if max_norm is not None:
        input = input.contiguous()
        with no_grad():     # torch.nn.functional._no_grad_embedding_renorm_
            _T["embedding_renorm_"](weight.detach(), input, max_norm, norm_type)
    return _T["embedding"](weight, input, padding_idx, scale_grad_by_freq, sparse)


# -- activations ---------------------------------------------------------------------------

logsigmoid = _nn["log_sigmoid"]
hardshrink = _T["hardshrink"]
prelu = _T["prelu"]
threshold_ = _T["threshold_"]
selu_ = _T["selu_"]
celu_ = _T["celu_"]


def tanhshrink(input):
    return input - input.tanh()


def softsign(input):
    return input / (input.abs() + 1)


def glu(input: Tensor, dim: int = -1) -> Tensor:
    if input.dim() == 0:
        raise RuntimeError("glu does not support scalars because halving size must be even")
    return _nn["glu"](input, dim)


def selu(input: Tensor, inplace: bool = False) -> Tensor:
    return _T["selu_"](input) if inplace else _T["selu"](input)


def celu(input: Tensor, alpha: float = 1.0, inplace: bool = False) -> Tensor:
    return _T["celu_"](input, alpha) if inplace else _T["celu"](input, alpha)


# -- distances -------------------------------------------------------------------------------

cosine_similarity = _T["cosine_similarity"]
pairwise_distance = _T["pairwise_distance"]


def normalize(input: Tensor, p: float = 2.0, dim: int = 1, eps: float = 1e-12,
              out: Tensor | None = None) -> Tensor:
    """input / max(||input||_p, eps) along ``dim``."""
    if out is None:
        denom = input.norm(p, dim, keepdim=True).clamp_min(eps).expand_as(input)
        return input / denom
    denom = input.norm(p, dim, keepdim=True).clamp_min_(eps).expand_as(input)
    return _T["div"](input, denom, out=out)


# -- KL divergence ---------------------------------------------------------------------------

def kl_div(input: Tensor, target: Tensor, size_average=None, reduce=None,
           reduction: str = "mean", log_target: bool = False) -> Tensor:
    """'batchmean' sums, then divides by the batch size (the KL divergence's definition);
    'mean' divides by every element and warns about it."""
    if size_average is not None or reduce is not None:
        reduction_enum = _reduction(size_average, reduce, reduction)
    else:
        if reduction == "mean":
            warnings.warn(
                "reduction: 'mean' divides the total loss by both the batch size and the "
                "support size.'batchmean' divides only by the batch size, and aligns with the "
                "KL div math definition.'mean' will be changed to behave the same as "
                "'batchmean' in the next major release.", stacklevel=2)
        reduction_enum = _reduction_enum("sum" if reduction == "batchmean"
                                                     else reduction)
    reduced = _T["kl_div"](input, target, reduction_enum, log_target=log_target)
    if reduction == "batchmean" and input.dim() != 0:
        reduced = reduced / input.size()[0]
    return reduced


# -- margin and embedding losses -----------------------------------------------------------

def margin_ranking_loss(input1: Tensor, input2: Tensor, target: Tensor, margin: float = 0,
                        size_average=None, reduce=None, reduction: str = "mean") -> Tensor:
    reduction_enum = _reduction(size_average, reduce, reduction)
    if input1.dim() != input2.dim() or input1.dim() != target.dim():
        raise RuntimeError(f"margin_ranking_loss : All input tensors should have same dimension "
                           f"but got sizes: input1: {input1.size()}, input2: {input2.size()}, "
                           f"target: {target.size()} ")
    return _T["margin_ranking_loss"](input1, input2, target, margin, reduction_enum)


def hinge_embedding_loss(input: Tensor, target: Tensor, margin: float = 1.0, size_average=None,
                         reduce=None, reduction: str = "mean") -> Tensor:
    return _T["hinge_embedding_loss"](input, target, margin,
                                      _reduction(size_average, reduce, reduction))


def cosine_embedding_loss(input1: Tensor, input2: Tensor, target: Tensor, margin: float = 0,
                          size_average=None, reduce=None, reduction: str = "mean") -> Tensor:
    return _T["cosine_embedding_loss"](input1, input2, target, margin,
                                       _reduction(size_average, reduce, reduction))


def triplet_margin_loss(anchor: Tensor, positive: Tensor, negative: Tensor, margin: float = 1.0,
                        p: float = 2, eps: float = 1e-6, swap: bool = False, size_average=None,
                        reduce=None, reduction: str = "mean") -> Tensor:
    reduction_enum = _reduction(size_average, reduce, reduction)
    if margin <= 0:
        raise ValueError(f"margin must be greater than 0, got {margin}")
    return _T["triplet_margin_loss"](anchor, positive, negative, margin, p, eps, swap,
                                     reduction_enum)


def poisson_nll_loss(input: Tensor, target: Tensor, log_input: bool = True, full: bool = False,
                     size_average=None, eps: float = 1e-8, reduce=None,
                     reduction: str = "mean") -> Tensor:
    if size_average is not None or reduce is not None:
        reduction = _legacy_reduction(size_average, reduce)
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(reduction + " is not a valid value for reduction")
    return _T["poisson_nll_loss"](input, target, log_input, full, eps,
                                  _reduction_enum(reduction))


def multilabel_soft_margin_loss(input: Tensor, target: Tensor, weight=None, size_average=None,
                                reduce=None, reduction: str = "mean") -> Tensor:
    """Binary cross-entropy with logits per class, averaged over the classes (last dim)."""
    if size_average is not None or reduce is not None:
        reduction = _legacy_reduction(size_average, reduce)
    loss = -(target * logsigmoid(input) + (1 - target) * logsigmoid(-input))
    if weight is not None:
        loss = loss * weight
    class_dim = input.dim() - 1
    loss = loss.sum(dim=class_dim) / input.size(class_dim)
    if reduction == "none":
        return loss
    if reduction == "mean":
        return loss.mean()
    if reduction == "sum":
        return loss.sum()
    raise ValueError(reduction + " is not valid")


# -- attention -------------------------------------------------------------------------------

scaled_dot_product_attention = _nn["scaled_dot_product_attention"]


def _none_or_dtype(input):
    if input is None:
        return None
    if isinstance(input, Tensor):
        return input.dtype
    raise RuntimeError("input to _none_or_dtype() must be None or torch.Tensor")


def _canonical_mask(mask, mask_name, other_type, other_name, target_type, check_other=True):
    """A bool mask becomes an additive float mask of ``target_type`` (-inf where True);
    a float mask is returned as is."""
    if mask is None:
        return None
    is_float = mask.is_floating_point()
    if mask.dtype is not _dt.bool_ and not is_float:
        raise AssertionError(f"only bool and floating types of {mask_name} are supported")
    if check_other and other_type is not None and mask.dtype != other_type:
        warnings.warn(f"Support for mismatched {mask_name} and {other_name} is deprecated. Use "
                      "same type for both instead.", stacklevel=2)
    if not is_float:
        mask = _T["zeros_like"](mask, dtype=target_type).masked_fill_(mask, float("-inf"))
    return mask


def _mha_shape_check(query, key, value, key_padding_mask, attn_mask, num_heads):
    """Checks the ranks; True for batched (3-D) input, False for unbatched (2-D)."""
    if query.dim() not in (2, 3):
        raise AssertionError(f"query should be unbatched 2D or batched 3D tensor but received "
                             f"{query.dim()}-D query tensor")
    batched = query.dim() == 3
    kind = "batched (3-D)" if batched else "unbatched (2-D)"
    if key.dim() != query.dim() or value.dim() != query.dim():
        raise AssertionError(f"For {kind} `query`, expected `key` and `value` to be "
                             f"{query.dim()}-D but found {key.dim()}-D and {value.dim()}-D "
                             "tensors respectively")
    padding_rank = query.dim() - 1
    if key_padding_mask is not None and key_padding_mask.dim() != padding_rank:
        raise AssertionError(f"For {kind} `query`, expected `key_padding_mask` to be `None` or "
                             f"{padding_rank}-D but found {key_padding_mask.dim()}-D tensor "
                             "instead")
    if attn_mask is not None:
        if attn_mask.dim() not in (2, 3):
            raise AssertionError(f"For {kind} `query`, expected `attn_mask` to be `None`, 2-D or "
                                 f"3-D but found {attn_mask.dim()}-D tensor instead")
        if not batched and attn_mask.dim() == 3:
            expected = (num_heads, query.shape[0], key.shape[0])
            if attn_mask.shape != expected:
                raise AssertionError(f"Expected `attn_mask` shape to be {expected} but got "
                                     f"{attn_mask.shape}")
    return batched


def _in_projection_packed(q, k, v, w, b=None):
    """q, k, v projected by the packed (3E, E) weight: one matmul when q, k, v are the
    same tensor (self-attention), two when only k and v are (encoder-decoder)."""
    embed = q.size(-1)
    if k is v:
        if q is k:
            proj = linear(q, w, b)
            # (..., 3E) -> (3, ..., E), so each projection is contiguous
            proj = proj.unflatten(-1, (3, embed)).unsqueeze(0).transpose(0, -2).squeeze(-2)
            proj = proj.contiguous()
            return proj[0], proj[1], proj[2]
        w_q, w_kv = w.split([embed, embed * 2])
        b_q, b_kv = (None, None) if b is None else b.split([embed, embed * 2])
        kv_proj = linear(k, w_kv, b_kv).unflatten(-1, (2, embed)).unsqueeze(0)
        kv_proj = kv_proj.transpose(0, -2).squeeze(-2).contiguous()
        return linear(q, w_q, b_q), kv_proj[0], kv_proj[1]
    w_q, w_k, w_v = w.chunk(3)
    b_q, b_k, b_v = (None, None, None) if b is None else b.chunk(3)
    return linear(q, w_q, b_q), linear(k, w_k, b_k), linear(v, w_v, b_v)


def _in_projection(q, k, v, w_q, w_k, w_v, b_q=None, b_k=None, b_v=None):
    """Three separate projections (key/value may have their own embedding sizes)."""
    eq, ek, ev = q.size(-1), k.size(-1), v.size(-1)
    for what, tensor, expected in (("query weights", w_q, (eq, eq)), ("key weights", w_k, (eq, ek)),
                                   ("value weights", w_v, (eq, ev)), ("query bias", b_q, (eq,)),
                                   ("key bias", b_k, (eq,)), ("value bias", b_v, (eq,))):
        if tensor is not None and tensor.shape != expected:
            raise AssertionError(f"expecting {what} shape of {expected}, but got {tensor.shape}")
    return linear(q, w_q, b_q), linear(k, w_k, b_k), linear(v, w_v, b_v)


def _check_key_padding_mask(key_padding_mask, src_len, bsz):
    if key_padding_mask.shape[0] != bsz:
        raise AssertionError(f"Expected key_padded_mask.shape[0] to be {bsz}, but got "
                             f"{key_padding_mask.shape[0]}")
    if key_padding_mask.shape[1] != src_len:
        raise AssertionError(f"Expected key_padded_mask.shape[1] to be {src_len}, but got "
                             f"{key_padding_mask.shape[1]}")


def _attn_mask_3d(attn_mask, tgt_len, src_len, bsz, num_heads):
    """attn_mask as (1 or N * H, L, S)."""
    if attn_mask.dim() == 2:
        if attn_mask.shape != (tgt_len, src_len):
            raise RuntimeError(f"The shape of the 2D attn_mask is {attn_mask.shape}, but should "
                               f"be {(tgt_len, src_len)}.")
        return attn_mask.unsqueeze(0)
    if attn_mask.dim() == 3:
        if attn_mask.shape != (bsz * num_heads, tgt_len, src_len):
            raise RuntimeError(f"The shape of the 3D attn_mask is {attn_mask.shape}, but should "
                               f"be {(bsz * num_heads, tgt_len, src_len)}.")
        return attn_mask
    raise RuntimeError(f"attn_mask's dimension {attn_mask.dim()} is not supported")


def _split_heads(t, length, bsz, num_heads, head_dim):
    """(length, N, E) -> (N * H, length, E / H)."""
    return t.view(length, bsz * num_heads, head_dim).transpose(0, 1)


def multi_head_attention_forward(query, key, value, embed_dim_to_check: int, num_heads: int,
                                 in_proj_weight, in_proj_bias, bias_k, bias_v,
                                 add_zero_attn: bool, dropout_p: float, out_proj_weight,
                                 out_proj_bias, training: bool = True, key_padding_mask=None,
                                 need_weights: bool = True, attn_mask=None,
                                 use_separate_proj_weight: bool = False, q_proj_weight=None,
                                 k_proj_weight=None, v_proj_weight=None, static_k=None,
                                 static_v=None, average_attn_weights: bool = True,
                                 is_causal: bool = False):
    """Sequence-first (L, N, E) query and (S, N, E) key/value (or unbatched (L, E));
    returns (output, weights or None)."""
    is_batched = _mha_shape_check(query, key, value, key_padding_mask, attn_mask, num_heads)
    if not is_batched:      # compute batched, with a batch of one
        query, key, value = query.unsqueeze(1), key.unsqueeze(1), value.unsqueeze(1)
        if key_padding_mask is not None:
            key_padding_mask = key_padding_mask.unsqueeze(0)
    tgt_len, bsz, embed_dim = query.shape
    src_len = key.shape[0]

    key_padding_mask = _canonical_mask(key_padding_mask, "key_padding_mask",
                                       _none_or_dtype(attn_mask), "attn_mask", query.dtype)
    if is_causal and attn_mask is None:
        raise RuntimeError("Need attn_mask if specifying the is_causal hint. You may use the "
                           "Transformer module method `generate_square_subsequent_mask` to "
                           "create this mask.")
    if is_causal and key_padding_mask is None and not need_weights:
        attn_mask = None    # sdpa applies the causal mask itself
    else:
        attn_mask = _canonical_mask(attn_mask, "attn_mask", None, "", query.dtype,
                                    check_other=False)
        if key_padding_mask is not None:
            is_causal = False   # merged with key_padding_mask below: no longer causal

    if embed_dim != embed_dim_to_check:
        raise AssertionError(f"was expecting embedding dimension of {embed_dim_to_check}, but "
                             f"got {embed_dim}")
    head_dim = embed_dim // num_heads
    if head_dim * num_heads != embed_dim:
        raise AssertionError(f"embed_dim {embed_dim} not divisible by num_heads {num_heads}")
    if use_separate_proj_weight:
        if key.shape[:2] != value.shape[:2]:
            raise AssertionError(f"key's sequence and batch dims {key.shape[:2]} do not match "
                                 f"value's {value.shape[:2]}")
    elif key.shape != value.shape:
        raise AssertionError(f"key shape {key.shape} does not match value shape {value.shape}")

    # in-projection
    if not use_separate_proj_weight:
        if in_proj_weight is None:
            raise AssertionError("use_separate_proj_weight is False but in_proj_weight is None")
        q, k, v = _in_projection_packed(query, key, value, in_proj_weight, in_proj_bias)
    else:
        for name, weight in (("q", q_proj_weight), ("k", k_proj_weight), ("v", v_proj_weight)):
            if weight is None:
                raise AssertionError(f"use_separate_proj_weight is True but {name}_proj_weight "
                                     "is None")
        biases = (None, None, None) if in_proj_bias is None else in_proj_bias.chunk(3)
        q, k, v = _in_projection(query, key, value, q_proj_weight, k_proj_weight,
                                 v_proj_weight, *biases)

    if attn_mask is not None:
        attn_mask = _attn_mask_3d(attn_mask, tgt_len, src_len, bsz, num_heads)

    # learned key/value biases appended along the sequence
    if bias_k is not None and bias_v is not None:
        if static_k is not None:
            raise AssertionError("bias cannot be added to static key.")
        if static_v is not None:
            raise AssertionError("bias cannot be added to static value.")
        k = _T["cat"]([k, bias_k.repeat(1, bsz, 1)])
        v = _T["cat"]([v, bias_v.repeat(1, bsz, 1)])
        if attn_mask is not None:
            attn_mask = pad(attn_mask, (0, 1))
        if key_padding_mask is not None:
            key_padding_mask = pad(key_padding_mask, (0, 1))
    elif bias_k is not None:
        raise AssertionError("bias_k is set but bias_v is None")
    elif bias_v is not None:
        raise AssertionError("bias_v is set but bias_k is None")

    # heads, batch first
    q = _split_heads(q, tgt_len, bsz, num_heads, head_dim)
    k = _split_heads(k, k.shape[0], bsz, num_heads, head_dim) if static_k is None else \
        _static(static_k, "static_k", bsz * num_heads, head_dim)
    v = _split_heads(v, v.shape[0], bsz, num_heads, head_dim) if static_v is None else \
        _static(static_v, "static_v", bsz * num_heads, head_dim)

    if add_zero_attn:
        zeros_shape = (bsz * num_heads, 1, head_dim)
        k = _T["cat"]([k, _T["zeros"](zeros_shape, dtype=k.dtype, device=k.device)], dim=1)
        v = _T["cat"]([v, _T["zeros"](zeros_shape, dtype=v.dtype, device=v.device)], dim=1)
        if attn_mask is not None:
            attn_mask = pad(attn_mask, (0, 1))
        if key_padding_mask is not None:
            key_padding_mask = pad(key_padding_mask, (0, 1))
    src_len = k.size(1)

    if key_padding_mask is not None:
        _check_key_padding_mask(key_padding_mask, src_len, bsz)
        key_padding_mask = key_padding_mask.view(bsz, 1, 1, src_len).expand(
            -1, num_heads, -1, -1).reshape(bsz * num_heads, 1, src_len)
        attn_mask = key_padding_mask if attn_mask is None else attn_mask + key_padding_mask

    if not training:
        dropout_p = 0.0

    if need_weights:
        batch_heads, _, head_size = q.shape
        q_scaled = q * math.sqrt(1.0 / float(head_size))
        if is_causal and attn_mask is None:
            raise AssertionError("FIXME: is_causal not implemented for need_weights")
        if attn_mask is not None:
            weights = _T["baddbmm"](attn_mask, q_scaled, k.transpose(-2, -1))
        else:
            weights = _T["bmm"](q_scaled, k.transpose(-2, -1))
        weights = softmax(weights, dim=-1)
        if dropout_p > 0.0:
            weights = dropout(weights, p=dropout_p)
        attn_output = _T["bmm"](weights, v)
        attn_output = attn_output.transpose(0, 1).reshape(tgt_len * bsz, embed_dim)
        attn_output = linear(attn_output, out_proj_weight, out_proj_bias)
        attn_output = attn_output.view(tgt_len, bsz, attn_output.size(1))
        weights = weights.view(bsz, num_heads, tgt_len, src_len)
        if average_attn_weights:
            weights = weights.mean(dim=1)
        if not is_batched:
            attn_output, weights = attn_output.squeeze(1), weights.squeeze(0)
        return attn_output, weights

    # sdpa takes (N, H, L, E / H) and a mask broadcastable to (N, H, L, S)
    if attn_mask is not None:
        if attn_mask.size(0) == 1 and attn_mask.dim() == 3:
            attn_mask = attn_mask.unsqueeze(0)
        else:
            attn_mask = attn_mask.view(bsz, num_heads, -1, src_len)
    q = q.view(bsz, num_heads, tgt_len, head_dim)
    k = k.view(bsz, num_heads, src_len, head_dim)
    v = v.view(bsz, num_heads, src_len, head_dim)
    attn_output = scaled_dot_product_attention(q, k, v, attn_mask, dropout_p, is_causal)
    attn_output = attn_output.permute(2, 0, 1, 3).reshape(bsz * tgt_len, embed_dim)
    attn_output = linear(attn_output, out_proj_weight, out_proj_bias)
    attn_output = attn_output.view(tgt_len, bsz, attn_output.size(1))
    if not is_batched:
        attn_output = attn_output.squeeze(1)
    return attn_output, None


def _static(t, name, batch_heads, head_dim):
    """A precomputed (N * H, S, E / H) key or value."""
    if t.size(0) != batch_heads:
        raise AssertionError(f"expecting {name}.size(0) of {batch_heads}, but got {t.size(0)}")
    if t.size(2) != head_dim:
        raise AssertionError(f"expecting {name}.size(2) of {head_dim}, but got {t.size(2)}")
    return t


# -- Gaussian negative log likelihood (pure Python in PyTorch too) ---------------------------

def gaussian_nll_loss(input, target, var, full=False, eps=1e-6, reduction="mean"):
    """0.5 * (log(max(var, eps)) + (input - target)^2 / max(var, eps)) [+ 0.5 log(2 pi)];
    ``var`` may be a float, input-shaped, or short of one (size-1) dim (homoscedastic)."""
    if isinstance(var, float):
        if var < 0:
            raise ValueError("var has negative entry/entries")
        var = var * _T["ones_like"](input)
    elif _T["any"](var < 0):
        raise ValueError("var has negative entry/entries")
    if var.size() != input.size():
        if input.size()[:-1] == var.size():
            var = _T["unsqueeze"](var, -1)
        elif not (input.ndim == var.ndim and sum(
                v for i, v in zip(input.size(), var.size()) if i != v) == 1):
            raise ValueError("var is of incorrect size")
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(reduction + " is not valid")
    var = var.clone()
    with no_grad():
        var.clamp_(min=eps)
    loss = 0.5 * (_T["log"](var) + (input - target) ** 2 / var)
    if full:
        loss += 0.5 * math.log(2 * math.pi)
    if reduction == "mean":
        return loss.mean()
    if reduction == "sum":
        return loss.sum()
    return loss


# -- 3-d convolution and pooling, Lp pooling, unpooling, fractional pooling -------------

conv3d = _T["conv3d"]
conv_transpose3d = _T["conv_transpose3d"]
avg_pool3d = _nn["avg_pool3d"]


def max_pool3d_with_indices(input: Tensor, kernel_size, stride=None, padding=0, dilation=1,
                            ceil_mode: bool = False, return_indices: bool = False):
    return _nn["max_pool3d_with_indices"](input, kernel_size, [] if stride is None else stride,
                                          padding, dilation, ceil_mode)


def _max_pool3d(input: Tensor, kernel_size, stride=None, padding=0, dilation=1,
                ceil_mode: bool = False, return_indices: bool = False) -> Tensor:
    return _T["max_pool3d"](input, kernel_size, [] if stride is None else stride, padding,
                            dilation, ceil_mode)


max_pool3d = _boolean_dispatch("return_indices", 6, max_pool3d_with_indices, _max_pool3d,
                               "max_pool3d")


def adaptive_avg_pool3d(input: Tensor, output_size) -> Tensor:
    return _nn["adaptive_avg_pool3d"](input, _list_with_default(output_size, input.size()))


def adaptive_max_pool3d_with_indices(input: Tensor, output_size, return_indices: bool = False):
    return _nn["adaptive_max_pool3d"](input, _list_with_default(output_size, input.size()))


def _adaptive_max_pool3d(input: Tensor, output_size, return_indices: bool = False) -> Tensor:
    return adaptive_max_pool3d_with_indices(input, output_size)[0]


adaptive_max_pool3d = _boolean_dispatch("return_indices", 2, adaptive_max_pool3d_with_indices,
                                        _adaptive_max_pool3d, "adaptive_max_pool3d")


def _lp_pool(k, input, norm_type, kernel_size, stride, ceil_mode):
    """F.lp_pool{1,2,3}d: (sum over the window of x**p) ** (1/p), from the average
    pool of x**p (max pooling of |x| for p = +-inf)."""
    max_pool, avg_pool = {1: (max_pool1d, avg_pool1d), 2: (max_pool2d, avg_pool2d),
                          3: (max_pool3d, avg_pool3d)}[k]
    if isinstance(norm_type, (int, float)):
        if norm_type == float("inf"):
            return max_pool(input.abs(), kernel_size, stride, 0, 1, ceil_mode)
        if norm_type == -float("inf"):
            return -max_pool(-input.abs(), kernel_size, stride, 0, 1, ceil_mode)
    if stride is not None:
        out = avg_pool(input.pow(norm_type), kernel_size, stride, 0, ceil_mode)
    else:
        out = avg_pool(input.pow(norm_type), kernel_size, padding=0, ceil_mode=ceil_mode)
    size = kernel_size if k == 1 else math.prod(_ntuple(kernel_size, k))
    return (_T["sign"](out) * relu(_T["abs"](out))).mul(size).pow(1.0 / norm_type)


def _ntuple(value, n):
    return tuple(value) if isinstance(value, (list, tuple)) else (value,) * n


def lp_pool1d(input: Tensor, norm_type, kernel_size: int, stride=None,
              ceil_mode: bool = False) -> Tensor:
    return _lp_pool(1, input, norm_type, kernel_size, stride, ceil_mode)


def lp_pool2d(input: Tensor, norm_type, kernel_size, stride=None,
              ceil_mode: bool = False) -> Tensor:
    return _lp_pool(2, input, norm_type, kernel_size, stride, ceil_mode)


def lp_pool3d(input: Tensor, norm_type, kernel_size, stride=None,
              ceil_mode: bool = False) -> Tensor:
    return _lp_pool(3, input, norm_type, kernel_size, stride, ceil_mode)


def _unpool_output_size(input, kernel_size, stride, padding, output_size):
    """F._unpool_output_size: the pool's input size (or a checked given one)."""
    default = [(input.size(-len(kernel_size) + d) - 1) * stride[d] + kernel_size[d]
               - 2 * padding[d] for d in range(len(kernel_size))]
    if output_size is None:
        result = default
    else:
        if len(output_size) == len(kernel_size) + 2:
            output_size = output_size[2:]
        if len(output_size) != len(kernel_size):
            raise ValueError(f"output_size should be a sequence containing {len(kernel_size)} "
                             f"or {len(kernel_size) + 2} elements, but it has a length of "
                             f"'{len(output_size)}'")
        for d in range(len(kernel_size)):
            low, high = default[d] - stride[d], default[d] + stride[d]
            if not low < output_size[d] < high:
                raise ValueError(f'invalid output_size "{output_size}" (dim {d} must be between '
                                 f'{low} and {high})')
        result = output_size
    for d in range(len(kernel_size)):
        if result[d] < 0:
            raise ValueError("max_unpooling: output_size must contain non-negative spatial "
                             f"dimensions, but got output_size[{d}]={result[d]}")
    return result


def _unpool_args(k, kernel_size, stride, padding):
    kernel_size = _ntuple(kernel_size, k)
    return kernel_size, (_ntuple(stride, k) if stride is not None else kernel_size), \
        _ntuple(padding, k)


def max_unpool1d(input: Tensor, indices: Tensor, kernel_size, stride=None, padding=0,
                 output_size=None) -> Tensor:
    kernel_size, stride, padding = _unpool_args(1, kernel_size, stride, padding)
    size = list(_unpool_output_size(input, kernel_size, stride, padding, output_size)) + [1]
    return _nn["max_unpool2d"](input.unsqueeze(-1), indices.unsqueeze(-1), size).squeeze(-1)


def max_unpool2d(input: Tensor, indices: Tensor, kernel_size, stride=None, padding=0,
                 output_size=None) -> Tensor:
    kernel_size, stride, padding = _unpool_args(2, kernel_size, stride, padding)
    size = _unpool_output_size(input, kernel_size, stride, padding, output_size)
    return _nn["max_unpool2d"](input, indices, size)


def max_unpool3d(input: Tensor, indices: Tensor, kernel_size, stride=None, padding=0,
                 output_size=None) -> Tensor:
    kernel_size, stride, padding = _unpool_args(3, kernel_size, stride, padding)
    size = _unpool_output_size(input, kernel_size, stride, padding, output_size)
    return _nn["max_unpool3d"](input, indices, size, stride, padding)


def _fractional_max_pool(k, input, kernel_size, output_size, output_ratio, _random_samples):
    """F.fractional_max_pool{2,3}d: the output size from a ratio, and the window
    offsets drawn as torch.rand(N, C, k) in the input's dtype (torch's stream)."""
    name = f"fractional_max_pool{k}d"
    if output_size is None and output_ratio is None:
        raise ValueError(f"{name} requires specifying either an output_size or an output_ratio")
    if output_size is None:
        if k == 2 and len(output_ratio) > 2:    # (a bare float raises TypeError, as in torch)
            raise ValueError("fractional_max_pool2d requires output_ratio to either be a single "
                             "Int or tuple of Ints.")
        ratio = _ntuple(output_ratio, k)
        output_size = [int(input.size(d - k) * ratio[d]) for d in range(k)]
    if _random_samples is None:
        batch = 1 if input.dim() == k + 1 else input.size(0)
        _random_samples = _T["rand"](batch, input.size(-k - 1), k, dtype=input.dtype,
                                     device=input.device)
    return _nn[name](input, kernel_size, output_size, _random_samples)


def fractional_max_pool2d_with_indices(input: Tensor, kernel_size, output_size=None,
                                       output_ratio=None, return_indices: bool = False,
                                       _random_samples=None):
    return _fractional_max_pool(2, input, kernel_size, output_size, output_ratio,
                                _random_samples)


def _fractional_max_pool2d(input: Tensor, kernel_size, output_size=None, output_ratio=None,
                           return_indices: bool = False, _random_samples=None) -> Tensor:
    return _fractional_max_pool(2, input, kernel_size, output_size, output_ratio,
                                _random_samples)[0]


fractional_max_pool2d = _boolean_dispatch("return_indices", 4,
                                          fractional_max_pool2d_with_indices,
                                          _fractional_max_pool2d, "fractional_max_pool2d")


def fractional_max_pool3d_with_indices(input: Tensor, kernel_size, output_size=None,
                                       output_ratio=None, return_indices: bool = False,
                                       _random_samples=None):
    return _fractional_max_pool(3, input, kernel_size, output_size, output_ratio,
                                _random_samples)


def _fractional_max_pool3d(input: Tensor, kernel_size, output_size=None, output_ratio=None,
                           return_indices: bool = False, _random_samples=None) -> Tensor:
    return _fractional_max_pool(3, input, kernel_size, output_size, output_ratio,
                                _random_samples)[0]


fractional_max_pool3d = _boolean_dispatch("return_indices", 4,
                                          fractional_max_pool3d_with_indices,
                                          _fractional_max_pool3d, "fractional_max_pool3d")


# -- sliding blocks ---------------------------------------------------------------------

def unfold(input: Tensor, kernel_size, dilation=1, padding=0, stride=1) -> Tensor:
    return _nn["im2col"](input, _ntuple(kernel_size, 2), _ntuple(dilation, 2),
                         _ntuple(padding, 2), _ntuple(stride, 2))


def fold(input: Tensor, output_size, kernel_size, dilation=1, padding=0, stride=1) -> Tensor:
    return _nn["col2im"](input, _ntuple(output_size, 2), _ntuple(kernel_size, 2),
                         _ntuple(dilation, 2), _ntuple(padding, 2), _ntuple(stride, 2))


# -- bags of embeddings ------------------------------------------------------------------

def embedding_bag(input: Tensor, weight: Tensor, offsets=None, max_norm=None,
                  norm_type: float = 2, scale_grad_by_freq: bool = False, mode: str = "mean",
                  sparse: bool = False, per_sample_weights=None,
                  include_last_offset: bool = False, padding_idx=None) -> Tensor:
    """F.embedding_bag: 2-d input is a batch of equal-length bags (offsets made
    here); the work is aten::embedding_bag.padding_idx's."""
    if weight.dtype == _dt.int64 and input.is_floating_point():
        warnings.warn("Argument order of nn.functional.embedding_bag was changed. Usage "
                      "`embedding_bag(weight, input, ...)` is deprecated, and should now be "
                      "`embedding_bag(input, weight, ...)`.", stacklevel=2)
        weight, input = input, weight
    if per_sample_weights is not None and input.size() != per_sample_weights.size():
        raise ValueError(f"embedding_bag: If per_sample_weights ({per_sample_weights.shape}) is "
                         f"not None, then it must have the same shape as the input "
                         f"({input.shape})")
    if weight.dim() != 2:
        raise ValueError(f"weight has to be a 2D Tensor, but got Tensor of dimension "
                         f"{weight.dim()}")
    if input.dim() == 2:
        if offsets is not None:
            raise ValueError("if input is 2D, then offsets has to be None, as input is treated "
                             "is a mini-batch of fixed length sequences. However, found offsets "
                             "of type " + ("<class 'torch.Tensor'>" if isinstance(offsets, Tensor)
                                           else str(type(offsets))))
        offsets = _T["arange"](0, input.numel(), input.size(1), dtype=input.dtype,
                               device=input.device)
        include_last_offset = False
        input = input.reshape(-1)
        if per_sample_weights is not None:
            per_sample_weights = per_sample_weights.reshape(-1)
    elif input.dim() == 1:
        if offsets is None:
            raise ValueError("offsets has to be a 1D Tensor but got None")
        if offsets.dim() != 1:
            raise ValueError("offsets has to be a 1D Tensor")
    else:
        raise ValueError(f"input has to be 1D or 2D Tensor, but got Tensor of dimension "
                         f"{input.dim()}")
    modes = {"sum": 0, "mean": 1, "max": 2}
    if mode not in modes:
        raise ValueError("mode has to be one of sum, mean or max")
    if mode == "max" and scale_grad_by_freq:
        raise ValueError("max mode does not support scaling the gradient by the frequency")
    if mode == "max" and sparse:
        raise ValueError("max mode does not support sparse weights")
    if max_norm is not None:
        with no_grad():     # torch.nn.functional._no_grad_embedding_renorm_
            _T["embedding_renorm_"](weight.detach(), input, max_norm, norm_type)
    if per_sample_weights is not None and mode != "sum":
        raise NotImplementedError("embedding_bag: per_sample_weights was not None. "
                                  "per_sample_weights is only supported for mode='sum' "
                                  f"(got mode='{mode}'). Please open a feature request on "
                                  "GitHub.")
    return _T["embedding_bag"](weight, input, offsets, scale_grad_by_freq, modes[mode], sparse,
                               per_sample_weights, include_last_offset, padding_idx)[0]


# -- the rest of torch.nn.functional (issue 16) ---------------------------------------------
# typing names and helpers torch's functional module re-exports

from collections.abc import Callable  # noqa: E402
from typing import Optional, TYPE_CHECKING  # noqa: E402,F401

from ..overrides import (handle_torch_function, has_torch_function,  # noqa: E402,F401
                         has_torch_function_unary, has_torch_function_variadic)

DType = int     # TorchScript's spelling of a dtype argument


class _BroadcastingList:
    """torch._jit_internal's BroadcastingList1/2/3: annotations of an int (or float)
    that may also be a list; subscripting gives nothing at runtime."""

    def __getitem__(self, types):
        return None


BroadcastingList1 = BroadcastingList2 = BroadcastingList3 = _BroadcastingList()


def boolean_dispatch(arg_name, arg_index, default, if_true, if_false, module_name, func_name):
    """torch._jit_internal.boolean_dispatch: one function that calls ``if_true``
    or ``if_false`` by the boolean argument ``arg_name`` (keyword, else position
    ``arg_index``, else ``default``); it carries the one docstring the two have."""
    def fn(*args, **kwargs):
        flag = default
        if arg_name in kwargs:
            flag = kwargs[arg_name]
        elif arg_index < len(args):
            flag = args[arg_index]
        return if_true(*args, **kwargs) if flag else if_false(*args, **kwargs)

    if if_true.__doc__ is None and if_false.__doc__ is not None:
        doc = if_true.__doc__ = if_false.__doc__
    elif if_false.__doc__ is None and if_true.__doc__ is not None:
        doc = if_false.__doc__ = if_true.__doc__
    elif if_false.__doc__ is None and if_true.__doc__ is None:
        doc = None
    else:
        raise RuntimeError("only one function can have a docstring")
    fn.__doc__ = doc
    if module_name is not None:
        fn.__module__ = module_name
    if func_name is not None:
        fn.__name__ = func_name
    return fn


def assert_int_or_pair(arg, arg_name: str, message: str) -> None:
    """An int or a pair, else AssertionError(message formatted with arg_name)."""
    if not (isinstance(arg, int) or len(arg) == 2):
        raise AssertionError(message.format(arg_name))


# the docstring fragments torch's functional docs share (same keys, our wording)
reproducibility_notes = {
    "forward_reproducibility_note": "On a CUDA device this operation may not be deterministic; "
                                    "see :doc:`/notes/randomness`.",
    "backward_reproducibility_note": "On a CUDA device the gradients of this operation may not "
                                     "be deterministic; see :doc:`/notes/randomness`.",
    "cudnn_reproducibility_note": "With CuDNN on a CUDA device this operation may pick a "
                                  "nondeterministic algorithm for speed; set "
                                  "``torch.backends.cudnn.deterministic = True`` to avoid it. "
                                  "See :doc:`/notes/randomness`.",
}
sparse_support_notes = {
    "sparse_beta_warning": "\n.. warning::\n    Sparse support is in beta: some layouts, dtypes "
                           "or devices, and some gradients, may be missing.",
}
tf32_notes = {"tf32_note": "This operator may use :ref:`TensorFloat32<tf32_on_ampere>`."}

GRID_SAMPLE_INTERPOLATION_MODES = {"bilinear": 0, "nearest": 1, "bicubic": 2}
GRID_SAMPLE_PADDING_MODES = {"zeros": 0, "border": 1, "reflection": 2}

_ALIGN_WARNING = ("Default grid_sample and affine_grid behavior has changed to "
                  "align_corners=False since 1.3.0. Please specify align_corners=True if the "
                  "old behavior is desired. See the documentation of grid_sample for details.")


def grid_sample(input: Tensor, grid: Tensor, mode: str = "bilinear",
                padding_mode: str = "zeros", align_corners=None) -> Tensor:
    """Sample ``input`` at the normalized locations of ``grid`` (aten::grid_sampler)."""
    if mode not in GRID_SAMPLE_INTERPOLATION_MODES:
        raise ValueError("nn.functional.grid_sample(): expected mode to be 'bilinear', "
                         f"'nearest' or 'bicubic', but got: '{mode}'")
    if padding_mode not in GRID_SAMPLE_PADDING_MODES:
        raise ValueError("nn.functional.grid_sample(): expected padding_mode to be 'zeros', "
                         f"'border', or 'reflection', but got: '{padding_mode}'")
    if align_corners is None:
        warnings.warn(_ALIGN_WARNING, stacklevel=2)
        align_corners = False
    return _T["grid_sampler"](input, grid, GRID_SAMPLE_INTERPOLATION_MODES[mode],
                              GRID_SAMPLE_PADDING_MODES[padding_mode], align_corners)


def affine_grid(theta: Tensor, size, align_corners=None) -> Tensor:
    """The sampling grid of a batch of affine maps (aten::affine_grid_generator)."""
    if align_corners is None:
        warnings.warn(_ALIGN_WARNING, stacklevel=2)
        align_corners = False
    if not theta.is_floating_point():
        raise ValueError(f"Expected theta to have floating point type, but got {theta.dtype}")
    if len(size) == 4:
        if theta.dim() != 3 or theta.shape[-2] != 2 or theta.shape[-1] != 3:
            raise ValueError(f"Expected a batch of 2D affine matrices of shape Nx2x3 for size "
                             f"{size}. Got {theta.shape}.")
        spatial = size[-2:]
    elif len(size) == 5:
        if theta.dim() != 3 or theta.shape[-2] != 3 or theta.shape[-1] != 4:
            raise ValueError(f"Expected a batch of 3D affine matrices of shape Nx3x4 for size "
                             f"{size}. Got {theta.shape}.")
        spatial = size[-3:]
    else:
        raise NotImplementedError("affine_grid only supports 4D and 5D sizes, for 2D and 3D "
                                  f"affine transforms, respectively. Got size {size}.")
    if align_corners and min(spatial) == 1:
        warnings.warn("Since version 1.3.0, affine_grid behavior has changed for unit-size "
                      "grids when align_corners=True. This is not an intended use case of "
                      "affine_grid. See the documentation of affine_grid for details.",
                      stacklevel=2)
    elif min(size) <= 0:
        raise ValueError(f"Expected non-zero, positive output size. Got {size}")
    return _T["affine_grid_generator"](theta, size, align_corners)


def ctc_loss(log_probs: Tensor, targets: Tensor, input_lengths, target_lengths, blank: int = 0,
             reduction: str = "mean", zero_infinity: bool = False) -> Tensor:
    """Connectionist temporal classification loss (aten::ctc_loss)."""
    return _T["ctc_loss"](log_probs, targets, input_lengths, target_lengths, blank,
                          _reduction_enum(reduction), zero_infinity)


pdist = _T["pdist"]
conv_tbc = _T["conv_tbc"]
channel_shuffle = _T["channel_shuffle"]
native_channel_shuffle = _T["native_channel_shuffle"]
rrelu_ = _T["rrelu_"]


def rrelu(input: Tensor, lower: float = 1.0 / 8, upper: float = 1.0 / 3, training: bool = False,
          inplace: bool = False) -> Tensor:
    """Leaky ReLU with random slopes in [lower, upper] in training, their mean in eval."""
    return (_T["rrelu_"] if inplace else _T["rrelu"])(input, lower, upper, training)


def gumbel_softmax(logits: Tensor, tau: float = 1, hard: bool = False, eps: float = 1e-10,
                   dim: int = -1) -> Tensor:
    """softmax((logits + Gumbel noise) / tau); ``hard`` returns the one-hot argmax with
    the soft sample's gradient (straight-through)."""
    if eps != 1e-10:
        warnings.warn("`eps` parameter is deprecated and has no effect.", stacklevel=2)
    noise = _T["empty_like"](logits, memory_format=_contiguous_format).exponential_()
    y_soft = ((logits - noise.log()) / tau).softmax(dim)
    if not hard:
        return y_soft
    index = y_soft.max(dim, keepdim=True)[1]
    y_hard = _T["zeros_like"](logits, memory_format=_contiguous_format).scatter_(dim, index, 1.0)
    return y_hard - y_soft.detach() + y_soft


def local_response_norm(input: Tensor, size: int, alpha: float = 1e-4, beta: float = 0.75,
                        k: float = 1.0) -> Tensor:
    """input / (k + alpha * mean of squares over ``size`` neighbouring channels)^beta."""
    dim = input.dim()
    if dim < 3:
        raise ValueError(f"Expected 3D or higher dimensionality                          input "
                         f"(got {dim} dimensions)")
    if input.numel() == 0:
        return input
    div = input.mul(input)
    if dim == 3:
        div = pad(div.unsqueeze(1), (0, 0, size // 2, (size - 1) // 2))
        div = _nn["avg_pool2d"](div, (size, 1), stride=1).squeeze(1)
    else:
        sizes = input.size()
        div = div.view(sizes[0], 1, sizes[1], sizes[2], -1)
        div = pad(div, (0, 0, 0, 0, size // 2, (size - 1) // 2))
        div = _nn["avg_pool3d"](div, (size, 1, 1), stride=1).squeeze(1).view(sizes)
    return input / div.mul(alpha).add(k).pow(beta)


def _legacy_enum(size_average, reduce, reduction):
    """torch.nn._reduction: the legacy flags (with their warning) or the string."""
    if size_average is not None or reduce is not None:
        return _reduction_enum(_legacy_reduction(size_average, reduce, emit_warning=True))
    return _reduction_enum(reduction)


def multi_margin_loss(input: Tensor, target: Tensor, p: int = 1, margin: float = 1.0,
                      weight=None, size_average=None, reduce=None,
                      reduction: str = "mean") -> Tensor:
    """Multi-class hinge loss (aten::multi_margin_loss)."""
    reduction_enum = _legacy_enum(size_average, reduce, reduction)
    if p != 1 and p != 2:
        raise ValueError("only p == 1 and p == 2 supported")
    if weight is not None and weight.dim() != 1:
        raise ValueError("weight must be one-dimensional")
    return _nn["multi_margin_loss"](input, target, p, margin, weight, reduction_enum)


def multilabel_margin_loss(input: Tensor, target: Tensor, size_average=None, reduce=None,
                           reduction: str = "mean") -> Tensor:
    """Multi-label hinge loss (aten::multilabel_margin_loss)."""
    return _nn["multilabel_margin_loss"](input, target,
                                         _legacy_enum(size_average, reduce, reduction))


def soft_margin_loss(input: Tensor, target: Tensor, size_average=None, reduce=None,
                     reduction: str = "mean") -> Tensor:
    """Two-class logistic loss log(1 + exp(-y x)) (aten::soft_margin_loss)."""
    return _nn["soft_margin_loss"](input, target, _legacy_enum(size_average, reduce, reduction))


def triplet_margin_with_distance_loss(anchor: Tensor, positive: Tensor, negative: Tensor, *,
                                      distance_function=None, margin: float = 1.0,
                                      swap: bool = False, reduction: str = "mean") -> Tensor:
    """max(0, margin + d(a, p) - d(a, n)) for any distance function d (default
    pairwise_distance); ``swap`` uses d(p, n) when it is smaller."""
    if reduction not in ("mean", "sum", "none"):
        raise ValueError(f"{reduction} is not a valid value for reduction")
    if margin <= 0:
        raise ValueError(f"margin must be greater than 0, got {margin}")
    a_dim, p_dim, n_dim = anchor.ndim, positive.ndim, negative.ndim
    if not (a_dim == p_dim and p_dim == n_dim):
        raise RuntimeError(f"The anchor, positive, and negative tensors are expected to have the "
                           f"same number of dimensions, but got: anchor {a_dim}D, positive "
                           f"{p_dim}D, and negative {n_dim}D inputs")
    if distance_function is None:
        distance_function = _T["pairwise_distance"]
    dist_pos = distance_function(anchor, positive)
    dist_neg = distance_function(anchor, negative)
    if swap:
        dist_neg = _T["minimum"](dist_neg, distance_function(positive, negative))
    loss = _T["clamp_min"](margin + dist_pos - dist_neg, 0)
    if reduction == "sum":
        return loss.sum()
    if reduction == "mean":
        return loss.mean()
    return loss


def linear_cross_entropy(input: Tensor, linear_weight: Tensor, target: Tensor, *,
                         linear_bias=None, weight=None, reduction: str = "mean",
                         ignore_index=None, label_smoothing: float = 0.0,
                         options=None) -> Tensor:
    """cross_entropy(linear(input, linear_weight, linear_bias), target); a
    ``linear_weight`` of shape (C, d1, ..., dK, in) gives a K-dimensional loss.
    ``options`` (LinearCrossEntropyOptions) is validated; the result is the
    reference computation's either way, but for the chunked path's mean, whose
    gradient scaling is its own."""
    if input.dim() < 1 or input.dim() > 2:
        raise RuntimeError(f"expected input with dimensionality 1 or 2, got {input.dim()}")
    if linear_weight.dim() < 2:
        raise RuntimeError(f"expected linear_weight with dimensionality at least 2, got "
                           f"{linear_weight.dim()}")
    batches, in_features = tuple(input.shape[:-1]), input.shape[-1]
    if in_features != linear_weight.shape[-1]:
        raise RuntimeError("expected equal input and linear_weight last dimensions "
                           f"(in_features), got {input.shape[-1]} and {linear_weight.shape[-1]}, "
                           "respectively")
    classes, out_features = linear_weight.shape[0], tuple(linear_weight.shape[1:-1])
    if linear_bias is not None and tuple(linear_bias.shape) != (classes, *out_features):
        raise RuntimeError(f"expected linear_bias shape {(classes, *out_features)}, got "
                           f"{tuple(linear_bias.shape)}")
    if out_features and not batches:
        raise RuntimeError(f"K-dimensional loss defined by linear_weight shape "
                           f"{tuple(linear_weight.shape)} requires batched input, (N, "
                           f"{in_features}), got unbatched input with shape "
                           f"{tuple(input.shape)}")
    logits_shape = (*batches, classes, *out_features)
    if tuple(target.shape) == logits_shape and ignore_index is not None:
        raise RuntimeError("ignore_index cannot be specified when target contains probabilities")
    ignore_index = -100 if ignore_index is None else ignore_index
    chunked = options is not None and not out_features and reduction in {"mean", "sum", "none"} \
        and label_smoothing == 0.0 and target.dtype == _dt.int64
    if options is not None and not chunked:
        warnings.warn("linear_cross_entropy: ``options`` ignored; chunked path needs reduction in "
                      "{'mean','sum','none'}, label_smoothing == 0, target.dtype == int64, "
                      f"out_features == (). Got reduction={reduction!r}, label_smoothing="
                      f"{label_smoothing}, target.dtype={target.dtype}, out_features="
                      f"{out_features}, tracing=False, linear_bias.shape="
                      f"{tuple(linear_bias.shape) if linear_bias is not None else None}.",
                      stacklevel=2)
    if out_features:
        flat = math.prod(out_features, start=classes)
        linear_weight = linear_weight.reshape((flat, in_features))
        if linear_bias is not None:
            linear_bias = linear_bias.reshape(flat)
    logits = linear(input, linear_weight, linear_bias).reshape(logits_shape)
    if chunked and reduction == "mean":
        # torch's chunked op scales each row's gradient by its kept weight over
        # the kept targets' total weight: with every target ignored that is
        # 0/0 = nan in the loss and in every gradient (the reference path's
        # gradient is 0 there)
        kept = target != ignore_index
        index = target.masked_fill(~kept, 0)
        row_weight = kept.to(logits.dtype) if weight is None else \
            weight.index_select(0, index.reshape(-1)).reshape(index.shape) * kept
        classes_dim = 1 if logits.dim() > 1 else 0
        picked = log_softmax(logits, classes_dim).gather(
            classes_dim, index.unsqueeze(classes_dim)).squeeze(classes_dim)
        return -(picked * row_weight).sum() / row_weight.sum()
    return cross_entropy(logits, target, weight=weight, reduction=reduction,
                         ignore_index=ignore_index, label_smoothing=label_smoothing)


# -- CUDA's scaled and grouped matrix products ----------------------------------------------

class _ScalingType(enum.IntEnum):
    """How scale tensors apply to a scaled_mm operand."""
    TensorWise = 0
    RowWise = 1
    BlockWise1x16 = 2
    BlockWise1x32 = 3
    BlockWise1x128 = 4
    BlockWise128x128 = 5


class _SwizzleType(enum.IntEnum):
    """The memory layout of block scales."""
    NO_SWIZZLE = 0
    SWIZZLE_32_4_4 = 1


ScalingType, SwizzleType = _ScalingType, _SwizzleType
for _cls in (_ScalingType, _SwizzleType):
    _cls.__module__ = "glasstorch.nn.functional"


def scaled_mm(mat_a: Tensor, mat_b: Tensor, scale_a, scale_recipe_a, scale_b, scale_recipe_b,
              swizzle_a=None, swizzle_b=None, bias=None, output_dtype=_dt.bfloat16,
              contraction_dim=(), use_fast_accum: bool = False) -> Tensor:
    """mat_a @ mat_b of float8 operands with their scales: glasstorch has no float8
    dtypes, so every call is refused as torch refuses non-float8 operands."""
    sa = scale_a[0] if isinstance(scale_a, (list, tuple)) else scale_a
    sb = scale_b[0] if isinstance(scale_b, (list, tuple)) else scale_b
    m, n = mat_a.shape[0], mat_b.shape[-1]
    raise ValueError(
        "Invalid scaling configuration.\n- For TensorWise scaling, a and b should be float8, "
        "scales should be float and singletons.\n- For RowWise scaling, a and b should be "
        f"float8, scales should be float, scale_a should be ({m}, 1) and scale_b should be (1, "
        f"{n}), and both should be contiguous.\nGot mat_a.dtype()={mat_a.dtype._short}, "
        f"scale_a.dtype()={sa.dtype._short}, scale_a.size()={_sizes(sa.shape)}, "
        f"scale_a.stride()={_sizes(sa.stride())}, mat_b.dtype()={mat_b.dtype._short}, "
        f"scale_b.dtype()={sb.dtype._short}, scale_b.size()={_sizes(sb.shape)} and "
        f"scale_b.stride()={_sizes(sb.stride())}")


def scaled_grouped_mm(mat_a: Tensor, mat_b: Tensor, scale_a, scale_recipe_a, scale_b,
                      scale_recipe_b, swizzle_a=None, swizzle_b=None, bias=None, offs=None,
                      output_dtype=_dt.bfloat16, contraction_dim=(),
                      use_fast_accum: bool = False) -> Tensor:
    """Grouped float8 products: a CUDA kernel only, as in torch."""
    raise NotImplementedError(
        "Could not run 'aten::_scaled_grouped_mm_v2' with arguments from the 'CPU' backend. "
        "This could be because the operator doesn't exist for this backend, or was omitted "
        "during the selective/custom build process (if using custom build). If you are a "
        "Facebook employee using PyTorch on mobile, please visit https://fburl.com/ptmfixes "
        "for possible resolutions. 'aten::_scaled_grouped_mm_v2' is only available for these "
        "backends: [Meta].")


def grouped_mm(mat_a: Tensor, mat_b: Tensor, *, offs=None, bias=None, out_dtype=None) -> Tensor:
    """Products of groups: 3-d x 3-d is a batched product; with ``offs`` (int32 end
    offsets) a 2-d operand is split into groups along its rows (2-d x 3-d), its
    columns (3-d x 2-d), or both 2-d operands along the shared dim."""
    if mat_a.dtype not in (_dt.float32, _dt.bfloat16, _dt.float16):
        raise RuntimeError(f"Expected mat_a to be Float32, BFloat16 or Float16 matrix, got "
                           f"{mat_a.dtype._short}")
    for mat in (mat_a, mat_b):      # one of the last two dims dense, the other 16-byte aligned
        align = 16 // mat.element_size()
        (rows, cols), (row_stride, col_stride) = mat.shape[-2:], mat.stride()[-2:]
        if row_stride == 1 and col_stride >= max(1, rows):
            aligned = col_stride % align == 0
        elif col_stride == 1 and row_stride >= max(1, cols):
            aligned = row_stride % align == 0
        else:
            raise RuntimeError(f"Invalid strides/sizes, got {_sizes(mat.stride())} for strides "
                               f"and {_sizes(mat.shape)} for sizes")
        if not aligned:
            raise RuntimeError("strides should be multiple of 16 bytes")
    a_3d, b_3d = mat_a.dim() == 3, mat_b.dim() == 3
    if (offs is not None) == (a_3d and b_3d):
        raise RuntimeError("Have to provide offsets if there is a 2d matrix, or no offset if "
                           "both matrices are 3d")
    if offs is not None and offs.dtype != _dt.int32:
        raise RuntimeError("Offsets have to be int32")
    if offs is None:
        out = _T["bmm"](mat_a, mat_b)
    else:
        ends = [int(e) for e in offs.tolist()]
        starts = [0] + ends[:-1]
        if not a_3d and b_3d:        # rows of mat_a in groups, one matrix of mat_b each
            out = _T["cat"]([mat_a[s:e] @ mat_b[g] for g, (s, e) in
                             enumerate(zip(starts, ends))])
        elif a_3d and not b_3d:      # columns of mat_b in groups
            out = _T["cat"]([mat_a[g] @ mat_b[:, s:e] for g, (s, e) in
                             enumerate(zip(starts, ends))], 1)
        else:                        # the shared dim in groups: one product per group
            out = _T["stack"]([mat_a[:, s:e] @ mat_b[s:e] for s, e in zip(starts, ends)])
    if bias is not None:
        out = out + bias
    return out if out_dtype is None else out.to(out_dtype)



# Every public function here takes part in ``__torch_function__``, as torch's
# ``has_torch_function`` preambles make them (see ``_dispatcher/torch_function.py``).
_torch_function.install_module_overrides(sys.modules[__name__])
_threshold = threshold      # PyTorch's F.threshold is F._threshold

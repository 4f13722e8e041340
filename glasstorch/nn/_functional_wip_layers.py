"""torch.nn.functional's layer functions (issue 4 "layers" fragment, star-imported
at the end of functional.py until the lead merges it): normalization, pooling,
transposed convolution, padding, interpolation, bilinear, feature dropout,
embedding with max_norm.  Written as torch/nn/functional.py writes them: same
signatures, argument checks and messages, calling the same aten ops."""
from __future__ import annotations

import math
import warnings

from .._ops.registry import FUNCTIONS as _F
from .._tensor import Tensor
from ..autograd.grad_mode import no_grad
from .functional import _list_with_default

_nn = _F["nn"]
_T = _F["torch"]

__all__ = [
    "batch_norm", "instance_norm", "rms_norm",
    "conv_transpose1d", "conv_transpose2d", "bilinear",
    "max_pool1d", "max_pool1d_with_indices", "avg_pool1d", "adaptive_avg_pool1d",
    "adaptive_max_pool1d", "adaptive_max_pool1d_with_indices", "adaptive_max_pool2d",
    "adaptive_max_pool2d_with_indices",
    "interpolate", "upsample", "upsample_nearest", "upsample_bilinear", "pad",
    "dropout1d", "dropout2d", "dropout3d", "alpha_dropout", "feature_alpha_dropout",
    "embedding", "pixel_shuffle", "pixel_unshuffle",
]

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
    (3, "nearest-exact"): "_upsample_nearest_exact1d",
    (4, "nearest-exact"): "_upsample_nearest_exact2d",
    (3, "linear"): "upsample_linear1d", (4, "bilinear"): "upsample_bilinear2d",
}
_MODE_DIMS = {"linear": 3, "bilinear": 4, "trilinear": 5}
# what PyTorch interpolates and glasstorch does not (yet): 3-d volumes, bicubic, lanczos
_TORCH_ONLY = {(5, "nearest"), (5, "nearest-exact"), (5, "area"), (5, "trilinear"),
               (4, "bicubic"), (4, "lanczos")}


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

    name = _INTERPOLATE_OPS.get((input.dim(), mode))
    if name is not None and not antialias:
        op = _nn[name]
        if mode in ("linear", "bilinear"):
            return op(input, output_size, align_corners, scale_factors)
        return op(input, output_size, scale_factors)
    if mode == "area" and input.dim() == 3:
        return adaptive_avg_pool1d(input, output_size)
    if mode == "area" and input.dim() == 4:
        return _nn["adaptive_avg_pool2d"](input, output_size)
    if (input.dim(), mode) in _TORCH_ONLY or antialias:
        raise NotImplementedError(f"glasstorch does not implement F.interpolate(mode={mode!r}"
                                  f"{', antialias=True' if antialias else ''}) for "
                                  f"{input.dim()}D input")
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

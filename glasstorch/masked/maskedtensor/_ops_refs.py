"""The ops a MaskedTensor implements (torch/masked/maskedtensor/_ops_refs.py):
``_MASKEDTENSOR_FUNCTION_TABLE`` (``__torch_function__``: reductions, where,
contiguous, to_dense) and ``_MASKEDTENSOR_DISPATCH_TABLE`` (``__torch_dispatch__``:
aten overload packets -> handlers)."""
from functools import partial

import glasstorch as torch

from .binary import _apply_native_binary, NATIVE_BINARY_FNS, NATIVE_INPLACE_BINARY_FNS
from .core import _get_data, _masks_match, _maybe_get_mask, is_masked_tensor, MaskedTensor
from .passthrough import _apply_pass_through_fn, PASSTHROUGH_FNS
from .reductions import _apply_reduction, NATIVE_REDUCE_FNS, TENSOR_REDUCE_FNS, TORCH_REDUCE_FNS
from .unary import _apply_native_unary, NATIVE_INPLACE_UNARY_FNS, NATIVE_UNARY_FNS

__all__ = []

_aten = torch.ops.aten


def _check_args_kwargs_length(args, kwargs, error_prefix, len_args=None, len_kwargs=None):
    if len_args is not None and len_args != len(args):
        raise ValueError(f"{error_prefix}: len(args) must be {len_args} but got {len(args)}")
    if len_kwargs is not None and len_kwargs != len(kwargs):
        raise ValueError(f"{error_prefix}: len(kwargs) must be {len_kwargs} but got "
                         f"{len(kwargs)}")


class _MaskedContiguous(torch.autograd.Function):
    """``contiguous`` of data and mask; the gradient passes through."""

    @staticmethod
    def forward(ctx, input):
        if not is_masked_tensor(input):
            raise ValueError("MaskedContiguous forward: input must be a MaskedTensor.")
        if input.is_contiguous():
            return input
        return MaskedTensor(input.get_data().contiguous(), input.get_mask().contiguous())

    @staticmethod
    def backward(ctx, grad_output):
        return grad_output


class _MaskedToDense(torch.autograd.Function):
    """``to_dense`` of a strided MaskedTensor: itself."""

    @staticmethod
    def forward(ctx, input):
        if not is_masked_tensor(input):
            raise ValueError("MaskedToDense forward: input must be a MaskedTensor.")
        return input

    @staticmethod
    def backward(ctx, grad_output):
        return grad_output


class _MaskedWhere(torch.autograd.Function):
    """``where(cond, a, b)`` of MaskedTensors; each operand's gradient is masked
    out where the other was chosen."""

    @staticmethod
    def forward(ctx, cond, self, other):
        ctx.mark_non_differentiable(cond)
        ctx.save_for_backward(cond)
        return _aten.where(cond, self, other)

    @staticmethod
    def backward(ctx, grad_output):
        (cond,) = ctx.saved_tensors

        def masked_out_like(mt):
            return MaskedTensor(mt.get_data(), torch.zeros_like(mt.get_mask()).bool())

        return (None, _aten.where(cond, grad_output, masked_out_like(grad_output)),
                _aten.where(cond, masked_out_like(grad_output), grad_output))


_MASKEDTENSOR_FUNCTION_TABLE = {}
_MASKEDTENSOR_DISPATCH_TABLE = {}


def _register(table, ops):
    """Decorator: ``handler(op, *args, **kwargs)`` handles each of ``ops``."""
    def wrapper(handler):
        for op in ops:
            table[op] = partial(handler, op)
        return handler
    return wrapper


@_register(_MASKEDTENSOR_FUNCTION_TABLE, NATIVE_REDUCE_FNS + TORCH_REDUCE_FNS + TENSOR_REDUCE_FNS)
@_register(_MASKEDTENSOR_DISPATCH_TABLE, NATIVE_REDUCE_FNS + TORCH_REDUCE_FNS + TENSOR_REDUCE_FNS)
def _general_reduction(func, *args, **kwargs):
    return _apply_reduction(func, *args, **kwargs)


@_register(_MASKEDTENSOR_FUNCTION_TABLE, [torch.Tensor.where, torch.where])
def _function_where(func, *args, **kwargs):
    _check_args_kwargs_length(args, kwargs, "__torch_function__, torch.where", len_args=3,
                              len_kwargs=0)
    return _MaskedWhere.apply(*args)


@_register(_MASKEDTENSOR_FUNCTION_TABLE, [torch.Tensor.contiguous])
def _function_contiguous(func, *args, **kwargs):
    return _MaskedContiguous.apply(args[0])


@_register(_MASKEDTENSOR_FUNCTION_TABLE, [torch.Tensor.to_dense])
def _function_to_dense(func, *args, **kwargs):
    return _MaskedToDense.apply(args[0])


@_register(_MASKEDTENSOR_DISPATCH_TABLE, PASSTHROUGH_FNS)
def _general_passthrough(func, *args, **kwargs):
    return _apply_pass_through_fn(func, *args, **kwargs)


@_register(_MASKEDTENSOR_DISPATCH_TABLE, NATIVE_UNARY_FNS + NATIVE_INPLACE_UNARY_FNS)
def _general_unary(func, *args, **kwargs):
    return _apply_native_unary(func, *args, **kwargs)


@_register(_MASKEDTENSOR_DISPATCH_TABLE, NATIVE_BINARY_FNS + NATIVE_INPLACE_BINARY_FNS)
def _general_binary(func, *args, **kwargs):
    return _apply_native_binary(func, *args, **kwargs)


@_register(_MASKEDTENSOR_DISPATCH_TABLE, [_aten.contiguous])
def contiguous(func, *args, **kwargs):
    return _MaskedContiguous.apply(args[0])


@_register(_MASKEDTENSOR_DISPATCH_TABLE, [_aten.new_empty_strided])
def new_empty_strided(func, *args, **kwargs):
    _check_args_kwargs_length(args, kwargs, f"__torch_dispatch__, {func}", len_args=3)
    data, mask = _get_data(args[0]), _maybe_get_mask(args[0])
    if tuple(args[1]) != tuple(data.size()):
        raise ValueError(f"__torch_dispatch__, {func}: args[1] expected to be the same as "
                         "data.size()")
    if tuple(args[2]) != tuple(data.stride()):
        raise ValueError(f"__torch_dispatch__, {func}: args[2] expected to be the same as "
                         "data.stride()")
    return MaskedTensor(func(data, args[1], args[2], **kwargs), mask)


@_register(_MASKEDTENSOR_DISPATCH_TABLE, [_aten._local_scalar_dense])
def _local_scalar_dense(func, *args, **kwargs):
    if not _maybe_get_mask(args[0]):
        raise ValueError(f"__torch_dispatch__, {func}: expected a mask tensor")
    return _aten._local_scalar_dense(_get_data(args[0]))


@_register(_MASKEDTENSOR_DISPATCH_TABLE, [_aten.detach, _aten.clone])
def _apply_fn_on_data(func, *args, **kwargs):
    return MaskedTensor(func(_get_data(args[0])), _maybe_get_mask(args[0]))


@_register(_MASKEDTENSOR_DISPATCH_TABLE, [_aten._to_copy])
def _to_copy(func, *args, **kwargs):
    data = func(_get_data(args[0]), *args[1:], **kwargs)
    mask = func(_maybe_get_mask(args[0]), *args[1:], **{**kwargs, "dtype": torch.bool})
    return MaskedTensor(data, mask)


@_register(_MASKEDTENSOR_DISPATCH_TABLE, [_aten._softmax])
def _softmax(func, *args, **kwargs):
    """Softmax over the kept elements; masked-out (and fully masked rows) give 0,
    as aten._masked_softmax does."""
    _check_args_kwargs_length(args, kwargs, f"__torch_dispatch__, {func}", len_args=3,
                              len_kwargs=0)
    data, mask = _get_data(args[0]), _maybe_get_mask(args[0])
    filled = data.masked_fill(~mask, float("-inf"))
    return MaskedTensor(func(filled, args[1], args[2]).masked_fill(~mask, 0), mask)


@_register(_MASKEDTENSOR_DISPATCH_TABLE, [_aten.ones_like])
def ones_like(func, *args, **kwargs):
    _check_args_kwargs_length(args, kwargs, f"__torch_dispatch__, {func}", len_args=1)
    return MaskedTensor(func(_get_data(args[0]), **kwargs), _maybe_get_mask(args[0]))


@_register(_MASKEDTENSOR_DISPATCH_TABLE, [_aten._softmax_backward_data])
def _softmax_backward_data(func, *args, **kwargs):
    """Softmax's gradient over the kept elements (aten._masked_softmax_backward):
    zero at masked-out elements."""
    _check_args_kwargs_length(args, kwargs, f"__torch_dispatch__, {func}", len_args=4)
    grad, output, dim, input_dtype = args
    if not (is_masked_tensor(grad) and is_masked_tensor(output)):
        raise ValueError(f"__torch_dispatch__, {func}: grad and output must both be "
                         "MaskedTensors")
    if not _masks_match(grad, output):
        raise ValueError(f"__torch_dispatch__, {func}: expected the masks of grad and output "
                         "to match")
    mask = _maybe_get_mask(grad)
    kept = _get_data(grad).masked_fill(~mask, 0)
    result = func(kept, _get_data(output), dim, input_dtype).masked_fill(~mask, 0)
    return MaskedTensor(result, mask)


@_register(_MASKEDTENSOR_DISPATCH_TABLE, [_aten.copy_])
def copy_(func, *args, **kwargs):
    _check_args_kwargs_length(args, kwargs, f"__torch_dispatch__, {func}", len_args=2)
    if not _masks_match(_maybe_get_mask(args[0]), _maybe_get_mask(args[1])):
        raise ValueError("args[0] mask and args[1] mask must match but do not")
    func(_get_data(args[0]), _get_data(args[1]))
    return args[0]


@_register(_MASKEDTENSOR_DISPATCH_TABLE, [_aten.where])
def where(func, *args, **kwargs):
    _check_args_kwargs_length(args, kwargs, f"__torch_dispatch__, {func}", len_args=3,
                              len_kwargs=0)
    if not torch.is_tensor(args[0]):
        raise ValueError(f"__torch_dispatch__, {func}: expected args[0] to be a tensor")
    mx, my = (a if is_masked_tensor(a) else MaskedTensor(a, torch.ones_like(a, dtype=torch.bool))
              for a in args[1:])
    return MaskedTensor(func(args[0], mx.get_data(), my.get_data()),
                        func(args[0], mx.get_mask(), my.get_mask()))


@_register(_MASKEDTENSOR_DISPATCH_TABLE, [_aten.is_same_size])
def is_same_size(func, *args, **kwargs):
    _check_args_kwargs_length(args, kwargs, f"__torch_dispatch__, {func}", len_args=2)
    return _get_data(args[0]).is_same_size(_get_data(args[1]))

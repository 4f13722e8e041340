"""Pointwise ops and others that treat every element alike
(BatchRulesBinaryOps.cpp, BatchRulesUnaryOps.cpp).

Every tensor argument gets its batch dim first, and the batched ones are padded
with size-1 dims to the largest logical rank, so broadcasting pairs example i
of one argument with example i of the other:

    x: logical (5,)  physical (B, 5)         -> (B, 5)
    y: logical (4, 5) physical (4, 5, B)     -> (B, 4, 5)
    x + y                                    -> (B, 4, 5), batch dim 0

An in-place op needs its ``self`` batched whenever another argument is (the
examples could not all be written into one unbatched tensor).  PyTorch refuses
that with its "inplace arithmetic" error, except for the ops it batches with
its boxed rule (``add_``, ``atan2_`` ...), where the kernel's own broadcast
check refuses it: the padded ``other`` has more dims than ``self``.
"""
from __future__ import annotations

from ..._core import dtype as dt
from ..._dispatcher.dispatcher import _lookup_overload, dispatcher, ops
from ..._ops.tags import Tag
from . import RULES, call, inplace_error, logical_rank, overloads, pad_rank, register, tensor_slots, \
    to_front, unwrap, wrap

aten = ops.aten

_KERNEL_CHECKED = set(overloads("add_.Tensor", "atan2_", "copysign_.Tensor", "bitwise_and_.Tensor",
                                "bitwise_or_.Tensor", "bitwise_xor_.Tensor"))


def pointwise_rule(op, level, values):
    params = op._schema.arguments
    unwrapped = {i: unwrap(values[i], level) for i in tensor_slots(op, values)}
    rank = max(logical_rank(t, b) for t, b in unwrapped.values())
    inplace = params[0].is_write and 0 in unwrapped
    if inplace and unwrapped[0][1] is None and op not in _KERNEL_CHECKED:
        raise inplace_error("inplace arithmetic")
    self = values[0]
    promoted = {i: tb for i, tb in unwrapped.items() if params[i].name in ("self", "other")}
    dtype = None if inplace else _logical_result_type(promoted)
    for i, (tensor, bdim) in unwrapped.items():
        if bdim is not None:
            tensor = pad_rank(to_front(tensor, bdim), rank)
        if dtype is not None and i in promoted and tensor.dtype != dtype:
            tensor = tensor.to(dtype)
        values[i] = tensor
    result = call(op, values)
    return self if inplace else wrap(result, level)


def _logical_result_type(operands):
    """The dtype type promotion gives the *logical* operands, when one is a
    batched scalar (logical rank 0 but physical rank 1: it would promote as a
    dimensioned tensor); None when there is nothing to correct."""
    if len(operands) < 2 or len({t.dtype for t, _ in operands.values()}) < 2:
        return None
    if not any(b is not None and t.dim() == 1 for t, b in operands.values()):
        return None
    ranked = [(t.dtype, logical_rank(t, b)) for t, b in operands.values()]
    return dt.result_type_of([d for d, r in ranked if r], [d for d, r in ranked if not r], ())


def _register_pointwise() -> None:
    for name in dispatcher.operators:
        if not name.startswith("aten::"):
            continue
        op = _lookup_overload(name)
        if Tag.pointwise in op.tags and op._schema.out_arguments == [] \
                and all(r.type.is_tensor for r in op._schema.returns):
            RULES[op] = pointwise_rule


_register_pointwise()
for _op in overloads("zeros_like", "ones_like", "empty_like", "full_like", "clone", "_to_copy",
                     "fill_.Scalar", "zero_", "copy_", "masked_fill.Scalar",
                     "masked_fill.Tensor", "masked_fill_.Scalar", "masked_fill_.Tensor",
                     "where.self", "alias", "detach", "lift_fresh", "lift_fresh_copy", "alias_copy",
                     "detach_copy", "detach_", "zero", "fill.Scalar", "isclose", "rsub.Tensor",
                     "abs_", "gelu_", "threshold_", "hardswish", "hardswish_", "mish_",
                     "log_sigmoid_forward", "_prelu_kernel", "floor_divide", "floor_divide.Scalar",
                     "floor_divide_.Scalar", "floor_divide_.Tensor", "true_divide.Scalar",
                     "true_divide_.Scalar", "true_divide_.Tensor", "copysign_.Scalar", "copysign_.Tensor",
                     "eq_.Scalar", "eq_.Tensor", "ne_.Scalar", "ne_.Tensor", "lt_.Scalar", "lt_.Tensor",
                     "le_.Scalar", "le_.Tensor", "gt_.Scalar", "gt_.Tensor", "ge_.Scalar", "ge_.Tensor",
                     # the backward ops of activations: elementwise in grad and input
                     "elu_backward", "hardshrink_backward", "hardsigmoid_backward", "hardswish_backward",
                     "hardtanh_backward", "leaky_relu_backward", "log_sigmoid_backward", "mish_backward",
                     "softplus_backward", "softshrink_backward", "_prelu_kernel_backward"):
    RULES[_op] = pointwise_rule


@register(*overloads("fill_.Tensor"))
def _fill_tensor(op, level, values):
    """A batched ``value`` (one 0-d value per example) is copied into each
    example of ``self``, broadcast over its elements."""
    self, value = values
    (tensor, bdim), (fill, fill_bdim) = unwrap(self, level), unwrap(value, level)
    if fill_bdim is None:
        op(to_front(tensor, bdim), fill)
        return self
    if bdim is None:
        raise inplace_error("fill_")
    tensor = to_front(tensor, bdim)
    tensor.copy_(pad_rank(to_front(fill, fill_bdim), tensor.dim() - 1))
    return self

"""Pointwise ops and others that treat every element alike
(BatchRulesBinaryOps.cpp, BatchRulesUnaryOps.cpp).

Every tensor argument gets its batch dim first, and the batched ones are padded
with size-1 dims to the largest logical rank, so broadcasting pairs example i
of one argument with example i of the other:

    x: logical (5,)  physical (B, 5)         -> (B, 5)
    y: logical (4, 5) physical (4, 5, B)     -> (B, 4, 5)
    x + y                                    -> (B, 4, 5), batch dim 0

An in-place op needs its ``self`` batched whenever another argument is (the
examples could not all be written into one unbatched tensor).
"""
from __future__ import annotations

from ..._core import dtype as dt
from ..._dispatcher.dispatcher import dispatcher, ops
from ..._ops.tags import Tag
from . import RULES, call, logical_rank, overloads, pad_rank, to_front, unwrap, wrap

aten = ops.aten


def _inplace_error(name: str) -> RuntimeError:
    return RuntimeError(
        "vmap: inplace arithmetic(self, *extra_args) is not possible because there exists a "
        "Tensor `other` in extra_args that has more elements than `self`. This happened due to "
        "`other` being vmapped over but `self` not being vmapped over in a vmap. Please try to "
        "use out-of-place operators instead of inplace arithmetic. If said operator is being "
        "called inside the PyTorch framework, please file a bug report instead.")


def pointwise_rule(op, level, values):
    params = op._schema.arguments
    slots = [i for i, (a, v) in enumerate(zip(params, values))
             if a.type.is_tensor and v is not None and hasattr(v, "_keys")]
    unwrapped = {i: unwrap(values[i], level) for i in slots}
    rank = max(logical_rank(t, b) for t, b in unwrapped.values())
    inplace = params[0].is_write and 0 in unwrapped
    if inplace and unwrapped[0][1] is None:
        raise _inplace_error(op._name)
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
    for entry in dispatcher.operators.values():
        if not entry.name.startswith("aten::"):
            continue
        op = _overload(entry)
        if op is not None and Tag.pointwise in op.tags and op._schema.out_arguments == []:
            RULES[op] = pointwise_rule


def _overload(entry):
    namespace, _, rest = entry.name.partition("::")
    base, _, overload = rest.partition(".")
    return getattr(getattr(ops.aten, base), overload or "default", None)


_register_pointwise()
for _op in overloads("zeros_like", "ones_like", "empty_like", "full_like", "clone", "_to_copy",
                     "fill_.Scalar", "fill_.Tensor", "zero_", "copy_", "masked_fill.Scalar",
                     "masked_fill.Tensor", "masked_fill_.Scalar", "masked_fill_.Tensor",
                     "where.self", "alias", "detach", "lift_fresh"):
    RULES[_op] = pointwise_rule

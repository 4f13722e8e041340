"""torch.functional: Python-level functions of the torch namespace whose calling
convention no schema expresses (``torch.einsum(eq, a, b)`` takes operands as
varargs; the op ``aten::einsum`` takes a ``Tensor[]``)."""
from __future__ import annotations

from ._dispatcher.dispatcher import ops
from ._tensor import Tensor

__all__ = ["einsum"]


def einsum(*args):
    """``einsum(equation, *operands)`` or ``einsum(equation, [operands])``
    -> ``aten::einsum(str equation, Tensor[] tensors, *, int[]? path=None)``."""
    if len(args) < 2:
        raise ValueError("einsum(): must specify the equation string and at least one operand, "
                         "or at least one operand and its subscripts list")
    equation, operands = args[0], args[1:]
    if not isinstance(equation, str):
        raise TypeError("einsum(): the sublist format is not supported; pass an equation string")
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = tuple(operands[0])
    for t in operands:
        if not isinstance(t, Tensor):
            raise TypeError(f"einsum(): argument 'tensors' must be tuple of Tensors, not "
                            f"{type(t).__name__}")
    return ops.aten.einsum.default(equation, list(operands))

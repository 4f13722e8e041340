"""torch.functional: Python-level functions of the torch namespace whose calling
convention no schema expresses (``torch.einsum(eq, a, b)`` takes operands as
varargs; the op ``aten::einsum`` takes a ``Tensor[]``; ``torch.norm`` picks a
``torch.linalg`` function from its arguments)."""
from __future__ import annotations

from ._dispatcher.dispatcher import ops
from ._tensor import Tensor

__all__ = ["einsum", "norm"]


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


def norm(input, p="fro", dim=None, keepdim=False, out=None, dtype=None):
    """``torch.norm`` / ``Tensor.norm``: for strided tensors PyTorch routes it to
    ``linalg.vector_norm`` (so autograd records LinalgVectorNormBackward0), with
    ``p="fro"`` meaning the 2-norm over the given dims."""
    if isinstance(dim, int):
        dim = [dim]
    if isinstance(p, str):
        if p != "fro" or (dim is not None and len(dim) > 2):
            raise RuntimeError(f"norm(): p={p!r} needs linalg.matrix_norm, which glasstorch "
                               "does not provide yet")
        p = 2
    elif p is None:
        p = 2.0
    if out is not None:
        return ops.aten.linalg_vector_norm.out(input, p, dim, keepdim, dtype=dtype, out=out)
    return ops.aten.linalg_vector_norm.default(input, p, dim, keepdim, dtype=dtype)


def _tensor_norm(self, p="fro", dim=None, keepdim=False, dtype=None):
    return norm(self, p, dim, keepdim, dtype=dtype)


Tensor.norm = _tensor_norm

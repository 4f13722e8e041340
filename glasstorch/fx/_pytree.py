"""``torch.fx._pytree``: flattening by a known structure, for generated code
whose ``forward`` takes nested arguments (``_PyTreeCodeGen``)."""
from __future__ import annotations

from ..utils._pytree import TreeSpec

__all__ = ["tree_flatten_spec"]


def tree_flatten_spec(pytree, spec: TreeSpec) -> list:
    """The leaves of ``pytree`` in the order ``spec`` gives them."""
    return spec.flatten_up_to(pytree)

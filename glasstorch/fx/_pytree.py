"""``torch.fx._pytree``: flattening by a known structure, for generated code
whose ``forward`` takes nested arguments (``_PyTreeCodeGen``)."""
from __future__ import annotations

from ..utils._pytree import SUPPORTED_NODES, TreeSpec

__all__ = ["tree_flatten_spec"]


def tree_flatten_spec(pytree, spec: TreeSpec) -> list:
    """The leaves of ``pytree`` in the order ``spec`` gives them.  Lenient as
    PyTorch's: a sequence spec indexes any sequence (a list where a tuple was
    traced), a dict spec reads its keys from any mapping."""
    if spec.is_leaf():
        return [pytree]
    if spec.type in (tuple, list):
        children = [pytree[i] for i in range(spec.num_children)]
    elif spec.type is dict:
        children = [pytree[k] for k in spec.context]
    else:
        children = SUPPORTED_NODES[spec.type].flatten_fn(pytree)[0]
    return [leaf for child, child_spec in zip(children, spec.children())
            for leaf in tree_flatten_spec(child, child_spec)]

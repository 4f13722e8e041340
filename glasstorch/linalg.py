"""``torch.linalg``: the linear-algebra functions declared so far, under their
``torch.linalg`` names (``linalg_vector_norm`` -> ``vector_norm``)."""
from __future__ import annotations

from ._ops import registry as _registry

__all__ = ["vector_norm", "matrix_norm", "norm", "svdvals"]

globals().update({name[len("linalg_"):]: fn
                  for name, fn in _registry.FUNCTIONS["linalg"].items()})

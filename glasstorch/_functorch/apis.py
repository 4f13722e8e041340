"""The public function transforms (torch/_functorch/apis.py): ``vmap`` today."""
from __future__ import annotations

from .vmap import vmap

__all__ = ["vmap"]

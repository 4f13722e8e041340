"""The public function transforms (torch/_functorch/apis.py)."""
from __future__ import annotations

from .eager_transforms import grad, grad_and_value, hessian, jacfwd, jacrev, jvp, linearize, vjp
from .vmap import vmap

__all__ = ["vmap", "grad", "grad_and_value", "vjp", "jacrev", "jvp", "jacfwd", "linearize",
           "hessian"]

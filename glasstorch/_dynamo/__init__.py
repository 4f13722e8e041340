"""``torch._dynamo``: for now its compiler-backend registry
(``list_backends``, ``register_backend``, ``lookup_backend``); bytecode capture
comes with the Dynamo issue."""
from .backends.registry import list_backends, lookup_backend, register_backend

__all__ = ["list_backends", "lookup_backend", "register_backend"]

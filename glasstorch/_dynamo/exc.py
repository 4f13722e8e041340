"""``torch._dynamo.exc``: Dynamo's exceptions."""
from __future__ import annotations

__all__ = ["InvalidBackend"]


class InvalidBackend(RuntimeError):
    """A backend name nobody registered."""

    def __init__(self, name: str):
        super().__init__(f"Invalid backend: {name!r}, see `torch._dynamo.list_backends()` for "
                         f"available backends.")

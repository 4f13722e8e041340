"""``torch._dynamo.exc``: Dynamo's exceptions."""
from __future__ import annotations

__all__ = ["InvalidBackend", "Unsupported"]


class InvalidBackend(RuntimeError):
    """A backend name nobody registered."""

    def __init__(self, name: str):
        super().__init__(f"Invalid backend: {name!r}, see `torch._dynamo.list_backends()` for "
                         f"available backends.")


class Unsupported(RuntimeError):
    """What Dynamo cannot put in a graph: a graph break where the frame allows
    one, else the frame runs eagerly.  The message is PyTorch's: a one-line
    type, then ``Explanation:``.  ``culprit``: the object that was called."""

    def __init__(self, gb_type: str, explanation: str = "", *, reason: str = "unsupported",
                 culprit=None, breakable: bool = True):
        text = gb_type if not explanation else f"{gb_type}\n  Explanation: {explanation}"
        super().__init__(text)
        self.gb_type, self.explanation, self.kind, self.culprit = gb_type, explanation, reason, culprit
        self.breakable = breakable     # False: the whole frame runs eagerly
        self.user_stack: list = []

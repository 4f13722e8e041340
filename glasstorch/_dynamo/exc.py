"""``torch._dynamo.exc``: Dynamo's exceptions."""
from __future__ import annotations

from enum import Enum, auto

__all__ = ["InvalidBackend", "Unsupported", "UserError", "UserErrorType"]


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
                 culprit=None, breakable: bool = True, fullgraph_error=None):
        text = gb_type if not explanation else f"{gb_type}\n  Explanation: {explanation}"
        super().__init__(text)
        self.gb_type, self.explanation, self.kind, self.culprit = gb_type, explanation, reason, culprit
        self.breakable = breakable     # False: the whole frame runs eagerly
        self.user_stack: list = []
        # (gb_type, explanation) where fullgraph's error words the break otherwise
        self.fullgraph_error = fullgraph_error

    def for_fullgraph(self) -> "Unsupported":
        """The error ``fullgraph=True`` raises for this break."""
        if self.fullgraph_error is None:
            return self
        error = Unsupported(*self.fullgraph_error, reason=self.kind, culprit=self.culprit)
        error.user_stack = self.user_stack
        return error


class UserErrorType(Enum):
    DYNAMIC_CONTROL_FLOW = auto()
    ANTI_PATTERN = auto()
    STANDARD_LIBRARY = auto()
    CONSTRAINT_VIOLATION = auto()
    DYNAMIC_DIM = auto()
    INVALID_INPUT = auto()
    INVALID_OUTPUT = auto()
    UNSUPPORTED_ALIASED_MUTATED_DYNAMIC_INPUTS = auto()


class UserError(Exception):
    """A program valid in eager that capture or export refuses, with what to do
    about it (``error_type`` says which kind)."""

    def __init__(self, error_type: UserErrorType, msg: str, case_name: str | None = None):
        if case_name is not None:
            msg += (" " if msg.endswith(".") else "\n") + (
                f"For more information about this error, see: https://pytorch.org/docs/main/"
                f"generated/exportdb/index.html#{case_name.replace('_', '-')}")
        super().__init__(msg)
        self.error_type, self.msg, self.message = error_type, msg, msg

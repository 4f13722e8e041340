"""``torch._dynamo.exc``: Dynamo's exceptions."""
from __future__ import annotations

import textwrap
from enum import Enum, auto

__all__ = ["BackendCompilerFailed", "InvalidBackend", "Unsupported", "UserError",
           "UserErrorType"]


class InvalidBackend(RuntimeError):
    """A backend name nobody registered."""

    def __init__(self, name: str):
        super().__init__(f"Invalid backend: {name!r}, see `torch._dynamo.list_backends()` for "
                         f"available backends.")


class BackendCompilerFailed(RuntimeError):
    """The backend ``torch.compile`` was given raised while compiling a graph."""

    def __init__(self, backend, inner: Exception):
        name = getattr(backend, "__name__", repr(backend))
        super().__init__(f"backend={name!r} raised:\n{type(inner).__name__}: {inner}")
        self.backend_name, self.inner_exception = name, inner


class Unsupported(RuntimeError):
    """What Dynamo cannot put in a graph: a graph break where the frame allows
    one, else the frame runs eagerly.  The message is PyTorch's: a one-line
    type, then ``Explanation:``.  ``culprit``: the object that was called."""

    def __init__(self, gb_type: str, explanation: str = "", *, reason: str = "unsupported",
                 culprit=None, breakable: bool = True, hints=(), context=None, gb_id=None,
                 fullgraph_error=None):
        text = gb_type if not explanation else \
            f"{gb_type}\n  Explanation: {textwrap.indent(explanation, '    ').lstrip()}"
        super().__init__(text)
        self.gb_type, self.explanation, self.kind, self.culprit = gb_type, explanation, reason, culprit
        self.breakable = breakable     # False: the whole frame runs eagerly
        self.user_stack: list = []     # (function, line, file), outermost first
        self.user_positions: list = []  # each frame's instruction positions (for carets)
        # PyTorch's hints, developer context and graph-break id (gb0059), for the logs
        self.hints, self.context, self.gb_id = tuple(hints), context, gb_id
        # the keyword arguments of the error fullgraph raises, where it words the
        # break otherwise (a data-dependent jump)
        self.fullgraph_error = fullgraph_error

    def for_fullgraph(self) -> "Unsupported":
        """The error ``fullgraph=True`` raises for this break."""
        if self.fullgraph_error is None:
            return self
        error = Unsupported(**self.fullgraph_error, reason=self.kind, culprit=self.culprit)
        error.user_stack, error.user_positions = self.user_stack, self.user_positions
        return error

    def details(self) -> str:
        """The reason as the graph_breaks log words it: type, explanation,
        hints, developer context and the page PyTorch documents it on."""
        error = self.for_fullgraph()
        lines = [str(error)] + [f"  Hint: {hint}" for hint in error.hints]
        if error.context is not None:
            lines += ["", f"  Developer debug context: {error.context}"]
        if error.gb_id is not None:
            lines += ["", " For more details about this graph break, please visit: "
                      f"https://meta-pytorch.github.io/compile-graph-break-site/gb/{error.gb_id}.html"]
        return "\n".join(lines)


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

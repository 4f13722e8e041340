"""The dispatcher (c10/core/dispatch) and Python argument binding."""
from .dispatcher import dispatch_trace, ops  # noqa: F401

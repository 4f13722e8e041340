"""``torch.jit``: the entry points programs call, as pass-throughs.

TorchScript is out of scope for glasstorch.  It is a second language (a
typed subset of Python with its own compiler, IR, interpreter and
serialization format), and PyTorch itself has moved on to ``torch.compile``
and ``torch.export``, which glasstorch does provide.  What remains here lets
programs that merely *mention* TorchScript run eagerly: ``script`` and
``trace`` return what they are given, the decorators return the function
they decorate, and ``is_scripting()`` is False because nothing ever runs as
TorchScript.
"""
from __future__ import annotations

__all__ = ["script", "trace", "is_scripting", "ignore", "unused", "export"]


def script(obj, optimize=None, _frames_up=0, _rcb=None, example_inputs=None):
    """``torch.jit.script``: ``obj`` (a function, Module or class) unchanged."""
    return obj


def trace(func, example_inputs=None, optimize=None, check_trace=True, check_inputs=None,
          check_tolerance=1e-5, strict=True, _force_outplace=False,
          _module_class=None, _compilation_unit=None, example_kwarg_inputs=None,
          _store_inputs=True):
    """``torch.jit.trace``: ``func`` (a function or Module) unchanged; it is not run."""
    return func


def is_scripting() -> bool:
    """``torch.jit.is_scripting``: False, as in any eager (non-TorchScript) call."""
    return False


def ignore(drop=False, **kwargs):
    """``@torch.jit.ignore`` / ``@torch.jit.ignore(drop=...)``: leaves the function as it is."""
    if callable(drop):
        return drop
    return lambda fn: fn


def unused(fn):
    """``@torch.jit.unused``: leaves the function as it is."""
    return fn


def export(fn):
    """``@torch.jit.export``: leaves the method as it is."""
    return fn

"""``torch._dynamo``: capture of Python bytecode into FX graphs.

``optimize(backend)(fn)`` (what ``torch.compile`` calls) returns ``fn``
wrapped so that each call checks the cached compiled frames' guards and runs
the first that passes, tracing the bytecode on a miss (``eval_frame.py``,
``symbolic_convert.py``).  ``explain(fn)(*args)`` reports the graphs, the
breaks and the guards; ``reset()`` forgets every compiled frame.
"""
from __future__ import annotations

from ..nn import Module
from . import config, utils
from .backends.registry import list_backends, lookup_backend, register_backend
from . import eval_frame
from .eval_frame import DynamoContext, OptimizedModule
from .exc import Unsupported
from .symbolic_convert import graph_break
from .compiled_optimizer import CompiledOptimizerStep, is_optimizer_step

__all__ = ["optimize", "reset", "explain", "disable", "allow_in_graph", "graph_break",
           "mark_dynamic",
           "list_backends",
           "lookup_backend", "register_backend", "config", "utils", "OptimizedModule",
           "Unsupported"]

_CONTEXTS: list = []


def optimize(backend="inductor", *, nopython: bool = False, dynamic=None):
    """A decorator compiling functions (and modules) with ``backend``."""
    ctx = DynamoContext(lookup_backend(backend), fullgraph=nopython, dynamic=dynamic)
    _CONTEXTS.append(ctx)

    def decorate(fn):
        if not callable(fn):
            raise AssertionError(f"A callable function is expected, but {type(fn)} is provided.")
        if isinstance(fn, Module):
            return OptimizedModule(fn, ctx)
        if is_optimizer_step(fn):
            return CompiledOptimizerStep(fn, ctx)
        return ctx.wrap(fn)
    return decorate


def reset() -> None:
    """Forget every compiled frame and the counters."""
    for ctx in _CONTEXTS:
        ctx.cache.clear()
        ctx.skip.clear()
        ctx.frame_state.clear()
        ctx.optimizer_steps.clear()
    _CONTEXTS.clear()
    utils.counters.clear()
    eval_frame._SEEN_BREAKS.clear()
    eval_frame.FRAME_IDS.clear()


def disable(fn=None, recursive: bool = True):
    """``fn`` always runs eagerly, even when a compiled function calls it."""
    if fn is None:
        return lambda f: disable(f, recursive)
    fn._dynamo_disable = True
    return fn


def _mark(t, index, attribute: str) -> None:
    indices = index if isinstance(index, (list, tuple, set)) else [index]
    setattr(t, attribute, set(getattr(t, attribute, ())) | set(indices))


def mark_dynamic(t, index) -> None:
    """Trace dim ``index`` (an int or a list) of ``t`` with a symbolic size."""
    _mark(t, index, "_dynamo_dynamic_indices")


def maybe_mark_dynamic(t, index) -> None:
    """Like ``mark_dynamic``, as a hint: a dim the program specialises is no error."""
    _mark(t, index, "_dynamo_weak_dynamic_indices")


def mark_static(t, index=None) -> None:
    """Keep dim ``index`` of ``t`` (every dim without one) static, whatever
    automatic dynamic would decide."""
    _mark(t, range(t.dim()) if index is None else index, "_dynamo_static_indices")


def is_compiling() -> bool:
    """``torch._dynamo.is_compiling``: the older spelling of
    ``torch.compiler.is_compiling``."""
    from ..compiler import is_compiling as compiling
    return compiling()


def allow_in_graph(fn):
    """Calls to ``fn`` go into the graph as they are (not traced into)."""
    fn._dynamo_allow_in_graph = True
    return fn


from .explain import explain  # noqa: E402

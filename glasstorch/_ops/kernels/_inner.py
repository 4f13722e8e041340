"""The ops ATen's kernels call inside themselves, as ``inner.<op>(...)``.

ATen's C++ kernels call other ops through the dispatcher: ``clone`` is
``at::empty_like`` + ``copy_``, ``transpose`` returns ``as_strided``,
``addmm`` calls ``expand``, ``copy_`` and ``resolve_conj``.  Those calls are
below the autograd and Python keys (AutoDispatchBelowADInplaceOrView, the
dispatch mode popped), so autograd and ``TorchDispatchMode`` don't see them,
but the profiler (a RecordFunction observer) and ``TORCH_SHOW_DISPATCH_TRACE``
do.

A glasstorch kernel names the same inner ops: ``inner.as_strided(self, ...)``.
While a dispatcher observer or trace is active the call is dispatched, so the
profiler's event tree holds it as PyTorch's does; otherwise the op's own
kernel runs directly (no dispatch: the hot path stays short).  The result is
the same either way, since the dispatch below the autograd key ends in that
same kernel.

A kernel module registers an op here by decorating the op's direct code::

    @inner_op("aten::as_strided")
    def _as_strided(self, size, stride, storage_offset): ...
"""
from __future__ import annotations

from types import SimpleNamespace

from ..._dispatcher.dispatcher import _lookup_overload, _observers, _traces

__all__ = ["inner", "inner_op", "observed"]

# inner.<op name>: one callable per registered op (filled by the kernel modules)
inner = SimpleNamespace()


def observed() -> bool:
    """Is a dispatcher observer or trace active?  For the few kernels whose
    inner ops only matter to an observer: a copy the numpy code fuses, a
    layout choice numpy doesn't need.  They dispatch them only then; the
    values are the same either way."""
    return bool(_observers or _traces)


def inner_op(qualified_name: str):
    """Register ``inner.<name>`` for op ``qualified_name`` ("aten::transpose.int"),
    with the decorated function as the code run when nobody observes."""
    name = qualified_name.partition("::")[2].partition(".")[0]

    def register(direct):
        op = None

        def call(*args, **kwargs):
            if _observers or _traces:
                nonlocal op
                if op is None:
                    op = _lookup_overload(qualified_name)
                return op(*args, **kwargs)
            return direct(*args, **kwargs)

        call.__name__ = call.__qualname__ = name
        call.__doc__ = f"``{qualified_name}``, dispatched while observed (see kernels/_inner.py)."
        if hasattr(inner, name):
            raise RuntimeError(f"inner op '{name}' registered twice")
        setattr(inner, name, call)
        return direct
    return register

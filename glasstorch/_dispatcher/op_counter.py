"""Counting the kernels the dispatcher runs, per dispatch key and per op.

PyTorch's profiler hears about every op through RecordFunction callbacks
that the dispatcher fires around each kernel.  glasstorch's dispatcher has
the same hook: every object in ``dispatcher._observers`` gets
``enter(op, kind, key, args, kwargs)`` before a kernel runs and
``exit(op, kind, key)`` after it, for
calls and redispatches alike (and while any observer is installed, the
autograd kernels take their full path, so each key a call passes through is
seen).  ``OpCounter`` is such an observer, used as a context manager::

    with OpCounter() as counts:
        loss.backward()
    print(counts.report())

``by_key`` counts kernel entries per dispatch key (``AutogradCPU``: an op
entered autograd; ``CPU``: a backend kernel ran; a composite op shows up under
the key whose table slot held its decomposition, then again for each op it
calls).  ``by_op`` counts entries per operator name, and ``by_op_key`` per
(operator, key) pair.
"""
from __future__ import annotations

from collections import Counter

from .dispatcher import _observers

__all__ = ["OpCounter"]


class OpCounter:
    """A dispatcher observer counting kernel entries by key and by operator."""

    def __init__(self):
        self.by_key: Counter[str] = Counter()
        self.by_op: Counter[str] = Counter()
        self.by_op_key: Counter[tuple[str, str]] = Counter()

    # -- the observer interface (called by the dispatcher) --
    def enter(self, op, kind, key, args, kwargs) -> None:
        name = op._name
        self.by_key[key.name] += 1
        self.by_op[name] += 1
        self.by_op_key[name, key.name] += 1

    def exit(self, op, kind, key) -> None:
        pass

    # -- context manager --
    def __enter__(self) -> "OpCounter":
        _observers.append(self)
        return self

    def __exit__(self, *exc) -> None:
        _observers.remove(self)

    @property
    def total(self) -> int:
        return sum(self.by_key.values())

    def report(self, top: int = 10) -> str:
        """Kernel entries per key, then the ``top`` operators by entries."""
        width = max((len(k) for k in self.by_key), default=3)
        lines = [f"{self.total} kernel entries"]
        lines += [f"  {key:<{width}}  {n:6d}" for key, n in self.by_key.most_common()]
        lines.append(f"top {top} operators:")
        lines += [f"  {name:<40} {n:6d}" for name, n in self.by_op.most_common(top)]
        return "\n".join(lines)

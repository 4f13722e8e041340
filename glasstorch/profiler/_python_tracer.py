"""Python calls as profiler events, for ``with_stack=True`` (PyTorch's
Python tracer, torch/csrc/autograd/profiler_python.cpp).

PyTorch's tracer records every Python function call and every call of a C
function from Python, as ``python_function`` events named
``file.py(first line): name`` or by the C function's repr
(``<built-in function len>``); ops nest inside the calls that made them, and
with a verbose config each op's ``stack`` lists the enclosing calls.

glasstorch's runtime is itself Python, playing the part of PyTorch's C++, so
the tracer sorts code three ways: glasstorch's own (``internal``), the
standard library and installed packages (``library``), and the program's
(``user``).  User code is always recorded (a model's ``forward`` called by
glasstorch's ``Module.__call__``, a hook).  Other code is recorded only when
called from a recorded frame that is not glasstorch's: ``torch.mm(a, b)``
appears as glasstorch's ``mm`` (where PyTorch shows ``<built-in method mm
...>``), but nothing glasstorch calls inside it does.  C functions are
recorded when called from a recorded frame.  The frames already running when
tracing starts are recorded too, from their current line, as PyTorch does.
"""
from __future__ import annotations

import itertools
import os
import sys
import time

__all__ = ["PythonTracer"]

perf_counter_ns = time.perf_counter_ns
_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep


INTERNAL, LIBRARY, USER = 0, 1, 2
_LIBRARY_DIRS = tuple({os.path.abspath(p) + os.sep
                       for p in (sys.prefix, sys.base_prefix, sys.exec_prefix)})


def _code_kind(frame) -> int:
    """Whose code runs in this frame: glasstorch's (including code it generates
    with exec), the standard library's or an installed package's, or the program's."""
    filename = frame.f_code.co_filename
    if filename.startswith(_PACKAGE_DIR):
        return INTERNAL
    if filename.startswith("<") and not filename.startswith("<frozen"):
        module = frame.f_globals.get("__name__")
        return INTERNAL if module is None or module.startswith("glasstorch") else USER
    if filename.startswith("<frozen") or filename.startswith(_LIBRARY_DIRS):
        return LIBRARY
    return USER


def _short_filename(filename: str) -> str:
    """The path relative to the longest ``sys.path`` entry containing it."""
    best = ""
    for entry in [os.path.dirname(_PACKAGE_DIR.rstrip(os.sep)), *sys.path]:
        root = os.path.abspath(entry or os.getcwd()) + os.sep
        if filename.startswith(root) and len(root) > len(best):
            best = root
    return filename[len(best):]


class PythonTracer:
    """Records Python calls on the thread that starts it (``sys.setprofile``)."""

    def __init__(self, stacks=False):
        self.stacks = stacks         # keep each event's enclosing calls (a verbose config)
        self.finished: list = []     # (name, start_ns, end_ns, thread, python_id, parent_id, stack)
        self._open: list = []        # (frame, C function or None, name, start_ns, python_id)
        self._ids = itertools.count(1)
        self._kinds: dict = {}       # code object -> INTERNAL, LIBRARY or USER
        self._names: dict = {}       # code object -> event name
        self._thread = None
        self._previous = None

    # -- lifetime --

    def start(self, thread) -> None:
        """Trace this thread (``thread``: its profiler ``ThreadInfo``)."""
        self._thread = thread
        frames = []
        frame = sys._getframe(1)
        while frame is not None:
            frames.append(frame)
            frame = frame.f_back
        now = perf_counter_ns()
        for frame in reversed(frames):     # outermost first: the running frames, from their line
            outermost = frame.f_back is None
            if (outermost and self._kind(frame) != INTERNAL) or self._records(frame):
                name = f"{_short_filename(frame.f_code.co_filename)}({frame.f_lineno}): " \
                       f"{frame.f_code.co_name}"
                self._open.append((frame, None, name, now, next(self._ids)))
        self._previous = sys.getprofile()
        sys.setprofile(self._event)

    def stop(self) -> None:
        sys.setprofile(self._previous)
        now = perf_counter_ns()
        while self._open:
            self._close(now)

    # -- what an op's stack shows --

    def current_stack(self) -> list:
        """The open calls, innermost first."""
        return [entry[2] for entry in reversed(self._open)]

    # -- the profile function --

    def _kind(self, frame) -> int:
        code = frame.f_code
        kind = self._kinds.get(code)
        if kind is None:
            kind = self._kinds[code] = _code_kind(frame)
        return kind

    def _records(self, frame) -> bool:
        """Is a call into ``frame`` an event?  (See the module docstring.)"""
        kind = self._kind(frame)
        if kind == USER:
            return True
        if kind == INTERNAL and frame.f_code.co_name == "__del__":
            return False     # a storage freed on the way: PyTorch's C++ frees it unseen
        caller = frame.f_back
        return caller is not None and self._called_from_recorded(caller)

    def _called_from_recorded(self, frame) -> bool:
        return bool(self._open) and self._open[-1][0] is frame and self._kind(frame) != INTERNAL

    def _name(self, code) -> str:
        name = self._names.get(code)
        if name is None:
            name = self._names[code] = \
                f"{_short_filename(code.co_filename)}({code.co_firstlineno}): {code.co_name}"
        return name

    def _event(self, frame, event, arg) -> None:
        if event == "call":
            if self._records(frame):
                self._open.append((frame, None, self._name(frame.f_code), perf_counter_ns(),
                                   next(self._ids)))
        elif event == "return":
            if self._open and self._open[-1][0] is frame and self._open[-1][1] is None:
                self._close(perf_counter_ns())
        elif event == "c_call":
            if self._called_from_recorded(frame):
                self._open.append((frame, arg, repr(arg), perf_counter_ns(), next(self._ids)))
        elif self._open and self._open[-1][0] is frame and self._open[-1][1] is arg:
            self._close(perf_counter_ns())     # c_return, c_exception

    def _close(self, now) -> None:
        _frame, _fn, name, start, python_id = self._open.pop()
        parent = self._open[-1][4] if self._open else -1
        stack = self.current_stack() if self.stacks else None
        self.finished.append((name, start, now, self._thread, python_id, parent, stack))

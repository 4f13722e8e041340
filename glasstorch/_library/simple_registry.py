"""Per-operator registrations that live outside the dispatch table
(torch/_library/simple_registry.py).

A fake impl is a Python function FakeTensor may call directly, and a
torch_dispatch rule is looked up by the Python dispatch layer for a given
``__torch_dispatch__`` class or mode; neither is a kernel at a dispatch key.
They are kept here, one ``SimpleOperatorEntry`` per qualified operator name.
"""
from __future__ import annotations

from .fake_impl import FakeImplHolder
from .utils import RegistrationHandle

__all__ = ["SimpleLibraryRegistry", "SimpleOperatorEntry", "singleton",
           "find_torch_dispatch_rule"]


class SimpleLibraryRegistry:
    """Qualified operator name (``ns::op`` or ``ns::op.overload``) -> its entry."""

    def __init__(self):
        self._data: dict[str, SimpleOperatorEntry] = {}

    def find(self, qualname: str) -> "SimpleOperatorEntry":
        entry = self._data.get(qualname)
        if entry is None:
            entry = self._data[qualname] = SimpleOperatorEntry(qualname)
        return entry


singleton = SimpleLibraryRegistry()


class SimpleOperatorEntry:
    def __init__(self, qualname: str):
        self.qualname = qualname
        self.fake_impl = FakeImplHolder(qualname)
        self.torch_dispatch_rules = GenericTorchDispatchRuleHolder(qualname)


class GenericTorchDispatchRuleHolder:
    """``__torch_dispatch__`` class or mode type -> the rule registered for it."""

    def __init__(self, qualname: str):
        self._data: dict = {}
        self.qualname = qualname

    def register(self, torch_dispatch_class, func) -> RegistrationHandle:
        if self.find(torch_dispatch_class):
            raise RuntimeError(f"{torch_dispatch_class} already has a `__torch_dispatch__` rule "
                               f"registered for {self.qualname}")
        self._data[torch_dispatch_class] = func
        return RegistrationHandle(lambda: self._data.pop(torch_dispatch_class))

    def find(self, torch_dispatch_class):
        return self._data.get(torch_dispatch_class)


def find_torch_dispatch_rule(op, torch_dispatch_class):
    """The rule registered for ``op`` and ``torch_dispatch_class``, or None: what
    the Python dispatch layer asks before calling ``__torch_dispatch__``."""
    entry = singleton._data.get(op._name)     # (looking must not create entries)
    return None if entry is None else entry.torch_dispatch_rules.find(torch_dispatch_class)

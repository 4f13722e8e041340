"""``torch.library``: define operators and register kernels from Python.

This is the same seam the built-in op library uses (the registry calls
``dispatcher.define`` and ``OperatorEntry.register`` just as ``Library`` does),
so a user op is a first-class citizen: it appears under ``torch.ops.<ns>``,
dispatches by key, and shows in ``_dispatch_dump``.

    lib = Library("myops", "DEF")                 # TORCH_LIBRARY(myops, m)
    lib.define("triple(Tensor x) -> Tensor")      #   m.def(...)
    lib.impl("triple", triple_cpu, "CPU")         # TORCH_LIBRARY_IMPL(myops, CPU, m) { m.impl(...) }
    torch.ops.myops.triple(x)

Registrations live as long as the ``Library`` object (``_destroy()`` undoes
them), which is how tests keep namespaces clean.
"""
from __future__ import annotations

import sys

from ._core.dispatch_key import DispatchKey
from ._dispatcher.dispatcher import (BOXED, KEYSET, UNBOXED, KernelFunction, dispatcher,
                                     fallthrough_kernel)
from ._dispatcher.schema import parse_schema

__all__ = ["Library", "fallthrough_kernel"]

_KINDS = ("DEF", "IMPL", "FRAGMENT")
_ALIAS_ANALYSIS = ("", "FROM_SCHEMA", "CONSERVATIVE")
_DEF_NAMESPACES: set = set()


def _key(name: str) -> DispatchKey:
    try:
        return DispatchKey[name]
    except KeyError:
        raise ValueError(f"Unknown dispatch key: {name}") from None


class Library:
    """A handle on one namespace's registrations (``TORCH_LIBRARY`` and friends)."""

    def __init__(self, ns: str, kind: str, dispatch_key: str = ""):
        if kind not in _KINDS:
            raise ValueError(f"Unsupported kind: {kind}")
        if ns == "prim" and kind == "IMPL":
            raise ValueError(f"{ns} is a reserved namespace. Please try creating a library with "
                             "another name.")
        frame = sys._getframe(1)
        self._where = f"{frame.f_code.co_filename}:{frame.f_lineno}"
        if kind == "DEF":
            if ns in _DEF_NAMESPACES:
                raise RuntimeError(
                    f"Only a single TORCH_LIBRARY can be used to register the namespace {ns}; "
                    "please put all of your definitions in a single TORCH_LIBRARY block.  If you "
                    "were trying to specify implementations, consider using TORCH_LIBRARY_IMPL "
                    "(which can be duplicated).  If you really intended to define operators for "
                    "a single namespace in a distributed way, you can use TORCH_LIBRARY_FRAGMENT "
                    "to explicitly indicate this.")
            _DEF_NAMESPACES.add(ns)
        self.ns, self.kind, self.dispatch_key = ns, kind, dispatch_key
        self._defs: list = []
        self._impls: list = []
        self._fallbacks: list = []

    def __repr__(self):
        return f"Library(kind={self.kind}, ns={self.ns}, dispatch_key={self.dispatch_key})>"

    def define(self, schema: str, alias_analysis: str = "", *, tags=()) -> str:
        """Declare an operator; returns its qualified name (``ns::name``)."""
        if self.kind == "IMPL":
            raise RuntimeError(f'def("{schema.split("(")[0]}"): Cannot define an operator inside '
                               "of a TORCH_LIBRARY_IMPL block.  All def()s should be placed in "
                               f"the (unique) TORCH_LIBRARY block for their namespace.")
        if alias_analysis not in _ALIAS_ANALYSIS:
            raise RuntimeError(f"Invalid alias_analysis type {alias_analysis}")
        text = schema if "::" in schema.split("(")[0] else f"{self.ns}::{schema}"
        entry = dispatcher.define(parse_schema(text), f"registered at {self._where}")
        from ._dispatcher.dispatcher import ops
        base = entry.schema.name.split("::")[1]
        getattr(getattr(ops, self.ns), base)._overloads[entry.schema.overload_name or "default"] \
            .tags = list(tags)
        self._defs.append(entry)
        return entry.schema.name

    def impl(self, op_name, fn, dispatch_key: str = "", *, with_keyset: bool = False,
             allow_override: bool = True) -> None:
        """Register ``fn`` as the kernel of ``op_name`` for ``dispatch_key``
        (a runtime key such as "CPU" or an alias such as "CompositeImplicitAutograd")."""
        name = op_name if isinstance(op_name, str) else op_name._name
        if "::" not in name:
            name = f"{self.ns}::{name}"
        entry = dispatcher.find(name) or dispatcher.find(name + ".default")
        if entry is None:
            raise RuntimeError(f"Could not find schema for {name}")
        key = _key(dispatch_key or self.dispatch_key or "CompositeImplicitAutograd")
        if key == DispatchKey.Meta and DispatchKey.CompositeImplicitAutograd in entry.kernels:
            raise RuntimeError(
                f"We should not register a meta kernel directly to the operator "
                f"'{entry.name.split('::')[1]}', because it has a CompositeImplicitAutograd kernel "
                "in core. Instead we should let the operator decompose, and ensure that we have "
                "meta kernels for the base ops that it decomposes into.")
        convention = KEYSET if with_keyset else UNBOXED
        kernel = KernelFunction(fn, convention, f"registered at {self._where}")
        entry.register(key, kernel)
        self._impls.append((entry, key, kernel))

    def fallback(self, fn, dispatch_key: str = "", *, with_keyset: bool = False) -> None:
        """A boxed kernel for every operator at ``dispatch_key``:
        ``fn(op, keyset, args, kwargs)`` (``with_keyset`` is implied: boxed
        fallbacks always receive the key set, as in PyTorch's C++)."""
        if self.ns != "_":
            raise RuntimeError(f"fallback can only be registered using library fragment on the "
                               f"global namespace \"_\" but it is {self.ns}")
        key = _key(dispatch_key or self.dispatch_key)
        kernel = KernelFunction(fn, UNBOXED if fn is fallthrough_kernel else BOXED,
                                f"registered at {self._where}")
        previous = dispatcher.fallbacks.get(key)
        dispatcher.register_fallback(key, kernel)
        self._fallbacks.append((key, previous))

    def _destroy(self) -> None:
        """Undo every registration this library made."""
        for entry, key, kernel in reversed(self._impls):
            entry.deregister(key, kernel)
        for key, previous in reversed(self._fallbacks):
            if previous is None:
                dispatcher.deregister_fallback(key)
            else:
                dispatcher.register_fallback(key, previous)
        for entry in reversed(self._defs):
            dispatcher.undefine(entry)
        if self.kind == "DEF":
            _DEF_NAMESPACES.discard(self.ns)
        self._impls, self._fallbacks, self._defs = [], [], []

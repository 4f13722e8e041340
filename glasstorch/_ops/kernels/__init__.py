"""Backend kernels and meta rules, named so ``native_functions.yaml`` can point at them.

Each module here registers functions with one of three decorators:

    @meta("add")      meta rule of a structured op: inputs -> TensorMeta(s)
    @impl("add")      CPU body of a structured op: fills preallocated outputs
    @kernel("view")   a whole kernel (views, factories, composites): returns tensors

A yaml entry names them: ``structured: add`` uses meta "add" and impl "add";
``dispatch: {CompositeExplicitAutograd: view}`` uses kernel "view".  Names are
unique; registering one twice is an error, so two files can't silently fight.
"""
from __future__ import annotations

import importlib
import pkgutil

META_RULES: dict = {}
IMPLS: dict = {}
KERNELS: dict = {}


def _register(table, kind, name):
    def decorate(fn):
        if name in table:
            raise RuntimeError(f"{kind} '{name}' registered twice ({table[name].__module__} "
                               f"and {fn.__module__})")
        table[name] = fn
        return fn
    return decorate


def meta(name: str):
    """Register the meta rule (shape/dtype/strides) of structured op ``name``."""
    return _register(META_RULES, "meta rule", name)


def impl(name: str):
    """Register the CPU implementation of structured op ``name``."""
    return _register(IMPLS, "impl", name)


def kernel(name: str, *, takes_keyset: bool = False):
    """Register a complete kernel; ``takes_keyset`` kernels receive the dispatch
    key set first so they can redispatch below their key."""
    def decorate(fn):
        fn._takes_keyset = takes_keyset
        return _register(KERNELS, "kernel", name)(fn)
    return decorate


def load_all() -> None:
    """Import every kernel module so its decorators run."""
    for info in pkgutil.iter_modules(__path__):
        importlib.import_module(f"{__name__}.{info.name}")

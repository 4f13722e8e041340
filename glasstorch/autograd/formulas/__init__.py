"""Helpers that derivatives.yaml formulas call (PyTorch's FunctionsManual.cpp).

Each module here lists its helpers in ``__all__``; a formula sees all of them,
plus ``torch`` (this package) and ``aten`` (``torch.ops.aten``), as globals.
Helpers compute with ops only, so a backward pass dispatches like any other
code (profiler, modes and double backward see it) — never with numpy.
"""
from __future__ import annotations

import importlib
import pkgutil

import glasstorch as torch

from ..._dispatcher.dispatcher import ops

FORMULA_GLOBALS: dict = {"torch": torch, "aten": ops.aten, "__builtins__": __builtins__}

for _info in pkgutil.iter_modules(__path__):
    _module = importlib.import_module(f"{__name__}.{_info.name}")
    for _name in _module.__all__:
        if _name in FORMULA_GLOBALS:
            raise RuntimeError(f"formula helper {_name!r} defined twice ({_module.__name__})")
        FORMULA_GLOBALS[_name] = getattr(_module, _name)

from .common import sum_to  # noqa: E402  (the engine uses it too)

"""``torch.nn.utils.stateless``: run a Module with other tensors in place of
its parameters and buffers (``functional_call``), the way ``torch.func`` and
AOTAutograd turn a Module into a function of its weights."""
from __future__ import annotations

import contextlib
import warnings

from ..modules.module import Module

__all__ = ["functional_call"]


@contextlib.contextmanager
def _reparametrize_module(module: Module, tensors: dict, *, tie_weights: bool = False,
                          strict: bool = False):
    """Within the block, ``module.<name>`` is ``tensors[name]`` for each name
    (a parameter or buffer path); the originals come back afterwards."""
    if strict:
        expected = {n for n, _ in module.named_parameters(remove_duplicate=False)} | \
            {n for n, _ in module.named_buffers(remove_duplicate=False)}
        missing, unexpected = sorted(expected - set(tensors)), sorted(set(tensors) - expected)
        if missing or unexpected:
            parts = []
            if unexpected:
                parts.append("Unexpected key(s): " + ", ".join(map(repr, unexpected)) + ".")
            if missing:
                parts.append("Missing key(s): " + ", ".join(map(repr, missing)) + ".")
            raise RuntimeError("Error(s) in reparametrizing for {}:\n\t{}".format(
                module._get_name(), "\n\t".join(parts)))
    if tie_weights:     # a weight shared under two names follows the one given
        by_identity: dict = {}
        for name, t in list(module.named_parameters(remove_duplicate=False)) + \
                list(module.named_buffers(remove_duplicate=False)):
            by_identity.setdefault(id(t), []).append(name)
        for names in by_identity.values():
            given = [n for n in names if n in tensors]
            if given:
                tensors = {**{n: tensors[given[0]] for n in names}, **tensors}
    saved = []
    try:
        for name, value in tensors.items():
            *path, field = name.split(".")
            owner = module.get_submodule(".".join(path))
            table = owner._parameters if field in owner._parameters else \
                owner._buffers if field in owner._buffers else None
            if table is not None:
                saved.append((table, field, table[field]))
                table[field] = value
            else:
                saved.append((owner.__dict__, field, owner.__dict__.get(field, _ABSENT)))
                owner.__dict__[field] = value
        yield
    finally:
        for table, field, original in reversed(saved):
            if original is _ABSENT:
                del table[field]
            else:
                table[field] = original


_ABSENT = object()


def functional_call(module: Module, parameters_and_buffers: dict, args=None, kwargs=None, *,
                    tie_weights: bool = True, strict: bool = False):
    """Deprecated spelling of ``torch.func.functional_call``."""
    warnings.warn("`torch.nn.utils.stateless.functional_call` is deprecated as of PyTorch 2.0 "
                  "and will be removed in a future version of PyTorch. Please use "
                  "`torch.func.functional_call` instead which is a drop-in replacement.",
                  FutureWarning, stacklevel=2)
    return _functional_call(module, parameters_and_buffers, args, kwargs,
                            tie_weights=tie_weights, strict=strict)


def _functional_call(module: Module, parameter_and_buffer_dicts, args=None, kwargs=None, *,
                     tie_weights: bool = True, strict: bool = False):
    """``module(*args, **kwargs)`` with the given tensors as its parameters and
    buffers (one dict, or several that must not share keys): torch.func.functional_call."""
    if isinstance(parameter_and_buffer_dicts, dict):
        tensors = dict(parameter_and_buffer_dicts)
    else:
        tensors = {}
        for d in parameter_and_buffer_dicts:
            repeated = set(d) & set(tensors)
            if repeated:
                raise ValueError(f"{sorted(repeated)} appeared in multiple dictionaries; "
                                 f"behavior of functional call is ambiguous")
            tensors.update(d)
    if args is None:
        args = ()
    elif not isinstance(args, tuple):
        args = (args,)
    with _reparametrize_module(module, tensors, tie_weights=tie_weights, strict=strict):
        return module(*args, **(kwargs or {}))

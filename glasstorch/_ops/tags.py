"""``torch.Tag``: the operator tags declared in ``tags.yaml``, as an enum
numbered in declaration order (``Tag.core`` is 0, as in PyTorch)."""
from __future__ import annotations

import enum
import os

from .._core import startup_cache

with open(os.path.join(os.path.dirname(__file__), "tags.yaml")) as _f:
    _TEXT = _f.read()
_DECLARED = startup_cache.cached_yaml("tags.yaml", _TEXT)

Tag = enum.Enum("Tag", [(d["tag"], i) for i, d in enumerate(_DECLARED)], module="glasstorch")
Tag.__doc__ = "Operator tags: " + "; ".join(f"{d['tag']}: {d['desc']}" for d in _DECLARED)

# What an autogen'd overload drops from its functional op's tags (a property of
# the functional computation, not of writing in place or into out=).
_NOT_INHERITED = {Tag.core, Tag.inplace_view, Tag.view_copy, Tag.maybe_aliasing_or_mutating,
                  Tag.dynamic_output_shape, Tag.data_dependent_output}


def declared_tags(entry) -> list:
    """The tags of a native_functions.yaml entry's own overload."""
    return _in_order({Tag[name] for name in entry.get("tags") or ()})


def derived_tags(entry, overload: str, kind: str, functional: list) -> list:
    """The tags of the overload ``overload`` (kind "inplace" or "out") that the
    entry's ``autogen`` derives: those PyTorch's codegen generates carry
    ``generated`` and ``out``; the others keep the functional op's tags and add
    their kind; ``derived_tags`` lists where PyTorch's declarations differ."""
    explicit = (entry.get("derived_tags") or {}).get(overload)
    if explicit is not None:
        tags = {Tag[name] for name in explicit}
    elif overload in (entry.get("generated") or "").replace(" ", "").split(","):
        tags = {Tag.generated, Tag.out} | ({Tag.nondeterministic_seeded} & set(functional))
    else:
        tags = (set(functional) - _NOT_INHERITED) | {Tag[kind]}
    return _in_order(tags)


def _in_order(tags) -> list:
    """Every aten op is pt2-compliant; PyTorch lists tags in enum order."""
    return sorted(set(tags) | {Tag.pt2_compliant_tag}, key=lambda t: t.value)

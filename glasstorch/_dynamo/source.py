"""``torch._dynamo.source``: where a value Dynamo saw came from.

A source names a value by the path from the frame to it, spelled as PyTorch's
guards print it (``L['x']``, ``G['torch'].sin``, ``L['self']._modules['fc']``),
and can fetch the value again from a running frame's locals ``L`` and globals
``G``.  Graph inputs are named after their source (``L['x']`` is the
placeholder ``L_x_``), and guards are Python expressions over sources.
"""
from __future__ import annotations

import re
from dataclasses import dataclass


class Source:
    def name(self) -> str:
        raise NotImplementedError

    def get(self, L: dict, G: dict):
        return eval(self.name(), {"L": L, "G": G})   # noqa: S307 (our own source text)

    def placeholder_name(self) -> str:
        """The graph input's name: the source with every run of characters a
        Python name cannot hold turned into one ``_`` (``L['x']`` -> ``L_x_``)."""
        return re.sub(r"[^a-zA-Z0-9]+", "_", self.name())


@dataclass(frozen=True)
class LocalSource(Source):
    local_name: str

    def name(self) -> str:
        return f"L[{self.local_name!r}]"

    def get(self, L, G):
        return L[self.local_name]


@dataclass(frozen=True)
class GlobalSource(Source):
    global_name: str

    def name(self) -> str:
        return f"G[{self.global_name!r}]"

    def get(self, L, G):
        return G[self.global_name]


@dataclass(frozen=True)
class AttrSource(Source):
    base: Source
    member: str

    def name(self) -> str:
        return f"{self.base.name()}.{self.member}"

    def get(self, L, G):
        return getattr(self.base.get(L, G), self.member)


@dataclass(frozen=True)
class GetItemSource(Source):
    base: Source
    index: object

    def name(self) -> str:
        return f"{self.base.name()}[{self.index!r}]"

    def get(self, L, G):
        return self.base.get(L, G)[self.index]


@dataclass(frozen=True)
class TensorPropertySource(Source):
    """A size of a tensor read from ``base``: ``L['x'].size()[0]``, the value of a
    dynamic dim's symbol."""
    base: Source
    dim: int

    def name(self) -> str:
        return f"{self.base.name()}.size()[{self.dim}]"

    def get(self, L, G):
        return self.base.get(L, G).size()[self.dim]


@dataclass(frozen=True)
class ModuleGlobalSource(Source):
    """A global of another module (read by an inlined function), named as
    PyTorch names it: ``G['__import_torch_dot_nn_dot_functional'].relu``."""
    module: str
    global_name: str

    def name(self) -> str:
        return f"G['__import_{self.module.replace('.', '_dot_')}'].{self.global_name}"

    def get(self, L, G):
        import sys
        return sys.modules[self.module].__dict__[self.global_name]

"""``torch._dynamo.guards``: when a compiled frame may be reused.

Tracing assumed things about the frame's inputs: a tensor's type, dtype,
device, sizes, strides and ``requires_grad``; a Python int's value; which
module or function a name held; whether grad mode was on.  Each assumption is
a guard: a Python expression over the frame's locals ``L`` and globals ``G``,
spelled as PyTorch prints its guards.  All of a frame's guards become one
function, generated as Python source (``GuardSet.source``), compiled once and
run on every call before the cached graph is reused.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import glasstorch

from .source import Source


@dataclass
class Guard:
    name: str                 # the source, as PyTorch prints it (L['x'])
    kind: str                 # TENSOR_MATCH, EQUALS_MATCH, TYPE_MATCH, ID_MATCH, GRAD_MODE...
    code: list                # Python expressions that must all be true


@dataclass
class TensorSpec:
    """What TENSOR_MATCH checks of a tensor, read once at trace time."""
    cls: type
    dtype: object
    device: object
    size: tuple
    stride: tuple
    requires_grad: bool

    def __repr__(self):
        return (f"{self.cls.__name__}, {self.dtype}, {self.device}, size={list(self.size)}, "
                f"stride={list(self.stride)}, requires_grad={self.requires_grad}")


def check_tensor(x, spec: TensorSpec) -> bool:
    return (type(x) is spec.cls and x.dtype is spec.dtype and x.device == spec.device
            and x.requires_grad == spec.requires_grad and x.shape == spec.size
            and x.stride() == spec.stride)


def check_obj_id(x, expected: int) -> bool:
    return id(x) == expected


def check_type_id(x, expected: int) -> bool:
    return id(type(x)) == expected


@dataclass
class GuardSet:
    """A frame's guards, and the function that checks them all."""
    guards: list = field(default_factory=list)
    _seen: set = field(default_factory=set)
    _specs: list = field(default_factory=list)

    def add(self, name: str, kind: str, code: list) -> None:
        if (name, kind) not in self._seen:
            self._seen.add((name, kind))
            self.guards.append(Guard(name, kind, code))

    def tensor(self, source: Source, value) -> None:
        spec = TensorSpec(type(value), value.dtype, value.device, tuple(value.shape),
                          tuple(value.stride()), value.requires_grad)
        self._specs.append(spec)
        self.add(source.name(), "TENSOR_MATCH",
                 [f"___check_tensor({source.name()}, ___spec{len(self._specs) - 1})"])

    def constant(self, source: Source, value) -> None:
        name = source.name()
        self.add(name, "TYPE_MATCH",
                 [f"___check_type_id({name}, {id(type(value))})"])
        if value is None or isinstance(value, bool):
            self.add(name, "ID_MATCH", [f"{name} is {value!r}"])
        elif isinstance(value, (int, float, str)) and value == value:
            self.add(name, "EQUALS_MATCH", [f"{name} == {value!r}"])
        else:
            self.add(name, "ID_MATCH", [f"___check_obj_id({name}, {id(value)})"])

    def identity(self, source: Source, value) -> None:
        self.add(source.name(), "ID_MATCH",
                 [f"___check_obj_id({source.name()}, {id(value)})"])

    def length(self, source: Source, value) -> None:
        name = source.name()
        self.add(name, "TYPE_MATCH", [f"___check_type_id({name}, {id(type(value))})"])
        self.add(name, "LIST_LENGTH", [f"len({name}) == {len(value)}"])

    def global_state(self) -> None:
        self.add("", "GRAD_MODE",
                 [f"___is_grad_enabled() == {glasstorch.is_grad_enabled()}"])

    # -- the check function ----------------------------------------------------------

    def source(self) -> str:
        """The guard function as Python source (what ``TORCH_LOGS=guards`` prints)."""
        lines = [line for g in self.guards for line in g.code] or ["True"]
        body = "\n        and ".join(lines)
        return f"def ___guard(L, G):\n    return (\n        {body}\n    )\n"

    def readable(self) -> str:
        """One guard per line, tensor specs written out."""
        out = []
        for g in self.guards:
            for line in g.code:
                for i, spec in enumerate(self._specs):
                    line = line.replace(f"___spec{i})", f"{spec!r})")
                out.append(f"{g.kind:>14}: {line}")
        return "\n".join(out)

    def compile(self):
        scope = {"___check_tensor": check_tensor, "___check_obj_id": check_obj_id,
                 "___check_type_id": check_type_id,
                 "___is_grad_enabled": glasstorch.is_grad_enabled,
                 **{f"___spec{i}": s for i, s in enumerate(self._specs)}}
        exec(compile(self.source(), "<dynamo guards>", "exec"), scope)   # noqa: S102
        return scope["___guard"]

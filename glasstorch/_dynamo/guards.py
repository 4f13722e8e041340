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

import ast
import linecache
import operator
import os
import re
import sys
from dataclasses import dataclass, field

import glasstorch

from .._core.dispatch_key import DispatchKeySet
from .._core.tls import state as _tls
from ..amp import autocast_state as _amp
from ..autograd.variable import requires_grad as _requires_grad
from .source import Source


@dataclass
class Guard:
    name: str                 # the source, as PyTorch prints it (L['x'])
    kind: str                 # TENSOR_MATCH, EQUALS_MATCH, TYPE_MATCH, ID_MATCH, GLOBAL_STATE...
    code: list                # Python expressions that must all be true
    frame: tuple | None = None   # (file, line, function) of the code that needed it
    check: list | None = None    # what runs, where it checks more than it prints

    def comment(self, line: str) -> str:
        """``line`` as PyTorch's verbose guards print it: padded, then the source
        line and the place that installed the guard."""
        if self.frame is None:
            return line
        file, lineno, function = self.frame
        code = linecache.getline(file, lineno).strip()
        return f"{line:<60}  # {code}  # {_shorten(file)}:{lineno} in {function}"

    def user_stack(self) -> list:
        """The recompile log's "User stack trace" lines for this guard."""
        if self.frame is None:
            return []
        file, lineno, function = self.frame
        return ["User stack trace:", f'  File "{file}", line {lineno}, in {function}',
                f"    {linecache.getline(file, lineno).strip()}"]

    # PyTorch's Guard fields, as explain()'s out_guards show them
    @property
    def code_list(self) -> list:
        return self.code

    @property
    def guard_types(self) -> list:
        return [self.kind]

    @property
    def create_fn_name(self) -> str:
        return self.kind


@dataclass
class TensorSpec:
    """What TENSOR_MATCH checks of a tensor, read once at trace time."""
    cls: type
    dtype: object
    device: object
    size: tuple
    stride: tuple
    requires_grad: bool
    keys: object = None       # its DispatchKeySet with the thread's included keys, as logged

    def __repr__(self):
        return (f"{self.cls.__name__}, {self.dtype}, {self.device}, size={list(self.size)}, "
                f"stride={list(self.stride)}, requires_grad={self.requires_grad}")

    def __post_init__(self):
        self.dynamic = None in self.size or None in self.stride
        # a plain tensor's requires_grad is read without the __torch_function__ check
        self.read_requires_grad = _requires_grad if self.cls is glasstorch.Tensor else \
            (lambda x: x.requires_grad)


def _keys_seen_by(tensor):
    """The key set a call on ``tensor`` dispatches with (its keys, plus the
    thread's included ones, minus the excluded ones), as TENSOR_MATCH logs it."""
    return DispatchKeySet((tensor._keys | _tls.included) & ~_tls.excluded)


def check_tensor(x, spec: TensorSpec) -> bool:
    """TENSOR_MATCH: a dynamic dim's size (None) is left to the shape guards."""
    if not (type(x) is spec.cls and x.dtype is spec.dtype and
            (x.device is spec.device or x.device == spec.device) and
            spec.read_requires_grad(x) == spec.requires_grad):
        return False
    if not spec.dynamic:
        return x._shape == spec.size and x._stride == spec.stride
    shape, stride = x._shape, x._stride
    return len(shape) == len(spec.size) and \
        all(e is None or e == a for e, a in zip(spec.size, shape)) and \
        all(e is None or e == a for e, a in zip(spec.stride, stride))


def _tensor_mismatch(name: str, x, spec: TensorSpec) -> str:
    name = re.sub(r"^L\['(\w+)'\]$", r"\1", name)
    if type(x) is not spec.cls:
        return f"expected type of '{name}' to be a tensor type, ' but found {type(x)}"
    if x.dtype is not spec.dtype:
        return f"tensor '{name}' dtype mismatch. expected {spec.dtype._short}, " \
               f"actual {x.dtype._short}"
    if x.device != spec.device:
        return f"tensor '{name}' device mismatch. expected {spec.device}, actual {x.device}"
    if x.requires_grad != spec.requires_grad:
        return f"tensor '{name}' requires_grad mismatch. expected " \
               f"requires_grad={int(spec.requires_grad)}"
    if x.dim() != len(spec.size):
        return f"tensor '{name}' rank mismatch. expected {len(spec.size)}, actual {x.dim()}"
    for what, expected, actual in (("size", spec.size, x.shape), ("stride", spec.stride,
                                                                  x.stride())):
        for i, (e, a) in enumerate(zip(expected, actual)):
            if e is not None and e != a:
                return f"tensor '{name}' {what} mismatch at index {i}. expected {e}, actual {a}"
    return f"tensor '{name}' mismatch"


def _shorten(file: str) -> str:
    """A file name relative to what it shares with glasstorch's folder, as
    PyTorch's shorten_filename cuts it relative to torch's (``/tmp/ex/a.py``
    shares only ``/`` and prints as ``mp/ex/a.py``, as in PyTorch)."""
    try:
        prefix = os.path.commonpath([file, _PACKAGE])
    except ValueError:
        return file
    return file[len(prefix) + 1:]


_PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _executable(line: str) -> str:
    """A guard line as the check function runs it: another module's globals,
    printed ``G['__import_a_dot_b'].name`` as PyTorch prints them, are read from
    that module."""
    return re.sub(r"G\['__import_(\w+)'\]",
                  lambda m: f"___module({m.group(1).replace('_dot_', '.')!r})", line)


def check_no_aliasing(*tensors) -> bool:
    return len({id(t) for t in tensors}) == len(tensors)


def check_obj_id(x, expected: int) -> bool:
    return id(x) == expected


def check_type_id(x, expected: int) -> bool:
    return id(type(x)) == expected


class GlobalState:
    """A snapshot of the thread state a graph was traced under: grad mode and,
    per device, whether autocast is on and its dtype (read straight from the
    thread-local state: it is checked on every call)."""

    DEVICES = ("cpu", "cuda")

    def __init__(self):
        self.values = self.read()

    @staticmethod
    def read() -> tuple:
        dtypes = _amp.state.dtypes
        return _tls.grad_enabled, _tls.excluded & _AUTOCAST_BITS, dtypes["cpu"], dtypes["cuda"]

    def check(self) -> bool:
        return self.read() == self.values

    def _autocast(self, values) -> list:
        return [(not values[1] & _amp.KEY_BITS[d], dtype)
                for d, dtype in zip(self.DEVICES, values[2:])]

    def changed(self) -> str:
        """What differs now, as PyTorch's recompile reason lists it."""
        now = self.read()
        fields = ["grad_mode "] if now[0] != self.values[0] else []
        for device, (on, dtype), (was_on, was_dtype) in zip(
                self.DEVICES, self._autocast(now), self._autocast(self.values)):
            if on != was_on:                # a dtype counts only for the same on/off
                fields.append(f"autocast({device})_enabled ")
            elif dtype != was_dtype:
                fields.append(f"autocast({device})_dtype ")
        return "GLOBAL_STATE changed: " + "".join(fields)

    def __repr__(self):
        autocast = self._autocast(self.values)
        enabled = ",".join("true" if on else "false" for on, _ in autocast)
        dtypes = ",".join(str(dtype) for _, dtype in autocast)
        return (f'{{"autocast_state":{{"dtype":[{dtypes}],"enabled":[{enabled}]}},'
                f'"grad_mode":{"true" if self.values[0] else "false"}}}')


_AUTOCAST_BITS = _amp.KEY_BITS["cpu"] | _amp.KEY_BITS["cuda"]


@dataclass
class GuardSet:
    """A frame's guards, and the function that checks them all."""
    guards: list = field(default_factory=list)
    _seen: set = field(default_factory=set)
    _specs: list = field(default_factory=list)
    _global: GlobalState | None = None
    # (source name) -> (file, line, function) of the code that reads it
    where: object = None

    def add(self, name: str, kind: str, code: list, check: list | None = None,
            located: bool = True) -> None:
        """A guard; ``located``: it remembers the source line that read ``name``."""
        if (name, kind) not in self._seen:
            self._seen.add((name, kind))
            frame = self.where(name) if self.where and located else None
            self.guards.append(Guard(name, kind, code, frame, check))

    def tensor(self, source: Source, value, fake=None) -> None:
        static = (lambda v: v if type(v) is int else None)
        size = tuple(map(static, fake.shape)) if fake is not None else tuple(value.shape)
        stride = tuple(map(static, fake.stride())) if fake is not None else tuple(value.stride())
        spec = TensorSpec(type(value), value.dtype, value.device, size, stride,
                          value.requires_grad, _keys_seen_by(value))
        self._specs.append(spec)
        self.add(source.name(), "TENSOR_MATCH",
                 [f"___check_tensor({source.name()}, ___spec{len(self._specs) - 1})"])

    def constant(self, source: Source, value) -> None:
        name = source.name()
        type_check = f"___check_type_id({name}, {id(type(value))})"
        if isinstance(value, (int, float, str)) and not isinstance(value, bool) and \
                value == value:           # EQUALS_MATCH checks the type too, as PyTorch's does
            self.add(name, "EQUALS_MATCH", [f"{name} == {value!r}"],
                     check=[f"{type_check} and {name} == {value!r}"])
            return
        self.add(name, "TYPE_MATCH", [type_check])
        if value is None or isinstance(value, bool):
            self.add(name, "ID_MATCH", [f"{name} is {value!r}"])
        else:
            self.add(name, "ID_MATCH", [f"___check_obj_id({name}, {id(value)})"])

    def identity(self, source: Source, value) -> None:
        self.add(source.name(), "ID_MATCH",
                 [f"___check_obj_id({source.name()}, {id(value)})"])

    def length(self, source: Source, value) -> None:
        name = source.name()
        self.add(name, "TYPE_MATCH", [f"___check_type_id({name}, {id(type(value))})"])
        self.add(name, "LENGTH_CHECK", [f"len({name}) == {len(value)}"])

    def duplicate(self, name: str, original: str) -> None:
        """One tensor read from two sources became one graph input: it must stay
        one tensor (PyTorch's DUPLICATE_INPUT)."""
        self.add(name, "DUPLICATE_INPUT", [f"{name} is {original}"])

    def no_aliasing(self, names: list) -> None:
        """Distinct tensor inputs must stay distinct objects: the graph took them
        as separate inputs (PyTorch's NO_TENSOR_ALIASING)."""
        if len(names) > 1:
            self.add(names[0], "NO_TENSOR_ALIASING", [f"check_no_aliasing({', '.join(names)})"],
                     check=[f"___check_no_aliasing({', '.join(names)})"], located=False)

    def shape_env(self, shape_env) -> None:
        """The dynamic sizes' guards, over the sources they were read from: each
        symbol's range (``2 <= L['x'].size()[0]``), sizes duck-typed to one symbol
        (``L['y'].size()[0] == L['x'].size()[0]``), then what tracing decided."""
        sources: dict = {}
        for name, symbol in shape_env.source_to_var.items():
            sources.setdefault(str(symbol), []).append(name)
        if not sources:
            return
        lines = []
        for symbol, names in sources.items():
            if ".size()[" in names[0]:
                lines.append(f"2 <= {names[0]}")
            lines += [f"{other} == {names[0]}" for other in names[1:]]
        pattern = re.compile(r"\b(" + "|".join(map(re.escape, sources)) + r")\b")
        for guard in shape_env.guards:
            lines.append(pattern.sub(lambda m: sources[m.group(1)][0], str(guard.expr)))
        self.add("", "SHAPE_ENV", lines)

    def global_state(self) -> None:
        """Grad mode and each device's autocast state, as traced (PyTorch's
        GLOBAL_STATE guard: its graph's ops and dtypes depend on them)."""
        self._global = GlobalState()
        self.add("", "GLOBAL_STATE", [f"___check_global_state() against {self._global!r}"],
                 check=["___check_global_state()"], located=False)

    # -- the check function ----------------------------------------------------------

    def _in_check_order(self) -> list:
        """Cheap guards first, tensor checks last (PyTorch's guard tree checks them
        in that order too, so the failure it reports is the same)."""
        return sorted(self.guards, key=lambda g: g.kind == "TENSOR_MATCH")

    def source(self) -> str:
        """The guard function as Python source (what ``TORCH_LOGS=guards`` prints)."""
        lines = [_executable(line) for g in self._in_check_order()
                 for line in g.check or g.code] \
            or ["True"]
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

    def tree(self, L, G, code) -> str:
        """The guards as PyTorch's guard tree prints them (``TORCH_LOGS=guards``):
        a GuardManager per value read, nested by how it is reached from the
        frame (``L['self'].__dict__``, then ``_modules``, then ``['fc']``), each
        with its guards and the source line that needed them; the shape
        guards after the root."""
        root = _TreeNode("RootGuardManager", None)
        shape_lines = []
        for guard in self.guards:
            if guard.kind in ("SHAPE_ENV", "DUPLICATE_INPUT"):
                shape_lines += [f"+- LAMBDA_GUARD: {guard.comment(line)}" for line in guard.code]
                continue
            node = root if not guard.name else _manager(root, guard.name, L, G, code)
            for line in guard.code:
                node.leaves.append(f"{guard.kind}: {self._verbose(guard, line, node.value)}")
            if guard.kind == "NO_TENSOR_ALIASING":      # the others name it bare
                for other in re.findall(r"[LG]\[[^,)]*", guard.code[0])[1:]:
                    _manager(root, other, L, G, code).leaves.append(guard.kind)
        return "\n".join(["", "TREE_GUARD_MANAGER:", *root.lines(), *shape_lines, "", ""])

    def _verbose(self, guard: Guard, line: str, value) -> str:
        """One guard line as PyTorch's verbose code parts spell it."""
        match = re.fullmatch(r"___check_tensor\((.*), ___spec(\d+)\)", line)
        if match:
            spec = self._specs[int(match.group(2))]
            device = spec.device.index if spec.device.type != "cpu" else None
            line = (f"check_tensor({match.group(1)}, {spec.cls.__name__}, {spec.keys!r}, "
                    f"{spec.dtype}, device={device}, requires_grad={spec.requires_grad}, "
                    f"size={list(spec.size)}, stride={list(spec.stride)})")
        elif guard.kind in ("ID_MATCH", "TYPE_MATCH") and line.startswith("___check"):
            line = f"{line}, type={type(value)}"
        text = guard.comment(line)
        return text + f" (HINT: type {type(value).__name__})" if guard.kind == "TYPE_MATCH" \
            and guard.frame is not None else text

    def failure(self, L, G) -> str | None:
        """The first guard that fails on these locals, as PyTorch's recompile log
        words it (``tensor 'x' size mismatch at index 0. expected 4, actual 6``)."""
        scope = self._scope()
        for guard in self._in_check_order():
            for line, check in zip(guard.code, guard.check or guard.code):
                if eval(_executable(check), scope, {"L": L, "G": G}):   # noqa: S307 (ours)
                    continue
                if guard.kind == "GLOBAL_STATE":
                    return self._global.changed()
                if guard.kind == "TENSOR_MATCH":
                    index = int(line.rsplit("___spec", 1)[1].rstrip(")"))
                    return _tensor_mismatch(guard.name, eval(guard.name, {}, {"L": L, "G": G}),
                                            self._specs[index])
                shown = re.sub(r"[LG]\['(\w+)'\]", r"\1", guard.comment(line))
                return "\n    - ".join([shown] + guard.user_stack())
        return None

    def _scope(self) -> dict:
        return {"___check_tensor": check_tensor, "___check_obj_id": check_obj_id,
                "___check_no_aliasing": check_no_aliasing,
                "___check_type_id": check_type_id, "Eq": operator.eq, "Ne": operator.ne,
                "Mod": operator.mod, "Max": max, "Min": min, "IntTrueDiv": operator.truediv,
                "___check_global_state": self._global.check if self._global else None,
                "___module": lambda name: sys.modules[name],
                **{f"___spec{i}": s for i, s in enumerate(self._specs)}}

    def compile(self):
        scope = self._scope()
        exec(compile(self.source(), "<dynamo guards>", "exec"), scope)   # noqa: S102
        return scope["___guard"]


class _TreeNode:
    """One GuardManager of the printed tree: how its value is reached, its guards,
    the managers below it."""

    def __init__(self, header: str, value):
        self.header, self.value = header, value
        self.leaves: list = []
        self.children: dict = {}

    def child(self, key: str, header: str, value) -> "_TreeNode":
        if key not in self.children:
            self.children[key] = _TreeNode(header, value)
        return self.children[key]

    def lines(self, depth: int = 0) -> list:
        bar = "| " * depth
        out = [f"{bar}+- {self.header}"]
        out += [f"{bar}| +- {leaf}" for leaf in self.leaves]
        for child in _ordered(self.children.values()):
            out += child.lines(depth + 1)
        return out


def _ordered(children) -> list:
    """Frame locals first, then globals, then modules (PyTorch's guard sort: by
    source kind, then name length, then name)."""
    def key(node):
        source = node.header.split("source=", 1)[1].split(", accessed_by", 1)[0]
        kind = 2 if isinstance(node.value, glasstorch.nn.Module) and source.startswith("L[") \
            else 1 if source.startswith("G") else 0
        return kind, len(source), source
    return sorted(children, key=key)


_STEP = re.compile(r"\.(\w+)|\[('(?:[^'\\]|\\.)*'|-?\d+)\]")


def _manager(root: _TreeNode, name: str, L, G, code) -> _TreeNode:
    """The tree node for source ``name`` (``L['self']._modules['fc']``), made
    along with the managers of every value on the way to it."""
    base = re.match(r"([LG])\['(\w+)'\]|G", name)
    scope, key = base.group(1) or "G", base.group(2)
    if scope == "L":
        value = L[key]
        index = code.co_varnames.index(key) if key in code.co_varnames else -1
        node = root.child(f"L['{key}']", _header(f"L['{key}']", f"FrameLocalsGuardAccessor("
                          f"key='{key}', framelocals_idx={index})", value), value)
    else:
        node = root.child("G", _header("G", "GlobalsGuardAccessor", G), G)
        if key is not None:
            value = eval(_executable(f"G['{key}']"), {"___module": lambda m: sys.modules[m]},
                         {"G": G})                                 # noqa: S307 (ours)
            node = node.child(f"G['{key}']", _header(f"G['{key}']",
                              f"DictGetItemGuardAccessor('{key}')", value), value)
    path = base.group(0)
    for attr, item in _STEP.findall(name[base.end():]):
        parent = node.value
        if attr:
            if isinstance(parent, glasstorch.nn.Module) and attr in vars(parent):
                node = node.child(path + ".__dict__", _header(
                    f"{path}.__dict__", "GetGenericDictGuardAccessor", vars(parent)),
                    vars(parent))
                accessor = f"DictGetItemGuardAccessor('{attr}')"
            else:
                accessor = f"GetAttrGuardAccessor({attr})"
            path, value = f"{path}.{attr}", getattr(parent, attr)
        else:
            index = ast.literal_eval(item)
            kind = "Dict" if isinstance(parent, dict) else "Tuple" \
                if isinstance(parent, tuple) else "List"
            path, value = f"{path}[{item}]", parent[index]
            accessor = f"{kind}GetItemGuardAccessor({item if kind == 'Dict' else index})"
        node = node.child(path, _header(path, accessor, value), value)
    return node


def _header(source: str, accessor: str, value) -> str:
    return (f"GuardManager: source={source}, accessed_by={accessor}, type={type(value)}, "
            f"tag_safe=(False, False)")

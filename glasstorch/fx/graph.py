"""``torch.fx.Graph``: a program as a list of nodes, and its Python source
(torch/fx/graph.py).

The nodes form a doubly linked list behind a sentinel (``_root``); new nodes
go at the insertion point (the end by default; ``inserting_before`` /
``inserting_after`` move it).  Names are unique Python identifiers made from
the target (``add``, ``add_1``, and ``sum_1`` since ``sum`` would shadow a
builtin).  ``python_code`` writes the ``forward`` PyTorch writes: one line per
node, a binary operator where the target is one, and ``;  x = None`` after a
value's last use so memory is freed as early as in PyTorch's generated code.
"""
from __future__ import annotations

import builtins
import contextlib
import copy
import keyword
import linecache
import math
import re
import warnings
from types import SimpleNamespace

from .node import INPLACE_METHODS, MAGIC_METHODS, Node, map_arg, qualified_name

__all__ = ["Graph", "PythonCode"]


class _Namespace:
    """Unique, legal names (torch.fx.graph._Namespace)."""

    _illegal = re.compile(r"[^0-9a-zA-Z_]+")
    _suffix = re.compile(r"(.*)_(\d+)$")

    def __init__(self):
        self._used: set = set()
        self._base_count: dict = {}

    def create_name(self, candidate: str) -> str:
        candidate = self._illegal.sub("_", candidate) or "_unnamed"
        if candidate[0].isdigit():
            candidate = f"_{candidate}"
        match = self._suffix.match(candidate)
        base, num = (candidate, None) if match is None else (match.group(1), int(match.group(2)))
        candidate = base if num is None else f"{base}_{num}"
        if not num:
            num = self._base_count.get(base, 0)
        while candidate in self._used or self._is_illegal(candidate):
            num += 1
            candidate = f"{base}_{num}"
        self._used.add(candidate)
        self._base_count[base] = num
        return candidate

    @staticmethod
    def _is_illegal(name: str) -> bool:
        return keyword.iskeyword(name) or name in builtins.__dict__ or \
            name in ("torch", "inf", "nan", "NoneType", "device")


def _snake(name: str) -> str:
    return re.sub(r"(?<=[a-z0-9])([A-Z])", r"_\1", name).lower()


def _candidate(op: str, target) -> str:
    if op == "placeholder":     # Dynamo's ``L_x_`` is the node ``l_x_``
        return _snake(target)
    if op == "call_method":
        return target
    if op in ("get_attr", "call_module"):
        return target.replace(".", "_")
    if op == "output":
        return "output"
    name = getattr(target, "__name__", None) or "node"
    return _snake(name.strip("_")) if name.startswith("__") else _snake(name)


class CodeGen:
    """How ``forward`` takes its inputs and returns (torch.fx.graph.CodeGen): as
    the placeholders, one parameter each, and the output value as written."""

    def gen_fn_def(self, params: list, root_module: str, globals_: dict) -> str:
        return f"def forward({', '.join([root_module] + params)}):\n"

    def generate_output(self, value, globals_: dict) -> str:
        return _value(value, globals_)


class _PyTreeCodeGen(CodeGen):
    """A ``forward`` taking the original (nested) arguments and returning the
    original structure: it flattens its inputs with ``self._in_spec`` into the
    placeholders and rebuilds the output with ``self._out_spec``, as PyTorch's
    does for make_fx and AOTAutograd graphs. ``orig_args``: the parameter names."""

    def __init__(self, orig_args: list, in_spec, out_spec=None, kwarg_names=None):
        self.orig_args, self.in_spec, self.out_spec = orig_args, in_spec, out_spec
        self.kwarg_names = kwarg_names   # a spec of (args, kwargs), as export's modules have

    def gen_fn_def(self, params: list, root_module: str, globals_: dict) -> str:
        from . import _pytree as fx_pytree
        globals_["fx_pytree"] = fx_pytree
        flat = "".join(f"{p}, " for p in params)
        if self.kwarg_names is None:
            structure = f"[{', '.join(self.orig_args)}]"
        else:
            positional = [a for a in self.orig_args if a not in self.kwarg_names]
            keywords = ", ".join(f"{k!r}:{k}" for k in self.kwarg_names)
            structure = f"([{', '.join(positional)}], {{{keywords}}})"
        return (f"def forward({', '.join([root_module] + list(self.orig_args))}):\n"
                f"    {flat}= fx_pytree.tree_flatten_spec({structure}, self._in_spec)\n")

    def generate_output(self, value, globals_: dict) -> str:
        from ..utils import _pytree as pytree
        globals_["pytree"] = pytree
        return f"pytree.tree_unflatten({_value(value, globals_)}, self._out_spec)"


class PythonCode(SimpleNamespace):
    """``src``: the generated source; ``globals``: the names it uses."""


class Graph:
    """A program as nodes (see the module docstring)."""

    def __init__(self, owning_module=None):
        self._root = Node(self, "", "placeholder", "", (), {})
        self._namespace = _Namespace()
        self._insert = self._root.prepend        # the insertion point: before the sentinel
        self._len = 0
        self.owning_module = owning_module
        self._codegen = CodeGen()

    # -- the nodes --

    @property
    def nodes(self):
        return _NodeList(self)

    def create_node(self, op, target, args=(), kwargs=None, name=None, type_expr=None) -> Node:
        node = Node(self, self._namespace.create_name(name or _candidate(op, target)), op,
                    target, tuple(args), dict(kwargs or {}), type_expr)
        self._insert(node)
        self._len += 1
        return node

    def placeholder(self, name: str, type_expr=None, default_value=()) -> Node:
        args = () if default_value == () else (default_value,)
        return self.create_node("placeholder", name, args, type_expr=type_expr)

    def get_attr(self, qualified_name: str, type_expr=None) -> Node:
        return self.create_node("get_attr", qualified_name, type_expr=type_expr)

    def call_function(self, the_function, args=(), kwargs=None, type_expr=None) -> Node:
        return self.create_node("call_function", the_function, args, kwargs, type_expr=type_expr)

    def call_method(self, method_name: str, args=(), kwargs=None, type_expr=None) -> Node:
        return self.create_node("call_method", method_name, args, kwargs, type_expr=type_expr)

    def call_module(self, module_name: str, args=(), kwargs=None, type_expr=None) -> Node:
        return self.create_node("call_module", module_name, args, kwargs, type_expr=type_expr)

    def output(self, result, type_expr=None) -> Node:
        return self.create_node("output", "output", (result,), type_expr=type_expr)

    def find_nodes(self, *, op: str, target=None, sort: bool = True) -> list:
        """The nodes with opcode ``op`` (and ``target``, which call_function needs),
        always in graph order (so ``sort`` changes nothing)."""
        if op == "call_function" and target is None:
            raise AssertionError("target must not be None for call_function op")
        return [n for n in self.nodes if n.op == op and (target is None or n.target == target)]

    def erase_node(self, to_erase: Node) -> None:
        """Remove a node nothing uses (erasing one twice only warns, as in PyTorch)."""
        if to_erase.users:
            raise RuntimeError(f"Tried to erase Node {to_erase} but it still had "
                               f"{len(to_erase.users)} users in the graph: {to_erase.users}!")
        if to_erase.graph is not self:
            raise RuntimeError(f"Attempting to remove {to_erase} from wrong graph!")
        if to_erase._erased:
            warnings.warn(f"erase_node({to_erase}) on an already erased node")
            return
        to_erase._update_args_kwargs((), {})
        to_erase._remove_from_list()
        to_erase._erased = True
        self._len -= 1

    @contextlib.contextmanager
    def inserting_before(self, n: Node | None = None):
        """New nodes go before ``n`` (at the start without one)."""
        saved = self._insert
        self._insert = (n or self._root._next).prepend
        try:
            yield
        finally:
            self._insert = saved

    @contextlib.contextmanager
    def inserting_after(self, n: Node | None = None):
        """New nodes go after ``n`` (at the end without one)."""
        saved = self._insert
        self._insert = n.append if n is not None else self._root.prepend
        try:
            yield
        finally:
            self._insert = saved

    def node_copy(self, node: Node, arg_transform=lambda x: x) -> Node:
        """A copy of ``node`` (from another graph) here, its inputs mapped."""
        copy = self.create_node(node.op, node.target, map_arg(node.args, arg_transform),
                                map_arg(node.kwargs, arg_transform), node.name, node.type)
        copy.meta = dict(node.meta)
        return copy

    def graph_copy(self, g: "Graph", val_map: dict, return_output_node: bool = False):
        """Copy ``g``'s nodes here (``val_map``: old node -> new, filled in as it
        goes); the output node is not copied: its mapped value is returned."""
        for node in g.nodes:
            if node in val_map:
                continue
            if node.op == "output":
                value = map_arg(node.args[0], lambda n: val_map[n])
                return (value, node) if return_output_node else value
            val_map[node] = self.node_copy(node, lambda n: val_map[n])
        return None

    def __deepcopy__(self, memo) -> "Graph":
        """Fresh nodes with the same names; the owning module is not copied."""
        g = Graph()
        g._codegen = copy.deepcopy(self._codegen)
        copied = g.graph_copy(self, {}, return_output_node=True)
        if copied is not None:
            value, old_output = copied
            g.output(value, old_output.type).meta = dict(old_output.meta)
        return g

    def eliminate_dead_code(self) -> bool:
        """Erase the nodes nothing uses (in reverse, so chains go); True if any did."""
        changed = False
        for node in reversed(list(self.nodes)):
            if not node.users and not node.is_impure():
                self.erase_node(node)
                changed = True
        return changed

    def lint(self) -> None:
        """Check the invariants: nodes belong here, inputs come earlier, names are unique."""
        seen, names = set(), set()
        for node in self.nodes:
            if node.graph is not self:
                raise RuntimeError(f"Node {node} does not belong to this Graph!")
            for arg in node._input_nodes:
                if arg not in seen:
                    raise RuntimeError(f"Argument '{arg}' of Node '{node}' was used before it "
                                       "has been defined! Please check that Nodes in the graph "
                                       "are topologically ordered")
            if node.name in names:
                raise RuntimeError(f"Node redefined name {node.name}!")
            seen.add(node)
            names.add(node.name)

    # -- printing and source --

    def __str__(self) -> str:
        lines = ["graph():"] + ["    " + n.format_node() for n in self.nodes]
        return "\n".join(lines)

    def python_code(self, root_module: str, *, verbose: bool = False,
                    include_stride: bool = False, include_device: bool = False) -> PythonCode:
        """The ``forward`` PyTorch generates for this graph (see the module docstring).
        ``verbose``: each value annotated with its example's dtype and shape
        (``y: "f32[3][1]cpu"``), as ``print_readable`` shows it."""
        globals_: dict = {}
        last_use: dict = {}
        for node in reversed(list(self.nodes)):
            map_arg((node.args, node.kwargs), lambda n: last_use.setdefault(n, node))
        frees: dict = {}
        for value, user in last_use.items():
            frees.setdefault(user, []).append(value)
        for user, values in frees.items():
            order = list(user._input_nodes)
            values.sort(key=order.index)
        params, body = [], []
        last_trace = ()
        for node in self.nodes:
            note = _annotation(node, include_stride, include_device) if verbose else None
            if node.op == "placeholder":      # target: the parameter, as ``*args``
                param = f"{node.target}: {note}" if note else node.target if node.type is None \
                    else f"{node.target} : {type_repr(node.type)}"
                params.append(param if not node.args else
                              f"{param} = {_value(node.args[0], globals_)}")
                if node.target.lstrip("*") != node.name:
                    body.append(f"    {node.name} = {node.target.lstrip('*')}\n")
                continue
            if node.op == "output":
                body.append(f"    return {self._codegen.generate_output(node.args[0], globals_)}\n")
                continue
            if verbose:                       # a comment where the source line changes
                trace = _trace_summary(node.meta.get("stack_trace"))
                if trace != last_trace:
                    body.append("\n" if body else "")
                    body.append(f"    # {trace or 'No stacktrace found for following nodes'}\n")
                    last_trace = trace
            named = f"{node.name}: {note}" if note else node.name
            if node.op == "call_function" and node.target in INPLACE_METHODS:
                values = [_value(a, globals_) for a in node.args]
                line = f"    {INPLACE_METHODS[node.target].format(*values)};  " \
                       f"{named} = {values[0]}"
            else:
                line = f"    {named} = {_expression(node, root_module, globals_)}"
            dead = frees.get(node, []) + ([node] if not node.users else [])
            body.append(line + (f";  {' = '.join(n.name for n in dead)} = None\n" if dead
                                else "\n"))
        head = self._codegen.gen_fn_def(params, root_module, globals_)
        # functions fx.wrap made leaves are made leaves again where the code runs
        wrapped = dict.fromkeys(_global_name(n.target, globals_) for n in self.nodes
                                if n.op == "call_function" and n.meta.get("is_wrapped"))
        if wrapped:
            globals_["torch"] = _torch_module()
        prelude = "\n".join(f'torch.fx._symbolic_trace.wrap("{name}")' for name in wrapped)
        src = f"\n{prelude}\n\n{head}{''.join(body)}    "
        return PythonCode(src=src, globals=globals_)

    def print_tabular(self) -> None:
        rows = [[n.op, n.name, n.target, n.args, n.kwargs] for n in self.nodes]
        from tabulate import tabulate
        print(tabulate(rows, headers=["opcode", "name", "target", "args", "kwargs"]))


class _NodeList:
    """``graph.nodes``: the linked list in order (a view: it sees later changes)."""

    def __init__(self, graph: Graph):
        self._graph = graph

    def __len__(self) -> int:
        return self._graph._len

    def __iter__(self):
        root = self._graph._root
        node = root._next
        while node is not root:
            following = node._next
            yield node
            node = following

    def __reversed__(self):
        return iter(list(self)[::-1])


_DTYPE_ABBRS = {"float32": "f32", "float64": "f64", "float16": "f16", "bfloat16": "bf16",
                "int64": "i64", "int32": "i32", "int16": "i16", "int8": "i8", "uint8": "u8",
                "bool": "b8", "complex64": "c64", "complex128": "c128", "uint16": "u16",
                "uint32": "u32", "uint64": "u64"}


def _annotation(node, include_stride: bool, include_device: bool):
    """A value's annotation in verbose code: ``"f32[3, 4][4, 1]cpu"`` for a tensor,
    ``"Sym(s77)"`` for a symbolic size (None: nothing known)."""
    import glasstorch
    val = node.meta.get("val", node.meta.get("example_value"))
    if isinstance(val, glasstorch.Tensor):
        text = f"{_DTYPE_ABBRS.get(val.dtype.name, val.dtype.name)}[{', '.join(map(str, val.shape))}]"
        if include_stride:
            text += f"[{', '.join(map(str, val.stride()))}]"
        if include_device:
            text += str(val.device)
        return f'"{text}"'
    if type(val).__name__ in ("SymInt", "SymFloat", "SymBool"):
        return f'"Sym({val})"'
    return None


def format_stack_line(filename: str, lineno: int, name: str) -> str:
    """One frame as a node's ``stack_trace`` holds it (traceback's format)."""
    line = linecache.getline(filename, lineno).strip()
    return f'  File "{filename}", line {lineno}, in {name}\n    {line}\n'


def _trace_summary(stack_trace):
    """``File: x.py:6 in f, code: y = x + 1`` from a node's recorded stack trace."""
    if not stack_trace:
        return None
    match = re.search(r'File "([^"]+)", line (\d+), in (\S+)\n\s*(.*)\s*$', stack_trace)
    if match is None:
        return None
    file, line, name, code = match.groups()
    return f"File: {file}:{line} in {name}, code: {code.strip()}"


def type_repr(t) -> str:
    """A placeholder's annotation as PyTorch prints it (``torch.Tensor``,
    ``torch.nn.parameter.Parameter``, ``int``)."""
    import glasstorch
    if t.__module__ == "builtins":
        return t.__qualname__
    if t is glasstorch.Tensor:
        return "torch.Tensor"
    if t is glasstorch.nn.Parameter:
        return "torch.nn.parameter.Parameter"
    if t.__module__.endswith("fx.experimental.sym_node"):      # torch.SymInt
        return f"torch.{t.__qualname__}"
    return f"{t.__module__.replace('glasstorch', 'torch', 1)}.{t.__qualname__}"


def _value(arg, globals_) -> str:
    """A constant or node reference as Python source."""
    if isinstance(arg, Node):
        return arg.name
    if isinstance(arg, tuple):
        items = ", ".join(_value(a, globals_) for a in arg)
        return f"({items},)" if len(arg) == 1 else f"({items})"
    if isinstance(arg, list):
        return "[" + ", ".join(_value(a, globals_) for a in arg) + "]"
    if isinstance(arg, dict):
        return "{" + ", ".join(f"{k!r}: {_value(v, globals_)}" for k, v in arg.items()) + "}"
    if isinstance(arg, slice):
        return f"slice({_value(arg.start, globals_)}, {_value(arg.stop, globals_)}, " \
               f"{_value(arg.step, globals_)})"
    if isinstance(arg, float) and not math.isfinite(arg):    # inf, -inf, nan by name
        globals_["inf" if math.isinf(arg) else "nan"] = arg if math.isnan(arg) else math.inf
    import glasstorch
    if isinstance(arg, glasstorch.device):     # device(type='cpu') needs the name
        globals_["device"] = glasstorch.device
    elif isinstance(arg, (glasstorch.dtype, glasstorch.layout, glasstorch.memory_format)):
        globals_["torch"] = glasstorch          # torch.float32, torch.strided, ...
    return repr(arg)


def _format_target(base: str, target: str) -> str:
    """``self.a.b``, with ``getattr(..., "0")`` for a path part that is no identifier
    (a Sequential's children)."""
    for atom in target.split("."):
        base = f"{base}.{atom}" if atom.isidentifier() else f'getattr({base}, "{atom}")'
    return base


def _call_args(args, kwargs, globals_) -> str:
    parts = [_value(a, globals_) for a in args]
    parts += [f"{k} = {_value(v, globals_)}" for k, v in kwargs.items()]
    return ", ".join(parts)


def _expression(node: Node, root_module: str, globals_) -> str:
    args, kwargs = node.args, node.kwargs
    if node.op == "get_attr":
        return _format_target(root_module, node.target)
    if node.op == "call_module":
        return f"{_format_target(root_module, node.target)}({_call_args(args, kwargs, globals_)})"
    if node.op == "call_method":
        return f"{_value(args[0], globals_)}.{node.target}" \
               f"({_call_args(args[1:], kwargs, globals_)})"
    target = node.target
    if target in MAGIC_METHODS:     # as PyTorch, keywords are not shown
        return MAGIC_METHODS[target].format(*(_value(a, globals_) for a in args))
    import operator
    if target is operator.getitem and not kwargs:
        return f"{_value(args[0], globals_)}[{_value(args[1], globals_)}]"
    if target is builtins.getattr and len(args) == 2 and isinstance(args[1], str) \
            and args[1].isidentifier():
        return f"{_value(args[0], globals_)}.{args[1]}"
    return f"{_global_name(target, globals_)}({_call_args(args, kwargs, globals_)})"


def _torch_module():
    import glasstorch
    return glasstorch


def _global_name(target, globals_) -> str:
    """How the generated code names a function: ``torch.*`` paths through the
    ``torch`` global, builtins bare, anything else a global of its own named
    after its module as PyTorch names it (``math_sqrt``, ``_operator_abs``)."""
    name = qualified_name(target)
    if name.startswith("torch.") and _resolves_to(name, target):
        globals_["torch"] = _torch_module()
        return name
    if name.startswith("builtins."):
        return name[len("builtins."):]
    name = re.sub(r"[^0-9a-zA-Z_]+", "_", f"{target.__module__}.{target.__name__}")
    globals_[name] = target
    return name


def _resolves_to(name: str, target) -> bool:
    """Whether the ``torch.`` path ``name`` names something (a method such as
    ``MyFunction.apply`` reports its defining module, where it is not found)."""
    obj = _torch_module()
    for part in name.split(".")[1:]:
        obj = getattr(obj, part, None)
        if obj is None:
            return False
    return True

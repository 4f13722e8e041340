"""``torch.fx.Node``: one operation of a graph (torch/fx/node.py).

A node is an opcode, a target and arguments: ``placeholder`` (a function
input, target its name), ``get_attr`` (a parameter or buffer of the root
module, target its dotted path), ``call_function`` (target a callable),
``call_method`` (target a method name, args[0] the object), ``call_module``
(target a submodule path) and ``output`` (args[0] what the graph returns).
Nodes sit in their graph's doubly linked list; ``users`` maps each node that
reads this one to None (an ordered set).
"""
from __future__ import annotations

import operator

from ._torch_names import qualified_name

__all__ = ["Node", "map_arg", "map_aggregate"]

_OPCODES = ("placeholder", "get_attr", "call_function", "call_method", "call_module", "output")


def map_aggregate(a, fn):
    """``fn`` applied to every leaf of nested tuples, lists, dicts and slices."""
    if isinstance(a, tuple):
        mapped = tuple(map_aggregate(x, fn) for x in a)
        return type(a)(*mapped) if hasattr(a, "_fields") else mapped
    if isinstance(a, list):
        return [map_aggregate(x, fn) for x in a]
    if isinstance(a, dict):
        return {k: map_aggregate(v, fn) for k, v in a.items()}
    if isinstance(a, slice):
        return slice(map_aggregate(a.start, fn), map_aggregate(a.stop, fn),
                     map_aggregate(a.step, fn))
    return fn(a)


def map_arg(a, fn):
    """``fn`` applied to every Node inside ``a``."""
    return map_aggregate(a, lambda x: fn(x) if isinstance(x, Node) else x)


def _format_arg(a) -> str:
    if isinstance(a, Node):
        return f"%{a.name}"
    if isinstance(a, tuple):
        items = ", ".join(_format_arg(x) for x in a)
        return f"({items},)" if len(a) == 1 else f"({items})"
    if isinstance(a, list):
        return "[" + ", ".join(_format_arg(x) for x in a) + "]"
    if isinstance(a, dict):
        return "{" + ", ".join(f"{k}: {_format_arg(v)}" for k, v in a.items()) + "}"
    return str(a)


class Node:
    """One operation (see the module docstring)."""

    def __init__(self, graph, name: str, op: str, target, args: tuple, kwargs: dict,
                 return_type=None):
        if op not in _OPCODES:
            raise ValueError(f"Unsupported op {op}")
        self.graph = graph
        self.name = name
        self.op = op
        self.target = target
        self.type = return_type
        self.users: dict = {}
        self.meta: dict = {}
        self._prev = self._next = self
        self._erased = False
        self._input_nodes: dict = {}
        self._args, self._kwargs = (), {}
        self._update_args_kwargs(tuple(args), dict(kwargs))

    # -- arguments and uses --

    @property
    def args(self) -> tuple:
        return self._args

    @args.setter
    def args(self, value) -> None:
        self._update_args_kwargs(tuple(value), self._kwargs)

    @property
    def kwargs(self) -> dict:
        return self._kwargs

    @kwargs.setter
    def kwargs(self, value) -> None:
        self._update_args_kwargs(self._args, dict(value))

    @property
    def all_input_nodes(self) -> list:
        return list(self._input_nodes)

    def _update_args_kwargs(self, args, kwargs) -> None:
        for old in self._input_nodes:
            old.users.pop(self, None)
        self._args, self._kwargs = args, kwargs
        self._input_nodes = {}
        map_arg((args, kwargs), lambda n: self._input_nodes.setdefault(n, None))
        for new in self._input_nodes:
            new.users.setdefault(self, None)

    def replace_all_uses_with(self, replace_with: "Node", delete_user_cb=lambda user: True) -> list:
        """Every user of this node reads ``replace_with`` instead; returns those users."""
        replaced = []
        for user in list(self.users):
            if not delete_user_cb(user):
                continue
            user.replace_input_with(self, replace_with)
            replaced.append(user)
        return replaced

    def update_arg(self, idx: int, arg) -> None:
        """Set ``args[idx]`` (uses follow)."""
        args = list(self._args)
        args[idx] = arg
        self.args = args

    def update_kwarg(self, key: str, arg) -> None:
        """Set ``kwargs[key]`` (uses follow)."""
        self.kwargs = {**self._kwargs, key: arg}

    def replace_input_with(self, old: "Node", new: "Node") -> None:
        swap = lambda n: new if n is old else n      # noqa: E731
        self._update_args_kwargs(map_arg(self._args, swap), map_arg(self._kwargs, swap))

    # -- the linked list --

    @property
    def next(self) -> "Node":
        return self._next

    @property
    def prev(self) -> "Node":
        return self._prev

    def prepend(self, x: "Node") -> None:
        """Move ``x`` to just before this node."""
        if x is self:
            return
        x._remove_from_list()
        p = self._prev
        p._next, x._prev, x._next, self._prev = x, p, self, x

    def append(self, x: "Node") -> None:
        """Move ``x`` to just after this node."""
        self._next.prepend(x)

    def _remove_from_list(self) -> None:
        p, n = self._prev, self._next
        p._next, n._prev = n, p
        self._prev = self._next = self

    # -- printing --

    def __repr__(self) -> str:
        return self.name

    def _pretty_target(self) -> str:
        return qualified_name(self.target) if self.op == "call_function" else str(self.target)

    def _rename(self, candidate: str) -> None:
        """Take another unique name (Dynamo names a node after the local it is
        stored in); the old name stays taken, as in torch.fx."""
        if candidate != self.name:
            self.name = self.graph._namespace.create_name(candidate)

    def format_node(self) -> str:
        """The node as ``str(graph)`` prints it."""
        if self.op == "output":
            return f"return {_format_arg(self.args[0]).replace('%', '')}"
        from .graph import type_repr
        annotation = "" if self.type is None else f"{type_repr(self.type)} "
        head = f"%{self.name} : {annotation}[num_users={len(self.users)}] = {self.op}" \
               f"[target={self._pretty_target()}]"
        if self.op == "placeholder":
            default = f"(default={self.args[0]})" if self.args else ""
            return head + default
        if self.op == "get_attr":
            return head
        return f"{head}(args = {_format_arg(self.args)}, kwargs = {_format_arg(self.kwargs)})"

    def is_impure(self) -> bool:
        """Side effects keep a node alive in dead-code elimination: placeholders,
        outputs, in-place operators and item writes (``x += 1``, ``x[0] = v``),
        functions marked ``has_side_effect`` (``torch._assert``, the grad-mode and
        autocast switches), ATen ops whose schema writes an argument, and
        in-place calls (a target name ending in ``_``)."""
        if self.op in ("placeholder", "output"):
            return True
        if self.op == "call_function" and self.target in _side_effectful_functions:
            return True
        schema = getattr(self.target, "_schema", None)
        if self.op == "call_function" and schema is not None:     # an ATen op: it writes
            return schema.is_mutable
        name = self.target if isinstance(self.target, str) else \
            getattr(self.target, "__name__", "")
        return self.op in ("call_function", "call_method") and name.endswith("_") and \
            not name.endswith("__")


# In-place operators and item writes Dynamo records; the code prints each as its
# statement, then names the written value: ``x += 1;  iadd = x``.
INPLACE_METHODS = {operator.iadd: "{} += {}", operator.iand: "{} &= {}",
                   operator.ifloordiv: "{} //= {}", operator.ilshift: "{} <<= {}",
                   operator.imod: "{} %= {}", operator.imul: "{} *= {}",
                   operator.imatmul: "{} @= {}", operator.ior: "{} |= {}",
                   operator.ipow: "{} **= {}", operator.irshift: "{} >>= {}",
                   operator.isub: "{} -= {}", operator.itruediv: "{} /= {}",
                   operator.ixor: "{} ^= {}", operator.setitem: "{}[{}] = {}"}

# the calls dead-code elimination keeps: in-place operators, item writes, and the
# functions marked with has_side_effect (torch._assert, grad mode and autocast switches)
_side_effectful_functions: set = set(INPLACE_METHODS)


def has_side_effect(fn):
    """Mark ``fn`` as a call dead-code elimination keeps (``torch.fx.node.has_side_effect``):
    what it changes is state, not its result."""
    _side_effectful_functions.add(fn)
    return fn


# PyTorch prints these call_function targets as Python syntax
MAGIC_METHODS = {operator.add: "{} + {}", operator.sub: "{} - {}", operator.mul: "{} * {}",
                 operator.truediv: "{} / {}", operator.floordiv: "{} // {}",
                 operator.mod: "{} % {}", operator.pow: "{} ** {}", operator.matmul: "{} @ {}",
                 operator.lshift: "{} << {}", operator.rshift: "{} >> {}",
                 operator.and_: "{} & {}", operator.or_: "{} | {}", operator.xor: "{} ^ {}",
                 operator.eq: "{} == {}", operator.ne: "{} != {}", operator.lt: "{} < {}",
                 operator.le: "{} <= {}", operator.gt: "{} > {}", operator.ge: "{} >= {}",
                 operator.neg: "-{}", operator.pos: "+{}", operator.invert: "~{}"}

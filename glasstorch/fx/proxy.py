"""``torch.fx.Proxy``: the stand-in value symbolic tracing runs a program on
(torch/fx/proxy.py).

Every operation on a Proxy records a node instead of computing: Python
operators become ``call_function`` nodes on the ``operator`` functions,
``proxy.attr`` an ``Attribute`` (a ``call_method`` node if called, else a
``getattr`` node), ``torch.*`` functions reach ``__torch_function__`` and become
``call_function`` nodes on themselves.  What a Proxy cannot stand for (its
truth value, its length, iterating it) raises ``TraceError``, as in PyTorch.
"""
from __future__ import annotations

import builtins
import dis
import inspect
import operator

from ._torch_names import torch_call_args
from .node import MAGIC_METHODS, Node, map_aggregate

__all__ = ["Proxy", "Attribute", "TraceError"]


class TraceError(ValueError):
    pass


class Proxy:
    """A value being traced: ``node`` records it in ``tracer``'s graph."""

    def __init__(self, node: Node, tracer=None):
        self.node = node
        self.tracer = tracer

    def __repr__(self) -> str:
        return f"Proxy({self.node.name})"

    def __getattr__(self, name: str) -> "Attribute":
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)
        return Attribute(self, name)

    def __call__(self, *args, **kwargs) -> "Proxy":
        return self.tracer.create_proxy("call_method", "__call__", (self,) + args, kwargs)

    def __iter__(self):
        """Unpacking (``a, b = proxy``: the caller's next instruction says how
        many) gives a Proxy per item; any other iteration cannot be traced."""
        caller = inspect.currentframe().f_back
        for instruction in dis.get_instructions(caller.f_code):
            if instruction.offset == caller.f_lasti and instruction.opname == "UNPACK_SEQUENCE":
                return (self[i] for i in range(instruction.argval))
        raise TraceError("Proxy object cannot be iterated. This can be attempted when the "
                         "Proxy is used in a loop or as a *args or **kwargs function argument. "
                         "See the torch.fx docs on pytorch.org for a more detailed explanation "
                         "of what types of control flow can be traced, and check out the Proxy "
                         "docstring for help troubleshooting Proxy iteration errors")

    def __bool__(self):
        raise TraceError("symbolically traced variables cannot be used as inputs to control "
                         "flow")

    def __len__(self):
        raise RuntimeError("'len' is not supported in symbolic tracing by default. If you want "
                           "this call to be recorded, please call torch.fx.wrap('len') at "
                           "module scope")

    def keys(self):
        return self.tracer.create_proxy("call_method", "keys", (self,), {})

    def __getitem__(self, key) -> "Proxy":
        return self.tracer.create_proxy("call_function", operator.getitem, (self, key), {})

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        tracer = next(a.tracer for a in _proxies((args, kwargs or {})))
        name = getattr(func, "__name__", "")
        import glasstorch
        if getattr(glasstorch.Tensor, name, None) is func:   # a Tensor method, as x.sum()
            return tracer.create_proxy("call_method", name, args, kwargs or {})
        args, kwargs = torch_call_args(func, args, kwargs or {})
        return tracer.create_proxy("call_function", func, args, kwargs)


def _proxies(a):
    found = []
    map_aggregate(a, lambda x: found.append(x) if isinstance(x, Proxy) else None)
    return found


class Attribute(Proxy):
    """``proxy.name``: a method call when called, else a ``getattr`` node (made on
    first use)."""

    def __init__(self, root: Proxy, attr: str):
        self.root = root
        self.attr = attr
        self.tracer = root.tracer
        self._node = None

    @property
    def node(self) -> Node:
        if self._node is None:
            self._node = self.tracer.create_proxy("call_function", builtins.getattr,
                                                  (self.root, self.attr), {}).node
        return self._node

    def __call__(self, *args, **kwargs) -> Proxy:
        return self.tracer.create_proxy("call_method", self.attr, (self.root,) + args, kwargs)


def _operator_method(target, reflected=False):
    def method(self, *others):
        args = (others[0], self) if reflected else (self,) + others
        return self.tracer.create_proxy("call_function", target, args, {})
    return method


for _target in MAGIC_METHODS:
    _name = _target.__name__.rstrip("_")
    setattr(Proxy, f"__{_name}__", _operator_method(_target))
    if _name not in ("neg", "pos", "invert", "eq", "ne", "lt", "le", "gt", "ge"):
        setattr(Proxy, f"__r{_name}__", _operator_method(_target, reflected=True))
Proxy.__abs__ = _operator_method(operator.abs)

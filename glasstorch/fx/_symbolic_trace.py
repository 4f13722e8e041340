"""``torch.fx.Tracer`` and ``symbolic_trace`` (torch/fx/_symbolic_trace.py).

Tracing calls the function (or ``forward``) once with a Proxy per argument:
what runs on the Proxies is recorded.  While it runs, calling a submodule goes
through ``Tracer.call_module``: a leaf (a module of ``torch.nn`` itself, unless
``is_leaf_module`` says otherwise) becomes one ``call_module`` node, any other
module is traced through; reading a parameter or buffer of the root gives a
``get_attr`` node.  The result becomes the ``output`` node.

Functions ``fx.wrap`` registered (and ``math``'s, ``autowrap_functions``) are
swapped for leaf wrappers in the globals that name them for the length of the
trace, so calling one on a Proxy records a single ``call_function`` node.
``concrete_args`` fix some inputs to values: the trace specialises on them and
guards them (``_placeholders``).
"""
from __future__ import annotations

import functools
import inspect
import itertools
import math
import types
import warnings

import glasstorch as _glasstorch

from .. import Tensor
from ..nn.modules.module import Module
from ..nn.parameter import Parameter
from ..utils import _pytree as pytree
from .graph import Graph, _PyTreeCodeGen
from .graph_module import GraphModule
from .node import map_aggregate
from .proxy import Proxy

__all__ = ["PH", "Tracer", "symbolic_trace", "wrap"]

# (id(globals), name) -> the globals dict whose function ``name`` fx.wrap made a leaf
_wrapped_fns_to_patch: dict = {}


def wrap(fn_or_name):
    """Make a global function of the calling module a leaf: while tracing, calling
    it on a Proxy records one ``call_function`` node instead of tracing through.
    Call it at module level with the function or its name, or use it as a decorator."""
    if not callable(fn_or_name) and not isinstance(fn_or_name, str):
        raise RuntimeError("Unsupported type for global function! Must be either a callable "
                           "or string name")
    name = fn_or_name if isinstance(fn_or_name, str) else fn_or_name.__name__
    caller = inspect.currentframe().f_back
    if caller.f_code.co_name != "<module>":
        raise NotImplementedError("wrap must be called at the top level of a module")
    _wrapped_fns_to_patch[(id(caller.f_globals), name)] = caller.f_globals
    return fn_or_name


def _leaf(fn):
    """``fn`` as a leaf while tracing: a call with a Proxy among its arguments is
    recorded (marked ``is_wrapped``, so the generated code re-wraps it), others run."""
    @functools.wraps(fn)
    def wrapped(*args, **kwargs):
        found = []
        map_aggregate((args, kwargs), lambda x: found.append(x) if isinstance(x, Proxy) else None)
        if not found:
            return fn(*args, **kwargs)
        proxy = found[-1].tracer.create_proxy("call_function", fn, args, kwargs)
        proxy.node.meta["is_wrapped"] = True
        return proxy
    return wrapped


class _Patcher:
    """Sets dict entries for the length of a trace and restores them after."""

    def __init__(self):
        self._saved: list = []
        self._visited: set = set()

    def patch(self, namespace: dict, name: str, value) -> None:
        self._saved.append((namespace, name, namespace.get(name, _MISSING)))
        namespace[name] = value

    def autowrap(self, namespace: dict, function_ids: set) -> None:
        """Wrap, once per namespace, its public functions listed in ``function_ids``."""
        if id(namespace) in self._visited:
            return
        self._visited.add(id(namespace))
        for name, value in list(namespace.items()):
            if not name.startswith("_") and callable(value) and id(value) in function_ids:
                self.patch(namespace, name, _leaf(value))

    def restore(self) -> None:
        for namespace, name, value in reversed(self._saved):
            if value is _MISSING:
                del namespace[name]
            else:
                namespace[name] = value
        self._saved.clear()


_MISSING = object()


class PHBase:
    """Where a ``concrete_args`` structure takes a placeholder (``PH``)."""

    def __repr__(self) -> str:
        return "PH"


PH = PHBase()


@wrap
def _assert_is_none(value, msg: str) -> None:
    """The guard a ``None`` in ``concrete_args`` leaves in the graph."""
    if value is not None:
        raise AssertionError(msg)


class Tracer:
    """Records a program into a Graph (see the module docstring).

    ``autowrap_modules``' public functions (``math``'s by default) and
    ``autowrap_functions`` become leaves when the traced code calls them by a
    global name, as ``fx.wrap`` makes functions leaves."""

    def __init__(self, autowrap_modules=(math,), autowrap_functions=()):
        self.graph = None
        self.root = None
        self._autowrap_function_ids = {id(v) for m in autowrap_modules
                                       for k, v in m.__dict__.items()
                                       if not k.startswith("_") and callable(v)}
        self._autowrap_function_ids.update(id(f) for f in autowrap_functions)
        self._autowrap_search = list(autowrap_modules)
    # -- the hooks a custom tracer overrides --

    def is_leaf_module(self, m: Module, module_qualified_name: str) -> bool:
        """PyTorch's own layers (``torch.nn`` modules, not ``Sequential``) are leaves."""
        from ..nn.modules.container import Sequential
        return type(m).__module__.startswith("glasstorch.nn") and not isinstance(m, Sequential)

    def path_of_module(self, mod: Module) -> str:
        for name, candidate in self.root.named_modules():
            if candidate is mod:
                return name
        raise NameError("module is not installed as a submodule")

    def call_module(self, m: Module, forward, args, kwargs):
        path = self.path_of_module(m)
        if not self.is_leaf_module(m, path):
            return forward(*args, **kwargs)
        return self.create_proxy("call_module", path, args, kwargs)

    def create_arg(self, a):
        """A value as a node argument: Proxies become their nodes, parameters of
        the root ``get_attr`` nodes, other tensors ``get_attr`` nodes on the
        attribute holding them (a new ``_tensor_constant<i>`` for a constant)."""
        def convert(x):
            if isinstance(x, Proxy):
                return x.node
            if isinstance(x, Parameter):
                for name, p in self.root.named_parameters():
                    if p is x:
                        return self.create_node("get_attr", name, (), {})
                raise NameError("parameter is not a member of this module")
            if isinstance(x, Tensor):
                return self.create_node("get_attr", self._tensor_attr(x), (), {})
            return x
        return map_aggregate(a, convert)

    def _tensor_attr(self, t: Tensor) -> str:
        for name, value in self.tensor_attrs:
            if value is t:
                return name
        i = 0
        while hasattr(self.root, f"_tensor_constant{i}"):
            i += 1
        name = f"_tensor_constant{i}"
        setattr(self.root, name, t)
        self.tensor_attrs.append((name, t))
        return name

    def create_node(self, kind, target, args, kwargs, name=None, type_expr=None):
        return self.graph.create_node(kind, target, args, kwargs, name, type_expr)

    def create_proxy(self, kind, target, args, kwargs, name=None, type_expr=None):
        node = self.create_node(kind, target, self.create_arg(args), self.create_arg(kwargs),
                                name, type_expr)
        return Proxy(node, self)

    # -- tracing --

    def trace(self, root, concrete_args=None) -> Graph:
        """Run ``root`` (its ``forward`` for a Module) on Proxies; ``concrete_args``
        (by name, or a tuple in parameter order) fixes arguments to values (see
        ``_placeholders``)."""
        self.root = root if isinstance(root, Module) else Module()
        fn = type(root).forward if isinstance(root, Module) else root
        self.graph = Graph()
        # the tensors the modules hold as plain attributes or buffers, by path
        self.tensor_attrs = [(".".join(filter(None, (prefix, k))), v)
                             for prefix, m in self.root.named_modules()
                             for k, v in list(m.__dict__.items()) +
                             list(m.__dict__.get("_buffers", {}).items())
                             if isinstance(v, Tensor) and not isinstance(v, Parameter)]
        fn_globals = inspect.unwrap(fn).__globals__
        args = self._placeholders(fn, isinstance(root, Module), concrete_args)
        code = inspect.unwrap(fn).__code__
        if code.co_kwonlyargcount or code.co_flags & _VARIADIC:
            fn = _all_positional(inspect.unwrap(fn))
        tracer, patcher = self, _Patcher()
        original_call, original_getattr = Module.__call__, Module.__getattr__

        def module_call(mod, *a, **kw):
            patcher.autowrap(getattr(getattr(mod, "forward", mod), "__globals__", {}),
                             tracer._autowrap_function_ids)
            return tracer.call_module(mod, lambda *x, **y: original_call(mod, *x, **y), a, kw)

        def module_getattr(mod, name):
            value = original_getattr(mod, name)
            if isinstance(value, Parameter) or (name in mod.__dict__.get("_buffers", {})):
                prefix = tracer.path_of_module(mod)
                return tracer.create_proxy("get_attr", f"{prefix}.{name}" if prefix else name,
                                           (), {})
            return value
        Module.__call__, Module.__getattr__ = module_call, module_getattr
        try:
            for (_, name), namespace in list(_wrapped_fns_to_patch.items()):
                if name in namespace:
                    patcher.patch(namespace, name, _leaf(namespace[name]))
            patcher.autowrap(fn_globals, self._autowrap_function_ids)
            for module in self._autowrap_search:
                patcher.autowrap(module.__dict__, self._autowrap_function_ids)
            result = fn(*args)
        finally:
            Module.__call__, Module.__getattr__ = original_call, original_getattr
            patcher.restore()
        if isinstance(self.graph._codegen, _PyTreeCodeGen):
            result, self.graph._codegen.out_spec = pytree.tree_flatten(result)
        self.graph.output(self.create_arg(result))
        return self.graph

    def _concrete(self, name: str, value, default, i: int):
        """One leaf of ``concrete_args[name]``: a placeholder ``<name>_<i>``, which is
        the argument for a ``PH`` and else guarded to equal ``value``."""
        proxy = self.create_proxy("placeholder", f"{name}_{i}", default, {})
        if isinstance(value, PHBase):
            return proxy
        message = f"{name} has been specialized to have value {value} but got another value"
        if value is None:
            self.create_proxy("call_function", _assert_is_none, (proxy, message), {})
        elif type(value) in (bool, int, float, complex, str):
            _glasstorch._assert(proxy == value, message)
        else:
            warnings.warn(f"Was not able to add assertion to guarantee correct input {name} to "
                          "specialized function. It is up to the user to make sure that your "
                          "inputs match the inputs you specialized the function with.")
        return value

    def _placeholders(self, fn, is_module: bool, concrete_args) -> list:
        """The arguments to trace ``fn`` with: a placeholder per parameter, except
        that a ``concrete_args`` value is passed as it is, behind a placeholder
        per leaf (``_concrete``).  A structure holding ``PH`` leaves makes
        ``forward`` take the structure and flatten it into the placeholders."""
        signature = inspect.signature(inspect.unwrap(fn))
        params = list(signature.parameters.values())[1 if is_module else 0:]
        variadic = [p for p in params if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]
        params = [p for p in params if p not in variadic]
        if isinstance(concrete_args, tuple):
            if len(concrete_args) != len(params):
                raise RuntimeError(f"Tracing expected {len(params)} arguments but got "
                                   f"{len(concrete_args)} concrete arguments")
            concrete_args = dict(zip((p.name for p in params), concrete_args))
        concrete_args = concrete_args or {}
        args = [self.root] if is_module else []
        for p in params:
            default = () if p.default is inspect.Parameter.empty else (p.default,)
            if p.name not in concrete_args:
                args.append(self.create_proxy("placeholder", p.name, default, {}))
                continue
            count = itertools.count(1)
            args.append(pytree.tree_map(
                lambda v: self._concrete(p.name, v, default, next(count)), concrete_args[p.name]))
        stars = {inspect.Parameter.VAR_POSITIONAL: "*", inspect.Parameter.VAR_KEYWORD: "**"}
        args += [self.create_proxy("placeholder", stars[p.kind] + p.name, (), {})
                 for p in variadic]
        if any(not pytree.tree_structure(v).is_leaf() for v in concrete_args.values()):
            # forward takes the structures (in a list) and flattens them itself
            self.graph._codegen = _PyTreeCodeGen(
                [p.name for p in params], pytree.tree_structure(args[int(is_module):]))
        return args


_VARIADIC = inspect.CO_VARARGS | inspect.CO_VARKEYWORDS


def _all_positional(fn):
    """``fn`` with every parameter positional, ``*args`` and ``**kwargs`` too (one
    argument each: the Proxy standing for the tuple or dict), so the trace can
    pass a placeholder per parameter."""
    code = fn.__code__
    count = code.co_argcount + code.co_kwonlyargcount + \
        bool(code.co_flags & inspect.CO_VARARGS) + bool(code.co_flags & inspect.CO_VARKEYWORDS)
    code = code.replace(co_flags=code.co_flags & ~_VARIADIC, co_argcount=count,
                        co_kwonlyargcount=0)
    return types.FunctionType(code, fn.__globals__, fn.__name__, fn.__defaults__, fn.__closure__)


def symbolic_trace(root, concrete_args=None) -> GraphModule:
    """Trace ``root`` (a Module or a function) into a GraphModule; ``concrete_args``
    specialises it to the given argument values (``Tracer._placeholders``)."""
    tracer = Tracer()
    graph = tracer.trace(root, concrete_args)
    name = type(root).__name__ if isinstance(root, Module) else root.__name__
    return GraphModule(tracer.root, graph, name)

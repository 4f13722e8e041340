"""``torch.fx.Tracer`` and ``symbolic_trace`` (torch/fx/_symbolic_trace.py).

Tracing calls the function (or ``forward``) once with a Proxy per argument:
what runs on the Proxies is recorded.  While it runs, calling a submodule goes
through ``Tracer.call_module``: a leaf (a module of ``torch.nn`` itself, unless
``is_leaf_module`` says otherwise) becomes one ``call_module`` node, any other
module is traced through; reading a parameter or buffer of the root gives a
``get_attr`` node.  The result becomes the ``output`` node.
"""
from __future__ import annotations

import inspect

from ..nn.modules.module import Module
from ..nn.parameter import Parameter
from .graph import Graph
from .graph_module import GraphModule
from .node import map_aggregate
from .proxy import Proxy

__all__ = ["Tracer", "symbolic_trace"]


class Tracer:
    """Records a program into a Graph (see the module docstring)."""

    def __init__(self):
        self.graph = None
        self.root = None

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
        the root ``get_attr`` nodes."""
        def convert(x):
            if isinstance(x, Proxy):
                return x.node
            if isinstance(x, Parameter):
                for name, p in self.root.named_parameters():
                    if p is x:
                        return self.create_node("get_attr", name, (), {})
            return x
        return map_aggregate(a, convert)

    def create_node(self, kind, target, args, kwargs, name=None, type_expr=None):
        return self.graph.create_node(kind, target, args, kwargs, name, type_expr)

    def create_proxy(self, kind, target, args, kwargs, name=None, type_expr=None):
        node = self.create_node(kind, target, self.create_arg(args), self.create_arg(kwargs),
                                name, type_expr)
        return Proxy(node, self)

    # -- tracing --

    def trace(self, root, concrete_args=None) -> Graph:
        if concrete_args:
            raise NotImplementedError("symbolic_trace: concrete_args are not supported yet")
        self.root = root if isinstance(root, Module) else Module()
        fn = type(root).forward if isinstance(root, Module) else root
        self.graph = Graph()
        params = list(inspect.signature(fn).parameters.values())
        args = [root] if isinstance(root, Module) else []
        for p in params[len(args):]:
            if p.kind is inspect.Parameter.VAR_POSITIONAL:
                raise NotImplementedError("symbolic_trace: *args are not supported yet")
            default = () if p.default is inspect.Parameter.empty else p.default
            args.append(Proxy(self.graph.placeholder(p.name, default_value=default), self))
        tracer = self
        original_call, original_getattr = Module.__call__, Module.__getattr__

        def module_call(mod, *a, **kw):
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
            result = fn(*args)
        finally:
            Module.__call__, Module.__getattr__ = original_call, original_getattr
        self.graph.output(self.create_arg(result))
        return self.graph


def symbolic_trace(root, concrete_args=None) -> GraphModule:
    """Trace ``root`` (a Module or a function) into a GraphModule."""
    tracer = Tracer()
    graph = tracer.trace(root, concrete_args)
    name = type(root).__name__ if isinstance(root, Module) else root.__name__
    return GraphModule(tracer.root, graph, name)

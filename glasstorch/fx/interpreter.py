"""``torch.fx.Interpreter``: run a GraphModule node by node (torch/fx/interpreter.py).

``run(*args)`` walks the graph once, keeping each node's value in ``env``; each
opcode has a method of the same name (``placeholder``, ``get_attr``,
``call_function``, ``call_method``, ``call_module``, ``output``) taking
``(target, args, kwargs)``, which a subclass overrides to observe or change
what a node does (a profiler, a shape propagator, a replacement of ops).
``Transformer`` runs the same walk on Proxies, so it writes a new graph.
"""
from __future__ import annotations

from .node import map_arg
from .traceback import set_current_meta

__all__ = ["Interpreter", "Transformer"]


class Interpreter:
    def __init__(self, module, garbage_collect_values: bool = True):
        self.module = module
        self.graph = module.graph
        self.env: dict = {}
        self.garbage_collect_values = garbage_collect_values

    def run(self, *args):
        self.env = {}
        self.args_iter = iter(args)
        last_use = {}
        for node in reversed(list(self.graph.nodes)):
            for arg in node.all_input_nodes:
                last_use.setdefault(arg, node)
        for node in self.graph.nodes:
            self.env[node] = self.run_node(node)
            if self.garbage_collect_values:
                for arg in node.all_input_nodes:
                    if last_use.get(arg) is node:
                        del self.env[arg]
            if node.op == "output":
                return self.env[node]
        return None

    def run_node(self, n):
        with set_current_meta(n):
            args, kwargs = self.fetch_args_kwargs_from_env(n)
            return getattr(self, n.op)(n.target, args, kwargs)

    def fetch_args_kwargs_from_env(self, n):
        return map_arg(n.args, self.env.__getitem__), map_arg(n.kwargs, self.env.__getitem__)

    def fetch_attr(self, target: str):
        value = self.module
        for atom in target.split("."):
            if not hasattr(value, atom):
                raise RuntimeError(f"Node referenced nonexistent target {target}")
            value = getattr(value, atom)
        return value

    def placeholder(self, target, args, kwargs):
        try:
            return next(self.args_iter)
        except StopIteration:
            if args:
                return args[0]
            raise RuntimeError(f"Expected positional argument for parameter {target}, but one "
                               "was not passed in!") from None

    def get_attr(self, target, args, kwargs):
        return self.fetch_attr(target)

    def call_function(self, target, args, kwargs):
        return target(*args, **kwargs)

    def call_method(self, target, args, kwargs):
        self_obj, *rest = args
        return getattr(self_obj, target)(*rest, **kwargs)

    def call_module(self, target, args, kwargs):
        return self.fetch_attr(target)(*args, **kwargs)

    def output(self, target, args, kwargs):
        return args[0]


class Transformer(Interpreter):
    """An Interpreter that records instead of computing: each opcode method makes
    a node of a new graph (override one to change what it makes); ``transform()``
    returns the new graph as a GraphModule over the same module."""

    def __init__(self, module):
        super().__init__(module)
        from ._symbolic_trace import Tracer
        from .graph import Graph
        self.new_graph = Graph()
        self.tracer = Tracer()
        self.tracer.graph, self.tracer.root = self.new_graph, module

    def placeholder(self, target, args, kwargs):
        from .proxy import Proxy
        default = args[0] if args else ()
        return Proxy(self.new_graph.placeholder(target, default_value=default), self.tracer)

    def get_attr(self, target, args, kwargs):
        return self.tracer.create_proxy("get_attr", target, args, kwargs)

    def call_function(self, target, args, kwargs):
        return self.tracer.create_proxy("call_function", target, args, kwargs)

    def call_method(self, target, args, kwargs):
        return self.tracer.create_proxy("call_method", target, args, kwargs)

    def call_module(self, target, args, kwargs):
        submodule = self.fetch_attr(target)
        return self.tracer.call_module(submodule, submodule.forward, args, kwargs)

    def transform(self):
        from .graph_module import GraphModule
        result = self.run()
        if result is not None:
            self.new_graph.output(self.tracer.create_arg(result))
        return GraphModule(self.module, self.new_graph)

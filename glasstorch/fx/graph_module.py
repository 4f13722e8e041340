"""``torch.fx.GraphModule``: a Module whose ``forward`` is generated from a
Graph (torch/fx/graph_module.py).

The submodules, parameters and buffers the graph's ``call_module`` and
``get_attr`` nodes name are copied over from the root (same objects, so
training the GraphModule trains them); ``recompile()`` regenerates the
source from the graph (``.code``) and execs it into this instance's class.
Each GraphModule gets a class of its own, named after what was traced, as in
PyTorch, so its repr reads like the original module's.
"""
from __future__ import annotations

import copy
import linecache

from .._tensor import Tensor
from ..nn.modules.module import Module
from .graph import Graph, _PyTreeCodeGen

__all__ = ["GraphModule"]

_sources = 0


def _copy_attr(root: Module, gm: Module, path: str) -> None:
    """``gm.<path>`` = ``root.<path>``, creating empty Modules along the way."""
    *prefix, field = path.split(".")
    for item in prefix:
        root = getattr(root, item)
        child = getattr(gm, item, None)
        if child is None:
            child = Module()
            setattr(gm, item, child)
        gm = child
    value = getattr(root, field)
    if isinstance(value, Tensor) and field not in root._parameters:
        gm.register_buffer(field, value)    # a tensor constant is a buffer, as in PyTorch
    elif isinstance(value, Module) or field in root._parameters:
        setattr(gm, field, value)
    else:
        gm.__dict__[field] = value


class GraphModule(Module):
    """A Module running a Graph (see the module docstring)."""

    def __new__(cls, *args, **kwargs):
        # a class per instance: recompile() sets forward on it
        if cls.__name__ == "GraphModule" and cls.__dict__.get("_is_impl") is None:
            cls = type("GraphModuleImpl", (cls,), {"_is_impl": True})
        return super().__new__(cls)

    def __init__(self, root, graph: Graph, class_name: str = "GraphModule"):
        super().__init__()
        self.__class__.__name__ = class_name
        if isinstance(root, Module):
            for node in graph.nodes:
                if node.op in ("get_attr", "call_module"):
                    _copy_attr(root, self, node.target)
        elif isinstance(root, dict):
            for name, value in root.items():
                setattr(self, name, value)
        self.graph = graph

    @property
    def graph(self) -> Graph:
        return self._graph

    @graph.setter
    def graph(self, g: Graph) -> None:
        self._graph = g
        g.owning_module = self
        self.recompile()

    @property
    def code(self) -> str:
        return self._code

    def recompile(self):
        """Generate ``forward`` from the graph again (after editing it)."""
        global _sources
        python_code = self._graph.python_code(root_module="self")
        self._code = python_code.src
        codegen = self._graph._codegen
        if isinstance(codegen, _PyTreeCodeGen):     # the specs its forward reads
            self._in_spec, self._out_spec = codegen.in_spec, codegen.out_spec
        _sources += 1
        filename = f"<eval_with_key>.{_sources}"
        linecache.cache[filename] = (len(self._code), None, self._code.splitlines(True),
                                     filename)
        namespace = dict(python_code.globals)
        exec(compile(self._code, filename, "exec"), namespace)
        type(self).forward = namespace["forward"]
        return python_code

    def print_readable(self, print_output: bool = True) -> str:
        """The generated class as PyTorch prints it (nodes made by tracing have no
        stack trace recorded, which PyTorch notes once)."""
        head, _, body = self._code.strip("\n").partition("\n")
        note = "    # No stacktrace found for following nodes\n" if body.strip() else ""
        code = f"{head}\n{note}{body}".replace("\n", "\n    ")
        text = f"class {type(self).__name__}(torch.nn.Module):\n    {code.rstrip()}\n"
        if print_output:
            print(text)
        return text

    def __deepcopy__(self, memo):
        """A copy with its own graph, submodules and parameters (the same code)."""
        root = Module()
        root.__dict__.update(copy.deepcopy(self.__dict__, memo))
        result = GraphModule(root, root.__dict__["_graph"])  # torch names copies GraphModule
        memo[id(self)] = result
        return result


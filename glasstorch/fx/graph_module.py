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

import re

import copy
import linecache
import types

from .._tensor import Tensor
from ..nn.modules.module import Module, _addindent
from .graph import Graph, _PyTreeCodeGen

__all__ = ["GraphModule"]

_sources = 0
# the names generated code may use, as PyTorch's module files import them
_PRELUDE = "\n".join(("from math import inf", "from math import nan", "NoneType = type(None)",
                      "import torch", "from torch import device",
                      "import torch.fx._pytree as fx_pytree",
                      "import torch.utils._pytree as pytree"))


# the layers to_folder writes as their repr (a constructor call)
_SAFE_REPRS = ("Linear", "Conv1d", "Conv2d", "Conv3d", "BatchNorm1d", "BatchNorm2d",
               "BatchNorm3d")


def _exec_forward(src: str, globals_: dict):
    """Run generated source (kept in linecache, so tracebacks show its lines) and
    return the ``forward`` it defines."""
    global _sources
    _sources += 1
    filename = f"<eval_with_key>.{_sources}"
    linecache.cache[filename] = (len(src), None, src.splitlines(True), filename)
    namespace = dict(globals_)
    exec(compile(src, filename, "exec"), namespace)
    return namespace["forward"]


def _import_block(globals_: dict) -> str:
    """Import lines giving the generated code's globals back, with ``torch`` the
    library that wrote it (a module pickles by name, not by value)."""
    lines = set()
    for name, value in globals_.items():
        if isinstance(value, types.ModuleType):
            lines.add(f"import {value.__name__} as {name}")
        else:
            lines.add(f"from {value.__module__} import {value.__qualname__} as {name}")
    return "\n".join(sorted(lines))


def _rebuild(body: dict, import_block: str) -> "GraphModule":
    """Unpickling: the code's ``forward`` on a module holding ``body``, traced
    with every submodule a leaf (a class named GraphModule, as in PyTorch)."""
    from ._symbolic_trace import Tracer

    class KeepModules(Tracer):
        def is_leaf_module(self, m, module_qualified_name):
            return True
    code_only = type("CodeOnlyModule", (Module,),
                     {"forward": _exec_forward(import_block + body["_code"], {})})()
    code_only.__dict__.update(body)
    gm = GraphModule(code_only, KeepModules().trace(code_only))
    for name, value in body.items():
        if not hasattr(gm, name):
            setattr(gm, name, value)
    return gm


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
        python_code = self._graph.python_code(root_module="self")
        self._code = python_code.src
        codegen = self._graph._codegen
        if isinstance(codegen, _PyTreeCodeGen):     # the specs its forward reads
            self._in_spec, self._out_spec = codegen.in_spec, codegen.out_spec
        type(self).forward = _exec_forward(self._code, python_code.globals)
        return python_code

    # -- submodules --

    def add_submodule(self, target: str, m: Module) -> bool:
        """Install ``m`` at the dotted path ``target``, creating empty Modules on
        the way; False if something on the way is not a Module."""
        *path, field = target.split(".")
        mod = self
        for item in path:
            if not hasattr(mod, item):
                mod.add_module(item, Module())
            mod = getattr(mod, item)
            if not isinstance(mod, Module):
                return False
        mod.add_module(field, m)
        return True

    def delete_submodule(self, target: str) -> bool:
        """Remove the submodule at ``target``; False if there is none."""
        *path, field = target.split(".")
        mod = self
        for item in path:
            if not hasattr(mod, item):
                return False
            mod = getattr(mod, item)
            if not isinstance(mod, Module):
                return False
        if not isinstance(getattr(mod, field, None), Module):
            return False
        delattr(mod, field)
        return True

    def delete_all_unused_submodules(self) -> None:
        """Remove the submodules no node names: kept are those a ``call_module``
        or ``get_attr`` path runs through or ends at, and all inside a called one."""
        used = set()
        for node in self._graph.nodes:
            if node.op not in ("call_module", "get_attr"):
                continue
            atoms = node.target.split(".")
            used.update(".".join(atoms[:i]) for i in range(1, len(atoms) + 1))
            if node.op == "call_module":
                try:
                    called = self.get_submodule(node.target)
                except AttributeError:    # a node naming a missing module keeps nothing
                    continue
                used.update(f"{node.target}.{name}" for name, _ in called.named_modules() if name)
        for name in [name for name, _ in self.named_modules() if name and name not in used]:
            self.delete_submodule(name)

    # -- saving --

    def __reduce__(self):
        """Pickled as the generated code and the instance's dict (not the graph):
        loading runs the code again and traces it back into a graph, every
        submodule a leaf."""
        python_code = self.recompile()
        body = {k: v for k, v in self.__dict__.items() if k != "_graph"}
        return _rebuild, (body, _import_block(python_code.globals))

    def to_folder(self, folder, module_name: str = "FxModule") -> None:
        """Write a package ``folder`` defining ``module_name``: ``module.py`` with
        the generated forward, the state dict in ``state_dict.pt``, submodules
        PyTorch cannot write as a repr pickled beside it (text as PyTorch's)."""
        import warnings
        from pathlib import Path

        from .. import nn, save
        folder = Path(folder)
        folder.mkdir(exist_ok=True)
        save(self.state_dict(), folder / "state_dict.pt")
        tab = " " * 4
        text = (f"\nimport torch\n{_PRELUDE}\n\nfrom torch.nn import *\n"
                f"class {module_name}(torch.nn.Module):\n    def __init__(self):\n"
                f"        super().__init__()\n")
        safe_reprs = tuple(getattr(nn, name) for name in _SAFE_REPRS if hasattr(nn, name))
        pickled = []
        for name, module in self.named_children():
            if type(module) in safe_reprs:
                text += f"{tab * 2}setattr(self, '{name}', {module!r})\n"
                continue
            module_file = folder / f"{name}.pt"
            save(module, module_file)
            pickled.append(name)
            shown = repr(module).replace("\r", " ").replace("\n", " ")
            text += (f"{tab * 2}setattr(self, '{name}', torch.load(r'{module_file}', "
                     f"weights_only=False)) # {shown}\n")
        for name, buffer in self._buffers.items():
            if buffer is not None:
                text += (f"{tab * 2}self.register_buffer('{name}', torch.empty("
                         f"{list(buffer.shape)}, dtype={buffer.dtype}))\n")
        for name, param in self._parameters.items():
            if param is not None:
                text += (f"{tab * 2}setattr(self, '{name}', torch.nn.Parameter(torch.empty("
                         f"{list(param.shape)}, dtype={param.dtype})))\n")
        text += f"{tab * 2}self.load_state_dict(torch.load(r'{folder}/state_dict.pt'))\n"
        text += _addindent(self.code, 4) + "\n"
        (folder / "module.py").write_text(text)
        (folder / "__init__.py").write_text("from .module import *")
        if pickled:
            warnings.warn("Was not able to save the following children modules as reprs -"
                          f"saved as pickled files instead: {pickled}")

    def __str__(self) -> str:
        """The module's repr, its code and PyTorch's pointer to print_readable."""
        return "\n".join([super().__str__(), self._code,
                          "# To see more debug info, please use `graph_module.print_readable()`"])

    def print_readable(self, print_output: bool = True, include_stride: bool = False,
                       include_device: bool = False) -> str:
        """The generated class as PyTorch prints it: values annotated with their
        dtype and shape where tracing recorded them, a comment naming the source
        line of each group of nodes (or that none was recorded), then the
        submodules that are GraphModules (a ``torch.cond``'s branches), nested."""
        text = self._readable(include_stride, include_device)
        if print_output:
            print(text)
        return text

    def _readable(self, include_stride, include_device, name=None) -> str:
        code = self._graph.python_code("self", verbose=True, include_stride=include_stride,
                                       include_device=include_device).src
        head, _, body = code.strip("\n").partition("\n")
        lines = body.rstrip().splitlines()
        cls = name or type(self).__name__
        out = [f"class {cls}(torch.nn.Module):", f"    {head}",
               *[f"    {line}" if line else "" for line in lines]]
        for sub_name, sub in self.named_children():
            if isinstance(sub, GraphModule):
                out.append("")
                out += ["    " + line if line else ""
                        for line in sub._readable(include_stride, include_device,
                                                  sub_name).splitlines()]
        return "\n".join(line.rstrip() for line in out) + "\n"

    def __deepcopy__(self, memo):
        """A copy with its own graph, submodules and parameters (the same code)."""
        root = Module()
        root.__dict__.update(copy.deepcopy(self.__dict__, memo))
        result = GraphModule(root, root.__dict__["_graph"])  # torch names copies GraphModule
        memo[id(self)] = result
        return result


"""Inductor's wrapper code (``torch/_inductor/codegen/wrapper.py``).

The wrapper is a generated Python module with one function, ``call(args)``,
that runs a whole graph: it allocates each buffer, calls the fused C kernels
(ctypes functions over the buffers' data pointers) and the extern ATen ops
in order, drops each buffer after its last use, and returns the graph's
outputs.  Its source and the kernels' C source are what
``TORCH_LOGS=output_code`` prints.  With ``config.c_wrapper`` (the default), the
calls of kernels and matrix products move into generated C (``wrapper_c``).
"""
from __future__ import annotations

import re

from ..ir import AllocatedBuffer, Buffer, Layout, MultiOutput, ReinterpretView
from .. import config
from ..scheduler import FusedKernel
from .cpp import PRELUDE, KernelWriter, libm_declarations


class WrapperCode:
    """The C source of a graph's kernels and the Python source of its wrapper."""

    def __init__(self, graph, scheduler, name: str):
        self.graph, self.scheduler, self.name = graph, scheduler, name
        self.kernels = []          # (kernel name, [(buffer, is_output)])
        self.c_source = ""
        self.python_source = ""
        self.removed = set()
        self.externs = {}          # wrapper global -> op, for extern calls outside aten
        self.static = {}           # buffer -> layout, allocated once (config.static_memory)
        self.c_wrapper = None      # wrapper_c.CWrapper: the wrapper's C runs
        self._generate()

    # -- which buffers are read where ------------------------------------------------

    def _outputs(self) -> set:
        names = set()
        for value in self.graph.outputs:
            if isinstance(value, (Buffer, ReinterpretView)):
                names.add(value.storage().name)
        return names

    def _reads_by_step(self) -> list:
        reads = []
        for step in self.scheduler.steps:
            if isinstance(step, FusedKernel):
                names = {name for reads in step.reads.values() for name, _ in reads}
            elif isinstance(step, AllocatedBuffer):
                names = set()
            else:
                names = {b.name for b in step.inputs()}
            reads.append(names)
        return reads

    # -- generation -------------------------------------------------------------------

    def _generate(self):
        outputs = self._outputs()
        reads = self._reads_by_step()
        kernel_sources, libm = [], set()
        for i, step in enumerate(self.scheduler.steps):
            if not isinstance(step, FusedKernel):
                continue
            read_elsewhere = set().union(*(r for j, r in enumerate(reads) if j != i)) \
                if len(reads) > 1 else set()
            removable = {n.name for n in step.nodes
                         if n.name not in outputs and n.name not in read_elsewhere and
                         getattr(n, "target", None) is None}
            source, params, used_libm, removed = KernelWriter(step, self.graph,
                                                              removable).write()
            self.removed |= removed
            libm |= used_libm
            kernel_sources.append(source)
            self.kernels.append((step.name, params))
        self.c_source = PRELUDE + libm_declarations(libm) + "\n\n" + \
            "\n".join(kernel_sources)
        if config.c_wrapper:         # the kernels and matrix products as C runs
            from .wrapper_c import CWrapper
            c_wrapper = CWrapper(self, outputs)
            if c_wrapper.runs:
                self.c_wrapper = c_wrapper
                self.c_source += c_wrapper.c_source
        self.python_source = self.c_wrapper.python_source if self.c_wrapper else \
            self._python(outputs)

    def _python(self, outputs) -> str:
        graph = self.graph
        lines = [f"# kernels: {', '.join(k for k, _ in self.kernels) or 'none'}",
                 "", "", "def call(args):"]
        names = list(graph.gm_placeholders)
        if names:
            lines.append(f"    {', '.join(names)}, = args")
        lines.append("    args.clear()")
        last_use = self._last_uses(outputs)
        params = dict(self.kernels)
        for i, step in enumerate(self.scheduler.steps):
            if isinstance(step, FusedKernel):
                for node in self._kernel_buffers(step):
                    if config.static_memory and node.name not in outputs and \
                            not node.layout.is_symbolic():
                        self.static[node.name] = node.layout
                        lines.append(f"    {node.name} = static_{node.name}")
                    else:
                        lines.append(f"    {node.name} = {_alloc(node.layout)}")
                ptrs = ", ".join(f"data_ptr({name})" if out is not None else name
                                 for name, out in params[step.name])
                lines.append(f"    {step.name}({ptrs})")
            elif isinstance(step, AllocatedBuffer):
                lines.append(f"    {step.name} = {_alloc(step.layout)}")
            else:
                lines += self._extern_lines(step)
            dead = sorted(n for n, last in last_use.items() if last == i)
            if dead:
                lines.append(f"    del {', '.join(dead)}")
        rendered = ", ".join(_value(v) for v in graph.outputs)
        lines.append(f"    return ({rendered}{',' if len(graph.outputs) == 1 else ''})")
        return "\n".join(with_sizes(lines, graph.size_sources)) + "\n"

    def _kernel_buffers(self, step) -> list:
        """The nodes of a kernel with memory of their own: not removed, and not
        written into another buffer (an input, a ``cat`` window)."""
        return [node for node in step.nodes
                if node.name not in self.removed and not getattr(node, "target", None)]

    def _extern_lines(self, step) -> list:
        """An extern call, then its outputs picked out of its result."""
        call = f"{self._op_name(step.op)}({_args(step.args, step.kwargs)})"
        lines = [f"    {step.name} = {call}"]
        for out in self._multi_outputs(step):
            index = "".join(f"[{j}]" for j in (out.index if isinstance(
                out.index, tuple) else (out.index,)))
            lines.append(f"    {out.name} = {step.name}{index}")
        return lines

    def _multi_outputs(self, step) -> list:
        return [out for out in self.graph.buffers
                if isinstance(out, MultiOutput) and out.parent is step]

    def _op_name(self, op) -> str:
        """How the wrapper names ``op``: ``aten.mm.default``, else a global."""
        name = str(op)
        if name.startswith("aten.") and hasattr(op, "overloadpacket"):
            return name
        name = "extern_" + "".join(c if c.isalnum() else "_" for c in
                                   getattr(op, "__name__", name))
        self.externs[name] = op
        return name

    def _last_uses(self, outputs) -> dict:
        """Each non-output buffer's last step, after which the wrapper drops it."""
        last = {}
        for i, step in enumerate(self.scheduler.steps):
            if isinstance(step, FusedKernel):
                for node in step.nodes:
                    last[node.target_name()] = i
                for reads in step.reads.values():
                    for name, _ in reads:
                        last[name] = i
            elif isinstance(step, AllocatedBuffer):
                last[step.name] = i
            else:
                last[step.name] = i
                for b in step.inputs():
                    last[b.name] = i
                for out in self.graph.buffers:
                    if isinstance(out, MultiOutput) and out.parent is step:
                        last[out.name] = i
        keep = outputs | set(self.graph.inputs) | set(self.graph.constants) | self.removed
        return {n: i for n, i in last.items() if n not in keep}


def with_sizes(lines: list, sources: dict) -> list:
    """``lines`` with the size symbols they use read from the inputs once the
    arguments are taken (``s0 = arg0_1.size(0)``: Note [Symbolic sizes])."""
    at = lines.index("    args.clear()") + 1
    used = set(_NAME.findall("\n".join(lines[at:])))
    return lines[:at] + [f"    {name} = {source}" for name, source in sources.items()
                         if name in used] + lines[at:]


_NAME = re.compile(r"\b\w+\b")


def _alloc(layout: Layout) -> str:
    return f"empty_strided({tuple(layout.size)}, {tuple(layout.stride)}, {layout.dtype})"


def _value(v) -> str:
    if isinstance(v, ReinterpretView):
        lay = v.layout
        return f"reinterpret({v.data.name}, {tuple(lay.size)}, {tuple(lay.stride)}, {lay.offset})"
    if isinstance(v, Buffer):
        return v.name
    if isinstance(v, (list, tuple)):
        inner = ", ".join(_value(x) for x in v)
        return f"[{inner}]" if isinstance(v, list) else f"({inner}{',' if len(v) == 1 else ''})"
    return repr(v)


def _args(args, kwargs) -> str:
    parts = [_value(a) for a in args] + [f"{k}={_value(v)}" for k, v in kwargs.items()]
    return ", ".join(parts)



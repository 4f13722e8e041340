"""Inductor's glass box: every stage of code generation, for one function.

    print(glasstorch._inductor.debug.stages(fn, *args))

1. the core-ATen graph Inductor receives (AOTAutograd's, with Inductor's
   decompositions): the forward graph, and the backward graph when an input
   requires grad;
2. the loop IR of each buffer, one line per operation, loads showing their
   index expressions (``ir_text``);
3. the scheduler's fusion decisions: which buffer went into which kernel,
   and why a new kernel began;
4. the C source of each kernel and the Python wrapper that runs them;
5. with ``mode="max-autotune"``, the variants timed for each kernel and
   matmul, and the one kept (``autotune.AutotuneReport``).

PyTorch shows pieces of this through ``TORCH_LOGS`` and debug directories;
here each stage is a string.
"""
from __future__ import annotations

from .ir import V, ComputedBuffer, ExternKernel, MultiOutput

__all__ = ["stages", "InductorStages", "ir_text"]


class _Value:
    __slots__ = ("name", "dtype")

    def __init__(self, name, dtype=None):
        self.name, self.dtype = name, dtype

    def __str__(self):
        return self.name


class _TextOps:
    """An ops handler that writes each call as a line: ``tmp2 = exp(tmp1)``."""

    def __init__(self):
        self.lines = []

    def _emit(self, text, dtype=None):
        value = _Value(f"tmp{len(self.lines)}", dtype)
        self.lines.append(f"{value} = {text}")
        return value

    def load(self, name, index):
        return self._emit(f"load({name}, {index})")

    def constant(self, value, dtype):
        return self._emit(f"constant({value!r}, {str(dtype)[6:]})", dtype)

    def index_expr(self, index, dtype):
        return self._emit(f"index_expr({index}, {str(dtype)[6:]})", dtype)

    def to_dtype(self, x, dtype):
        return self._emit(f"to_dtype({x}, {str(dtype)[6:]})", dtype)

    def libm(self, name, *args):
        return self._emit(f"{name}({', '.join(map(str, args))})")

    def __getattr__(self, op):
        return lambda *args: self._emit(f"{op}({', '.join(map(str, args))})")


def _body(node: ComputedBuffer) -> list:
    from .scheduler import loop_vars
    printer = _TextOps()
    previous, V.ops = V.ops, printer
    try:
        index, rindex = loop_vars(node)
        result = node.compute(index, rindex if node.is_reduction() else None)
    finally:
        V.ops = previous
    return printer.lines + [f"return {result}"]


def ir_text(graph) -> str:
    """The lowered graph: one entry per buffer, its body one op per line."""
    out = []
    for buf in graph.buffers:
        if isinstance(buf, ComputedBuffer):
            outer, reduction = buf.loop_ranges()
            loops = ", ".join(f"x{i} < {n}" for i, n in enumerate(outer))
            head = f"{buf.name} = Pointwise over [{loops}]"
            if buf.is_reduction():
                rloops = ", ".join(f"r{i} < {n}" for i, n in enumerate(reduction))
                head = f"{buf.name} = Reduction {buf.data.reduction_type} over [{rloops}] " \
                       f"for [{loops}]"
            if getattr(buf, "target", None):
                head += f", stored into {buf.target}"
            out.append(f"{head}  ({buf.layout})")
            out += [f"    {line}" for line in _body(buf)]
        elif isinstance(buf, ExternKernel):
            args = ", ".join(getattr(a, "name", None) or getattr(getattr(a, "data", None),
                                                                 "name", repr(a))
                             for a in buf.args)
            out.append(f"{buf.name} = extern {buf.op}({args})  ({buf.layout})")
        elif isinstance(buf, MultiOutput):
            out.append(f"{buf.name} = {buf.parent.name}[{buf.index}]  ({buf.layout})")
    return "\n".join(out)


class InductorStages:
    """The stages of each graph Inductor compiled for ``fn(*args)``, under the
    config of torch.compile's ``mode``."""

    def __init__(self, fn, *args, mode=None):
        from .._functorch.aot_autograd import aot_function, aot_module
        from ..nn.modules.module import Module
        from . import config
        from .compile_fx import MODES, CompiledGraph, decompositions
        self.name = type(fn).__name__ if isinstance(fn, Module) else \
            getattr(fn, "__name__", "fn")
        self.graphs = {}          # kind -> (aten GraphModule, CompiledGraph)

        def keep(kind):
            def compiler(gm, inputs):
                compiled = CompiledGraph(gm, f"{self.name}_{kind}")
                self.graphs[kind] = (gm, compiled)
                compiled.call._boxed_call = True
                return compiled.call
            return compiler
        aot = aot_module if isinstance(fn, Module) else aot_function
        with config.patch(**MODES.get(mode or "default", {})):
            compiled = aot(fn, keep("forward"), keep("backward"),
                           decompositions=decompositions(), inference_compiler=keep("inference"))
            out = compiled(*args)
            first = out[0] if isinstance(out, (tuple, list)) else out
            if getattr(first, "requires_grad", False):
                first.sum().backward()

    def __str__(self) -> str:
        parts = []
        for kind, (gm, compiled) in self.graphs.items():
            parts += [(f"1. core ATen graph ({kind})", gm.code.strip()),
                      (f"2. loop IR ({kind})", ir_text(compiled.graph)),
                      (f"3. fusion decisions ({kind})", "\n".join(compiled.scheduler.decisions)),
                      (f"4a. C kernels ({kind})", kernels_only(compiled.code.c_source)),
                      (f"4b. wrapper ({kind})", compiled.code.python_source.strip())]
            if compiled.autotune_report is not None:
                parts.append((f"5. autotuning ({kind})", str(compiled.autotune_report)))
        return "\n\n".join(f"== {title} ({self.name})\n{body}" for title, body in parts)


def kernels_only(c_source: str) -> str:
    """The kernels of a C file, and its C wrapper, without the shared prelude
    and declarations."""
    starts = [at for at in (c_source.find("void cpp_fused_"),
                            c_source.find("/* the graph's C wrapper")) if at >= 0]
    return c_source[min(starts):].strip() if starts else ""


def stages(fn, *args, mode=None) -> InductorStages:
    """Every stage of Inductor's code generation for ``fn(*args)``, compiled
    as ``torch.compile(fn, mode=mode)`` would."""
    return InductorStages(fn, *args, mode=mode)

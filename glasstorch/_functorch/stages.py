"""Every stage of the compile stack's first half, for one function or Module,
side by side (glasstorch's window; PyTorch shows these only through logs).

    print(glasstorch.compiler.stages(model, x))

1. the FX graph ``fx.symbolic_trace`` records (Python-level calls);
2. the ATen graph ``make_fx`` records (what reaches the kernels);
3. AOTAutograd's joint forward+backward graph;
4. its forward and backward partitions, and the tensors the forward saves for
   the backward, with their sizes.
"""
from __future__ import annotations

from .._tensor import Tensor
from ..fx import symbolic_trace
from ..fx.experimental.proxy_tensor import make_fx
from ..nn.modules.module import Module
from .aot_autograd import aot_function, aot_module, nop
from .partitioners import default_partition

__all__ = ["CompileStages", "stages"]


class CompileStages:
    """The graphs of each stage (GraphModules) and the saved tensors."""

    def __init__(self, fn, *args, partition_fn=default_partition):
        self.name = type(fn).__name__ if isinstance(fn, Module) else \
            getattr(fn, "__name__", "fn")
        try:
            self.fx = symbolic_trace(fn)
        except Exception as error:      # data-dependent control flow, say: shown as such
            self.fx = f"symbolic_trace could not trace it: {type(error).__name__}: {error}"
        self.aten = make_fx(fn, tracing_mode="fake", _allow_non_fake_inputs=True)(*args)
        compiled = aot_module(fn, nop, nop, partition_fn=partition_fn) \
            if isinstance(fn, Module) else aot_function(fn, nop, nop, partition_fn=partition_fn)
        compiled(*args)
        aot = compiled.compiled_fn if isinstance(fn, Module) else compiled
        self.graphs = aot.compiled.graphs
        backward = self.graphs.get("backward")
        self.saved = [] if backward is None else [
            n for n in backward.graph.nodes
            if n.op == "placeholder" and not n.name.startswith("tangents")]

    def saved_table(self) -> str:
        """One line per saved tensor: name, shape, dtype, bytes; then the total."""
        rows, total = [], 0
        for node in self.saved:
            val = node.meta.get("val")
            if isinstance(val, Tensor):
                nbytes = val.numel() * val.element_size()
                total += nbytes
                rows.append(f"  {node.name:<24} {str(tuple(val.shape)):<20} "
                            f"{str(val.dtype)[6:]:<9} {nbytes:>10,} bytes")
            else:
                rows.append(f"  {node.name:<24} {val!r}")
        rows.append(f"  {len(self.saved)} saved, {total:,} bytes")
        return "\n".join(rows)

    def __str__(self) -> str:
        def code(gm) -> str:
            return gm if isinstance(gm, str) else gm.code.strip()
        parts = [("1. FX graph (symbolic_trace)", code(self.fx)),
                 ("2. ATen graph (make_fx)", code(self.aten))]
        if "joint" in self.graphs:
            parts += [("3. joint forward+backward graph (AOTAutograd)",
                       code(self.graphs["joint"])),
                      ("4a. forward partition", code(self.graphs["forward"])),
                      ("4b. backward partition", code(self.graphs["backward"])),
                      ("saved for backward", self.saved_table())]
        else:
            parts.append(("3. inference graph (AOTAutograd; nothing needs grad)",
                          code(self.graphs["inference"])))
        return "\n\n".join(f"== {title} ({self.name})\n{body}" for title, body in parts)


def stages(fn, *args, partition_fn=default_partition) -> CompileStages:
    """The compile stack's stages for ``fn(*args)`` (see the module docstring)."""
    return CompileStages(fn, *args, partition_fn=partition_fn)

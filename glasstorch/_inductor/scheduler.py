"""``torch._inductor.scheduler``: buffers grouped into fused kernels.

The lowered buffers come in an order that respects their dependencies.  The
scheduler walks them once and grows one kernel at a time: a buffer joins the
open kernel when its loop nest fits the kernel's (a reduction's kept dims are
the kernel's outer loops; a pointwise node's leading dims must be those same
loops), and when every value it reads from the kernel's own buffers lies in
the same outer iteration (so the kernel computes it before it is read).
Otherwise, or at an extern call, the kernel is closed and another begins.
Each decision is recorded, with its reason, for the glass box.

A kernel whose buffers are only pointwise over one shape has no reduction to
shape its loops: its outer loops are all dims but the last, and a
one-dimensional kernel is cut into chunks the threads share.
"""
from __future__ import annotations

from . import config
from .ir import (V, AllocatedBuffer, ComputedBuffer, ExternKernel, Index, MultiOutput,
                 same_size, size_hint)


class _ReadRecorder:
    """An ops handler that records which buffers an inner function loads, at
    which indices; every other op returns a placeholder."""

    def __init__(self):
        self.reads = []

    def load(self, name, index):
        self.reads.append((name, index))
        return _Placeholder

    def __getattr__(self, name):
        return lambda *args, **kwargs: _Placeholder


class _PlaceholderType:
    dtype = None

    def __str__(self):
        return "_"


_Placeholder = _PlaceholderType()


def loop_vars(node: ComputedBuffer) -> tuple:
    """The index (x0, x1, ...) and reduction index (r0, ...) a node is read with."""
    outer, reduction = node.loop_ranges()
    return ([Index.var(f"x{i}", n) for i, n in enumerate(outer)],
            [Index.var(f"r{i}", n) for i, n in enumerate(reduction)])


def reads_of(node: ComputedBuffer) -> list:
    recorder = _ReadRecorder()
    previous, V.ops = V.ops, recorder
    try:
        index, rindex = loop_vars(node)
        node.compute(index, rindex if node.is_reduction() else None)
    finally:
        V.ops = previous
    return recorder.reads


def store_index(node: ComputedBuffer) -> Index:
    return node.store_index(loop_vars(node)[0])


class Section:
    """One part of a kernel body: a reduction loop, or pointwise nodes sharing
    one inner loop nest (``inner`` empty: computed at the outer index)."""

    def __init__(self, kind: str, inner: tuple, nodes: list):
        self.kind, self.inner, self.nodes = kind, tuple(inner), nodes


class FusedKernel:
    def __init__(self, node: ComputedBuffer):
        self.nodes = [node]
        self.reads = {node.name: reads_of(node)}
        outer, _ = node.loop_ranges()
        if node.is_scatter():
            self.outer = ()
            self.sections = [Section("scatter", outer, [node])]
        elif node.is_reduction():
            self.outer = outer
            self.sections = [Section("reduction", (), [node])]
        else:
            self.outer = None        # flexible until a reduction joins: all the node's dims
            self.shape = outer
            self.sections = [Section("pointwise", (), [node])]
        self.name = None
        self.chunked = False

    def produced(self) -> dict:
        return {n.target_name(): n for n in self.nodes}

    def work(self) -> int:
        """The most elements one of its nodes loops over (the largest at the
        traced sizes: a SymInt when sizes are symbolic)."""
        most = 0
        for node in self.nodes:
            outer, reduction = node.loop_ranges()
            n = 1
            for s in (*outer, *reduction):
                n *= s
            most = max(most, n, key=size_hint)
        return most

    def finish(self):
        """Fix a pointwise-only kernel's loops (outer: all dims but the last)."""
        if self.outer is None:
            shape = self.shape
            if len(shape) <= 1:
                self.outer, self.chunked = (), len(shape) == 1
                self.sections[0].inner = tuple(shape)
            else:
                self.outer = tuple(shape[:-1])
                self.sections[0].inner = tuple(shape[-1:])

    def op_names(self) -> list:
        """The ATen ops the kernel computes, in order (its name)."""
        ops = []
        for node in self.nodes:
            op = _op_name(getattr(node, "origin_node", None))
            if op and op not in ops:
                ops.append(op)
        return ops


def _op_name(fx_node):
    if fx_node is None or fx_node.op != "call_function":
        return None
    target = fx_node.target
    name = getattr(target, "__name__", str(target))
    return name.split(".")[0].lstrip("_") if hasattr(target, "overloads") or "." in name \
        else name


class Scheduler:
    def __init__(self, graph):
        self.graph = graph
        self.steps = []          # FusedKernel and ExternKernel, in run order
        self.decisions = []      # one line per buffer: which kernel, and why
        self._schedule()

    def _schedule(self):
        current = None
        for buf in self.graph.buffers:
            if isinstance(buf, AllocatedBuffer):     # allocated first; nothing to run
                self.steps.append(buf)
                self.decisions.append(f"{buf.name}: allocated, filled by the buffers "
                                      f"storing into it")
                continue
            if isinstance(buf, (ExternKernel, MultiOutput)):
                if current is not None:
                    self._close(current)
                    current = None
                if isinstance(buf, ExternKernel):
                    self.steps.append(buf)
                    self.decisions.append(f"{buf.name}: extern call {_target_name(buf.op)}")
                continue
            reason = self._cannot_fuse(current, buf) if current is not None else None
            if current is not None and reason is None:
                self._add(current, buf)
                self.decisions.append(f"{buf.name}: fused into the kernel of "
                                      f"{current.nodes[0].name}")
                continue
            earlier = self._earlier_kernel(buf)
            if earlier is not None:
                self._add(earlier, buf)
                self.decisions.append(f"{buf.name}: fused into the earlier kernel of "
                                      f"{earlier.nodes[0].name} (its inputs are ready there)")
                continue
            self.decisions.append(f"{buf.name}: new kernel" + (f" ({reason})" if reason else ""))
            if current is not None:
                self._close(current)
            current = FusedKernel(buf)
        if current is not None:
            self._close(current)
        for i, step in enumerate(self.steps):
            if isinstance(step, FusedKernel):
                step.name = f"cpp_fused_{'_'.join(step.op_names()) or 'kernel'}_{i}"

    def _close(self, kernel):
        kernel.finish()
        self.steps.append(kernel)

    def _earlier_kernel(self, node):
        """A kernel already closed that ``node`` can join: one after the last
        step writing anything ``node`` reads (so its inputs are ready there),
        whose loops fit and which shares a buffer with it (Inductor fuses across
        the graph's order the same way; here only backwards, to a kernel that
        has not run yet when the wrapper reaches it).  Writes into another
        buffer's memory (mutations, ``cat`` windows) and scatters never move."""
        if getattr(node, "target", None) or node.is_scatter():
            return None
        written_at = {}
        for i, step in enumerate(self.steps):
            names = [n.target_name() for n in step.nodes] if isinstance(step, FusedKernel) \
                else [step.name]
            for name in names:
                written_at[name] = i
        for buf in self.graph.buffers:
            if isinstance(buf, MultiOutput) and buf.parent.name in written_at:
                written_at[buf.name] = written_at[buf.parent.name]
        reads = {name for name, _ in reads_of(node)}
        if any(name not in written_at and name not in self.graph.inputs and
               name not in self.graph.constants for name in reads):
            return None     # it reads the open kernel's buffers: only that kernel will do
        ready = max((written_at[name] for name in reads if name in written_at), default=0)
        for i in range(len(self.steps) - 1, ready - 1, -1):
            step = self.steps[i]
            if isinstance(step, FusedKernel) and self._cannot_fuse(step, node) is None:
                return step
        return None

    def _cannot_fuse(self, kernel: FusedKernel, node: ComputedBuffer):
        """None when ``node`` can join ``kernel``, else the reason it cannot."""
        if len(kernel.nodes) >= config.max_fusion_size:
            return "max_fusion_size reached"
        if node.is_scatter() or kernel.nodes[0].is_scatter():
            return "a scatter-add runs alone (its writes may land on any row)"
        outer, reduction = node.loop_ranges()
        if kernel.outer is None:
            if node.is_reduction():
                if not same_size(tuple(kernel.shape[:len(outer)]), tuple(outer)):
                    return f"reduction over {list(outer)} does not lead the kernel's " \
                           f"{list(kernel.shape)}"
                new_outer = tuple(outer)
            else:
                if not same_size(tuple(outer), tuple(kernel.shape)):
                    return f"shape {list(outer)} differs from the kernel's {list(kernel.shape)}"
                new_outer = tuple(outer)
        else:
            new_outer = kernel.outer
            if node.is_reduction():
                if not same_size(tuple(outer), tuple(new_outer)):
                    return f"reduction keeps {list(outer)}, the kernel loops over " \
                           f"{list(new_outer)}"
            elif not same_size(tuple(outer[:len(new_outer)]), tuple(new_outer)):
                return f"shape {list(outer)} does not start with the kernel's loops " \
                       f"{list(new_outer)}"
        if not new_outer and (outer or reduction) and (
                not node.is_reduction() or kernel.outer is None and kernel.shape):
            return "a kernel without outer loops takes one reduction and scalar work only"
        produced = kernel.produced()
        reads = reads_of(node)
        kernel_reads = {name for n in kernel.nodes for name, _ in kernel.reads[n.name]}
        if not any(name in produced or name in kernel_reads for name, _ in reads):
            return "shares no buffer with the kernel"
        outer_names = {f"x{i}" for i in range(len(new_outer))}
        for name, index in reads:
            producer = produced.get(name)
            if producer is None:
                continue
            if sum(1 for n in kernel.nodes if n.target_name() == name) > 1 or \
                    getattr(producer, "target", None):
                return f"reads {name}, written by several nodes"
            stored = store_index(producer)
            if "*indirect" in index.free():
                return f"reads {name} at an index loaded at run time"
            mine = {s.name: c for s, c in index.terms.items() if s.name in outer_names}
            theirs = {s.name: c for s, c in stored.terms.items() if s.name in outer_names}
            rest = index - Index({s: c for s, c in index.terms.items() if s.name in outer_names})
            if not same_size(mine, theirs) or rest.free() & outer_names:
                return f"reads {name} at {index}, outside the outer iteration that writes it"
        return None

    def _add(self, kernel: FusedKernel, node: ComputedBuffer):
        outer, _ = node.loop_ranges()
        if kernel.outer is None and node.is_reduction():
            kernel.outer = tuple(outer)
            kernel.sections[0].inner = tuple(kernel.shape[len(outer):])
        kernel.nodes.append(node)
        kernel.reads[node.name] = reads_of(node)
        if node.is_reduction():
            kernel.sections.append(Section("reduction", (), [node]))
            return
        if kernel.outer is None:
            kernel.sections[0].nodes.append(node)
            return
        inner = tuple(outer[len(kernel.outer):])
        last = kernel.sections[-1]
        same_loop = last.kind == "pointwise" and same_size(last.inner, inner) and all(
            str(index) == str(store_index(p))
            for name, index in reads_of(node)
            for p in last.nodes if p.target_name() == name)
        if same_loop:
            last.nodes.append(node)
        else:
            kernel.sections.append(Section("pointwise", inner, [node]))


def _target_name(op) -> str:
    return str(op)



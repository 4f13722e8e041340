"""``torch._dynamo.explain(fn)(*args)``: what compiling ``fn`` on these
arguments makes: the graphs, the breaks with their reasons and source lines,
the ops in each graph and the guards, with PyTorch's ``ExplainOutput`` fields.
"""
from __future__ import annotations

import traceback
from dataclasses import dataclass, field

from ..nn import Module
from . import eval_frame
from .eval_frame import DynamoContext, module_entry


@dataclass
class GraphBreakReason:
    reason: str
    user_stack: list
    graph_break: bool = True


@dataclass
class ExplainOutput:
    graphs: list
    graph_count: int
    graph_break_count: int
    break_reasons: list
    op_count: int
    ops_per_graph: list = field(default_factory=list)
    out_guards: list = field(default_factory=list)
    frames: list = field(default_factory=list)

    def __str__(self) -> str:
        out = f"Graph Count: {self.graph_count}\n"
        out += f"Graph Break Count: {self.graph_break_count}\n"
        out += f"Op Count: {self.op_count}\n"
        out += "Break Reasons:\n"
        for i, br in enumerate(self.break_reasons, 1):
            out += f"  Break Reason {i}:\n    Reason: {br.reason}\n    User Stack:\n"
            for frame in br.user_stack:
                out += f"      {frame!r}\n"
        out += "Ops per Graph:\n"
        for i, ops in enumerate(self.ops_per_graph, 1):
            out += f"  Ops {i}:\n" + "".join(f"    {op}\n" for op in ops)
        out += "Out Guards:\n"
        for i, guard in enumerate(self.out_guards, 1):
            out += f"  Guard {i}:\n    Name: {guard.name!r}\n    Create Function: " \
                   f"{guard.create_fn_name}\n    Guard Types: {guard.guard_types}\n" \
                   f"    Code List: {guard.code_list}\n"
        return out

    def describe(self) -> str:
        """Every compiled frame as glasstorch shows it: guards, graph, break, resume."""
        return "\n\n".join(frame.describe() for frame in self.frames)


def explain(fn, *extra_args, **extra_kwargs):
    """``explain(fn)(*args, **kwargs)`` -> ExplainOutput."""
    def inner(*args, **kwargs):
        frames: list = []
        ctx = DynamoContext(lambda gm, inputs: gm.forward)
        eval_frame._observers.append(frames.append)
        try:
            (module_entry(fn, ctx) if isinstance(fn, Module) else ctx.wrap(fn))(*args, **kwargs)
        finally:
            eval_frame._observers.remove(frames.append)
        graphs = [f.graph for f in frames if f.graph is not None]
        reasons = []
        for f in frames:
            if f.graph_break is not None and f.graph is not None:
                reason = f.graph_break.reason
                stack = [traceback.FrameSummary(file, line, name, lookup_line=False)
                         for name, line, file in reason.user_stack]
                reasons.append(GraphBreakReason(str(reason), stack))
        ops = [[n.target for n in g.graph.nodes if n.op == "call_function"] for g in graphs]
        guards = [g for f in frames for g in getattr(f, "guard_list", [])]
        return ExplainOutput(graphs, len(graphs), len(graphs) - 1, reasons,
                             sum(len(o) for o in ops), ops, guards, frames)
    if extra_args or extra_kwargs:
        return inner(*extra_args, **extra_kwargs)
    return inner

"""``torch._dynamo.eval_frame``: ``torch.compile``'s wrapper and its cache.

PyTorch installs a PEP 523 frame evaluator from C, so every frame run inside
a compiled region is offered to Dynamo.  glasstorch stays in Python: the
wrapper ``compile`` returns binds the call's arguments into the frame's locals
``L`` and globals ``G`` and looks in the cache of compiled entries for that
code object: the first entry whose guards pass runs.  On a miss the frame's
bytecode is traced (``convert_frame``) into a new entry, up to
``config.recompile_limit`` entries; after that the function runs eagerly, with
PyTorch's warning.  Calls a compiled frame makes at a graph break, and the
resume functions after one, go through the same wrapper, as PyTorch's frame
evaluator would see them.

An entry (``CompiledFrame``) is: the guard function, the graph's compiled
callable and its inputs' sources, and what follows the graph: a return value
to rebuild, or a break (the call or branch to run in Python, then the resume
function).  ``CompiledFrame.describe()`` prints all of it.
"""
from __future__ import annotations

import functools
import inspect
import logging
import os
import traceback
import types
import warnings
from dataclasses import dataclass, field

from .. import _logging
from ..nn import Module, Parameter
from . import config
from .compiled_optimizer import CompiledOptimizerStep, is_optimizer_step
from .exc import BackendCompilerFailed, Unsupported
from .output_graph import TracedOpError
from .resume import describe as describe_resume, live_locals, resume_function
from .symbolic_convert import InstructionTranslator
from .utils import counters
from .variables import _NULL, TensorMethodVariable, TensorVariable

log = logging.getLogger("torch._dynamo")

# what explain() and the tests read: every graph compiled, every break recorded
_observers: list = []


@dataclass
class CompiledFrame:
    fn_name: str
    guard: object
    guard_text: str
    graph: object                  # the GraphModule, or None (no tensor work)
    compiled: object               # the backend's callable for it
    sources: list                  # where each graph input is read from
    placeholders: list
    output_nodes: list
    returned: object = None        # tracker of the return value
    graph_break: object = None     # symbolic_convert.Break
    resume_offset: object = None   # (offset if taken / offset if not) for a branch
    resume_lineno: int = 0
    live: list = field(default_factory=list)
    fn: object = None
    ctx: object = None
    guard_list: list = field(default_factory=list)
    guard_set: object = None
    side_effects: object = None    # attribute writes to make after the graph

    def run(self, L, G):
        inputs = [s.get(L, G) for s in self.sources]
        values = {"L": L, "G": G, **dict(zip(self.placeholders, inputs))}
        if self.compiled is not None:
            values.update(zip(self.output_nodes, self.compiled(*inputs)))
        if self.side_effects is not None:
            self.side_effects.apply(values)
        if self.graph_break is None:
            return self.returned.as_python(values)
        brk = self.graph_break
        stack = [v.as_python(values) for v in brk.stack]
        local_values = [brk.locals[name].as_python(values) for name in self.live]
        inst = brk.inst
        if inst.opname.startswith("POP_JUMP"):
            cond = stack.pop()
            jump_if = "TRUE" in inst.opname
            offset = inst.argval if bool(cond) == jump_if else self.resume_offset
        else:
            stack = self._run_call(inst, stack, brk.kw_names)
            offset = self.resume_offset
        resume = resume_function(self.fn, offset, self.resume_lineno, stack, self.live)
        args = [v for v in stack if v is not _NULL] + local_values
        return self.ctx.wrap(resume)(*args)

    def _run_call(self, inst, stack, kw_names):
        """The call the graph broke at, run in Python; the stack after it."""
        if inst.opname == "CALL_FUNCTION_EX":
            kwargs = stack.pop() if inst.arg & 1 else {}
            args, fn = stack.pop(), stack.pop()
            if stack and stack[-1] is _NULL:
                stack.pop()
            return stack + [self.ctx.call_through(fn, tuple(args), dict(kwargs))]
        n = inst.arg
        args = stack[len(stack) - n:]
        first, second = stack[len(stack) - n - 1], stack[len(stack) - n - 2]
        rest = stack[:len(stack) - n - 2]
        fn, args = (first, args) if second is _NULL else (second, [first, *args])
        kwargs = {}
        if kw_names:
            kwargs = dict(zip(kw_names, args[-len(kw_names):]))
            args = args[:-len(kw_names)]
        return rest + [self.ctx.call_through(fn, tuple(args), kwargs)]

    def describe(self) -> str:
        """What Dynamo made of this frame: guards, graph, and the break."""
        parts = [f"== {self.fn_name}: guards ==", self.guard_text]
        if self.graph is not None:
            parts += [f"== {self.fn_name}: graph ==", self.graph.code.strip()]
        if self.graph_break is not None:
            brk = self.graph_break
            file, line = brk.reason.user_stack[-1][2], brk.reason.user_stack[-1][1]
            parts += [f"== {self.fn_name}: graph break at {file}:{line} ==", str(brk.reason),
                      "== resume function ==",
                      describe_resume(self.fn, self.resume_lineno, _stack_after(brk),
                                      self.live)]
        return "\n".join(parts)


def _marked_dynamic(value) -> set:
    """Dims ``mark_dynamic`` / ``maybe_mark_dynamic`` made symbolic."""
    return set(getattr(value, "_dynamo_dynamic_indices", ())) | \
        set(getattr(value, "_dynamo_weak_dynamic_indices", ()))


def _stack_after(brk) -> int:
    """How many values the stack holds after the break's call (or branch) ran."""
    inst, depth = brk.inst, len(brk.stack)
    if inst.opname.startswith("POP_JUMP"):
        return depth - 1
    if inst.opname == "CALL_FUNCTION_EX":
        return depth - (4 if inst.arg & 1 else 3) + 1    # NULL, fn, args(, kwargs)
    return depth - inst.arg - 2 + 1


class DynamoContext:
    """One ``torch.compile(fn, backend=..., fullgraph=...)``: its backend, its
    options, and its cache of compiled frames per code object."""

    def __init__(self, backend, fullgraph: bool = False, dynamic=None):
        self.backend, self.fullgraph, self.dynamic = backend, fullgraph, dynamic
        self.cache: dict = {}        # code -> [CompiledFrame]
        self.skip: set = set()       # codes that run eagerly from now on
        # code -> {source name: the sizes first seen, None where a size changed}
        self.frame_state: dict = {}
        self.optimizer_steps: dict = {}   # optimizer -> its CompiledOptimizerStep

    def wrap(self, fn):
        """``fn`` compiled in this context."""
        if isinstance(fn, types.MethodType):
            bound = fn.__self__
            inner = self.wrap(fn.__func__)
            return functools.wraps(fn)(lambda *a, **k: inner(bound, *a, **k))

        @functools.wraps(fn)
        def compiled(*args, **kwargs):
            return self.call(fn, args, kwargs)
        compiled._torchdynamo_orig_callable = fn
        return compiled

    def call_through(self, fn, args, kwargs):
        """A call a compiled frame makes at a break: a Python function's frame is
        compiled too (PyTorch's frame evaluator sees it), an optimizer's step
        runs as ``torch.compile(opt.step)`` runs it (PyTorch traces the update
        into the frame's graph; here its reads of ``.grad`` break the graph,
        and the update is compiled on its own), anything else runs."""
        if is_optimizer_step(fn):
            step = self.optimizer_steps.get(fn.__self__)
            if step is None:
                step = self.optimizer_steps[fn.__self__] = CompiledOptimizerStep(fn, self)
            return step(*args, **kwargs)
        if isinstance(fn, types.FunctionType) and not _is_library_code(fn.__code__):
            return self.call(fn, args, kwargs)
        if isinstance(fn, types.MethodType) and isinstance(fn.__func__, types.FunctionType) \
                and not _is_library_code(fn.__func__.__code__):
            return self.call(fn.__func__, (fn.__self__, *args), kwargs)
        return fn(*args, **kwargs)

    def call(self, fn, args, kwargs):
        code = fn.__code__
        if code in self.skip or getattr(fn, "_dynamo_disable", False):
            return fn(*args, **kwargs)
        L = _bind(fn, code, args, kwargs)
        G = fn.__globals__
        entries = self.cache.setdefault(code, [])
        for entry in entries:
            try:
                hit = entry.guard(L, G)
            except Exception:       # a guarded name is gone (a deleted global): a miss
                hit = False
            if hit:
                return entry.run(L, G)
        if len(entries) >= config.recompile_limit:
            warnings.warn(
                f"torch._dynamo hit config.recompile_limit ({config.recompile_limit})\n"
                f"   function: {code.co_name!r} ({code.co_filename}:{code.co_firstlineno})\n"
                f"   last reason: the guards of every cached graph failed\n"
                "To log all recompilation reasons, use TORCH_LOGS=\"recompiles\".\n"
                "To diagnose recompilation issues, see "
                "https://pytorch.org/docs/main/torch.compiler_troubleshooting.html", stacklevel=3)
            self.skip.add(code)
            return fn(*args, **kwargs)
        frame_id = FRAME_IDS.setdefault(code, len(FRAME_IDS))
        compile_id = f"{frame_id}/{len(entries)}"
        if entries:
            counters["stats"]["recompiles"] += 1
            failures = [f"    - {frame_id}/{i}: {e.guard_set.failure(L, G)}"
                        for i, e in enumerate(entries)][::-1]
            _logging.trace("recompiles", compile_id,
                           f"Recompiling function {code.co_name} in {code.co_filename}:"
                           f"{code.co_firstlineno}\n    triggered by the following guard "
                           "failure(s):\n" + "\n".join(failures))
        entry = self._convert_frame(fn, code, L, G, compile_id)
        if entry is None:
            return fn(*args, **kwargs)
        entries.append(entry)
        return entry.run(L, G)

    def _dynamic_dims(self, code, source, value):
        """The dims of a tensor input traced with symbolic sizes: every dim under
        ``dynamic=True``; under ``dynamic=None`` (automatic dynamic) the dims whose
        size changed since this frame was first compiled; those marked with
        ``mark_dynamic``.  Parameters keep static shapes, as in PyTorch."""
        if type(value) is int:
            return self._dynamic_int(code, source, value)
        return self._tensor_dims(code, source, value) - \
            set(getattr(value, "_dynamo_static_indices", ()))

    def _tensor_dims(self, code, source, value) -> set:
        dims = _marked_dynamic(value)
        if isinstance(value, Parameter):
            return dims
        if self.dynamic is True or (self.dynamic is None and
                                    not config.assume_static_by_default):
            return dims | set(range(value.dim()))
        if self.dynamic is False or not config.automatic_dynamic_shapes:
            return dims
        state = self.frame_state.setdefault(code, {})
        seen = state.get(source.name())
        if seen is None or len(seen) != value.dim():
            state[source.name()] = list(value.shape)
            return dims
        for i, size in enumerate(value.shape):
            if seen[i] != size:
                seen[i] = None
        return dims | {i for i, size in enumerate(seen) if size is None}

    def _dynamic_int(self, code, source, value) -> bool:
        """An int argument is symbolic under ``dynamic=True``, and under automatic
        dynamic once it has changed."""
        if self.dynamic is not None:
            return bool(self.dynamic)
        if not config.assume_static_by_default:
            return True
        if not config.automatic_dynamic_shapes:
            return False
        state = self.frame_state.setdefault(code, {})
        seen = state.setdefault(source.name(), value)
        if seen is not None and seen != value:
            state[source.name()] = seen = None
        return seen is None

    def _convert_frame(self, fn, code, L, G, compile_id="0/0"):
        """Trace the frame into a CompiledFrame, or None: it runs eagerly."""
        _logging.trace("dynamo", compile_id, f"torchdynamo start tracing {code.co_name} "
                                             f"{code.co_filename}:{code.co_firstlineno}")
        counters["stats"]["calls_captured"] += 1
        if code.co_flags & (inspect.CO_GENERATOR | inspect.CO_COROUTINE |
                            inspect.CO_ASYNC_GENERATOR | inspect.CO_ITERABLE_COROUTINE):
            self.skip.add(code)
            return None
        free = {name: L.pop(name) for name in code.co_freevars if name in L}
        tx = InstructionTranslator(fn, code, L, G, free, breakable=not self.fullgraph,
                                   dynamic_dims=functools.partial(self._dynamic_dims, code))
        L.update(free)
        try:
            result = tx.run_frame()
        except TracedOpError:
            self.skip.add(code)       # the eager run raises the error where it belongs
            return None
        except Unsupported as e:
            if self.fullgraph:
                raise e.for_fullgraph() from None
            counters["unimplemented"][str(e).splitlines()[0]] += 1
            self.skip.add(code)
            return None
        except Exception as e:       # a gap in the tracer: the frame runs as written
            log.warning("Dynamo could not trace %s (%s: %s); it runs eagerly", code.co_name,
                        type(e).__name__, e)
            counters["unimplemented"][f"internal error: {type(e).__name__}"] += 1
            self.skip.add(code)
            return None
        output = result.output
        brk = result.graph_break
        if brk is not None and self.fullgraph:
            raise brk.reason.for_fullgraph()
        outputs = []
        live: list = []
        if brk is None:
            _collect_tensors(result.returned, outputs)
        else:
            resume_at = tx.instructions[tx.index_of[brk.inst.offset] + 1].offset
            live = sorted(n for n in live_locals(code, resume_at) if n in brk.locals)
            if brk.inst.opname.startswith("POP_JUMP"):
                live = sorted(set(live) | (live_locals(code, brk.inst.argval) & set(brk.locals)))
            for var in brk.stack + [brk.locals[n] for n in live]:
                _collect_tensors(var, outputs)
            try:
                for var in brk.stack + [brk.locals[n] for n in live]:
                    _check_rebuildable(var)
            except (Unsupported, KeyError) as e:
                counters["unimplemented"][str(e).splitlines()[0]] += 1
                self.skip.add(code)
                return None
        for value in output.side_effects.values():      # after the frame's own values
            _collect_tensors(value, outputs)
        output.guards.global_state()
        output.guards.no_aliasing(output.tensor_input_sources())
        graph = compiled = None
        sources, placeholders, nodes = [], [], []
        if brk is not None:
            _logging.trace("graph_breaks", compile_id, _graph_break_message(brk))
        if output.op_count():
            _logging.current_compile_id = compile_id
            try:
                compiled, graph, sources, placeholders, nodes = output.compile(
                    [v for v in outputs if v.node is not None and v.node.op != "placeholder"],
                    self.backend, code.co_name)
            except BackendCompilerFailed as e:
                if not config.suppress_errors:
                    raise
                log.warning("%s; the frame runs eagerly (config.suppress_errors)", e)
                self.skip.add(code)
                return None
            counters["stats"]["unique_graphs"] += 1
            _logging.trace_graph("graph_code", compile_id,
                                 f"__compiled_fn_{counters['stats']['unique_graphs']}", graph)
        else:
            placeholders = [n for n in output.graph.nodes if n.op == "placeholder"]
            sources = output.sources_of(placeholders)
        output.guards.shape_env(output.shape_env)    # with what the backend decided too
        entry = CompiledFrame(code.co_name, output.guards.compile(), output.guards.readable(),
                              graph, compiled, sources, placeholders, nodes,
                              returned=result.returned, graph_break=brk, live=live, fn=fn,
                              ctx=self, guard_list=output.guards.guards,
                              guard_set=output.guards,
                              side_effects=output.side_effects
                              if output.side_effects.targets else None)
        if brk is not None:
            entry.resume_offset = resume_at
            entry.resume_lineno = brk.reason.user_stack[0][1]
        if _logging.is_enabled("guards"):
            _logging.trace("guards", compile_id, "GUARDS:\n" + output.guards.tree(L, G, code))
        _logging.trace("dynamo", compile_id, f"torchdynamo done tracing {code.co_name}")
        for observer in _observers:
            observer(entry)
        return entry


def _children(var) -> list:
    items = getattr(var, "items", None)
    if isinstance(items, list):
        return items
    return list(items.values()) if isinstance(items, dict) else []


def _collect_tensors(var, out: list) -> None:
    if isinstance(var, TensorMethodVariable):
        var = var.tensor
    if isinstance(var, TensorVariable):
        out.append(var)
    for child in _children(var):
        _collect_tensors(child, out)


def _check_rebuildable(var) -> None:
    """A value live across a break must be one Python can have back."""
    if isinstance(var, (TensorVariable, TensorMethodVariable)):
        return
    children = _children(var)
    if children:
        for child in children:
            _check_rebuildable(child)
        return
    var.as_python(_ANY_OUTPUTS)


class _AnyOutputs(dict):
    def __missing__(self, key):
        return None


_ANY_OUTPUTS = _AnyOutputs()
_LIBRARY = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


_SEEN_BREAKS: set = set()       # (file, line, reason) already logged with their stack
FRAME_IDS: dict = {}            # code -> its number in the logs ([0/1]: frame 0, entry 1)


def _graph_break_message(brk) -> str:
    """The graph_breaks log entry, as PyTorch words it: where, why (with hints),
    and the user's stack down to the break, the callers included, with carets
    under the expression; a break logged before at the same place and for the
    same reason leaves its stack out."""
    reason = brk.reason
    file, line = reason.user_stack[-1][2], reason.user_stack[-1][1]
    where = "CALL: a function call, e.g. f(x, y):\n\n" if brk.inst.opname.startswith("CALL") \
        else ""
    if where:
        where = "Encountered graph break when attempting to trace " + where
    key = (file, line, reason.details())
    if key in _SEEN_BREAKS:
        return (f"Graph break (user stack suppressed due to duplicate graph break) in user code "
                f"at {file}:{line}\nGraph Break Reason: {where}{reason.details()}")
    _SEEN_BREAKS.add(key)
    frames = [f for f in traceback.extract_stack() if not f.filename.startswith(_LIBRARY)]
    for (name, lineno, filename), positions in zip(reason.user_stack, reason.user_positions):
        frames.append(traceback.FrameSummary(
            filename, lineno, name, end_lineno=positions.end_lineno,
            colno=positions.col_offset, end_colno=positions.end_col_offset))
    return (f"Graph break in user code at {file}:{line}\nGraph Break Reason: {where}"
            f"{reason.details()}\n\nUser code traceback:\n"
            + "".join(traceback.format_list(frames)) + "\n")


def _is_library_code(code) -> bool:
    """glasstorch's own functions are never compiled frames (PyTorch's trace
    rules skip torch's files the same way)."""
    return code.co_filename.startswith(_LIBRARY)


class OptimizedModule(Module):
    """``torch.compile(module)``: the module, its ``forward`` compiled (hooks, if
    it has any, run eagerly around it)."""

    def __init__(self, mod, ctx: DynamoContext):
        super().__init__()
        self._orig_mod = mod
        self.dynamo_ctx = ctx
        self._compiled_forward = module_entry(mod, ctx)

    def forward(self, *args, **kwargs):
        mod = self._orig_mod
        if mod._forward_hooks or mod._forward_pre_hooks:
            return mod(*args, **kwargs)
        return self._compiled_forward(*args, **kwargs)

    def __getattr__(self, name):
        try:
            return super().__getattr__(name)
        except AttributeError:
            return getattr(self._modules["_orig_mod"], name)


def _call_module(fn, *args, **kwargs):
    return fn(*args, **kwargs)


def module_entry(mod, ctx: DynamoContext):
    """The frame ``torch.compile(module)`` compiles: the module's ``forward``
    (inputs ``L['self']``, ``L['x']``), or, when ``forward`` is the library's
    own (``nn.Sequential``), a call of the module (``L['fn']``, ``L['args']``),
    as PyTorch wraps a module whose forward its frame rules skip."""
    forward = mod.forward
    if isinstance(forward, types.MethodType) and _is_library_code(forward.__func__.__code__):
        call = ctx.wrap(_call_module)
        return functools.wraps(forward)(lambda *args, **kwargs: call(mod, *args, **kwargs))
    return ctx.wrap(forward)


def _bind(fn, code, args, kwargs) -> dict:
    """The frame's locals at entry (its arguments, then its free variables)."""
    if not kwargs and len(args) == code.co_argcount and not code.co_kwonlyargcount and \
            not code.co_flags & (inspect.CO_VARARGS | inspect.CO_VARKEYWORDS):
        L = dict(zip(code.co_varnames, args))
    else:
        # the code's own parameters, not a functools.wraps target's
        try:
            bound = inspect.signature(fn, follow_wrapped=False).bind(*args, **kwargs)
        except TypeError:      # Python's own message ("f() missing 1 required positional
            fn(*args, **kwargs)    # argument: 'y'"): the call fails before the body runs
            raise
        bound.apply_defaults()
        L = dict(bound.arguments)
    if fn.__closure__:
        for name, cell in zip(code.co_freevars, fn.__closure__):
            try:
                L[name] = cell.cell_contents
            except ValueError:
                pass
    return L


__all__ = ["DynamoContext", "CompiledFrame", "OptimizedModule", "module_entry"]

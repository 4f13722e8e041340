"""``torch._functorch.aot_autograd`` (functorch.compile): a function's forward
and backward traced ahead of time into two ATen graphs, run as one autograd
Function.

    aot_function(fn, fw_compiler, bw_compiler)(*args)

1. Flatten the inputs.  If grad mode is on and an input requires grad, trace
   the *joint* function ``joint(primals, tangents)``: it runs ``fn`` on the
   primals and then the real autograd engine (``autograd.grad``) with the
   tangents as output gradients, under make_fx, so the backward's ATen ops are
   recorded exactly as eager backward runs them.  Otherwise trace ``fn`` alone
   (an inference graph).
2. Functionalize: if the graph mutates anything, trace it again under
   ``torch.func.functionalize`` (the ops become out-of-place; a written input
   gets a ``copy_`` at the end).
3. Partition the joint graph (``partition_fn``, default ``default_partition``)
   into a forward graph returning outputs + saved values and a backward graph
   taking saved values + tangents.
4. Hand each graph to its compiler (``fw_compiler(gm, example_inputs)`` returns
   a callable) and wrap both in ``CompiledFunction``, an autograd.Function:
   its forward runs the forward graph and saves what it returned; its backward
   runs the backward graph.

The graphs are made once, on the first call, for those inputs' metadata; a
call with other shapes, dtypes or requires_grad traces again.  Given Dynamo's
example inputs with symbolic sizes (``aot_module_simplified``), they are made
at once, on those FakeTensors: the graphs' sizes are SymInts, and one
compilation serves every size Dynamo's guards admit.
"""
from __future__ import annotations

import contextlib
import functools
import itertools

from .. import _logging
from .._creation import empty_strided
from .._dispatcher.dispatcher import ops
from .._subclasses.fake_tensor import FakeTensor, FakeTensorMode
from ..autograd import function as _function
from ..autograd.grad_mode import enable_grad, is_grad_enabled, no_grad
from .._tensor import Tensor
from ..fx.experimental.proxy_tensor import ProxyTorchDispatchMode, make_fx
from ..fx.experimental.sym_node import SymInt
from ..fx.experimental.symbolic_shapes import hint_int
from ..fx.graph_module import GraphModule
from ..fx.interpreter import Interpreter
from ..fx.node import Node
from ..fx.traceback import has_preserved_node_meta, preserve_node_meta
from ..nn.modules.module import Module
from ..nn.utils.stateless import _functional_call, _reparametrize_module
from ..utils import _pytree as pytree
from ..utils._python_dispatch import _get_current_dispatch_mode_stack
from .partitioners import default_partition, min_cut_rematerialization_partition

_COPY_ = ops.aten.copy_.default

__all__ = ["aot_function", "aot_module", "aot_module_simplified", "make_boxed_func",
           "make_boxed_compiler", "nop", "create_joint", "default_partition",
           "min_cut_rematerialization_partition"]


def nop(fx_g: GraphModule, _inputs):
    """The identity compiler: run the graph as its generated Python."""
    return fx_g


def make_boxed_func(f):
    """``f`` called with one list of arguments (PyTorch's boxed calling convention)."""
    def g(args):
        return f(*args)
    g._boxed_call = True
    return g


def make_boxed_compiler(compiler):
    def boxed(fx_g, inputs):
        return make_boxed_func(compiler(fx_g, inputs))
    return boxed


def _call(compiled, args: list):
    return compiled(args) if getattr(compiled, "_boxed_call", False) else compiled(*args)


class _Metadata:
    """What one run of the function on FakeTensors tells (PyTorch's
    ViewAndMutationMeta): which inputs it writes, which outputs are views of an
    input or of another output, and the outputs themselves (FakeTensors)."""

    def __init__(self, flat_fn, flat_args):
        mode = _fake_mode_of(flat_args) or FakeTensorMode(allow_non_fake_inputs=True)
        with mode, enable_grad():
            fakes = [a if mode.is_our_fake(a) else
                     mode.from_tensor(a, static_shapes=True) if isinstance(a, Tensor) else a
                     for a in flat_args]
            versions = [f._version if isinstance(f, Tensor) else None for f in fakes]
            outs = flat_fn(*fakes)
        self.mutated = [i for i, (f, v) in enumerate(zip(fakes, versions))
                        if v is not None and f._version != v]
        self.aliases = [_alias_of(o, j, fakes, outs) for j, o in enumerate(outs)]
        # output j -> input i, where the function returns the input itself (x.mul_(2))
        self.returned_inputs = {j: i for j, o in enumerate(outs) for i, f in enumerate(fakes)
                                if o is f and isinstance(o, Tensor)}
        self.outs = outs          # FakeTensors: the outputs' metadata
        self.num_outputs = len(outs)


def _fake_mode_of(flat_args):
    """The FakeTensorMode of Dynamo's example inputs when their sizes are
    symbolic (a ShapeEnv's): the graphs are then traced once, on them, for
    every size the guards admit (PyTorch's dynamic shapes); else None."""
    for a in flat_args:
        if isinstance(a, FakeTensor) and a.fake_mode.shape_env is not None and \
                any(isinstance(n, SymInt) for n in (*a.shape, *a.stride())):
            return a.fake_mode
    return None


def _alias_of(out, j: int, inputs: list, outs) -> tuple | None:
    """("input", i) or ("output", k) when ``out`` is a view of that tensor."""
    if not isinstance(out, Tensor) or not out._is_view():
        return None
    storage = out.untyped_storage()
    for i, t in enumerate(inputs):
        if isinstance(t, Tensor) and t.untyped_storage() is storage:
            return ("input", i)
    for k, o in enumerate(outs):
        if k != j and isinstance(o, Tensor) and not o._is_view() and \
                o.untyped_storage() is storage:
            return ("output", k)
    return None


def create_joint(fn, primals_require_grad: list, meta: _Metadata | None = None):
    """``joint(primals, tangents) -> (outputs, gradients)``.  Outputs: the new
    values of the inputs ``fn`` writes, then ``fn``'s flat outputs; gradients:
    for each primal, that of the outputs that get a tangent, weighted by the
    tangents (None for a primal that needs none)."""
    def joint(primals, tangents):
        with enable_grad():
            outs = fn(*primals)
        _tag_forward_so_far()
        wanted = [p for p, g in zip(primals, primals_require_grad) if g]
        differentiable = [o for o, t in zip(outs, _tangent_mask(meta, outs)) if t]
        grads = iter(_autograd_grad(differentiable, wanted, tangents))
        mutated = [primals[i] for i in meta.mutated] if meta else []
        return mutated + list(outs), [next(grads) if g else None
                                      for g in primals_require_grad]
    return joint


def _tag_forward_so_far() -> None:
    """Tag every node traced so far ``meta["partitioner_tag"] = "is_forward"``:
    the partitioners' notion of what the forward ran (PyTorch tags the same)."""
    for mode in reversed(_get_current_dispatch_mode_stack()):
        if isinstance(mode, ProxyTorchDispatchMode):
            for node in mode.tracer.graph.nodes:
                node.meta.setdefault("partitioner_tag", "is_forward")
            return


class _ForwardTagReplay(Interpreter):
    """Runs a joint graph node by node, tagging the new trace's forward once
    the old trace's last forward node has run (so a retrace keeps the tags)."""

    def __init__(self, gm: GraphModule):
        super().__init__(gm)
        tagged = [n for n in gm.graph.nodes if n.meta.get("partitioner_tag") == "is_forward"]
        self.last_forward = tagged[-1] if tagged else None

    def run_node(self, n):
        result = super().run_node(n)
        if n is self.last_forward:
            _tag_forward_so_far()
        return result


def _tangent_mask(meta: _Metadata | None, outs) -> list:
    """Which outputs get a tangent: those requiring grad that are no view of an
    input or of another output (a view's gradient reaches its base)."""
    return [isinstance(o, Tensor) and o.requires_grad and
            (meta is None or meta.aliases[j] is None) for j, o in enumerate(outs)]


def _autograd_grad(outputs, inputs, grad_outputs):
    from ..autograd import grad
    if not outputs or not inputs:
        return [None] * len(inputs)
    return grad(outputs, inputs, grad_outputs, allow_unused=True)


def _trace(fn, args, decompositions, keep_input_mutations: bool = False) -> GraphModule:
    """``fn``'s ATen graph, traced on FakeTensors (nothing computed, no buffer
    updated), then traced again under functionalize if any of its ops writes.
    Functionalize ends with a ``copy_`` into each written input; those are
    dropped, since the function returns the new values and the runtime
    writes them back (as PyTorch's AOTAutograd does), and so are the views
    left unused once the writes are out-of-place; ``keep_input_mutations``
    keeps the copies, for a compiler that writes the inputs itself."""
    gm = make_fx(fn, decompositions, tracing_mode="fake", _allow_non_fake_inputs=True)(*args)
    if not any(n.op == "call_function" and n.is_impure() for n in gm.graph.nodes):
        return gm
    from ..func import functionalize
    if len(args) == 2 and all(isinstance(a, list) for a in args):
        replay = functionalize(lambda primals, tangents: pytree.tree_unflatten(
            _ForwardTagReplay(gm).run(*primals, *tangents), gm._out_spec))

        def functional(primals, tangents):      # keeps the names primals_1, tangents_1
            return replay(primals, tangents)
    else:       # node by node when a retrace keeps source lines (fx.traceback)
        functional = functionalize(Interpreter(gm).run if has_preserved_node_meta() else gm)
    gm = make_fx(functional, decompositions, tracing_mode="fake",
                 _allow_non_fake_inputs=True)(*args)
    for node in list(gm.graph.nodes):
        if node.target is _COPY_ and node.args[0].op == "placeholder" and not node.users \
                and not keep_input_mutations:
            gm.graph.erase_node(node)
    gm.graph.eliminate_dead_code()      # views taken only to replay a write
    gm.recompile()
    return gm


_AOT_IDS = itertools.count()     # one number per AOTAutograd compilation, as in the logs


def _log_graphs(graphs: dict) -> None:
    """``TORCH_LOGS=aot_graphs``: the forward (or inference) and backward graphs,
    numbered per compilation, under the compiling frame's id."""
    number = next(_AOT_IDS)
    compile_id = _logging.current_compile_id
    for kind, title in (("inference", "Forward"), ("forward", "Forward"),
                        ("backward", "Backward")):
        if kind in graphs:
            _logging.trace_graph("aot_graphs", compile_id, f"{title} graph {number}",
                                 graphs[kind])


class _Compiled:
    """One traced-and-compiled (forward, backward) pair for one input signature."""

    def __init__(self, flat_fn, flat_args, fw_compiler, bw_compiler, partition_fn,
                 decompositions, inference_compiler, keep_input_mutations=False):
        requires_grad = [isinstance(a, Tensor) and a.requires_grad for a in flat_args]
        self.grad_enabled = is_grad_enabled()
        self.training = self.grad_enabled and any(requires_grad)
        self.meta = meta = _Metadata(flat_fn, flat_args)
        # the inputs written: returned and copied back here, or written by the graph
        self.written_back = [] if keep_input_mutations and not self.training else meta.mutated
        if not self.training:
            def inference(*flat):
                outs = flat_fn(*flat)
                return tuple(flat[i] for i in self.written_back) + tuple(outs)
            with no_grad():
                graph = _trace(inference, flat_args, decompositions, keep_input_mutations)
            self.graphs = {"inference": graph}
            _log_graphs(self.graphs)
            self.forward = (inference_compiler or fw_compiler)(graph, flat_args)
            self.replays = _view_replays(graph, meta, len(self.written_back))
            return
        primals = [a.detach().requires_grad_(g) if isinstance(a, Tensor) else a
                   for a, g in zip(flat_args, requires_grad)]
        outs = meta.outs
        self.differentiable = [False] * len(meta.mutated) + _tangent_mask(meta, outs)
        symbolic = _fake_mode_of(flat_args)
        with symbolic or contextlib.nullcontext():
            tangents = [_tangent_like(o, symbolic is not None)
                        for o, t in zip(outs, _tangent_mask(meta, outs)) if t]
        # how a gradient must lie in memory for the backward graph: its traced
        # strides, or (symbolic sizes) the order of its dims in memory
        self.tangents = [_dim_order(t) if symbolic else (tuple(t.shape), t.stride())
                         for t in tangents]
        joint = _trace(create_joint(flat_fn, requires_grad, meta), (primals, tangents),
                       decompositions)
        self.num_graph_outputs = len(meta.mutated) + meta.num_outputs
        fw, bw = partition_fn(joint, (primals, tangents),
                              num_fwd_outputs=self.num_graph_outputs)
        self.graphs = {"joint": joint, "forward": fw, "backward": bw}
        _log_graphs(self.graphs)
        self.replays = _view_replays(joint, meta, len(meta.mutated))
        self.forward = fw_compiler(fw, flat_args)
        self.bw_compiler, self.backward = bw_compiler, None   # compiled at the first backward
        if symbolic:      # now, so that the guards its compiler adds are Dynamo's too
            self.backward = bw_compiler(bw, None)

    def __call__(self, flat_args: list):
        """Run, then write the written inputs back and rebuild the outputs that
        are views (of an input, or of another output) from their bases, so
        they alias as they did in eager."""
        meta = self.meta
        if self.training:
            results = list(_make_function(self).apply(*flat_args))
        else:
            with no_grad():     # a copy: a boxed compiled graph may steal its list
                results = list(_call(self.forward, list(flat_args)))
        count = len(self.written_back)
        written, outs = results[:count], results[count:]
        if count:
            with no_grad():
                for i, value in zip(self.written_back, written):
                    flat_args[i].copy_(value)
        replays = self.replays
        returned = {} if self.training else meta.returned_inputs   # (training: the output
        for j, i in returned.items():                               # carries the grad_fn)
            outs[j] = flat_args[i]
        for j, alias in enumerate(meta.aliases):
            if alias is not None and j not in returned:
                view = base = flat_args[alias[1]] if alias[0] == "input" else outs[alias[1]]
                if j in replays:
                    for target, args, kwargs in replays[j]:
                        view = target(view, *args, **kwargs)
                else:
                    view = base.as_strided(outs[j].shape, outs[j].stride(),
                                           outs[j].storage_offset())
                outs[j] = view
        return outs


def _view_replays(joint: GraphModule, meta: _Metadata, offset: int) -> dict:
    """For each output that is a view: the chain of view ops the joint (or
    inference) graph took from its base, to run again on the real base at runtime (PyTorch's
    view replay), so the output's grad_fn is the view's own (``ViewBackward0``,
    ``TBackward0``).  An output whose chain is not plain view calls is rebuilt
    with ``as_strided`` instead."""
    output = next(n for n in reversed(joint.graph.nodes) if n.op == "output")
    forward_values = output.args[0]      # flat: the forward values, then the gradients
    placeholders = [n for n in joint.graph.nodes if n.op == "placeholder"]
    replays = {}
    for j, alias in enumerate(meta.aliases):
        if alias is None:
            continue
        base = placeholders[alias[1]] if alias[0] == "input" else \
            forward_values[offset + alias[1]]
        node, chain = forward_values[offset + j], []
        while isinstance(node, Node) and node is not base and _is_view_call(node):
            chain.append((node.target, node.args[1:], node.kwargs))
            node = node.args[0]
        if node is base:
            replays[j] = chain[::-1]
    return replays


def _is_view_call(node: Node) -> bool:
    schema = getattr(node.target, "_schema", None)
    if node.op != "call_function" or schema is None or not schema.returns:
        return False
    alias = schema.returns[0].alias_info
    return alias is not None and not alias.is_write and \
        node.all_input_nodes == [node.args[0]]    # (no size computed in the graph)


def _make_function(compiled: _Compiled):
    class CompiledFunction(_function.Function):
        """The forward and backward graphs as one autograd node
        (``CompiledFunctionBackward`` in a grad_fn chain, as in PyTorch)."""

        @staticmethod
        def forward(ctx, *flat_args):
            results = _call(compiled.forward, list(flat_args))
            n = compiled.num_graph_outputs
            outs, saved = results[:n], results[n:]
            ctx.save_for_backward(*[s for s in saved if isinstance(s, Tensor)])
            # sizes the backward needs (symbolic in the trace, ints now), in their places
            ctx.saved_sizes = [(i, s) for i, s in enumerate(saved) if not isinstance(s, Tensor)]
            ctx.mark_non_differentiable(*[o for o, d in zip(outs, compiled.differentiable)
                                          if not d and isinstance(o, Tensor)])
            return tuple(outs)

        @staticmethod
        def backward(ctx, *grads):
            tangents = [_as_traced(g, t) for g, t in zip(
                [g for g, d in zip(grads, compiled.differentiable) if d], compiled.tangents)]
            if compiled.backward is None:
                compiled.backward = compiled.bw_compiler(compiled.graphs["backward"], None)
            saved = list(ctx.saved_tensors)
            for i, size in ctx.saved_sizes:
                saved.insert(i, size)
            return tuple(_call(compiled.backward, saved + tangents))
    return CompiledFunction


def _as_traced(grad, traced) -> Tensor:
    """A tangent in the layout the backward graph was traced with (the
    output's strides, or with symbolic sizes its dims' order in memory), as
    compiled code reads memory by those strides."""
    if isinstance(traced, list):
        shape, stride = grad.shape, _dense_strides(grad.shape, traced)
    else:
        shape, stride = traced
    if grad.stride() == stride or grad.shape != shape:
        return grad
    return empty_strided(shape, stride, dtype=grad.dtype).copy_(grad)


def _tangent_like(out, symbolic: bool) -> Tensor:
    """The example tangent of an output: its strides, or, with symbolic sizes,
    dense in the order of its dims in memory."""
    stride = _dense_strides(out.shape, _dim_order(out)) if symbolic else out.stride()
    return empty_strided(out.shape, stride, dtype=out.dtype)


def _dim_order(t) -> list:
    """``t``'s dims from the innermost in memory out (by the traced values)."""
    return sorted(range(t.dim()), key=lambda d: (hint_int(t.stride()[d]), -d))


def _dense_strides(shape, order: list) -> tuple:
    """The strides of a dense tensor of ``shape`` whose dims lie in ``order``."""
    stride, step = [0] * len(shape), 1
    for d in order:
        stride[d] = step
        step = step * shape[d]
    return tuple(stride)


def _signature(flat_args, grad_enabled: bool) -> tuple:
    return (grad_enabled,) + tuple(
        (tuple(a.shape), a.dtype, a.requires_grad, a.device) if isinstance(a, Tensor)
        else (type(a), a) for a in flat_args)


def aot_function(fn, fw_compiler, bw_compiler=None, partition_fn=default_partition,
                 decompositions=None, num_params_buffers: int = 0,
                 keep_inference_input_mutations: bool = False, inference_compiler=None,
                 *, dynamic: bool = False, enable_log: bool = True, _guarded: bool = False):
    """``fn`` with its forward and backward traced and compiled ahead of time
    (see the module docstring); returns a function taking ``fn``'s arguments.
    ``_guarded``: the caller's guards fix the inputs' shapes, dtypes and
    requires_grad (Dynamo's do), so the first graphs serve every call made in
    the same grad mode, with no signature computed per call."""
    bw_compiler = bw_compiler or fw_compiler
    cache: dict = {}

    def compile_for(flat_args, in_spec) -> _Compiled:
        out_spec = []

        def flat_fn(*flat):
            a, k = pytree.tree_unflatten(list(flat), in_spec)
            leaves, spec = pytree.tree_flatten(fn(*a, **k))
            out_spec[:] = [spec]
            return tuple(leaves)
        with preserve_node_meta():      # a graph run node by node keeps its source lines
            compiled = _Compiled(flat_fn, flat_args, fw_compiler, bw_compiler, partition_fn,
                                 decompositions, inference_compiler,
                                 keep_inference_input_mutations)
        compiled.out_spec = out_spec[0]
        compiled.flat_out = _is_flat_tuple(compiled.out_spec)
        return compiled

    def returned(*args, **kwargs):
        if not kwargs and all(isinstance(a, _FLAT) for a in args):   # (a Dynamo graph's call)
            flat_args, in_spec = list(args), _flat_spec(len(args))
        else:
            flat_args, in_spec = pytree.tree_flatten((args, kwargs))
        compiled = returned.fixed
        if compiled is None or compiled.grad_enabled != is_grad_enabled():
            key = _signature(flat_args, is_grad_enabled())
            compiled = cache.get(key)
            if compiled is None:
                compiled = cache[key] = compile_for(flat_args, in_spec)
            if _guarded:
                returned.fixed = compiled
        returned.compiled = compiled
        if compiled.flat_out:             # (a Dynamo graph's outputs: a tuple of leaves)
            return compiled(flat_args)
        result = pytree.tree_unflatten(compiled(flat_args), compiled.out_spec)
        return list(result) if type(result) is tuple else result   # torch returns a list

    def trace_symbolically(fake_args: list) -> None:
        """Trace and compile now, on Dynamo's example inputs with symbolic
        sizes: one pair of graphs for every size the guards admit.  Outputs
        that alias but cannot be rebuilt by replaying views, or a function the
        symbolic trace fails on, keep the traces per shape."""
        try:
            compiled = compile_for(fake_args, _flat_spec(len(fake_args)))
        except Exception as error:         # (what symbolic tracing does not cover yet)
            _logging.trace("dynamic", _logging.current_compile_id,
                           f"AOTAutograd traces per shape: {type(error).__name__}: {error}")
            return
        if all(j in compiled.replays for j, alias in enumerate(compiled.meta.aliases) if alias):
            returned.fixed = compiled
    returned.fixed = None          # the graphs every call runs, once known
    returned.trace_symbolically = trace_symbolically
    return returned


_FLAT = (Tensor, int, float, bool)    # leaves that need no flattening


def _is_flat_tuple(spec) -> bool:
    """``spec`` is a tuple of leaves: its outputs, as a list, are the result."""
    return spec.type is tuple and all(child.is_leaf() for child in spec.children())


@functools.lru_cache(maxsize=None)
def _flat_spec(count: int):
    """The spec of ``(args, {})`` for ``count`` leaf arguments."""
    return pytree.tree_flatten(((0,) * count, {}))[1]


def _params_and_buffers(mod: Module) -> dict:
    return {**dict(mod.named_parameters(remove_duplicate=False)),
            **dict(mod.named_buffers(remove_duplicate=False))}


def _module_functional(mod: Module, names: list):
    """``run(state, inputs, extra)``: ``mod(*inputs, **extra)`` with its
    parameters and buffers (``names``) replaced by the values ``state``."""
    def run(state, inputs, extra):
        state = dict(zip(names, state))
        if isinstance(mod, GraphModule) and not extra:     # a captured graph: node by node,
            with _reparametrize_module(mod, state, tie_weights=True):   # so each traced op
                return Interpreter(mod).run(*inputs)       # keeps its node's source line
        return _functional_call(mod, state, inputs, extra)
    return run


def aot_module(mod: Module, *args, **kwargs) -> Module:
    """``mod`` as a Module whose calls run through ``aot_function``: its
    parameters and buffers become the graphs' first inputs."""
    names = list(_params_and_buffers(mod))
    run = _module_functional(mod, names)
    compiled = aot_function(lambda *flat: run(flat[:len(names)], flat[len(names)],
                                              flat[len(names) + 1]),
                            *args, num_params_buffers=len(names), **kwargs)

    class AOTModule(Module):
        def __init__(self):
            super().__init__()
            self.orig_module = mod
            self.compiled_fn = compiled     # its .compiled.graphs: the last traced graphs

        def forward(self, *a, **k):
            return compiled(*_params_and_buffers(mod).values(), a, k)
    return AOTModule()


def aot_module_simplified(mod: Module, args, fw_compiler, bw_compiler=None,
                          partition_fn=default_partition, decompositions=None,
                          keep_inference_input_mutations: bool = False,
                          inference_compiler=None, cudagraphs=None):
    """A callable for a Module (a Dynamo graph) and example inputs: the
    compiled module called with its flat inputs (parameters lifted out)."""
    params = _params_and_buffers(mod)       # taken once, as PyTorch does
    names, state = list(params), list(params.values())
    run = _module_functional(mod, names)
    symbolic = _fake_mode_of(args) is not None
    compiled = aot_function(lambda *flat: run(flat[:len(names)], flat[len(names):], {}),
                            fw_compiler, bw_compiler, partition_fn, decompositions,
                            num_params_buffers=len(names),
                            inference_compiler=inference_compiler, _guarded=not symbolic)
    if symbolic:
        compiled.trace_symbolically(state + list(args))

    def forward(*runtime_args):      # flat: the parameters, then the graph's inputs
        return compiled(*state, *runtime_args)
    forward.zero_grad = mod.zero_grad
    forward.named_parameters = mod.named_parameters
    forward.named_buffers = mod.named_buffers
    return forward

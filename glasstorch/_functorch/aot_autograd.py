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
call with other shapes, dtypes or requires_grad traces again.
"""
from __future__ import annotations

from .._creation import empty_strided
from .._subclasses.fake_tensor import FakeTensorMode
from ..autograd import function as _function
from ..autograd.grad_mode import enable_grad, is_grad_enabled, no_grad
from .._tensor import Tensor
from ..fx.experimental.proxy_tensor import make_fx
from ..fx.graph_module import GraphModule
from ..nn.modules.module import Module
from ..nn.utils.stateless import _functional_call
from ..utils import _pytree as pytree
from .partitioners import default_partition, min_cut_rematerialization_partition

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


def create_joint(fn, primals_require_grad: list):
    """``joint(primals, tangents) -> (outputs, gradients)``: ``fn``'s flat outputs,
    then for each primal the gradient of the outputs that require grad, weighted
    by the tangents (None for a primal that needs none)."""
    def joint(primals, tangents):
        with enable_grad():
            outs = fn(*primals)
        wanted = [p for p, g in zip(primals, primals_require_grad) if g]
        differentiable = [o for o in outs if isinstance(o, Tensor) and o.requires_grad]
        grads = iter(_autograd_grad(differentiable, wanted, tangents))
        return list(outs), [next(grads) if g else None for g in primals_require_grad]
    return joint


def _autograd_grad(outputs, inputs, grad_outputs):
    from ..autograd import grad
    if not outputs or not inputs:
        return [None] * len(inputs)
    return grad(outputs, inputs, grad_outputs, allow_unused=True)


def _trace(fn, args, decompositions) -> GraphModule:
    """``fn``'s ATen graph, traced on FakeTensors (nothing computed, no buffer
    updated), then traced again under functionalize if any of its ops writes."""
    gm = make_fx(fn, decompositions, tracing_mode="fake", _allow_non_fake_inputs=True)(*args)
    if not any(n.op == "call_function" and n.is_impure() for n in gm.graph.nodes):
        return gm
    from ..func import functionalize
    functional = run = functionalize(gm)
    if len(args) == 2 and all(isinstance(a, list) for a in args):
        def functional(primals, tangents):      # keeps the names primals_1, tangents_1
            return run(primals, tangents)
    return make_fx(functional, decompositions, tracing_mode="fake",
                   _allow_non_fake_inputs=True)(*args)


class _Compiled:
    """One traced-and-compiled (forward, backward) pair for one input signature."""

    def __init__(self, flat_fn, flat_args, fw_compiler, bw_compiler, partition_fn,
                 decompositions, inference_compiler):
        requires_grad = [isinstance(a, Tensor) and a.requires_grad for a in flat_args]
        self.training = is_grad_enabled() and any(requires_grad)
        if not self.training:
            with no_grad():
                graph = _trace(flat_fn, flat_args, decompositions)
            self.forward = (inference_compiler or fw_compiler)(graph, flat_args)
            self.graphs = {"inference": graph}
            return
        primals = [a.detach().requires_grad_(g) if isinstance(a, Tensor) else a
                   for a, g in zip(flat_args, requires_grad)]
        with FakeTensorMode(allow_non_fake_inputs=True) as mode, enable_grad():
            outs = flat_fn(*[mode.from_tensor(p) if isinstance(p, Tensor) else p
                             for p in primals])
        self.num_outputs = len(outs)
        self.differentiable = [isinstance(o, Tensor) and o.requires_grad for o in outs]
        tangents = [empty_strided(o.shape, o.stride(), dtype=o.dtype)
                    for o, d in zip(outs, self.differentiable) if d]
        joint = _trace(create_joint(flat_fn, requires_grad), (primals, tangents),
                       decompositions)
        fw, bw = partition_fn(joint, (primals, tangents), num_fwd_outputs=self.num_outputs)
        self.graphs = {"joint": joint, "forward": fw, "backward": bw}
        self.forward = fw_compiler(fw, flat_args)
        self.bw_compiler, self.backward = bw_compiler, None   # compiled at the first backward

    def __call__(self, flat_args: list):
        if not self.training:
            with no_grad():
                return list(_call(self.forward, flat_args))
        return list(_make_function(self).apply(*flat_args))


def _make_function(compiled: _Compiled):
    class CompiledFunction(_function.Function):
        """The forward and backward graphs as one autograd node
        (``CompiledFunctionBackward`` in a grad_fn chain, as in PyTorch)."""

        @staticmethod
        def forward(ctx, *flat_args):
            results = _call(compiled.forward, list(flat_args))
            outs, saved = results[:compiled.num_outputs], results[compiled.num_outputs:]
            ctx.save_for_backward(*[s for s in saved if isinstance(s, Tensor)])
            ctx.mark_non_differentiable(*[o for o, d in zip(outs, compiled.differentiable)
                                          if not d and isinstance(o, Tensor)])
            return tuple(outs)

        @staticmethod
        def backward(ctx, *grads):
            tangents = [g.contiguous() for g, d in zip(grads, compiled.differentiable) if d]
            if compiled.backward is None:
                compiled.backward = compiled.bw_compiler(compiled.graphs["backward"], None)
            return tuple(_call(compiled.backward, list(ctx.saved_tensors) + tangents))
    return CompiledFunction


def _signature(flat_args, grad_enabled: bool) -> tuple:
    return (grad_enabled,) + tuple(
        (tuple(a.shape), a.dtype, a.requires_grad, a.device) if isinstance(a, Tensor)
        else (type(a), a) for a in flat_args)


def aot_function(fn, fw_compiler, bw_compiler=None, partition_fn=default_partition,
                 decompositions=None, num_params_buffers: int = 0,
                 keep_inference_input_mutations: bool = False, inference_compiler=None,
                 *, dynamic: bool = False, enable_log: bool = True):
    """``fn`` with its forward and backward traced and compiled ahead of time
    (see the module docstring); returns a function taking ``fn``'s arguments."""
    bw_compiler = bw_compiler or fw_compiler
    cache: dict = {}

    def returned(*args, **kwargs):
        flat_args, in_spec = pytree.tree_flatten((args, kwargs))
        out_spec = []

        def flat_fn(*flat):
            a, k = pytree.tree_unflatten(list(flat), in_spec)
            leaves, spec = pytree.tree_flatten(fn(*a, **k))
            out_spec[:] = [spec]
            return tuple(leaves)
        key = _signature(flat_args, is_grad_enabled())
        compiled = cache.get(key)
        if compiled is None:
            compiled = cache[key] = _Compiled(flat_fn, flat_args, fw_compiler, bw_compiler,
                                              partition_fn, decompositions, inference_compiler)
            compiled.out_spec = out_spec[0]
        returned.compiled = compiled
        result = pytree.tree_unflatten(compiled(flat_args), compiled.out_spec)
        return list(result) if type(result) is tuple else result   # torch returns a list
    return returned


def _params_and_buffers(mod: Module) -> dict:
    return {**dict(mod.named_parameters(remove_duplicate=False)),
            **dict(mod.named_buffers(remove_duplicate=False))}


def aot_module(mod: Module, *args, **kwargs) -> Module:
    """``mod`` as a Module whose calls run through ``aot_function``: its
    parameters and buffers become the graphs' first inputs."""
    names = list(_params_and_buffers(mod))

    def functional(*flat):
        state = dict(zip(names, flat[:len(names)]))
        inputs, extra = flat[len(names)], flat[len(names) + 1]
        return _functional_call(mod, state, inputs, extra)
    compiled = aot_function(functional, *args, num_params_buffers=len(names), **kwargs)

    class AOTModule(Module):
        def __init__(self):
            super().__init__()
            self.orig_module = mod

        def forward(self, *a, **k):
            return compiled(*_params_and_buffers(mod).values(), a, k)
    return AOTModule()


def aot_module_simplified(mod: Module, args, fw_compiler, bw_compiler=None,
                          partition_fn=default_partition, decompositions=None,
                          keep_inference_input_mutations: bool = False,
                          inference_compiler=None, cudagraphs=None):
    """A callable for a Module (a Dynamo graph) and example inputs: the
    compiled module called with its flat inputs (parameters lifted out)."""
    aot = aot_module(mod, fw_compiler, bw_compiler, partition_fn, decompositions,
                     inference_compiler=inference_compiler)

    def forward(*runtime_args):
        return aot(*runtime_args)
    forward.zero_grad = mod.zero_grad
    forward.named_parameters = mod.named_parameters
    forward.named_buffers = mod.named_buffers
    return forward

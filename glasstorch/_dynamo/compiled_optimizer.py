"""``torch.compile(opt.step)``: an optimizer's step as one compiled graph.

PyTorch's Dynamo traces ``Optimizer.step`` with a dedicated tracker
(``OptimizerVariable``) that lifts the parameters, their gradients and the
optimizer state out as graph inputs, and its Adam reads the step count as a
tensor while compiling (``_get_value``), so that one graph serves every step.
glasstorch does the same in one place:

* the first call, and any call whose state is not yet built (the lazy
  initialization of ``exp_avg`` and friends), runs eagerly, which is where
  PyTorch's first compiled step breaks its graph too;
* afterwards the step is traced once per *signature* (which parameters have
  gradients, every tensor's geometry, the state's structure and the groups'
  hyperparameters) on the parameters, gradients and state tensors as inputs,
  with ``torch.compiler.is_compiling()`` true, through AOTAutograd (which
  turns the in-place updates into new values written back) and the
  context's backend (Inductor: one C kernel per parameter's update);
* hooks registered on the optimizer run eagerly around the compiled update.
"""
from __future__ import annotations

import contextlib
from collections import defaultdict

from ..autograd.grad_mode import no_grad
from .._tensor import Tensor

__all__ = ["CompiledOptimizerStep", "is_optimizer_step"]


def is_optimizer_step(fn) -> bool:
    """``fn`` is an optimizer's bound ``step``."""
    from ..optim.optimizer import Optimizer
    return getattr(fn, "__name__", None) == "step" and \
        isinstance(getattr(fn, "__self__", None), Optimizer)


class CompiledOptimizerStep:
    """``opt.step`` compiled with the backend of ``ctx``."""

    def __init__(self, step, ctx):
        self.step, self.opt, self.ctx = step, step.__self__, ctx
        self.compiled = {}          # signature -> compiled update
        self.__wrapped__ = step
        self.__name__ = getattr(step, "__name__", "step")

    def __call__(self, closure=None):
        if closure is not None or not self._state_built():
            return self.step(closure)
        entries = self._entries()
        key = self._signature(entries)
        flat = [t for p, state_keys in entries
                for t in (p, p.grad, *(self.opt.state[p][k] for k in state_keys))]
        with self._hooks_around():
            with no_grad():
                update = self.compiled.get(key)
                if update is None:          # traced, compiled and run; later calls go
                    traced = self._compile(entries)        # straight to the graph
                    traced(*flat)
                    self.compiled[key] = traced.compiled
                else:
                    update(flat)
        return None

    # -- what the step reads -------------------------------------------------------------

    def _state_built(self) -> bool:
        opt = self.opt
        return all(opt.state.get(p) for group in opt.param_groups for p in group["params"]
                   if p.grad is not None)

    def _entries(self) -> list:
        """(parameter, the names of its tensor state) for each parameter with a
        gradient, in the order the step visits them."""
        opt = self.opt
        return [(p, tuple(k for k in sorted(opt.state[p]) if isinstance(opt.state[p][k],
                                                                         Tensor)))
                for group in opt.param_groups for p in group["params"] if p.grad is not None]

    def _signature(self, entries) -> tuple:
        opt = self.opt

        def geometry(t):
            return (t._shape, t._stride, t.dtype)
        tensors = tuple((id(p), geometry(p), geometry(p.grad),
                         tuple((k, geometry(opt.state[p][k])) for k in keys))
                        for p, keys in entries)
        others = tuple(tuple(sorted((k, repr(v)) for k, v in opt.state[p].items()
                                    if not isinstance(v, Tensor))) for p, _ in entries)
        groups = tuple(tuple(sorted((k, repr(v)) for k, v in g.items() if k != "params"))
                       for g in opt.param_groups)
        return tensors, others, groups

    @contextlib.contextmanager
    def _hooks_around(self):
        """The step's pre- and post-hooks (global and this optimizer's) run as
        eager Python, around the compiled update."""
        from ..optim.optimizer import _global_optimizer_post_hooks, _global_optimizer_pre_hooks
        opt = self.opt
        for hook in (*_global_optimizer_pre_hooks.values(),
                     *opt._optimizer_step_pre_hooks.values()):
            hook(opt, (), {})
        yield
        for hook in (*opt._optimizer_step_post_hooks.values(),
                     *_global_optimizer_post_hooks.values()):
            hook(opt, (), {})

    # -- the traced update ------------------------------------------------------------------

    def _compile(self, entries):
        """The step as a function of the flat tensors, compiled by the backend
        through AOTAutograd (inference: nothing is differentiated)."""
        opt = self.opt
        raw_step = getattr(type(opt).step, "__wrapped__", type(opt).step)   # hooks run outside

        def update(*flat):
            it = iter(flat)
            swapped = {}
            state = defaultdict(dict)
            for p, keys in entries:
                traced = next(it)
                traced.grad = next(it)
                swapped[id(p)] = traced
                state[traced] = dict(opt.state[p])
                state[traced].update((k, next(it)) for k in keys)
            groups = [g["params"] for g in opt.param_groups]
            real_state = opt.state
            try:
                for g in opt.param_groups:
                    g["params"] = [swapped.get(id(p), p) for p in g["params"]]
                opt.state = state
                with _compiling():
                    raw_step(opt)
            finally:
                opt.state = real_state
                for g, params in zip(opt.param_groups, groups):
                    g["params"] = params
            return ()
        from .._functorch.aot_autograd import aot_function, nop
        from .._inductor.compile_fx import InductorBackend
        from .backends.registry import lookup_backend
        backend = self.ctx.backend
        if backend is lookup_backend("inductor") or isinstance(backend, InductorBackend):
            from .._inductor import config
            from .._inductor.compile_fx import compile_fx_inner, decompositions, next_aot_id
            name = f"{next_aot_id()}_inference"
            patches = getattr(backend, "config_patches", {})

            def compiler(gm, inputs):
                with config.patch(**patches):
                    return compile_fx_inner(gm, inputs, name)
            return aot_function(update, nop, decompositions=decompositions(),
                                keep_inference_input_mutations=True,   # updated in place
                                inference_compiler=compiler)
        return aot_function(update, nop, inference_compiler=nop)   # other backends: as Python


@contextlib.contextmanager
def _compiling():
    from ..compiler import _tracing
    previous, _tracing.compiling = _tracing.compiling, True
    try:
        yield
    finally:
        _tracing.compiling = previous

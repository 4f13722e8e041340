"""Batching rules: how each op runs on BatchedTensors (aten/src/ATen/functorch/BatchRules*.cpp).

The FuncTorchBatched fallback (``batched_fallback``, registered for every op)
looks at the arguments batched at the current vmap level and then, in order:

    no argument batched here     the op goes on below this level unchanged
    a batching rule for the op   the rule unwraps the physical tensors, calls
                                 the op once on the whole batch, wraps the result
    a decomposition (CIA)        the op's CompositeImplicitAutograd kernel runs on
                                 the BatchedTensors (its ops are batched one by one)
    otherwise                    the per-example loop: the op runs once per
                                 example and the results are stacked, with
                                 PyTorch's performance warning

A rule is ``rule(op, level, values)``: ``values`` are the op's arguments bound
to its schema (one per schema argument, defaults filled in), and the rule runs
with FuncTorchBatched excluded, so the ops it calls on physical tensors go to
the next level down.  Rules are grouped by the shape of what they do:
``pointwise.py``, ``reductions.py``, ``views.py``, ``linalg.py``, ``nn.py``,
``random.py``, ``indexing.py``, ``conv.py``, ``norms.py``, ``errors.py`` (ops vmap refuses);
``coverage()`` counts them.
"""
from __future__ import annotations

import contextlib
import warnings

from ..._core.dispatch_key import DispatchKey
from ..._core.tls import state as _tls
from ..._tensor import Tensor
from ..batched_tensor import BatchedTensor, _make_batched
from ..pyfunctorch import BATCHED, interpreter_of

__all__ = ["register", "register_decomposition", "batched_fallback", "coverage", "bind", "call", "unwrap", "wrap",
           "to_front", "logical_rank", "pad_rank", "wrap_dim", "batch_size_of", "batched_again",
           "loop_fallback", "tensor_slots", "inplace_error"]

REPORTS: list = []             # active _functorch.debug.BatchingReports (they see every op)
RULES: dict = {}               # OpOverload -> rule
DECOMPOSITIONS: dict = {}      # OpOverload -> function of the BatchedTensors themselves
_fallback_warning = [True]     # torch._C._functorch._set_vmap_fallback_warning_enabled


def register(*ops):
    """Decorator: the rule for each of ``ops`` (OpOverloads)."""
    def decorate(rule):
        for op in ops:
            RULES[op] = rule
        return rule
    return decorate


def overloads(*names):
    """The OpOverloads named ``"op.overload"`` that this op library has (a
    rule list may name ops glasstorch does not declare yet)."""
    from ..._dispatcher.dispatcher import _lookup_overload, dispatcher
    return [_lookup_overload("aten::" + name) for name in names
            if dispatcher.find("aten::" + name) is not None]


def register_decomposition(*ops):
    """Decorator: ``fn(*args, **kwargs)`` computes each of ``ops`` from other ops
    on the BatchedTensors themselves (functorch's FuncTorchBatchedDecomposition):
    for ops that are sums of batchable pieces."""
    def decorate(fn):
        for op in ops:
            DECOMPOSITIONS[op] = fn
        return fn
    return decorate


# -- arguments ------------------------------------------------------------------------

def bind(op, args, kwargs) -> list:
    """One value per schema argument: the positional and keyword arguments, then defaults."""
    values = list(args)
    params = op._schema.arguments
    for arg in params[len(args):]:
        if arg.name in kwargs:
            values.append(kwargs[arg.name])
        else:
            values.append(arg.default_value if arg.has_default_value() else None)
    return values


def call(op, values):
    """Call ``op`` with bound ``values`` (keyword-only arguments by name)."""
    params = op._schema.arguments
    positional = [v for a, v in zip(params, values) if not a.kwarg_only]
    keywords = {a.name: v for a, v in zip(params, values) if a.kwarg_only}
    return op(*positional, **keywords)


def tensor_slots(op, values) -> list:
    """Positions of the ``Tensor`` and ``Tensor?`` arguments that hold a tensor."""
    return [i for i, (a, v) in enumerate(zip(op._schema.arguments, values))
            if (a.type.is_tensor or a.type.is_optional_tensor) and isinstance(v, Tensor)]


def inplace_error(name: str, level=None) -> RuntimeError:
    """PyTorch's error for an in-place op whose ``self`` is not batched while
    another argument is: the examples cannot all be written into ``self``."""
    where = "in a vmap" if level is None else f"at level {level}"
    return RuntimeError(
        f"vmap: {name}(self, *extra_args) is not possible because there exists a Tensor `other` "
        f"in extra_args that has more elements than `self`. This happened due to `other` being "
        f"vmapped over but `self` not being vmapped over {where}. Please try to use out-of-place "
        f"operators instead of {name}. If said operator is being called inside the PyTorch "
        f"framework, please file a bug report instead.")


def unwrap(value, level):
    """(physical tensor, batch dim or None) of a tensor at ``level``."""
    if isinstance(value, BatchedTensor) and value._level == level:
        return value._value, value._bdim
    return value, None


def wrap(result, level, bdim=0):
    """Tensors in ``result`` (a tensor, or a tuple/list of them) batched at ``level``."""
    if isinstance(result, Tensor):
        return _make_batched(result, bdim, level)
    if isinstance(result, (tuple, list)):
        return type(result)(wrap(r, level, bdim) for r in result) if type(result) in (tuple, list) \
            else type(result)(*(wrap(r, level, bdim) for r in result))
    return result


def logical_rank(tensor, bdim) -> int:
    return tensor.dim() - (bdim is not None)


def to_front(tensor, bdim, batch_size=None):
    """The physical tensor with its batch dim first; an unbatched one is
    expanded to ``batch_size`` when that is given (a view, no copy)."""
    if bdim is None:
        if batch_size is None:
            return tensor
        return tensor.unsqueeze(0).expand(batch_size, *tensor.shape)
    return tensor if bdim == 0 else tensor.movedim(bdim, 0)


def pad_rank(tensor, rank: int):
    """A batch-first tensor with size-1 dims inserted after the batch dim until
    it has logical rank ``rank``, so that broadcasting lines its examples up."""
    missing = rank - (tensor.dim() - 1)
    if missing <= 0:
        return tensor
    return tensor.reshape(tensor.shape[:1] + (1,) * missing + tensor.shape[1:])


def wrap_dim(dim: int, rank: int) -> int:
    """A logical dim made non-negative (a scalar accepts dims 0 and -1), with
    PyTorch's error for one out of range."""
    bound = max(rank, 1)
    if not -bound <= dim < bound:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-bound}, "
                         f"{bound - 1}], but got {dim})")
    return dim + bound if dim < 0 else dim


@contextlib.contextmanager
def batched_again():
    """Inside a rule: ops on BatchedTensors are batched again (a rule that
    finishes its work with other batchable ops)."""
    excluded = _tls.excluded
    _tls.excluded = excluded & ~BATCHED
    try:
        yield
    finally:
        _tls.excluded = excluded


def batch_size_of(level) -> int:
    return interpreter_of(level).batch_size()


# -- the fallback ---------------------------------------------------------------------

def _batched_here(values, level) -> bool:
    for v in values:
        if isinstance(v, BatchedTensor):
            if v._level == level:
                return True
        elif isinstance(v, (list, tuple)):
            for x in v:
                if isinstance(x, BatchedTensor) and x._level == level:
                    return True
    return False


def batched_fallback(op, keyset, args, kwargs):
    """FuncTorchBatched: a batching rule, a decomposition, or the per-example loop.

    The level is the innermost vmap's, or, with no transform on the stack, the
    arguments' own: a BatchedTensor used below its level, as a tangent that
    forward AD carries under ``vmap`` (``autograd.functional``'s forward mode;
    PyTorch batches these with its legacy, stackless vmap)."""
    layers = _tls.functorch_layers
    level = layers[-1].level() if layers else _level_of(args, kwargs)
    if not _batched_here(args, level) and not _batched_here(kwargs.values(), level):
        return _below(op, args, kwargs)
    if not RULES:
        _load_rules()
    decomposition = DECOMPOSITIONS.get(op)
    rule = RULES.get(op)
    if REPORTS:
        _report(op, decomposition, rule)
    if decomposition is not None:
        return decomposition(*args, **kwargs)
    if rule is not None:
        excluded = _tls.excluded
        _tls.excluded = excluded | BATCHED
        try:
            return rule(op, level, bind(op, args, kwargs))
        finally:
            _tls.excluded = excluded
    result = op.decompose(*args, **kwargs)
    if result is not NotImplemented:
        return result
    return loop_fallback(op, level, bind(op, args, kwargs))


def _report(op, decomposition, rule) -> None:
    if decomposition is not None or rule is not None:
        how = f"rule: {(decomposition or rule).__module__.rsplit('.', 1)[-1]}.py " \
              f"{(decomposition or rule).__name__}"
    elif DispatchKey.CompositeImplicitAutograd in op._entry.kernels:
        how = "decomposition (CompositeImplicitAutograd)"
    else:
        how = "loop fallback"
    for report in REPORTS:
        report.record(op._name, how)


def _level_of(args, kwargs) -> int:
    values = [x for v in (*args, *kwargs.values())
              for x in (v if isinstance(v, (list, tuple)) else (v,))]
    return max(v._level for v in values if isinstance(v, BatchedTensor))


def _below(op, args, kwargs):
    excluded = _tls.excluded
    _tls.excluded = excluded | BATCHED
    try:
        return op(*args, **kwargs)
    finally:
        _tls.excluded = excluded


def loop_fallback(op, level, values):
    """The op once per example, the results stacked (functorch's
    batchedTensorForLoopFallback).  View and out= ops cannot go this way: their
    results would not alias their inputs."""
    schema = op._schema
    if any(r.alias_info is not None for r in schema.returns) and not schema.arguments[0].is_write:
        raise RuntimeError(f"Batching rule not implemented for {op._name}; the fallback path "
                           "doesn't work on out= or view ops.")
    if not all(r.type.is_tensor or r.type.is_tensor_list for r in schema.returns):
        raise RuntimeError(f"Batching rule not implemented for {op._name}. We could not generate "
                           "a fallback.")
    if schema.arguments[0].is_write and unwrap(values[0], level)[1] is None:
        raise inplace_error(op._name, level)
    if _fallback_warning[0]:
        warnings.warn(f"There is a performance drop because we have not yet implemented the "
                      f"batching rule for {op._name}. Please file us an issue on GitHub so that "
                      "we can prioritize its implementation.", UserWarning, stacklevel=2)
    size = batch_size_of(level)
    excluded = _tls.excluded
    _tls.excluded = excluded | BATCHED
    try:
        results = [call(op, [_example(v, level, i) for v in values]) for i in range(size)]
        if schema.arguments[0].is_write:        # in place: the examples were written through
            return values[0]
        return _stack_results(results, level)
    finally:
        _tls.excluded = excluded


def _example(value, level, i):
    if isinstance(value, BatchedTensor) and value._level == level:
        return value._value.select(value._bdim, i)
    if isinstance(value, (list, tuple)) and any(isinstance(x, BatchedTensor) for x in value):
        return type(value)(_example(x, level, i) for x in value)
    return value


def _stack_results(results, level):
    first = results[0]
    if first is None and all(r is None for r in results):   # an undefined gradient
        return None
    if isinstance(first, Tensor):
        return _make_batched(_stack(results), 0, level)
    if isinstance(first, (tuple, list)):
        columns = [_stack_results([r[k] for r in results], level) for k in range(len(first))]
        return type(first)(columns) if type(first) in (tuple, list) else type(first)(*columns)
    raise RuntimeError("vmap: the fallback can only batch ops that return tensors")


def _stack(tensors):
    from ..._dispatcher.dispatcher import ops
    return ops.aten.stack.default(tensors)


def coverage() -> tuple[int, int]:
    """(ops with a batching rule, all aten ops): the report issue 15 asks for."""
    from ..._dispatcher.dispatcher import dispatcher
    if not RULES:
        _load_rules()
    total = sum(1 for name in dispatcher.operators if name.startswith("aten::"))
    return len(RULES) + len(DECOMPOSITIONS), total


def _load_rules() -> None:
    from . import (conv, errors, indexing, linalg, nn, norms, pointwise, random,  # noqa: F401
                   reductions, views)                                          # (they register)

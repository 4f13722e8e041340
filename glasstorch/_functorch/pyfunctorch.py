"""The transform stack: functorch's DynamicLayer machinery
(aten/src/ATen/functorch/DynamicLayer.cpp, Interpreter.cpp; torch/_functorch/pyfunctorch.py).

Every active transform (a ``vmap``, a ``grad`` ...) is one *interpreter* on a
thread-local stack, numbered by its *level* (1 for the outermost).  Tensors
made by a transform remember the level they belong to, so nested transforms
never confuse one another's tensors.

While the stack is not empty, two keys are in this thread's included set:

    FuncTorchDynamicLayerFrontMode   (near the top of the key order)
    FuncTorchDynamicLayerBackMode    (below autograd and functionalization,
                                      above the Python key and the backends)

and every op takes this path:

    op(*args)
      FrontMode fallback:  the top interpreter's ``process``: it sets the keys
                           of its own transform (vmap: FuncTorchBatched; grad:
                           the Autograd keys) and excludes the other transforms'
                           keys and FrontMode, then calls the op again
      <the transform's key>: a batching rule, or autograd recording ...
      BackMode fallback:   the top interpreter's ``send_to_next``: the layer is
                           popped, the thread's key sets are restored to what
                           they were before ``process``, and the op is called
                           again, now handled by the next interpreter down (or,
                           with the stack empty, by the plain dispatcher)

So an op inside ``vmap(vmap(f))`` is batched once per level, innermost first.
"""
from __future__ import annotations

import contextlib
import enum
import threading

from .._core import dispatch_key as dk
from .._core.dispatch_key import FUNC, functionality_bit
from .._core.tls import state as _tls
from .._tensor import Tensor
from .batched_tensor import adopt_geometry
from .tensor_wrapper import TensorWrapper, is_wrapped_at, unwrap_at, wrap_at

__all__ = ["TransformType", "Interpreter", "VmapInterpreter", "GradInterpreter", "JvpInterpreter", "retrieve_current_functorch_interpreter",
           "push_interpreter", "pop_interpreter", "current_level"]

FRONT_MODE = functionality_bit(FUNC["FuncTorchDynamicLayerFrontMode"])
BACK_MODE = functionality_bit(FUNC["FuncTorchDynamicLayerBackMode"])
BATCHED = functionality_bit(FUNC["FuncTorchBatched"]) | functionality_bit(FUNC["BatchedNestedTensor"])
VMAP_MODE = functionality_bit(FUNC["FuncTorchVmapMode"])
GRAD_WRAPPER = functionality_bit(FUNC["FuncTorchGradWrapper"])
# The keys a transform level may own (functorch's all_dynlayer_keyset): every
# key from BackMode up to FrontMode, less the Autocast keys and FuncTorchVmapMode.
ALL_TRANSFORM_KEYS = 0
for _f in range(FUNC["FuncTorchDynamicLayerBackMode"], FUNC["FuncTorchDynamicLayerFrontMode"] + 1):
    ALL_TRANSFORM_KEYS |= functionality_bit(_f)
ALL_TRANSFORM_KEYS &= ~(dk.AUTOCAST_KEYS | VMAP_MODE)


class TransformType(enum.Enum):
    """``torch._C._functorch.TransformType``."""
    Torch = 0
    Vmap = 1
    Grad = 2
    Jvp = 3
    Functionalize = 4


class Interpreter:
    """One layer of the stack.  ``process`` runs an op with this transform's
    keys on; ``send_to_next`` hands it to the layer below."""

    transform: TransformType
    own_keys = 0                    # the keys this transform handles ops with
    also_include = 0                # keys added to the included set while processing

    def __init__(self, level: int):
        self._level = level
        self._saved_tls = None      # the key sets in force when ``process`` was entered
        self.alive = [True]         # shared with the tensors of this level; False once it ends

    def level(self) -> int:
        return self._level

    def key(self) -> TransformType:
        return self.transform

    def process(self, op, args, kwargs):
        """functorch's ``setup_dispatch_key_tls`` then ``op.callBoxed``: the other
        transforms' keys and FrontMode excluded, this one's on."""
        previous = (_tls.included, _tls.excluded)
        saved, self._saved_tls = self._saved_tls, previous
        _tls.excluded = (previous[1] | (ALL_TRANSFORM_KEYS & ~BACK_MODE)) & ~self.own_keys
        _tls.included = previous[0] | self.also_include
        try:
            return self.run(op, args, kwargs)
        finally:
            _tls.included, _tls.excluded = previous
            self._saved_tls = saved

    def run(self, op, args, kwargs):
        return op(*args, **kwargs)

    def send_to_next(self, op, args, kwargs):
        """Pop this layer, restore the key sets ``process`` started from, run the op."""
        previous = (_tls.included, _tls.excluded)
        pop_interpreter()
        _tls.included, _tls.excluded = self._saved_tls
        if not _tls.functorch_layers:
            _tls.included &= ~(FRONT_MODE | BACK_MODE)
        try:
            return self.lower(op, args, kwargs)
        finally:
            push_interpreter(self)
            _tls.included, _tls.excluded = previous

    def lower(self, op, args, kwargs):
        return op(*args, **kwargs)

    def __repr__(self):
        return f"{type(self).__name__}(level={self._level})"


class VmapInterpreter(Interpreter):
    """A ``vmap`` level: ops on its BatchedTensors go to their batching rules
    (FuncTorchBatched); random ops check ``randomness`` (FuncTorchVmapMode)."""

    transform = TransformType.Vmap
    own_keys = BATCHED | VMAP_MODE
    also_include = VMAP_MODE

    def __init__(self, level: int, batch_size: int, randomness: str):
        super().__init__(level)
        self._batch_size = batch_size
        self._randomness = randomness

    def batch_size(self) -> int:
        return self._batch_size

    def randomness(self) -> str:
        return self._randomness

    def __repr__(self):
        return f"VmapInterpreter(level={self._level}, batch_size={self._batch_size}, " \
               f"randomness={self._randomness!r})"


class GradInterpreter(Interpreter):
    """A ``grad``/``vjp``/``jacrev`` level: ops run through autograd on this
    level's TensorWrappers (``_functorch/tensor_wrapper.py``); the values
    underneath are computed by the next level down."""

    transform = TransformType.Grad
    own_keys = dk.AUTOGRAD_KEYS | dk.ADINPLACEORVIEW

    def __init__(self, level: int, prev_grad_mode: bool):
        super().__init__(level)
        self._prev_grad_mode = prev_grad_mode

    def prev_grad_mode(self) -> bool:
        return self._prev_grad_mode

    def run(self, op, args, kwargs):
        """Tensors from outside this level become constant wrappers of it
        (functorch's materializeGradWrappers); writing to one is refused."""
        level = self._level
        writes = _WRITTEN.get(op)
        if writes is None:
            writes = _WRITTEN[op] = tuple(i for i, a in enumerate(op._schema.arguments)
                                          if a.is_write)
        for i in writes:
            value = args[i] if i < len(args) else None
            if isinstance(value, Tensor) and (not is_wrapped_at(value, level) or value._immutable):
                raise RuntimeError(
                    "During a grad (vjp, jvp, grad, etc) transform, the function provided "
                    f"attempted to call in-place operation ({op._name}) that would mutate a "
                    "captured Tensor. This is not supported; please rewrite the function being "
                    "transformed to explicitly accept the mutated Tensor(s) as inputs.")
        lift = lambda t: t if is_wrapped_at(t, level) else wrap_at(t, self, immutable=True)  # noqa: E731
        return op(*_map_tensors(lift, args), **dict(zip(kwargs, _map_tensors(lift, kwargs.values()))))

    def lower(self, op, args, kwargs):
        """Unwrap this level's wrappers, run the op below (under the grad mode
        outside the transform), wrap the results; an op that returns one of its
        inputs (in-place, ``out=``) returns that input's wrapper."""
        level = self._level
        inputs = {}

        def unwrap(t):
            value = unwrap_at(t, level)
            if value is not t:
                inputs[id(value)] = t
            return value
        args = _map_tensors(unwrap, args)
        kwargs = dict(zip(kwargs, _map_tensors(unwrap, kwargs.values())))
        grad_enabled = _tls.grad_enabled
        _tls.grad_enabled = grad_enabled and self._prev_grad_mode
        try:
            result = op(*args, **kwargs)
        finally:
            _tls.grad_enabled = grad_enabled

        def rewrap(t):
            original = inputs.get(id(t))
            if original is None:
                return wrap_at(t, self)
            if original._shape != t._shape or original._stride != t._stride:
                adopt_geometry(original, t)         # an in-place view: squeeze_, t_ ...
            return original
        if isinstance(result, Tensor):
            return rewrap(result)
        if isinstance(result, (tuple, list)):
            items = _map_tensors(rewrap, result)
            return type(result)(*items) if hasattr(result, "_fields") else type(result)(items)
        return result

    def __repr__(self):
        return f"GradInterpreter(level={self._level}, prev_grad_mode={self._prev_grad_mode})"


class JvpInterpreter(GradInterpreter):
    """A ``jvp``/``jacfwd`` level: as a grad level, but what its wrappers carry
    through the Autograd keys is forward-mode tangents (``autograd.forward_ad``).
    Below it, forward AD is as it was outside (``prev_fwd_grad_mode``): a
    tangent formula's ops, run with forward AD off at this level, still carry
    the outer levels' tangents (nested jvp)."""

    transform = TransformType.Jvp

    def __init__(self, level: int, prev_grad_mode: bool, prev_fwd_grad_mode: bool):
        super().__init__(level, prev_grad_mode)
        self._prev_fwd_grad_mode = prev_fwd_grad_mode

    def lower(self, op, args, kwargs):
        from ..autograd.variable import fw_grad_mode
        enabled = fw_grad_mode.enabled
        fw_grad_mode.enabled = self._prev_fwd_grad_mode
        try:
            return super().lower(op, args, kwargs)
        finally:
            fw_grad_mode.enabled = enabled

    def __repr__(self):
        return f"JvpInterpreter(level={self._level}, prev_grad_mode={self._prev_grad_mode}, " \
               f"prev_fwd_grad_mode={self._prev_fwd_grad_mode})"


_WRITTEN: dict = {}     # op -> positions of the arguments it writes to


def _map_tensors(fn, values) -> list:
    """``fn`` applied to every tensor in ``values``, also inside lists and tuples."""
    out = []
    for v in values:
        if isinstance(v, Tensor):
            v = fn(v)
        elif isinstance(v, (list, tuple)) and any(isinstance(x, Tensor) for x in v):
            v = type(v)(fn(x) if isinstance(x, Tensor) else x for x in v)
        out.append(v)
    return out


# -- the stack ---------------------------------------------------------------------

def push_interpreter(interpreter: Interpreter) -> None:
    """Make ``interpreter`` the innermost transform."""
    if not _tls.functorch_layers:
        _tls.included |= FRONT_MODE | BACK_MODE
    _tls.functorch_layers = _tls.functorch_layers + (interpreter,)


def pop_interpreter() -> Interpreter:
    layers = _tls.functorch_layers
    _tls.functorch_layers = layers[:-1]
    if len(layers) == 1:
        _tls.included &= ~(FRONT_MODE | BACK_MODE)
    return layers[-1]


def current_level() -> int:
    """The innermost level now active, 0 when no transform is."""
    layers = _tls.functorch_layers
    return layers[-1].level() if layers else 0


def retrieve_current_functorch_interpreter() -> Interpreter | None:
    layers = _tls.functorch_layers
    return layers[-1] if layers else None


class _Scopes(threading.local):
    active: dict = None      # level -> the interpreter of every transform not yet ended


_scopes = _Scopes()


@contextlib.contextmanager
def interpreter_scope(interpreter: Interpreter):
    """Run a block with ``interpreter`` pushed (what ``_vmap_increment_nesting`` /
    ``_vmap_decrement_nesting`` bracket in PyTorch); its tensors die with it."""
    push_interpreter(interpreter)
    active = _scopes.active if _scopes.active is not None else {}
    _scopes.active = {**active, interpreter.level(): interpreter}
    try:
        yield interpreter
    finally:
        _scopes.active = active
        pop_interpreter()
        interpreter.alive[0] = False


def interpreter_of(level: int) -> Interpreter:
    """The transform of ``level``, active even while an op runs below it (its
    layer popped by ``send_to_next``)."""
    interpreter = (_scopes.active or {}).get(level)
    if interpreter is None:
        raise RuntimeError(f"no transform of level {level} is active")
    return interpreter


def next_level() -> int:
    return current_level() + 1


# -- the two fallbacks (registered in _ops/fallbacks.py) ----------------------------

def dynamic_layer_front_fallback(op, keyset, args, kwargs):
    """FuncTorchDynamicLayerFrontMode: the innermost transform processes the op
    (after the wrappers of ended levels are replaced by their values)."""
    if _has_dead(args) or _has_dead(kwargs.values()):
        args, kwargs = _without_dead(args, kwargs)
    return _tls.functorch_layers[-1].process(op, args, kwargs)


def grad_wrapper_fallback(op, keyset, args, kwargs):
    """FuncTorchGradWrapper, reached only outside a grad level: a wrapper that
    escaped its (ended) level stands for its value."""
    args, kwargs = _without_dead(args, kwargs)
    return op(*args, **kwargs)


def _is_dead(t) -> bool:
    return isinstance(t, TensorWrapper) and not t._alive[0]


def _has_dead(values) -> bool:
    for v in values:
        if isinstance(v, Tensor):
            if v._keys & GRAD_WRAPPER and _is_dead(v):
                return True
        elif isinstance(v, (list, tuple)):
            if any(isinstance(x, Tensor) and _is_dead(x) for x in v):
                return True
    return False


def _without_dead(args, kwargs):
    def value(t):
        while _is_dead(t):
            t = t._value
        return t
    return (tuple(_map_tensors(value, args)),
            dict(zip(kwargs, _map_tensors(value, kwargs.values()))))


def dynamic_layer_back_fallback(op, keyset, args, kwargs):
    """FuncTorchDynamicLayerBackMode: the op leaves this level for the next one."""
    return _tls.functorch_layers[-1].send_to_next(op, args, kwargs)


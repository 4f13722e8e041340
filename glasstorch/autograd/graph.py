"""The autograd graph (torch/csrc/autograd/function.h, saved_variable.cpp,
functions/accumulate_grad.cpp; Python side torch/autograd/graph.py).

A ``Node`` is one backward function.  It holds

    _next_edges     one Edge per differentiable forward input: (node, input_nr)
                    or None where that input did not require grad
    _input_metadata one (shape, dtype, device) per forward output, used by the
                    engine to check and fix the gradients flowing in
    _sequence_nr    creation order; the engine runs the latest-created ready
                    node first
    hooks           tensor pre-hooks, retains_grad hooks, pre-hooks, post-hooks

``apply(grads)`` maps one gradient per forward output to one gradient per next
edge.  Leaves that require grad get an ``AccumulateGrad`` node that writes
``.grad``.  Tensors a backward formula needs are kept as ``SavedVariable``s,
which remember the version they were saved at.
"""
from __future__ import annotations

import itertools
import re
import threading
import weakref

from .._core import dispatch_key as dk
from .._core import dtype as dt
from .._core.tls import state as _tls
from .._tensor import version_counter
from ..utils.hooks import RemovableHandle

__all__ = ["Node", "AccumulateGrad", "SavedVariable", "saved_tensors_hooks", "save_on_cpu",
           "register_multi_grad_hook",
           "disable_saved_tensors_hooks", "get_gradient_edge", "increment_version"]

UINT64_MAX = 2 ** 64 - 1
_sequence = itertools.count()


class HookDict(dict):
    """A dict a ``RemovableHandle`` can refer to weakly."""

    __slots__ = ("__weakref__",)


def _add_hook(owner, attr, fn, value=None):
    hooks = getattr(owner, attr)
    if hooks is None:
        hooks = HookDict()
        setattr(owner, attr, hooks)
    handle = RemovableHandle(hooks)
    hooks[handle.id] = fn if value is None else value
    return handle


class Node:
    """``torch.autograd.graph.Node``: base of every backward function."""

    # Every node sets these three; hooks and metadata are rare, so they are class
    # defaults and land in the (lazily made) instance dict only when set.
    __slots__ = ("_next_edges", "_input_metadata", "_seq", "__dict__", "__weakref__")
    _tensor_pre_hooks = _retains_grad_hooks = _pre_hooks = _post_hooks = _metadata = None

    def __init__(self, next_edges=(), sequence_nr=None):
        self._next_edges = next_edges
        self._input_metadata = ()
        self._seq = next(_sequence) if sequence_nr is None else sequence_nr

    # -- what Python sees -------------------------------------------------------

    # The engine's own nodes are C++ classes in PyTorch: name() is qualified.
    _name_prefix = ""

    def name(self) -> str:
        return self._name_prefix + type(self).__name__

    @property
    def next_functions(self):
        return tuple((None, 0) if e is None else e for e in self._next_edges)

    @property
    def metadata(self) -> dict:
        if self._metadata is None:
            self._metadata = {}
        return self._metadata

    def _sequence_nr(self) -> int:
        return self._seq

    def register_hook(self, fn):
        """Post-hook ``fn(grad_inputs, grad_outputs) -> tuple or None``."""
        return _add_hook(self, "_post_hooks", fn)

    def register_prehook(self, fn):
        """Pre-hook ``fn(grad_outputs) -> tuple or None``, run before the node."""
        return _add_hook(self, "_pre_hooks", fn)

    def _register_tensor_pre_hook(self, output_nr, fn):
        return _add_hook(self, "_tensor_pre_hooks", fn, (output_nr, fn))

    def __call__(self, *grads):
        return self.apply(list(grads))

    def apply(self, grads):
        raise NotImplementedError

    def release_variables(self) -> None:
        """Free saved tensors (after a backward without retain_graph)."""

    def __repr__(self):
        return f"<{type(self).__name__} object at {hex(id(self))}>"


class AccumulateGrad(Node):
    """The node of a leaf that requires grad: accumulates into ``variable.grad``
    (PyTorch's stealing/accumulating rules, pytorch-facts §4.4)."""

    __slots__ = ("variable",)
    _name_prefix = "torch::autograd::"

    def __init__(self, variable):
        # (Node.__init__ spelled out: one is made per leaf per forward)
        self._next_edges = ()
        self._seq = UINT64_MAX
        self.variable = variable
        self._input_metadata = ((variable._shape, variable.dtype, variable.device),)

    def apply(self, grads):
        from .variable import accumulate_grad
        new_grad = grads[0]
        grads[0] = None  # let accumulate_grad see whether it holds the only reference
        if new_grad is not None:
            accumulate_grad(self.variable, new_grad)
        return ()


class GraphRoot(Node):
    """The synthetic root of a backward with several outputs: returns the seeds."""

    __slots__ = ("seeds",)
    _name_prefix = "torch::autograd::"

    def __init__(self, edges, seeds):
        super().__init__(tuple(edges))
        self.seeds = seeds

    def apply(self, grads):
        return list(self.seeds)


# -- saved tensors ----------------------------------------------------------------

_BACKWARD_SUFFIX = re.compile(r"Backward\d*$")

ERR_BACKWARD_TWICE = (
    "Trying to backward through the graph a second time (or directly access saved tensors "
    "after they have already been freed). Saved intermediate values of the graph are freed "
    "when you call .backward() or autograd.grad(). Specify retain_graph=True if you need to "
    "backward through the graph a second time or if you need to access saved tensors after "
    "calling backward.")

ERR_INFERENCE_SAVED = (
    "Inference tensors cannot be saved for backward. Please do not use Tensors created in "
    "inference mode in computation tracked by autograd. To work around this, you can make a "
    "clone to get a normal tensor and use it in autograd, or use `torch.no_grad()` instead of "
    "`torch.inference_mode()`.")


class _SavedHooksState(threading.local):
    stack = ()
    disabled_message = None


_saved_hooks = _SavedHooksState()


def increment_version(t) -> None:
    """``torch.autograd.graph.increment_version``: what every in-place op does."""
    version_counter(t)[0] += 1


_AUTOGRAD_TENSOR_KEYS = dk.ADINPLACEORVIEW | dk.AUTOGRAD_FUNCTIONALITY


def is_inference(t) -> bool:
    """Made in inference mode: the tensor carries neither autograd key."""
    return not (t._keys & _AUTOGRAD_TENSOR_KEYS)


class SavedVariable:
    """A tensor kept for backward.  Inputs are kept as they are; a node's own
    output is kept without its grad_fn (no reference cycle) and gets it back on
    unpack.  Unpacking checks that nobody modified the tensor in place since."""

    __slots__ = ("data", "version", "counter", "is_output", "output_nr", "node_class",
                 "packed", "unpack_hook", "released", "was_none", "hook_history")

    def __init__(self, t, is_output=False, wrapped_number=False):
        self.released = False
        self.was_none = t is None
        self.packed = self.unpack_hook = None
        if t is None:
            self.data = None
            return
        if not (t._keys & _AUTOGRAD_TENSOR_KEYS) and not _tls.inference_mode:
            raise RuntimeError(ERR_INFERENCE_SAVED)
        counter = t._version_counter
        if counter is None:
            counter = version_counter(t)
        self.counter = counter
        self.version = counter[0]
        meta = t._autograd_meta
        if is_output and (meta is None or meta.grad_fn is None):
            is_output = False       # a non-differentiable output: no history to restore
        self.is_output = is_output
        self.output_nr = meta.output_nr if meta is not None else 0
        # the class of the node that made an output (for the "modified by an
        # inplace operation" message; the node itself would be a cycle)
        self.node_class = type(meta.grad_fn) if is_output else None
        hooks = _saved_hooks.stack
        if hooks and not wrapped_number:    # a Python number never reaches the pack hook
            pack, unpack = hooks[-1]
            self.data = None
            self.unpack_hook = unpack
            self.hook_history = _history_of(t, is_output)
            self.packed = pack(t)
            return
        self.data = _detached_alias(t) if is_output else t

    def unpack(self, node=None):
        if self.was_none:
            return None
        if self.released:
            raise RuntimeError(ERR_BACKWARD_TWICE)
        if self.unpack_hook is not None:
            t = self.unpack_hook(self.packed)
            from .._tensor import Tensor
            if not isinstance(t, Tensor):
                raise TypeError("Output of saved tensor unpack_hook expected to be a Tensor but "
                                f"got result of type {type(t).__name__}")
            # what the hook returns gets the saved tensor's place in the graph back
            grad_fn, accumulator = self.hook_history
            if self.is_output:
                grad_fn = node
            if grad_fn is None and accumulator is None and not t.requires_grad:
                return t
            return _with_history(t, grad_fn, self.output_nr, accumulator)
        data = self.data
        if self.counter[0] != self.version:
            raise RuntimeError(self._modified_message(data))
        if self.is_output and node is not None:
            return _with_history(data, node, self.output_nr, None)
        return data

    def register_hooks(self, pack_hook, unpack_hook) -> None:
        """``SavedTensor.register_hooks``: pack the saved tensor now; backward
        gets ``unpack_hook(packed)`` instead (with no version check)."""
        if self.unpack_hook is not None:
            raise RuntimeError("Calling register_hooks on a saved tensor whose hooks have already "
                               "been set. Hint: only one pair of hooks is allowed at a time.")
        if self.released:
            raise RuntimeError(
                "Calling register_hooks on a saved tensor after it has been freed. Saved "
                "intermediate values of the graph are freed when you call .backward() or "
                "autograd.grad(). Specify retain_graph=True if you need to backward through the "
                "graph a second time or if you need to access saved variables after calling "
                "backward.")
        if self.was_none:
            raise RuntimeError("Calling register_hooks on a saved tensor with value None is "
                               "forbidden")
        data, self.data = self.data, None
        self.hook_history = _history_of(data, self.is_output)
        self.unpack_hook = unpack_hook
        self.packed = pack_hook(data)

    def _modified_message(self, data) -> str:
        if self.is_output:
            cls = self.node_class
            name = cls._name_prefix + cls.__name__ if cls is not None else None
        else:
            grad_fn = data.grad_fn
            name = grad_fn.name() if grad_fn is not None else None
        where = f", which is output {self.output_nr} of {_BACKWARD_SUFFIX.sub('', name)}," \
            if name is not None else ""
        from .anomaly_mode import is_anomaly_enabled
        hint = ("Hint: the backtrace further above shows the operation that failed to compute its "
                "gradient. The variable in question was changed in there or anywhere later. "
                "Good luck!") if is_anomaly_enabled() else (
                "Hint: enable anomaly detection to find the operation that failed to compute its "
                "gradient, with torch.autograd.set_detect_anomaly(True, check_nan=False).")
        sizes = ", ".join(map(str, data._shape))
        return (f"one of the variables needed for gradient computation has been modified by an "
                f"inplace operation: [{data.type()} [{sizes}]]{where} is at version "
                f"{self.counter[0]}; expected version {self.version} instead. {hint}")

    def release(self) -> None:
        self.data = None
        self.packed = None
        self.released = True


def _history_of(t, is_output):
    """(grad_fn, weakref to the leaf's AccumulateGrad) to restore on unpack when
    only a hook's packed value is kept; an output gets its node back instead."""
    if is_output:
        return None, None
    grad_fn = t.grad_fn
    if grad_fn is not None or not t.requires_grad:
        return grad_fn, None
    from .variable import grad_accumulator
    return None, weakref.ref(grad_accumulator(t))


def _with_history(t, grad_fn, output_nr, accumulator):
    """An alias of ``t`` at (grad_fn, output_nr), or a leaf requiring grad whose
    gradient goes to ``accumulator`` (a weakref); neither: no history."""
    out = _detached_alias(t)
    meta = out._meta_for_write()
    source = t._autograd_meta
    if source is not None and "fw_grad" in source.__dict__:
        meta.fw_grad = source.fw_grad       # its tangents too (forward-over-reverse)
    if grad_fn is not None:
        meta.grad_fn = grad_fn
        meta.output_nr = output_nr
        meta.requires_grad = True
    elif accumulator is not None:
        meta.grad_accumulator = accumulator
        meta.requires_grad = True
    if out._base is not None:   # its grad_fn is current: no view regeneration
        meta.attr_version = version_counter(out)[0]
    return out


_TRANSFORM_TENSOR = dk.key_bits(dk.DispatchKey.FuncTorchBatched) | \
    dk.key_bits(dk.DispatchKey.FuncTorchGradWrapper)


def _detached_alias(t):
    """Same storage, geometry and version counter; no autograd history.  While
    Python dispatch is involved (a dispatch mode, or a subclass whose data lives in
    Python attributes) this is the ``detach`` op, as in PyTorch, so the mode sees it
    and the subclass makes the alias itself.  A function transform's tensor
    (BatchedTensor, TensorWrapper) is copied with what it wraps, as its C++
    ``shallow_copy_and_detach`` does: the copy stays a tensor of its level."""
    if _tls.dispatch_modes or t._keys & dk.PYTHON:
        from .._dispatcher.dispatcher import ops
        return ops.aten.detach.default(t)
    out = type(t)._make(t._storage, t._shape, t._stride, t._offset, t.dtype, t.device, t._keys)
    out._array = t._array
    out._base = t._base
    out._version_counter = t._version_counter
    if t._keys & _TRANSFORM_TENSOR:
        out.__dict__.update(t.__dict__)
    return out


class saved_tensors_hooks:
    """``with saved_tensors_hooks(pack, unpack):`` every tensor saved for backward
    inside goes through ``pack`` at save time and ``unpack`` at backward time
    (a thread-local stack; the innermost pair applies)."""

    def __init__(self, pack_hook, unpack_hook):
        self.pack_hook = pack_hook
        self.unpack_hook = unpack_hook

    def __enter__(self):
        if _saved_hooks.disabled_message is not None:
            raise RuntimeError(_saved_hooks.disabled_message)
        _saved_hooks.stack = _saved_hooks.stack + ((self.pack_hook, self.unpack_hook),)
        return self

    def __exit__(self, *exc):
        _saved_hooks.stack = _saved_hooks.stack[:-1]


class save_on_cpu(saved_tensors_hooks):
    """Saved tensors are copied to (optionally pinned) CPU memory in forward and
    moved back to their device in backward."""

    def __init__(self, pin_memory=False, device_type="cuda"):
        def pack(t):
            if t.device.type == "cpu":
                return (t.device, t.detach().clone())
            return (t.device, t.detach().to("cpu"))

        def unpack(packed):
            device, t = packed
            return t.to(device, non_blocking=pin_memory)

        super().__init__(pack, unpack)


class disable_saved_tensors_hooks:
    """Inside, installing saved-tensor hooks raises ``error_message``."""

    def __init__(self, error_message):
        self.error_message = error_message

    def __enter__(self):
        self.prev = _saved_hooks.disabled_message
        _saved_hooks.disabled_message = self.error_message

    def __exit__(self, *exc):
        _saved_hooks.disabled_message = self.prev


class GradientEdge(tuple):
    """``torch.autograd.graph.GradientEdge(node, output_nr)``."""

    __slots__ = ()

    def __new__(cls, node, output_nr):
        return tuple.__new__(cls, (node, output_nr))

    @property
    def node(self):
        return self[0]

    @property
    def output_nr(self):
        return self[1]


def get_gradient_edge(tensor) -> GradientEdge:
    """The edge a gradient for ``tensor`` flows into."""
    from .variable import gradient_edge
    if not tensor.requires_grad:
        raise RuntimeError("It is not possible to get the gradient edge for a Tensor that does "
                           "not require gradients")
    return GradientEdge(*gradient_edge(tensor))


def is_differentiable_dtype(dtype) -> bool:
    return dtype.category >= dt.FLOATING


class _MultiHandle:
    """Removes every hook ``register_multi_grad_hook`` placed."""

    def __init__(self, handles):
        self.handles = handles

    def remove(self) -> None:
        for handle in self.handles:
            handle.remove()


def register_multi_grad_hook(tensors, fn, *, mode="all"):
    """``fn`` once per backward pass over ``tensors``: with ``mode="all"`` after
    every one of them that the pass reaches got its gradient, called with the
    list of gradients (None for those not reached); with ``mode="any"`` on the
    first gradient, called with it.  Built on tensor hooks and the pass's id."""
    if mode not in ("all", "any"):
        raise ValueError(f"Expects mode to be one of ('all', 'any') but got {mode}")
    from .engine import current_graph_task_id, will_engine_execute_node
    if mode == "any":
        fired = set()

        def any_hook(grad):
            task = current_graph_task_id()
            if task not in fired:
                fired.add(task)
                fn(grad)
        return _MultiHandle(tuple(t.register_hook(any_hook) for t in tensors if t.requires_grad))

    from .variable import grad_accumulator
    nodes = [t.grad_fn if t.grad_fn is not None else grad_accumulator(t) for t in tensors]
    counts, buffers, expected = {}, {}, {}

    def hook_for(index):
        def all_hook(grad):
            task = current_graph_task_id()
            if task not in counts:       # the first gradient of this pass: how many will come
                counts[task] = 0
                buffers[task] = [None] * len(tensors)
                expected[task] = sum(will_engine_execute_node(n) for n in nodes)
            buffers[task][index] = grad
            counts[task] += 1
            if counts[task] == expected[task]:
                grads = buffers.pop(task)
                del counts[task], expected[task]
                fn(grads)
        return all_hook
    return _MultiHandle(tuple(t.register_hook(hook_for(i)) for i, t in enumerate(tensors)))

"""Activation checkpointing (torch/utils/checkpoint.py): trade compute for memory.

``checkpoint(fn, *args, use_reentrant=False)`` runs ``fn`` normally but keeps
none of the tensors its backward nodes save; backward recomputes them.

Non-reentrant (``use_reentrant=False``), built on saved-tensor hooks:

    forward   the inputs are saved (as SavedVariables, so an outer checkpoint or
              hook sees them); inside ``fn`` every tensor an op saves for
              backward is packed as an empty ``_Holder`` (shape/dtype/device
              noted for the determinism check)
    backward  the first unpack of a holder runs ``fn`` again on the saved
              inputs, under enable_grad and the forward's RNG state, with a
              hook that hands the i-th tensor saved during recomputation to the
              i-th holder (stopping as soon as all holders are served); every
              unpack then takes its tensor and drops it.  Recomputation
              happens once per backward pass (graph task).

The graph is the ordinary one, so ``autograd.grad``, ``backward(inputs=...)``
and partial backwards all work.

Reentrant (``use_reentrant=True``, PyTorch's default when the argument is not
given, with a warning): ``CheckpointFunction`` runs ``fn`` under no_grad in
forward; its backward reruns ``fn`` with grad on detached inputs and calls
``autograd.backward`` on that fresh graph, so it does not support
``autograd.grad`` or ``backward(inputs=...)``.

Recomputation runs under the forward's CPU autocast state (enabled, dtype,
cache), as PyTorch's does, so recomputed activations have the dtypes the
forward saw.

Not here (PyTorch has them): accelerator RNG states, the op logs of
``debug=True``, selective checkpointing policies.
"""
from __future__ import annotations

import contextlib
import uuid
import warnings
import weakref
from collections import defaultdict

from .. import autograd
from .._tensor import Tensor
from ..autograd.engine import current_graph_task_id, is_checkpoint_valid
from ..autograd.function import Function
from ..autograd.graph import SavedVariable, saved_tensors_hooks
from ..autograd.grad_mode import enable_grad, is_grad_enabled, no_grad
from ..random import fork_rng, get_rng_state, set_rng_state

__all__ = ["checkpoint", "checkpoint_sequential", "CheckpointError", "CheckpointFunction",
           "check_backward_validity", "detach_variable", "noop_context_fn",
           "set_checkpoint_early_stop", "set_checkpoint_debug_enabled"]

_DEFAULT_DETERMINISM_MODE = "default"
_checkpoint_debug_enabled = None
_enable_checkpoint_early_stop = None


@contextlib.contextmanager
def set_checkpoint_debug_enabled(enabled):
    """Override every checkpoint's ``debug`` flag inside (None: leave it)."""
    global _checkpoint_debug_enabled
    prev = _checkpoint_debug_enabled
    _checkpoint_debug_enabled = enabled
    try:
        yield
    finally:
        _checkpoint_debug_enabled = prev


@contextlib.contextmanager
def set_checkpoint_early_stop(enable):
    """Whether checkpoints run inside stop recomputing once they have all the
    tensors they need (default True)."""
    global _enable_checkpoint_early_stop
    prev = _enable_checkpoint_early_stop
    _enable_checkpoint_early_stop = enable
    try:
        yield
    finally:
        _enable_checkpoint_early_stop = prev


def noop_context_fn():
    return contextlib.nullcontext(), contextlib.nullcontext()


def _forward_autocast():
    """A context manager factory that re-enters this moment's CPU autocast state."""
    from ..amp import autocast
    from ..amp.autocast_state import (get_autocast_dtype, is_autocast_cache_enabled,
                                      is_autocast_enabled)
    state = dict(enabled=is_autocast_enabled("cpu"), dtype=get_autocast_dtype("cpu"),
                 cache_enabled=is_autocast_cache_enabled())
    return lambda: autocast("cpu", **state)


def detach_variable(inputs):
    """Detached copies of the tensors in ``inputs`` keeping their requires_grad."""
    if not isinstance(inputs, tuple):
        raise RuntimeError(f"Only tuple of tensors is supported. Got Unsupported input type: "
                           f"{type(inputs).__name__}")
    out = []
    for inp in inputs:
        if isinstance(inp, Tensor):
            x = inp.detach()
            x.requires_grad = inp.requires_grad
            inp = x
        out.append(inp)
    return tuple(out)


def check_backward_validity(inputs) -> None:
    if not any(inp.requires_grad for inp in inputs if isinstance(inp, Tensor)):
        warnings.warn("None of the inputs have requires_grad=True. Gradients will be None",
                      stacklevel=2)


# -- reentrant ---------------------------------------------------------------------------

class CheckpointFunction(Function):
    """``use_reentrant=True``: forward without graph, backward = rerun + backward."""

    @staticmethod
    def forward(ctx, run_function, preserve_rng_state, *args):
        check_backward_validity(args)
        ctx.run_function = run_function
        ctx.preserve_rng_state = preserve_rng_state
        ctx.autocast = _forward_autocast()
        if preserve_rng_state:
            ctx.fwd_cpu_state = get_rng_state()
        ctx.inputs = [None if isinstance(a, Tensor) else a for a in args]
        ctx.tensor_indices = [i for i, a in enumerate(args) if isinstance(a, Tensor)]
        ctx.save_for_backward(*[a for a in args if isinstance(a, Tensor)])
        with no_grad():
            return run_function(*args)

    @staticmethod
    def backward(ctx, *grads):
        if not is_checkpoint_valid():
            raise RuntimeError(
                "When use_reentrant=True, torch.utils.checkpoint is incompatible with .grad() or "
                "passing an `inputs` parameter to .backward(). To resolve this error, you can "
                "either set use_reentrant=False, or call .backward() without passing the "
                "`inputs` argument.")
        inputs = list(ctx.inputs)
        for index, tensor in zip(ctx.tensor_indices, ctx.saved_tensors):
            inputs[index] = tensor
        with fork_rng(enabled=ctx.preserve_rng_state):
            if ctx.preserve_rng_state:
                set_rng_state(ctx.fwd_cpu_state)
            detached = detach_variable(tuple(inputs))
            with enable_grad(), ctx.autocast():
                outputs = ctx.run_function(*detached)
        if isinstance(outputs, Tensor):
            outputs = (outputs,)
        outputs_with_grad, grads_with_output = [], []
        for out, grad in zip(outputs, grads):
            if isinstance(out, Tensor) and out.requires_grad:
                outputs_with_grad.append(out)
                grads_with_output.append(grad)
        if not outputs_with_grad:
            raise RuntimeError("none of output has requires_grad=True, this checkpoint() is not "
                               "necessary")
        autograd.backward(outputs_with_grad, grads_with_output)
        return (None, None) + tuple(inp.grad if isinstance(inp, Tensor) else None
                                    for inp in detached)


# -- non-reentrant -----------------------------------------------------------------------

class CheckpointError(RuntimeError):
    pass


_debug_tip_msg = """
Tip: To see a more detailed error message, either pass `debug=True` to
`torch.utils.checkpoint.checkpoint(...)` or wrap the code block
with `with torch.utils.checkpoint.set_checkpoint_debug_enabled(True):` to
enable checkpoint\u2011debug mode globally.

If this error occurs under torch.compile with automatic_dynamic_shapes enabled,
it may be because the recomputation selected a different compiled graph than the
forward pass (e.g., a dynamic graph instead of the original static graph).
To fix this, either:
  - Use torch._dynamo.mark_dynamic() to explicitly mark varying dimensions as
    dynamic upfront, avoiding the static-to-dynamic transition.
  - Call torch._C._dynamo.eval_frame._set_lru_cache(False) to disable LRU cache
    reordering, which can change which graph is checked first between forward
    and recompute.
See https://github.com/pytorch/pytorch/issues/166926 for more details and
workaround examples.
"""


def _default_meta_extractor(x):
    return {"shape": x.shape, "dtype": x.dtype, "device": x.device}


_allowed_determinism_checks_to_fns = {
    _DEFAULT_DETERMINISM_MODE: _default_meta_extractor,
    "none": lambda _: None,
}


class _Handle:
    """Key of one recomputed tensor in a frame's per-backward weak dict."""


class _Holder:
    """What the forward's pack hook saves instead of a tensor:
    ``handles[gid]`` is the handle of its recomputed tensor in backward pass
    ``gid`` (None once unpacked)."""

    def __init__(self):
        self.handles = {}


class _StopRecomputationError(Exception):
    """Raised by the recomputation hook once every holder is served."""


class _CheckpointFrame:
    """State of one checkpointed call, shared by its pack/unpack hooks."""

    def __init__(self, recompute_fn, early_stop, metadata_fn):
        self.recompute_fn = recompute_fn
        self.early_stop = early_stop
        self.metadata_fn = metadata_fn
        self.saved_args = []
        self.weak_holders = []      # one per tensor saved in forward, in order
        self.x_metadatas = []
        self.recomputed = defaultdict(weakref.WeakKeyDictionary)   # gid -> {handle: tensor}
        self.recomp_counter = defaultdict(int)
        self.is_recomputed = defaultdict(bool)
        self.forward_completed = False
        self.ignore_saved_mismatch = False

    def save_inputs(self, *args):
        self.saved_args = [SavedVariable(a) if isinstance(a, Tensor) else a for a in args]

    def get_inputs(self):
        return [a.unpack() if isinstance(a, SavedVariable) else a for a in self.saved_args]

    def check_recomputed_tensors_match(self, gid) -> None:
        if self.ignore_saved_mismatch:
            return
        if len(self.weak_holders) != self.recomp_counter[gid]:
            raise CheckpointError(
                "torch.utils.checkpoint: A different number of tensors was saved during the "
                "original forward and recomputation.\n"
                f"Number of tensors saved during forward: {len(self.weak_holders)}\n"
                f"Number of tensors saved during recomputation: {self.recomp_counter[gid]}.\n"
                f"{_debug_tip_msg}")
        mismatched = ""
        for idx, weak_holder in enumerate(self.weak_holders):
            holder = weak_holder()
            if holder is None:
                continue
            saved_meta = self.x_metadatas[idx]
            recomputed_meta = self.metadata_fn(self.recomputed[gid][holder.handles[gid]])
            if saved_meta != recomputed_meta:
                mismatched += (f"tensor at position {idx}:\nsaved metadata: {saved_meta}\n"
                               f"recomputed metadata: {recomputed_meta}\n")
        if mismatched:
            raise CheckpointError(
                "torch.utils.checkpoint: Recomputed values for the following tensors have "
                f"different metadata than during the forward pass.\n{mismatched}.\n"
                f"{_debug_tip_msg}")


class _recomputation_hook(saved_tensors_hooks):
    """Active while recomputing: the i-th saved tensor goes to the i-th holder."""

    def __init__(self, frame_ref, gid):
        def pack_hook(x):
            x = x.detach() if x.requires_grad else x
            frame = frame_ref()
            index = frame.recomp_counter[gid]
            frame.recomp_counter[gid] += 1
            if index >= len(frame.weak_holders):
                if not frame.forward_completed:
                    # backward inside the checkpointed function with early stop off
                    frame.ignore_saved_mismatch = True
                    return x
                raise CheckpointError("torch.utils.checkpoint: trying to save more tensors "
                                      "during recomputation than during the original forward "
                                      f"pass.\n{_debug_tip_msg}")
            holder = frame.weak_holders[index]()
            if holder is not None:      # None: freed by a backward inside forward
                handle = holder.handles[gid] = _Handle()
                frame.recomputed[gid][handle] = x
            if frame.early_stop and frame.recomp_counter[gid] == len(frame.weak_holders):
                raise _StopRecomputationError
            return x

        super().__init__(pack_hook, lambda x: x)


class _checkpoint_hook(saved_tensors_hooks):
    """Active during the checkpointed forward: saves holders, recomputes on unpack."""

    def __init__(self, frame):
        def pack_hook(x):
            holder = _Holder()
            frame.weak_holders.append(weakref.ref(holder))
            if frame.metadata_fn is not None:
                with no_grad():
                    frame.x_metadatas.append(frame.metadata_fn(x))
            return holder

        def unpack_hook(holder):
            gid = current_graph_task_id()
            if gid == -1:       # unpacked outside backward: a one-off recomputation
                gid = int(uuid.uuid4())
            if not frame.is_recomputed[gid]:
                args = frame.get_inputs()
                try:
                    with _recomputation_hook(weakref.ref(frame), gid), enable_grad():
                        frame.recompute_fn(*args)
                except _StopRecomputationError:
                    pass
                frame.is_recomputed[gid] = True
                frame.check_recomputed_tensors_match(gid)
            handle = holder.handles.get(gid)
            if handle is None:
                raise CheckpointError(
                    "torch.utils.checkpoint: Unpack is being triggered for a tensor that was "
                    "already unpacked once. If you are calling ctx.saved_tensors in backward, "
                    "make sure to do so only once. Otherwise please open an issue with details "
                    "on your use case.")
            holder.handles[gid] = None
            return frame.recomputed[gid][handle]

        super().__init__(pack_hook, unpack_hook)


def _checkpoint_without_reentrant(fn, preserve_rng_state, context_fn, determinism_check, debug,
                                  early_stop, args, kwargs):
    if _checkpoint_debug_enabled if _checkpoint_debug_enabled is not None else debug:
        if context_fn is not noop_context_fn:
            raise ValueError("debug=True is incompatible with non-default context_fn")
    if determinism_check not in _allowed_determinism_checks_to_fns:
        raise ValueError(f"determinism_check should be one of "
                         f"{list(_allowed_determinism_checks_to_fns.keys())}, but got "
                         f"{determinism_check}")
    metadata_fn = _allowed_determinism_checks_to_fns[determinism_check]
    forward_context, recompute_context = context_fn()
    fwd_cpu_state = get_rng_state() if preserve_rng_state else None
    forward_autocast = _forward_autocast()

    def recompute_fn(*inputs):
        with fork_rng(enabled=preserve_rng_state):
            if preserve_rng_state:
                set_rng_state(fwd_cpu_state)
            with recompute_context, forward_autocast():
                fn(*inputs, **kwargs)

    if not is_grad_enabled():
        return fn(*args, **kwargs)
    stop = _enable_checkpoint_early_stop if _enable_checkpoint_early_stop is not None \
        else early_stop
    frame = _CheckpointFrame(recompute_fn, stop, metadata_fn)
    frame.save_inputs(*args)
    with _checkpoint_hook(frame), forward_context:
        result = fn(*args, **kwargs)
    frame.forward_completed = True
    return result


def checkpoint(function, *args, use_reentrant=None, context_fn=noop_context_fn,
               determinism_check=_DEFAULT_DETERMINISM_MODE, debug=False, early_stop=True,
               **kwargs):
    """Run ``function(*args, **kwargs)`` without keeping its intermediate
    activations; backward recomputes them.  Pass ``use_reentrant`` explicitly
    (False is recommended)."""
    if use_reentrant is None:
        warnings.warn(
            "torch.utils.checkpoint: the use_reentrant parameter should be passed explicitly. "
            "Starting in PyTorch 2.9, calling checkpoint without use_reentrant will raise an "
            "exception. use_reentrant=False is recommended, but if you need to preserve the "
            "current default behavior, you can pass use_reentrant=True. Refer to docs for more "
            "details on the differences between the two variants.", stacklevel=2)
        use_reentrant = True
    preserve = kwargs.pop("preserve_rng_state", True)
    if kwargs and use_reentrant:
        raise ValueError("Unexpected keyword arguments: " + ",".join(arg for arg in kwargs))
    if use_reentrant:
        if context_fn is not noop_context_fn or debug is not False:
            raise ValueError("Passing `context_fn` or `debug` is only supported when "
                             "use_reentrant=False.")
        return CheckpointFunction.apply(function, preserve, *args)
    return _checkpoint_without_reentrant(function, preserve, context_fn, determinism_check, debug,
                                         early_stop, args, kwargs)


def checkpoint_sequential(functions, segments, input, use_reentrant=None, **kwargs):
    """Split ``functions`` (a list, or a module with ``children()``) into
    ``segments`` chunks and checkpoint all but the last."""
    if use_reentrant is None:
        warnings.warn(
            "torch.utils.checkpoint.checkpoint_sequential: the use_reentrant parameter should be "
            "passed explicitly. In version 2.9 we will raise an exception if use_reentrant is not "
            "passed. use_reentrant=False is recommended, but if you need to preserve the current "
            "default behavior, you can pass use_reentrant=True. Refer to docs for more details "
            "on the differences between the two variants.", stacklevel=2)
        use_reentrant = True
    preserve = kwargs.pop("preserve_rng_state", True)
    if kwargs:
        raise ValueError("Unexpected keyword arguments: " + ",".join(arg for arg in kwargs))

    def run_function(start, end, functions):
        def forward(input):
            for j in range(start, end + 1):
                input = functions[j](input)
            return input
        return forward

    if hasattr(functions, "children"):
        functions = list(functions.children())
    segment_size = len(functions) // segments
    end = -1
    for start in range(0, segment_size * (segments - 1), segment_size):
        end = start + segment_size - 1
        input = checkpoint(run_function(start, end, functions), input,
                           use_reentrant=use_reentrant, preserve_rng_state=preserve)
    return run_function(end + 1, len(functions) - 1, functions)(input)

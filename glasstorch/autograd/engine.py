"""The backward engine (torch/csrc/autograd/engine.cpp, single-threaded).

``execute`` runs one GraphTask:

1. count dependencies: for every node reachable from the root, how many edges
   point at it;
2. with ``inputs`` (``autograd.grad`` or ``backward(inputs=...)``), mark the
   nodes that lie on a path to a requested input (``exec_info``) and where each
   requested gradient is captured;
3. run a ready queue ordered as PyTorch orders it: the node created latest in
   forward first (highest sequence number; AccumulateGrad's is UINT64_MAX, so a
   ready leaf is served at once).  Each node's incoming gradients accumulate in
   its input buffer until its dependency count reaches zero.

Around each node: tensor pre-hooks, retains_grad hooks, node pre-hooks, the
node, ``validate_outputs`` (sum_to broadcast shapes, cast dtypes, PyTorch's
errors otherwise), post-hooks (what hooks return is checked as PyTorch checks
it); then saved tensors are freed unless ``keep_graph``.  Grad mode during the
pass equals ``create_graph``.  An error while evaluating a node is reported
with the node's forward stack in anomaly mode.  While a profiler records, each
node's step and its ``apply`` are reported to it (``node_observers``).
"""
from __future__ import annotations

import heapq
import itertools
import sys

from .._core import dispatch_key as dk
from .._core.tls import state as _tls
from .._tensor import Tensor
from . import anomaly_mode
from .graph import GraphRoot

__all__ = ["execute", "queue_callback", "current_graph_task_id", "will_engine_execute_node",
           "is_checkpoint_valid"]

_task_ids = itertools.count()


class _GraphTask:
    """State of one backward pass (what PyTorch's GraphTask holds)."""

    __slots__ = ("keep_graph", "exec_info", "needed", "captures", "captured", "final_callbacks",
                 "id", "root", "reachable")

    def __init__(self, keep_graph):
        self.id = next(_task_ids)
        self.root = None
        self.reachable = None      # the graph's nodes, found on first ask (will_execute_node)
        self.keep_graph = keep_graph
        self.exec_info = None      # nodes the pass visits, when inputs were given
        self.needed = None         # ... of which these execute (others only capture)
        self.captures = None       # {(node, input_nr): [result index, ...]}
        self.captured = None
        self.final_callbacks = []


_current_tasks: list = []


def queue_callback(callback) -> None:
    """``Variable._execution_engine.queue_callback``: run after this backward."""
    if not _current_tasks:
        raise RuntimeError("Final callbacks can only be installed during backward pass.")
    _current_tasks[-1].final_callbacks.append(callback)


def current_graph_task_id() -> int:
    """``torch._C._current_graph_task_id``: the running backward pass, or -1."""
    return _current_tasks[-1].id if _current_tasks else -1


def will_engine_execute_node(node) -> bool:
    """``torch._C._will_engine_execute_node``: does the running backward pass
    execute ``node`` (reachable from its root; on a path to a wanted input when
    ``inputs=``/``autograd.grad`` narrowed it)?"""
    if not _current_tasks:
        raise RuntimeError("_will_engine_execute_node should only be called during the backward "
                           "pass")
    task = _current_tasks[-1]
    if task.exec_info is not None:
        return node in task.needed
    if task.reachable is None:
        task.reachable = set(_compute_dependencies(task.root)) | {task.root}
    return node in task.reachable


def is_checkpoint_valid() -> bool:
    """``torch.autograd._is_checkpoint_valid``: False inside a backward pass
    (or one nested in it) that runs only the paths to given inputs, where a
    reentrant checkpoint's own backward would not reach the leaves."""
    return all(task.exec_info is None for task in _current_tasks)


def execute(roots, seeds, keep_graph, create_graph, inputs=None, accumulate_grad=True):
    """Run backward from ``roots`` (edges) seeded with ``seeds``.

    ``inputs`` are edges whose gradients are wanted: with ``accumulate_grad``
    False they are returned (``autograd.grad``), otherwise only the paths to
    them run and leaves accumulate as usual.
    """
    task = _GraphTask(keep_graph)
    if len(roots) == 1:
        root, input_nr = roots[0]
        buffer = [None] * len(root._input_metadata)
        buffer[input_nr] = seeds[0]
    else:
        root = GraphRoot(roots, seeds)
        buffer = []
    task.root = root
    dependencies = _compute_dependencies(root)
    if inputs is not None:
        _init_exec_info(task, root, inputs, accumulate_grad)

    prev_grad_mode = _tls.grad_enabled
    _tls.grad_enabled = bool(create_graph)
    _current_tasks.append(task)
    try:
        _run(task, root, buffer, dependencies)
        for callback in task.final_callbacks:
            callback()
    finally:
        _current_tasks.pop()
        _tls.grad_enabled = prev_grad_mode
    return task.captured


def _compute_dependencies(root) -> dict:
    dependencies = {}
    seen = {root}
    stack = [root]
    while stack:
        node = stack.pop()
        for edge in node._next_edges:
            if edge is None:
                continue
            nxt = edge[0]
            dependencies[nxt] = dependencies.get(nxt, 0) + 1
            if nxt not in seen:
                seen.add(nxt)
                stack.append(nxt)
    return dependencies


def _init_exec_info(task, root, inputs, accumulate_grad) -> None:
    """Mark the nodes on a path to a requested input edge (post-order walk)."""
    targets = {}
    for index, edge in enumerate(inputs):
        targets.setdefault(edge, []).append(index)
    if accumulate_grad:
        # backward(inputs=...): the input nodes run (a leaf's AccumulateGrad; a
        # non-leaf's grad_fn, whose retain_grad hook fills its .grad)
        wanted = {edge[0] for edge in targets}
        task.captures = {}
    else:
        wanted = set()
        task.captures = targets
    capture_nodes = {edge[0] for edge in task.captures}
    needed = set(wanted)
    visited = set()
    stack = [(root, False)]
    while stack:
        node, children_done = stack.pop()
        if children_done:
            if any(e is not None and (e[0] in needed or e[0] in capture_nodes)
                   for e in node._next_edges):
                needed.add(node)
            continue
        if node in visited:
            continue
        visited.add(node)
        stack.append((node, True))
        for edge in node._next_edges:
            if edge is not None and edge[0] not in visited:
                stack.append((edge[0], False))
    task.needed = needed
    task.exec_info = needed | capture_nodes
    task.captured = [None] * len(inputs)


def _run(task, root, root_buffer, dependencies) -> None:
    buffers = {root: root_buffer}
    heap = [(-root._seq, 0, root)]
    while heap:
        node = heapq.heappop(heap)[2]
        running_nodes.append(node)
        try:
            if node_observers:
                _observed(node, "evaluate_function", _evaluate_function, task, node,
                          buffers.pop(node), buffers, dependencies, heap)
            else:
                _evaluate_function(task, node, buffers.pop(node), buffers, dependencies, heap)
        except Exception:
            anomaly_mode.report_error(node)
            raise
        finally:
            running_nodes.pop()
    if buffers and task.exec_info is None:
        raise RuntimeError("could not compute gradients for some functions")


# The nodes being evaluated, innermost last: a node created meanwhile
# (create_graph) records the running one as its anomaly-mode parent.
running_nodes: list = []

# Observers of the backward pass (the profiler, while it records): each gets
# ``node_enter(node, what, args)`` and ``node_exit(node, what)`` around a
# node's whole step (what == "evaluate_function") and around its ``apply``
# (what == "apply"), where PyTorch's engine opens its RecordFunction ranges
# "autograd::engine::evaluate_function: MmBackward0" and "MmBackward0".
node_observers: list = []


def _observed(node, what, fn, *args):
    observers = list(node_observers)
    for observer in observers:
        observer.node_enter(node, what, args)
    try:
        return fn(*args)
    finally:
        for observer in reversed(observers):
            observer.node_exit(node, what)


def _evaluate_function(task, node, grads, buffers, dependencies, heap) -> None:
    """Hooks, captures, the node itself; then its gradients go to the input
    buffers of the next nodes, and those whose dependencies are all met are
    queued."""
    exec_info = task.exec_info
    if exec_info is not None:
        # a node that runs gets its tensor hooks run in _call_function, after
        # the capture; one that doesn't run gets them before (as PyTorch does)
        needed = node in task.needed
        if not needed:
            _run_tensor_pre_hooks(node, grads)
        if task.captures:
            _capture(task, node, grads)
        if not needed:
            return
    outputs = list(_call_function(node, grads, task.keep_graph))
    grads = None
    if anomaly_mode.state.enabled and anomaly_mode.state.check_nan:
        anomaly_mode.check_nan(node, outputs)
    edges = node._next_edges
    for i in range(len(edges)):
        edge = edges[i]
        if edge is None:
            continue
        nxt, input_nr = edge
        if exec_info is not None and nxt not in exec_info:
            continue
        remaining = dependencies[nxt] - 1
        dependencies[nxt] = remaining
        buffer = buffers.get(nxt)
        if buffer is None:
            buffer = buffers[nxt] = [None] * len(nxt._input_metadata)
        grad = outputs[i]
        outputs[i] = None   # moved into the buffer (the engine moves it: see _accumulate)
        if grad is not None:
            if buffer[input_nr] is None:
                buffer[input_nr] = grad
            else:
                _accumulate(buffer, input_nr, grad)
        if remaining == 0:
            heapq.heappush(heap, (-nxt._seq, next(_tie), nxt))


def _accumulate(buffer, pos, grad) -> None:
    """InputBuffer::accumulate: a second gradient for the same input is added
    in place (``add_``) into the buffered one when grad mode is off, neither
    is subclass-like (a ``__torch_dispatch__`` tensor, or any tensor while a
    dispatch mode is on) and the buffer holds the last reference to a dense
    tensor and to its storage (nothing else can see the change); otherwise
    out of place (``add``)."""
    old = buffer[pos]
    # references: buffer[pos], old, getrefcount's argument / old._storage, the argument
    if not _tls.grad_enabled and not _tls.dispatch_modes and \
            not (old._keys | grad._keys) & dk.PYTHON and \
            sys.getrefcount(old) == 3 and sys.getrefcount(old._storage) == 2 and \
            old.is_non_overlapping_and_dense():
        old.add_(grad)
    else:
        buffer[pos] = old + grad


_tie = itertools.count()    # equal sequence numbers (GraphRoot's children) pop in push order


def _capture(task, node, grads) -> None:
    for (cap_node, input_nr), indices in task.captures.items():
        if cap_node is node:
            for index in indices:
                task.captured[index] = grads[input_nr]


def _run_tensor_pre_hooks(node, grads) -> None:
    """Tensor hooks (a non-leaf's on its grad_fn, a leaf's on its
    AccumulateGrad), then retain_grad hooks, which so see the hooked values."""
    hooks = node._tensor_pre_hooks
    if hooks:
        for input_nr, fn in list(hooks.values()):
            grad = grads[input_nr]
            if grad is not None:
                grads[input_nr] = _checked_tensor_hook_result(fn, grad, fn(grad))
    leaf_hooks = getattr(node, "variable", None)
    if leaf_hooks is not None:
        meta = leaf_hooks._autograd_meta
        if meta is not None and meta.hooks and grads[0] is not None:
            for fn in list(meta.hooks.values()):
                grads[0] = _checked_tensor_hook_result(fn, grads[0], fn(grads[0]))
    retains = node._retains_grad_hooks
    if retains:
        for input_nr, fn in list(retains.items()):
            if grads[input_nr] is not None:
                fn(grads[input_nr])


def _call_function(node, grads, keep_graph):
    _run_tensor_pre_hooks(node, grads)
    pre_hooks = node._pre_hooks
    if pre_hooks:
        for fn in list(pre_hooks.values()):
            grads = _checked_node_hook_result(fn, grads, fn(tuple(grads)))
    inputs_for_post = tuple(grads) if node._post_hooks else None
    grads_out = _observed(node, "apply", node.apply, grads) if node_observers else node.apply(grads)
    outputs = validate_outputs(node, grads_out)
    post_hooks = node._post_hooks
    if post_hooks:
        for fn in list(post_hooks.values()):
            outputs = _checked_node_hook_result(fn, outputs, fn(tuple(outputs), inputs_for_post))
    if not keep_graph:
        node.release_variables()
    return outputs


# -- what hooks may return (torch/csrc/autograd/python_hook.cpp) -------------------------

def _hook_name(fn) -> str:
    name = getattr(fn, "__name__", None)
    return name if isinstance(name, str) else "<unknown>"


def _checked_tensor_hook_result(fn, original, result):
    """The gradient after a hook: ``result`` unless None; it must keep the
    type and size of what it replaces."""
    if result is None:
        return original
    if original is None:
        raise RuntimeError("can't replace a None gradient with a non-None value")
    if not isinstance(result, Tensor):
        raise TypeError(f"expected Variable, but hook returned '{type(result).__name__}'")
    if result.dtype is not original.dtype or result.device.type != original.device.type:
        raise RuntimeError(f"hook '{_hook_name(fn)}' has changed the type of value (was "
                           f"{original.type()} got {result.type()})")
    if result._shape != original._shape:
        raise RuntimeError(f"hook '{_hook_name(fn)}' has changed the size of value")
    return result


def _checked_node_hook_result(fn, originals, result) -> list:
    """The gradients after a node pre-/post-hook: a tuple of as many values
    (a None in it makes that gradient undefined)."""
    if result is None:
        return originals
    if not isinstance(result, tuple):
        raise TypeError(f"expected tuple, but hook returned '{type(result).__name__}'")
    if len(result) != len(originals):
        raise RuntimeError(f"hook '{_hook_name(fn)}' has returned an incorrect number of values "
                           f"(got {len(result)}, but expected {len(originals)})")
    return [None if value is None else _checked_tensor_hook_result(fn, original, value)
            for original, value in zip(originals, result)]


def validate_outputs(node, outputs):
    """Check each gradient against the metadata of the input it flows into:
    sum a broadcast gradient down to the input's shape, cast its dtype."""
    edges = node._next_edges
    if len(outputs) != len(edges):
        raise RuntimeError(f"Function {node.name()} returned an invalid number of gradients - "
                           f"expected {len(edges)}, but got {len(outputs)}")
    outputs = list(outputs)
    for i, grad in enumerate(outputs):
        edge = edges[i]
        if edge is None or grad is None:
            continue
        shape, dtype, device = edge[0]._input_metadata[edge[1]]
        # (lengths first: a tuple compares its items before its length, and symbolic
        # sizes compared across dims would leave guards for nothing)
        if len(grad._shape) != len(shape) or grad._shape != shape:
            if not _expandable_to(shape, grad._shape):
                raise RuntimeError(
                    f"Function {node.name()} returned an invalid gradient at index {i} - got "
                    f"{list(grad._shape)} but expected shape compatible with {list(shape)}")
            from .formulas import sum_to
            grad = sum_to(grad, shape)
        if grad.dtype is not dtype:
            grad = grad.to(dtype)
        if grad.device is not device and grad.device != device:
            if grad.dim() == 0:
                grad = grad.to(device)
            else:
                raise RuntimeError(f"Function {node.name()} returned an invalid gradient at index "
                                   f"{i} - expected device {device} but got {grad.device}")
        outputs[i] = grad
    return outputs


def _expandable_to(shape, desired) -> bool:
    if len(shape) > len(desired):
        return False
    for s, d in zip(reversed(shape), reversed(desired)):
        if s != d and s != 1:
            return False
    return True

"""``torch.fx.traceback``: carry a node's metadata into a retrace.

When a graph is run again under make_fx (``run_decompositions``, AOTAutograd
over a captured graph), the nodes the new trace writes should still say which
source line they came from.  Inside ``preserve_node_meta()``, the Interpreter
publishes the node it is running (``set_current_meta``) and make_fx's proxy
mode copies that node's ``stack_trace`` onto each node it records.
"""
from __future__ import annotations

import contextlib
import threading

__all__ = ["preserve_node_meta", "set_current_meta", "get_current_meta", "has_preserved_node_meta"]


class _State(threading.local):
    preserving = False
    meta: dict = {}


_state = _State()


@contextlib.contextmanager
def preserve_node_meta():
    saved = _state.preserving, _state.meta
    _state.preserving, _state.meta = True, {}
    try:
        yield
    finally:
        _state.preserving, _state.meta = saved


def has_preserved_node_meta() -> bool:
    return _state.preserving


@contextlib.contextmanager
def set_current_meta(node):
    """While ``node`` runs, its metadata is the current one (when preserving)."""
    if not _state.preserving or node is None:
        yield
        return
    saved = _state.meta
    _state.meta = node.meta
    try:
        yield
    finally:
        _state.meta = saved


def get_current_meta() -> dict:
    return _state.meta

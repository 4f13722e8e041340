"""Anomaly detection (torch/autograd/anomaly_mode.py, csrc/autograd/anomaly_mode.cpp).

When enabled, every backward node records in its ``metadata`` the Python
stack of the forward call that created it (and, if a backward pass created
it, the node that was running); if that node fails in backward, the engine
warns with those stacks ("Error detected in MulBackward0. Traceback of forward
call that caused the error: ...") and re-raises.  With ``check_nan`` a node returning
NaN gradients raises, naming the node and the output index.
"""
from __future__ import annotations

import sys
import threading
import traceback
import warnings

__all__ = ["detect_anomaly", "set_detect_anomaly", "set_anomaly_enabled", "is_anomaly_enabled",
           "is_anomaly_check_nan_enabled"]


class _AnomalyState(threading.local):
    enabled = False
    check_nan = True


state = _AnomalyState()


def is_anomaly_enabled() -> bool:
    return state.enabled


def is_anomaly_check_nan_enabled() -> bool:
    return state.check_nan


def set_anomaly_enabled(mode: bool, check_nan: bool = True) -> None:
    """``torch.set_anomaly_enabled``: the switch itself (no warning)."""
    state.enabled = bool(mode)
    state.check_nan = bool(check_nan)


class detect_anomaly:
    """Context manager enabling anomaly detection; warns when constructed (as
    PyTorch does).  Not a decorator."""

    def __init__(self, check_nan=True) -> None:
        self.prev = (state.enabled, state.check_nan)
        self.check_nan = check_nan
        warnings.warn("Anomaly Detection has been enabled. This mode will increase the runtime "
                      "and should only be enabled for debugging.", stacklevel=2)

    def __enter__(self) -> None:
        set_anomaly_enabled(True, self.check_nan)

    def __exit__(self, *exc) -> None:
        set_anomaly_enabled(*self.prev)


class set_detect_anomaly:
    """Sets anomaly detection on construction; restores on exit when used with ``with``."""

    def __init__(self, mode: bool, check_nan: bool = True) -> None:
        self.prev = (state.enabled, state.check_nan)
        set_anomaly_enabled(mode, check_nan)

    def __enter__(self) -> None:
        pass

    def __exit__(self, *exc) -> None:
        set_anomaly_enabled(*self.prev)


def _user_stack() -> list:
    """``traceback.format_stack()`` without glasstorch's own frames (PyTorch's
    are C++, so its recorded stacks end at the user's call).  Generated kernels
    run in namespaces without ``__name__`` and are dropped as well."""
    frames = []
    frame = sys._getframe(1)
    while frame is not None:
        module = frame.f_globals.get("__name__")
        if module is not None and module != "glasstorch" and not module.startswith("glasstorch."):
            frames.append((frame, frame.f_lineno))
        frame = frame.f_back
    frames.reverse()
    return traceback.StackSummary.extract(frames).format()


def record_forward(node) -> None:
    """Anomaly mode: store on a node being created the forward stack
    (``metadata["traceback_"]``) and, when it is created by a backward pass
    (create_graph), the node being run then (``metadata["parent_"]``)."""
    from .engine import running_nodes
    metadata = node.metadata
    metadata["traceback_"] = _user_stack()
    if running_nodes:
        metadata["parent_"] = running_nodes[-1]


_TRIGGERED = " (Triggered internally at /__w/pytorch/pytorch/torch/csrc/autograd/" \
    "python_anomaly_mode.cpp:{}.)"


def report_error(node) -> None:
    """Anomaly mode: warn with the forward stack of the node that failed in
    backward, then with those of the nodes whose backward created it."""
    if not state.enabled:
        return
    metadata = node.metadata
    if "traceback_" not in metadata:
        warnings.warn(f"Error detected in {node.name()}. No forward pass information available. "
                      f"Enable detect anomaly during forward pass for more information."
                      + _TRIGGERED.format(100), stacklevel=2)
        return
    warnings.warn(f"Error detected in {node.name()}. Traceback of forward call that caused the "
                  f"error:\n{''.join(metadata['traceback_'])}" + _TRIGGERED.format(122),
                  stacklevel=2)
    parent = metadata.get("parent_")
    while parent is not None:
        metadata = parent.metadata
        warnings.warn(f"\n\nPrevious calculation was induced by {parent.name()}. Traceback of "
                      f"forward call that induced the previous calculation:\n"
                      f"{''.join(metadata.get('traceback_', ()))}" + _TRIGGERED.format(129),
                      stacklevel=2)
        parent = metadata.get("parent_")


def check_nan(node, outputs) -> None:
    for i, grad in enumerate(outputs):
        if grad is not None and grad.dtype.category >= 2 and bool(grad.isnan().any()):
            raise RuntimeError(f"Function '{node.name()}' returned nan values in its {i}th output.")

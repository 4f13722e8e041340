"""Anomaly detection (torch/autograd/anomaly_mode.py, csrc/autograd/anomaly_mode.cpp).

When enabled, every backward node records the Python stack of the forward
call that created it; if that node fails in backward, the engine warns with
that stack ("Error detected in MulBackward0. Traceback of forward call that
caused the error: ...") and re-raises.  With ``check_nan`` a node returning
NaN gradients raises, naming the node and the output index.
"""
from __future__ import annotations

import threading
import traceback
import warnings

__all__ = ["detect_anomaly", "set_detect_anomaly", "is_anomaly_enabled",
           "is_anomaly_check_nan_enabled"]


class _AnomalyState(threading.local):
    enabled = False
    check_nan = True


state = _AnomalyState()


def is_anomaly_enabled() -> bool:
    return state.enabled


def is_anomaly_check_nan_enabled() -> bool:
    return state.check_nan


def _set(mode: bool, check_nan: bool) -> None:
    if mode and not state.enabled:
        warnings.warn("Anomaly Detection has been enabled. This mode will increase the runtime "
                      "and should only be enabled for debugging.", stacklevel=3)
    state.enabled = bool(mode)
    state.check_nan = bool(check_nan)


class detect_anomaly:
    """Context manager / decorator enabling anomaly detection."""

    def __init__(self, check_nan=True) -> None:
        self.check_nan = check_nan

    def __enter__(self) -> None:
        self.prev = (state.enabled, state.check_nan)
        _set(True, self.check_nan)

    def __exit__(self, *exc) -> None:
        state.enabled, state.check_nan = self.prev

    def __call__(self, fn):
        import functools

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with self.__class__(self.check_nan):
                return fn(*args, **kwargs)
        return wrapper


class set_detect_anomaly:
    """Sets anomaly detection on construction; restores on exit when used with ``with``."""

    def __init__(self, mode: bool, check_nan: bool = True) -> None:
        self.prev = (state.enabled, state.check_nan)
        _set(mode, check_nan)

    def __enter__(self) -> None:
        pass

    def __exit__(self, *exc) -> None:
        state.enabled, state.check_nan = self.prev


def record_forward(node) -> None:
    """Store the forward stack on a node being created (anomaly mode only)."""
    node._anomaly_trace = "".join(traceback.format_stack()[:-3])


def report_error(node) -> None:
    """Warn with the forward stack of the node that failed in backward."""
    if state.enabled:
        trace = node._anomaly_trace or "No forward pass information available. Enable detect " \
            "anomaly during forward pass for more information."
        warnings.warn(f"Error detected in {node.name()}. Traceback of forward call that caused "
                      f"the error:\n{trace}", stacklevel=2)


def check_nan(node, outputs) -> None:
    for i, grad in enumerate(outputs):
        if grad is not None and grad.dtype.category >= 2 and bool(grad.isnan().any()):
            raise RuntimeError(f"Function '{node.name()}' returned nan values in its {i}th output.")

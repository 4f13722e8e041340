"""``torch.compiler``: the compile stack's user-facing entry points.

``disable``, ``allow_in_graph`` and ``reset`` steer Dynamo
(``glasstorch/_dynamo``); ``stages(fn, *args)`` is glasstorch's window on the
stack: the FX graph, the ATen graph, AOTAutograd's joint graph, its forward
and backward partitions and the saved tensors, printed side by side
(``glasstorch/_functorch/stages.py``).
"""
import threading

from ._dynamo import allow_in_graph, disable, list_backends, reset
from ._functorch.stages import CompileStages, stages

__all__ = ["CompileStages", "stages", "disable", "allow_in_graph", "reset", "is_compiling",
           "is_dynamo_compiling", "is_exporting", "list_backends", "cudagraph_mark_step_begin"]


class _Tracing(threading.local):
    exporting = False        # torch.export's trace is running this thread's Python
    compiling = False        # a compiled optimizer step is being traced


_tracing = _Tracing()


def is_compiling() -> bool:
    """True in code that torch.compile or torch.export is tracing: Dynamo
    answers True while it traces (the call folds to a constant), export while
    its trace runs; False when the code runs eagerly."""
    return _tracing.exporting or _tracing.compiling


def is_dynamo_compiling() -> bool:
    """True only while Dynamo traces the calling code (it folds the call)."""
    return False


def is_exporting() -> bool:
    """True while torch.export traces the calling code."""
    return _tracing.exporting


def cudagraph_mark_step_begin() -> None:
    """Mark the start of a training step for CUDA graph trees.  glasstorch
    records no CUDA graphs (``mode="reduce-overhead"`` captures none on CPU),
    so there is no step to mark: programs written for CUDA run unchanged."""

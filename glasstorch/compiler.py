"""``torch.compiler``: the compile stack's user-facing entry points.

``disable``, ``allow_in_graph`` and ``reset`` steer Dynamo
(``glasstorch/_dynamo``); ``stages(fn, *args)`` is glasstorch's window on the
stack: the FX graph, the ATen graph, AOTAutograd's joint graph, its forward
and backward partitions and the saved tensors, printed side by side
(``glasstorch/_functorch/stages.py``).
"""
from ._dynamo import allow_in_graph, disable, reset
from ._functorch.stages import CompileStages, stages

__all__ = ["CompileStages", "stages", "disable", "allow_in_graph", "reset"]

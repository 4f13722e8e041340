"""``torch.compiler``: the compile stack's user-facing entry points.

For now it holds ``stages(fn, *args)``, glasstorch's window on the stack: the
FX graph, the ATen graph, AOTAutograd's joint graph, its forward and backward
partitions and the saved tensors, printed side by side
(``glasstorch/_functorch/stages.py``).  ``torch.compile`` comes with the
Dynamo and Inductor issues.
"""
from ._functorch.stages import CompileStages, stages

__all__ = ["CompileStages", "stages"]

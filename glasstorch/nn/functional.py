"""torch.nn.functional: the ops declared with python_module: nn, plus Python wrappers."""
from .._ops.registry import FUNCTIONS as _F

globals().update(_F["nn"])

"""``torch._functorch``: AOTAutograd (``aot_autograd``) and its graph
partitioners (``partitioners``)."""
from . import aot_autograd, partitioners  # noqa: E402,F401

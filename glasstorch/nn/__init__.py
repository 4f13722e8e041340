"""torch.nn (modules arrive with the nn issue)."""
from . import functional  # noqa: F401

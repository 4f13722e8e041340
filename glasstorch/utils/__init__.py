"""``torch.utils``: hooks handles, checkpointing (data loading comes with nn)."""
from . import data  # noqa: F401  (torch.utils.data)

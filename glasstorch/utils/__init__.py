"""``torch.utils``: hook handles, checkpointing, data loading, safetensors."""
from . import data  # noqa: F401  (torch.utils.data)

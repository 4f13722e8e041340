"""``torch.utils``: hooks handles, checkpointing (data loading comes with nn)."""

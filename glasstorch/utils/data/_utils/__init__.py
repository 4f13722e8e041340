"""Helpers of the DataLoader (torch/utils/data/_utils): collation, fetching, workers."""
from . import collate, fetch, worker  # noqa: F401

"""Helpers of the built-in DataPipes (torch/utils/data/datapipes/utils)."""

"""``torch._subclasses``: tensor subclasses PyTorch builds on ``__torch_dispatch__``
(FakeTensor: shapes without data)."""
from .fake_tensor import (DynamicOutputShapeException, FakeTensor, FakeTensorMode,
                          UnsupportedFakeTensorException)

__all__ = ["FakeTensor", "FakeTensorMode", "UnsupportedFakeTensorException",
           "DynamicOutputShapeException"]

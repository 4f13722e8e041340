"""``torch.nn.modules.linear_cross_entropy_options``: the options of
F.linear_cross_entropy's chunked path (how many batch rows per chunk, and the
precision policy), validated as torch validates them."""
from __future__ import annotations

import dataclasses

from ..._core import dtype as _dt

__all__ = ["LinearCrossEntropyOptions"]

_ACC_DTYPES = (_dt.float16, _dt.bfloat16, _dt.float32, _dt.float64)


@dataclasses.dataclass(slots=True, frozen=True)
class LinearCrossEntropyOptions:
    """allow_retain_graph: keep the gradient buffers for a second backward;
    batch_chunk_size: rows per chunk (None: one chunk); chunking_method: "auto",
    "aspect_ratio" or "aspect_ratio:N" (None: use batch_chunk_size); acc_policy:
    "accurate" | "balanced" | "compact" | "auto"; acc_dtype: accumulation dtype."""

    allow_retain_graph: bool = False
    batch_chunk_size: int | None = None
    chunking_method: str | None = "auto"
    acc_policy: str = "auto"
    acc_dtype: object = None

    def __post_init__(self):
        if self.acc_policy not in {"auto", "accurate", "balanced", "compact"}:
            raise ValueError(f"invalid acc_policy: {self.acc_policy!r}")
        if self.chunking_method is not None and self.chunking_method != "auto":
            name, sep, factor = self.chunking_method.partition(":")
            factor = factor if sep else "1"
            if not (name == "aspect_ratio" and factor.isdigit() and int(factor) > 0):
                raise ValueError(f"invalid chunking_method: {self.chunking_method!r}")
        if not (self.batch_chunk_size is None
                or (isinstance(self.batch_chunk_size, int) and self.batch_chunk_size > 0)):
            raise ValueError(f"batch_chunk_size must be positive int or None, got "
                             f"{self.batch_chunk_size!r}")
        if self.acc_dtype is not None and self.acc_dtype not in _ACC_DTYPES:
            raise ValueError("acc_dtype must be one of {None, torch.float16, torch.bfloat16, "
                             f"torch.float32, torch.float64}}, got {self.acc_dtype!r}. Pass "
                             "acc_dtype=None to let the op pick automatically.")

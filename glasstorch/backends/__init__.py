"""torch.backends: the per-backend switches programs set at start-up.

glasstorch computes on CPU with numpy (and CuPy on CUDA), so most switches here
are recorded but change nothing; they exist so that PyTorch programs that set
them (``torch.backends.cudnn.benchmark = True``, ``...matmul.allow_tf32``) run
unchanged.  Defaults are PyTorch's.
"""
from __future__ import annotations

import types

from .. import cuda as _cuda
from . import cpu

# torch.backends.cuda: TF32 for matmuls is off by default, as in PyTorch.
cuda = types.SimpleNamespace(
    matmul=types.SimpleNamespace(allow_tf32=False, allow_fp16_reduced_precision_reduction=True,
                                 allow_bf16_reduced_precision_reduction=True),
    is_built=lambda: False)

# torch.backends.cudnn: enabled, no autotuning, not deterministic, TF32 for convolutions.
cudnn = types.SimpleNamespace(enabled=True, benchmark=False, deterministic=False, allow_tf32=True,
                              is_available=lambda: _cuda.is_available(), version=lambda: None)

mps = types.SimpleNamespace(is_available=lambda: False, is_built=lambda: False)


class _MultiheadAttentionSwitch:
    """torch.backends.mha: whether MultiheadAttention may take its fused inference
    path (glasstorch has none; the value only changes what the getter returns)."""

    def __init__(self):
        self._enabled = True

    def get_fastpath_enabled(self) -> bool:
        return self._enabled

    def set_fastpath_enabled(self, value: bool) -> None:
        self._enabled = value


mha = _MultiheadAttentionSwitch()

__all__ = ["cpu", "cuda", "cudnn", "mha", "mps"]

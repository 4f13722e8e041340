"""torch.backends.cpu: which vectorized code path ATen's CPU kernels take.

glasstorch decides it as ATen does (``ATEN_CPU_CAPABILITY``, else the CPU's
flags) and follows the same path where that path decides the bits: fused
multiply-adds in elementwise loops and linspace (see ``_ops/kernels/native.py``).
"""
from __future__ import annotations

from .._ops.kernels import native


def get_cpu_capability() -> str:
    """"DEFAULT", "AVX2" or "AVX512", as ``torch.backends.cpu.get_cpu_capability()``."""
    return native.cpu_capability()


__all__ = ["get_cpu_capability"]

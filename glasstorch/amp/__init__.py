"""``torch.amp``: automatic mixed precision (torch/amp/__init__.py).

    autocast_state.py     on/off per device (the Autocast dispatch keys), dtype,
                          nesting, the weight-cast cache; torch.is_autocast_enabled ...
    policies.py           which ops autocast casts, and how (PyTorch's op lists)
    autocast_kernels.py   the kernels registered at AutocastCPU / AutocastCUDA
    autocast_mode.py      the ``autocast`` context manager / decorator, custom_fwd/bwd
    grad_scaler.py        GradScaler (loss scaling for float16 training)
    cuda_amp.py           torch.cuda.amp, the deprecated CUDA spellings

Importing this package registers the autocast kernels (as PyTorch's static
``TORCH_LIBRARY_IMPL(aten, AutocastCPU, m)`` blocks do at load time).
"""
from .autocast_mode import autocast, custom_bwd, custom_fwd, is_autocast_available
from .grad_scaler import GradScaler
from .autocast_kernels import register_autocast_kernels as _register_autocast_kernels

__all__ = ["autocast", "custom_bwd", "custom_fwd", "is_autocast_available", "GradScaler"]

_autocast_library = _register_autocast_kernels()

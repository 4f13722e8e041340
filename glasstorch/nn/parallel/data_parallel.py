"""``torch.nn.parallel.data_parallel``: DataParallel and data_parallel.

PyTorch's DataParallel splits each batch over the visible accelerators,
runs a replica of the module on each and gathers the outputs.  glasstorch has
no accelerator device (``torch.cuda.is_available()`` is False), and with none
PyTorch keeps no device state and simply runs the wrapped module: that is
what is here.  ``data_parallel``, the functional form, raises without a
device, as PyTorch's does.
"""
from __future__ import annotations

from ..modules.module import Module

__all__ = ["DataParallel", "data_parallel"]


class DataParallel(Module):
    """Wraps ``module`` (as ``self.module``, so state-dict keys gain a
    ``module.`` prefix); with no accelerator, calling it calls the module."""

    def __init__(self, module, device_ids=None, output_device=None, dim=0) -> None:
        super().__init__()
        self.module = module
        self.device_ids = []

    def forward(self, *inputs, **kwargs):
        from ...autograd.profiler import record_function   # (imports nn: not at load time)
        with record_function("DataParallel.forward"):
            return self.module(*inputs, **kwargs)


def data_parallel(module, inputs, device_ids=None, output_device=None, dim=0,
                  module_kwargs=None):
    """``module(*inputs)`` split over ``device_ids``: needs an accelerator."""
    raise RuntimeError("device type could not be determined")

"""``nn.DataParallel``: with no GPU (as here) PyTorch runs the module as it is."""
from __future__ import annotations

from ..modules.module import Module


class DataParallel(Module):
    def __init__(self, module, device_ids=None, output_device=None, dim=0):
        super().__init__()
        self.module = module
        self.device_ids, self.output_device, self.dim = [], None, dim

    def forward(self, *inputs, **kwargs):
        return self.module(*inputs, **kwargs)

"""``nn.parallel.DistributedDataParallel``: one replica per rank, gradients averaged.

Each parameter gets a post-accumulate-grad hook that averages its gradient
over the process group (``all_reduce`` of grad / world_size) unless
``no_sync()`` is on, which is what PyTorch's Reducer does in buckets.  With the
one-rank groups that run today (see ``distributed_c10d``) the average is the
gradient itself, so training is exactly the wrapped module's.
"""
from __future__ import annotations

from contextlib import contextmanager

from ... import distributed as dist
from ..modules.module import Module


class DistributedDataParallel(Module):
    def __init__(self, module, device_ids=None, output_device=None, dim=0, broadcast_buffers=None,
                 init_sync=True, process_group=None, bucket_cap_mb=None,
                 find_unused_parameters=False, check_reduction=False,
                 gradient_as_bucket_view=False, static_graph=False, **kwargs):
        super().__init__()
        self.process_group = process_group if process_group is not None else \
            dist.distributed_c10d._group(None)
        params = [p for p in module.parameters() if p.requires_grad]
        if not params:
            raise RuntimeError("DistributedDataParallel is not needed when a module doesn't "
                               "have any parameter that requires a gradient.")
        devices = {p.device for p in module.parameters()}
        if (device_ids or output_device is not None) and all(d.type == "cpu" for d in devices):
            raise ValueError(
                f"DistributedDataParallel device_ids and output_device arguments only work with "
                f"single-device/multiple-device GPU modules or CPU modules, but got device_ids "
                f"{device_ids}, output_device {output_device}, and module parameters {devices}.")
        self.module = module
        self.device_ids, self.output_device, self.dim = device_ids, output_device, dim
        self.broadcast_buffers = True if broadcast_buffers is None else broadcast_buffers
        self.find_unused_parameters = find_unused_parameters
        self.gradient_as_bucket_view, self.static_graph = gradient_as_bucket_view, static_graph
        self.require_backward_grad_sync = True
        self.require_forward_param_sync = True
        if init_sync:
            for tensor in [*module.parameters(), *module.buffers()]:
                dist.broadcast(tensor, 0, group=self.process_group)
        for p in params:
            p.register_post_accumulate_grad_hook(self._average_gradient)

    def _average_gradient(self, param) -> None:
        if self.require_backward_grad_sync:
            param.grad.div_(dist.get_world_size(self.process_group))
            dist.all_reduce(param.grad, group=self.process_group)

    @contextmanager
    def no_sync(self):
        """Accumulate gradients locally (no averaging) inside the block."""
        previous, self.require_backward_grad_sync = self.require_backward_grad_sync, False
        try:
            yield
        finally:
            self.require_backward_grad_sync = previous

    def forward(self, *inputs, **kwargs):
        return self.module(*inputs, **kwargs)

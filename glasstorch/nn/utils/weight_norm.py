"""``torch.nn.utils.weight_norm`` (deprecated): weight = g * v / ||v||, by a
forward pre-hook.

The parameter ``name`` is replaced by ``name_g`` (the norm, one per slice
along ``dim``; ``dim=None`` means the whole tensor) and ``name_v`` (the
direction), and ``name`` is recomputed from them before every forward with
the ATen ops ``torch._weight_norm`` and ``torch.norm_except_dim`` (fused as
``_weight_norm_interface`` for dim 0 / last: grad_fn WeightNormInterfaceBackward0).
"""
from __future__ import annotations

import warnings

from ..._ops import registry as _registry
from ..parameter import Parameter, UninitializedParameter

__all__ = ["WeightNorm", "weight_norm", "remove_weight_norm"]

_weight_norm = _registry.function("_weight_norm")
norm_except_dim = _registry.function("norm_except_dim")


class WeightNorm:
    """The forward pre-hook recomputing ``module.<name>`` from ``name_g`` and ``name_v``."""

    def __init__(self, name: str, dim) -> None:
        self.name = name
        self.dim = -1 if dim is None else dim

    def compute_weight(self, module):
        return _weight_norm(getattr(module, self.name + "_v"), getattr(module, self.name + "_g"),
                            self.dim)

    @staticmethod
    def apply(module, name: str, dim) -> "WeightNorm":
        warnings.warn("`torch.nn.utils.weight_norm` is deprecated in favor of "
                      "`torch.nn.utils.parametrizations.weight_norm`.", FutureWarning,
                      stacklevel=3)
        for hook in module._forward_pre_hooks.values():
            if isinstance(hook, WeightNorm) and hook.name == name:
                raise RuntimeError(f"Cannot register two weight_norm hooks on the same parameter "
                                   f"{name}")
        fn = WeightNorm(name, dim)
        weight = getattr(module, name)
        if isinstance(weight, UninitializedParameter):
            raise ValueError("The module passed to `WeightNorm` can't have uninitialized "
                             "parameters. Make sure to run the dummy forward before applying "
                             "weight normalization")
        del module._parameters[name]
        module.register_parameter(name + "_g", Parameter(norm_except_dim(weight, 2, fn.dim).data))
        module.register_parameter(name + "_v", Parameter(weight.data))
        setattr(module, name, fn.compute_weight(module))
        module.register_forward_pre_hook(fn)
        return fn

    def remove(self, module) -> None:
        weight = self.compute_weight(module)
        delattr(module, self.name)
        del module._parameters[self.name + "_g"]
        del module._parameters[self.name + "_v"]
        setattr(module, self.name, Parameter(weight.data))

    def __call__(self, module, inputs) -> None:
        setattr(module, self.name, self.compute_weight(module))


def weight_norm(module, name: str = "weight", dim=0):
    """Reparametrize ``module.<name>`` as ``g * v / ||v||`` (deprecated: see
    ``torch.nn.utils.parametrizations.weight_norm``)."""
    WeightNorm.apply(module, name, dim)
    return module


def remove_weight_norm(module, name: str = "weight"):
    """Fold the weight norm back into one parameter ``module.<name>``."""
    for key, hook in module._forward_pre_hooks.items():
        if isinstance(hook, WeightNorm) and hook.name == name:
            hook.remove(module)
            del module._forward_pre_hooks[key]
            return module
    raise ValueError(f"weight_norm of '{name}' not found in {module}")

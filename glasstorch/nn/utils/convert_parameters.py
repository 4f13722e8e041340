"""``torch.nn.utils.convert_parameters``: parameters to one flat vector and back."""
from __future__ import annotations

from ... import cat
from ..._tensor import Tensor
from ..._creation import typename

__all__ = ["parameters_to_vector", "vector_to_parameters"]


def parameters_to_vector(parameters) -> Tensor:
    """All parameters flattened and concatenated (differentiable)."""
    param_device = None
    vec = []
    for param in parameters:
        param_device = _check_param_device(param, param_device)
        vec.append(param.view(-1))
    return cat(vec)


def vector_to_parameters(vec, parameters) -> None:
    """Make each parameter's ``.data`` the matching slice of ``vec`` (a view, no copy)."""
    if not isinstance(vec, Tensor):
        raise TypeError(f"expected torch.Tensor, but got: {typename(vec)}")
    param_device = None
    pointer = 0
    for param in parameters:
        param_device = _check_param_device(param, param_device)
        num_param = param.numel()
        param.data = vec[pointer:pointer + num_param].view_as(param).data
        pointer += num_param


def _check_param_device(param, old_param_device) -> int:
    """The parameters' common device index (-1 for CPU); two devices is an error."""
    if old_param_device is None:
        return param.get_device() if param.is_cuda else -1
    if (param.get_device() != old_param_device) if param.is_cuda else old_param_device != -1:
        raise TypeError("Found two parameters on different devices, this is currently not "
                        "supported.")
    return old_param_device

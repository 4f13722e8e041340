"""``torch.__future__``: two switches for how ``nn.Module`` conversions
(``.to()``, ``.float()``, ``.cpu()`` ... through ``Module._apply``) change a
module's parameters, and how ``load_state_dict`` writes them.

By default a parameter keeps its identity and its ``.data`` is replaced.
``set_overwrite_module_params_on_conversion(True)`` makes ``_apply`` put a new
Parameter in the module instead; ``set_swap_module_params_on_conversion(True)``
(which takes precedence) keeps the Python object but swaps its whole content
with the converted tensor via ``torch.utils.swap_tensors``, and makes
``load_state_dict`` swap in ``param.module_load(value)``.
"""
from __future__ import annotations

__all__ = ["set_overwrite_module_params_on_conversion",
           "get_overwrite_module_params_on_conversion",
           "set_swap_module_params_on_conversion", "get_swap_module_params_on_conversion"]

_overwrite_module_params_on_conversion: bool = False
_swap_module_params_on_conversion: bool = False


def set_overwrite_module_params_on_conversion(value: bool) -> None:
    """Make ``Module._apply`` assign new Parameters instead of setting ``.data``."""
    global _overwrite_module_params_on_conversion
    _overwrite_module_params_on_conversion = value


def get_overwrite_module_params_on_conversion() -> bool:
    """Whether ``Module._apply`` assigns new Parameters (default False)."""
    return _overwrite_module_params_on_conversion


def set_swap_module_params_on_conversion(value: bool) -> None:
    """Make ``Module._apply`` and ``load_state_dict`` swap tensors in place with
    ``torch.utils.swap_tensors`` (overrides the overwrite switch)."""
    global _swap_module_params_on_conversion
    _swap_module_params_on_conversion = value


def get_swap_module_params_on_conversion() -> bool:
    """Whether conversions and loading use ``swap_tensors`` (default False)."""
    return _swap_module_params_on_conversion

"""Samples for the alias ops (PyTorch's CompositeImplicitAutograd aliases:
``multiply`` -> ``mul``, ``arccos`` -> ``acos``, ``swapaxes_`` -> ``transpose_``,
``row_stack`` -> ``vstack`` ...): each overload runs its target overload's
samples, looked up when the sample runs (the target's out= samples are derived
only once every sample module has loaded)."""
from ..opinfo import SAMPLES, sample

_TARGETS = {
    "multiply": "mul", "subtract": "sub", "divide": "div", "absolute": "abs", "negative": "neg",
    "fix": "trunc", "arctan2": "atan2", "arcsin": "asin", "arccos": "acos", "arctan": "atan",
    "arcsinh": "asinh", "arccosh": "acosh", "arctanh": "atanh", "not_equal": "ne",
    "less": "lt", "less_equal": "le", "greater": "gt", "greater_equal": "ge",
    "swapaxes_": "transpose_", "swapdims_": "transpose_", "row_stack": "vstack"}

_OVERLOADS = {
    "multiply": ("Tensor", "Scalar", "out", "_.Tensor", "_.Scalar"),
    "subtract": ("Tensor", "Scalar", "out", "_.Tensor", "_.Scalar"),
    "divide": ("Tensor", "Scalar", "Tensor_mode", "Scalar_mode", "out", "out_mode", "_.Tensor",
               "_.Scalar", "_.Tensor_mode", "_.Scalar_mode"),
    "swapaxes_": ("",), "swapdims_": ("",), "row_stack": ("", "out"),
    **{name: ("Tensor", "Scalar", "Tensor_out", "Scalar_out", "_.Tensor", "_.Scalar")
       for name in ("not_equal", "less", "less_equal", "greater", "greater_equal")}}


def _register(alias, target, index):
    def run_target_sample(make, lib):
        samples = SAMPLES[f"aten::{target}"]
        return samples[index % len(samples)].fn(make, lib)
    run_target_sample.__name__ = f"as_{target.replace('.', '_')}_{index}"
    inplace = alias.split(".")[0].endswith("_")
    sample(f"aten::{alias}", inplace=inplace, atol=1e-4, rtol=1e-4)(run_target_sample)


for _alias, _target in _TARGETS.items():
    for _ov in _OVERLOADS.get(_alias, ("", "out", "_")):
        _suffix = _ov if _ov.startswith("_") or not _ov else f".{_ov}"
        for _index in range(2):
            _register(_alias + _suffix, _target + _suffix, _index)

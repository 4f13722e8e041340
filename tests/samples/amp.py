"""Samples for GradScaler's ops (kernels/amp.py).

``make(shape, low=v, high=v)`` draws exactly ``v``, which gives the 0-dim
scale / tracker / found_inf tensors fixed values on every device.
``_amp_update_scale_`` returns the scale (the tracker is checked in
tests/test_grad_scaler.py); the unscale op is compared on the grads it rewrites.
"""
from ..opinfo import sample


def _constant(make, value, dtype="float32", shape=()):
    if dtype == "int32":
        return make(*shape, dtype=dtype, low=value, high=value + 1)
    return make(*shape, dtype=dtype, low=value, high=value)


def _non_finite(make, n):
    """x / 0: +-inf, and nan where x is 0."""
    return make(n) / _constant(make, 0.0, shape=(n,))


@sample("aten::_amp_update_scale_")
def update_scale_grows_at_interval(make, lib):
    return (_constant(make, 4.0), _constant(make, 2, "int32"), _constant(make, 0.0),
            2.0, 0.5, 3), {}


@sample("aten::_amp_update_scale_")
def update_scale_counts_below_interval(make, lib):
    return (_constant(make, 4.0), _constant(make, 0, "int32"), _constant(make, 0.0),
            2.0, 0.5, 3), {}


@sample("aten::_amp_update_scale_")
def update_scale_backs_off(make, lib):
    return (_constant(make, 3.0), _constant(make, 5, "int32"), _constant(make, 1.0),
            2.0, 0.3, 7), {}


@sample("aten::_amp_update_scale_")
def update_scale_stays_finite(make, lib):
    return (_constant(make, 3.0e38, shape=(1,)), _constant(make, 0, "int32", (1,)),
            _constant(make, 0.0, shape=(1,)), 2.0, 0.5, 1), {}


@sample("aten::_amp_foreach_non_finite_check_and_unscale_", inplace=True)
def unscale_finite(make, lib):
    return ([make(3, 4), make(5, noncontiguous=True)], _constant(make, 0.0),
            _constant(make, 0.125)), {}


@sample("aten::_amp_foreach_non_finite_check_and_unscale_", inplace=True, atol=1e-2, rtol=1e-2)
def unscale_half(make, lib):
    return ([make(6, dtype="bfloat16"), make(2, 3, dtype="float16")], _constant(make, 0.0),
            _constant(make, 0.37)), {}


@sample("aten::_amp_foreach_non_finite_check_and_unscale_", inplace=True)
def unscale_with_inf_double(make, lib):
    return ([_non_finite(make, 4).double(), make(3, dtype="float64")], _constant(make, 0.0),
            _constant(make, 1.0 / 3.0)), {}


@sample("aten::_amp_foreach_non_finite_check_and_unscale_", inplace=True)
def unscale_empty_list(make, lib):
    return ([], _constant(make, 0.0, dtype="float64"), _constant(make, 0.5)), {}

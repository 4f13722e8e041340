"""Samples for the aten backward ops of reductions and scans
(declared in native_functions.yaml)."""
from ..opinfo import sample


@sample("aten::value_selecting_reduction_backward")
def value_selecting_dim(make, lib):
    return (make(3), 1, make(3, dtype="int64", low=0, high=4), [3, 4], False), {}


@sample("aten::value_selecting_reduction_backward")
def value_selecting_keepdim_negative_dim(make, lib):
    return (make(2, 1, 4), -2, make(2, 1, 4, dtype="int64", low=0, high=3), [2, 3, 4], True), {}


@sample("aten::value_selecting_reduction_backward")
def value_selecting_zero_dim(make, lib):
    return (make(()), 0, make((), dtype="int64", low=0, high=1), [], False), {}


@sample("aten::cumprod_backward", atol=1e-4, rtol=1e-5)
def cumprod_backward_nonzero(make, lib):
    x = make(3, 4, low=0.5, high=2)
    return (make(3, 4), x, 1, x.cumprod(1)), {}


@sample("aten::cumprod_backward", atol=1e-4, rtol=1e-5)
def cumprod_backward_zeros(make, lib):
    x = make(4, 5, dtype="int64", low=-1, high=3).to(lib.float32)   # zeros, some rows two
    return (make(4, 5), x, -1, x.cumprod(-1)), {}


@sample("aten::cumprod_backward")
def cumprod_backward_single(make, lib):
    x = make(1, 3)
    return (make(1, 3), x, 0, x.cumprod(0)), {}

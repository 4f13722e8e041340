"""Samples for the ternary pointwise ops the optimizers use (kernels/pointwise_ternary.py):
addcmul and addcdiv with broadcasting, transposed and non-contiguous inputs,
mixed dtypes, integer addcmul, half precision, and their in-place and ``out=`` forms.
"""
from ..opinfo import sample

HALF = {"atol": 1e-2, "rtol": 1e-2}


def _divisor(make, *shape, **kwargs):
    """Values in [1, 3): away from zero, so quotients stay tame."""
    return make(*shape, low=1, high=3, **kwargs)


@sample("aten::addcmul")
def addcmul_broadcast(make, lib):
    return (make(3, 4), make(4), make(3, 1)), {"value": -0.37}


@sample("aten::addcmul")
def addcmul_transposed_mixed(make, lib):
    return (make(4, 3).t(), make(3, 4, dtype="float64"), make(3, 4, noncontiguous=True)), {}


@sample("aten::addcmul")
def addcmul_integer(make, lib):
    return (make(2, 3, dtype="int64"), make(2, 3, dtype="int32"), make(3, dtype="int64")), \
        {"value": 2}


@sample("aten::addcmul", **HALF)
def addcmul_half(make, lib):
    return (make(2, 3, dtype="bfloat16"), make(2, 3, dtype="bfloat16"),
            make((), dtype="float64")), {"value": 0.5}


@sample("aten::addcmul_", inplace=True)
def addcmul_inplace(make, lib):
    return (make(3, 4), make(3, 4, noncontiguous=True), make(4)), {"value": 0.25}


@sample("aten::addcmul.out")
def addcmul_out(make, lib):
    return (make(3, 4), make(3, 4), make(3, 4)), {"value": 3, "out": make(3, 4)}


@sample("aten::addcdiv")
def addcdiv_broadcast(make, lib):
    return (make(3, 4), make(4), _divisor(make, 3, 1)), {"value": -0.37}


@sample("aten::addcdiv")
def addcdiv_transposed_mixed(make, lib):
    return (make(4, 3, dtype="float64").t(), make(3, 4, dtype="int64"),
            _divisor(make, 3, 4, noncontiguous=True)), {}


@sample("aten::addcdiv", **HALF)
def addcdiv_half(make, lib):
    return (make(2, 3, dtype="float16"), make(2, 3, dtype="float16"),
            _divisor(make, 2, 3, dtype="float16")), {"value": 2}


@sample("aten::addcdiv_", inplace=True)
def addcdiv_inplace(make, lib):
    return (make(3, 4), make(3, 4), _divisor(make, 3, 4, noncontiguous=True)), {"value": -1e-3}


@sample("aten::addcdiv.out")
def addcdiv_out(make, lib):
    return (make(3, 4), make(1, 4), _divisor(make, 3, 4)), {"out": make(3, 4)}

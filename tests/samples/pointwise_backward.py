"""Samples for the activations' backward ops (kernels/pointwise_backward.py).

Each op gets: float32, broadcasting in float64, a transposed float16 gradient
(output strides), bfloat16, values on the kinks (where the derivative switches),
and its out= overload.
"""
import numpy as np

from ..opinfo import sample

HALF = {"atol": 1e-2, "rtol": 1e-2}
TOL = {"atol": 1e-5, "rtol": 1e-5}

# op: (the forward value's range, scalar arguments placed after self, kwargs, kink values)
_OPS = {
    "threshold_backward": ((-3, 3), (0.5,), {}, [0.5, -0.5, 0.0, 0.75]),
    "sigmoid_backward": ((0, 1), (), {}, [0.0, 1.0, 0.5, 0.25]),
    "tanh_backward": ((-1, 1), (), {}, [-1.0, 1.0, 0.0, 0.5]),
    "gelu_backward": ((-5, 5), (), {}, [0.0, -1.0, 1.0, 3.0]),
    "silu_backward": ((-5, 5), (), {}, [0.0, -1.0, 1.0, 30.0]),
    "leaky_relu_backward": ((-3, 3), (0.2, False), {}, [0.0, -1.0, 1.0, 2.0]),
    "hardtanh_backward": ((-3, 3), (-0.5, 1.5), {}, [-0.5, 1.5, 0.0, 2.0]),
    "hardsigmoid_backward": ((-5, 5), (), {}, [-3.0, 3.0, 0.0, -4.0]),
    "hardswish_backward": ((-5, 5), (), {}, [-3.0, 3.0, 0.0, -4.0]),
    "softplus_backward": ((-5, 5), (2.0, 3.0), {}, [1.5, 1.0, 2.0, -30.0]),
    "mish_backward": ((-5, 5), (), {}, [0.0, -1.0, 1.0, 30.0]),
}
_OUT_NAMES = {"hardswish_backward": "hardswish_backward.out", "mish_backward": None}


def _values(make, lib, values, dtype="float32"):
    t = lib.tensor(np.array(values, dtype=np.float32), dtype=getattr(lib, dtype))
    return t.to(make.device) if make.device != "cpu" else t


def _register(op, low, high, scalars, kwargs, kinks):
    out_name = _OUT_NAMES.get(op, f"{op}.grad_input")
    out_arg = "out" if out_name == "hardswish_backward.out" else "grad_input"

    def basic(make, lib):
        return (make(3, 4), make(3, 4, low=low, high=high)) + scalars, dict(kwargs)

    def broadcast_double(make, lib):
        return (make(3, 4, dtype="float64"), make(4, dtype="float64", low=low, high=high)) \
            + scalars, dict(kwargs)

    def transposed_half(make, lib):
        return (make(4, 3, dtype="float16").t(), make(3, 4, dtype="float16", low=low, high=high)) \
            + scalars, dict(kwargs)

    def bfloat(make, lib):
        return (make(2, 5, dtype="bfloat16"),
                make(2, 5, dtype="bfloat16", low=low, high=high, noncontiguous=True)) \
            + scalars, dict(kwargs)

    def kink_values(make, lib):
        return (make(4), _values(make, lib, kinks)) + scalars, dict(kwargs)

    def out_variant(make, lib):
        return (make(3, 4), make(3, 4, low=low, high=high)) + scalars, \
            dict(kwargs, **{out_arg: make(3, 4)})

    for fn in (basic, broadcast_double, kink_values):
        sample(f"aten::{op}", **TOL)(fn)
    for fn in (transposed_half, bfloat):
        sample(f"aten::{op}", **HALF)(fn)
    if out_name:
        sample(f"aten::{out_name}", **TOL)(out_variant)


for _op, (_range, _scalars, _kwargs, _kinks) in _OPS.items():
    _register(_op, *_range, _scalars, _kwargs, _kinks)


@sample("aten::threshold_backward")
def threshold_backward_int(make, lib):
    return (make(3, 4, dtype="int64"), make(3, 4, dtype="int64"), 1), {}


@sample("aten::threshold_backward")
def threshold_backward_follows_self(make, lib):
    return (make(4, 3).t(), make(3, 4)), {"threshold": 0.0}


@sample("aten::leaky_relu_backward")
def leaky_relu_backward_from_result(make, lib):
    return (make(3, 4), make(3, 4), 0.3, True), {}


@sample("aten::gelu_backward", **TOL)
def gelu_backward_tanh(make, lib):
    return (make(3, 4), make(3, 4, low=-5, high=5)), {"approximate": "tanh"}


@sample("aten::gelu_backward.grad_input", **TOL)
def gelu_backward_tanh_out(make, lib):
    return (make(3, 4), make(3, 4, low=-5, high=5)), {"approximate": "tanh",
                                                      "grad_input": make(3, 4)}


def _elu_args(make, lib, x, g=None, is_result=False):
    return (g if g is not None else make(*x.shape), 1.5, 1.2, 0.8, is_result, x), {}


@sample("aten::elu_backward", **TOL)
def elu_backward(make, lib):
    return _elu_args(make, lib, make(3, 4))


@sample("aten::elu_backward", **TOL)
def elu_backward_broadcast_double(make, lib):
    return _elu_args(make, lib, make(4, dtype="float64"), g=make(3, 4, dtype="float64"))


@sample("aten::elu_backward", **HALF)
def elu_backward_half(make, lib):
    return _elu_args(make, lib, make(3, 4, dtype="float16"),
                     g=make(4, 3, dtype="float16").t())


@sample("aten::elu_backward", **TOL)
def elu_backward_from_result(make, lib):
    return _elu_args(make, lib, make(3, 4, low=-1.8, high=3), is_result=True)


@sample("aten::elu_backward", **TOL)
def elu_backward_kinks(make, lib):
    return _elu_args(make, lib, _values(make, lib, [0.0, -1.0, 1.0, -20.0]))


@sample("aten::elu_backward.grad_input", **TOL)
def elu_backward_out(make, lib):
    args, _ = _elu_args(make, lib, make(3, 4))
    return args, {"grad_input": make(3, 4)}


@sample("aten::mish_backward", **TOL)
def mish_backward_double_gradient(make, lib):
    """The result takes self's dtype (not the promoted one)."""
    return (make(3, 4, dtype="float64"), make(3, 4, low=-5, high=5)), {}


@sample("aten::_conj_physical")
def conj_physical_complex(make, lib):
    return (make(3, 4, dtype="complex64"),), {}


@sample("aten::_conj_physical.out")
def conj_physical_out(make, lib):
    return (make(2, 3, dtype="complex64"),), {"out": make(0, dtype="complex64")}


@sample("aten::conj_physical")
def conj_physical_real(make, lib):
    return (make(3, 4, noncontiguous=True),), {}


@sample("aten::conj_physical")
def conj_physical_of_complex(make, lib):
    return (make(3, 4, dtype="complex128"),), {}


@sample("aten::conj")
def conj_real(make, lib):
    return (make(3, 4),), {}

"""Samples for elementwise ops."""
from ..opinfo import sample


@sample("aten::add.Tensor")
def add_broadcast(make, lib):
    return (make(3, 4), make(4)), {"alpha": 2}


@sample("aten::add.Tensor")
def add_scalar_int(make, lib):
    return (make(2, 3, dtype="int32"), 5), {}


@sample("aten::add_.Tensor", inplace=True)
def add_inplace(make, lib):
    return (make(3, 4), make(3, 4, noncontiguous=True)), {}


@sample("aten::add.out", inplace=False)
def add_out(make, lib):
    return (make(3, 4), make(1, 4)), {"out": make(3, 4)}


@sample("aten::mul.Tensor")
def mul_transposed(make, lib):
    return (make(4, 3).t(), make(3, 4)), {}


@sample("aten::mul_.Tensor", inplace=True)
def mul_inplace(make, lib):
    return (make(3, 4), 2.5), {}


@sample("aten::mul.out")
def mul_out(make, lib):
    return (make(3, 4, dtype="int64"), make(3, 4, dtype="int64")), {"out": make(3, 4, dtype="int64")}

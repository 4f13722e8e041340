"""Samples for factories, conversions, scalars and random ops.

Factories take ``device=make.device`` so the Meta run allocates on Meta.
Random ops that take an explicit generator compare values too: glasstorch's
CPU generator reproduces PyTorch's mt19937 streams (see tests/test_random.py).
"""
from ..opinfo import sample


def _dev(make):
    return make.device


def _gen(lib, seed=0):
    return lib.Generator().manual_seed(seed)


# -- empty and friends -------------------------------------------------------------

@sample("aten::empty.memory_format", random=True)
def empty_basic(make, lib):
    return ([2, 3],), {"dtype": lib.float64, "device": _dev(make)}


@sample("aten::empty.memory_format", random=True)
def empty_channels_last(make, lib):
    return ([2, 3, 4, 5],), {"memory_format": lib.channels_last, "device": _dev(make)}


@sample("aten::empty.out", random=True)
def empty_out(make, lib):
    return ([2, 3],), {"out": make(0)}


@sample("aten::empty_strided", random=True)
def empty_strided(make, lib):
    return ([2, 3], [1, 2]), {"dtype": lib.int32, "device": _dev(make)}


@sample("aten::empty_like", random=True)
def empty_like_transposed(make, lib):
    return (make(3, 4).t(),), {}


@sample("aten::empty_like", random=True)
def empty_like_noncontiguous(make, lib):
    return (make(3, 4, noncontiguous=True),), {"dtype": lib.int64}


@sample("aten::zeros")
def zeros(make, lib):
    return ([2, 3],), {"device": _dev(make)}


@sample("aten::zeros.out")
def zeros_out(make, lib):
    return ([2, 2],), {"out": make(0, dtype="int64")}


@sample("aten::zeros_like")
def zeros_like(make, lib):
    return (make(3, 4).t(),), {"dtype": lib.int16}


@sample("aten::ones")
def ones(make, lib):
    return ([4],), {"dtype": lib.bool, "device": _dev(make)}


@sample("aten::ones.out")
def ones_out(make, lib):
    return ([3],), {"out": make(0)}


@sample("aten::ones_like")
def ones_like(make, lib):
    return (make(2, 3, dtype="int32"),), {}


@sample("aten::full")
def full_int(make, lib):
    return ([2, 3], 7), {"device": _dev(make)}


@sample("aten::full")
def full_float_as_int(make, lib):
    return ([2], 2.7), {"dtype": lib.int64, "device": _dev(make)}


@sample("aten::full.out")
def full_out(make, lib):
    return ([2, 3], 1.5), {"out": make(0)}


@sample("aten::full_like")
def full_like(make, lib):
    return (make(2, 3), -1.25), {}


@sample("aten::scalar_tensor")
def scalar_tensor(make, lib):
    return (3.5,), {"dtype": lib.float64, "device": _dev(make)}


@sample("aten::new_empty", random=True)
def new_empty(make, lib):
    return (make(2, dtype="int32"), [3, 1]), {}


@sample("aten::new_empty_strided", random=True)
def new_empty_strided(make, lib):
    return (make(2), [2, 3], [1, 2]), {"dtype": lib.float64}


@sample("aten::new_zeros")
def new_zeros(make, lib):
    return (make(2, dtype="float64"), [3]), {}


@sample("aten::new_ones")
def new_ones(make, lib):
    return (make(2), [2, 2]), {"dtype": lib.int8}


@sample("aten::new_full")
def new_full(make, lib):
    return (make(2, dtype="int64"), [3], 5), {}


# -- fills -------------------------------------------------------------------------

@sample("aten::fill_.Scalar", inplace=True)
def fill_scalar(make, lib):
    return (make(3, 4, noncontiguous=True), 2.5), {}


@sample("aten::fill_.Scalar", inplace=True)
def fill_scalar_truncates(make, lib):
    return (make(3, dtype="int32"), -2.7), {}


@sample("aten::fill_.Tensor", inplace=True)
def fill_tensor(make, lib):
    return (make(2, 3), make(())), {}


@sample("aten::fill.Scalar")
def fill_functional(make, lib):
    return (make(2, 3, dtype="int64"), 4), {}


@sample("aten::fill.Tensor")
def fill_functional_tensor(make, lib):
    return (make(2, 3), make((), dtype="float64")), {}


@sample("aten::zero_", inplace=True)
def zero_(make, lib):
    return (make(4, 3).t(),), {}


# -- ranges ------------------------------------------------------------------------

@sample("aten::arange")
def arange_int(make, lib):
    return (5,), {"device": _dev(make)}


@sample("aten::arange")
def arange_float(make, lib):
    return (5.5,), {"device": _dev(make)}


@sample("aten::arange.start")
def arange_start(make, lib):
    return (-3, 4), {"dtype": lib.float64, "device": _dev(make)}


@sample("aten::arange.start_step")
def arange_start_step(make, lib):
    return (1, 2, 0.1), {"device": _dev(make)}


@sample("aten::arange.start_step")
def arange_negative_step(make, lib):
    return (10, -3, -3), {"device": _dev(make)}


@sample("aten::arange.out")
def arange_out(make, lib):
    return (4,), {"out": make(0, dtype="int32")}


@sample("aten::arange.start_out")
def arange_start_out(make, lib):
    return (0, 3, 0.5), {"out": make(0, dtype="float64")}


@sample("aten::linspace")
def linspace(make, lib):
    return (-1, 2, 7), {"device": _dev(make)}


@sample("aten::linspace")
def linspace_int(make, lib):
    return (0, 10, 4), {"dtype": lib.int64, "device": _dev(make)}


@sample("aten::linspace.Tensor_Tensor")
def linspace_tensors(make, lib):
    return (lib.tensor(0.5), lib.tensor(3.0), 5), {"device": _dev(make)}


@sample("aten::linspace.out")
def linspace_out(make, lib):
    return (0, 1, 5), {"out": make(0, dtype="float64")}


@sample("aten::logspace")
def logspace(make, lib):
    return (0, 3, 4), {"device": _dev(make)}


@sample("aten::logspace.out")
def logspace_out(make, lib):
    return (-1, 1, 5, 2.0), {"out": make(0, dtype="float64")}


@sample("aten::eye")
def eye(make, lib):
    return (3,), {"device": _dev(make)}


@sample("aten::eye.m")
def eye_m(make, lib):
    return (2, 4), {"dtype": lib.int64, "device": _dev(make)}


@sample("aten::eye.out")
def eye_out(make, lib):
    return (2,), {"out": make(0)}


@sample("aten::eye.m_out")
def eye_m_out(make, lib):
    return (3, 2), {"out": make(0, dtype="bool")}


# -- conversions and scalars --------------------------------------------------------

@sample("aten::_to_copy")
def to_copy_dtype(make, lib):
    return (make(3, 4).t(),), {"dtype": lib.int32}


@sample("aten::_to_copy")
def to_copy_noncontiguous(make, lib):
    return (make(3, 4, noncontiguous=True, dtype="float64"),), {"dtype": lib.bfloat16}


@sample("aten::to.dtype_layout")
def to_dtype_layout(make, lib):
    return (make(2, 3),), {"dtype": lib.float64, "device": _dev(make)}


@sample("aten::to.device")
def to_device(make, lib):
    return (make(2, 3), _dev(make), lib.int64), {}


@sample("aten::to.dtype")
def to_dtype(make, lib):
    return (make(2, 3, dtype="int64"), lib.float16), {}


@sample("aten::to.dtype")
def to_dtype_copy(make, lib):
    return (make(2, 3), lib.float32, False, True), {}


@sample("aten::to.other")
def to_other(make, lib):
    return (make(2, 3), make(1, dtype="complex64")), {}


@sample("aten::sym_size.int")
def sym_size(make, lib):
    return (make(2, 3), -1), {}


@sample("aten::sym_stride.int")
def sym_stride(make, lib):
    return (make(2, 3).t(), 0), {}


@sample("aten::sym_numel")
def sym_numel(make, lib):
    return (make(2, 3),), {}


@sample("aten::sym_storage_offset")
def sym_storage_offset(make, lib):
    return (make(4, 3)[1:],), {}


@sample("aten::_local_scalar_dense")
def local_scalar_dense(make, lib):
    return (lib.tensor([2.5]),), {}


@sample("aten::item")
def item(make, lib):
    return (lib.tensor(7, dtype=lib.int16),), {}


@sample("aten::is_nonzero")
def is_nonzero(make, lib):
    return (lib.tensor([0.5]),), {}


# -- random ------------------------------------------------------------------------
# In-place ops: the generator makes the values comparable.

@sample("aten::uniform_", inplace=True)
def uniform_(make, lib):
    return (make(3, 4), -2.0, 5.0), {"generator": _gen(lib)}


@sample("aten::normal_", inplace=True, atol=1e-5)
def normal_(make, lib):
    return (make(3, 4), 1.0, 2.0), {"generator": _gen(lib)}


@sample("aten::normal_", inplace=True)
def normal_double_large(make, lib):
    return (make(40, dtype="float64"),), {"generator": _gen(lib, 3)}


@sample("aten::normal.Tensor_float")
def normal_tensor_float(make, lib):
    return (make(3, 2), 0.5), {"generator": _gen(lib)}


@sample("aten::normal.float_Tensor")
def normal_float_tensor(make, lib):
    return (1.5, make(4, low=0, high=2)), {"generator": _gen(lib)}


@sample("aten::normal.Tensor_Tensor")
def normal_tensor_tensor(make, lib):
    return (make(2, 3), make(3, low=0, high=1)), {"generator": _gen(lib)}


@sample("aten::normal.float_float")
def normal_float_float(make, lib):
    return (0.0, 3.0, [5]), {"generator": _gen(lib), "device": _dev(make)}


@sample("aten::random_.from", inplace=True)
def random_from(make, lib):
    return (make(10, dtype="int64"), -5, 5), {"generator": _gen(lib)}


@sample("aten::random_.from", inplace=True)
def random_from_unbounded(make, lib):
    return (make(6, dtype="int32"), 3, None), {"generator": _gen(lib)}


@sample("aten::random_.to", inplace=True)
def random_to(make, lib):
    return (make(10), 100), {"generator": _gen(lib)}


@sample("aten::random_", inplace=True)
def random_(make, lib):
    return (make(10, dtype="uint8"),), {"generator": _gen(lib)}


@sample("aten::exponential_", inplace=True)
def exponential_(make, lib):
    return (make(8, dtype="float64"), 2.0), {"generator": _gen(lib)}


@sample("aten::bernoulli")
def bernoulli(make, lib):
    return (make(4, 5, low=0, high=1),), {"generator": _gen(lib)}


@sample("aten::bernoulli.p")
def bernoulli_p(make, lib):
    return (make(4, 5), 0.3), {"generator": _gen(lib)}


@sample("aten::bernoulli_.Tensor", inplace=True)
def bernoulli_tensor(make, lib):
    return (make(3, 4), make(4, low=0, high=1)), {"generator": _gen(lib)}


@sample("aten::bernoulli_.float", inplace=True)
def bernoulli_float(make, lib):
    return (make(3, 4, dtype="int64"), 0.7), {"generator": _gen(lib)}


@sample("aten::multinomial")
def multinomial_replacement(make, lib):
    return (make(2, 5, low=0, high=1), 8, True), {"generator": _gen(lib)}


@sample("aten::multinomial")
def multinomial_no_replacement(make, lib):
    return (make(6, low=0.1, high=1), 3), {"generator": _gen(lib)}


@sample("aten::rand", random=True)
def rand(make, lib):
    return ([2, 3],), {"device": _dev(make)}


@sample("aten::rand.generator")
def rand_generator(make, lib):
    return ([2, 3],), {"generator": _gen(lib), "dtype": lib.float64, "device": _dev(make)}


@sample("aten::rand.out", random=True)
def rand_out(make, lib):
    return ([4],), {"out": make(0)}


@sample("aten::randn", random=True)
def randn(make, lib):
    return ([3, 2],), {"device": _dev(make)}


@sample("aten::randn.generator")
def randn_generator(make, lib):
    return ([7],), {"generator": _gen(lib), "device": _dev(make)}


@sample("aten::randn.out", random=True)
def randn_out(make, lib):
    return ([2, 2],), {"out": make(0, dtype="float64")}


@sample("aten::randint", random=True)
def randint(make, lib):
    return (10, [3, 3]), {"device": _dev(make)}


@sample("aten::randint.generator")
def randint_generator(make, lib):
    return (10, [6]), {"generator": _gen(lib), "dtype": lib.int32, "device": _dev(make)}


@sample("aten::randint.low", random=True)
def randint_low(make, lib):
    return (-4, 4, [5]), {"device": _dev(make)}


@sample("aten::randint.low_generator")
def randint_low_generator(make, lib):
    return (-4, 4, [5]), {"generator": _gen(lib), "device": _dev(make)}


@sample("aten::randint.out", random=True)
def randint_out(make, lib):
    return (3, [4]), {"out": make(0, dtype="int64")}


@sample("aten::randint.low_out", random=True)
def randint_low_out(make, lib):
    return (1, 3, [4]), {"out": make(0, dtype="int64")}


@sample("aten::randperm", random=True)
def randperm(make, lib):
    return (7,), {"device": _dev(make)}


@sample("aten::randperm.generator")
def randperm_generator(make, lib):
    return (9,), {"generator": _gen(lib), "device": _dev(make)}


@sample("aten::randperm.out", random=True)
def randperm_out(make, lib):
    return (5,), {"out": make(0, dtype="int64")}


@sample("aten::randperm.generator_out")
def randperm_generator_out(make, lib):
    return (6,), {"generator": _gen(lib), "out": make(0, dtype="int32")}


@sample("aten::rand_like", random=True)
def rand_like(make, lib):
    return (make(3, 4).t(),), {}


@sample("aten::randn_like", random=True)
def randn_like(make, lib):
    return (make(2, 3),), {"dtype": lib.float64}


@sample("aten::randint_like", random=True)
def randint_like(make, lib):
    return (make(2, 3, dtype="int32"), 5), {}


@sample("aten::randint_like.generator")
def randint_like_generator(make, lib):
    return (make(3, 4, dtype="int64").t(), 7), {"generator": _gen(lib)}


# high is a CPU tensor on every device (torch reads it with item())
@sample("aten::randint_like.Tensor", random=True)
def randint_like_tensor(make, lib):
    return (make(2, 3, dtype="int16"), lib.tensor(9)), {}


@sample("aten::randint_like.Tensor_generator")
def randint_like_tensor_generator(make, lib):
    return (make(2, 5), lib.tensor(6.5)), {"generator": _gen(lib), "dtype": lib.int64}


@sample("aten::randint_like.low_dtype", random=True)
def randint_like_low(make, lib):
    return (make(2, 3), -3, 3), {"dtype": lib.int64}


@sample("aten::randint_like.low_generator_dtype")
def randint_like_low_generator(make, lib):
    return (make(4, 3, dtype="int32"), -10, 10), {"generator": _gen(lib, 5)}

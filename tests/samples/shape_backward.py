"""Samples for the backward ops of views and indexing (select_backward ...),
index_add and put, plus extra samples of view/indexing/join ops whose
gradients need covering (duplicate indices, broadcasting, negative dims)."""
from ..opinfo import sample


def _idx(lib, values):
    return lib.tensor(values, dtype=lib.int64)


# -- backward ops -----------------------------------------------------------------------

@sample("aten::select_backward")
def select_backward(make, lib):
    return (make(3, 5), [3, 4, 5], 1, 2), {}


@sample("aten::select_backward")
def select_backward_negative(make, lib):
    return (make(4, 2, noncontiguous=True), [4, 2, 3], -1, -3), {}


@sample("aten::slice_backward")
def slice_backward(make, lib):
    return (make(2, 3), [2, 7], 1, 1, 9223372036854775807, 2), {}


@sample("aten::slice_backward")
def slice_backward_negative(make, lib):
    return (make(2, 4), [5, 4], 0, -4, -2, 1), {}


@sample("aten::diagonal_backward")
def diagonal_backward(make, lib):
    return (make(3), [3, 4], 1, 0, 1), {}


@sample("aten::diagonal_backward")
def diagonal_backward_batched(make, lib):
    return (make(4, 2), [3, 4, 5], 1, 2, 0), {}


@sample("aten::unfold_backward")
def unfold_backward_overlapping(make, lib):
    return (make(3, 4, 3), [3, 9], 1, 3, 2), {}


@sample("aten::unfold_backward")
def unfold_backward_gaps(make, lib):
    return (make(3, 4, 2), [8, 4], 0, 2, 3), {}


@sample("aten::masked_scatter_backward")
def masked_scatter_backward(make, lib):
    return (make(3, 4), make(4, dtype="bool"), [5, 3]), {}


# -- index_add, put -----------------------------------------------------------------------

@sample("aten::index_add")
def index_add_duplicates(make, lib):
    return (make(4, 3), 0, _idx(lib, [3, 0, 3, 3]), make(4, 3)), {"alpha": 2}


@sample("aten::index_add")
def index_add_dim1(make, lib):
    return (make(2, 5, noncontiguous=True), -1, _idx(lib, [4, 1]), make(2, 2)), {}


@sample("aten::index_add")
def index_add_zero_dim(make, lib):
    return (make(), 0, _idx(lib, [0]), make()), {}


@sample("aten::index_add_", inplace=True)
def index_add_inplace(make, lib):
    return (make(3, 4), 1, _idx(lib, [0, 0]), make(3, 2)), {}


@sample("aten::index_add.out")
def index_add_out(make, lib):
    return (make(3, 2), 0, _idx(lib, [2]), make(1, 2)), {"out": make(3, 2)}


@sample("aten::put")
def put(make, lib):
    return (make(3, 4), _idx(lib, [[0, 11], [-2, 5]]), make(2, 2)), {}


@sample("aten::put")
def put_accumulate_noncontiguous(make, lib):
    return (make(3, 4).t(), _idx(lib, [1, 1, 7]), make(3)), {"accumulate": True}


@sample("aten::put_", inplace=True)
def put_inplace(make, lib):
    return (make(2, 3), _idx(lib, [4, 0]), make(2)), {"accumulate": True}


@sample("aten::put.out")
def put_out(make, lib):
    return (make(2, 3), _idx(lib, [5]), make(1)), {"out": make(2, 3)}


# -- more samples of forward ops, for their gradients --------------------------------------

@sample("aten::index.Tensor")
def index_duplicates(make, lib):
    return (make(4, 3), [_idx(lib, [0, 2, 0, 0]), None]), {}


@sample("aten::index.Tensor")
def index_two_tensors_broadcast(make, lib):
    return (make(3, 4, 2), [_idx(lib, [[0], [2]]), None, _idx(lib, [1, 1, 0])]), {}


@sample("aten::index_put")
def index_put_broadcast_values(make, lib):
    return (make(4, 3), [_idx(lib, [1, 3])], make(3)), {}


@sample("aten::index_put")
def index_put_accumulate_duplicates(make, lib):
    return (make(4, 3), [None, _idx(lib, [2, 2])], make(4, 1)), {"accumulate": True}


@sample("aten::index_select")
def index_select_duplicates(make, lib):
    return (make(3, 4), -2, _idx(lib, [2, 2, 0])), {}


@sample("aten::gather")
def gather_duplicates(make, lib):
    return (make(2, 3), 0, _idx(lib, [[1, 1, 1], [0, 1, 1]])), {}


@sample("aten::take")
def take_duplicates(make, lib):
    return (make(2, 3), _idx(lib, [4, 4, 0])), {}


@sample("aten::expand")
def expand_new_and_size1_dims(make, lib):
    return (make(3, 1), [2, 3, 4]), {}


@sample("aten::permute")
def permute_negative_dims(make, lib):
    return (make(2, 3, 4), [-1, 0, -2]), {}


@sample("aten::squeeze.dims")
def squeeze_dims_mixed(make, lib):
    return (make(1, 3, 1, 2), [0, 1, -2]), {}


@sample("aten::squeeze")
def squeeze_all(make, lib):
    return (make(1, 3, 1),), {}


@sample("aten::select.int")
def select_negative(make, lib):
    return (make(3, 4, noncontiguous=True), -1, -2), {}


@sample("aten::slice.Tensor")
def slice_open_start(make, lib):
    return (make(5, 3), 0, None, 4, 3), {}


@sample("aten::diagonal")
def diagonal_dims(make, lib):
    return (make(3, 2, 4), 1, 2, 0), {}


@sample("aten::unfold")
def unfold_overlapping(make, lib):
    return (make(2, 7), 1, 3, 2), {}


@sample("aten::split.Tensor")
def split_uneven(make, lib):
    return (make(5, 2), 2), {}


@sample("aten::split_with_sizes")
def split_with_sizes_negative_dim(make, lib):
    return (make(2, 6), [1, 0, 5], -1), {}


@sample("aten::unbind.int")
def unbind_last_dim(make, lib):
    return (make(2, 3), -1), {}


@sample("aten::cat")
def cat_negative_dim_three(make, lib):
    return ([make(2, 1), make(2, 3), make(2, 2, dtype="float64")], -1), {}


@sample("aten::stack")
def stack_negative_dim(make, lib):
    return ([make(2, 3), make(2, 3)], -2), {}


@sample("aten::constant_pad_nd")
def constant_pad_nd_negative(make, lib):
    return (make(3, 5), [-1, 2, 1, 0], 1.5), {}


@sample("aten::_to_copy")
def to_copy_double(make, lib):
    return (make(2, 3),), {"dtype": lib.float64}


@sample("aten::roll")
def roll_repeated_dim(make, lib):
    return (make(3, 4), [1, -2, 1], [0, 1, 0]), {}


@sample("aten::repeat")
def repeat_leading_and_ones(make, lib):
    return (make(2, 3), [2, 1, 3]), {}


@sample("aten::flip")
def flip_negative(make, lib):
    return (make(2, 3, 2), [-1, 0]), {}


@sample("aten::masked_fill.Tensor")
def masked_fill_tensor_value_broadcast_mask(make, lib):
    return (make(3, 4), make(4, dtype="bool"), make()), {}


@sample("aten::masked_scatter")
def masked_scatter_broadcast(make, lib):
    return (make(2, 3), make(3, dtype="bool"), make(7)), {}


@sample("aten::scatter.src")
def scatter_src_same_shape(make, lib):
    return (make(3, 4), 1, _idx(lib, [[0, 1], [3, 2], [1, 1]]), make(3, 2)), {}


@sample("aten::fill.Tensor")
def fill_tensor_requires_grad_value(make, lib):
    return (make(2, 3), make()), {}


# -- complex views ------------------------------------------------------------------------

@sample("aten::view_as_real")
def view_as_real(make, lib):
    return (make(3, 4, dtype="complex64")[1:, ::2],), {}


@sample("aten::view_as_real")
def view_as_real_zero_dim(make, lib):
    return (make(dtype="complex128"),), {}


@sample("aten::view_as_complex")
def view_as_complex(make, lib):
    return (make(3, 4, 2)[1:],), {}


@sample("aten::view_as_complex")
def view_as_complex_transposed(make, lib):
    return (make(5, 3, 2, dtype="float64").transpose(0, 1),), {}


@sample("aten::real")
def real_complex(make, lib):
    return (make(2, 3, dtype="complex64"),), {}


@sample("aten::real")
def real_of_real(make, lib):
    return (make(2, 3),), {}

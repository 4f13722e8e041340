"""Samples for views, shape ops, indexing and joining."""
from ..opinfo import EXEMPT, sample

EXEMPT["aten::nonzero"] = ("data-dependent output shape: no Meta kernel in PyTorch either "
                           "(tested in tests/test_indexing.py)")
EXEMPT["aten::masked_select"] = ("data-dependent output shape: no Meta kernel in PyTorch either "
                                 "(tested in tests/test_indexing.py)")


def _idx(lib, values):
    return lib.tensor(values, dtype=lib.int64)


# -- views ----------------------------------------------------------------------------

@sample("aten::view")
def view_basic(make, lib):
    return (make(2, 3, 4), [4, -1]), {}


@sample("aten::view")
def view_noncontiguous(make, lib):
    return (make(4, 6).t().unsqueeze(1), [3, 2, 1, 4]), {}


@sample("aten::view.dtype")
def view_dtype_same_size(make, lib):
    return (make(2, 4), lib.int32), {}


@sample("aten::view.dtype")
def view_dtype_wider(make, lib):
    return (make(2, 4, dtype="int16", low=-100, high=100), lib.int32), {}


@sample("aten::_unsafe_view")
def unsafe_view(make, lib):
    return (make(2, 6), [3, 4]), {}


@sample("aten::_reshape_alias")
def reshape_alias(make, lib):
    return (make(2, 6), [3, 4], [4, 1]), {}


@sample("aten::reshape")
def reshape_view(make, lib):
    return (make(2, 3, 4), [6, -1]), {}


@sample("aten::reshape")
def reshape_copy(make, lib):
    return (make(3, 4).t(), [12]), {}


@sample("aten::reshape_as")
def reshape_as(make, lib):
    return (make(3, 4, noncontiguous=True), make(2, 6)), {}


@sample("aten::view_as")
def view_as(make, lib):
    return (make(3, 4), make(2, 6)), {}


@sample("aten::flatten.using_ints")
def flatten(make, lib):
    return (make(2, 3, 4, 5), 1, 2), {}


@sample("aten::flatten.using_ints")
def flatten_noncontiguous(make, lib):
    return (make(2, 3, 4, noncontiguous=True),), {}


@sample("aten::unflatten.int")
def unflatten(make, lib):
    return (make(2, 12), 1, [3, -1]), {}


@sample("aten::transpose.int")
def transpose(make, lib):
    return (make(2, 3, 4), 0, -1), {}


@sample("aten::t")
def t(make, lib):
    return (make(3, 4),), {}


@sample("aten::swapaxes")
def swapaxes(make, lib):
    return (make(2, 3, 4), 0, 1), {}


@sample("aten::swapdims")
def swapdims(make, lib):
    return (make(2, 3, 4), 2, 1), {}


@sample("aten::permute")
def permute(make, lib):
    return (make(2, 3, 4, noncontiguous=True), [2, 0, 1]), {}


@sample("aten::movedim.intlist")
def movedim_list(make, lib):
    return (make(2, 3, 4, 5), [0, 1], [3, 0]), {}


@sample("aten::movedim.int")
def movedim_int(make, lib):
    return (make(2, 3, 4), 0, -1), {}


@sample("aten::moveaxis.intlist")
def moveaxis_list(make, lib):
    return (make(2, 3, 4), [2], [0]), {}


@sample("aten::moveaxis.int")
def moveaxis_int(make, lib):
    return (make(2, 3, 4), 1, 2), {}


@sample("aten::unsqueeze")
def unsqueeze(make, lib):
    return (make(2, 3, noncontiguous=True), 1), {}


@sample("aten::unsqueeze")
def unsqueeze_end(make, lib):
    return (make(2, 3), -1), {}


@sample("aten::squeeze")
def squeeze(make, lib):
    return (make(1, 3, 1, 2),), {}


@sample("aten::squeeze.dim")
def squeeze_dim(make, lib):
    return (make(1, 3, 1, 2), 2), {}


@sample("aten::squeeze.dims")
def squeeze_dims(make, lib):
    return (make(1, 3, 1, 2), [0, 1, -2]), {}


@sample("aten::select.int")
def select(make, lib):
    return (make(3, 4, 5), 1, -2), {}


@sample("aten::slice.Tensor")
def slice_step(make, lib):
    return (make(5, 6), 1, 1, 100, 2), {}


@sample("aten::slice.Tensor")
def slice_negative(make, lib):
    return (make(5, 6), 0, -3), {}


@sample("aten::narrow")
def narrow(make, lib):
    return (make(4, 5), 1, -3, 2), {}


@sample("aten::split.Tensor")
def split(make, lib):
    return (make(7, 3), 3), {}


@sample("aten::split_with_sizes")
def split_with_sizes(make, lib):
    return (make(3, 7), [2, 0, 5], 1), {}


@sample("aten::chunk")
def chunk(make, lib):
    return (make(7, 3), 3), {}


@sample("aten::tensor_split.sections")
def tensor_split_sections(make, lib):
    return (make(7, 3), 3), {}


@sample("aten::tensor_split.indices")
def tensor_split_indices(make, lib):
    return (make(3, 8), [1, 5, -1], 1), {}


# the sections or indices tensor stays on the CPU (torch requires it there)
@sample("aten::tensor_split.tensor_indices_or_sections")
def tensor_split_tensor_sections(make, lib):
    return (make(7, 3), lib.tensor(3)), {}


@sample("aten::tensor_split.tensor_indices_or_sections")
def tensor_split_tensor_indices(make, lib):
    return (make(3, 8), lib.tensor([1, 5, -1]), -1), {}


@sample("aten::unbind.int")
def unbind(make, lib):
    return (make(2, 3, 4), 1), {}


@sample("aten::diagonal")
def diagonal(make, lib):
    return (make(3, 4, 5), 1, 2, 0), {}


@sample("aten::diagonal")
def diagonal_negative(make, lib):
    return (make(4, 4), -1), {}


@sample("aten::unfold")
def unfold(make, lib):
    return (make(3, 8), 1, 3, 2), {}


@sample("aten::as_strided")
def as_strided(make, lib):
    return (make(3, 4), [2, 2], [1, 2], 1), {}


@sample("aten::alias")
def alias(make, lib):
    return (make(2, 3, noncontiguous=True),), {}


@sample("aten::lift_fresh")
def lift_fresh(make, lib):
    return (make(2, 3),), {}


@sample("aten::resolve_conj")
def resolve_conj(make, lib):
    return (make(2, 3, noncontiguous=True),), {}


@sample("aten::detach")
def detach(make, lib):
    return (make(2, 3),), {}


@sample("aten::expand")
def expand(make, lib):
    return (make(3, 1), [2, -1, 4]), {}


@sample("aten::expand_as")
def expand_as(make, lib):
    return (make(1, 4), make(3, 4)), {}


@sample("aten::broadcast_tensors")
def broadcast_tensors(make, lib):
    return ([make(2, 1), make(3), make(1, 1)],), {}


# -- copies and memory format ---------------------------------------------------------

@sample("aten::contiguous")
def contiguous(make, lib):
    return (make(3, 4).t(),), {}


@sample("aten::contiguous")
def contiguous_channels_last(make, lib):
    return (make(2, 3, 4, 5),), {"memory_format": lib.channels_last}


@sample("aten::clone")
def clone_preserve_permuted(make, lib):
    return (make(2, 3, 4).permute(2, 0, 1),), {}


@sample("aten::clone")
def clone_preserve_sliced(make, lib):
    return (make(4, 3, 2).permute(2, 0, 1)[:, ::2],), {}


@sample("aten::clone")
def clone_contiguous(make, lib):
    return (make(3, 4).t(),), {"memory_format": lib.contiguous_format}


@sample("aten::clone.out")
def clone_out(make, lib):
    return (make(3, 4).t(),), {"out": make(4, 3)}


@sample("aten::copy_", inplace=True)
def copy_broadcast(make, lib):
    return (make(3, 4), make(4)), {}


@sample("aten::copy_", inplace=True)
def copy_cast(make, lib):
    return (make(3, 4, dtype="int32", noncontiguous=True), make(4, 3).t()), {}


@sample("aten::copy")
def copy(make, lib):
    return (make(2, 3), make(3, dtype="float64")), {}


@sample("aten::resize_", inplace=True, random=True)
def resize_grow(make, lib):
    return (make(2, 3), [4, 5]), {}


@sample("aten::resize_", inplace=True)
def resize_shrink(make, lib):
    return (make(4, 3), [2, 3]), {}


@sample("aten::resize_as_", inplace=True)
def resize_as(make, lib):
    return (make(2, 3), make(3, 2)), {}


@sample("aten::flip")
def flip(make, lib):
    return (make(2, 3, 4), [0, -1]), {}


@sample("aten::flip")
def flip_permuted(make, lib):
    return (make(2, 3, 4).permute(2, 0, 1), [1]), {}


@sample("aten::roll")
def roll_flat(make, lib):
    return (make(3, 4), [5]), {}


@sample("aten::roll")
def roll_dims(make, lib):
    return (make(3, 4), [1, -2], [0, 1]), {}


@sample("aten::repeat")
def repeat(make, lib):
    return (make(2, 3), [2, 1, 3]), {}


@sample("aten::tril")
def tril(make, lib):
    return (make(4, 5), -1), {}


@sample("aten::tril")
def tril_batched(make, lib):
    return (make(2, 3, 4).transpose(1, 2), 1), {}


@sample("aten::tril_", inplace=True)
def tril_inplace(make, lib):
    return (make(4, 4),), {}


@sample("aten::tril.out")
def tril_out(make, lib):
    return (make(3, 4), 1), {"out": make(3, 4)}


@sample("aten::triu")
def triu(make, lib):
    return (make(4, 5), 1), {}


@sample("aten::triu_", inplace=True)
def triu_inplace(make, lib):
    return (make(3, 3), -1), {}


@sample("aten::triu.out")
def triu_out(make, lib):
    return (make(3, 4),), {"out": make(3, 4)}


# -- joining ----------------------------------------------------------------------------

@sample("aten::cat")
def cat_dim0(make, lib):
    return ([make(2, 3), make(4, 3, noncontiguous=True)],), {}


@sample("aten::cat")
def cat_dim1_promote(make, lib):
    return ([make(2, 3), make(2, 1, dtype="float64"), make(2, 2, dtype="int32")], -1), {}


@sample("aten::cat")
def cat_legacy_empty(make, lib):
    return ([make(2, 3), make(0), make(1, 3)],), {}


@sample("aten::cat")
def cat_channels_last(make, lib):
    a = make(2, 3, 4, 5).contiguous(memory_format=lib.channels_last)
    b = make(2, 3, 4, 5).contiguous(memory_format=lib.channels_last)
    return ([a, b], 1), {}


@sample("aten::cat.out")
def cat_out(make, lib):
    return ([make(2, 3), make(1, 3)],), {"out": make(3, 3)}


@sample("aten::_chunk_cat")
def chunk_cat_padded(make, lib):
    return ([make(2, 5), make(2, 3, noncontiguous=True)], 1, 2), {}


@sample("aten::_chunk_cat")
def chunk_cat_ranks(make, lib):
    return ([make(3, 4, 2), make(3, 1), make(3, 7, dtype="float32")], 0, 3), {}


@sample("aten::_chunk_cat")
def chunk_cat_bool(make, lib):
    return ([make(2, 3, dtype="bool"), make(2, 2, dtype="bool")], -1, 3), {}


@sample("aten::_chunk_cat.out")
def chunk_cat_out(make, lib):
    return ([make(2, 5), make(2, 3)], 1, 2), {"out": make(2, 2, 5, dtype="float64")}


@sample("aten::stack")
def stack(make, lib):
    return ([make(2, 3), make(2, 3, noncontiguous=True)], 1), {}


@sample("aten::stack")
def stack_last(make, lib):
    return ([make(2, 3), make(2, 3)], -1), {}


@sample("aten::hstack")
def hstack(make, lib):
    return ([make(2, 3), make(2, 1)],), {}


@sample("aten::vstack")
def vstack(make, lib):
    return ([make(3), make(2, 3)],), {}


# -- indexing ----------------------------------------------------------------------------

@sample("aten::index.Tensor")
def index_adjacent(make, lib):
    return (make(3, 4, 5), [None, _idx(lib, [[0, 3], [1, -1]]), _idx(lib, [2, 4])]), {}


@sample("aten::index.Tensor")
def index_separated(make, lib):
    return (make(3, 4, 5), [_idx(lib, [0, 2]), None, _idx(lib, [[1], [4]])]), {}


@sample("aten::index.Tensor")
def index_transposed(make, lib):
    return (make(3, 4, 5).transpose(0, 2), [None, _idx(lib, [0, 1])]), {}


@sample("aten::index.Tensor")
def index_mask(make, lib):
    return (make(3, 4), [lib.tensor([True, False, True])]), {}


@sample("aten::index_put")
def index_put(make, lib):
    return (make(3, 4), [_idx(lib, [0, 2])], make(4)), {}


@sample("aten::index_put")
def index_put_accumulate(make, lib):
    return (make(3, 4), [_idx(lib, [0, 0, 2]), _idx(lib, [1, 1, 3])], make(3)), \
        {"accumulate": True}


@sample("aten::index_put_", inplace=True)
def index_put_inplace(make, lib):
    return (make(3, 4), [None, _idx(lib, [3, 1])], make(3, 1)), {}


@sample("aten::_unsafe_masked_index")
def unsafe_masked_index_out_of_range_masked(make, lib):
    return (make(5, 3), make(4, 1, dtype="bool"), [_idx(lib, [4, 9, -1, 0])], 2.5), {}


@sample("aten::_unsafe_masked_index")
def unsafe_masked_index_second_dim(make, lib):
    return (make(3, 4, dtype="int64", low=-9, high=9), make(3, 2, dtype="bool"),
            [None, _idx(lib, [1, -7])], 7), {}


@sample("aten::_unsafe_masked_index_put_accumulate")
def unsafe_masked_index_put_accumulate(make, lib):
    return (make(5, 3), make(4, 1, dtype="bool"), [_idx(lib, [4, 9, 4, -2])], make(4, 3)), {}


@sample("aten::_unsafe_masked_index_put_accumulate")
def unsafe_masked_index_put_accumulate_second_dim(make, lib):
    return (make(2, 4), make(3, dtype="bool"), [None, _idx(lib, [0, 6, 0])], make(2, 3)), {}


@sample("aten::index_select")
def index_select(make, lib):
    return (make(3, 4, noncontiguous=True), 1, _idx(lib, [3, 0, 0])), {}


@sample("aten::index_select.out")
def index_select_out(make, lib):
    return (make(3, 4), 0, _idx(lib, [2, 1])), {"out": make(2, 4)}


@sample("aten::gather")
def gather(make, lib):
    return (make(3, 4), 1, _idx(lib, [[0, 1], [3, 3], [2, 0]])), {}


@sample("aten::gather.out")
def gather_out(make, lib):
    return (make(3, 4), 0, _idx(lib, [[0, 1, 2, 0]])), {"out": make(1, 4)}


_SCATTER_INDEX = [[0, 1, 2], [1, 2, 0]]


@sample("aten::scatter.src")
def scatter_src(make, lib):
    return (make(3, 5), 0, _idx(lib, _SCATTER_INDEX), make(2, 4)), {}


@sample("aten::scatter.value")
def scatter_value(make, lib):
    return (make(3, 5), 1, _idx(lib, _SCATTER_INDEX), 2.5), {}


@sample("aten::scatter.reduce")
def scatter_reduce(make, lib):
    return (make(3, 5), 0, _idx(lib, [[0, 0, 2], [0, 2, 2]]), make(2, 3)), {"reduce": "add"}


@sample("aten::scatter.value_reduce")
def scatter_value_reduce(make, lib):
    return (make(3, 5), 1, _idx(lib, _SCATTER_INDEX), 2.0), {"reduce": "multiply"}


@sample("aten::scatter_.src", inplace=True)
def scatter_src_inplace(make, lib):
    return (make(3, 5), 1, _idx(lib, _SCATTER_INDEX), make(3, 3)), {}


@sample("aten::scatter_.value", inplace=True)
def scatter_value_inplace(make, lib):
    return (make(3, 5), 0, _idx(lib, _SCATTER_INDEX), -1.0), {}


@sample("aten::scatter_.reduce", inplace=True)
def scatter_reduce_inplace(make, lib):
    return (make(3, 5), 0, _idx(lib, _SCATTER_INDEX), make(2, 3)), {"reduce": "multiply"}


@sample("aten::scatter_.value_reduce", inplace=True)
def scatter_value_reduce_inplace(make, lib):
    return (make(3, 5), 0, _idx(lib, _SCATTER_INDEX), 3.0), {"reduce": "add"}


@sample("aten::scatter_add")
def scatter_add(make, lib):
    return (make(3, 5), 0, _idx(lib, [[0, 0, 2], [0, 2, 2]]), make(2, 3)), {}


@sample("aten::scatter_add_", inplace=True)
def scatter_add_inplace(make, lib):
    return (make(3, 5), 1, _idx(lib, [[0, 0], [4, 4], [1, 2]]), make(3, 2)), {}


@sample("aten::take")
def take(make, lib):
    return (make(3, 4, noncontiguous=True), _idx(lib, [[0, 5], [11, -1]])), {}


@sample("aten::masked_scatter")
def masked_scatter(make, lib):
    return (make(2, 3), lib.tensor([[True, False, True], [False, False, True]]), make(6)), {}


# -- in-place metadata ops (the first argument is compared after the call) --

@sample("aten::detach_", inplace=True)
def detach_inplace(make, lib):
    return (make(2, 3),), {}


@sample("aten::unsqueeze_", inplace=True)
def unsqueeze_inplace(make, lib):
    return (make(2, 3, noncontiguous=True), -1), {}


@sample("aten::squeeze_", inplace=True)
def squeeze_inplace(make, lib):
    return (make(1, 3, 1),), {}


@sample("aten::squeeze_.dim", inplace=True)
def squeeze_dim_inplace(make, lib):
    return (make(3, 1, 2), 1), {}


@sample("aten::squeeze_.dims", inplace=True)
def squeeze_dims_inplace(make, lib):
    return (make(1, 3, 1), [0, 2]), {}


@sample("aten::transpose_", inplace=True)
def transpose_inplace(make, lib):
    return (make(2, 3, 4), 0, 2), {}


@sample("aten::t_", inplace=True)
def t_inplace(make, lib):
    return (make(2, 3),), {}


@sample("aten::as_strided_", inplace=True)
def as_strided_inplace(make, lib):
    return (make(4, 4), [2, 2], [1, 4], 1), {}

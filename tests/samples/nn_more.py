"""Samples for issue 16's torch.nn ops: 3-d convolution and pooling, max unpooling,
fractional max pooling (kernels/conv.py, pooling.py), 3-d / bicubic / antialiased
upsampling (upsample.py), sliding blocks (fold.py) and bags of embeddings
(embedding_bag.py)."""
from ..opinfo import sample


def _long(make, lib, values):
    t = lib.tensor(values, dtype=lib.int64)
    return t if make.device == "cpu" else t.to(make.device)


def _named(name, fn):
    fn.__name__ = fn.__qualname__ = name
    return fn


# -- 3-d convolution -----------------------------------------------------------------------

@sample("aten::conv3d", atol=1e-4, rtol=1e-4)
def conv3d_strided_dilated(make, lib):
    return (make(2, 4, 5, 6, 5), make(6, 2, 2, 3, 2), make(6), [1, 2, 1], [1, 0, 1], [2, 1, 1],
            2), {}


@sample("aten::conv3d", atol=1e-4, rtol=1e-4)
def conv3d_unbatched(make, lib):
    return (make(3, 4, 4, 4), make(2, 3, 3, 3, 3)), {}


@sample("aten::conv3d.padding", atol=1e-4, rtol=1e-4)
def conv3d_padding_same(make, lib):
    return (make(1, 2, 4, 5, 3), make(3, 2, 3, 3, 1), None, [1, 1, 1], "same"), {}


@sample("aten::conv_transpose3d.input", atol=1e-4, rtol=1e-4)
def conv_transpose3d_output_padding(make, lib):
    return (make(2, 4, 3, 4, 3), make(4, 3, 2, 3, 2), make(6), [2, 1, 2], [0, 1, 1], [1, 0, 1],
            2), {}


# -- 3-d pooling -----------------------------------------------------------------------------

@sample("aten::max_pool3d_with_indices")
def max_pool3d_with_indices_padded(make, lib):
    return (make(2, 3, 5, 6, 7), [2, 3, 2], [1, 2, 2], [1, 1, 0]), {}


@sample("aten::max_pool3d_with_indices")
def max_pool3d_with_indices_dilated_ceil(make, lib):
    return (make(3, 6, 5, 7), [2, 2, 2], [2, 2, 2], [0, 0, 0], [1, 2, 2], True), {}


@sample("aten::max_pool3d")
def max_pool3d_default_stride(make, lib):
    return (make(1, 2, 4, 4, 6), [2]), {}


@sample("aten::avg_pool3d")
def avg_pool3d_padded(make, lib):
    return (make(2, 3, 5, 6, 7), [2, 3, 2], [1, 2, 2], [1, 1, 0]), {}


@sample("aten::avg_pool3d")
def avg_pool3d_exclude_pad_ceil(make, lib):
    return (make(3, 5, 6, 7), [3], [2], [1], True, False), {}


@sample("aten::avg_pool3d")
def avg_pool3d_divisor(make, lib):
    return (make(1, 2, 4, 4, 4, dtype="float64"), [2, 2, 2], [], [0], False, True, 3), {}


@sample("aten::adaptive_avg_pool3d")
def adaptive_avg_pool3d_uneven(make, lib):
    return (make(2, 3, 5, 6, 7), [3, 4, 2]), {}


@sample("aten::adaptive_avg_pool3d")
def adaptive_avg_pool3d_global(make, lib):
    return (make(2, 3, 5, 4, 3), [1, 1, 1]), {}


@sample("aten::_adaptive_avg_pool3d")
def adaptive_avg_pool3d_grow(make, lib):
    return (make(3, 4, 5, 3), [5, 2, 4]), {}


@sample("aten::adaptive_max_pool3d")
def adaptive_max_pool3d_uneven(make, lib):
    return (make(2, 3, 5, 6, 7), [3, 4, 2]), {}


@sample("aten::adaptive_max_pool3d")
def adaptive_max_pool3d_unbatched(make, lib):
    return (make(2, 4, 3, 5), [2, 3, 5]), {}


def _pool3d_backward_samples():
    def max_pool(make, lib):
        x = make(2, 3, 5, 6, 7)
        args = ([2, 3, 2], [1, 2, 2], [1, 1, 0], [1, 1, 1], False)
        out, indices = lib.ops.aten.max_pool3d_with_indices.default(x, *args)
        return (make(*out.shape), x, *args, indices), {}

    def avg_pool(make, lib):
        x = make(2, 3, 5, 6, 7)
        args = ([3, 2, 2], [2, 2, 1], [1, 0, 1], True, False, None)
        out = lib.ops.aten.avg_pool3d.default(x, *args)
        return (make(*out.shape), x, *args), {}

    def adaptive_avg(make, lib):
        return (make(2, 3, 3, 4, 2), make(2, 3, 5, 6, 7)), {}

    def adaptive_max(make, lib):
        x = make(3, 5, 6, 7)
        indices = lib.ops.aten.adaptive_max_pool3d.default(x, [3, 4, 2])[1]
        return (make(3, 3, 4, 2), x, indices), {}

    for op, fn in (("max_pool3d_with_indices_backward", max_pool),
                   ("avg_pool3d_backward", avg_pool),
                   ("_adaptive_avg_pool3d_backward", adaptive_avg),
                   ("adaptive_max_pool3d_backward", adaptive_max)):
        sample(f"aten::{op}")(_named(f"{op}_basic", fn))


_pool3d_backward_samples()


# -- max unpooling, fractional max pooling ----------------------------------------------------

@sample("aten::max_unpool2d")
def max_unpool2d_from_pool(make, lib):
    x = make(2, 3, 6, 6)
    out, indices = lib.ops.aten.max_pool2d_with_indices.default(x, [2, 2], [2, 2])
    return (out, indices, [6, 7]), {}


@sample("aten::max_unpool3d")
def max_unpool3d_from_pool(make, lib):
    x = make(2, 2, 4, 4, 6)
    out, indices = lib.ops.aten.max_pool3d_with_indices.default(x, [2, 2, 2], [2, 2, 2])
    return (out, indices, [4, 5, 6], [2, 2, 2], [0, 0, 0]), {}


def _samples(make, lib, n, c, k):
    return make(n, c, k, low=0, high=1)


@sample("aten::fractional_max_pool2d")
def fractional_max_pool2d_batched(make, lib):
    return (make(2, 3, 9, 8), [2, 3], [4, 5], _samples(make, lib, 2, 3, 2)), {}


@sample("aten::fractional_max_pool2d")
def fractional_max_pool2d_unbatched(make, lib):
    return (make(3, 7, 7), [3, 3], [5, 2], _samples(make, lib, 1, 3, 2)), {}


@sample("aten::fractional_max_pool3d")
def fractional_max_pool3d_batched(make, lib):
    return (make(2, 2, 6, 7, 8), [2, 2, 3], [3, 4, 4], _samples(make, lib, 2, 2, 3)), {}


@sample("aten::fractional_max_pool2d_backward")
def fractional_max_pool2d_backward_basic(make, lib):
    x = make(2, 3, 9, 8)
    indices = lib.ops.aten.fractional_max_pool2d.default(x, [2, 3], [4, 5],
                                                         _samples(make, lib, 2, 3, 2))[1]
    return (make(2, 3, 4, 5), x, [2, 3], [4, 5], indices), {}


@sample("aten::fractional_max_pool3d_backward")
def fractional_max_pool3d_backward_basic(make, lib):
    x = make(2, 2, 6, 7, 8)
    indices = lib.ops.aten.fractional_max_pool3d.default(x, [2, 2, 3], [3, 4, 4],
                                                         _samples(make, lib, 2, 2, 3))[1]
    return (make(2, 2, 3, 4, 4), x, [2, 2, 3], [3, 4, 4], indices), {}


# -- upsampling ---------------------------------------------------------------------------------

@sample("aten::upsample_nearest3d")
def upsample_nearest3d_mixed(make, lib):
    return (make(2, 3, 3, 4, 5), [6, 3, 7]), {}


@sample("aten::upsample_nearest3d")
def upsample_nearest3d_uint8_scales(make, lib):
    return (make(1, 2, 3, 4, 2, dtype="uint8", low=0, high=200), [4, 6, 5], 1.5, 1.7, 2.5), {}


@sample("aten::upsample_nearest3d.vec")
def upsample_nearest3d_vec_factors(make, lib):
    return (make(1, 2, 3, 4, 5), None, [1.5, 0.7, 2.0]), {}


@sample("aten::_upsample_nearest_exact3d")
def upsample_nearest_exact3d_mixed(make, lib):
    return (make(2, 3, 3, 4, 5), [6, 3, 7]), {}


@sample("aten::_upsample_nearest_exact3d.vec")
def upsample_nearest_exact3d_vec_size(make, lib):
    return (make(1, 2, 3, 4, 5), [5, 5, 5], None), {}


@sample("aten::upsample_trilinear3d", atol=1e-5, rtol=1e-5)
def upsample_trilinear3d_grow(make, lib):
    return (make(2, 2, 3, 4, 5), [5, 7, 3], False), {}


@sample("aten::upsample_trilinear3d", atol=1e-5, rtol=1e-5)
def upsample_trilinear3d_align_corners(make, lib):
    return (make(1, 2, 4, 3, 5, dtype="float64"), [2, 6, 5], True), {}


@sample("aten::upsample_trilinear3d.vec", atol=1e-5, rtol=1e-5)
def upsample_trilinear3d_vec_factors(make, lib):
    return (make(1, 2, 3, 4, 5), None, False, [1.5, 2.0, 0.6]), {}


@sample("aten::upsample_bicubic2d", atol=1e-5, rtol=1e-5)
def upsample_bicubic2d_grow(make, lib):
    return (make(2, 3, 4, 5), [7, 9], False), {}


@sample("aten::upsample_bicubic2d", atol=1e-5, rtol=1e-5)
def upsample_bicubic2d_align_corners_shrink(make, lib):
    return (make(1, 2, 7, 8, dtype="float64"), [4, 3], True), {}


@sample("aten::upsample_bicubic2d")
def upsample_bicubic2d_uint8(make, lib):
    return (make(1, 3, 5, 6, dtype="uint8", low=0, high=256), [9, 4], False), {}


@sample("aten::upsample_bicubic2d.vec", atol=1e-5, rtol=1e-5)
def upsample_bicubic2d_vec_factors(make, lib):
    return (make(1, 2, 4, 5), None, False, [1.7, 0.8]), {}


def _aa_samples(op):
    def shrink(make, lib):
        return (make(2, 3, 9, 11), [4, 5], False), {}

    def grow_align(make, lib):
        return (make(1, 2, 4, 5, dtype="float64"), [7, 3], op != "_upsample_lanczos2d_aa"), {}

    def uint8(make, lib):
        return (make(1, 3, 8, 7, dtype="uint8", low=0, high=256), [3, 5], False), {}

    def vec(make, lib):
        return (make(1, 2, 9, 8), None, False, [0.4, 0.6]), {}

    def backward(make, lib):
        return (make(2, 3, 4, 5), [4, 5], [2, 3, 9, 11], False), {}

    sample(f"aten::{op}", atol=1e-5, rtol=1e-5)(_named(f"{op}_shrink", shrink))
    sample(f"aten::{op}", atol=1e-5, rtol=1e-5)(_named(f"{op}_grow_align", grow_align))
    sample(f"aten::{op}")(_named(f"{op}_uint8", uint8))
    sample(f"aten::{op}.vec", atol=1e-5, rtol=1e-5)(_named(f"{op}_vec", vec))
    sample(f"aten::{op}_backward", atol=1e-5, rtol=1e-5)(_named(f"{op}_backward", backward))


for _op in ("_upsample_bilinear2d_aa", "_upsample_bicubic2d_aa", "_upsample_lanczos2d_aa"):
    _aa_samples(_op)


def _upsample_backward_sample(op, out_size, in_size, *args):
    def backward(make, lib):
        return (make(*in_size[:2], *out_size), out_size, in_size, *args), {}
    sample(f"aten::{op}", atol=1e-5, rtol=1e-5)(_named(f"{op}_grow", backward))


_upsample_backward_sample("upsample_nearest3d_backward", [5, 4, 6], [2, 2, 3, 2, 4])
_upsample_backward_sample("_upsample_nearest_exact3d_backward", [3, 6, 2], [1, 2, 4, 3, 3])
_upsample_backward_sample("upsample_trilinear3d_backward", [5, 4, 6], [2, 2, 3, 2, 4], True)
_upsample_backward_sample("upsample_bicubic2d_backward", [7, 5], [2, 2, 4, 3], False)


# -- sliding blocks ------------------------------------------------------------------------------

@sample("aten::im2col")
def im2col_dilated_strided(make, lib):
    return (make(2, 3, 7, 8), [2, 3], [1, 2], [1, 1], [2, 1]), {}


@sample("aten::im2col")
def im2col_unbatched(make, lib):
    return (make(2, 5, 5), [3, 3], [1, 1], [0, 0], [1, 1]), {}


@sample("aten::col2im")
def col2im_overlapping(make, lib):
    return (make(2, 12, 20), [5, 6], [2, 2], [1, 1], [0, 0], [1, 1]), {}


@sample("aten::col2im")
def col2im_unbatched_padded(make, lib):
    return (make(18, 12), [7, 8], [3, 3], [1, 2], [1, 1], [2, 2]), {}


# -- bags of embeddings ----------------------------------------------------------------------

def _bag_args(make, lib, dtype="float32"):
    return (make(6, 3, dtype=dtype), _long(make, lib, [1, 2, 4, 5, 4, 3, 2, 0]),
            _long(make, lib, [0, 3, 3, 5]))


@sample("aten::embedding_bag")
def embedding_bag_mean(make, lib):
    return _bag_args(make, lib), {"mode": 1}


@sample("aten::embedding_bag.padding_idx")
def embedding_bag_padding_idx_sum(make, lib):
    return (*_bag_args(make, lib), False, 0, False, None, False, -2), {}


@sample("aten::_embedding_bag")
def embedding_bag_private_sum_weights(make, lib):
    weight, indices, offsets = _bag_args(make, lib)
    return (weight, indices, offsets, False, 0, False, make(8)), {}


@sample("aten::_embedding_bag")
def embedding_bag_private_max_last_offset(make, lib):
    return (*_bag_args(make, lib, "float64"), False, 2, False, None, True, 4), {}


@sample("aten::_embedding_bag")
def embedding_bag_private_mean_padding(make, lib):
    return (*_bag_args(make, lib), False, 1, False, None, False, 2), {}


@sample("aten::_embedding_bag_forward_only")
def embedding_bag_forward_only_max(make, lib):
    return (*_bag_args(make, lib), False, 2), {}


def _bag_backward(make, lib, mode, scale_grad_by_freq=False, padding_idx=-1):
    weight, indices, offsets = _bag_args(make, lib, "float64")
    _, offset2bag, bag_size, max_indices = lib.ops.aten._embedding_bag.default(
        weight, indices, offsets, scale_grad_by_freq, mode, False, None, False, padding_idx)
    return (make(4, 3, dtype="float64"), indices, offsets, offset2bag, bag_size, max_indices, 6,
            scale_grad_by_freq, mode)


@sample("aten::_embedding_bag_backward")
def embedding_bag_backward_mean_freq(make, lib):
    return (*_bag_backward(make, lib, 1, True), False, None, 2), {}


@sample("aten::_embedding_bag_backward")
def embedding_bag_backward_max(make, lib):
    return (*_bag_backward(make, lib, 2), False, None), {}


@sample("aten::_embedding_bag_dense_backward")
def embedding_bag_dense_backward_sum(make, lib):
    grad, indices, _, offset2bag, bag_size, max_indices, n, freq, mode = _bag_backward(
        make, lib, 0)
    return (grad, indices, offset2bag, bag_size, max_indices, n, freq, mode,
            make(8, dtype="float64")), {}


@sample("aten::_embedding_bag_per_sample_weights_backward")
def embedding_bag_per_sample_weights_backward_padding(make, lib):
    weight, indices, offsets = _bag_args(make, lib)
    offset2bag = lib.ops.aten._embedding_bag.default(weight, indices, offsets, False, 0, False,
                                                     None, False, 4)[1]
    return (make(4, 3), weight, indices, offsets, offset2bag, 0, 4), {}

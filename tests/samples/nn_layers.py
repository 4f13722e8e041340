"""Samples for the layer ops of torch.nn (issue 4 "layers": kernels/norm.py batch/
instance/rms norm, conv.py transposed convolution and 1-d/adaptive pooling,
upsample.py, padding.py, bilinear.py, pixel_shuffle.py, feature/alpha dropout)."""
from ..opinfo import sample


def _long(make, lib, values):
    t = lib.tensor(values, dtype=lib.int64)
    return t if make.device == "cpu" else t.to(make.device)


def _positive(make, *shape):
    return make(*shape, low=0.5, high=2.0)


# -- batch / instance / rms norm ------------------------------------------------------------

@sample("aten::native_batch_norm", atol=1e-4, rtol=1e-4)
def native_batch_norm_train_affine(make, lib):
    return (make(4, 3, 5), make(3), make(3), None, None, True, 0.1, 1e-5), {}


@sample("aten::native_batch_norm", atol=1e-4, rtol=1e-4)
def native_batch_norm_train_running_stats(make, lib):
    return (make(3, 2, 3, 4), None, None, make(2), _positive(make, 2), True, 0.3, 1e-3), {}


@sample("aten::native_batch_norm", atol=1e-4, rtol=1e-4)
def native_batch_norm_eval(make, lib):
    return (make(5, 3), make(3), make(3), make(3), _positive(make, 3), False, 0.1, 1e-5), {}


@sample("aten::native_batch_norm", atol=1e-4, rtol=1e-4)
def native_batch_norm_float64_2d(make, lib):
    return (make(6, 4, dtype="float64"), None, make(4, dtype="float64"), None, None, True, 0.1,
            1e-5), {}


@sample("aten::native_batch_norm", atol=3e-2, rtol=3e-2)
def native_batch_norm_bf16_float_params(make, lib):
    return (make(4, 3, 5, dtype="bfloat16"), make(3), make(3), None, None, True, 0.1, 1e-5), {}


@sample("aten::native_batch_norm_backward", atol=1e-4, rtol=1e-4)
def native_batch_norm_backward_train(make, lib):
    x = make(4, 3, 5)
    mean = x.mean((0, 2))
    invstd = (x.var((0, 2), unbiased=False) + 1e-5).rsqrt()
    return (make(4, 3, 5), x, make(3), None, None, mean, invstd, True, 1e-5,
            [True, True, True]), {}


@sample("aten::native_batch_norm_backward", atol=1e-4, rtol=1e-4)
def native_batch_norm_backward_eval(make, lib):
    return (make(5, 3, 2, 2), make(5, 3, 2, 2), None, make(3), _positive(make, 3), None, None,
            False, 1e-5, [True, False, True]), {}


@sample("aten::_native_batch_norm_legit", atol=1e-4, rtol=1e-4)
def native_batch_norm_legit_train(make, lib):
    return (make(4, 3, 5), make(3), make(3), make(3), _positive(make, 3), True, 0.3, 1e-5), {}


@sample("aten::_native_batch_norm_legit", atol=1e-4, rtol=1e-4)
def native_batch_norm_legit_eval(make, lib):
    return (make(5, 3), None, make(3), make(3), _positive(make, 3), False, 0.1, 1e-5), {}


@sample("aten::_native_batch_norm_legit.no_stats", atol=1e-4, rtol=1e-4)
def native_batch_norm_legit_no_stats(make, lib):
    return (make(3, 2, 3, 4), make(2), None, True, 0.1, 1e-3), {}


@sample("aten::_native_batch_norm_legit.out", atol=1e-4, rtol=1e-4)
def native_batch_norm_legit_out(make, lib):
    return (make(4, 3, 5), make(3), make(3), make(3), _positive(make, 3), True, 0.3, 1e-5), {
        "out": make(4, 3, 5), "save_mean": make(3), "save_invstd": make(3)}


@sample("aten::_native_batch_norm_legit.no_stats_out", atol=1e-4, rtol=1e-4)
def native_batch_norm_legit_no_stats_out(make, lib):
    return (make(4, 3), None, make(3), True, 0.1, 1e-5), {
        "out": make(4, 3), "save_mean": make(3), "save_invstd": make(3)}


@sample("aten::_native_batch_norm_legit_no_training", atol=1e-4, rtol=1e-4)
def native_batch_norm_legit_no_training(make, lib):
    return (make(4, 3, 2), make(3), make(3), make(3), _positive(make, 3), 0.1, 1e-5), {}


@sample("aten::_batch_norm_with_update", atol=1e-4, rtol=1e-4)
def batch_norm_with_update(make, lib):
    return (make(4, 3, 2, 2), make(3), make(3), make(3), _positive(make, 3), 0.1, 1e-5), {}


@sample("aten::_batch_norm_with_update.out", atol=1e-4, rtol=1e-4)
def batch_norm_with_update_out(make, lib):
    return (make(4, 3), None, None, make(3), _positive(make, 3), 0.1, 1e-5), {
        "out": make(4, 3), "save_mean": make(3), "save_invstd": make(3),
        "reserve": make(2, dtype="uint8", low=0)}


@sample("aten::_batch_norm_no_update", atol=1e-4, rtol=1e-4)
def batch_norm_no_update(make, lib):
    return (make(4, 3, 5), make(3), None, make(3), _positive(make, 3), 0.1, 1e-5), {}


@sample("aten::batch_norm_backward", atol=1e-4, rtol=1e-4)
def batch_norm_backward_update(make, lib):
    x = make(4, 3, 5)
    mean = x.mean((0, 2))
    invstd = (x.var((0, 2), unbiased=False) + 1e-5).rsqrt()
    reserve = lib.empty(0, dtype=lib.uint8)
    return (make(4, 3, 5), x, make(3), make(3), _positive(make, 3), mean, invstd, True, 1e-5,
            [True, True, True], reserve), {}


@sample("aten::batch_norm_backward", atol=1e-4, rtol=1e-4)
def batch_norm_backward_no_update(make, lib):
    reserve = lib.empty(0, dtype=lib.uint8)
    return (make(5, 3, 2), make(5, 3, 2), make(3), make(3), _positive(make, 3), None, None,
            False, 1e-5, [True, False, True], reserve), {}


@sample("aten::batch_norm", atol=1e-4, rtol=1e-4)
def batch_norm_train(make, lib):
    return (make(4, 3, 2, 2), make(3), make(3), None, None, True, 0.1, 1e-5, False), {}


@sample("aten::batch_norm", atol=1e-4, rtol=1e-4)
def batch_norm_eval(make, lib):
    return (make(4, 3), None, None, make(3), _positive(make, 3), False, 0.1, 1e-5, True), {}


@sample("aten::batch_norm")
def batch_norm_empty(make, lib):
    return (make(0, 3), make(3), make(3), None, None, True, 0.1, 1e-5, False), {}


@sample("aten::_batch_norm_impl_index", atol=1e-4, rtol=1e-4)
def batch_norm_impl_index_train(make, lib):
    return (make(4, 3, 5), make(3), None, None, None, True, 0.1, 1e-5, False), {}


@sample("aten::instance_norm", atol=1e-4, rtol=1e-4)
def instance_norm_affine(make, lib):
    return (make(2, 3, 6), make(3), make(3), None, None, True, 0.1, 1e-5, False), {}


@sample("aten::instance_norm", atol=1e-4, rtol=1e-4)
def instance_norm_running_stats_eval(make, lib):
    return (make(2, 3, 2, 3), None, None, make(3), _positive(make, 3), False, 0.1, 1e-5,
            False), {}


@sample("aten::rms_norm", atol=1e-5, rtol=1e-5)
def rms_norm_weight(make, lib):
    return (make(2, 3, 4), [4], make(4)), {}


@sample("aten::rms_norm", atol=1e-5, rtol=1e-5)
def rms_norm_two_dims_eps(make, lib):
    return (make(2, 3, 4, dtype="float64"), [3, 4]), {"eps": 1e-3}


@sample("aten::rms_norm", atol=1e-2, rtol=1e-2)
def rms_norm_bf16(make, lib):
    return (make(3, 8, dtype="bfloat16"), [8], make(8, dtype="bfloat16")), {}


# -- transposed convolution ------------------------------------------------------------------

@sample("aten::conv_transpose1d", atol=1e-4, rtol=1e-4)
def conv_transpose1d_stride(make, lib):
    return (make(2, 4, 6), make(4, 3, 3), make(3), [2], [1], [1]), {}


@sample("aten::conv_transpose1d", atol=1e-4, rtol=1e-4)
def conv_transpose1d_groups_dilation_unbatched(make, lib):
    return (make(4, 5), make(4, 2, 2)), {"groups": 2, "dilation": [2]}


@sample("aten::conv_transpose2d.input", atol=1e-4, rtol=1e-4)
def conv_transpose2d_output_padding(make, lib):
    return (make(1, 2, 4, 3), make(2, 3, 3, 2), None, [2, 1], [1, 0], [1, 0]), {}


@sample("aten::conv_transpose2d.input", atol=1e-4, rtol=1e-4)
def conv_transpose2d_groups(make, lib):
    return (make(2, 4, 3, 3), make(4, 1, 2, 2), make(2), [1, 1], [0, 0], [0, 0], 2, [1, 2]), {}


# -- 1-d and adaptive pooling ------------------------------------------------------------------

@sample("aten::max_pool1d")
def max_pool1d_pad(make, lib):
    return (make(2, 3, 9), [3], [2], [1]), {}


@sample("aten::max_pool1d")
def max_pool1d_unbatched_ceil(make, lib):
    return (make(3, 8), [2], [], [0], [2], True), {}


@sample("aten::max_pool1d_with_indices")
def max_pool1d_with_indices_pool(make, lib):
    return (make(2, 2, 7), [3], [2], [1], [1], True), {}


@sample("aten::avg_pool1d")
def avg_pool1d_exclude_pad(make, lib):
    return (make(2, 3, 9), [3], [2], [1], False, False), {}


@sample("aten::avg_pool1d")
def avg_pool1d_ceil_unbatched(make, lib):
    return (make(3, 8), [3], [], [0], True), {}


@sample("aten::adaptive_avg_pool1d")
def adaptive_avg_pool1d_pool(make, lib):
    return (make(2, 3, 10), [4]), {}


@sample("aten::adaptive_avg_pool1d")
def adaptive_avg_pool1d_to_one(make, lib):
    return (make(3, 7), [1]), {}


@sample("aten::adaptive_max_pool1d")
def adaptive_max_pool1d_pool(make, lib):
    return (make(2, 3, 10), [4]), {}


@sample("aten::adaptive_max_pool2d")
def adaptive_max_pool2d_pool(make, lib):
    return (make(2, 3, 7, 5), [3, 2]), {}


@sample("aten::adaptive_max_pool2d")
def adaptive_max_pool2d_unbatched_grow(make, lib):
    return (make(2, 3, 4), [5, 4]), {}


@sample("aten::adaptive_max_pool2d_backward")
def adaptive_max_pool2d_backward_pool(make, lib):
    x = make(2, 2, 5, 5)
    out, indices = lib.nn.functional.adaptive_max_pool2d(x, [3, 2], return_indices=True)
    return (make(2, 2, 3, 2), x, indices), {}


# -- upsampling ------------------------------------------------------------------------------

@sample("aten::upsample_nearest1d")
def upsample_nearest1d_grow(make, lib):
    return (make(2, 3, 5), [11]), {}


@sample("aten::upsample_nearest1d")
def upsample_nearest1d_scale(make, lib):
    return (make(2, 3, 5), [7], 1.5), {}


@sample("aten::upsample_nearest1d.vec")
def upsample_nearest1d_vec_factor(make, lib):
    return (make(1, 2, 6), None, [0.5]), {}


@sample("aten::upsample_nearest2d")
def upsample_nearest2d_double(make, lib):
    return (make(2, 3, 3, 4), [6, 8]), {}


@sample("aten::upsample_nearest2d")
def upsample_nearest2d_uint8_shrink(make, lib):
    return (make(1, 2, 7, 6, dtype="uint8", low=0, high=200), [3, 4]), {}


@sample("aten::upsample_nearest2d.vec")
def upsample_nearest2d_vec_size(make, lib):
    return (make(2, 1, 3, 3), [5, 7], None), {}


@sample("aten::upsample_nearest2d.vec")
def upsample_nearest2d_vec_factors(make, lib):
    return (make(1, 2, 4, 3), None, [1.7, 2.5]), {}


@sample("aten::_upsample_nearest_exact1d")
def upsample_nearest_exact1d_grow(make, lib):
    return (make(2, 3, 5), [8]), {}


@sample("aten::_upsample_nearest_exact1d.vec")
def upsample_nearest_exact1d_vec(make, lib):
    return (make(2, 3, 5), None, [2.3]), {}


@sample("aten::_upsample_nearest_exact2d")
def upsample_nearest_exact2d_mixed(make, lib):
    return (make(2, 3, 5, 4), [7, 3]), {}


@sample("aten::_upsample_nearest_exact2d.vec")
def upsample_nearest_exact2d_vec(make, lib):
    return (make(1, 3, 5, 4), [3, 9], None), {}


@sample("aten::upsample_linear1d")
def upsample_linear1d_grow(make, lib):
    return (make(2, 3, 5), [9], False), {}


@sample("aten::upsample_linear1d")
def upsample_linear1d_align_corners(make, lib):
    return (make(2, 3, 6), [4], True), {}


@sample("aten::upsample_linear1d.vec")
def upsample_linear1d_vec_factor(make, lib):
    return (make(2, 2, 5), None, False, [1.6]), {}


@sample("aten::upsample_bilinear2d", atol=1e-5, rtol=1e-5)
def upsample_bilinear2d_grow(make, lib):
    return (make(2, 3, 4, 5), [7, 9], False), {}


@sample("aten::upsample_bilinear2d", atol=1e-5, rtol=1e-5)
def upsample_bilinear2d_align_corners_shrink(make, lib):
    return (make(1, 2, 6, 7), [4, 3], True), {}


@sample("aten::upsample_bilinear2d", atol=1e-5, rtol=1e-5)
def upsample_bilinear2d_scales(make, lib):
    return (make(1, 2, 4, 4, dtype="float64"), [6, 10], False, 1.5, 2.5), {}


@sample("aten::upsample_bilinear2d.vec", atol=1e-5, rtol=1e-5)
def upsample_bilinear2d_vec_factors(make, lib):
    return (make(2, 2, 3, 5), None, True, [2.0, 0.6]), {}


def _named(name, fn):
    fn.__name__ = fn.__qualname__ = name
    return fn


def _upsample_backward_sample(op, out_size, in_size, *args):
    def backward(make, lib):
        return (make(*in_size[:2], *out_size), out_size, in_size, *args), {}
    sample(f"aten::{op}", atol=1e-5, rtol=1e-5)(_named(f"{op}_grow", backward))


_upsample_backward_sample("upsample_nearest1d_backward", [7], [2, 3, 3])
_upsample_backward_sample("upsample_nearest2d_backward", [5, 4], [2, 2, 3, 2])
_upsample_backward_sample("_upsample_nearest_exact1d_backward", [5], [1, 3, 3])
_upsample_backward_sample("_upsample_nearest_exact2d_backward", [3, 6], [1, 2, 4, 3])
_upsample_backward_sample("upsample_linear1d_backward", [8], [2, 3, 5], False)
_upsample_backward_sample("upsample_bilinear2d_backward", [5, 7], [2, 2, 3, 4], True)


@sample("aten::upsample_bilinear2d_backward", atol=1e-5, rtol=1e-5)
def upsample_bilinear2d_backward_scales(make, lib):
    return (make(1, 2, 6, 5), [6, 5], [1, 2, 4, 3], False, 1.5, 1.7), {}


# -- padding ---------------------------------------------------------------------------------

def _pad_samples(k, shape, padding, negative):
    for prefix in ("reflection", "replication"):
        op = f"{prefix}_pad{k}d"

        def forward(make, lib):
            return (make(*shape), padding), {}

        def forward_unbatched_crop(make, lib):
            return (make(*shape[1:]), negative), {}

        def backward(make, lib):
            x = make(*shape)
            return (make(*lib.nn.functional.pad(x, padding).shape), x, padding), {}

        sample(f"aten::{op}")(_named(f"{op}_basic", forward))
        sample(f"aten::{op}")(_named(f"{op}_unbatched_crop", forward_unbatched_crop))
        sample(f"aten::{op}_backward")(_named(f"{op}_backward_basic", backward))


_pad_samples(1, (2, 3, 5), [2, 3], [-1, 2])
_pad_samples(2, (1, 2, 3, 4), [1, 2, 2, 0], [-1, 2, 1, -1])
_pad_samples(3, (1, 1, 3, 3, 3), [1, 2, 0, 1, 2, 1], [1, -1, 1, 0, -1, 2])


@sample("aten::pad")
def pad_reflect(make, lib):
    return (make(1, 2, 4, 5), [1, 2, 2, 1]), {"mode": "reflect"}


@sample("aten::pad")
def pad_replicate_1d(make, lib):
    return (make(3, 6), [3, 1]), {"mode": "replicate"}


@sample("aten::pad")
def pad_circular(make, lib):
    return (make(1, 2, 3, 4), [1, 2, 3, 0]), {"mode": "circular"}


@sample("aten::pad")
def pad_constant_value(make, lib):
    return (make(2, 3, 4), [1, 2], "constant", 2.5), {}


@sample("aten::_pad_enum")
def pad_enum_replicate_3d(make, lib):
    return (make(1, 1, 3, 2, 3), [1, 1, 2, 0, 1, 2], 1), {}


@sample("aten::_pad_circular")
def pad_circular_negative(make, lib):
    return (make(2, 3, 6), [-2, 3]), {}


@sample("aten::_pad_circular")
def pad_circular_two_dims(make, lib):
    return (make(1, 2, 3, 4), [2, 1, 0, 3]), {}


# -- bilinear ----------------------------------------------------------------------------------

@sample("aten::bilinear", atol=1e-4, rtol=1e-4)
def bilinear_bias(make, lib):
    return (make(4, 3), make(4, 5), make(2, 3, 5), make(2)), {}


@sample("aten::bilinear", atol=1e-4, rtol=1e-4)
def bilinear_batched(make, lib):
    return (make(2, 3, 2), make(2, 3, 4), make(5, 2, 4)), {}


@sample("aten::_trilinear", atol=1e-4, rtol=1e-4)
def trilinear_bilinear_layout(make, lib):
    return (make(4, 3), make(2, 3, 5), make(4, 5), [1, 3], [0], [1, 2], [2, 3]), {}


@sample("aten::_trilinear", atol=1e-4, rtol=1e-4)
def trilinear_keep_dim(make, lib):
    return (make(4, 3), make(2, 3, 5), make(4, 5), [1, 3], [0], [1, 2], [2]), {}


# -- pixel shuffle ----------------------------------------------------------------------------

@sample("aten::pixel_shuffle")
def pixel_shuffle_batched(make, lib):
    return (make(2, 8, 3, 2), 2), {}


@sample("aten::pixel_shuffle")
def pixel_shuffle_extra_batch_dims(make, lib):
    return (make(2, 1, 9, 2, 2), 3), {}


@sample("aten::pixel_unshuffle")
def pixel_unshuffle_batched(make, lib):
    return (make(2, 2, 4, 6), 2), {}


# -- dropout variants (random: compared on shape / dtype / strides) ---------------------------

def _dropout_samples(op):
    def train(make, lib):
        return (make(4, 3, 5), 0.4, True), {}

    def eval_mode(make, lib):
        return (make(4, 3, 5), 0.4, False), {}

    sample(f"aten::{op}", random=True)(_named(f"{op}_train", train))
    sample(f"aten::{op}")(_named(f"{op}_eval", eval_mode))
    sample(f"aten::{op}_", inplace=True, random=True)(_named(f"{op}_inplace", train))


for _op in ("feature_dropout", "alpha_dropout", "feature_alpha_dropout"):
    _dropout_samples(_op)


# -- embedding max_norm -----------------------------------------------------------------------

@sample("aten::embedding_renorm_", inplace=True)
def embedding_renorm_inplace(make, lib):
    return (make(6, 3), _long(make, lib, [[1, 4], [1, 0]]), 2.0, 2.0), {}


@sample("aten::embedding_renorm_", inplace=True)
def embedding_renorm_l1(make, lib):
    return (make(5, 4), _long(make, lib, [2, 3]), 1.5, 1.0), {}

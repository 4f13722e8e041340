"""Samples for the backward ops of linear-algebra and neural-network ops
(kernels/nn_backward.py).  Saved forward results (indices, mean/rstd, masks,
total_weight) come from the library's own forward op, as in a real backward."""
from ..opinfo import sample


def _long(make, lib, values):
    t = lib.tensor(values, dtype=lib.int64)
    return t if make.device == "cpu" else t.to(make.device)


def _aten(lib):
    return lib.ops.aten


# -- softmax ---------------------------------------------------------------------------

@sample("aten::_softmax_backward_data")
def softmax_backward_data_dim1(make, lib):
    y = _aten(lib)._softmax.default(make(3, 4), 1, False)
    return (make(3, 4), y, 1, lib.float32), {}


@sample("aten::_softmax_backward_data")
def softmax_backward_data_3d_neg_dim(make, lib):
    y = _aten(lib)._softmax.default(make(2, 3, 4, dtype="float64"), -3, False)
    return (make(2, 3, 4, dtype="float64"), y, -3, lib.float64), {}


@sample("aten::_softmax_backward_data")
def softmax_backward_data_0d(make, lib):
    return (make(()), _aten(lib)._softmax.default(make(()), 0, False), 0, lib.float32), {}


@sample("aten::_softmax_backward_data.out")
def softmax_backward_data_out(make, lib):
    y = _aten(lib)._softmax.default(make(3, 4), 0, False)
    return (make(3, 4), y, 0, lib.float32), {"grad_input": make(3, 4)}


@sample("aten::_log_softmax_backward_data")
def log_softmax_backward_data_dim0(make, lib):
    y = _aten(lib)._log_softmax.default(make(3, 4), 0, False)
    return (make(3, 4), y, 0, lib.float32), {}


@sample("aten::_log_softmax_backward_data")
def log_softmax_backward_data_noncontiguous(make, lib):
    y = _aten(lib)._log_softmax.default(make(2, 5, noncontiguous=True), -1, False)
    return (make(2, 5, noncontiguous=True), y, -1, lib.float32), {}


@sample("aten::_log_softmax_backward_data.out")
def log_softmax_backward_data_out(make, lib):
    y = _aten(lib)._log_softmax.default(make(3, 4), 1, False)
    return (make(3, 4), y, 1, lib.float32), {"out": make(3, 4)}


# -- pooling ---------------------------------------------------------------------------

def _max_pool_args(make, lib, shape, kernel, stride, padding, dilation, ceil_mode):
    x = make(*shape)
    out, indices = _aten(lib).max_pool2d_with_indices.default(x, kernel, stride, padding,
                                                              dilation, ceil_mode)
    return (make(*out.shape), x, kernel, stride, padding, dilation, ceil_mode, indices)


@sample("aten::max_pool2d_with_indices_backward")
def max_pool2d_backward_overlapping(make, lib):
    return _max_pool_args(make, lib, (2, 3, 7, 7), [3, 3], [2, 2], [1, 1], [1, 1], False), {}


@sample("aten::max_pool2d_with_indices_backward")
def max_pool2d_backward_dilation_ceil(make, lib):
    return _max_pool_args(make, lib, (3, 8, 7), [2, 3], [2, 1], [1, 0], [2, 2], True), {}


@sample("aten::max_pool2d_with_indices_backward.grad_input")
def max_pool2d_backward_out(make, lib):
    args = _max_pool_args(make, lib, (1, 2, 4, 4), [2, 2], [2, 2], [0, 0], [1, 1], False)
    return args, {"grad_input": make(1, 2, 4, 4)}


@sample("aten::avg_pool2d_backward")
def avg_pool2d_backward_exclude_pad(make, lib):
    return (make(2, 3, 4, 4), make(2, 3, 7, 7), [3, 3], [2, 2], [1, 1], False, False, None), {}


@sample("aten::avg_pool2d_backward")
def avg_pool2d_backward_ceil_include_pad(make, lib):
    return (make(3, 4, 4), make(3, 6, 7), [2, 3], [2, 2], [1, 1], True, True, None), {}


@sample("aten::avg_pool2d_backward")
def avg_pool2d_backward_divisor_default_stride(make, lib):
    return (make(2, 2, 3, 3), make(2, 2, 6, 6), [2, 2], [], [0, 0], False, True, 3), {}


@sample("aten::avg_pool2d_backward.grad_input")
def avg_pool2d_backward_out(make, lib):
    return (make(1, 2, 2, 2), make(1, 2, 4, 4), [2, 2], [2, 2], [0, 0], False, True, None), \
        {"grad_input": make(1, 2, 4, 4)}


@sample("aten::_adaptive_avg_pool2d_backward")
def adaptive_avg_pool2d_backward_overlapping(make, lib):
    return (make(2, 3, 4, 3), make(2, 3, 7, 5)), {}


@sample("aten::_adaptive_avg_pool2d_backward")
def adaptive_avg_pool2d_backward_3d(make, lib):
    return (make(3, 2, 6), make(3, 6, 6)), {}


@sample("aten::_adaptive_avg_pool2d_backward.out")
def adaptive_avg_pool2d_backward_out(make, lib):
    return (make(1, 2, 2, 3), make(1, 2, 5, 5)), {"out": make(1, 2, 5, 5)}


# -- convolution ---------------------------------------------------------------------------

@sample("aten::_slow_conv2d_backward.output_mask", atol=1e-4, rtol=1e-4)
def _slow_conv2d_backward_all(make, lib):
    # input (2, 3, 6, 5), weight (4, 3, 3, 2), stride (2, 1), padding (1, 0)
    return (make(2, 4, 3, 4, dtype="float64"), make(2, 3, 6, 5, dtype="float64"),
            make(4, 3, 3, 2, dtype="float64"), [3, 2], [2, 1], [1, 0], [True, True, True]), {}


@sample("aten::_slow_conv2d_backward.output_mask", atol=1e-4, rtol=1e-4)
def _slow_conv2d_backward_weight_1x1(make, lib):
    return (make(1, 4, 3, 3), make(1, 2, 3, 3), make(4, 2, 1, 1), [1, 1], [1, 1], [0, 0],
            [False, True, False]), {}


@sample("aten::convolution_backward", atol=1e-4, rtol=1e-4)
def convolution_backward_groups_stride(make, lib):
    # input (2, 4, 6, 6), weight (6, 2, 3, 3), stride (2, 1), padding (1, 0), dilation (1, 2)
    return (make(2, 6, 3, 2), make(2, 4, 6, 6), make(6, 2, 3, 3), [6], [2, 1], [1, 0], [1, 2],
            False, [0, 0], 2, [True, True, True]), {}


@sample("aten::convolution_backward", atol=1e-4, rtol=1e-4)
def convolution_backward_uncovered_rows(make, lib):
    # stride 2 over 8 columns leaves the last input column out of every window
    return (make(2, 4, 3), make(2, 3, 8), make(4, 3, 3), None, [2], [0], [1], False, [0], 1,
            [True, True, False]), {}


@sample("aten::convolution_backward", atol=1e-4, rtol=1e-4)
def convolution_backward_transposed(make, lib):
    return (make(1, 3, 8, 8), make(1, 4, 4, 4), make(4, 3, 3, 3), [3], [2, 2], [1, 1], [1, 1],
            True, [1, 1], 1, [True, True, True]), {}


@sample("aten::convolution_backward", atol=1e-4, rtol=1e-4)
def convolution_backward_transposed_groups_weight_only(make, lib):
    return (make(2, 4, 11), make(2, 4, 4), make(4, 2, 3), None, [2], [0], [2], True, [0], 2,
            [False, True, False]), {}


@sample("aten::convolution_backward", atol=1e-4, rtol=1e-4)
def convolution_backward_channels_last(make, lib):
    x = make(2, 3, 5, 5).contiguous(memory_format=lib.channels_last)
    return (make(2, 4, 5, 5), x, make(4, 3, 3, 3), [4], [1, 1], [1, 1], [1, 1], False, [0, 0],
            1, [True, True, True]), {}


# -- normalization -------------------------------------------------------------------------

def _layer_norm_stats(lib, x, shape, w, b):
    _, mean, rstd = _aten(lib).native_layer_norm.default(x, shape, w, b, 1e-5)
    return mean, rstd


@sample("aten::native_layer_norm_backward", atol=1e-4, rtol=1e-4)
def native_layer_norm_backward_affine(make, lib):
    x, w, b = make(2, 3, 4), make(3, 4), make(3, 4)
    mean, rstd = _layer_norm_stats(lib, x, [3, 4], w, b)
    return (make(2, 3, 4), x, [3, 4], mean, rstd, w, b, [True, True, True]), {}


@sample("aten::native_layer_norm_backward", atol=1e-4, rtol=1e-4)
def native_layer_norm_backward_input_only(make, lib):
    x = make(5, 6, dtype="float64")
    mean, rstd = _layer_norm_stats(lib, x, [6], None, None)
    return (make(5, 6, dtype="float64"), x, [6], mean, rstd, None, None,
            [True, False, False]), {}


@sample("aten::native_layer_norm_backward", atol=1e-4, rtol=1e-4)
def native_layer_norm_backward_params_only(make, lib):
    x, w = make(4, 5), make(5)
    mean, rstd = _layer_norm_stats(lib, x, [5], w, None)
    return (make(4, 5), x, [5], mean, rstd, w, None, [False, True, False]), {}


def _group_norm_stats(lib, x, w, b, n, c, hxw, group):
    _, mean, rstd = _aten(lib).native_group_norm.default(x, w, b, n, c, hxw, group, 1e-5)
    return mean, rstd


@sample("aten::native_group_norm_backward", atol=1e-4, rtol=1e-4)
def native_group_norm_backward_affine(make, lib):
    x, w, b = make(2, 6, 2, 2), make(6), make(6)
    mean, rstd = _group_norm_stats(lib, x, w, b, 2, 6, 4, 3)
    return (make(2, 6, 2, 2), x, mean, rstd, w, 2, 6, 4, 3, [True, True, True]), {}


@sample("aten::native_group_norm_backward", atol=1e-4, rtol=1e-4)
def native_group_norm_backward_no_weight(make, lib):
    x = make(3, 4, 5, dtype="float64")
    mean, rstd = _group_norm_stats(lib, x, None, None, 3, 4, 5, 2)
    return (make(3, 4, 5, dtype="float64"), x, mean, rstd, None, 3, 4, 5, 2,
            [True, False, False]), {}


# -- embedding / dropout -----------------------------------------------------------------

@sample("aten::embedding_dense_backward")
def embedding_dense_backward_repeats(make, lib):
    return (make(2, 3, 4), _long(make, lib, [[0, 5, 2], [2, 2, 0]]), 7, -1, False), {}


@sample("aten::embedding_dense_backward")
def embedding_dense_backward_padding_scaled(make, lib):
    return (make(5, 3, dtype="float64"), _long(make, lib, [1, 3, 1, 1, 0]), 4, 1, True), {}


@sample("aten::embedding_dense_backward.out")
def embedding_dense_backward_out(make, lib):
    return (make(3, 2), _long(make, lib, [2, 0, 2]), 3, -1, False), {"out": make(3, 2)}


@sample("aten::embedding_backward")
def embedding_backward_dense(make, lib):
    return (make(4, 3), _long(make, lib, [1, 0, 1, 3]), 5, 0, False, False), {}


@sample("aten::native_dropout_backward")
def native_dropout_backward_bool_mask(make, lib):
    return (make(4, 5), make(4, 5, dtype="bool"), 2.0), {}


@sample("aten::native_dropout_backward")
def native_dropout_backward_broadcast_mask(make, lib):
    return (make(3, 4, dtype="float64"), make(4, dtype="bool"), 1.25), {}


@sample("aten::native_dropout_backward.out")
def native_dropout_backward_out(make, lib):
    return (make(4, 5), make(4, 5, dtype="bool"), 0.5), {"out": make(4, 5)}


# -- losses ----------------------------------------------------------------------------------

@sample("aten::mse_loss_backward")
def mse_loss_backward_mean(make, lib):
    return (make(()), make(3, 4), make(3, 4), 1), {}


@sample("aten::mse_loss_backward")
def mse_loss_backward_none_broadcast_target(make, lib):
    return (make(3, 4), make(3, 4), make(4), 0), {}


@sample("aten::mse_loss_backward.grad_input")
def mse_loss_backward_out(make, lib):
    return (make(()), make(3, 4), make(3, 4), 2), {"grad_input": make(3, 4)}


@sample("aten::smooth_l1_loss_backward")
def smooth_l1_loss_backward_sum(make, lib):
    return (make(()), make(3, 4), make(3, 4), 2, 0.5), {}


@sample("aten::smooth_l1_loss_backward")
def smooth_l1_loss_backward_none_beta0(make, lib):
    return (make(3, 4), make(3, 4), make(3, 4), 0, 0.0), {}


@sample("aten::smooth_l1_loss_backward.grad_input")
def smooth_l1_loss_backward_out(make, lib):
    return (make(()), make(3, 4), make(3, 4), 1, 1.0), {"grad_input": make(3, 4)}


@sample("aten::huber_loss_backward")
def huber_loss_backward_mean(make, lib):
    return (make(()), make(3, 4), make(3, 4), 1, 0.7), {}


@sample("aten::huber_loss_backward")
def huber_loss_backward_none(make, lib):
    return (make(3, 4, dtype="float64"), make(3, 4, dtype="float64"),
            make(3, 4, dtype="float64"), 0, 1.5), {}


@sample("aten::huber_loss_backward.out")
def huber_loss_backward_out(make, lib):
    return (make(()), make(3, 4), make(3, 4), 2, 1.0), {"grad_input": make(3, 4)}


@sample("aten::binary_cross_entropy_backward")
def binary_cross_entropy_backward_weighted_mean(make, lib):
    return (make(()), make(3, 4, low=0.05, high=0.95), make(3, 4, low=0, high=1), make(3, 4),
            1), {}


@sample("aten::binary_cross_entropy_backward")
def binary_cross_entropy_backward_none(make, lib):
    return (make(3, 4), make(3, 4, low=0.05, high=0.95), make(3, 4, low=0, high=1)), \
        {"reduction": 0}


@sample("aten::binary_cross_entropy_backward.grad_input")
def binary_cross_entropy_backward_out(make, lib):
    return (make(()), make(3, 4, low=0.05, high=0.95), make(3, 4, low=0, high=1), None, 2), \
        {"grad_input": make(3, 4)}


@sample("aten::nll_loss_backward")
def nll_loss_backward_weighted_mean_ignore(make, lib):
    x, t, w = make(4, 5), _long(make, lib, [1, 0, 4, 0]), make(5, low=0.5, high=2)
    total = _aten(lib).nll_loss_forward.default(x, t, w, 1, 0)[1]
    return (make(()), x, t, w, 1, 0, total), {}


@sample("aten::nll_loss_backward")
def nll_loss_backward_none(make, lib):
    x, t = make(3, 5), _long(make, lib, [2, -100, 4])
    total = _aten(lib).nll_loss_forward.default(x, t, None, 0, -100)[1]
    return (make(3), x, t, None, 0, -100, total), {}


@sample("aten::nll_loss_backward")
def nll_loss_backward_1d_sum(make, lib):
    x, t = make(5), _long(make, lib, 3)
    total = _aten(lib).nll_loss_forward.default(x, t, None, 2, -100)[1]
    return (make(()), x, t, None, 2, -100, total), {}


@sample("aten::nll_loss_backward.grad_input")
def nll_loss_backward_out(make, lib):
    x, t = make(3, 5), _long(make, lib, [1, 0, 4])
    total = _aten(lib).nll_loss_forward.default(x, t, None, 1, -100)[1]
    return (make(()), x, t, None, 1, -100, total), {"grad_input": make(3, 5)}


@sample("aten::nll_loss2d_backward")
def nll_loss2d_backward_none(make, lib):
    x, t = make(2, 3, 2, 2), _long(make, lib, [[[0, 1], [2, 0]], [[1, 1], [2, 2]]])
    total = _aten(lib).nll_loss2d_forward.default(x, t, None, 0, 1)[1]
    return (make(2, 2, 2), x, t, None, 0, 1, total), {}


@sample("aten::nll_loss2d_backward")
def nll_loss2d_backward_weighted_mean(make, lib):
    x, t = make(2, 3, 2, 2), _long(make, lib, [[[0, 1], [2, 0]], [[1, 1], [2, 2]]])
    w = make(3, low=0.5, high=2)
    total = _aten(lib).nll_loss2d_forward.default(x, t, w, 1, -100)[1]
    return (make(()), x, t, w, 1, -100, total), {}


@sample("aten::nll_loss2d_backward.grad_input")
def nll_loss2d_backward_out(make, lib):
    x, t = make(1, 3, 1, 2), _long(make, lib, [[[0, 2]]])
    total = _aten(lib).nll_loss2d_forward.default(x, t, None, 2, -100)[1]
    return (make(()), x, t, None, 2, -100, total), {"grad_input": make(1, 3, 1, 2)}

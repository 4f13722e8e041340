"""Samples for linear-algebra and neural-network ops (kernels/blas.py, conv.py,
norm.py, loss.py)."""
from ..opinfo import sample


def _long(make, lib, values):
    t = lib.tensor(values, dtype=lib.int64)
    return t if make.device == "cpu" else t.to(make.device)


# -- matrix products -------------------------------------------------------------------

@sample("aten::mm")
def mm_basic(make, lib):
    return (make(3, 4), make(4, 5)), {}


@sample("aten::mm")
def mm_transposed(make, lib):
    return (make(4, 3).t(), make(5, 4).t()), {}


@sample("aten::mm", atol=1e-2, rtol=1e-2)
def mm_bf16(make, lib):
    return (make(3, 8, dtype="bfloat16"), make(8, 2, dtype="bfloat16")), {}


@sample("aten::mm")
def mm_int(make, lib):
    return (make(3, 4, dtype="int64"), make(4, 2, dtype="int64")), {}


@sample("aten::mm.out")
def mm_out(make, lib):
    return (make(3, 4), make(4, 5)), {"out": make(3, 5)}


@sample("aten::bmm")
def bmm_basic(make, lib):
    return (make(2, 3, 4), make(2, 4, 5, noncontiguous=True)), {}


@sample("aten::bmm.out")
def bmm_out(make, lib):
    return (make(2, 3, 4, dtype="float64"), make(2, 4, 5, dtype="float64")), \
        {"out": make(2, 3, 5, dtype="float64")}


@sample("aten::addmm")
def addmm_bias(make, lib):
    return (make(5), make(3, 4), make(4, 5)), {"beta": 0.5, "alpha": 2}


@sample("aten::addmm")
def addmm_beta0(make, lib):
    return (make(3, 5), make(3, 4), make(4, 5)), {"beta": 0}


@sample("aten::addmm_", inplace=True)
def addmm_inplace(make, lib):
    return (make(3, 5), make(3, 4), make(4, 5)), {"alpha": 3}


@sample("aten::addmm.out")
def addmm_out(make, lib):
    return (make(1, 5), make(3, 4), make(4, 5)), {"out": make(3, 5)}


@sample("aten::baddbmm")
def baddbmm_basic(make, lib):
    return (make(3, 5), make(2, 3, 4), make(2, 4, 5)), {"beta": 2, "alpha": 0.5}


@sample("aten::baddbmm_", inplace=True)
def baddbmm_inplace(make, lib):
    return (make(2, 3, 5), make(2, 3, 4), make(2, 4, 5)), {}


@sample("aten::baddbmm.out")
def baddbmm_out(make, lib):
    return (make(2, 3, 5), make(2, 3, 4), make(2, 4, 5)), {"out": make(2, 3, 5)}


@sample("aten::addmv")
def addmv_basic(make, lib):
    return (make(3), make(3, 4), make(4)), {"beta": 0.5, "alpha": 2}


@sample("aten::addmv_", inplace=True)
def addmv_inplace(make, lib):
    return (make(3), make(3, 4), make(4)), {}


@sample("aten::addmv.out")
def addmv_out(make, lib):
    return (make(1), make(3, 4), make(4)), {"out": make(3)}


@sample("aten::mv")
def mv_basic(make, lib):
    return (make(4, 3).t(), make(4)), {}


@sample("aten::mv.out")
def mv_out(make, lib):
    return (make(3, 4), make(4)), {"out": make(3)}


@sample("aten::dot")
def dot_basic(make, lib):
    return (make(5), make(5)), {}


@sample("aten::dot.out")
def dot_out(make, lib):
    return (make(5, dtype="float64"), make(5, dtype="float64")), \
        {"out": make((), dtype="float64")}


@sample("aten::vdot")
def vdot_complex(make, lib):
    return (make(4, dtype="complex64"), make(4, dtype="complex64")), {}


@sample("aten::vdot.out")
def vdot_out(make, lib):
    return (make(4), make(4)), {"out": make(())}


@sample("aten::outer")
def outer_basic(make, lib):
    return (make(3), make(4, dtype="float64")), {}


@sample("aten::ger")
def ger_basic(make, lib):
    return (make(3), make(4)), {}


@sample("aten::matmul")
def matmul_2d(make, lib):
    return (make(3, 4), make(4, 2)), {}


@sample("aten::matmul")
def matmul_fold(make, lib):
    return (make(2, 3, 4), make(4)), {}


@sample("aten::matmul")
def matmul_broadcast(make, lib):
    return (make(2, 1, 3, 4), make(5, 4, 2)), {}


@sample("aten::matmul")
def matmul_vec_batch(make, lib):
    return (make(4), make(3, 4, 2)), {}


@sample("aten::einsum")
def einsum_bmm(make, lib):
    return ("bij,bjk->bik", [make(2, 3, 4), make(2, 4, 5)]), {}


@sample("aten::einsum")
def einsum_outer_sum(make, lib):
    return ("i,j,ij->", [make(3), make(4), make(3, 4)]), {}


@sample("aten::linear")
def linear_2d(make, lib):
    return (make(4, 3), make(5, 3), make(5)), {}


@sample("aten::linear")
def linear_3d_nobias(make, lib):
    return (make(2, 4, 3), make(5, 3)), {}


# -- convolution / pooling ---------------------------------------------------------------

@sample("aten::convolution", atol=1e-4, rtol=1e-4)
def convolution_basic(make, lib):
    return (make(2, 4, 6, 6), make(6, 2, 3, 3), make(6), [2, 1], [1, 0], [1, 2], False, [0, 0],
            2), {}


@sample("aten::convolution", atol=1e-4, rtol=1e-4)
def convolution_transposed(make, lib):
    return (make(1, 4, 4, 4), make(4, 3, 3, 3), None, [2, 2], [1, 1], [1, 1], True, [1, 1], 1), {}


@sample("aten::convolution.out", atol=1e-4, rtol=1e-4)
def convolution_out(make, lib):
    return (make(2, 3, 7), make(4, 3, 3), None, [1], [1], [1], False, [0], 1), \
        {"out": make(2, 4, 7)}


@sample("aten::_convolution", atol=1e-4, rtol=1e-4)
def _convolution_groups_stride(make, lib):
    return (make(2, 4, 6, 6), make(6, 2, 3, 3), make(6), [2, 1], [1, 0], [1, 1], False, [0, 0],
            2, False, False, True, True), {}


@sample("aten::_convolution", atol=1e-4, rtol=1e-4)
def _convolution_1d_slow(make, lib):
    return (make(1, 3, 7, dtype="float64"), make(4, 3, 3, dtype="float64"), None, [1], [1], [1],
            False, [0], 1, False, False, True, True), {}


@sample("aten::_convolution", atol=1e-4, rtol=1e-4)
def _convolution_transposed(make, lib):
    return (make(2, 4, 4, 4), make(4, 3, 3, 3), make(3), [2, 2], [1, 1], [1, 1], True, [1, 1],
            1, False, False, True, True), {}


@sample("aten::mkldnn_convolution", atol=1e-4, rtol=1e-4)
def mkldnn_convolution_basic(make, lib):
    return (make(2, 3, 6, 6), make(4, 3, 3, 3), make(4), [1, 1], [2, 1], [1, 1], 1), {}


@sample("aten::mkldnn_convolution", atol=1e-4, rtol=1e-4)
def mkldnn_convolution_1d_groups(make, lib):
    return (make(2, 4, 8), make(6, 2, 3), None, [0], [1], [2], 2), {}


@sample("aten::_nnpack_available")
def _nnpack_available_call(make, lib):
    return (), {}


@sample("aten::thnn_conv2d", atol=1e-4, rtol=1e-4)
def thnn_conv2d_bias(make, lib):
    return (make(1, 3, 6, 5, dtype="float64"), make(4, 3, 3, 2, dtype="float64"), [3, 2],
            make(4, dtype="float64"), [2, 1], [1, 0]), {}


@sample("aten::_slow_conv2d_forward", atol=1e-4, rtol=1e-4)
def _slow_conv2d_forward_1x1(make, lib):
    return (make(2, 3, 4, 4), make(5, 3, 1, 1), [1, 1], None, [1, 1], [0, 0]), {}


@sample("aten::conv1d", atol=1e-4, rtol=1e-4)
def conv1d_basic(make, lib):
    return (make(2, 3, 8), make(4, 3, 3), make(4), [2], [1]), {}


@sample("aten::conv1d.padding", atol=1e-4, rtol=1e-4)
def conv1d_same(make, lib):
    return (make(3, 8), make(4, 3, 3)), {"padding": "same", "dilation": [2]}


@sample("aten::conv2d", atol=1e-4, rtol=1e-4)
def conv2d_basic(make, lib):
    return (make(2, 3, 6, 6), make(4, 3, 3, 3), make(4), [1, 1], [1, 1]), {}


@sample("aten::conv2d.padding", atol=1e-4, rtol=1e-4)
def conv2d_valid(make, lib):
    return (make(2, 3, 6, 6), make(4, 3, 3, 3)), {"padding": "valid"}


@sample("aten::max_pool2d")
def max_pool2d_basic(make, lib):
    return (make(2, 3, 7, 7), [3, 3], [2, 2], [1, 1]), {}


@sample("aten::max_pool2d_with_indices")
def max_pool2d_with_indices_ceil(make, lib):
    return (make(3, 7, 6), [2, 3], [2, 2], [0, 1], [1, 1], True), {}


@sample("aten::max_pool2d_with_indices.out")
def max_pool2d_with_indices_out(make, lib):
    return (make(1, 2, 4, 4), [2, 2]), {"out": make(1, 2, 2, 2),
                                        "indices": make(1, 2, 2, 2, dtype="int64")}


@sample("aten::avg_pool2d")
def avg_pool2d_exclude_pad(make, lib):
    return (make(2, 3, 7, 7), [3, 3], [2, 2], [1, 1], True, False), {}


@sample("aten::avg_pool2d")
def avg_pool2d_divisor(make, lib):
    return (make(2, 3, 6, 6), [2, 2]), {"divisor_override": 3}


@sample("aten::avg_pool2d.out")
def avg_pool2d_out(make, lib):
    return (make(1, 2, 4, 4), [2, 2]), {"out": make(1, 2, 2, 2)}


@sample("aten::adaptive_avg_pool2d")
def adaptive_avg_pool2d_basic(make, lib):
    return (make(2, 3, 7, 5), [3, 2]), {}


@sample("aten::_adaptive_avg_pool2d")
def adaptive_avg_pool2d_private(make, lib):
    return (make(3, 6, 6), [4, 4]), {}


@sample("aten::_adaptive_avg_pool2d.out")
def adaptive_avg_pool2d_out(make, lib):
    return (make(1, 2, 5, 5), [2, 3]), {"out": make(1, 2, 2, 3)}


@sample("aten::constant_pad_nd")
def constant_pad_nd_basic(make, lib):
    return (make(2, 3, 4), [1, 2, -1, 0]), {"value": 1.5}


@sample("aten::constant_pad_nd.out")
def constant_pad_nd_out(make, lib):
    return (make(2, 3), [1, 1]), {"out": make(2, 5)}


# -- normalization / embedding / dropout -----------------------------------------------------

@sample("aten::layer_norm", atol=1e-5, rtol=1e-4)
def layer_norm_affine(make, lib):
    return (make(2, 3, 4), [4], make(4), make(4)), {}


@sample("aten::native_layer_norm", atol=1e-5, rtol=1e-4)
def native_layer_norm_2d(make, lib):
    return (make(2, 3, 4), [3, 4], make(3, 4), None, 1e-5), {}


@sample("aten::native_layer_norm.out", atol=1e-5, rtol=1e-4)
def native_layer_norm_out(make, lib):
    return (make(2, 4), [4], None, None, 1e-5), \
        {"out0": make(2, 4), "out1": make(2, 1), "out2": make(2, 1)}


@sample("aten::group_norm", atol=1e-5, rtol=1e-4)
def group_norm_affine(make, lib):
    return (make(2, 4, 3, 3), 2, make(4), make(4)), {}


@sample("aten::native_group_norm", atol=1e-5, rtol=1e-4)
def native_group_norm_basic(make, lib):
    return (make(2, 6, 5), None, None, 2, 6, 5, 3, 1e-5), {}


@sample("aten::native_group_norm.out", atol=1e-5, rtol=1e-4)
def native_group_norm_out(make, lib):
    return (make(2, 4, 3), make(4), make(4), 2, 4, 3, 2, 1e-5), \
        {"out0": make(2, 4, 3), "out1": make(2, 2), "out2": make(2, 2)}


@sample("aten::embedding")
def embedding_basic(make, lib):
    return (make(6, 3), _long(make, lib, [[0, 5], [2, 2]])), {}


@sample("aten::embedding.out")
def embedding_out(make, lib):
    return (make(6, 3), _long(make, lib, [1, 4])), {"out": make(2, 3)}


@sample("aten::dropout", random=True)
def dropout_train(make, lib):
    return (make(4, 5), 0.3, True), {}


@sample("aten::dropout")
def dropout_eval(make, lib):
    return (make(4, 5), 0.3, False), {}


@sample("aten::dropout_", random=True, inplace=True)
def dropout_inplace(make, lib):
    return (make(4, 5), 0.5, True), {}


@sample("aten::native_dropout", random=True)
def native_dropout_train(make, lib):
    return (make(4, 5), 0.5, True), {}


@sample("aten::native_dropout")
def native_dropout_eval(make, lib):
    return (make(4, 5), 0.5, False), {}


@sample("aten::native_dropout.out", random=True)
def native_dropout_out(make, lib):
    return (make(4, 5), 0.2, True), {"out0": make(4, 5),
                                     "out1": make(4, 5, dtype="bool")}


# -- losses --------------------------------------------------------------------------------

@sample("aten::nll_loss_nd")
def nll_loss_nd_3d(make, lib):
    return (make(2, 4, 3), _long(make, lib, [[0, 3, 1], [2, 2, -100]])), {"reduction": 0}


@sample("aten::nll_loss")
def nll_loss_weighted(make, lib):
    return (make(3, 5), _long(make, lib, [1, 0, 4]), make(5, low=0.5, high=2)), {"ignore_index": 0}


@sample("aten::nll_loss_forward")
def nll_loss_forward_sum(make, lib):
    return (make(3, 5), _long(make, lib, [1, 0, 4]), None, 2, -100), {}


@sample("aten::nll_loss_forward")
def nll_loss_forward_1d(make, lib):
    return (make(5), _long(make, lib, 3), None, 1, -100), {}


@sample("aten::nll_loss_forward.output")
def nll_loss_forward_output(make, lib):
    return (make(3, 5), _long(make, lib, [1, 0, 4]), None, 1, -100), \
        {"output": make(()), "total_weight": make(())}


@sample("aten::nll_loss2d")
def nll_loss2d_basic(make, lib):
    return (make(2, 3, 2, 2), _long(make, lib, [[[0, 1], [2, 0]], [[1, 1], [2, 2]]])), {}


@sample("aten::nll_loss2d_forward")
def nll_loss2d_forward_none(make, lib):
    return (make(2, 3, 2, 2), _long(make, lib, [[[0, 1], [2, 0]], [[1, 1], [2, 2]]]), None, 0, 1), {}


@sample("aten::nll_loss2d_forward.output")
def nll_loss2d_forward_output(make, lib):
    return (make(1, 3, 1, 2), _long(make, lib, [[[0, 2]]]), None, 2, -100), \
        {"output": make(()), "total_weight": make(())}


@sample("aten::cross_entropy_loss")
def cross_entropy_indices(make, lib):
    return (make(3, 5), _long(make, lib, [1, 0, 4])), {}


@sample("aten::cross_entropy_loss")
def cross_entropy_smoothing(make, lib):
    return (make(3, 5), _long(make, lib, [1, 0, 4]), make(5, low=0.5, high=2), 2, 0, 0.1), {}


@sample("aten::cross_entropy_loss")
def cross_entropy_probs(make, lib):
    return (make(3, 5), make(3, 5, low=0, high=1)), {"reduction": 0}


@sample("aten::mse_loss")
def mse_loss_mean(make, lib):
    return (make(3, 4), make(3, 4)), {}


@sample("aten::mse_loss.out")
def mse_loss_out(make, lib):
    return (make(3, 4), make(3, 4), 0), {"out": make(3, 4)}


@sample("aten::l1_loss")
def l1_loss_sum(make, lib):
    return (make(3, 4), make(3, 4), 2), {}


@sample("aten::smooth_l1_loss")
def smooth_l1_loss_beta(make, lib):
    return (make(3, 4), make(3, 4), 0, 0.5), {}


@sample("aten::smooth_l1_loss.out")
def smooth_l1_loss_out(make, lib):
    return (make(3, 4), make(3, 4)), {"out": make(())}


@sample("aten::huber_loss")
def huber_loss_delta(make, lib):
    return (make(3, 4), make(3, 4), 1, 0.7), {}


@sample("aten::huber_loss.out")
def huber_loss_out(make, lib):
    return (make(3, 4), make(3, 4), 0), {"out": make(3, 4)}


@sample("aten::binary_cross_entropy")
def binary_cross_entropy_weighted(make, lib):
    return (make(3, 4, low=0, high=1), make(3, 4, low=0, high=1), make(3, 4)), {}


@sample("aten::binary_cross_entropy.out")
def binary_cross_entropy_out(make, lib):
    return (make(3, 4, low=0, high=1), make(3, 4, low=0, high=1), None, 0), {"out": make(3, 4)}


@sample("aten::binary_cross_entropy_with_logits")
def bce_with_logits_pos_weight(make, lib):
    return (make(3, 4), make(3, 4, low=0, high=1), None, make(4, low=0.5, high=2), 0), {}


@sample("aten::binary_cross_entropy_with_logits.out")
def bce_with_logits_out(make, lib):
    return (make(3, 4), make(3, 4, low=0, high=1)), {"out": make(())}

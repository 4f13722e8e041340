"""Autocast op lists: which ops autocast touches, and how (PyTorch 2.13's
``aten/src/ATen/autocast_mode.cpp`` for CPU, and the ``AT_FORALL_*`` macros of
``aten/src/ATen/autocast_mode.h`` for CUDA).

Each device's table maps a cast policy to the op overloads ("name" or
"name.overload") that get an autocast kernel at that device's key
(AutocastCPU, AutocastCUDA).  Ops on no list fall through the key and run in
whatever dtypes they receive.  Checked against 2.13's
``torch._C._dispatch_get_registrations_for_dispatch_key("AutocastCPU")``
(127 registrations) and ``("AutocastCUDA")`` (119).

The policies (what the kernel does to the arguments before calling the op again):

    lower_precision_fp   cast eligible tensors to the autocast dtype (bf16/fp16)
    fp32                 cast eligible tensors to float32
    fp32_set_opt_dtype   leave tensors alone; if the first argument is eligible,
                         fill an unset ``dtype`` argument with float32
    fp32_append_dtype    call the dtype-taking overload (APPEND_DTYPE_OVERLOAD)
                         with float32 (the first argument's dtype if ineligible)
    promote              cast eligible tensors to the widest floating type among
                         them (float64 ones are ignored and left as they are)
    banned               refuse the op (BANNED_MESSAGE)

"Eligible" means a defined floating-point tensor on the autocast device that is
not float64.
"""
from __future__ import annotations

LOWER_PRECISION_FP = "lower_precision_fp"
FP32 = "fp32"
FP32_SET_OPT_DTYPE = "fp32_set_opt_dtype"
FP32_APPEND_DTYPE = "fp32_append_dtype"
PROMOTE = "promote"
BANNED = "banned"

CPU_POLICIES = {
    LOWER_PRECISION_FP: (
        "conv1d", "conv1d.padding", "conv2d", "conv2d.padding", "conv3d", "conv3d.padding",
        "bmm", "mm", "linalg_vecdot", "baddbmm", "addmm", "_addmm_activation", "addbmm",
        "linear", "_convolution.deprecated", "matmul", "conv_tbc", "mkldnn_rnn_layer",
        "conv_transpose1d", "conv_transpose2d.input", "conv_transpose3d.input", "prelu",
        "scaled_dot_product_attention", "_native_multi_head_attention",
    ),
    FP32: (
        # pooling, sampling, padding
        "avg_pool3d", "grid_sampler", "grid_sampler_2d", "_grid_sampler_2d_cpu_fallback",
        "grid_sampler_3d", "max_pool3d", "max_unpool2d", "max_unpool3d", "adaptive_avg_pool3d",
        "adaptive_max_pool3d", "fractional_max_pool2d", "fractional_max_pool3d",
        "reflection_pad1d", "reflection_pad2d", "replication_pad1d", "replication_pad2d",
        "replication_pad3d",
        # losses
        "binary_cross_entropy", "mse_loss", "cosine_embedding_loss", "nll_loss", "nll_loss2d",
        "hinge_embedding_loss", "poisson_nll_loss", "smooth_l1_loss", "cross_entropy_loss",
        "l1_loss", "huber_loss", "margin_ranking_loss", "soft_margin_loss",
        "triplet_margin_loss", "multi_margin_loss", "ctc_loss.IntList", "ctc_loss.Tensor",
        "kl_div", "multilabel_margin_loss", "multilabel_margin_loss_forward",
        "binary_cross_entropy_with_logits",
        # reductions and miscellany
        "polar", "prod", "prod.dim_int", "quantile", "quantile.scalar", "nanquantile",
        "nanquantile.scalar", "stft", "stft.center", "cdist", "trace", "view_as_complex",
        "fake_quantize_per_tensor_affine",
        # linear algebra
        "cholesky", "cholesky_inverse", "cholesky_solve", "inverse", "lu_solve", "orgqr",
        "ormqr", "pinverse", "geqrf", "_lu_with_info", "qr", "svd", "triangular_solve",
        "linalg_cond", "linalg_cond.p_str", "linalg_matrix_rank",
        "linalg_matrix_rank.tol_tensor", "linalg_matrix_rank.atol_rtol_tensor",
        "linalg_matrix_rank.atol_rtol_float", "linalg_solve", "linalg_cholesky",
        "linalg_cholesky_ex", "linalg_svdvals", "linalg_eigvals", "linalg_eigvalsh",
        "linalg_inv", "linalg_inv_ex", "linalg_householder_product", "linalg_tensorinv",
        "linalg_tensorsolve", "linalg_qr", "linalg_svd", "linalg_eig", "linalg_eigh",
        "linalg_lstsq",
        # FFT
        "fft_fft", "fft_ifft", "fft_fft2", "fft_ifft2", "fft_fftn", "fft_ifftn", "fft_rfft",
        "fft_irfft", "fft_rfft2", "fft_irfft2", "fft_rfftn", "fft_irfftn", "fft_hfft",
        "fft_ihfft",
    ),
    PROMOTE: ("stack", "cat", "index_copy"),
}

CUDA_POLICIES = {
    LOWER_PRECISION_FP: (
        "_convolution.deprecated", "_convolution", "conv1d", "conv2d", "conv3d", "conv_tbc",
        "conv_transpose1d", "conv_transpose2d.input", "conv_transpose3d.input", "convolution",
        "cudnn_convolution", "cudnn_convolution_transpose", "prelu", "addmm", "addmv", "addr",
        "matmul", "einsum", "mm", "mv", "linalg_vecdot", "linear", "addbmm", "baddbmm", "bmm",
        "chain_matmul", "linalg_multi_dot", "_thnn_fused_lstm_cell", "_thnn_fused_gru_cell",
        "lstm_cell", "gru_cell", "rnn_tanh_cell", "rnn_relu_cell",
        "_scaled_dot_product_flash_attention", "scaled_dot_product_attention",
    ),
    FP32: (
        # pointwise math
        "acos", "asin", "cosh", "erfinv", "exp", "expm1", "log", "log10", "log2", "log1p",
        "reciprocal", "rsqrt", "sinh", "tan", "pow.Tensor_Scalar", "pow.Tensor_Tensor",
        "pow.Scalar", "softplus",
        # normalization
        "layer_norm", "native_layer_norm", "rms_norm", "group_norm", "frobenius_norm.dim",
        "nuclear_norm", "nuclear_norm.dim",
        # losses
        "cosine_similarity", "poisson_nll_loss", "cosine_embedding_loss", "nll_loss",
        "nll_loss2d", "hinge_embedding_loss", "kl_div", "l1_loss", "smooth_l1_loss",
        "huber_loss", "mse_loss", "margin_ranking_loss", "multilabel_margin_loss",
        "soft_margin_loss", "triplet_margin_loss", "multi_margin_loss",
        "binary_cross_entropy_with_logits",
        # distances, reductions
        "dist", "pdist", "cdist", "renorm", "logsumexp",
        # upsampling
        "upsample_nearest1d", "_upsample_nearest_exact1d", "upsample_nearest2d",
        "_upsample_nearest_exact2d", "upsample_nearest3d", "_upsample_nearest_exact3d",
        "upsample_linear1d", "upsample_bilinear2d", "_upsample_bilinear2d_aa",
        "upsample_trilinear3d", "upsample_bicubic2d", "_upsample_bicubic2d_aa",
    ),
    FP32_SET_OPT_DTYPE: (
        "prod", "prod.dim_int", "softmax.int", "log_softmax.int", "cumprod", "cumsum",
        "linalg_vector_norm", "linalg_matrix_norm", "linalg_matrix_norm.str_ord", "sum",
        "sum.dim_IntList",
    ),
    FP32_APPEND_DTYPE: ("norm.Scalar", "norm.ScalarOpt_dim"),
    PROMOTE: (
        "addcdiv", "addcmul", "atan2", "bilinear", "cross", "dot", "vdot", "grid_sampler",
        "index_put", "tensordot", "scatter_add",
    ),
    BANNED: ("binary_cross_entropy",),
}

POLICIES = {"cpu": CPU_POLICIES, "cuda": CUDA_POLICIES}

# fp32_append_dtype: the overload each dtype-less one is redirected to.
APPEND_DTYPE_OVERLOAD = {
    "norm.Scalar": "norm.ScalarOpt_dtype",
    "norm.ScalarOpt_dim": "norm.ScalarOpt_dim_dtype",
}

BANNED_MESSAGE = (
    "torch.nn.functional.binary_cross_entropy and torch.nn.BCELoss are unsafe to autocast.\n"
    "Many models use a sigmoid layer right before the binary cross entropy layer.\n"
    "In this case, combine the two layers using "
    "torch.nn.functional.binary_cross_entropy_with_logits\n"
    "or torch.nn.BCEWithLogitsLoss.  binary_cross_entropy_with_logits and BCEWithLogits are\n"
    "safe to autocast.")

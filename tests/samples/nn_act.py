"""Samples for the activations, losses, distances and attention ops of issue 4
(kernels/activation.py, loss.py, distance.py, one_hot.py,
attention.py)."""
import numpy as np

from ..opinfo import sample

TOL = {"atol": 1e-5, "rtol": 1e-5}
HALF = {"atol": 1e-2, "rtol": 1e-2}


def _values(make, lib, values, dtype="float32"):
    t = lib.tensor(np.array(values, dtype=np.float32), dtype=getattr(lib, dtype))
    return t.to(make.device) if make.device != "cpu" else t


# -- log_sigmoid ---------------------------------------------------------------------------

@sample("aten::log_sigmoid", **TOL)
def log_sigmoid_basic(make, lib):
    return (make(3, 4, low=-30, high=30),), {}


@sample("aten::log_sigmoid_forward", **TOL)
def log_sigmoid_forward_transposed(make, lib):
    return (make(4, 3, low=-10, high=10).t(),), {}


@sample("aten::log_sigmoid_forward", **HALF)
def log_sigmoid_forward_half(make, lib):
    return (make(2, 5, dtype="float16", low=-10, high=10),), {}


@sample("aten::log_sigmoid_forward", **TOL)
def log_sigmoid_forward_double(make, lib):
    return (make(2, 5, dtype="float64", low=-40, high=40),), {}


@sample("aten::log_sigmoid_forward.output", **TOL)
def log_sigmoid_forward_output(make, lib):
    return (make(3, 4),), {"output": make(3, 4), "buffer": make(3, 4)}


def _log_sigmoid_buffer(make, lib, x):
    return lib.ops.aten.log_sigmoid_forward.default(x)[1]


# The buffer exp(-abs(x)) is an input of its own here: finite differences in self hold
# it fixed, while PyTorch's formula differentiates through it, so these samples (named
# "abs") skip gradcheck; their gradients are still compared with PyTorch's.

@sample("aten::log_sigmoid_backward", **TOL)
def log_sigmoid_backward_abs_buffer(make, lib):
    x = make(3, 4, low=-5, high=5)
    return (make(3, 4), x, _log_sigmoid_buffer(make, lib, x)), {}


@sample("aten::log_sigmoid_backward", **TOL)
def log_sigmoid_backward_abs_buffer_transposed_grad(make, lib):
    x = make(3, 4, low=-5, high=5, dtype="float64")
    return (make(4, 3, dtype="float64").t(), x, _log_sigmoid_buffer(make, lib, x)), {}


@sample("aten::log_sigmoid_backward.grad_input", **TOL)
def log_sigmoid_backward_out(make, lib):
    x = make(3, 4, low=-5, high=5)
    return (make(3, 4), x, _log_sigmoid_buffer(make, lib, x)), {"grad_input": make(3, 4)}


# -- softshrink / hardshrink ---------------------------------------------------------------

for _op in ("softshrink", "hardshrink"):
    def _shrink(make, lib, _op=_op):
        return (make(3, 4),), {"lambd": 0.75}

    def _shrink_default(make, lib):
        return (make(4, 3, dtype="float64").t(),), {}

    def _shrink_bf16(make, lib):
        return (make(2, 5, dtype="bfloat16"),), {"lambd": 1.5}

    def _shrink_kinks(make, lib):
        return (_values(make, lib, [-1.0, -0.5, 0.0, 0.5, 1.0, 0.25]),), {"lambd": 0.5}

    def _shrink_out(make, lib):
        return (make(3, 4),), {"out": make(3, 4)}

    for _fn in (_shrink, _shrink_default, _shrink_kinks):
        sample(f"aten::{_op}")(_fn)
    sample(f"aten::{_op}", **HALF)(_shrink_bf16)
    sample(f"aten::{_op}.out")(_shrink_out)

    def _shrink_backward(make, lib):
        return (make(3, 4), make(3, 4)), {"lambd": 0.75}

    def _shrink_backward_promoted(make, lib):
        return (make(4, 3).t(), make(3, 4, dtype="float64"), 0.5), {}

    def _shrink_backward_kinks(make, lib):
        return (make(6), _values(make, lib, [-1.0, -0.5, 0.0, 0.5, 1.0, 0.25]), 0.5), {}

    def _shrink_backward_out(make, lib):
        return (make(3, 4), make(3, 4), 0.5), {"grad_input": make(3, 4)}

    for _fn in (_shrink_backward, _shrink_backward_promoted, _shrink_backward_kinks):
        sample(f"aten::{_op}_backward")(_fn)
    sample(f"aten::{_op}_backward.grad_input")(_shrink_backward_out)


@sample("aten::hardshrink")
def hardshrink_negative_lambda(make, lib):
    return (make(3, 4),), {"lambd": -0.5}


# -- glu -----------------------------------------------------------------------------------

@sample("aten::glu", **TOL)
def glu_last_dim(make, lib):
    return (make(3, 4),), {}


@sample("aten::glu", **TOL)
def glu_transposed_dim0(make, lib):
    return (make(4, 6).t(),), {"dim": 0}


@sample("aten::glu", **HALF)
def glu_half(make, lib):
    return (make(2, 4, 2, dtype="float16"), 1), {}


@sample("aten::glu.out", **TOL)
def glu_out(make, lib):
    return (make(3, 4),), {"dim": 1, "out": make(3, 2)}


@sample("aten::glu_backward", **TOL)
def glu_backward_basic(make, lib):
    return (make(3, 2), make(3, 4), 1), {}


@sample("aten::glu_backward", **TOL)
def glu_backward_broadcast_transposed(make, lib):
    return (make(1, 4, dtype="float64"), make(4, 6, dtype="float64").t(), -2), {}


@sample("aten::glu_backward", **TOL)
def glu_backward_noncontiguous(make, lib):
    return (make(3, 4), make(4, 6).t(), 0), {}


@sample("aten::glu_backward.grad_input", **TOL)
def glu_backward_out(make, lib):
    return (make(3, 2), make(3, 4), 1), {"grad_input": make(3, 4)}


# -- prelu ---------------------------------------------------------------------------------

@sample("aten::prelu")
def prelu_channels(make, lib):
    return (make(2, 3, 4), make(3)), {}


@sample("aten::prelu")
def prelu_single_weight(make, lib):
    return (make(2, 3, 4, dtype="float64"), make(1, dtype="float64")), {}


@sample("aten::prelu")
def prelu_scalar_weight_on_vector(make, lib):
    return (make(5), make(())), {}


@sample("aten::_prelu_kernel")
def prelu_kernel_broadcast(make, lib):
    return (make(2, 3, 4), make(1, 3, 1)), {}


@sample("aten::_prelu_kernel")
def prelu_kernel_transposed(make, lib):
    return (make(4, 3, 2).transpose(0, 2), make(1, 3, 1)), {}


@sample("aten::_prelu_kernel", **HALF)
def prelu_kernel_bf16(make, lib):
    return (make(2, 3, dtype="bfloat16"), make(2, 3, dtype="bfloat16")), {}


@sample("aten::_prelu_kernel_backward")
def prelu_kernel_backward_broadcast(make, lib):
    return (make(2, 3, 4), make(2, 3, 4), make(1, 3, 1)), {}


@sample("aten::_prelu_kernel_backward")
def prelu_kernel_backward_double(make, lib):
    return (make(3, 4, dtype="float64"), make(3, 4, dtype="float64"),
            make(3, 4, dtype="float64")), {}


# -- celu / selu ---------------------------------------------------------------------------

@sample("aten::celu", **TOL)
def celu_alpha(make, lib):
    return (make(3, 4),), {"alpha": 0.5}


@sample("aten::celu", **TOL)
def celu_default_double(make, lib):
    return (make(4, 3, dtype="float64").t(),), {}


@sample("aten::celu_", inplace=True, **TOL)
def celu_inplace(make, lib):
    return (make(3, 4), 2.0), {}


@sample("aten::selu", **TOL)
def selu_basic(make, lib):
    return (make(3, 4),), {}


@sample("aten::selu", **HALF)
def selu_bf16(make, lib):
    return (make(3, 4, dtype="bfloat16"),), {}


@sample("aten::selu_", inplace=True, **TOL)
def selu_inplace(make, lib):
    return (make(3, 4),), {}


# -- kl_div, distances, one_hot ------------------------------------------------------------

@sample("aten::kl_div", **TOL)
def kl_div_mean(make, lib):
    return (make(3, 4), make(3, 4, low=0.1, high=2)), {}


@sample("aten::kl_div", **TOL)
def kl_div_none_log_target(make, lib):
    return (make(3, 4), make(3, 4), 0), {"log_target": True}


@sample("aten::kl_div", **TOL)
def kl_div_sum_broadcast_zero_target(make, lib):
    return (make(3, 4, dtype="float64"), _values(make, lib, [0.0, 0.5, 1.0, 2.0], "float64"),
            2), {}


@sample("aten::cosine_similarity", **TOL)
def cosine_similarity_rows(make, lib):
    return (make(3, 4), make(3, 4)), {}


@sample("aten::cosine_similarity", **TOL)
def cosine_similarity_broadcast_last_dim(make, lib):
    return (make(2, 3, 4, dtype="float64"), make(1, 4, dtype="float64")), {"dim": -1,
                                                                          "eps": 1e-6}


@sample("aten::cosine_similarity", **TOL)
def cosine_similarity_integer_promoted(make, lib):
    return (make(3, 4, dtype="int64"), make(3, 4)), {"dim": 0}


@sample("aten::pairwise_distance", **TOL)
def pairwise_distance_rows(make, lib):
    return (make(3, 4), make(3, 4)), {}


@sample("aten::pairwise_distance", **TOL)
def pairwise_distance_p1_keepdim_broadcast(make, lib):
    return (make(3, 4, dtype="float64"), make(4, dtype="float64"), 1.0), {"keepdim": True}


@sample("aten::pairwise_distance", **TOL)
def pairwise_distance_p3(make, lib):
    return (make(2, 3, 5), make(2, 3, 5)), {"p": 3.0, "eps": 0.0}


@sample("aten::one_hot")
def one_hot_empty_with_classes(make, lib):
    """(non-empty inputs need their values: data-dependent, so no Meta; see
    tests/test_nn_loss.py)"""
    return (make(2, 0, dtype="int64"),), {"num_classes": 3}


# -- attention -----------------------------------------------------------------------------

def _qkv(make, batch, heads, length, source, dim, dtype="float32", value_dim=None):
    lead = (batch, heads) if heads else (batch,)
    return (make(*lead, length, dim, dtype=dtype), make(*lead, source, dim, dtype=dtype),
            make(*lead, source, value_dim or dim, dtype=dtype))


@sample("aten::scaled_dot_product_attention", **TOL)
def sdpa_flash(make, lib):
    return _qkv(make, 2, 3, 5, 6, 8), {}


@sample("aten::scaled_dot_product_attention", **TOL)
def sdpa_flash_causal_scale(make, lib):
    return _qkv(make, 1, 2, 6, 4, 4), {"is_causal": True, "scale": 0.4}


@sample("aten::scaled_dot_product_attention", **TOL)
def sdpa_flash_bool_mask(make, lib):
    return _qkv(make, 2, 2, 4, 5, 4) + (make(4, 5, dtype="bool"),), {}


@sample("aten::scaled_dot_product_attention", **TOL)
def sdpa_flash_float_mask_4d(make, lib):
    return _qkv(make, 2, 2, 4, 5, 4) + (make(2, 1, 4, 5),), {}


@sample("aten::scaled_dot_product_attention", **TOL)
def sdpa_flash_grouped_heads(make, lib):
    q, _, _ = _qkv(make, 2, 4, 3, 5, 4)
    _, k, v = _qkv(make, 2, 2, 3, 5, 4)
    return (q, k, v), {"enable_gqa": True}


@sample("aten::scaled_dot_product_attention", **TOL)
def sdpa_math_3d_value_dim(make, lib):
    return _qkv(make, 3, None, 5, 6, 8, value_dim=3), {}


@sample("aten::scaled_dot_product_attention", **TOL)
def sdpa_math_causal_double(make, lib):
    return _qkv(make, 2, None, 5, 3, 4, dtype="float64"), {"is_causal": True}


@sample("aten::scaled_dot_product_attention", **TOL)
def sdpa_math_bool_mask_negative_scale(make, lib):
    return _qkv(make, 2, None, 4, 5, 4) + (make(2, 4, 5, dtype="bool"),), {"scale": -0.5}


@sample("aten::scaled_dot_product_attention", **TOL)
def sdpa_math_grouped_heads_3d_mask(make, lib):
    q, _, _ = _qkv(make, 2, 4, 3, 5, 4)
    _, k, v = _qkv(make, 2, 2, 3, 5, 4)
    return (q, k, v, make(1, 3, 5)), {"enable_gqa": True}


@sample("aten::scaled_dot_product_attention", **HALF)
def sdpa_math_half(make, lib):
    return _qkv(make, 2, None, 3, 4, 4, dtype="float16"), {}


@sample("aten::scaled_dot_product_attention", **TOL)
def sdpa_empty_source(make, lib):
    return _qkv(make, 2, 2, 3, 0, 4), {}


@sample("aten::scaled_dot_product_attention", random=True)
def sdpa_dropout(make, lib):
    return _qkv(make, 2, 2, 3, 4, 4) + (None, 0.5), {}


@sample("aten::_fused_sdp_choice")
def fused_sdp_choice_math(make, lib):
    """(Meta answers 0, the math backend; flash-eligible inputs are in test_nn_attention)"""
    return _qkv(make, 2, None, 3, 4, 4), {}


@sample("aten::_scaled_dot_product_attention_math", **TOL)
def sdpa_math_op(make, lib):
    return _qkv(make, 2, 2, 3, 4, 4), {}


@sample("aten::_scaled_dot_product_attention_math", **TOL)
def sdpa_math_op_float_mask(make, lib):
    return _qkv(make, 2, None, 3, 4, 4) + (make(3, 4),), {"scale": 0.25}


@sample("aten::_scaled_dot_product_flash_attention_for_cpu", **TOL)
def flash_attention(make, lib):
    return _qkv(make, 2, 3, 5, 6, 8), {}


@sample("aten::_scaled_dot_product_flash_attention_for_cpu", **TOL)
def flash_attention_heads_second_layout_causal(make, lib):
    q = make(2, 5, 3, 4).transpose(1, 2)
    k = make(2, 6, 3, 4).transpose(1, 2)
    return (q, k, make(2, 3, 6, 4), 0.0, True), {}


@sample("aten::_scaled_dot_product_flash_attention_for_cpu", **TOL)
def flash_attention_masked_rows(make, lib):
    q, k, v = _qkv(make, 1, 2, 3, 4, 4, dtype="float64")
    mask = _values(make, lib, [[0.0] * 4, [-np.inf] * 4, [0.0, -np.inf, 1.0, 0.5]], "float64")
    return (q, k, v), {"attn_mask": mask, "scale": 0.7}


@sample("aten::_scaled_dot_product_flash_attention_for_cpu", **HALF)
def flash_attention_half_float_mask(make, lib):
    return _qkv(make, 1, 2, 3, 4, 4, dtype="float16"), {"attn_mask": make(3, 4)}


def _flash_backward_args(make, lib, q, k, v, **kwargs):
    out, lse = lib.ops.aten._scaled_dot_product_flash_attention_for_cpu.default(q, k, v,
                                                                                 **kwargs)
    return (make(*out.shape, dtype=str(q.dtype).split(".")[-1]), q, k, v, out, lse, 0.0,
            kwargs.get("is_causal", False))


@sample("aten::_scaled_dot_product_flash_attention_for_cpu_backward", **TOL)
def flash_attention_backward(make, lib):
    return _flash_backward_args(make, lib, *_qkv(make, 2, 3, 5, 6, 8)), {}


@sample("aten::_scaled_dot_product_flash_attention_for_cpu_backward", **TOL)
def flash_attention_backward_causal_mask_double(make, lib):
    q, k, v = _qkv(make, 1, 2, 4, 3, 4, dtype="float64")
    mask = make(4, 3, dtype="float64")
    return _flash_backward_args(make, lib, q, k, v, is_causal=True, attn_mask=mask), \
        {"attn_mask": mask}


@sample("aten::_scaled_dot_product_flash_attention_for_cpu_backward", **TOL)
def flash_attention_backward_grouped_heads(make, lib):
    q, _, _ = _qkv(make, 2, 4, 3, 5, 4)
    _, k, v = _qkv(make, 2, 1, 3, 5, 4)
    return _flash_backward_args(make, lib, q, k, v, scale=0.3), {"scale": 0.3}


@sample("aten::_safe_softmax", **TOL)
def safe_softmax_masked_rows(make, lib):
    return (_values(make, lib, [[-np.inf] * 3, [0.0, 1.0, -np.inf], [2.0, 1.0, 0.5]]), 1), {}


@sample("aten::_safe_softmax", **TOL)
def safe_softmax_dtype(make, lib):
    return (make(2, 3, 4, dtype="float16"), 0), {"dtype": lib.float32}


# -- margin and embedding losses -----------------------------------------------------------

def _signs(make, lib, n):
    return _values(make, lib, [1.0 if i % 3 else -1.0 for i in range(n)])


@sample("aten::margin_ranking_loss", **TOL)
def margin_ranking_loss_mean(make, lib):
    return (make(6), make(6), _signs(make, lib, 6)), {"margin": 0.5}


@sample("aten::margin_ranking_loss", **TOL)
def margin_ranking_loss_none_broadcast(make, lib):
    return (make(3, 4, dtype="float64"), make(4, dtype="float64"),
            _signs(make, lib, 4).double(), 0.0, 0), {}


@sample("aten::hinge_embedding_loss", **TOL)
def hinge_embedding_loss_mean(make, lib):
    return (make(2, 3), _signs(make, lib, 3)), {}


@sample("aten::hinge_embedding_loss", **TOL)
def hinge_embedding_loss_sum(make, lib):
    return (make(5, dtype="float64"), _signs(make, lib, 5).double(), 0.5, 2), {}


@sample("aten::cosine_embedding_loss", **TOL)
def cosine_embedding_loss_batch(make, lib):
    return (make(4, 5), make(4, 5), _signs(make, lib, 4)), {"margin": 0.2}


@sample("aten::cosine_embedding_loss", **TOL)
def cosine_embedding_loss_single_none(make, lib):
    return (make(5, dtype="float64"), make(5, dtype="float64"), _values(make, lib, 1.0)), \
        {"reduction": 0}


@sample("aten::triplet_margin_loss", **TOL)
def triplet_margin_loss_basic(make, lib):
    return (make(4, 5), make(4, 5), make(4, 5)), {"margin": 2.0}


@sample("aten::triplet_margin_loss", **TOL)
def triplet_margin_loss_swap_p1(make, lib):
    return (make(3, 4, dtype="float64"), make(3, 4, dtype="float64"),
            make(3, 4, dtype="float64")), {"p": 1.0, "swap": True, "reduction": 2}


@sample("aten::poisson_nll_loss", **TOL)
def poisson_nll_loss_log_input(make, lib):
    return (make(3, 4), make(3, 4, low=0, high=4), True, False, 1e-8, 1), {}


@sample("aten::poisson_nll_loss", **TOL)
def poisson_nll_loss_full(make, lib):
    return (make(3, 4, dtype="float64", low=0.1, high=3), make(3, 4, dtype="float64", low=0.5,
                                                               high=4), False, True, 1e-8, 0), {}

"""``torch._decomp``: decompositions of aten ops into other aten ops, as tables
keyed by ``OpOverload`` (what make_fx and AOTAutograd consult while tracing).

    decomposition_table             post-autograd decompositions (decompositions.py)
    register_decomposition(op)      decorator; a packet stands for all its overloads
    get_decompositions([ops])       the table restricted to ops (packets expand)
    core_aten_decompositions()      what lowers to the core aten opset: the table's
                                    entries for the ops PyTorch's core list names,
                                    plus every functional CompositeImplicitAutograd
                                    op, decomposed by its own kernel

The decompositions themselves, and how each relates to eager's composite
kernel, are described in ``decompositions.py``.
"""
from __future__ import annotations

from collections import defaultdict

from .._dispatcher.dispatcher import OpOverload, OpOverloadPacket
from .._core.dispatch_key import DispatchKey
from .._ops.tags import Tag

__all__ = ["decomposition_table", "pre_autograd_decomposition_table", "meta_table",
           "register_decomposition", "get_decompositions", "remove_decompositions",
           "core_aten_decompositions"]

global_decomposition_table: dict[str, dict] = defaultdict(dict)
decomposition_table = global_decomposition_table["post_autograd"]
pre_autograd_decomposition_table = global_decomposition_table["pre_autograd"]
meta_table = global_decomposition_table["meta"]

_TYPES = ("post_autograd", "pre_autograd", "meta")


def _overloads(op) -> list:
    """An overload stands for itself; a packet for every overload it has."""
    if isinstance(op, OpOverloadPacket):
        return [getattr(op, name) for name in op.overloads()]
    if isinstance(op, OpOverload):
        return [op]
    raise TypeError(f"expected an OpOverload or OpOverloadPacket, got {type(op).__name__}")


def _check_type(type: str) -> None:
    if type not in _TYPES:
        raise AssertionError(f"type must be one of {', '.join(_TYPES)}, got {type}")


def register_decomposition(aten_op, registry=None, *, type="post_autograd", unsafe=False):
    """Decorator entering ``fn`` as the decomposition of ``aten_op`` (an overload,
    a packet, or a list of them) in ``registry`` (default: the table of ``type``).
    Registering an overload twice is an error.  ``unsafe`` is accepted for
    PyTorch's signature; the function is entered unchanged either way."""
    _check_type(type)
    table = global_decomposition_table[type] if registry is None else registry
    ops = aten_op if isinstance(aten_op, (list, tuple)) else [aten_op]

    def decorator(fn):
        for op in ops:
            for overload in _overloads(op):
                if overload in table:
                    raise RuntimeError(f"duplicate registrations for {overload}")
                table[overload] = fn
        return fn
    return decorator


def get_decompositions(aten_ops, type: str = "post_autograd") -> dict:
    """The entries of the ``type`` table for ``aten_ops``: an overload if it has
    one, a packet's overloads that have one; others are silently left out."""
    _check_type(type)
    table = global_decomposition_table[type]
    result = {}
    for op in aten_ops:
        for overload in _overloads(op):
            if overload in table:
                result[overload] = table[overload]
    return result


def remove_decompositions(decompositions: dict, aten_ops) -> None:
    """Drop ``aten_ops`` (overloads or packets) from ``decompositions`` in place."""
    for op in aten_ops:
        for overload in _overloads(op):
            decompositions.pop(overload, None)


# PyTorch's list of ops the core table decomposes (torch/_decomp/__init__.py,
# _core_aten_decompositions_post_autograd), by name: a packet name stands for
# all its overloads, "name.overload" for one.  Names glasstorch does not declare
# are skipped.
_CORE_NAMES = """
addcdiv addcdiv_ addcmul addcmul_ addr affine_grid_generator alias_copy all aminmax
arange.default arange.start avg_pool2d_backward baddbmm binary_cross_entropy
binary_cross_entropy_backward binary_cross_entropy_with_logits block_diag bernoulli.p
bernoulli.default celu celu_ channel_shuffle clamp_max clamp_min col2im count_nonzero
linalg_cross cudnn_batch_norm cudnn_batch_norm_backward miopen_batch_norm_backward deg2rad
deg2rad_ detach diag_embed diagonal_backward diagonal_copy dot vdot elu_ elu_backward
_embedding_bag embedding_dense_backward empty_like _euclidean_dist.default expand_as
expand_copy eye fill fill_ floor_divide frac frac_ _fused_moving_avg_obs_fq_helper gelu_
gelu_backward glu glu_backward hardshrink hardsigmoid hardsigmoid_ hardsigmoid_backward
hardswish hardswish_ hardswish_backward hardtanh_ hardtanh_backward hann_window heaviside
heaviside_ huber_loss huber_loss_backward im2col index_add.out index_add.default index_add_
index_copy.out index_copy.default index_copy_ index_fill.int_Scalar index_fill.int_Tensor
index_fill.int_Scalar_out index_fill.int_Tensor_out index_fill_ isin isneginf isposinf
l1_loss _lazy_clone _test_parallel_materialize leaky_relu_ leaky_relu_backward lerp lerp_
linspace logaddexp logaddexp2 logit logit_ logit_backward log_sigmoid_backward
log_sigmoid_forward _log_softmax_backward_data logspace logsumexp.default masked_fill
masked_fill_ max_unpool2d max_unpool3d mish mish_ mish_backward mse_loss mse_loss_backward
multi_margin_loss multilabel_margin_loss_forward mv mvlgamma mvlgamma_ nansum nan_to_num
nan_to_num_ narrow native_batch_norm_backward native_dropout_backward
native_group_norm_backward native_layer_norm_backward _fused_rms_norm
_fused_rms_norm_backward new_empty new_full new_ones new_zeros nll_loss2d_forward
nll_loss2d_backward nll_loss_backward nll_loss_forward norm.ScalarOpt_dtype norm.Scalar
norm.ScalarOpt_dim_dtype norm.ScalarOpt_dim norm.dtype_out norm.out norm.ScalarOpt_dtype_out
norm.Scalar_out ones ones_like pixel_shuffle pixel_unshuffle _prelu_kernel
_prelu_kernel_backward _reshape_alias rad2deg rad2deg_ reflection_pad1d
reflection_pad1d_backward reflection_pad2d reflection_pad2d_backward reflection_pad3d
reflection_pad3d_backward replication_pad1d replication_pad2d replication_pad3d renorm renorm_
resize_as roll rot90 rrelu_with_noise rrelu_with_noise_ rsub _safe_softmax
_scaled_dot_product_flash_attention_for_cpu.default select_backward select_scatter sgn sgn_
sigmoid_backward silu silu_ silu_backward.grad_input silu_backward sinc sinc_ slice_backward
smooth_l1_loss smooth_l1_loss_backward soft_margin_loss soft_margin_loss_backward
_softmax_backward_data softplus softplus_backward softshrink special_entr special_log_ndtr
special_xlog1py split.Tensor split_with_sizes_copy squeeze_copy squeeze.default squeeze.dim
std.correction std.out std.correction_out std_mean.correction std_mean.correction_out stack
sum.default sum.out t t_copy take tanh_backward threshold threshold_ threshold_backward trace
transpose.int transpose_copy tril tril_ triu triu_ unbind unfold_backward unfold_copy
_unsafe_index _unsafe_index_put _unsafe_masked_index _unsafe_masked_index_put_accumulate
unsafe_split.Tensor unsafe_split_with_sizes unsqueeze_copy _unsafe_view upsample_linear1d
upsample_bilinear2d.out upsample_trilinear3d.out upsample_nearest2d_backward view_as_complex
xlogy xlogy_ zero zero_ zeros zeros_like _chunk_cat _weight_norm_interface
""".split()

# Functional CompositeImplicitAutograd ops PyTorch's core table keeps (export's
# PRESERVED_ATEN_CIA_OPS) that glasstorch declares.
_PRESERVED_CIA = ("upsample_bilinear2d.vec", "upsample_nearest2d.vec")


def _aten(name: str):
    """The overload or packet ``name`` names, or None where glasstorch lacks it."""
    from .. import ops
    base, _, overload = name.partition(".")
    packet = getattr(ops.aten, base, None)
    if packet is None or not overload:
        return packet
    return getattr(packet, overload, None)


# Size queries functionalization answers itself (PyTorch's FunctionalTensor.metadata_fns
# that glasstorch declares): never decomposed.
_METADATA_FNS = ("sym_numel.default", "sym_storage_offset.default")


def _decomposable_cia_ops() -> list:
    """Functional aten overloads with a CompositeImplicitAutograd kernel (export's
    rule: no aliasing or mutated argument, no alias-returning output, not tagged
    maybe_aliasing_or_mutating), less those PyTorch preserves."""
    from .._dispatcher.dispatcher import dispatcher
    preserved = {_aten(name) for name in _PRESERVED_CIA + _METADATA_FNS}
    found = []
    for name, entry in dispatcher.operators.items():
        if not name.startswith("aten::") or \
                DispatchKey.CompositeImplicitAutograd not in entry.kernels:
            continue
        base = name[len("aten::"):]
        op = _aten(base if "." in base else base + ".default")
        schema = entry.schema
        if op in preserved or Tag.maybe_aliasing_or_mutating in op.tags or \
                any(a.alias_info is not None for a in list(schema.arguments) + list(schema.returns)):
            continue
        found.append(op)
    return found


def core_aten_decompositions() -> dict:
    """PyTorch's core table, for the ops glasstorch declares: the entries of
    ``decomposition_table`` for the ops PyTorch's core list names, and each
    functional CompositeImplicitAutograd op mapped to ``op.decompose`` (its
    eager kernel: one definition).  A fresh dict each call."""
    listed = [op for op in map(_aten, _CORE_NAMES) if op is not None]
    table = get_decompositions(listed)
    for op in _decomposable_cia_ops():
        table.setdefault(op, op.decompose)
    return table


from . import decompositions  # noqa: E402,F401  (fills decomposition_table)

"""``torch.nn.modules.activation``: activation layers and MultiheadAttention.

Each activation layer stores its hyper-parameters as attributes (printed by
``extra_repr`` as PyTorch prints them) and calls the matching
``torch.nn.functional`` function.  ``MultiheadAttention`` owns the packed
in-projection (or three separate ones when key/value sizes differ) and the
output projection, initialised with the same RNG calls as PyTorch, so the same
seed gives the same weights; its forward is ``F.multi_head_attention_forward``
(PyTorch's "slow path"; see ``MultiheadAttention.forward``).
"""
from __future__ import annotations

import warnings

from ... import _creation
from ..._tensor import Tensor
from ...autograd.grad_mode import is_grad_enabled
from .. import functional as F
from ..init import constant_, xavier_normal_, xavier_uniform_
from ..parameter import Parameter
from .module import Module

from .linear import NonDynamicallyQuantizableLinear

__all__ = ["Threshold", "ReLU", "Hardtanh", "ReLU6", "Sigmoid", "Hardsigmoid", "Tanh", "SiLU",
           "Mish", "Hardswish", "ELU", "CELU", "SELU", "GLU", "GELU", "Hardshrink", "LeakyReLU",
           "LogSigmoid", "Softplus", "Softshrink", "MultiheadAttention", "PReLU", "Softsign",
           "Tanhshrink", "Softmin", "Softmax", "Softmax2d", "LogSoftmax", "RReLU"]


def _inplace_suffix(inplace: bool, first: bool = False) -> str:
    """How PyTorch's reprs mention inplace: only when it is True."""
    if not inplace:
        return ""
    return "inplace=True" if first else ", inplace=True"


class _InplaceActivation(Module):
    """An activation whose only option is ``inplace``; ``_function`` names the
    functional it calls."""

    __constants__ = ["inplace"]
    _function = ""
    _shows_inplace = True      # Hardsigmoid and Hardswish print nothing

    def __init__(self, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = inplace

    def forward(self, input: Tensor) -> Tensor:
        return getattr(F, self._function)(input, inplace=self.inplace)

    def extra_repr(self) -> str:
        return _inplace_suffix(self.inplace, first=True) if self._shows_inplace else ""


class ReLU(_InplaceActivation):
    _function = "relu"


class SiLU(_InplaceActivation):
    _function = "silu"


class Mish(_InplaceActivation):
    _function = "mish"


class SELU(_InplaceActivation):
    _function = "selu"


class Hardsigmoid(_InplaceActivation):
    _function = "hardsigmoid"
    _shows_inplace = False


class Hardswish(_InplaceActivation):
    _function = "hardswish"
    _shows_inplace = False


class Threshold(Module):
    """y = x if x > threshold else value."""

    __constants__ = ["threshold", "value", "inplace"]

    def __init__(self, threshold: float, value: float, inplace: bool = False) -> None:
        super().__init__()
        self.threshold = threshold
        self.value = value
        self.inplace = inplace

    def forward(self, input: Tensor) -> Tensor:
        return F.threshold(input, self.threshold, self.value, self.inplace)

    def extra_repr(self) -> str:
        return f"threshold={self.threshold}, value={self.value}{_inplace_suffix(self.inplace)}"


class Hardtanh(Module):
    """Clamp to [min_val, max_val].  ``min_value``/``max_value`` are deprecated spellings."""

    __constants__ = ["min_val", "max_val", "inplace"]

    def __init__(self, min_val: float = -1.0, max_val: float = 1.0, inplace: bool = False,
                 min_value: float | None = None, max_value: float | None = None) -> None:
        super().__init__()
        for old, new, given in (("min_value", "min_val", min_value),
                                ("max_value", "max_val", max_value)):
            if given is not None:
                warnings.warn(f"keyword argument `{old}` is deprecated and renamed to `{new}`",
                              FutureWarning, stacklevel=2)
        self.min_val = min_val if min_value is None else min_value
        self.max_val = max_val if max_value is None else max_value
        self.inplace = inplace
        if self.max_val <= self.min_val:
            raise AssertionError(f"max_val ({self.max_val}) must be greater than min_val "
                                 f"({self.min_val})")

    def forward(self, input: Tensor) -> Tensor:
        return F.hardtanh(input, self.min_val, self.max_val, self.inplace)

    def extra_repr(self) -> str:
        return f"min_val={self.min_val}, max_val={self.max_val}{_inplace_suffix(self.inplace)}"


class ReLU6(Hardtanh):
    """Hardtanh on [0, 6]."""

    def __init__(self, inplace: bool = False) -> None:
        super().__init__(0.0, 6.0, inplace)

    def extra_repr(self) -> str:
        return _inplace_suffix(self.inplace, first=True)


class Sigmoid(Module):
    def forward(self, input: Tensor) -> Tensor:
        return input.sigmoid()


class Tanh(Module):
    def forward(self, input: Tensor) -> Tensor:
        return input.tanh()


class LogSigmoid(Module):
    def forward(self, input: Tensor) -> Tensor:
        return F.logsigmoid(input)


class Softsign(Module):
    def forward(self, input: Tensor) -> Tensor:
        return F.softsign(input)


class Tanhshrink(Module):
    def forward(self, input: Tensor) -> Tensor:
        return F.tanhshrink(input)


class _AlphaActivation(Module):
    """ELU and CELU (siblings, as in PyTorch): ``alpha`` and ``inplace``;
    ``_function`` names the functional."""

    __constants__ = ["alpha", "inplace"]
    _function = ""

    def __init__(self, alpha: float = 1.0, inplace: bool = False) -> None:
        super().__init__()
        self.alpha = alpha
        self.inplace = inplace

    def forward(self, input: Tensor) -> Tensor:
        return getattr(F, self._function)(input, self.alpha, self.inplace)

    def extra_repr(self) -> str:
        return f"alpha={self.alpha}{_inplace_suffix(self.inplace)}"


class ELU(_AlphaActivation):
    _function = "elu"


class CELU(_AlphaActivation):
    _function = "celu"


class LeakyReLU(Module):
    __constants__ = ["inplace", "negative_slope"]

    def __init__(self, negative_slope: float = 1e-2, inplace: bool = False) -> None:
        super().__init__()
        self.negative_slope = negative_slope
        self.inplace = inplace

    def forward(self, input: Tensor) -> Tensor:
        return F.leaky_relu(input, self.negative_slope, self.inplace)

    def extra_repr(self) -> str:
        return f"negative_slope={self.negative_slope}{_inplace_suffix(self.inplace)}"


class GLU(Module):
    """a * sigmoid(b) for the two halves (a, b) of the input along ``dim``."""

    __constants__ = ["dim"]

    def __init__(self, dim: int = -1) -> None:
        super().__init__()
        self.dim = dim

    def forward(self, input: Tensor) -> Tensor:
        return F.glu(input, self.dim)

    def extra_repr(self) -> str:
        return f"dim={self.dim}"


class GELU(Module):
    __constants__ = ["approximate"]

    def __init__(self, approximate: str = "none") -> None:
        super().__init__()
        self.approximate = approximate

    def forward(self, input: Tensor) -> Tensor:
        return F.gelu(input, approximate=self.approximate)

    def extra_repr(self) -> str:
        return f"approximate={self.approximate!r}"


class Softplus(Module):
    __constants__ = ["beta", "threshold"]

    def __init__(self, beta: float = 1.0, threshold: float = 20.0) -> None:
        super().__init__()
        self.beta = beta
        self.threshold = threshold

    def forward(self, input: Tensor) -> Tensor:
        return F.softplus(input, self.beta, self.threshold)

    def extra_repr(self) -> str:
        return f"beta={self.beta}, threshold={self.threshold}"


class _Shrink(Module):
    """Hardshrink and Softshrink (siblings, as in PyTorch): ``lambd``, printed bare."""

    __constants__ = ["lambd"]
    _function = ""

    def __init__(self, lambd: float = 0.5) -> None:
        super().__init__()
        self.lambd = lambd

    def forward(self, input: Tensor) -> Tensor:
        return getattr(F, self._function)(input, self.lambd)

    def extra_repr(self) -> str:
        return str(self.lambd)


class Hardshrink(_Shrink):
    """0 on [-lambd, lambd], x elsewhere."""

    _function = "hardshrink"


class Softshrink(_Shrink):
    """x shrunk towards 0 by lambd, 0 on [-lambd, lambd]."""

    _function = "softshrink"


class PReLU(Module):
    """max(0, x) + weight * min(0, x), one learned weight or one per channel (dim 1)."""

    __constants__ = ["num_parameters"]

    def __init__(self, num_parameters: int = 1, init: float = 0.25, device=None,
                 dtype=None) -> None:
        self.num_parameters = num_parameters
        super().__init__()
        self.init = init
        self.weight = Parameter(_creation.empty(num_parameters, device=device, dtype=dtype))
        self.reset_parameters()

    def reset_parameters(self) -> None:
        constant_(self.weight, self.init)

    def forward(self, input: Tensor) -> Tensor:
        return F.prelu(input, self.weight)

    def extra_repr(self) -> str:
        return f"num_parameters={self.num_parameters}"


class _SoftmaxFamily(Module):
    """Softmax, Softmin, LogSoftmax: ``dim=None`` picks PyTorch's legacy implicit dim
    (with its deprecation warning, attributed to the caller of the module)."""

    __constants__ = ["dim"]
    _function = ""

    def __init__(self, dim: int | None = None) -> None:
        super().__init__()
        self.dim = dim

    def __setstate__(self, state):
        super().__setstate__(state)
        if not hasattr(self, "dim"):
            self.dim = None

    def forward(self, input: Tensor) -> Tensor:
        return getattr(F, self._function)(input, self.dim, _stacklevel=5)

    def extra_repr(self) -> str:
        return f"dim={self.dim}"


class Softmax(_SoftmaxFamily):
    _function = "softmax"


class Softmin(_SoftmaxFamily):
    _function = "softmin"


class LogSoftmax(_SoftmaxFamily):
    _function = "log_softmax"


class Softmax2d(Module):
    """Softmax over the channels of each spatial location: dim -3 of (N, C, H, W) or (C, H, W)."""

    def forward(self, input: Tensor) -> Tensor:
        if input.dim() not in (3, 4):
            raise ValueError(f"Softmax2d: expected input to be 3D or 4D, got {input.dim()}D "
                             "instead")
        return F.softmax(input, -3, _stacklevel=5)


# -- MultiheadAttention ------------------------------------------------------------------------

class MultiheadAttention(Module):
    """Attention over ``num_heads`` heads of ``embed_dim // num_heads`` features.

    Parameters, in PyTorch's order: ``in_proj_weight`` (3E, E) when key and value
    have the query's size E, else ``q_proj_weight``/``k_proj_weight``/``v_proj_weight``;
    ``in_proj_bias`` (3E); ``out_proj`` (E -> E); ``bias_k``/``bias_v`` with
    ``add_bias_kv``.  Initialisation: xavier_uniform_ on the in-projection
    weight(s), zeros for the biases, xavier_normal_ for bias_k/bias_v (out_proj's
    weight keeps Linear's own initialisation).
    """

    __constants__ = ["batch_first"]

    def __init__(self, embed_dim, num_heads, dropout=0.0, bias=True, add_bias_kv=False,
                 add_zero_attn=False, kdim=None, vdim=None, batch_first=False, device=None,
                 dtype=None) -> None:
        if embed_dim <= 0 or num_heads <= 0:
            raise ValueError(f"embed_dim and num_heads must be greater than 0, got "
                             f"embed_dim={embed_dim} and num_heads={num_heads} instead")
        factory = {"device": device, "dtype": dtype}
        super().__init__()
        self.embed_dim = embed_dim
        self.kdim = kdim if kdim is not None else embed_dim
        self.vdim = vdim if vdim is not None else embed_dim
        self._qkv_same_embed_dim = self.kdim == embed_dim and self.vdim == embed_dim
        self.num_heads = num_heads
        self.dropout = dropout
        self.batch_first = batch_first
        self.head_dim = embed_dim // num_heads
        if self.head_dim * num_heads != self.embed_dim:
            raise AssertionError("embed_dim must be divisible by num_heads")

        if self._qkv_same_embed_dim:
            self.in_proj_weight = Parameter(_creation.empty((3 * embed_dim, embed_dim), **factory))
            for name in ("q_proj_weight", "k_proj_weight", "v_proj_weight"):
                self.register_parameter(name, None)
        else:
            self.q_proj_weight = Parameter(_creation.empty((embed_dim, embed_dim), **factory))
            self.k_proj_weight = Parameter(_creation.empty((embed_dim, self.kdim), **factory))
            self.v_proj_weight = Parameter(_creation.empty((embed_dim, self.vdim), **factory))
            self.register_parameter("in_proj_weight", None)
        if bias:
            self.in_proj_bias = Parameter(_creation.empty(3 * embed_dim, **factory))
        else:
            self.register_parameter("in_proj_bias", None)
        self.out_proj = NonDynamicallyQuantizableLinear(embed_dim, embed_dim, bias=bias,
                                                        **factory)
        if add_bias_kv:
            self.bias_k = Parameter(_creation.empty((1, 1, embed_dim), **factory))
            self.bias_v = Parameter(_creation.empty((1, 1, embed_dim), **factory))
        else:
            self.bias_k = self.bias_v = None
        self.add_zero_attn = add_zero_attn
        self._reset_parameters()

    def _reset_parameters(self) -> None:
        if self._qkv_same_embed_dim:
            xavier_uniform_(self.in_proj_weight)
        else:
            xavier_uniform_(self.q_proj_weight)
            xavier_uniform_(self.k_proj_weight)
            xavier_uniform_(self.v_proj_weight)
        if self.in_proj_bias is not None:
            constant_(self.in_proj_bias, 0.0)
            constant_(self.out_proj.bias, 0.0)
        if self.bias_k is not None:
            xavier_normal_(self.bias_k)
        if self.bias_v is not None:
            xavier_normal_(self.bias_v)

    def __setstate__(self, state):
        # checkpoints from before kdim/vdim existed
        state.setdefault("_qkv_same_embed_dim", True)
        super().__setstate__(state)

    def forward(self, query: Tensor, key: Tensor, value: Tensor, key_padding_mask=None,
                need_weights: bool = True, attn_mask=None, average_attn_weights: bool = True,
                is_causal: bool = False):
        """(output, weights or None).  Always PyTorch's general path: its inference fast
        path (``torch._native_multi_head_attention``) computes the same values, into a
        contiguous output, which is what glasstorch returns when PyTorch would take it."""
        is_batched = query.dim() == 3
        fused = self._fast_path_applies(query, key, value, attn_mask, key_padding_mask)
        key_padding_mask = F._canonical_mask(key_padding_mask, "key_padding_mask",
                                             F._none_or_dtype(attn_mask), "attn_mask",
                                             query.dtype)
        attn_mask = F._canonical_mask(attn_mask, "attn_mask", None, "", query.dtype,
                                      check_other=False)
        if self.batch_first and is_batched:
            # sequence first, keeping which of query/key/value are the same tensor
            if key is value:
                if query is key:
                    query = key = value = query.transpose(1, 0)
                else:
                    query, key = (x.transpose(1, 0) for x in (query, key))
                    value = key
            else:
                query, key, value = (x.transpose(1, 0) for x in (query, key, value))
        separate = {} if self._qkv_same_embed_dim else {
            "use_separate_proj_weight": True, "q_proj_weight": self.q_proj_weight,
            "k_proj_weight": self.k_proj_weight, "v_proj_weight": self.v_proj_weight}
        attn_output, attn_weights = F.multi_head_attention_forward(
            query, key, value, self.embed_dim, self.num_heads, self.in_proj_weight,
            self.in_proj_bias, self.bias_k, self.bias_v, self.add_zero_attn, self.dropout,
            self.out_proj.weight, self.out_proj.bias, training=self.training,
            key_padding_mask=key_padding_mask, need_weights=need_weights, attn_mask=attn_mask,
            average_attn_weights=average_attn_weights, is_causal=is_causal, **separate)
        if self.batch_first and is_batched:
            attn_output = attn_output.transpose(1, 0)
            return (attn_output.contiguous() if fused else attn_output), attn_weights
        return attn_output, attn_weights

    def _fast_path_applies(self, query, key, value, attn_mask, key_padding_mask) -> bool:
        """PyTorch's conditions for its fused inference kernel: eval mode, no autograd,
        batch-first self-attention with packed biased projections, an even number of
        heads, no extra key/value entries and no float masks."""
        if any(m is not None and m.is_floating_point() for m in (attn_mask, key_padding_mask)):
            return False
        if query.dim() != 3 or not (query is key and key is value) or self.training:
            return False
        if self.in_proj_weight is None or self.in_proj_bias is None or \
                query.dtype != self.in_proj_weight.dtype or query.dtype != self.in_proj_bias.dtype:
            return False
        if self.num_heads % 2 or not self.batch_first or self.add_zero_attn or \
                self.bias_k is not None or self.bias_v is not None:
            return False
        tensors = (query, self.in_proj_weight, self.in_proj_bias, self.out_proj.weight,
                   self.out_proj.bias)
        return not (is_grad_enabled() and any(t is not None and t.requires_grad
                                              for t in tensors))

    def merge_masks(self, attn_mask, key_padding_mask, query):
        """(mask, mask_type) as the fused kernels take them: key_padding_mask alone is
        type 1; with attn_mask, both expanded to (N, H, L, L) and added, type 2."""
        merged, mask_type = None, None
        if key_padding_mask is not None:
            merged, mask_type = key_padding_mask, 1
        if attn_mask is not None:
            batch_size, seq_len, _ = query.shape
            mask_type = 2
            if attn_mask.dim() == 3:
                merged = attn_mask.view(batch_size, -1, seq_len, seq_len)
            else:
                merged = attn_mask.view(1, 1, seq_len, seq_len).expand(
                    batch_size, self.num_heads, -1, -1)
            if key_padding_mask is not None:
                merged = merged + key_padding_mask.view(batch_size, 1, 1, seq_len).expand(
                    -1, self.num_heads, -1, -1)
        return merged, mask_type


class RReLU(Module):
    """Leaky ReLU whose negative slope is drawn from U(lower, upper) per element in
    training and is (lower + upper) / 2 in eval (F.rrelu)."""

    __constants__ = ["lower", "upper", "inplace"]

    def __init__(self, lower: float = 1.0 / 8, upper: float = 1.0 / 3,
                 inplace: bool = False) -> None:
        super().__init__()
        self.lower, self.upper, self.inplace = lower, upper, inplace

    def forward(self, input: Tensor) -> Tensor:
        return F.rrelu(input, self.lower, self.upper, self.training, self.inplace)

    def extra_repr(self) -> str:
        inplace_str = ", inplace=True" if self.inplace else ""
        return f"lower={self.lower}, upper={self.upper}{inplace_str}"

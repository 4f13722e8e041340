"""scaled_dot_product_attention, MultiheadAttention and the Transformer layers against
real PyTorch: values, gradients and grad_fn names over random shapes and masks, the
backend PyTorch's CPU build picks, initialisation bit for bit from the same seed,
module reprs / state_dicts / outputs / gradients (nn_differential.check_module) in
training (dropout 0) and eval mode, warnings and errors."""
import numpy as np
import pytest
from hypothesis import given, strategies as st

import glasstorch

from .differential import differential, raised
from .helpers import assert_same, to_numpy
from .nn_differential import check_module

seeds = st.integers(0, 2**31 - 1)


# -- scaled_dot_product_attention --------------------------------------------------------------

@st.composite
def attention_cases(draw):
    batch = draw(st.integers(1, 2))
    length, source = draw(st.integers(1, 5)), draw(st.integers(1, 5))
    dim = draw(st.sampled_from([1, 2, 4, 8]))
    heads = draw(st.sampled_from([None, 1, 2, 4]))
    kv_heads = heads
    gqa = heads is not None and draw(st.booleans())
    if gqa:
        kv_heads = draw(st.sampled_from([h for h in (1, 2, 4) if heads % h == 0]))
    value_dim = draw(st.sampled_from([dim, 3]))
    causal = draw(st.booleans())
    mask_kind = "none" if causal else draw(st.sampled_from(["none", "bool", "float",
                                                             "bool_full", "float_rows"]))
    # (a negative scale with is_causal makes PyTorch's flash kernel return NaN rows, with
    # gradients whose NaN pattern follows its blocking: not compared)
    scale = draw(st.sampled_from([None, 0.5] if causal else [None, 0.5, -0.3]))
    return batch, heads, kv_heads, length, source, dim, value_dim, gqa, causal, mask_kind, scale


def _lead(batch, heads):
    return (batch,) if heads is None else (batch, heads)


@given(attention_cases(), seeds)
def test_sdpa_matches_pytorch(torch, case, seed):
    batch, heads, kv_heads, length, source, dim, value_dim, gqa, causal, mask_kind, scale = case
    rng = np.random.default_rng(seed)
    q = rng.standard_normal(_lead(batch, heads) + (length, dim))
    k = rng.standard_normal(_lead(batch, kv_heads) + (source, dim))
    v = rng.standard_normal(_lead(batch, kv_heads) + (source, value_dim))
    mask = {"none": None,
            "bool": rng.random((length, source)) > 0.3,
            "float": rng.standard_normal((length, source)),
            "bool_full": rng.random(_lead(batch, heads) + (length, source)) > 0.5,
            "float_rows": rng.standard_normal((1, length, source))}[mask_kind]
    grad = rng.standard_normal(_lead(batch, heads) + (length, value_dim))
    results = []
    for lib in (glasstorch, torch):
        tensors = [lib.tensor(a.astype(np.float32), requires_grad=True) for a in (q, k, v)]
        m = None if mask is None else lib.tensor(mask if mask.dtype == bool
                                                 else mask.astype(np.float32))
        args = dict(attn_mask=m, is_causal=causal, scale=scale, enable_gqa=gqa)
        choice = lib.ops.aten._fused_sdp_choice(*tensors, m, 0.0, causal, scale=scale,
                                                enable_gqa=gqa)
        out = lib.nn.functional.scaled_dot_product_attention(*tensors, **args)
        out.backward(lib.tensor(grad.astype(np.float32)))
        results.append((choice, type(out.grad_fn).__name__, out.detach(),
                        [t.grad for t in tensors]))
    (choice, node, out, grads), (t_choice, t_node, t_out, t_grads) = results
    assert (choice, node) == (t_choice, t_node)
    assert_same(out, t_out, atol=2e-5, rtol=1e-4)
    for g, t in zip(grads, t_grads):
        np.testing.assert_allclose(to_numpy(g), to_numpy(t), atol=2e-5, rtol=1e-4)


@pytest.mark.parametrize("dtype", ["float64", "float16", "bfloat16"])
@pytest.mark.parametrize("shape", [(2, 3, 4, 8), (3, 4, 8)])
def test_sdpa_dtypes(torch, dtype, shape):
    rng = np.random.default_rng(1)
    arrays = [rng.standard_normal(shape).astype(np.float32) for _ in range(3)]
    tol = 1e-10 if dtype == "float64" else 1e-2
    outs = []
    for lib in (glasstorch, torch):
        q, k, v = (lib.tensor(a).to(getattr(lib, dtype)) for a in arrays)
        outs.append(lib.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True))
    assert_same(outs[0], outs[1], atol=tol, rtol=tol)


def test_sdpa_dropout_uses_the_same_random_stream():
    """With dropout the math backend draws its mask like PyTorch's dropout does."""
    def scenario(lib):
        lib.manual_seed(3)
        q = lib.randn(2, 2, 4, 4)
        out = lib.nn.functional.scaled_dot_product_attention(q, q, q, dropout_p=0.4)
        return out, lib.rand(2)
    differential(scenario)


def test_sdpa_fully_masked_rows_give_zeros():
    def scenario(lib):
        q = lib.tensor(np.linspace(-1, 1, 24, dtype=np.float32).reshape(1, 1, 4, 6),
                       requires_grad=True)
        mask = lib.tensor([[True] * 4, [False] * 4, [True, False, True, False], [False] * 4])
        outs = [lib.nn.functional.scaled_dot_product_attention(x, x[..., :4, :], x[..., :4, :],
                                                               attn_mask=m)
                for x, m in ((q, mask), (q[0], mask))]
        (outs[0].sum() + outs[1].sum()).backward()
        return outs, q.grad
    differential(scenario)


def test_sdpa_empty_inputs_give_zero_gradients():
    def scenario(lib):
        q = lib.ones(2, 3, 4, requires_grad=True)
        k = lib.ones(2, 0, 4, requires_grad=True)
        out = lib.nn.functional.scaled_dot_product_attention(q, k, k)
        out.sum().backward()
        return out, q.grad, k.grad
    differential(scenario)


SDPA_ERRORS = [
    lambda lib: lib.nn.functional.scaled_dot_product_attention(
        lib.zeros(2, 3, 4), lib.zeros(2, 3, 4, dtype=lib.float64), lib.zeros(2, 3, 4)),
    lambda lib: lib.nn.functional.scaled_dot_product_attention(
        lib.zeros(4), lib.zeros(4), lib.zeros(4)),
    lambda lib: lib.nn.functional.scaled_dot_product_attention(
        lib.zeros(2, 3, 4), lib.zeros(2, 3, 4), lib.zeros(2, 3, 4),
        attn_mask=lib.zeros(3, 3, dtype=lib.int64)),
    lambda lib: lib.nn.functional.scaled_dot_product_attention(
        lib.zeros(2, 3, 4), lib.zeros(2, 3, 4), lib.zeros(2, 3, 4), attn_mask=lib.zeros(3, 3),
        is_causal=True),
    lambda lib: lib.nn.functional.scaled_dot_product_attention(
        lib.zeros(1, 3, 2, 4), lib.zeros(1, 2, 2, 4), lib.zeros(1, 2, 2, 4), enable_gqa=True),
    lambda lib: lib.nn.functional.scaled_dot_product_attention(
        lib.zeros(2, 3, 4), lib.zeros(2, 3, 4), lib.zeros(2, 3, 4), dropout_p=1.5),
    lambda lib: lib.nn.functional.scaled_dot_product_attention(
        lib.zeros(2, 3, 4), lib.zeros(2, 3, 4), lib.zeros(2, 3, 4), attn_mask=lib.zeros(4, 3)),
    lambda lib: lib.ops.aten._scaled_dot_product_flash_attention_for_cpu(
        lib.zeros(2, 3, 4), lib.zeros(2, 3, 4), lib.zeros(2, 3, 4)),
    lambda lib: lib.ops.aten._scaled_dot_product_flash_attention_for_cpu(
        *[lib.zeros(1, 2, 3, 4, dtype=lib.int64)] * 3),
    lambda lib: lib.ops.aten._scaled_dot_product_flash_attention_for_cpu(
        lib.zeros(1, 2, 3, 4), lib.zeros(1, 2, 3, 4), lib.zeros(1, 2, 3, 2)),
    lambda lib: lib.ops.aten._scaled_dot_product_flash_attention_for_cpu(
        *[lib.zeros(1, 2, 3, 4)] * 3, dropout_p=0.5),
    lambda lib: lib.ops.aten._scaled_dot_product_flash_attention_for_cpu(
        *[lib.zeros(1, 2, 3, 4)] * 3, attn_mask=lib.zeros(3, 3, dtype=lib.bool)),
    lambda lib: lib.ops.aten._scaled_dot_product_flash_attention_for_cpu(
        *[lib.zeros(1, 2, 3, 4)] * 3, attn_mask=lib.zeros(2, 3, 3)),
]


@pytest.mark.parametrize("case", range(len(SDPA_ERRORS)))
def test_sdpa_errors(case):
    raised(differential(SDPA_ERRORS[case], may_raise=True))


# -- MultiheadAttention -------------------------------------------------------------------------

def _attention_inputs(query, key=None, value=None, *, key_padding_mask=None, attn_mask=None,
                      self_attention=False, need_weights=True, average_attn_weights=True,
                      is_causal=False):
    """inputs(lib) for check_module: MultiheadAttention.forward's arguments, all
    positional; float tensors from one seed, masks from numpy arrays;
    ``self_attention`` passes the same tensor as query, key and value."""
    def make(lib):
        rng = np.random.default_rng(7)
        q = lib.from_numpy(rng.standard_normal(query).astype(np.float32))
        k = q if self_attention else lib.from_numpy(rng.standard_normal(key).astype(np.float32))
        v = k if self_attention or value is None else \
            lib.from_numpy(rng.standard_normal(value).astype(np.float32))
        padding, attn = (None if m is None else lib.from_numpy(m.copy())
                         for m in (key_padding_mask, attn_mask))
        return q, k, v, padding, need_weights, attn, average_attn_weights, is_causal
    return make


_KPM = np.array([[False, False, True, False, True], [False] * 5, [True, False, False, False,
                                                                    False]])
_CAUSAL = np.triu(np.full((5, 5), -np.inf, dtype=np.float32), 1)

MHA_CASES = [
    ("self, need_weights", {}, _attention_inputs((5, 3, 8), self_attention=True)),
    ("self, no weights", {}, _attention_inputs((5, 3, 8), self_attention=True,
                                               need_weights=False)),
    ("cross, per-head weights", {}, _attention_inputs((4, 3, 8), (5, 3, 8), (5, 3, 8),
                                                      average_attn_weights=False)),
    ("encoder-decoder k is v", {}, _attention_inputs((4, 3, 8), (5, 3, 8),
                                                     need_weights=False)),
    ("batch_first", {"batch_first": True},
     _attention_inputs((3, 5, 8), self_attention=True, need_weights=False)),
    ("batch_first weights", {"batch_first": True},
     _attention_inputs((3, 4, 8), (3, 5, 8), (3, 5, 8))),
    ("kdim vdim", {"kdim": 6, "vdim": 3}, _attention_inputs((4, 3, 8), (5, 3, 6), (5, 3, 3))),
    ("no bias", {"bias": False}, _attention_inputs((5, 3, 8), self_attention=True)),
    ("bias_kv zero_attn", {"add_bias_kv": True, "add_zero_attn": True},
     _attention_inputs((5, 3, 8), self_attention=True, key_padding_mask=_KPM,
                       attn_mask=_CAUSAL)),
    ("key padding bool", {}, _attention_inputs((5, 3, 8), self_attention=True,
                                               key_padding_mask=_KPM, need_weights=False)),
    ("key padding weights", {}, _attention_inputs((5, 3, 8), self_attention=True,
                                                  key_padding_mask=_KPM)),
    ("float masks", {}, _attention_inputs((5, 3, 8), self_attention=True,
                                          key_padding_mask=np.where(_KPM, -1.5, 0.0).astype(
                                              np.float32), attn_mask=_CAUSAL)),
    ("bool attn_mask 3d", {}, _attention_inputs(
        (5, 3, 8), self_attention=True, need_weights=False,
        attn_mask=np.random.default_rng(2).random((6, 5, 5)) > 0.7)),
    ("causal hint", {}, _attention_inputs((5, 3, 8), self_attention=True, attn_mask=_CAUSAL,
                                          is_causal=True, need_weights=False)),
    ("causal with padding", {}, _attention_inputs((5, 3, 8), self_attention=True,
                                                  attn_mask=_CAUSAL, is_causal=True,
                                                  key_padding_mask=_KPM, need_weights=False)),
    ("unbatched", {}, _attention_inputs((5, 8), self_attention=True,
                                        key_padding_mask=_KPM[0])),
    ("unbatched no weights", {}, _attention_inputs((5, 8), (4, 8), (4, 8),
                                                   need_weights=False)),
    ("three heads", {"num_heads": 4}, _attention_inputs((5, 3, 8), self_attention=True,
                                                        need_weights=False)),
]


@pytest.mark.parametrize("name,kwargs,inputs", MHA_CASES, ids=[c[0] for c in MHA_CASES])
@pytest.mark.parametrize("train", [True, False])
def test_multihead_attention(name, kwargs, inputs, train):
    options = dict(kwargs)
    heads = options.pop("num_heads", 2)
    check_module(lambda lib: lib.nn.MultiheadAttention(8, heads, **options), inputs, train=train)


@pytest.mark.parametrize("kwargs", [{}, {"kdim": 4, "vdim": 6}, {"add_bias_kv": True},
                                    {"bias": False}])
def test_multihead_attention_initialisation_is_bit_identical(kwargs):
    def scenario(lib):
        lib.manual_seed(11)
        options = dict(kwargs)
        if "dtype" in options:
            options["dtype"] = getattr(lib, options["dtype"])
        module = lib.nn.MultiheadAttention(12, 3, **options)
        return repr(module), {k: v.tolist() for k, v in module.state_dict().items()}, \
            [n for n, _ in module.named_parameters()]
    theirs = differential(scenario)
    assert theirs[0] == "returned"


def test_multihead_attention_dropout_in_training():
    """With dropout the weights go through F.dropout: same random stream as PyTorch."""
    def scenario(lib):
        lib.manual_seed(5)
        module = lib.nn.MultiheadAttention(8, 2, dropout=0.5)
        x = lib.randn(4, 2, 8)
        return module(x, x, x), module(x, x, x, need_weights=False)[0]
    differential(scenario)


MHA_ERRORS = [
    lambda lib: lib.nn.MultiheadAttention(0, 2),
    lambda lib: lib.nn.MultiheadAttention(8, 3),
    lambda lib: lib.nn.MultiheadAttention(8, 2)(lib.zeros(5, 3, 8), lib.zeros(5, 8),
                                                lib.zeros(5, 8)),
    lambda lib: lib.nn.MultiheadAttention(8, 2)(lib.zeros(5, 8), lib.zeros(5, 3, 8),
                                                lib.zeros(5, 3, 8)),
    lambda lib: lib.nn.MultiheadAttention(8, 2)(lib.zeros(1, 5, 3, 8), lib.zeros(5, 3, 8),
                                                lib.zeros(5, 3, 8)),
    lambda lib: lib.nn.MultiheadAttention(8, 2)(lib.zeros(5, 3, 4), lib.zeros(5, 3, 4),
                                                lib.zeros(5, 3, 4)),
    lambda lib: lib.nn.MultiheadAttention(8, 2)(lib.zeros(5, 3, 8), lib.zeros(5, 3, 8),
                                                lib.zeros(4, 3, 8)),
    lambda lib: lib.nn.MultiheadAttention(8, 2)(lib.zeros(5, 3, 8), lib.zeros(5, 3, 8),
                                                lib.zeros(5, 3, 8),
                                                key_padding_mask=lib.zeros(3, 5, dtype=lib.int64)),
    lambda lib: lib.nn.MultiheadAttention(8, 2)(lib.zeros(5, 3, 8), lib.zeros(5, 3, 8),
                                                lib.zeros(5, 3, 8),
                                                key_padding_mask=lib.zeros(2, 5, dtype=lib.bool)),
    lambda lib: lib.nn.MultiheadAttention(8, 2)(lib.zeros(5, 3, 8), lib.zeros(5, 3, 8),
                                                lib.zeros(5, 3, 8), key_padding_mask=lib.zeros(5)),
    lambda lib: lib.nn.MultiheadAttention(8, 2)(lib.zeros(5, 3, 8), lib.zeros(5, 3, 8),
                                                lib.zeros(5, 3, 8), attn_mask=lib.zeros(4, 5)),
    lambda lib: lib.nn.MultiheadAttention(8, 2)(lib.zeros(5, 3, 8), lib.zeros(5, 3, 8),
                                                lib.zeros(5, 3, 8), attn_mask=lib.zeros(5, 5, 5)),
    lambda lib: lib.nn.MultiheadAttention(8, 2)(lib.zeros(5, 3, 8), lib.zeros(5, 3, 8),
                                                lib.zeros(5, 3, 8), attn_mask=lib.zeros(1, 1, 5)),
    lambda lib: lib.nn.MultiheadAttention(8, 2)(lib.zeros(5, 8), lib.zeros(5, 8),
                                                lib.zeros(5, 8), attn_mask=lib.zeros(3, 5, 5)),
    lambda lib: lib.nn.MultiheadAttention(8, 2)(lib.zeros(5, 3, 8), lib.zeros(5, 3, 8),
                                                lib.zeros(5, 3, 8), is_causal=True),
    lambda lib: lib.nn.MultiheadAttention(8, 2, kdim=4)(lib.zeros(5, 3, 8), lib.zeros(5, 3, 4),
                                                        lib.zeros(4, 3, 8)),
]


@pytest.mark.parametrize("case", range(len(MHA_ERRORS)))
def test_multihead_attention_errors(case):
    raised(differential(MHA_ERRORS[case], may_raise=True))


def test_mismatched_mask_types_warn():
    def scenario(lib):
        module = lib.nn.MultiheadAttention(4, 2)
        x = lib.zeros(3, 2, 4)
        return module(x, x, x, key_padding_mask=lib.zeros(2, 3, dtype=lib.bool),
                      attn_mask=lib.zeros(3, 3))[0].shape
    differential(scenario)


# -- Transformer layers ---------------------------------------------------------------------

def _sequence_inputs(*shapes, masks=()):
    def make(lib):
        rng = np.random.default_rng(3)
        tensors = [lib.from_numpy(rng.standard_normal(s).astype(np.float32)) for s in shapes]
        return tuple(tensors) + tuple(None if m is None else lib.from_numpy(m.copy())
                                      for m in masks)
    return make


_PADDING = np.array([[False, False, False, True, True], [False] * 5])


@pytest.mark.parametrize("norm_first", [False, True])
@pytest.mark.parametrize("train", [True, False])
@pytest.mark.parametrize("options,inputs", [
    ({}, _sequence_inputs((5, 2, 8))),
    ({"batch_first": True, "activation": "gelu"}, _sequence_inputs((2, 5, 8))),
    ({"batch_first": True}, _sequence_inputs((2, 5, 8), masks=(_CAUSAL, _PADDING))),
    ({"bias": False, "layer_norm_eps": 1e-3}, _sequence_inputs((5, 2, 8), masks=(_CAUSAL,))),
    ({"activation": "callable"}, _sequence_inputs((5, 8))),
])
def test_transformer_encoder_layer(options, inputs, norm_first, train):
    def build(lib):
        kwargs = dict(options)
        if kwargs.get("activation") == "callable":
            kwargs["activation"] = lib.nn.functional.silu
        return lib.nn.TransformerEncoderLayer(8, 2, dim_feedforward=16, dropout=0.0,
                                              norm_first=norm_first, **kwargs)
    check_module(build, inputs, train=train, atol=1e-5, rtol=1e-4)


def test_transformer_encoder_layer_activation_flags():
    def scenario(lib):
        return [lib.nn.TransformerEncoderLayer(4, 2, 8, activation=a).activation_relu_or_gelu
                for a in ("relu", "gelu", lib.nn.functional.relu, lib.nn.ReLU(), lib.nn.GELU(),
                          lib.nn.functional.silu)]
    differential(scenario)


def test_transformer_encoder_layer_bad_activation():
    raised(differential(lambda lib: lib.nn.TransformerEncoderLayer(4, 2, activation="tanh"),
                        may_raise=True))


@pytest.mark.parametrize("layer_options,enable", [
    ({}, True), ({"batch_first": True}, True), ({"batch_first": True, "norm_first": True}, True),
    ({"batch_first": True, "bias": False}, True), ({"batch_first": True}, False),
    ({"batch_first": True, "activation": "callable"}, True),
])
def test_transformer_encoder_nested_tensor_warning(layer_options, enable):
    def scenario(lib):
        options = dict(layer_options)
        if options.get("activation") == "callable":
            options["activation"] = lib.nn.functional.silu
        layer = lib.nn.TransformerEncoderLayer(8, 2, 16, **options)
        encoder = lib.nn.TransformerEncoder(layer, 2, enable_nested_tensor=enable)
        return encoder.use_nested_tensor, repr(encoder)
    differential(scenario)


@pytest.mark.parametrize("train", [True, False])
@pytest.mark.parametrize("with_norm", [False, True])
def test_transformer_encoder(train, with_norm):
    def build(lib):
        layer = lib.nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0, batch_first=True)
        norm = lib.nn.LayerNorm(8) if with_norm else None
        return lib.nn.TransformerEncoder(layer, 3, norm, enable_nested_tensor=False)
    check_module(build, _sequence_inputs((2, 5, 8), masks=(_CAUSAL, _PADDING)), train=train)


def test_transformer_encoder_detects_causal_masks():
    def scenario(lib):
        mask = lib.nn.Transformer.generate_square_subsequent_mask(4)
        from_module = lib.nn.modules.transformer._detect_is_causal_mask
        return mask, [from_module(mask), from_module(mask, False), from_module(mask, None, 3),
                      from_module(lib.zeros(4, 4)), from_module(None), from_module(None, True)]
    differential(scenario)


@pytest.mark.parametrize("norm_first", [False, True])
@pytest.mark.parametrize("train", [True, False])
def test_transformer_decoder_layer(norm_first, train):
    check_module(lambda lib: lib.nn.TransformerDecoderLayer(8, 2, 16, dropout=0.0,
                                                            norm_first=norm_first),
                 _sequence_inputs((4, 2, 8), (5, 2, 8), masks=(_CAUSAL[:4, :4],)), train=train)


def test_transformer_full_model():
    def build(lib):
        return lib.nn.Transformer(8, 2, num_encoder_layers=2, num_decoder_layers=2,
                                  dim_feedforward=16, dropout=0.0, batch_first=True)
    check_module(build, _sequence_inputs((2, 5, 8), (2, 4, 8)))


def test_transformer_initialisation_is_bit_identical():
    def scenario(lib):
        lib.manual_seed(2)
        model = lib.nn.Transformer(8, 2, 1, 1, 16)
        encoder = lib.nn.TransformerEncoder(lib.nn.TransformerEncoderLayer(8, 2, 16), 2,
                                            enable_nested_tensor=False)
        return [{k: v.tolist() for k, v in m.state_dict().items()} for m in (model, encoder)]
    differential(scenario)


TRANSFORMER_ERRORS = [
    lambda lib: lib.nn.Transformer(8, 2, 1, 1, 16)(lib.zeros(5, 2, 8), lib.zeros(4, 3, 8)),
    lambda lib: lib.nn.Transformer(8, 2, 1, 1, 16)(lib.zeros(5, 2, 8), lib.zeros(4, 2, 6)),
]


@pytest.mark.parametrize("case", range(len(TRANSFORMER_ERRORS)))
def test_transformer_errors(case):
    raised(differential(TRANSFORMER_ERRORS[case], may_raise=True))


def test_transformer_training_step_matches(torch):
    """A few SGD steps on a small encoder: the losses follow PyTorch's."""
    losses = []
    for lib in (glasstorch, torch):
        lib.manual_seed(0)
        model = lib.nn.TransformerEncoder(
            lib.nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0, batch_first=True), 2,
            enable_nested_tensor=False)
        x = lib.randn(3, 6, 8)
        target = lib.randint(0, 8, (3, 6))
        run = []
        for _ in range(3):
            model.zero_grad()
            loss = lib.nn.functional.cross_entropy(model(x).reshape(-1, 8), target.reshape(-1))
            loss.backward()
            with lib.no_grad():
                for p in model.parameters():
                    p -= 0.1 * p.grad
            run.append(loss.item())
        losses.append(run)
    np.testing.assert_allclose(losses[0], losses[1], rtol=1e-4)


@pytest.mark.parametrize("padding", [[[0, 0, 0, 1, 1], [0] * 5], [[0, 1, 0, 1, 1], [0] * 5]],
                         ids=["left-aligned", "holes"])
@pytest.mark.parametrize("grad", [False, True])
def test_inference_fast_paths_give_pytorchs_values(torch, padding, grad):
    """Eval mode: PyTorch's fused layer and nested-tensor encoder (zeros at the padded
    positions, when the padding is left aligned and no gradient is recorded)."""
    values = np.random.default_rng(0).standard_normal((2, 5, 8)).astype(np.float32)
    mask = np.array(padding, dtype=bool)
    outs = []
    for lib in (glasstorch, torch):
        lib.manual_seed(0)
        layer = lib.nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0, batch_first=True)
        encoder = lib.nn.TransformerEncoder(layer, 2, lib.nn.LayerNorm(8)).eval()
        attention = lib.nn.MultiheadAttention(8, 2, batch_first=True).eval()
        x, m = lib.tensor(values), lib.tensor(mask)
        with lib.set_grad_enabled(grad):
            outs.append([encoder(x, src_key_padding_mask=m), encoder.layers[0](x),
                         encoder.layers[1](x, src_key_padding_mask=m),
                         *attention(x, x, x, key_padding_mask=m)])
    for ours, theirs in zip(*outs):
        assert_same(ours.detach(), theirs.detach(), atol=1e-5, rtol=1e-4)


def test_encoder_layer_with_dropout_draws_like_pytorch():
    """Training with dropout: attention-weight dropout (sdpa's math backend) and the
    layer's Dropout modules consume the random stream in PyTorch's order."""
    def scenario(lib):
        lib.manual_seed(4)
        layer = lib.nn.TransformerEncoderLayer(8, 2, 16, dropout=0.3, batch_first=True)
        x = lib.randn(2, 5, 8, requires_grad=True)
        out = layer(x)
        out.sum().backward()
        return out, x.grad, layer.linear1.weight.grad
    differential(scenario)

"""glasstorch._decomp against torch._decomp.

Each decomposition runs in both libraries on equal inputs under a logging
TorchDispatchMode that records ``str(func)`` of every op reaching it; the
recorded sequences must be equal, and the outputs equal in dtype, shape,
strides and values.  Values: the same aten ops in the same order, so only the
kernels' float rounding can differ: float64 within rtol=atol=1e-7, float32
within rtol=1e-5, atol=1e-6, float16 within rtol=atol=1e-3 (one half ULP
around 1 is ~5e-4).
"""
import numpy as np
import pytest
import torch
import torch._decomp as T
from hypothesis import given, settings, strategies as st

import glasstorch as g
import glasstorch._decomp as G

from .helpers import op_logger

GLog, TLog = op_logger(g), op_logger(torch)

TOL = {"float64": (1e-7, 1e-7), "float32": (1e-5, 1e-6), "float16": (1e-3, 1e-3),
       "bfloat16": (1e-2, 1e-2)}


class Arr:
    """An input given as a numpy array, built in each library as a tensor."""

    def __init__(self, a, dtype=None):
        self.a, self.dtype = np.asarray(a), dtype or str(np.asarray(a).dtype)

    def make(self, lib):
        return lib.tensor(self.a).to(getattr(lib, self.dtype))


def _build(lib, x):
    if isinstance(x, Arr):
        return x.make(lib)
    if isinstance(x, (list, tuple)):
        return type(x)(_build(lib, v) for v in x)
    if isinstance(x, dict):
        return {k: _build(lib, v) for k, v in x.items()}
    if isinstance(x, Dtype):
        return getattr(lib, x.name)
    return x


class Dtype:
    """A dtype argument, by name."""

    def __init__(self, name):
        self.name = name


def _flat(x):
    if isinstance(x, (list, tuple)):
        return [leaf for v in x for leaf in _flat(v)]
    return [x]


def _compare(gr, tr):
    gl, tl = _flat(gr), _flat(tr)
    assert len(gl) == len(tl)
    for a, b in zip(gl, tl):
        if b is None or not isinstance(b, torch.Tensor):
            assert str(a).split(".")[-1] == str(b).split(".")[-1]
            continue
        assert str(a.dtype).split(".")[-1] == str(b.dtype).split(".")[-1]
        assert tuple(a.shape) == tuple(b.shape)
        assert tuple(a.stride()) == tuple(b.stride())
        rtol, atol = TOL.get(str(b.dtype).split(".")[-1], (0, 0))
        np.testing.assert_allclose(a.detach().to(g.float64).numpy() if a.is_floating_point()
                                   else a.numpy(),
                                   b.detach().double().numpy() if b.is_floating_point()
                                   else b.numpy(), rtol=rtol, atol=atol, equal_nan=True)


def check(name, *args, seed=None, **kwargs):
    """Run both decompositions of ``aten.<name>`` on the same inputs; returns
    the recorded op sequence."""
    base, _, overload = name.partition(".")
    gop = getattr(getattr(g.ops.aten, base), overload or "default")
    top = getattr(getattr(torch.ops.aten, base), overload or "default")
    gargs, gkw = _build(g, args), _build(g, kwargs)
    targs, tkw = _build(torch, args), _build(torch, kwargs)
    if seed is not None:
        g.manual_seed(seed)
        torch.manual_seed(seed)
    with GLog() as glog:
        gr = G.decomposition_table[gop](*gargs, **gkw)
    if seed is not None:
        torch.manual_seed(seed)
    with TLog() as tlog:
        tr = T.decomposition_table[top](*targs, **tkw)
    assert glog.ops == tlog.ops
    _compare(gr, tr)
    _compare(gargs, targs)   # in-place effects (running statistics, out=)
    return tlog.ops


# -- inputs ------------------------------------------------------------------------------

shapes = st.lists(st.integers(1, 5), min_size=1, max_size=3).map(tuple)
seeds = st.integers(0, 2 ** 16)
float_dtypes = st.sampled_from(["float32", "float64"])
SETTINGS = settings(max_examples=12, deadline=None, derandomize=True)


def rand(seed, shape, dtype="float32", offset=0):
    return Arr(np.random.default_rng(seed + offset).standard_normal(shape), dtype)


# -- pointwise ---------------------------------------------------------------------------

@SETTINGS
@given(shapes, seeds, st.sampled_from(["float32", "float64", "float16"]),
       st.sampled_from(["none", "tanh"]))
def test_gelu(shape, seed, dtype, approximate):
    x, gr = rand(seed, shape, dtype), rand(seed, shape, dtype, 1)
    check("gelu", x, approximate=approximate)
    check("gelu_backward", gr, x, approximate=approximate)


@SETTINGS
@given(shapes, seeds, st.sampled_from(["float32", "float64", "float16"]))
def test_activation_backwards(shape, seed, dtype):
    x, gr = rand(seed, shape, dtype), rand(seed, shape, dtype, 1)
    check("silu", x)
    check("silu_backward", gr, x)
    check("sigmoid_backward", gr, x)
    check("tanh_backward", gr, x)
    check("threshold_backward", gr, x, 0.25)
    check("addcmul", x, gr, x, value=0.5)
    check("addcdiv", x, gr, rand(seed, shape, dtype, 2), value=2)


@SETTINGS
@given(shapes, seeds, float_dtypes, st.sampled_from([0, 1, 2]))
def test_mse_loss(shape, seed, dtype, reduction):
    x, y = rand(seed, shape, dtype), rand(seed, shape, dtype, 1)
    out = check("mse_loss", x, y, reduction)
    assert out[-1] == {0: "aten.pow.Tensor_Scalar", 1: "aten.mean.default",
                       2: "aten.sum.default"}[reduction]
    grad = Arr(np.float64(0.5), dtype) if reduction else rand(seed, shape, dtype, 2)
    check("mse_loss_backward", grad, x, y, reduction)


def test_out_overloads():
    x = rand(0, (3, 4))
    assert check("gelu.out", x, out=Arr(np.zeros((3, 4)), "float32"))[-1] == "aten.copy_.default"
    # a wrongly sized out is resized first
    assert check("gelu.out", x, out=Arr(np.zeros(0), "float32"))[-2:] == \
        ["aten.resize_.default", "aten.copy_.default"]
    check("native_layer_norm.out", x, [4], None, None, 1e-5,
          out0=Arr(np.zeros((3, 4)), "float32"), out1=Arr(np.zeros((3, 1)), "float32"),
          out2=Arr(np.zeros((3, 1)), "float32"))


# -- softmax -----------------------------------------------------------------------------

@SETTINGS
@given(shapes, seeds, st.sampled_from(["float32", "float64", "float16"]), st.data())
def test_softmax(shape, seed, dtype, data):
    dim = data.draw(st.integers(-len(shape), len(shape) - 1))
    x = rand(seed, shape, dtype)
    half_to_float = dtype == "float16" and data.draw(st.booleans())
    check("_softmax", x, dim, half_to_float)
    check("_log_softmax", x, dim, half_to_float)
    gr, y = rand(seed, shape, dtype, 1), rand(seed, shape, dtype, 2)
    check("_softmax_backward_data", gr, y, dim, Dtype(dtype))
    check("_log_softmax_backward_data", gr, y, dim, Dtype(dtype))


class ArrT(Arr):
    """A transposed (non-contiguous) input."""

    def make(self, lib):
        return super().make(lib).t()


def test_softmax_non_contiguous_input_is_cloned():
    x = ArrT(np.random.default_rng(0).standard_normal((4, 3)), "float32")
    assert check("_softmax", x, 0, False)[0] == "aten.clone.default"


# -- matrix products, dropout --------------------------------------------------------------

@SETTINGS
@given(st.integers(1, 4), st.integers(1, 4), st.integers(1, 4), seeds, float_dtypes,
       st.sampled_from([(1, 1), (0, 2), (0.5, -1)]))
def test_addmm(m, k, n, seed, dtype, scales):
    beta, alpha = scales
    ops = check("addmm", rand(seed, (n,), dtype), rand(seed, (m, k), dtype, 1),
                rand(seed, (k, n), dtype, 2), beta=beta, alpha=alpha)
    assert ops[0] == "aten.mm.default"


@SETTINGS
@given(shapes, seeds, st.sampled_from([0.0, 0.3, 1.0]), st.booleans())
def test_dropout(shape, seed, p, train):
    x = rand(seed, shape)
    check("dropout", x, p, train, seed=seed)
    check("native_dropout", x, p, train, seed=seed)
    mask = Arr(np.random.default_rng(seed).random(shape) > 0.5)
    check("native_dropout_backward", x, mask, 2.0)


# -- normalization -----------------------------------------------------------------------

@SETTINGS
@given(st.lists(st.integers(1, 4), min_size=2, max_size=3).map(tuple), seeds,
       st.sampled_from(["float32", "float64"]), st.booleans(), st.booleans())
def test_layer_norm(shape, seed, dtype, affine, last_only):
    normalized = list(shape[-1:] if last_only else shape[1:])
    w = rand(seed, normalized, dtype, 1) if affine else None
    b = rand(seed, normalized, dtype, 2) if affine else None
    x = rand(seed, shape, dtype)
    check("native_layer_norm", x, normalized, w, b, 1e-5)
    out, mean, rstd = torch.native_layer_norm(_build(torch, x), normalized, _build(torch, w),
                                              _build(torch, b), 1e-5)
    mean, rstd = Arr(mean.numpy(), dtype), Arr(rstd.numpy(), dtype)
    for mask in ([True, True, True], [True, False, False]):
        check("native_layer_norm_backward", rand(seed, shape, dtype, 3), x, normalized, mean,
              rstd, w, b, mask)


@SETTINGS
@given(st.lists(st.integers(1, 4), min_size=2, max_size=4).map(tuple), seeds,
       st.sampled_from(["float32", "float64"]), st.booleans(), st.booleans())
def test_batch_norm(shape, seed, dtype, training, affine):
    if training and np.prod(shape) // shape[1] < 2:
        shape = (2,) + shape[1:]
    c = shape[1]
    w = rand(seed, (c,), dtype, 1) if affine else None
    b = rand(seed, (c,), dtype, 2) if affine else None
    rm = rand(seed, (c,), dtype, 3)
    rv = Arr(np.random.default_rng(seed).random(c) + 0.5, dtype)
    x = rand(seed, shape, dtype)
    check("native_batch_norm", x, w, b, rm, rv, training, 0.1, 1e-5)
    tx = _build(torch, x)
    _, mean, invstd = torch.native_batch_norm(tx, _build(torch, w), _build(torch, b),
                                              _build(torch, rm), _build(torch, rv),
                                              True, 0.1, 1e-5)
    mean, invstd = Arr(mean.numpy(), dtype), Arr(invstd.numpy(), dtype)
    check("native_batch_norm_backward", rand(seed, shape, dtype, 4), x, w, rm, rv, mean, invstd,
          training, 1e-5, [True, affine, affine])


# -- nll_loss ----------------------------------------------------------------------------

@SETTINGS
@given(st.integers(1, 5), st.integers(2, 5), seeds, float_dtypes, st.sampled_from([0, 1, 2]),
       st.booleans(), st.booleans())
def test_nll_loss(n, c, seed, dtype, reduction, weighted, batched):
    rng = np.random.default_rng(seed)
    x = rand(seed, (n, c) if batched else (c,), dtype)
    target = rng.integers(0, c, n if batched else ())
    if batched:
        target[0] = -100           # an ignored row
    target = Arr(target.astype(np.int64))
    weight = Arr(rng.random(c) + 0.1, dtype) if weighted else None
    check("nll_loss_forward", x, target, weight, reduction, -100)
    out, total = torch.ops.aten.nll_loss_forward(_build(torch, x), _build(torch, target),
                                                 _build(torch, weight), reduction, -100)
    grad = rand(seed, (n,), dtype, 5) if reduction == 0 and batched else \
        Arr(np.float64(1.5), dtype)
    check("nll_loss_backward", grad, x, target, weight, reduction, -100,
          Arr(total.numpy(), dtype))


# -- the tables --------------------------------------------------------------------------

def _names(table):
    return {op.name().replace("aten::", "") for op in table
            if getattr(op, "namespace", None) == "aten"}


def _declared():
    from glasstorch._dispatcher.dispatcher import dispatcher
    return {n.replace("aten::", "") for n in dispatcher.operators if n.startswith("aten::")}


PACKETS = ["gelu", "gelu_backward", "silu", "silu_backward", "sigmoid_backward",
           "tanh_backward", "threshold_backward", "_softmax", "_log_softmax",
           "_softmax_backward_data", "_log_softmax_backward_data", "addmm", "dropout",
           "native_dropout", "native_dropout_backward", "native_layer_norm",
           "native_layer_norm_backward", "native_batch_norm", "native_batch_norm_backward",
           "mse_loss", "mse_loss_backward", "nll_loss_forward", "nll_loss_backward", "addcmul",
           "addcdiv", "t", "squeeze", "split_with_sizes", "stack", "rsub", "clamp_min", "clamp_max", "zeros_like",
           "ones_like", "masked_fill", "masked_fill_", "lerp", "logsumexp", "leaky_relu",
           "leaky_relu_backward", "elu", "elu_backward", "hardtanh", "hardtanh_backward",
           "softplus", "softplus_backward", "hardsigmoid", "hardsigmoid_backward", "hardswish",
           "hardswish_backward", "mish", "log_sigmoid_forward", "log_sigmoid_backward", "glu",
           "glu_backward", "binary_cross_entropy", "binary_cross_entropy_backward",
           "smooth_l1_loss", "smooth_l1_loss_backward", "huber_loss", "huber_loss_backward",
           "embedding_dense_backward", "native_group_norm", "native_group_norm_backward",
           "gelu_", "silu_", "leaky_relu_", "hardtanh_", "hardsigmoid_", "hardswish_", "relu_",
           "addmm_", "fill_", "index_put_", "scatter_", "scatter_add_", "logit_", "round_"]

# Overloads of those packets in torch's table that glasstorch declares but does
# not decompose: squeeze.dims (torch's reaches prims.squeeze) and the .out
# overloads of the two losses' backwards, whose torch decompositions are
# separate functions.
NOT_DECOMPOSED = {"squeeze.dims", "smooth_l1_loss_backward.grad_input",
                  "huber_loss_backward.out"}


def test_get_decompositions_packets_expand():
    gtab = G.get_decompositions([getattr(g.ops.aten, p) for p in PACKETS])
    ttab = T.get_decompositions([getattr(torch.ops.aten, p) for p in PACKETS])
    assert _names(gtab) == (_names(ttab) & _declared()) - NOT_DECOMPOSED
    assert all(gtab[op] is G.decomposition_table[op] for op in gtab)


def test_get_decompositions_overloads_and_missing():
    aten = g.ops.aten
    got = G.get_decompositions([aten.addmm.default, aten.mm.default, aten.gelu])
    assert set(got) == {aten.addmm.default, aten.gelu.default, aten.gelu.out}
    assert G.get_decompositions([]) == {}
    with pytest.raises(AssertionError):
        G.get_decompositions([aten.gelu], type="nonsense")


def test_table_is_a_subset_of_torchs():
    assert _names(G.decomposition_table) <= _names(T.decomposition_table)


def test_register_decomposition_expands_and_refuses_duplicates():
    registry = {}

    @G.register_decomposition(g.ops.aten.gelu, registry=registry)
    def f(x):
        return x
    assert set(registry) == {g.ops.aten.gelu.default, g.ops.aten.gelu.out}
    with pytest.raises(RuntimeError, match="duplicate"):
        G.register_decomposition(g.ops.aten.gelu.out, registry=registry)(f)


def test_core_aten_decompositions():
    gcore, tcore = G.core_aten_decompositions(), T.core_aten_decompositions()
    gnames, tnames = _names(gcore), _names(tcore)
    assert gnames <= tnames
    # every decomposition glasstorch has that torch's core table holds is in ours
    assert _names(G.decomposition_table) & tnames <= gnames
    # the functional composites decompose through their own kernels
    aten = g.ops.aten
    for op in (aten.layer_norm.default, aten.linear.default, aten.cross_entropy_loss.default):
        assert gcore[op] == op.decompose
    assert aten.gelu.default not in gcore     # not in torch's core list
    assert aten.gelu_backward.default in gcore
    for op in (aten.embedding_dense_backward.default, aten.t.default, aten.stack.default,
               aten.hardswish_.default, aten.native_group_norm_backward.default,
               aten.logsumexp.default, aten.split.Tensor, aten.masked_fill_.Scalar):
        assert gcore[op] is G.decomposition_table[op]
    assert aten.native_group_norm.default not in gcore and aten.mish.default in gcore


def test_core_composites_match_torchs():
    """The functional composites in both core tables: glasstorch's are all in
    torch's; torch's that glasstorch declares differ only as listed below."""
    gcore, tcore = G.core_aten_decompositions(), T.core_aten_decompositions()
    t_cia = {op.name().replace("aten::", "") for op in tcore
             if getattr(op, "namespace", None) == "aten" and
             torch._C._dispatch_has_kernel_for_dispatch_key(op.name(),
                                                            "CompositeImplicitAutograd")}
    g_cia = {op.name().replace("aten::", "") for op, f in gcore.items() if f == op.decompose}
    assert g_cia <= _names(tcore)
    assert (t_cia & _declared()) - g_cia == CIA_NOT_COMPOSITE_HERE


# Composites in torch that glasstorch runs with kernels of its own (so its core
# table cannot map them to their kernel), and two whose entry here is the
# decomposition in decompositions.py (silu_backward) or none (mish_backward).
CIA_NOT_COMPOSITE_HERE = {"clip", "clip.Tensor", "isclose", "isfinite", "mish_backward",
                          "silu_backward", "square", "std.out", "true_divide.Scalar",
                          "true_divide.Tensor",
                          "sspaddmm",   # (a SparseCPU kernel of its own, kernels/sparse.py)
                          # torch's CIA serves its non-CPU backends; Meta has a kernel here
                          "native_channel_shuffle"}


# -- added decompositions: views and shape ops ---------------------------------------------

@SETTINGS
@given(st.lists(st.integers(1, 4), min_size=0, max_size=2).map(tuple), seeds)
def test_t(shape, seed):
    assert check("t", rand(seed, shape)) == ["aten.transpose.int"]


@SETTINGS
@given(shapes, seeds, st.data())
def test_transpose_squeeze_split_stack(shape, seed, data):
    n = len(shape)
    d0, d1 = data.draw(st.integers(-n, n - 1)), data.draw(st.integers(-n, n - 1))
    x = rand(seed, shape)
    ops = check("transpose.int", x, d0, d1)
    assert ops == (["aten.alias.default"] if n <= 1 or d0 == d1 else ["aten.permute.default"])
    with_ones = Arr(np.random.default_rng(seed).standard_normal((1,) + shape + (1,)), "float32")
    assert check("squeeze", with_ones) == ["aten.squeeze.dims"]
    assert check("squeeze.dim", with_ones, data.draw(st.integers(-n - 2, n + 1))) == \
        ["aten.squeeze.dims"]
    dim = data.draw(st.integers(-n, n - 1))
    check("split.Tensor", x, data.draw(st.integers(1, 5)), dim)
    cut = data.draw(st.integers(0, shape[dim]))
    assert check("split_with_sizes", x, [cut, shape[dim] - cut], dim) == \
        ["aten.as_strided.default"] * 2
    stack_dim = data.draw(st.integers(-n - 1, n))
    ops = check("stack", [x, rand(seed, shape, offset=1), rand(seed, shape, offset=2)], stack_dim)
    assert ops[-1] == ("aten.cat.default" if stack_dim in (n, -1) else "aten.view.default")


class Zeros(Arr):
    """An input made by ``zeros`` (contiguous strides even when empty)."""

    def make(self, lib):
        return lib.zeros(self.a.shape, dtype=getattr(lib, self.dtype))


def test_split_of_an_empty_dim_detaches():
    assert check("split.Tensor", Zeros(np.zeros((0, 3)), "float32"), 2) == ["aten.detach.default"]


# -- pointwise -----------------------------------------------------------------------------

@SETTINGS
@given(shapes, seeds, st.sampled_from(["float32", "float64", "float16"]))
def test_pointwise_fills_and_clamps(shape, seed, dtype):
    x, y = rand(seed, shape, dtype), rand(seed, shape, dtype, 1)
    mask = Arr(np.random.default_rng(seed).random(shape) > 0.5)
    check("rsub.Tensor", x, y, alpha=2)
    check("rsub.Scalar", x, 3)
    check("clamp_min", x, 0.25)
    check("clamp_max", x, -0.25)
    for name in ("zeros_like", "ones_like"):
        assert check(name, x) == ["aten.full_like.default"]
        check(name, x, dtype=Dtype("bool"))
    check("masked_fill.Scalar", x, mask, 2.5)
    check("masked_fill.Tensor", x, mask, Arr(np.float64(-1.5), dtype))
    check("masked_fill_.Scalar", x, mask, 0.5)
    check("lerp.Scalar", x, y, 0.3)
    check("lerp.Scalar", x, y, 0.7)
    check("lerp.Tensor", x, y, Arr(np.random.default_rng(seed).random(shape), dtype))


@SETTINGS
@given(shapes, seeds, float_dtypes, st.booleans(), st.data())
def test_logsumexp(shape, seed, dtype, keepdim, data):
    dims = data.draw(st.lists(st.integers(0, len(shape) - 1), min_size=1, max_size=len(shape),
                              unique=True))
    a = np.random.default_rng(seed).standard_normal(shape)
    a.flat[0] = data.draw(st.sampled_from([0.0, np.inf, -np.inf]))
    check("logsumexp", Arr(a, dtype), dims, keepdim)


# -- activations ---------------------------------------------------------------------------

@SETTINGS
@given(shapes, seeds, st.sampled_from(["float32", "float64", "float16"]))
def test_more_activations(shape, seed, dtype):
    x, gr = Arr(3 * np.random.default_rng(seed).standard_normal(shape), dtype), \
        rand(seed, shape, dtype, 1)
    check("leaky_relu", x, 0.2)
    check("leaky_relu_backward", gr, x, 0.2, False)
    check("elu", x, 1.5, 0.5, 2.0)
    check("elu_backward", gr, 1.5, 0.5, 2.0, False, x)
    check("elu_backward", gr, 1.5, 0.5, 2.0, True, x)
    check("hardtanh", x, -0.5, 2.0)
    check("hardtanh_backward", gr, x, -0.5, 2.0)
    check("softplus", x, 2.0, 1.0)
    check("softplus_backward", gr, x, 2.0, 1.0)
    for name in ("hardsigmoid", "hardswish", "mish", "log_sigmoid_forward"):
        check(name, x)
    check("hardsigmoid_backward", gr, x)
    check("hardswish_backward", gr, x)
    buffer = Arr(np.exp(-np.abs(x.a)), dtype)
    check("log_sigmoid_backward", gr, x, buffer)
    check("log_sigmoid_backward", gr, x, Zeros(np.zeros(0), dtype))


@SETTINGS
@given(st.lists(st.integers(1, 3), min_size=1, max_size=3), seeds, float_dtypes, st.data())
def test_glu(shape, seed, dtype, data):
    dim = data.draw(st.integers(-len(shape), len(shape) - 1))
    shape[dim] *= 2
    x = rand(seed, tuple(shape), dtype)
    check("glu", x, dim)
    half = list(shape)
    half[dim] //= 2
    check("glu_backward", rand(seed, tuple(half), dtype, 1), x, dim)


INPLACE = [("gelu_", ()), ("silu_", ()), ("leaky_relu_", (0.1,)), ("hardtanh_", (-0.5, 0.5)),
           ("hardsigmoid_", ()), ("hardswish_", ()), ("relu_", ()), ("logit_", (0.1,)),
           ("round_", ()), ("fill_.Scalar", (1.5,))]


@pytest.mark.parametrize("name,args", INPLACE)
def test_inplace_is_the_functional_op_and_a_copy(name, args):
    x = rand(7, (3, 4))
    base = name.split(".")[0][:-1]
    ops = check(name, x, *args)
    assert ops[-1] == "aten.copy_.default" and ops[0].startswith(f"aten.{base}.")


def test_inplace_matrix_and_index_ops():
    check("addmm_", rand(0, (2, 3)), rand(1, (2, 4)), rand(2, (4, 3)), beta=0.5)
    idx = Arr(np.array([0, 2, 0]))
    check("index_put_", rand(0, (3, 4)), [idx], rand(1, (3, 4)), True)
    check("scatter_add_", rand(0, (3, 4)), 0, Arr(np.array([[0, 2, 1, 0]])), rand(1, (1, 4)))


# -- losses --------------------------------------------------------------------------------

@SETTINGS
@given(shapes, seeds, float_dtypes, st.sampled_from([0, 1, 2]), st.booleans())
def test_more_losses(shape, seed, dtype, reduction, weighted):
    rng = np.random.default_rng(seed)
    p, y = Arr(rng.uniform(0.01, 0.99, shape), dtype), Arr(rng.random(shape), dtype)
    w = Arr(rng.random(shape), dtype) if weighted else None
    grad = Arr(np.float64(0.5), dtype) if reduction else rand(seed, shape, dtype, 2)
    check("binary_cross_entropy", p, y, w, reduction)
    check("binary_cross_entropy_backward", grad, p, y, w, reduction)
    x, t = Arr(2 * rng.standard_normal(shape), dtype), rand(seed, shape, dtype, 1)
    check("smooth_l1_loss", x, t, reduction, 0.5)
    check("smooth_l1_loss_backward", grad, x, t, reduction, 0.5)
    check("huber_loss", x, t, reduction, 0.75)
    check("huber_loss_backward", grad, x, t, reduction, 0.75)


# -- embedding, group norm, backward .out overloads -----------------------------------------

@SETTINGS
@given(st.integers(1, 6), st.lists(st.integers(1, 4), min_size=1, max_size=2).map(tuple),
       st.integers(1, 3), seeds, st.sampled_from(["float32", "float64", "float16"]),
       st.booleans(), st.data())
def test_embedding_dense_backward(num_weights, index_shape, dim, seed, dtype, scale, data):
    rng = np.random.default_rng(seed)
    # out-of-range indices (-1, num_weights) are masked out, not an error
    indices = Arr(rng.integers(-1, num_weights + 1, index_shape).astype(np.int64))
    padding_idx = data.draw(st.integers(-1, num_weights - 1))
    grad = rand(seed, index_shape + (dim,), dtype, 1)
    ops = check("embedding_dense_backward", grad, indices, num_weights, padding_idx, scale)
    assert ops.count("aten._unsafe_masked_index_put_accumulate.default") == 1 + scale


@SETTINGS
@given(st.integers(1, 3), st.sampled_from([(2, 1), (4, 2), (6, 3), (4, 4)]),
       st.lists(st.integers(1, 3), min_size=0, max_size=2).map(tuple), seeds, float_dtypes,
       st.booleans(), st.booleans())
def test_group_norm(n, channels_groups, spatial, seed, dtype, weighted, biased):
    c, group = channels_groups
    shape = (n, c) + spatial
    hxw = int(np.prod(spatial))
    x = rand(seed, shape, dtype)
    w = rand(seed, (c,), dtype, 1) if weighted else None
    b = rand(seed, (c,), dtype, 2) if biased else None
    check("native_group_norm", x, w, b, n, c, hxw, group, 1e-5)
    _, mean, rstd = torch.native_group_norm(_build(torch, x), _build(torch, w),
                                            _build(torch, b), n, c, hxw, group, 1e-5)
    mean, rstd = Arr(mean.numpy(), dtype), Arr(rstd.numpy(), dtype)
    for mask in ([True, weighted, True], [False, True, False]):
        check("native_group_norm_backward", rand(seed, shape, dtype, 3), x, mean, rstd, w, n, c,
              hxw, group, mask)


def test_backward_out_overloads_skip_outputs_not_asked_for():
    x, g_ = rand(0, (3, 4)), rand(1, (3, 4))
    tx = _build(torch, x)
    _, mean, rstd = torch.native_layer_norm(tx, [4], None, None, 1e-5)
    out0, out1, out2 = (Zeros(np.zeros(s), "float32") for s in ((3, 4), (4,), (0,)))
    ops = check("native_layer_norm_backward.out", g_, x, [4], Arr(mean.numpy()),
                Arr(rstd.numpy()), rand(2, (4,)), rand(3, (4,)), [True, True, False],
                out0=out0, out1=out1, out2=out2)
    assert ops[-2:] == ["aten.copy_.default"] * 2
    x = rand(0, (2, 3, 2))
    rm, rv = rand(1, (3,)), Arr(np.ones(3), "float32")
    ops = check("native_batch_norm_backward.out", rand(2, (2, 3, 2)), x, None, rm, rv, None, None,
                False, 1e-5, [True, False, False], out0=Zeros(np.zeros(0), "float32"),
                out1=Zeros(np.zeros(0), "float32"), out2=Zeros(np.zeros(0), "float32"))
    assert ops[-2:] == ["aten.resize_.default", "aten.copy_.default"]

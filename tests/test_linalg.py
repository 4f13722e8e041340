"""Matrix products against real PyTorch: matmul's every rank combination and
broadcasting, mm/bmm/addmm/baddbmm/addmv/mv/dot, einsum, linear; dtypes;
errors (type + message); the dispatch structure (matmul -> mm)."""
import numpy as np
import pytest
from hypothesis import given, strategies as st

import glasstorch
import glasstorch.nn.functional as GF
from glasstorch._dispatcher import dispatch_trace

from .helpers import assert_same

TOL = {"float32": (1e-4, 1e-4), "float64": (1e-10, 1e-10), "bfloat16": (5e-2, 5e-2),
       "float16": (1e-2, 1e-2), "int64": (0, 0)}


def pair(torch, arr):
    return glasstorch.tensor(arr), torch.tensor(arr)


def arrays(rng, *shapes, dtype="float32"):
    out = []
    for s in shapes:
        if dtype == "int64":
            out.append(rng.integers(-4, 4, size=s).astype(np.int64))
        else:
            out.append(rng.standard_normal(s).astype(np.float32 if dtype == "bfloat16" else dtype))
    return out


def both(torch, arrs, dtype="float32"):
    g = [glasstorch.tensor(a) for a in arrs]
    t = [torch.tensor(a) for a in arrs]
    if dtype in ("bfloat16", "float16"):
        g = [x.to(getattr(glasstorch, dtype)) for x in g]
        t = [x.to(getattr(torch, dtype)) for x in t]
    return g, t


def check(ours, theirs, dtype="float32"):
    atol, rtol = TOL[dtype]
    assert_same(ours, theirs, atol=atol, rtol=rtol)


# -- matmul: all rank combinations, broadcasting, non-contiguous --------------------------

dims = st.integers(0, 4)


@st.composite
def matmul_shapes(draw):
    r1, r2 = draw(st.integers(1, 4)), draw(st.integers(1, 4))
    n, k, m = draw(dims), draw(dims), draw(dims)
    batch = [draw(st.integers(1, 3)) for _ in range(max(r1, r2) - 2)] if max(r1, r2) > 2 else []
    b1 = [b if draw(st.booleans()) else 1 for b in batch][len(batch) - max(r1 - 2, 0):] \
        if r1 > 2 else []
    b2 = [b if draw(st.booleans()) else 1 for b in batch][len(batch) - max(r2 - 2, 0):] \
        if r2 > 2 else []
    s1 = (k,) if r1 == 1 else tuple(b1) + (n, k)
    s2 = (k,) if r2 == 1 else tuple(b2) + (k, m)
    return s1, s2


@given(matmul_shapes(), st.sampled_from(["float32", "float64", "bfloat16"]),
       st.booleans(), st.integers(0, 2**31 - 1))
def test_matmul_matches(torch, shapes, dtype, transpose_first, seed):
    rng = np.random.default_rng(seed)
    s1, s2 = shapes
    a, b = arrays(rng, s1, s2, dtype=dtype)
    (ga, gb), (ta, tb) = both(torch, [a, b], dtype)
    if transpose_first and len(s1) >= 2:   # a non-contiguous operand with the same values
        ga = glasstorch.tensor(np.ascontiguousarray(np.swapaxes(a, -1, -2))).transpose(-1, -2)
        ta = torch.tensor(np.ascontiguousarray(np.swapaxes(a, -1, -2))).transpose(-1, -2)
        if dtype == "bfloat16":
            ga, ta = ga.to(glasstorch.bfloat16), ta.to(torch.bfloat16)
    check(glasstorch.matmul(ga, gb), torch.matmul(ta, tb), dtype)
    check(ga @ gb, ta @ tb, dtype)


@pytest.mark.parametrize("s1,s2", [((5, 2, 3), (1, 3, 4)), ((1, 2, 3), (5, 3, 4)),
                                   ((6, 1, 2, 3), (5, 3, 4)), ((3,), (2, 3, 4)),
                                   ((2, 3, 4), (4,)), ((2, 0, 3), (3, 4))])
def test_matmul_special_cases(torch, s1, s2):
    rng = np.random.default_rng(0)
    (ga, gb), (ta, tb) = both(torch, arrays(rng, s1, s2))
    check(glasstorch.matmul(ga, gb), torch.matmul(ta, tb))


def test_matmul_reaches_mm():
    a = glasstorch.tensor(np.ones((4, 4), np.float32))
    with dispatch_trace() as t:
        glasstorch.matmul(a, a)
    lines = str(t).splitlines()
    assert "aten::matmul" in lines[0] and any("op=[aten::mm]" in line for line in lines)
    with dispatch_trace() as t:
        glasstorch.matmul(glasstorch.tensor(np.ones((5, 2, 3), np.float32)), a[:3])
    text = str(t)
    assert "aten::mm]" in text and "aten::_unsafe_view" in text and "aten::bmm" not in text


def test_matmul_batched_uses_bmm():
    with dispatch_trace() as t:
        glasstorch.matmul(glasstorch.tensor(np.ones((2, 3, 4), np.float32)),
                          glasstorch.tensor(np.ones((2, 4, 5), np.float32)))
    assert "aten::bmm" in str(t)


# -- mm family --------------------------------------------------------------------------

@given(dims, dims, dims, st.sampled_from(["float32", "float64", "bfloat16", "int64"]),
       st.integers(0, 2**31 - 1))
def test_mm_addmm(torch, n, k, m, dtype, seed):
    rng = np.random.default_rng(seed)
    a, b, bias = arrays(rng, (n, k), (k, m), (m,), dtype=dtype)
    (ga, gb, gbias), (ta, tb, tbias) = both(torch, [a, b, bias], dtype)
    check(glasstorch.mm(ga, gb), torch.mm(ta, tb), dtype)
    check(glasstorch.addmm(gbias, ga, gb, beta=2, alpha=3), torch.addmm(tbias, ta, tb, beta=2,
                                                                          alpha=3), dtype)
    if n and m:
        check(glasstorch.mm(gb.t(), ga.t()), torch.mm(tb.t(), ta.t()), dtype)


@given(st.integers(1, 3), dims, dims, dims, st.integers(0, 2**31 - 1))
def test_bmm_baddbmm(torch, bs, n, k, m, seed):
    rng = np.random.default_rng(seed)
    (ga, gb, gs), (ta, tb, ts) = both(torch, arrays(rng, (bs, n, k), (bs, k, m), (n, m)))
    check(glasstorch.bmm(ga, gb), torch.bmm(ta, tb))
    check(glasstorch.baddbmm(gs, ga, gb, alpha=0.5), torch.baddbmm(ts, ta, tb, alpha=0.5))
    check(ga.bmm(gb), ta.bmm(tb))


@given(dims, dims, st.sampled_from(["float32", "float64"]), st.integers(0, 2**31 - 1))
def test_mv_dot_outer(torch, n, k, dtype, seed):
    rng = np.random.default_rng(seed)
    (gm, gv, gw, gs), (tm, tv, tw, ts) = both(torch, arrays(rng, (n, k), (k,), (k,), (n,),
                                                            dtype=dtype), dtype)
    check(glasstorch.mv(gm, gv), torch.mv(tm, tv), dtype)
    check(glasstorch.addmv(gs, gm, gv, beta=0.5), torch.addmv(ts, tm, tv, beta=0.5), dtype)
    check(glasstorch.dot(gv, gw), torch.dot(tv, tw), dtype)
    check(glasstorch.vdot(gv, gw), torch.vdot(tv, tw), dtype)
    check(glasstorch.outer(gv, gs), torch.outer(tv, ts), dtype)


def test_inplace_and_out(torch):
    rng = np.random.default_rng(1)
    (gs, ga, gb), (ts, ta, tb) = both(torch, arrays(rng, (3, 5), (3, 4), (4, 5)))
    check(gs.clone().addmm_(ga, gb, beta=0.5), ts.clone().addmm_(ta, tb, beta=0.5))
    go, to = glasstorch.tensor(np.zeros((3, 5), np.float32)), torch.zeros(3, 5)
    glasstorch.mm(ga, gb, out=go)
    torch.mm(ta, tb, out=to)
    check(go, to)


# -- einsum ----------------------------------------------------------------------------------

@pytest.mark.parametrize("eq,shapes", [
    ("ij,jk->ik", [(2, 3), (3, 4)]), ("bij,bjk->bik", [(2, 3, 4), (2, 4, 5)]),
    ("i,j->ij", [(3,), (4,)]), ("ii->i", [(3, 3)]), ("ij->", [(2, 3)]), ("ij,ij->i", [(2, 3)] * 2),
    ("...ij,...jk", [(2, 2, 3), (3, 4)]), ("ij,jk,kl->il", [(2, 3), (3, 4), (4, 2)]),
    ("bhqd,bhkd->bhqk", [(2, 2, 3, 4), (2, 2, 5, 4)]),
])
def test_einsum(torch, eq, shapes):
    rng = np.random.default_rng(2)
    g, t = both(torch, arrays(rng, *shapes))
    assert_same(glasstorch.einsum(eq, *g), torch.einsum(eq, *t), atol=1e-5, rtol=1e-5,
                strides=False)
    assert_same(glasstorch.einsum(eq, g), torch.einsum(eq, t), atol=1e-5, rtol=1e-5,
                strides=False)


# -- linear ------------------------------------------------------------------------------------

@given(st.lists(st.integers(1, 3), min_size=0, max_size=3), st.integers(1, 4), st.integers(1, 4),
       st.booleans(), st.integers(0, 2**31 - 1))
def test_linear(torch, batch, fin, fout, with_bias, seed):
    rng = np.random.default_rng(seed)
    x, w, b = arrays(rng, tuple(batch) + (fin,), (fout, fin), (fout,))
    (gx, gw, gb), (tx, tw, tb) = both(torch, [x, w, b])
    check(GF.linear(gx, gw, gb if with_bias else None),
          torch.nn.functional.linear(tx, tw, tb if with_bias else None))


def test_linear_dispatch_structure():
    x = glasstorch.tensor(np.ones((2, 3), np.float32))
    w = glasstorch.tensor(np.ones((4, 3), np.float32))
    b = glasstorch.tensor(np.ones(4, np.float32))
    with dispatch_trace() as t:
        GF.linear(x, w, b)
    calls = [line.strip() for line in str(t).splitlines() if line.startswith(" [call]")]
    # linear is CompositeImplicitAutograd: its kernel fills the AutogradCPU slot and
    # calls t and addmm, which each enter their own autograd kernel (as in PyTorch)
    assert calls == ["[call] op=[aten::t], key=[AutogradCPU]",
                     "[call] op=[aten::addmm], key=[AutogradCPU]"]


# -- errors ---------------------------------------------------------------------------------------

def _err(fn, exc, msg):
    with pytest.raises(exc) as info:
        fn()
    assert str(info.value) == msg


def f32(*shape):
    return glasstorch.tensor(np.ones(shape, np.float32))


def f64(*shape):
    return glasstorch.tensor(np.ones(shape, np.float64))


def test_errors():
    _err(lambda: glasstorch.mm(f32(2, 3), f32(4, 3)), RuntimeError,
         "mat1 and mat2 shapes cannot be multiplied (2x3 and 4x3)")
    _err(lambda: glasstorch.mm(f32(2, 3), f64(3, 4)), RuntimeError,
         "expected m1 and m2 to have the same dtype, but got: float != double")
    _err(lambda: glasstorch.mm(f32(2, 3), f32(3)), RuntimeError, "mat2 must be a matrix")
    _err(lambda: glasstorch.bmm(f32(2, 2, 3), f32(3, 3, 4)), RuntimeError,
         "Expected size for first two dimensions of batch2 tensor to be: [2, 3] but got: [3, 3].")
    _err(lambda: glasstorch.bmm(f32(2, 3), f32(2, 3, 4)), RuntimeError,
         "batch1 must be a 3D tensor")
    _err(lambda: glasstorch.matmul(f32(), f32(2, 3)), RuntimeError,
         "both arguments to matmul need to be at least 1D, but they are 0D and 2D")
    _err(lambda: glasstorch.matmul(f32(5, 2, 3), f32(4, 5)), RuntimeError,
         "mat1 and mat2 shapes cannot be multiplied (10x3 and 4x5)")
    _err(lambda: glasstorch.matmul(f32(3, 2, 3), f32(4, 3, 4)), RuntimeError,
         "The size of tensor a (3) must match the size of tensor b (4) at non-singleton "
         "dimension 0")
    _err(lambda: glasstorch.dot(f32(3), f32(4)), RuntimeError,
         "inconsistent tensor size, expected tensor [3] and src [4] to have the same number of "
         "elements, but got 3 and 4 elements respectively")
    _err(lambda: glasstorch.dot(f32(3), f64(3)), RuntimeError,
         "dot : expected both vectors to have same dtype, but found Float and Double")
    _err(lambda: glasstorch.mv(f32(2, 3), f32(4)), RuntimeError,
         "size mismatch, got input (2), mat (2x3), vec (4)")
    _err(lambda: glasstorch.addmm(f32(4), f32(2, 3), f64(3, 4)), RuntimeError,
         "self and mat2 must have the same dtype, but got Float and Double")
    _err(lambda: glasstorch.addmm(f32(3, 4), f32(2, 3), f32(3, 4)), RuntimeError,
         "The expanded size of the tensor (2) must match the existing size (3) at "
         "non-singleton dimension 0.  Target sizes: [2, 4].  Tensor sizes: [3, 4]")
    b = glasstorch.tensor(np.ones((2, 2), np.bool_))
    _err(lambda: glasstorch.mm(b, b), NotImplementedError,
         "\"addmm_impl_cpu_\" not implemented for 'Bool'")


def test_errors_match_pytorch(torch):
    cases = [((2, 3), (4, 3)), ((5, 2, 3), (4, 5)), ((3,), (4,)), ((2, 3), (4,))]
    for s1, s2 in cases:
        with pytest.raises(RuntimeError) as ours:
            glasstorch.matmul(f32(*s1), f32(*s2))
        with pytest.raises(RuntimeError) as theirs:
            torch.matmul(torch.ones(s1), torch.ones(s2))
        assert str(ours.value) == str(theirs.value)


def test_meta_shapes():
    a = glasstorch.empty(5, 2, 3, device="meta")
    b = glasstorch.empty(3, 4, device="meta")
    out = glasstorch.matmul(a, b)
    assert out.device.type == "meta" and tuple(out.shape) == (5, 2, 4)

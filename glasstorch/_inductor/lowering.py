"""``torch._inductor.lowering``: each ATen op as loop IR.

``lowerings[op](*args, **kwargs)`` receives IR values (and Python numbers,
lists, dtypes) where the FX node had tensors and returns IR: a ``Pointwise``
(inlined into whatever reads it), a realized ``Reduction``, a view of its
input, or an extern call.  An op without a lowering here runs as its ATen
kernel (``fallback``), which is how Inductor treats ops it does not generate
code for: matrix products and convolutions by choice, random ops, scatters.

Result sizes and dtypes are read from the FX node being lowered
(``meta["val"]``, computed by the same meta functions eager mode uses), so the
lowerings never re-derive PyTorch's shape and type-promotion rules; they
decide only how each element is computed, with PyTorch's semantics: NaN
propagates through max/min/relu, integer division floors or truncates as the
op says, casts truncate toward zero.
"""
from __future__ import annotations

import math

from .._core import dtype as dt
from glasstorch import empty_strided, ops as _ops
from glasstorch.utils._pytree import tree_leaves, tree_map
from . import ir
from .ir import (V, ExternKernel, Index, IRNode, Layout, MultiOutput, Pointwise,
                 Reduction, ReinterpretView, View, compute_dtype, ops)

aten = _ops.aten
lowerings: dict = {}


def register_lowering(*aten_ops):
    """Register the decorated function for every overload of ``aten_ops``."""
    def decorator(fn):
        for op in aten_ops:
            overloads = [getattr(op, name) for name in op.overloads()] \
                if hasattr(op, "overloads") else [op]
            for overload in overloads:
                lowerings[overload] = fn
        return fn
    return decorator


def meta():
    """The FX node's value (a FakeTensor, or a tuple of them)."""
    return V.graph.current_node.meta["val"]


def out_size():
    return tuple(meta().shape)


def out_dtype():
    return meta().dtype


def is_ir(x) -> bool:
    return isinstance(x, IRNode)


def promoted(*args):
    """The dtype PyTorch computes ``args`` in (tensors by tier, then scalars)."""
    dims = [a.dtype for a in args if is_ir(a) and len(a.size)]
    zero = [a.dtype for a in args if is_ir(a) and not len(a.size)]
    scalars = [a for a in args if not is_ir(a)]
    return dt.result_type_of(dims, zero, scalars)


def broadcast_loader(x, size, dtype):
    """A loader for ``x`` broadcast to ``size``, values cast to ``dtype``'s
    compute type; a Python number is a constant."""
    if not is_ir(x):
        return lambda index: ops.constant(x, dtype)
    load = x.make_loader()
    lead = len(size) - len(x.size)
    keep = [n != 1 or size[lead + i] == 1 for i, n in enumerate(x.size)]

    def loader(index):
        mine = [index[lead + i] if k else Index() for i, k in enumerate(keep)]
        value = load(mine)
        return value if x.dtype is dtype else ops.to_dtype(value, dtype)
    return loader


def make_pointwise(fn, *inputs, dtype=None, compute=None, size=None):
    """Elementwise ``fn`` over ``inputs`` broadcast to the node's size."""
    size = out_size() if size is None else size
    dtype = out_dtype() if dtype is None else dtype
    compute = compute or dtype
    loaders = [broadcast_loader(x, size, compute) for x in inputs]
    return Pointwise(dtype, size, lambda index: fn(*[load(index) for load in loaders]))


def _unary(name):
    return lambda x: make_pointwise(lambda a: ops.libm(name, a), x)


for _name in ("exp", "log", "sin", "cos", "tan", "tanh", "erf", "log1p", "expm1", "sqrt",
              "floor", "ceil", "trunc", "exp2", "log2", "log10", "asin", "acos", "atan",
              "sinh", "cosh", "asinh", "acosh", "atanh", "erfc"):
    register_lowering(getattr(aten, _name))(_unary(_name))
register_lowering(aten.round)(lambda x, decimals=0: make_pointwise(
    lambda a: ops.libm("nearbyint", a), x) if decimals == 0 else fallback_current())


def _method(name):
    return lambda *args: make_pointwise(lambda *vals: getattr(ops, name)(*vals), *args)


for _name in ("neg", "abs", "rsqrt", "reciprocal", "sigmoid", "sign", "relu", "bitwise_not"):
    register_lowering(getattr(aten, _name))(_method(_name))


def _logical(name):
    def lower(*args):
        return make_pointwise(lambda *v: getattr(ops, name)(*v), *args, compute=dt.bool_)
    return lower


for _name in ("logical_and", "logical_or", "logical_xor", "logical_not"):
    register_lowering(getattr(aten, _name))(_logical(_name))


def _compare(name):
    def lower(a, b):
        return make_pointwise(lambda x, y: getattr(ops, name)(x, y), a, b,
                              compute=promoted(a, b))
    return lower


for _name in ("eq", "ne", "lt", "le", "gt", "ge"):
    register_lowering(getattr(aten, _name))(_compare(_name))


@register_lowering(aten.isnan, aten.isinf)
def _isnan_isinf(x):
    name = "isnan" if V.graph.current_node.target.name().endswith("isnan") else "isinf"
    if not x.dtype.is_floating_point:
        return make_pointwise(lambda: ops.constant(False, dt.bool_))
    return make_pointwise(lambda a: getattr(ops, name)(a), x, compute=x.dtype)


def _with_alpha(op):
    def lower(a, b, alpha=1):
        if alpha != 1:
            return make_pointwise(lambda x, y, k: op(x, ops.mul(y, k)), a, b, alpha)
        return make_pointwise(op, a, b)
    return lower


register_lowering(aten.add)(_with_alpha(lambda x, y: ops.add(x, y)))
register_lowering(aten.sub)(_with_alpha(lambda x, y: ops.sub(x, y)))
register_lowering(aten.rsub)(lambda a, b, alpha=1: _with_alpha(
    lambda x, y: ops.sub(x, y))(b, a, alpha))

for _name in ("mul", "maximum", "minimum", "bitwise_and", "bitwise_or", "bitwise_xor",
              "remainder", "fmod", "atan2", "hypot"):
    _fn = (lambda n: (lambda x, y: ops.libm(n, x, y)))(_name) if _name in ("atan2", "hypot") \
        else (lambda n: (lambda x, y: getattr(ops, n)(x, y)))(_name)
    register_lowering(getattr(aten, _name))((lambda f: lambda a, b: make_pointwise(f, a, b))(_fn))


@register_lowering(aten.div)
def _div(a, b, rounding_mode=None):
    if rounding_mode is None:
        return make_pointwise(lambda x, y: ops.truediv(x, y), a, b)
    dtype = out_dtype()
    if rounding_mode == "trunc" and dtype in (dt.float16, dt.bfloat16):
        # ATen truncates the quotient rounded to the half type (-230.97 -> -231.0)
        return make_pointwise(
            lambda x, y: ops.libm("trunc", ops.to_dtype(ops.truediv(x, y), dtype)), a, b)
    name = "floordiv" if rounding_mode == "floor" else "truncdiv"
    return make_pointwise(lambda x, y: getattr(ops, name)(x, y), a, b, compute=promoted(a, b))


@register_lowering(aten.floor_divide)
def _floor_divide(a, b):
    return make_pointwise(lambda x, y: ops.floordiv(x, y), a, b)


@register_lowering(aten.pow)
def _pow(a, b):
    if not is_ir(b) and out_dtype().is_floating_point:
        special = {2: lambda x: ops.mul(x, x), 3: lambda x: ops.mul(ops.mul(x, x), x),
                   1: lambda x: x, -1: lambda x: ops.reciprocal(x),
                   -2: lambda x: ops.reciprocal(ops.mul(x, x))}
        if out_dtype() is not dt.float16:   # ATen's half kernel calls pow: pow(-0, .5) is +0
            special.update({0.5: lambda x: ops.libm("sqrt", x), -0.5: lambda x: ops.rsqrt(x)})
        if b in special:
            return make_pointwise(special[b], a)
    if not out_dtype().is_floating_point:
        return fallback_current()
    return make_pointwise(lambda x, y: ops.pow(x, y), a, b)


@register_lowering(aten.where)
def _where(cond, a, b):
    compute = out_dtype()
    size = out_size()
    c = broadcast_loader(cond, size, dt.bool_)
    la, lb = broadcast_loader(a, size, compute), broadcast_loader(b, size, compute)
    return Pointwise(compute, size, lambda i: ops.where(c(i), la(i), lb(i)))


@register_lowering(aten.clamp, aten.clamp_min, aten.clamp_max)
def _clamp(x, lo=None, hi=None):
    name = V.graph.current_node.target.name()
    if name.startswith("aten::clamp_max"):
        lo, hi = None, lo
    compute = out_dtype()

    def clamp_at(v, bound, given, low):
        """ATen's clamp at one bound: NaN-propagating maximum / minimum with a
        tensor (or NaN) bound; with a number, ``v`` unless it lies past the bound,
        so -0.0 clamped at 0.0 stays -0.0."""
        if is_ir(given) or math.isnan(given):
            return ops.maximum(v, bound) if low else ops.minimum(v, bound)
        return ops.where(ops.lt(v, bound) if low else ops.gt(v, bound), bound, v)

    def fn(v, *bounds):
        bounds = list(bounds)
        if lo is not None:
            v = clamp_at(v, bounds.pop(0), lo, True)
        if hi is not None:
            v = clamp_at(v, bounds.pop(0), hi, False)
        return v
    return make_pointwise(fn, x, *[b for b in (lo, hi) if b is not None], compute=compute)


@register_lowering(aten.gelu)
def _gelu(x, approximate="none"):
    def fn(v):
        half = ops.constant(0.5, v.dtype)
        if approximate == "tanh":
            inner = ops.mul(ops.constant(math.sqrt(2 / math.pi), v.dtype),
                            ops.add(v, ops.mul(ops.constant(0.044715, v.dtype),
                                               ops.mul(ops.mul(v, v), v))))
            return ops.mul(ops.mul(half, v), ops.add(ops.constant(1, v.dtype),
                                                     ops.libm("tanh", inner)))
        scaled = ops.mul(v, ops.constant(math.sqrt(0.5), v.dtype))
        return ops.mul(ops.mul(v, half), ops.add(ops.constant(1, v.dtype),
                                                 ops.libm("erf", scaled)))
    return make_pointwise(fn, x)


@register_lowering(aten.addcmul, aten.addcdiv)
def _addc(s, t1, t2, value=1):
    divide = V.graph.current_node.target.name().startswith("aten::addcdiv")
    def fn(a, b, c, k):
        return ops.add(a, ops.mul(k, ops.truediv(b, c) if divide else ops.mul(b, c)))
    return make_pointwise(fn, s, t1, t2, value)


@register_lowering(aten.lerp)
def _lerp(start, end, weight):
    # ATen's lerp: start + w * (end - start) for |w| < 0.5, else end - (end - start) * (1 - w)
    def fn(a, b, w):
        diff = ops.sub(b, a)
        small = ops.lt(ops.abs(w), ops.constant(0.5, w.dtype))
        low = ops.add(a, ops.mul(w, diff))
        high = ops.sub(b, ops.mul(diff, ops.sub(ops.constant(1, w.dtype), w)))
        return ops.where(small, low, high)
    return make_pointwise(fn, start, end, weight)


# -- dtype conversions and copies -------------------------------------------------------


def _identity(x, *args, **kwargs):
    dtype = out_dtype()
    return make_pointwise(lambda v: v, x, dtype=dtype)


register_lowering(aten._to_copy, aten.clone, aten.lift_fresh_copy)(_identity)


@register_lowering(aten.copy)
def _copy(dst, src, non_blocking=False):
    return make_pointwise(lambda v: v, src)


@register_lowering(aten.copy_)
def _copy_(dst, src, non_blocking=False):
    """An input mutated in the graph: store into its memory."""
    value = make_pointwise(lambda v: v, src, dtype=dst.dtype, size=dst.size)
    V.graph.store_into(dst, value)
    return dst


@register_lowering(aten.alias, aten.detach, aten.lift_fresh)
def _alias(x):
    return x


# -- creation -------------------------------------------------------------------------


@register_lowering(aten.full, aten.scalar_tensor, aten.full_like, aten.zeros, aten.ones,
                   aten.zeros_like, aten.ones_like)
def _full(*args, **kwargs):
    name = V.graph.current_node.target.name()
    if "zeros" in name:
        value = 0
    elif "ones" in name:
        value = 1
    elif name.startswith("aten::scalar_tensor"):
        value = args[0]
    else:
        value = args[1]
    dtype = out_dtype()
    return Pointwise(dtype, out_size(), lambda index: ops.constant(value, dtype))


@register_lowering(aten.arange)
def _arange(*args, **kwargs):
    name = V.graph.current_node.target.name()
    start, step = 0, 1
    if name.endswith("start_step"):
        start, step = args[0], args[2]
    elif name.endswith("start"):
        start = args[0]
    dtype = out_dtype()
    if isinstance(start, float) or isinstance(step, float):
        return fallback_current()
    return Pointwise(dtype, out_size(), lambda index: ops.index_expr(
        index[0] * step + start, dtype))


# -- views ------------------------------------------------------------------------------


def make_view(x: IRNode, size, reindex) -> IRNode:
    """``x`` seen through ``reindex``.  On a buffer the result is a strided
    window (a ReinterpretView, what an extern call can take) when the new
    index is affine in the old one; otherwise an index-remapping View."""
    size = tuple(size)
    storage = x if isinstance(x, (ir.Buffer, ReinterpretView)) else None
    if storage is not None:
        # a size-1 dim gets a variable too (of range 2), so that its stride is
        # the one the base gives that dim, as eager's view keeps it
        names = [Index.var(f"v{i}", max(n, 2)) for i, n in enumerate(size)]
        flat = storage.layout.index(reindex(names))
        if all(s.name.startswith("v") and s.free == {s.name} for s in flat.terms):
            by_name = {s.name: c for s, c in flat.terms.items()}
            # a dim the index does not mention is broadcast (stride 0), or of size 1
            hinted = _meta_strides(size)
            stride = [by_name.get(f"v{i}", 0 if n != 1 else hinted[i] if hinted else 1)
                      for i, n in enumerate(size)]
            base = storage.storage() if isinstance(storage, ReinterpretView) else storage
            return ReinterpretView(base, Layout(x.dtype, size, stride, flat.const))
    return View(x, size, reindex)


def _meta_strides(size):
    """The strides eager gives this view (for its size-1 dims), when the
    node being lowered is the view."""
    val = V.graph.current_node.meta.get("val")
    if hasattr(val, "stride") and ir.same_size(tuple(val.shape), tuple(size)):
        return tuple(val.stride())
    return None


@register_lowering(aten.permute)
def _permute(x, dims):
    dims = [d % len(x.size) for d in dims]
    size = [x.size[d] for d in dims]

    def reindex(index):
        out = [None] * len(dims)
        for i, d in enumerate(dims):
            out[d] = index[i]
        return out
    return make_view(x, size, reindex)


@register_lowering(aten.t)
def _t(x):
    return _permute(x, list(range(len(x.size)))[::-1])


@register_lowering(aten.transpose)
def _transpose(x, d0, d1):
    n = max(len(x.size), 1)
    dims = list(range(len(x.size)))
    if dims:
        d0, d1 = d0 % n, d1 % n
        dims[d0], dims[d1] = dims[d1], dims[d0]
    return _permute(x, dims)


@register_lowering(aten.expand)
def _expand(x, sizes, implicit=False):
    size = out_size()
    lead = len(size) - len(x.size)
    keep = [n != 1 or size[lead + i] == 1 for i, n in enumerate(x.size)]
    return make_view(x, size, lambda index: [index[lead + i] if k else Index()
                                             for i, k in enumerate(keep)])


@register_lowering(aten.view, aten.reshape, aten._unsafe_view, aten.squeeze, aten.unsqueeze,
                   aten._reshape_alias)
def _reshape(x, *args):
    return reshape(x, out_size())


def reshape(x: IRNode, size) -> IRNode:
    """A view of ``x`` with ``size`` (same number of elements): dims are matched
    group by group, so splitting and merging stay affine where they can."""
    old = tuple(x.size)
    size = tuple(size)
    if ir.same_size(old, size):
        return x
    if 0 in size:   # no element: nothing is ever read
        return make_view(x, size, lambda index: [Index() for _ in old])
    old_nz = [(i, n) for i, n in enumerate(old) if n != 1]
    new_nz = [(i, n) for i, n in enumerate(size) if n != 1]
    groups, oi, ni = [], 0, 0
    while oi < len(old_nz) or ni < len(new_nz):
        og, ng = [old_nz[oi]], [new_nz[ni]]
        oi, ni = oi + 1, ni + 1
        po, pn = og[0][1], ng[0][1]
        while po != pn:
            if po < pn:
                og.append(old_nz[oi]); po *= old_nz[oi][1]; oi += 1
            else:
                ng.append(new_nz[ni]); pn *= new_nz[ni][1]; ni += 1
        groups.append((og, ng))

    def reindex(index):
        out = [Index() for _ in old]
        for og, ng in groups:
            flat = flat_of([index[i] for i, _ in ng], [n for _, n in ng])
            for (i, n), part in zip(og, ir.unflatten_index(flat, [n for _, n in og])):
                out[i] = part
        return out
    return make_view(x, size, reindex)


def flat_of(index, size) -> Index:
    return ir.flat_index(index, size)


@register_lowering(aten.slice)
def _slice(x, dim=0, start=None, end=None, step=1):
    dim %= len(x.size)
    n = x.size[dim]
    start = 0 if start is None else start
    start = max(0, min(n, start + n if start < 0 else start))
    size = out_size()

    def reindex(index):
        index = list(index)
        index[dim] = index[dim] * step + start
        return index
    return make_view(x, size, reindex)


@register_lowering(aten.select)
def _select(x, dim, i):
    dim %= len(x.size)
    i = i + x.size[dim] if i < 0 else i
    size = out_size()
    return make_view(x, size, lambda index: list(index[:dim]) + [Index(const=i)] +
                     list(index[dim:]))


@register_lowering(aten.as_strided)
def _as_strided(x, size, stride, storage_offset=None):
    buf = realize_input(x)
    base = buf.storage()
    offset = storage_offset if storage_offset is not None else buf.layout.offset
    return ReinterpretView(base, Layout(x.dtype, size, stride, offset))


@register_lowering(aten.split, aten.split_with_sizes)
def _split(x, sizes, dim=0):
    dim %= len(x.size)
    if not isinstance(sizes, (list, tuple)):     # a chunk size: the pieces' sizes as traced
        sizes = [piece.shape[dim] for piece in meta()]
    out, start = [], 0
    for s in sizes:
        out.append(make_view(x, x.size[:dim] + (s,) + x.size[dim + 1:], (
            lambda st: lambda index: list(index[:dim]) + [index[dim] + st] +
            list(index[dim + 1:]))(start)))
        start += s
    return out


@register_lowering(aten.unbind)
def _unbind(x, dim=0):
    dim %= len(x.size)
    return [make_view(x, x.size[:dim] + x.size[dim + 1:], (
        lambda k: lambda index: list(index[:dim]) + [Index(const=k)] + list(index[dim:]))(i))
        for i in range(x.size[dim])]


# -- reductions ----------------------------------------------------------------------------


def _dims(x, dim):
    n = len(x.size)
    if dim is None or (isinstance(dim, (list, tuple)) and len(dim) == 0):
        return list(range(n))
    if isinstance(dim, int):
        dim = [dim]
    return sorted({d % max(n, 1) for d in dim}) if n else []


def reduction_body(x, dims, fn=None):
    """The inner function of a reduction of ``fn(x)`` over ``dims``."""
    kept = [i for i in range(len(x.size)) if i not in dims]
    load = x.make_loader()

    def inner(index, rindex):
        full = [None] * len(x.size)
        for i, k in enumerate(kept):
            full[k] = index[i]
        for j, d in enumerate(dims):
            full[d] = rindex[j]
        v = load(full)
        return fn(v) if fn else v
    return inner


def reduce(x, dims, keepdim, rtype, dtype, fn=None, src_dtype=None, body=None):
    """Realize ``rtype`` of ``fn(x)`` over ``dims``; keepdim is a view of it.
    ``body``: the inner function, when two reductions share one."""
    size = x.size
    kept = [i for i in range(len(size)) if i not in dims]
    red = Reduction(dtype, [size[i] for i in kept], [size[d] for d in dims], rtype,
                    body or reduction_body(x, dims, fn), src_dtype or x.dtype)
    buf = V.graph.realize(red)
    if keepdim:
        return reshape(buf, [1 if i in dims else n for i, n in enumerate(size)])
    return buf


def _sum_value(x, dtype):
    return (lambda v: ops.to_dtype(v, dtype)) if dtype is not x.dtype else None


@register_lowering(aten.sum)
def _sum(x, dim=None, keepdim=False, *, dtype=None):
    if isinstance(dim, bool):   # sum.default(x, dtype) never; sum(x, dim) positional
        dim = None
    dtype = out_dtype()
    dims = _dims(x, dim)
    if not dims:
        return make_pointwise(lambda v: v, x)
    return reduce(x, dims, keepdim, "sum", dtype, _sum_value(x, dtype))


@register_lowering(aten.prod)
def _prod(x, dim=None, keepdim=False, *, dtype=None):
    dtype = out_dtype()
    return reduce(x, _dims(x, dim if not isinstance(dim, bool) else None), keepdim, "prod",
                  dtype, _sum_value(x, dtype))


@register_lowering(aten.mean)
def _mean(x, dim=None, keepdim=False, *, dtype=None):
    dtype = out_dtype()
    compute = compute_dtype(dtype)
    dims = _dims(x, dim)
    total = reduce(x, dims, keepdim, "sum", compute, _sum_value(x, compute))
    count = math.prod(x.size[d] for d in dims)
    return make_pointwise(lambda s: ops.truediv(s, ops.constant(count, s.dtype)), total,
                          dtype=dtype, compute=compute, size=total.size)


@register_lowering(aten.amax, aten.amin)
def _amax(x, dim=(), keepdim=False):
    rtype = "max" if V.graph.current_node.target.name().startswith("aten::amax") else "min"
    return reduce(x, _dims(x, dim), keepdim, rtype, x.dtype)


@register_lowering(aten.max, aten.min)
def _max_min(x, dim=None, keepdim=False):
    kind = "max" if V.graph.current_node.target.name().startswith("aten::max") else "min"
    if dim is None or isinstance(dim, IRNode):
        if isinstance(dim, IRNode):
            return make_pointwise(lambda a, b: getattr(ops, kind + "imum")(a, b), x, dim)
        return reduce(x, _dims(x, None), False, kind, x.dtype)
    dims = _dims(x, dim)
    return (reduce(x, dims, keepdim, kind, x.dtype),
            reduce(x, dims, keepdim, "arg" + kind, dt.int64))


@register_lowering(aten.argmax, aten.argmin)
def _argmax(x, dim=None, keepdim=False):
    kind = "argmax" if V.graph.current_node.target.name().startswith("aten::argmax") \
        else "argmin"
    if dim is None:
        flat = reshape(x, (x.numel(),))
        out = reduce(flat, [0], False, kind, dt.int64)
        return reshape(out, out_size()) if keepdim else out
    return reduce(x, _dims(x, dim), keepdim, kind, dt.int64)


@register_lowering(aten.any, aten.all)
def _any(x, dim=None, keepdim=False):
    is_all = V.graph.current_node.target.name().startswith("aten::all")
    fn = (lambda v: ops.logical_not(ops.to_dtype(v, dt.bool_))) if is_all else \
        (lambda v: ops.to_dtype(v, dt.bool_))
    found = reduce(x, _dims(x, dim), keepdim, "any", dt.bool_, fn)
    if is_all:
        return make_pointwise(lambda v: ops.logical_not(v), found, size=found.size)
    return found


def _variance(x, dims, correction, keepdim, dtype):
    """The variance and mean over ``dims`` by Welford's one-pass updates, as
    ATen's kernels take them (WelfordOps, RowwiseMoments): two reduction
    nodes, the mean and the sum of squared deviations (M2), over one inner
    function, which the kernel computes in one loop (cpp.py's ``_welford``).
    A constant row gets its value as mean and 0 as variance exactly, so
    LayerNorm of it is 0, not rounding noise."""
    count = math.prod(x.size[d] for d in dims)
    compute = compute_dtype(dtype)
    body = reduction_body(x, dims, _sum_value(x, compute))
    mean, m2 = (reduce(x, dims, keepdim, rtype, compute, body=body)
                for rtype in ("welford_mean", "welford_m2"))
    divisor = max(count - correction, 0)
    var = make_pointwise(lambda s: ops.truediv(s, ops.constant(divisor, compute)), m2,
                         dtype=compute, size=m2.size)
    return var, mean


def _correction(kwargs, unbiased):
    if kwargs.get("correction") is not None:
        return kwargs["correction"]
    return 1 if unbiased in (None, True) else 0


@register_lowering(aten.var, aten.std)
def _var(x, dim=None, unbiased=None, keepdim=False, **kwargs):
    if isinstance(dim, bool):
        dim, unbiased = None, dim
    var, _ = _variance(x, _dims(x, dim), _correction(kwargs, unbiased),
                       kwargs.get("keepdim", keepdim), out_dtype())
    if V.graph.current_node.target.name().startswith("aten::std"):
        return make_pointwise(lambda v: ops.libm("sqrt", v), var, size=var.size)
    return make_pointwise(lambda v: v, var, size=var.size)


@register_lowering(aten.var_mean)
def _var_mean(x, dim=None, unbiased=None, keepdim=False, **kwargs):
    if isinstance(dim, bool):
        dim, unbiased = None, dim
    var, mean = _variance(x, _dims(x, dim), _correction(kwargs, unbiased),
                          kwargs.get("keepdim", keepdim), meta()[0].dtype)
    dtype = meta()[0].dtype
    return (make_pointwise(lambda v: v, var, size=var.size, dtype=dtype),
            make_pointwise(lambda v: v, mean, size=mean.size, dtype=dtype))


# -- composite ops lowered as their loops ---------------------------------------------------


@register_lowering(aten._softmax, aten._log_softmax)
def _softmax(x, dim, half_to_float):
    """max, sum of exp(x - max), then exp(x - max) times 1 / sum, as ATen's kernel
    scales (one reciprocal per row: a multiply, not a divide, per element), or
    x - max - log sum: three loops over a row that the scheduler fuses into one
    kernel."""
    log = V.graph.current_node.target.name().startswith("aten::_log_softmax")
    dtype = out_dtype()
    compute = compute_dtype(dtype)
    dims = _dims(x, dim)
    amax = reduce(x, dims, True, "max", compute, lambda v: ops.to_dtype(v, compute))
    size = x.size

    def shifted(a, m):
        # an all -inf row keeps max 0, as ATen's kernel does
        m = ops.where(ops.eq(m, ops.constant(-math.inf, compute)), ops.constant(0, compute), m)
        return ops.sub(a, m)
    centered = make_pointwise(shifted, x, amax, dtype=compute, compute=compute, size=size)
    total = reduce(centered, dims, True, "sum", compute, lambda v: ops.libm("exp", v))
    if log:
        return make_pointwise(lambda c, s: ops.sub(c, ops.libm("log", s)), centered, total,
                              dtype=dtype, compute=compute, size=size)
    return make_pointwise(lambda c, s: ops.mul(ops.libm("exp", c), ops.reciprocal(s)),
                          centered, total, dtype=dtype, compute=compute, size=size)


@register_lowering(aten.native_layer_norm)
def _native_layer_norm(x, normalized_shape, weight, bias, eps):
    """mean and variance over the last dims (two reductions over a row), the
    reciprocal standard deviation, then the affine output: one fused kernel."""
    out_val, mean_val, _ = meta()
    dtype = out_val.dtype
    compute = compute_dtype(dtype)
    k = len(normalized_shape)
    dims = list(range(len(x.size) - k, len(x.size)))
    var, mean = _variance(x, dims, 0, True, compute)
    stat_size = tuple(mean_val.shape)
    rstd = make_pointwise(lambda v: ops.rsqrt(ops.add(v, ops.constant(eps, compute))),
                          var, dtype=mean_val.dtype, compute=compute, size=stat_size)
    rstd = V.graph.realize(rstd)
    inputs = [x, mean, rstd] + [t for t in (weight, bias) if t is not None]

    def fn(a, m, r, *affine):
        v = ops.mul(ops.sub(a, m), r)
        affine = list(affine)
        if weight is not None and bias is not None:     # one multiply-add, as ATen's
            return ops.fma(v, affine[0], affine[1])
        if weight is not None:
            v = ops.mul(v, affine.pop(0))
        if bias is not None:
            v = ops.add(v, affine.pop(0))
        return v
    out = make_pointwise(fn, *inputs, dtype=dtype, compute=compute, size=x.size)
    mean_out = make_pointwise(lambda m: m, mean, dtype=mean_val.dtype, size=stat_size)
    return out, mean_out, rstd


@register_lowering(aten.embedding)
def _embedding(weight, indices, padding_idx=-1, scale_grad_by_freq=False, sparse=False):
    """Rows of ``weight`` picked by ``indices``: an indirect load."""
    size = out_size()
    load_index = indices.make_loader()
    cols = weight.size[1]
    w = realize_input(weight)

    def inner(index):
        row = ops.to_dtype(load_index(index[:-1]), dt.int64)
        where = Index({ir.Sym(str(row), weight.size[0], ("*indirect",)): 1})
        return w.make_loader()([where, index[-1]])
    del cols
    return Pointwise(weight.dtype, size, inner)


@register_lowering(aten.gather)
def _gather(x, dim, index, sparse_grad=False):
    dim %= max(len(x.size), 1)
    size = out_size()
    load_index = index.make_loader()
    load = x.make_loader()

    def inner(i):
        picked = ops.to_dtype(load_index(i), dt.int64)
        where = list(i)
        where[dim] = Index({ir.Sym(str(picked), x.size[dim], ("*indirect",)): 1})
        return load(where)
    return Pointwise(x.dtype, size, inner)


# -- extern calls ---------------------------------------------------------------------------


def realize_input(x) -> IRNode:
    """What an extern call can take: a buffer or a strided window on one."""
    if isinstance(x, (ir.Buffer, ReinterpretView)):
        return x
    if isinstance(x, View):
        # the base is computed in its own order; the view of it is then a strided
        # window, or (when no strides express it) a copy
        view = make_view(realize_input(x.base), x.size, x.reindex)
        if isinstance(view, ReinterpretView):
            return view
        return V.graph.realize(Pointwise(x.dtype, x.size, view.make_loader()))
    return V.graph.realize(x)


def fallback(op, args, kwargs, val):
    """``op`` run as its ATen kernel by the wrapper; its tensor outputs become
    buffers (several through MultiOutput), laid out as the op lays them out
    for its inputs as realized here: their strides need not be the traced ones
    (``val``), and an op like conj_physical keeps its input's."""
    def prepare(a):
        if is_ir(a):
            return realize_input(a)
        if isinstance(a, (list, tuple)):
            return type(a)(prepare(b) for b in a)
        return a
    args = prepare(list(args))
    kwargs = {k: prepare(v) for k, v in kwargs.items()}
    realized = [a for a in tree_leaves((args, kwargs))
                if isinstance(a, (ir.Buffer, ReinterpretView))]
    if realized:
        if any(a.layout.is_symbolic() for a in realized):
            with _fake_mode():
                val = op(*tree_map(_on_fake, args), **tree_map(_on_fake, kwargs))
        else:
            val = op(*tree_map(_on_meta, args), **tree_map(_on_meta, kwargs))
    graph = V.graph
    if _is_tensor(val):
        return graph.register(ExternKernel(graph.new_name(), _layout_of(val), op, args, kwargs))
    parent = graph.register(ExternKernel(graph.new_name(), None, op, args, kwargs))
    outputs = []
    for i, v in enumerate(val):
        if _is_tensor(v):
            outputs.append(graph.register(MultiOutput(graph.new_name(), _layout_of(v), parent, i)))
        elif isinstance(v, (list, tuple)):
            outputs.append([graph.register(MultiOutput(graph.new_name(), _layout_of(e),
                                                       parent, (i, j)))
                            for j, e in enumerate(v)])
        else:
            outputs.append(v)
    return tuple(outputs) if isinstance(val, tuple) else outputs


def _on_meta(a):
    """A realized IR value as a meta tensor of its layout."""
    if isinstance(a, (ir.Buffer, ReinterpretView)):
        lay = a.layout
        return empty_strided(lay.size, lay.stride, dtype=lay.dtype, device="meta")
    return a


def _on_fake(a):
    """A realized IR value as a FakeTensor of its layout, whose sizes may be
    symbolic (called under the graph's FakeTensorMode)."""
    if isinstance(a, (ir.Buffer, ReinterpretView)):
        lay = a.layout
        return empty_strided(lay.size, lay.stride, dtype=lay.dtype)
    return a


def _fake_mode():
    """The FakeTensorMode the graph was traced in (that of its values)."""
    for node in V.graph.gm.graph.nodes:
        for v in tree_leaves(node.meta.get("val")):
            if hasattr(v, "fake_mode"):
                return v.fake_mode
    raise AssertionError("a graph with symbolic sizes has FakeTensor values")


def fallback_current():
    node = V.graph.current_node
    args, kwargs = V.graph.current_args
    return fallback(node.target, args, kwargs, node.meta["val"])


def _is_tensor(v) -> bool:
    return hasattr(v, "stride") and hasattr(v, "dtype")


def _layout_of(val) -> Layout:
    return Layout(val.dtype, tuple(val.shape), tuple(val.stride()), 0)


@register_lowering(aten.to)
def _to(x, *args, **kwargs):
    """``Tensor.to`` (left in graphs by decompositions): the value itself when
    the dtype stays, else a cast."""
    return x if out_dtype() is x.dtype else make_pointwise(lambda v: v, x)


@register_lowering(aten.embedding_dense_backward)
def _embedding_dense_backward(grad, indices, num_weights, padding_idx, scale_grad_by_freq):
    """The embedding's gradient: each row of ``grad`` added into the row its
    index names (a ScatterAdd), skipping ``padding_idx``."""
    if scale_grad_by_freq:
        return fallback_current()
    dtype = out_dtype()
    compute = compute_dtype(dtype)
    cols = grad.size[-1]
    load_index, load_grad = indices.make_loader(), grad.make_loader()

    def inner(index):
        row = ops.to_dtype(load_index(index[:-1]), dt.int64)
        keep = ops.ne(row, ops.constant(padding_idx, dt.int64))
        value = ops.where(keep, ops.to_dtype(load_grad(index), compute),
                          ops.constant(0, compute))
        where = Index({ir.Sym(str(row), num_weights, ("*indirect",)): cols}) + index[-1]
        return where, value
    return V.graph.realize(ir.ScatterAdd(dtype, (num_weights, cols),
                                         tuple(indices.size) + (cols,), inner))


@register_lowering(aten.cat)
def _cat(tensors, dim=0):
    """One allocation, each input stored into its window of it (a pointwise
    producer of an input is computed straight into the window)."""
    size, dtype = out_size(), out_dtype()
    dim %= max(len(size), 1)
    stride = _meta_strides(size) or ir.contiguous_strides(size)
    graph = V.graph
    out = graph.register(ir.AllocatedBuffer(graph.new_name(), Layout(dtype, size, stride)))
    start = 0
    for t in tensors:
        if not is_ir(t) or t.size == (0,) and len(size) != 1:    # legacy empty inputs
            continue
        window = Layout(dtype, t.size, stride, start * stride[dim] if size else 0)
        node = ir.ComputedBuffer(graph.new_name(), window,
                                 make_pointwise(lambda v: v, t, dtype=dtype, size=t.size))
        node.target = out.name
        graph.register(node)
        start += t.size[dim] if t.size else 1
    return out


@register_lowering(aten.addmm)
def _addmm(bias, mat1, mat2, *, beta=1, alpha=1):
    """The product as an extern ``mm``; the bias added by whatever reads it
    (fused into the next kernel), as eager adds it after the product."""
    if beta != 1 or alpha != 1 or not out_dtype().is_floating_point:
        return fallback_current()
    product = fallback(aten.mm.default, [mat1, mat2], {}, meta())
    return make_pointwise(lambda p, b: ops.add(p, b), product, bias)

"""The op registry: ``native_functions.yaml`` in, a working op library out.

torchgen's job, done at import.  For every entry of the yaml:

    1. parse the schema and define the operator (``ops.aten.<name>.<overload>``)
    2. derive the ``autogen`` overloads: ``add_.Tensor`` (in-place) and
       ``add.out`` from ``add.Tensor``, unless the entry spells a schema out
    3. register kernels: a ``structured`` op gets functional / in-place / out=
       kernels for CPU and Meta built from one meta rule and one impl
       (``make_structured_kernels``); ``dispatch`` entries register named kernels
       on runtime or alias keys
    4. record Python bindings: functions (``torch.add``, ``F.relu``), Tensor
       methods (``x.add``, ``x.add_``) and operators (``x + y``)

Then it checks the rule that keeps Meta honest: every op has a meta rule or a
kernel that serves the Meta device.
"""
from __future__ import annotations

import os
import warnings

from .._core.dispatch_key import DispatchKey
from .._core.dtype import type_meta_name
from .._core.tls import overrides as _overrides
from .._core import startup_cache
from .._dispatcher import binding
from .._dispatcher.torch_function import handle_torch_function, has_torch_function
from .._dispatcher.dispatcher import (BOXED, KEYSET, UNBOXED, KernelFunction, deferred_updates,
                                      dispatcher, ops)
from .._dispatcher.schema import parse_schema
from .._tensor import Tensor, _non_overlapping_and_dense
from .. import return_types
from . import barebones_unsigned, kernels as kernel_modules
from .fallbacks import register_builtin_fallbacks, vmap_mode_random_kernel
from .tags import Tag, declared_tags, derived_tags
from .structured import (TENSOR_ITERATOR_OVERLAP, TensorMeta, allocate_outputs, check_inplace,
                         check_out_cast, check_overlap, convert_array, empty_tensor, in_loop_order,
                         unproven_overlap)

YAML_PATH = os.path.join(os.path.dirname(__file__), "native_functions.yaml")
DERIVATIVES_PATH = os.path.join(os.path.dirname(__file__), "derivatives.yaml")

# python_module -> {name: function}; "torch" is the top-level namespace.
FUNCTIONS: dict[str, dict] = {"torch": {}, "nn": {}, "linalg": {}, "special": {}, "fft": {}}
DECLARATIONS: dict[str, dict] = {}   # "aten::add.Tensor" -> its yaml entry (after autogen)
_SIGNATURES: dict[tuple, list] = {}  # (python_module | "method", name) -> [PythonSignature]


# -- 1/2. schemas and autogen ----------------------------------------------------------

def _inplace_schema(schema, name) -> str:
    """``add.Tensor(Tensor self, ...) -> Tensor``  =>  ``add_.Tensor(Tensor(a!) self, ...) -> Tensor(a!)``."""
    base, _, overload = name.partition(".")
    overload = f".{overload}" if overload else ""
    args = [_arg_text(a) for a in schema.arguments]
    args[0] = args[0].replace("Tensor self", "Tensor(a!) self", 1)
    return f"{base}{overload}({_join_args(schema, args)}) -> Tensor(a!)"


def _out_schema(schema, name) -> str:
    """``add.Tensor(...) -> Tensor``  =>  ``add.out(..., *, Tensor(a!) out) -> Tensor(a!)``;
    several returns give ``out0, out1`` unless they are named."""
    base, _, overload = name.partition(".")
    args = [_arg_text(a) for a in schema.arguments]
    letters = "abcdefgh"
    if len(schema.returns) == 1:
        outs = ["Tensor(a!) out"]
        rets = "Tensor(a!)"
    else:
        names = [r.name or f"out{i}" for i, r in enumerate(schema.returns)]
        outs = [f"Tensor({letters[i]}!) {n}" for i, n in enumerate(names)]
        rets = "(" + ", ".join(f"Tensor({letters[i]}!) {n}" for i, n in enumerate(names)) + ")"
    star = "" if any(a.kwarg_only for a in schema.arguments) else "*"
    all_args = args + ([star] if star else []) + outs
    return f"{base}.{overload}({_join_args(schema, all_args, has_star_already=True)}) -> {rets}"


def _arg_text(arg) -> str:
    text = f"{arg.type}" if arg.alias_info is None else _aliased_type(arg)
    text = text.replace("number", "Scalar")
    text = f"{text} {arg.name}"
    if arg.has_default_value():
        text += "=" + _default_text(arg.default_value, arg.type)
    return text


def _aliased_type(arg) -> str:
    return str(arg.type).replace("Tensor", f"Tensor{arg.alias_info}", 1)


def _default_text(value, t) -> str:
    if value is None:
        return "None"
    if isinstance(value, bool):
        return str(value)
    if isinstance(value, str):
        return f'"{value}"'
    if isinstance(value, (list, tuple)):
        return "[" + ",".join(str(v) for v in value) + "]"
    return repr(value)


def _join_args(schema, args, has_star_already=False) -> str:
    out, starred = [], False
    kwonly = [a.kwarg_only for a in schema.arguments]
    for i, text in enumerate(args):
        if i < len(kwonly) and kwonly[i] and not starred:
            out.append("*")
            starred = True
        if text == "*":
            if starred:
                continue
            starred = True
        out.append(text)
    return ", ".join(out)


# -- 3. structured kernels ------------------------------------------------------------

def make_structured_kernels(name, meta_rule, impl_fn, overlap=TENSOR_ITERATOR_OVERLAP):
    """Functional, in-place and out= kernels from one meta rule and one impl.

        functional(*a)      spec = meta(*a); out = allocate(spec); impl(out, *a); return out
        inplace(self, *a)   check overlap; spec = meta(self, *a); check shape/cast;
                            impl(self, self, *a)
        out(*a, out=o)      check overlap; spec = meta(*a); check cast; resize o;
                            impl(o, *a); return o

    ``overlap`` is the rule of the overlap checks (``structured.check_overlap``):
    TensorIterator's, a meta rule's own ``@overlap_rule``, or None (reductions,
    whose TensorIterator checks nothing).

    With ``impl_fn=None`` (the Meta device) nothing is computed: the kernels
    only allocate and check, which is exactly what the meta device means.
    """
    def functional(*args, **kwargs):
        spec = meta_rule(*args, **kwargs)
        out = allocate_outputs(spec, args, kwargs)
        if impl_fn is not None:
            impl_fn(out, *args, **kwargs)
        return out

    def inplace(self, *args, **kwargs):
        if overlap is not None:
            check_overlap(self, self, args, kwargs, overlap)
        spec = meta_rule(self, *args, **kwargs).into_existing(self.dtype)
        if getattr(meta_rule, "sets_own_output", False):
            check_inplace(self, spec)
        if spec.shape != self._shape:
            raise RuntimeError(f"output with shape {list(self._shape)} doesn't match the "
                               f"broadcast shape {list(spec.shape)}")
        check_out_cast(spec.dtype, self.dtype)
        if impl_fn is not None:
            compute = _compute_into if overlap is None else _compute_elementwise_into
            compute(impl_fn, spec, self, (self, *args), kwargs)
        return self

    def out_variant(*args, **kwargs):
        outs = tuple(kwargs.pop(n) for n in out_names)
        if overlap is not None:
            for o in outs:
                check_overlap(o, args[0] if args else None, args[1:], kwargs, overlap)
        spec = meta_rule(*args, **kwargs)
        if isinstance(spec, TensorMeta):
            spec = spec.into_existing(outs[0].dtype)
        specs = (spec,) if isinstance(spec, TensorMeta) else spec
        for o, s in zip(outs, specs):
            s.check_out(o.dtype)
            if o._shape != s.shape:
                _resize_out(o, s.shape, s.stride)
        if impl_fn is not None:
            if len(outs) == 1:
                compute = _compute_into if overlap is None else _compute_elementwise_into
                compute(impl_fn, spec, outs[0], args, kwargs)
            else:
                impl_fn(outs, *args, **kwargs)
        return outs[0] if len(outs) == 1 else outs

    out_names: list = []
    for fn, suffix in ((functional, ""), (inplace, "_inplace"), (out_variant, "_out")):
        fn.__name__ = fn.__qualname__ = f"{name}{suffix}"
        fn.defined_by = (("meta rule", meta_rule), ("impl", impl_fn))   # for _dispatch_dump
    return functional, inplace, out_variant, out_names


def _compute_elementwise_into(impl_fn, spec, out, args, kwargs):
    """``_compute_into`` for an elementwise op (one that checks overlap): an input
    sharing memory with ``out`` in a way the checks let through is computed one
    element at a time, in TensorIterator's loop order (``unproven_overlap``)."""
    if not unproven_overlap(out, args):
        _compute_into(impl_fn, spec, out, args, kwargs)
        return
    for index in in_loop_order(out._shape, out._stride):
        element = [_element(a, out._shape, index) for a in (out, *args)]
        _compute_into(impl_fn, spec, element[0], element[1:], kwargs)


def _element(t, shape, index):
    """The 0-d view of tensor argument ``t`` (broadcast to ``shape``) at ``index``;
    other arguments pass through."""
    if not isinstance(t, Tensor):
        return t
    lead = len(shape) - t.dim()
    offset = t._offset + sum(i * st for i, n, st in zip(index[lead:], t._shape, t._stride)
                             if n != 1)
    return ops.aten.as_strided.default(t, [], [], offset)


def _compute_into(impl_fn, spec, out, args, kwargs):
    """Run the impl into an existing tensor.  TensorIterator computes in the result
    dtype and then casts into ``out``: when the result is float16/bfloat16 and
    ``out`` has another dtype, the rounding to the result dtype must happen, so
    the impl writes a temporary of the result dtype first."""
    if spec.dtype is out.dtype or spec.dtype.opmath is spec.dtype.numpy:
        impl_fn(out, *args, **kwargs)
        return
    tmp = empty_tensor(out._shape, spec.dtype, out.device)
    impl_fn(tmp, *args, **kwargs)
    out._np()[...] = convert_array(tmp._np(), spec.dtype, out.dtype)


def _resize_out(out, shape, stride=None):
    """``out=`` tensors of the wrong shape are resized (PyTorch warns if they held data)."""
    if out.numel() != 0:
        warnings.warn(
            f"An output with one or more elements was resized since it had shape "
            f"{list(out._shape)}, which does not match the required output shape "
            f"{list(shape)}. This behavior is deprecated, and in a future PyTorch release "
            "outputs will not be resized unless they have zero elements. You can explicitly "
            "reuse an out tensor t by resizing it, inplace, to zero elements with "
            "t.resize_(0).", UserWarning, stacklevel=5)
    if out.device.type == "cpu":    # at::native::resize_output calls the kernel: no dispatch
        kernel_modules.KERNELS["resize_"](out, list(shape))
    else:
        ops.aten.resize_.default(out, list(shape))
    if stride is not None and tuple(stride) != out._stride and \
            _non_overlapping_and_dense(tuple(shape), tuple(stride)):
        # a resized output takes the strides the meta rule proposed (as_strided_ in
        # set_output_raw_strided); a dense layout has the same extent, so it fits
        out._stride = tuple(stride)
        out._array = None


# -- the loader --------------------------------------------------------------------

_DEBUG = "registered at native_functions.yaml:{}"


_VMAP_RANDOM = KernelFunction(vmap_mode_random_kernel, BOXED,
                              "registered at glasstorch/_functorch/batch_rules/random.py")


def _parse_keys(spec: str):
    return [DispatchKey[k.strip()] for k in spec.split(",")]


def _line_numbers(text):
    return [i + 1 for i, line in enumerate(text.splitlines())
            if line.startswith("- func:") or line.startswith("- impl:")]


def load(path=YAML_PATH) -> None:
    """Read the declarations and build everything listed in the module docstring."""
    register_builtin_fallbacks()
    kernel_modules.load_all()
    with open(path) as f:
        text = f.read()
    entries = startup_cache.cached_yaml("native_functions.yaml", text) or []
    with deferred_updates():
        more_kernels = []
        for entry, line in zip(entries, _line_numbers(text)):
            if "impl" in entry:
                more_kernels.append((entry, _DEBUG.format(line)))
            else:
                _load_entry(entry, _DEBUG.format(line))
        for entry, debug in more_kernels:
            _load_kernels(entry, debug)
    _install_bindings()
    barebones_unsigned.install(dispatcher.operators)
    _check_meta_coverage()


def _load_entry(entry, debug):
    schema = parse_schema("aten::" + entry["func"])
    op_entry = dispatcher.define(schema, debug)
    qualified = op_entry.name
    DECLARATIONS[qualified] = entry
    op = _overload(schema)
    op.tags = declared_tags(entry)
    if Tag.nondeterministic_seeded in op.tags:     # vmap's randomness decides (FuncTorchVmapMode)
        op_entry.register(DispatchKey.FuncTorchVmapMode, _VMAP_RANDOM, update=False)
    variants = [v.strip() for v in str(entry.get("variants", "function")).split(",")]
    module = entry.get("python_module", "torch")

    structured = entry.get("structured")
    derived = {}
    for spec in _autogen_list(entry):
        kind, derived_schema = _derive(schema, spec)
        derived_entry = dispatcher.define(parse_schema("aten::" + derived_schema), debug)
        derived[kind] = _overload(derived_entry.schema)
        derived[kind].tags = derived_tags(entry, derived_entry.name.split("::")[1], kind, op.tags)

    if structured:
        own = {key for keys in entry.get("dispatch") or {} for key in _parse_keys(keys)}
        _register_structured(structured, op, derived, debug, own)
    elif "out" in derived:
        _register_out_wrapper(op, derived["out"], debug)
    for keys, kernel_name in (entry.get("dispatch") or {}).items():
        fn = _kernel(kernel_name, qualified)
        convention = KEYSET if getattr(fn, "_takes_keyset", False) else UNBOXED
        for key in _parse_keys(keys):
            op_entry.register(key, KernelFunction(fn, convention, debug), update=False)

    out_op = derived.get("out")
    if out_op is not None and Tag.generated in out_op.tags and Tag.view_copy not in op.tags:
        out_op = None       # PyTorch binds no out= for the out variants its codegen makes
    python_name = schema.name.split("::")[1]
    if "function" in variants:
        _SIGNATURES.setdefault((module, python_name), []).append(
            binding.PythonSignature(op, out_op, method=False, name=python_name))
    if "method" in variants:
        _SIGNATURES.setdefault(("method", python_name), []).append(
            binding.PythonSignature(op, None, method=True, name=python_name))
    if "inplace" in derived:
        # x.add_() by default; `inplace_variants: function, method` also gives torch.relu_
        inplace_op = derived["inplace"]
        for variant in str(entry.get("inplace_variants", "method")).split(","):
            if variant.strip() == "none":   # (also `variants: none`: no Python binding)
                continue
            is_method = variant.strip() == "method"
            _SIGNATURES.setdefault(("method" if is_method else module, python_name + "_"), []).append(
                binding.PythonSignature(inplace_op, None, method=is_method, name=python_name + "_"))


def _load_kernels(entry, debug):
    """An ``impl:`` entry: kernels at more keys for an overload declared elsewhere
    (a layout family's kernels of another family's op, e.g. SparseCPU's add)."""
    op_entry = dispatcher.find("aten::" + entry["impl"])
    if op_entry is None:
        raise RuntimeError(f"native_functions.yaml: impl: {entry['impl']} names no declared op")
    for keys, kernel_name in entry["dispatch"].items():
        fn = _kernel(kernel_name, op_entry.name)
        convention = KEYSET if getattr(fn, "_takes_keyset", False) else UNBOXED
        for key in _parse_keys(keys):
            op_entry.register(key, KernelFunction(fn, convention, debug), update=False)


def _autogen_list(entry):
    spec = entry.get("autogen")
    if not spec:
        return []
    if isinstance(spec, str):
        return _split_top_level(spec)
    return list(spec)


def _split_top_level(text):
    """Split on commas outside parentheses (autogen may list full schemas)."""
    parts, depth, start = [], 0, 0
    for i, ch in enumerate(text):
        depth += ch == "("
        depth -= ch == ")"
        if ch == "," and depth == 0:
            parts.append(text[start:i].strip())
            start = i + 1
    parts.append(text[start:].strip())
    return [p for p in parts if p]


def _derive(schema, spec):
    """(kind, schema text) for one autogen item: a bare overload name or a full schema."""
    if "(" in spec:
        kind = "out" if "!" in spec and not spec.split("(")[0].split(".")[0].endswith("_") else "inplace"
        return kind, spec
    if spec.split(".")[0].endswith("_"):
        return "inplace", _inplace_schema(schema, spec)
    return "out", _out_schema(schema, spec)


def _overload(schema):
    base = schema.name.split("::")[1]
    return getattr(getattr(ops.aten, base), schema.overload_name or "default")


def _kernel(name, qualified):
    try:
        return kernel_modules.KERNELS[name]
    except KeyError:
        raise RuntimeError(f"{qualified}: kernel '{name}' is declared in native_functions.yaml "
                           "but no @kernel with that name exists") from None


def _register_structured(name, op, derived, debug, own=()):
    """The kernels derived from a meta rule and impl; a functional kernel
    for a key listed in the entry's ``dispatch`` (``own``) is that one instead
    (a composite functional whose in-place and out= variants are structured)."""
    meta_rule = kernel_modules.META_RULES.get(name)
    if meta_rule is None:
        raise RuntimeError(f"{op._name}: structured op '{name}' has no meta rule (@meta)")
    impl_fn = kernel_modules.IMPLS.get(name)
    if impl_fn is None:
        raise RuntimeError(f"{op._name}: structured op '{name}' has no CPU impl (@impl)")
    overlap = None if Tag.reduction in op.tags else \
        getattr(meta_rule, "overlap_rule", TENSOR_ITERATOR_OVERLAP)
    for key, body in ((DispatchKey.CPU, impl_fn), (DispatchKey.Meta, None)):
        functional, inplace, out_variant, out_names = make_structured_kernels(name, meta_rule, body,
                                                                              overlap)
        if key not in own:
            op._entry.register(key, KernelFunction(functional, UNBOXED, debug), update=False)
        if "inplace" in derived:
            derived["inplace"]._entry.register(key, KernelFunction(inplace, UNBOXED, debug))
        if "out" in derived and Tag.generated not in derived["out"].tags:
            out_names.extend(a.name for a in derived["out"]._schema.arguments if a.is_out)
            derived["out"]._entry.register(key, KernelFunction(out_variant, UNBOXED, debug))
    if "out" in derived and Tag.generated in derived["out"].tags:
        _register_out_wrapper(op, derived["out"], debug)


def _register_out_wrapper(op, out_op, debug):
    """The out= overload of an op that is not structured, as PyTorch's codegen
    writes it: run the functional op, resize each ``out`` (with resize_output's
    warning) and copy into it; each ``out`` must have the result's dtype (the
    copy PyTorch's codegen writes checks it, as the hand-written ones do), except
    for generated overloads of ops that take a ``dtype`` (``_to_copy.out``: the
    copy casts).  Also the out= overload of a structured op whose out variant
    PyTorch generates."""
    out_names = [a.name for a in out_op._schema.arguments if a.is_out]
    takes_dtype = any(a.name == "dtype" for a in op._schema.arguments)
    exact_dtype = Tag.generated not in out_op.tags or not takes_dtype
    # a hand-written factory's out= (rand(..., out=o)) makes values in out's dtype
    fills_out_dtype = Tag.generated not in out_op.tags and any(
        a.name == "dtype" and a.kwarg_only for a in op._schema.arguments)

    def out_wrapper(*args, **kwargs):
        outs = [kwargs.pop(name) for name in out_names]
        if fills_out_dtype:
            kwargs["dtype"] = outs[0].dtype
        result = op(*args, **kwargs)
        results = (result,) if isinstance(result, Tensor) else result
        for out, value in zip(outs, results):
            if value is None:       # an output its mask left undefined
                continue
            if exact_dtype and out.dtype is not value.dtype:
                raise RuntimeError(f"Expected out tensor to have dtype "
                                   f"{type_meta_name(value.dtype)}, but got "
                                   f"{type_meta_name(out.dtype)} instead")
            if out._shape != value._shape:
                _resize_out(out, value._shape)
            out.copy_(value)
        return outs[0] if len(outs) == 1 else tuple(outs)

    out_wrapper.__name__ = out_wrapper.__qualname__ = f"{out_op.__name__.replace('.', '_')}_wrapper"
    out_op._entry.register(DispatchKey.CompositeExplicitAutograd,
                           KernelFunction(out_wrapper, UNBOXED, debug))


def _check_meta_coverage():
    missing = []
    for name, entry in dispatcher.operators.items():
        if not name.startswith("aten::"):
            continue
        if entry.table[DispatchKey.Meta] is None and entry.table[DispatchKey.SparseMeta] is None \
                and entry.table[DispatchKey.SparseCsrMeta] is None:
            missing.append(name)    # (an op of sparse tensors only may serve SparseMeta alone)
    if missing:
        raise RuntimeError("every op needs a meta rule or a kernel that serves Meta; missing: "
                           + ", ".join(sorted(missing)))


# -- 4. Python bindings ------------------------------------------------------------

def _make_public(name, signatures):
    """One Python callable for all overloads sharing ``name``."""
    parsers = [binding.make_parser(sig) for sig in signatures]
    # Ops with named returns answer torch.return_types.<name> (max, sort, ...).
    parsers = return_types.returning_structseq(parsers, signatures)
    NoMatch = binding._NoMatch

    if len(parsers) == 1:
        parse = parsers[0]

        def public(*args, **kwargs):
            if _overrides.on and has_torch_function(args, kwargs):
                return handle_torch_function(public, args + tuple(kwargs.values()),
                                             *args, **kwargs)
            try:
                op, a, k = parse(*args, **kwargs)
            except binding.UnpackError as e:
                raise TypeError(str(e)) from None
            except (NoMatch, TypeError):
                if has_torch_function(args, kwargs):   # a tensor-like that isn't a Tensor
                    return handle_torch_function(public, args + tuple(kwargs.values()),
                                                 *args, **kwargs)
                raise TypeError(binding.single_signature_message(
                    name, signatures[0], args, kwargs)) from None
            return op(*a, **k)
    else:
        def public(*args, **kwargs):
            if _overrides.on and has_torch_function(args, kwargs):
                return handle_torch_function(public, args + tuple(kwargs.values()),
                                             *args, **kwargs)
            for parse in parsers:
                try:
                    op, a, k = parse(*args, **kwargs)
                except binding.UnpackError as e:
                    raise TypeError(str(e)) from None
                except (NoMatch, TypeError):
                    continue
                return op(*a, **k)
            if has_torch_function(args, kwargs):       # a tensor-like that isn't a Tensor
                return handle_torch_function(public, args + tuple(kwargs.values()),
                                             *args, **kwargs)
            meant = [s for s in signatures if binding.plausible(s, args, kwargs)]
            if len(meant) == 1:
                raise TypeError(binding.single_signature_message(name, meant[0], args, kwargs,
                                                                 signatures))
            raise TypeError(binding.invalid_arguments_message(name, signatures, args, kwargs))
    public.__name__ = public.__qualname__ = name
    # tracebacks and the profiler's Python events read "in add", not "in public"
    public.__code__ = public.__code__.replace(co_name=name, co_qualname=name)
    public.__doc__ = "\n".join(f"{name}{sig.describe()}  ->  aten::{sig.op.__name__}"
                               for sig in signatures)
    public._signatures = signatures
    return public


# Python operators and the functions they call.  (name, reflected)
DUNDERS = {
    "__add__": ("add", False), "__radd__": ("add", True), "__iadd__": ("add_", False),
    "__sub__": ("sub", False), "__rsub__": ("rsub", "function"), "__isub__": ("sub_", False),
    "__mul__": ("mul", False), "__rmul__": ("mul", True), "__imul__": ("mul_", False),
    "__truediv__": ("div", False), "__itruediv__": ("div_", False),
    "__floordiv__": ("floor_divide", False), "__ifloordiv__": ("floor_divide_", False),
    "__mod__": ("remainder", False), "__imod__": ("remainder_", False),
    "__pow__": ("pow", False), "__ipow__": ("pow_", False),
    "__matmul__": ("matmul", False),
    "__and__": ("bitwise_and", False), "__or__": ("bitwise_or", False),
    "__xor__": ("bitwise_xor", False), "__rand__": ("bitwise_and", True),
    "__ror__": ("bitwise_or", True), "__rxor__": ("bitwise_xor", True),
    "__iand__": ("bitwise_and_", False), "__ior__": ("bitwise_or_", False),
    "__ixor__": ("bitwise_xor_", False),
    "__lshift__": ("bitwise_left_shift", False), "__rshift__": ("bitwise_right_shift", False),
    "__eq__": ("eq", False), "__ne__": ("ne", False), "__lt__": ("lt", False),
    "__le__": ("le", False), "__gt__": ("gt", False), "__ge__": ("ge", False),
    "__neg__": ("neg", False), "__abs__": ("abs", False), "__invert__": ("bitwise_not", False),
    "__pos__": ("positive", False),
    # reflected, non-commutative: torch.<name>(other, self) ("swapped"), as torch/_tensor.py
    # does; "function": torch.<name>(self, other)
    "__rfloordiv__": ("floor_divide", "swapped"), "__rmod__": ("remainder", "swapped"),
    "__rpow__": ("pow", "swapped"), "__rlshift__": ("bitwise_left_shift", "swapped"),
    "__rrshift__": ("bitwise_right_shift", "swapped"),
    "__rtruediv__": ("reciprocal", "reciprocal_mul"),   # other / x is x.reciprocal() * other
    "__rdiv__": ("reciprocal", "reciprocal_mul"),       # torch's alias of __rtruediv__
    "__rmatmul__": ("matmul", "swapped"),
    "__ilshift__": ("bitwise_left_shift_", False), "__irshift__": ("bitwise_right_shift_", False),
}


def _make_dunder(dunder, method, reflected):
    """Operators return NotImplemented on foreign types, so Python can try the other side.

    ``x + y`` with two tensors skips argument parsing: when the method's first
    signature is ``(Tensor self, Tensor other, <defaults only>)`` that overload is
    what the parser would pick, so the dunder calls it directly.
    """
    direct = _direct_binary_overload(method)
    if direct is not None and not reflected:
        # x * 2.0: for the numbers-as-tensors family the parser would pick the same
        # Tensor overload and pass the number on (ints only while they fit int64)
        numbers_too = method.__name__ in binding.NUMBERS_AS_TENSORS

        def op(self, other):
            # a TypeError becomes NotImplemented, as torch's TypeError_to_NotImplemented_
            # does, so Python can try the other operand (try is free when nothing raises)
            try:
                if _overrides.on:   # overrides see the method (``Tensor.add``), as in torch
                    return op_slow(self, other)
                if isinstance(other, Tensor):
                    return direct(self, other)
                if numbers_too and (type(other) is float or type(other) is int
                                    and -_INT64_LIMIT <= other < _INT64_LIMIT):
                    return direct(self, other)
                if not isinstance(other, binding.NUMBER):
                    return op_slow(self, other)     # a tensor-like may handle it
                return method(self, other)
            except TypeError:
                return NotImplemented

        def op_slow(self, other):
            if isinstance(other, (Tensor, *binding.NUMBER)) or has_torch_function((other,)) \
                    or binding.is_sym_number(other):
                return method(self, other)
            return NotImplemented
        op.__name__ = op.__qualname__ = dunder
        return op
    if reflected in ("swapped", "function"):
        function, swapped = method, reflected == "swapped"

        def op(self, other):
            try:
                return function(other, self) if swapped else function(self, other)
            except TypeError:
                return NotImplemented
    elif reflected == "reciprocal_mul":
        def op(self, other):
            try:
                return method(self).mul(other)
            except TypeError:
                return NotImplemented
    elif dunder == "__invert__":
        def op(self):
            if self.dtype.is_floating_point or self.dtype.is_complex:
                raise TypeError("~ (operator.invert) is only implemented on integer and "
                                "Boolean-type tensors")
            return method(self)
    elif reflected:
        def op(self, other):
            try:
                return method(self, other)
            except TypeError:
                return NotImplemented
    elif dunder in ("__neg__", "__abs__", "__invert__", "__pos__"):
        def op(self):
            return method(self)
    else:
        def op(self, other):
            if not isinstance(other, (Tensor, *binding.NUMBER)):
                return NotImplemented
            return method(self, other)
    op.__name__ = op.__qualname__ = dunder
    return op


_INT64_LIMIT = 2 ** 63


def _direct_binary_overload(method):
    signatures = getattr(method, "_signatures", None)
    if not signatures:
        return None
    args = signatures[0].schema.arguments
    if len(args) < 2 or str(args[0].type) != "Tensor" or str(args[1].type) != "Tensor":
        return None
    if any(not (a.has_default_value() or a.type.optional) for a in args[2:]):
        return None
    return signatures[0].op


# Where PyTorch's generated bindings live (what ``func.__module__`` says).
_PYTHON_MODULES = {"torch": "torch", "nn": "torch._C._nn", "linalg": "torch._C._linalg",
                   "special": "torch._C._special", "fft": "torch._C._fft"}


_TENSOR_OPTIONS = {"dtype", "layout", "device", "pin_memory"}


def _fold_out_signatures(signatures):
    """PyTorch binds a functional overload and its out= overload as one Python
    signature (torchgen's NativeFunctionsGroup): an out= overload declared on
    its own joins the functional one whose other arguments it repeats
    (a factory's dtype/layout/device/pin_memory aside)."""
    def key(sig, drop_options):
        return [(a.name, str(a.type)) for a in sig.schema.arguments
                if not a.is_out and not (drop_options and a.name in _TENSOR_OPTIONS)]
    standalone_outs = [s for s in signatures if any(a.is_out for a in s.schema.arguments)]
    folded = []
    for out_sig in standalone_outs:
        for sig in signatures:
            if sig.out_op is None and sig not in standalone_outs and not sig.method and \
                    key(sig, True) == key(out_sig, False):
                sig.out_op = out_sig.op
                folded.append(out_sig)
                break
    return [s for s in signatures if s not in folded]


def _install_bindings():
    for (module, name), signatures in _SIGNATURES.items():
        if module != "method":
            signatures = _fold_out_signatures(signatures)
        fn = _make_public(name, binding.sort_overloads(signatures))
        if module == "method":
            setattr(Tensor, name, fn)
        else:
            fn.__module__ = _PYTHON_MODULES[module]
            FUNCTIONS[module][name] = fn
    for dunder, (name, reflected) in DUNDERS.items():
        method = getattr(Tensor, name, None)
        if reflected in ("swapped", "function"):
            method = FUNCTIONS["torch"].get(name)
        if method is not None:
            setattr(Tensor, dunder, _make_dunder(dunder, method, reflected))


def function(name, module="torch"):
    return FUNCTIONS[module][name]

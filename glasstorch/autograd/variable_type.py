"""The autograd kernels (PyTorch's generated VariableType and ADInplaceOrView
kernels, torch/csrc/autograd/generated/, from tools/autograd/gen_variable_type.py).

For every op with an entry in ``derivatives.yaml`` this module generates:

* a backward node class named as PyTorch names it (``MulBackward0``) whose
  ``apply`` evaluates the entry's formulas (ops, so they dispatch and can be
  differentiated again), with the saved values exposed as ``_saved_<name>``;
* an autograd kernel, registered at the ``Autograd`` alias key, for the
  functional op and for its in-place variant.  When grad mode is on and a
  differentiable input requires grad, it builds the node (edges to the inputs'
  grad_fns, saved values), redispatches below autograd, and sets the outputs'
  history; an in-place op on a view rebases the base's history (CopySlices).
  Otherwise it only redispatches: under ``no_grad`` the kernel still runs;
  under ``inference_mode`` it is never reached;
* for out= variants, a kernel raising PyTorch's "functions with out=...
  arguments don't support automatic differentiation" error.

Every in-place and out= op also gets an ``ADInplaceOrView`` kernel that bumps
the version counter of what it wrote (and refuses inference tensors outside
inference mode).
"""
from __future__ import annotations

from operator import attrgetter
from weakref import ref as _weakref

from .._core import dispatch_key as dk
from .._core import dtype as dt
from .._core import startup_cache
from .._core.dispatch_key import DispatchKey
from .._core.tls import state as _tls
from .._dispatcher.dispatcher import BOXED, KEYSET, UNBOXED, KernelFunction, dispatcher, ops
from .._dispatcher.dispatcher import function_range
from .._dispatcher.dispatcher import _observers as _dispatch_observers
from .._dispatcher.dispatcher import _traces as _dispatch_traces
from .._dispatcher.schema import NO_DEFAULT
from .._ops import derivatives as derivatives_yaml
from .._ops.derivatives import FORWARD_KEYWORDS
from .._ops.tags import Tag
from .._tensor import Tensor, wrapped_numbers
from . import anomaly_mode
from .formulas import FORMULA_GLOBALS
from .graph import AccumulateGrad, Node, SavedVariable, _sequence, is_inference, version_counter
from .variable import (DEFAULT, INFERENCE_MODE, MULTI_OUTPUT_NODE, NO_GRAD_MODE, _detach_,
                       check_inplace, fw_grad, fw_grad_mode, fw_levels, gradient_edge,
                       move_retains_grad_hook, requires_grad, set_fw_grad, set_history)

__all__ = ["register_autograd_kernels", "NODE_CLASSES", "BuiltinNode"]

_new = object.__new__

BELOW_AUTOGRAD = dk.full_after(DispatchKey.AutogradOther)
BELOW_ADINPLACEORVIEW = dk.full_after(DispatchKey.ADInplaceOrView)
# at::AutoDispatchBelowADInplaceOrView: what the autograd and ADInplaceOrView
# kernels exclude while the kernels below them run, so that the ops those call
# neither record history nor bump version counters.
_BELOW_AD_EXCLUDED = dk.AUTOGRAD_KEYS | dk.ADINPLACEORVIEW


def redispatch_below_autograd(op, keyset, args, kwargs):
    """``op.redispatch(keyset, ...)`` under AutoDispatchBelowADInplaceOrView."""
    prev = _tls.excluded
    _tls.excluded = prev | _BELOW_AD_EXCLUDED
    try:
        return op.redispatch(keyset, *args, **kwargs)
    finally:
        _tls.excluded = prev

FUNCTIONAL, INPLACE, VIEW = "functional", "inplace", "view"
INPLACE_VIEW = "inplace_view"      # squeeze_, transpose_ ...: self's geometry changes

_SPARSE_KEYS = dk.SPARSE | dk.SPARSE_CSR    # layouts whose strides are saved empty

# Names a formula may use to save metadata instead of a whole tensor
# (PyTorch's codegen rewrites self.sym_sizes() and friends the same way).
_METADATA = {
    "sym_sizes": attrgetter("_shape"),
    "sym_strides": lambda t: () if t._keys & _SPARSE_KEYS else t._stride,  # strides_or_error
    "scalar_type": attrgetter("dtype"),
    "options": lambda t: (t.dtype, t.device),
    "dim": lambda t: len(t._shape),
    "sym_numel": lambda t: t.numel(),
    "geometry": lambda t: (t._shape, t._stride, t._offset),
    "device": attrgetter("device"),
}

NODE_CLASSES: dict = {}   # "aten::mul.Tensor" -> MulBackward0


class BuiltinNode(Node):
    """A node generated from derivatives.yaml; ``_info`` is its ``DerivativeInfo``."""

    __slots__ = ("_slot_map",)
    _info = None

    def apply(self, grads):
        info = self._info
        edges = self._next_edges
        outputs = [None] * len(edges)
        if info.uses_grads_list:
            if all(g is None for g in grads):
                return outputs
            grads = [g if g is not None or meta is None else _zeros_for(meta)
                     for g, meta in zip(grads, self._input_metadata)]
        elif grads[0] is None:
            return outputs
        env = {"grad": grads[0], "grads": grads}
        for name, attr in info.saved_attrs:
            value = getattr(self, attr)
            if type(value) is SavedVariable:
                value = value.unpack(self)
            elif type(value) is list and value and type(value[0]) is SavedVariable:
                value = [v.unpack(self) for v in value]
            env[name] = value
        if info.single_input:     # one formula, one plain input: the common case
            if edges[0] is not None:
                env["grad_input_mask"] = [True]
                outputs[0] = eval(info.formulas[0].code, FORMULA_GLOBALS, env)
            return outputs
        positions = self._slot_map
        for formula in info.formulas:
            slots = [positions[name] for name in formula.slots]
            mask = [any(edges[j] is not None for j in s) for s in slots]
            if not any(mask):
                continue
            env["grad_input_mask"] = mask
            value = eval(formula.code, FORMULA_GLOBALS, env)
            if len(slots) == 1:
                value = (value,)
            for s, is_list, v in zip(slots, formula.is_list, value):
                if is_list:
                    for j, g in zip(s, v if v is not None else [None] * len(s)):
                        outputs[j] = g
                else:
                    outputs[s[0]] = v
        return outputs

    def release_variables(self):
        for attr in self._info.saved_tensor_attrs:
            value = getattr(self, attr)
            if type(value) is SavedVariable:
                value.release()
            elif type(value) is list:
                for v in value:
                    v.release()


def _zeros_for(meta):
    from .. import zeros
    shape, dtype, device = meta
    return zeros(shape, dtype=dtype, device=device)


class _Formula:
    __slots__ = ("code", "slots", "is_list")

    def __init__(self, code, slots, is_list):
        self.code = code
        self.slots = slots
        self.is_list = is_list


class DerivativeInfo:
    """Everything the kernel and node of one forward overload need, computed once."""

    def __init__(self, derivative, entry):
        schema = entry.schema
        self.op_name = entry.name
        self.node_name = derivative.node_name
        self.schema = schema
        args = schema.arguments
        self.arg_names = [a.name for a in args]
        self.is_list_arg = [a.type.is_tensor_like and a.type.is_list for a in args]
        self.is_tensor_arg = [a.type.is_tensor_like for a in args]
        referenced = set()
        for code in derivative.formulas.values():
            referenced |= _names_in(code)
        self.uses_grads_list = "grads" in referenced
        diff_names = [name for key in derivative.formulas for name in key]
        self.diff_indices = [i for i, a in enumerate(args) if a.name in diff_names]
        # tensor inputs with no formula and not declared non_differentiable must
        # not require grad (PyTorch's check_no_requires_grad)
        self.checked_indices = [i for i, a in enumerate(args)
                                if a.type.is_tensor_like and a.name not in diff_names
                                and a.name not in derivative.non_differentiable]
        # saved (and unpacked, which version-checks them) in the order PyTorch's
        # codegen saves them: formula by formula, each one's arguments in schema order
        order = []
        for code in derivative.formulas.values():
            used = _names_in(code)
            order += [name for name in self.arg_names if name in used and name not in order]
        self.saved_args = [(name, self.arg_names.index(name)) for name in order]
        self.saved_metadata = _metadata_referenced(args, referenced)
        n_returns = len(schema.returns)
        self.saved_results = [r for r in (["result"] + [f"result{i}" for i in range(n_returns)])
                              if r in referenced]
        self.saved_names = [n for n, _ in self.saved_args] + \
            [n for n, _, _ in self.saved_metadata] + self.saved_results
        self.saved_tensor_names = [n for n, i in self.saved_args if self.is_tensor_arg[i]] + \
            self.saved_results
        self.saved_attrs = [(n, "_raw_saved_" + n) for n in self.saved_names]
        self.saved_tensor_attrs = ["_raw_saved_" + n for n in self.saved_tensor_names]
        self.output_differentiability = derivative.output_differentiability
        self.returns_list = n_returns == 1 and schema.returns[0].type.is_list
        self.returns_tuple = n_returns > 1
        # Formulas run in the sorted order of their keys, as PyTorch's
        # load_derivatives.py processes them (a / b computes other's gradient,
        # then self's; mm: mat2's, then self's): a dispatch mode logging the
        # backward pass sees the ops in PyTorch's order.
        self.formulas = []
        for key, code in sorted(derivative.formulas.items(), key=lambda kv: ", ".join(kv[0])):
            slots, is_list = [], []
            for name in key:
                slots.append(name)
                is_list.append(self.is_list_arg[self.arg_names.index(name)])
            self.formulas.append(_Formula(code, slots, is_list))
        self.single_input = (len(self.formulas) == 1 and len(self.formulas[0].slots) == 1
                             and not self.formulas[0].is_list[0])
        self.node_cls = _node_class(self)
        NODE_CLASSES[self.op_name] = self.node_cls
        self._init_forward(derivative)

        self.defaults = tuple(None if a.default_value is NO_DEFAULT else a.default_value
                              for a in args)
        self.n_args = len(args)
        plan = [("_raw_saved_" + name, i, self.is_tensor_arg[i], self.is_list_arg[i],
                 self._save_guard(derivative, name, i)) for name, i in self.saved_args]
        # an argument the op writes besides self (rrelu_with_noise's noise) is saved
        # after the call, as PyTorch's generated kernels do, so its new version is kept
        written = [i > 0 and args[i].is_write for i in range(len(args))]
        self.saved_arg_plan = [p for p in plan if not written[p[1]]]
        self.saved_after_plan = [p for p in plan if written[p[1]]]
        self.saved_metadata_plan = [("_raw_saved_" + name, i, fn, self.is_list_arg[i])
                                    for name, i, fn in self.saved_metadata]
        self.static_slots = None if any(self.is_list_arg[i] for i in self.diff_indices) \
            else self.slots_for_call(None)

    def _init_forward(self, derivative):
        """Forward-mode AD: the formula per output, and whether an in-place
        variant must keep a copy of ``self`` for it (PyTorch's original_self)."""
        self.forward = sorted(derivative.forward.items())
        self.functional_op = None       # auto_linear calls it; set at registration
        referenced = set()
        for _, code in self.forward:
            if code == "auto_element_wise":
                if not self.single_input:
                    raise RuntimeError(f"derivatives.yaml: {self.op_name}: auto_element_wise "
                                       "needs exactly one differentiable input")
                referenced |= _names_in(self.formulas[0].code)
            elif code not in FORWARD_KEYWORDS:
                referenced |= _names_in(code)
        first = self.arg_names[0] if self.arg_names else None
        self.forward_uses_self = first in referenced or f"{first}_p" in referenced
        self.forward_metadata = _metadata_referenced(self.schema.arguments, referenced)
        self.return_names = [r.name for r in self.schema.returns]

    def _save_guard(self, derivative, name, i):
        """The edge whose need decides whether input ``name`` is saved at all,
        or None when it is always saved.  As PyTorch's generated kernels do
        (gen_variable_type.py: guard_for), only a plain Tensor input of an op
        with several differentiable inputs, none a Tensor[], that exactly one
        single-input formula uses; ``*_backward`` ops always save."""
        diff_names = [self.arg_names[j] for j in self.diff_indices]
        if ("backward" in self.op_name or len(diff_names) <= 1
                or any(self.is_list_arg[j] for j in self.diff_indices)
                or not self.schema.arguments[i].type.is_tensor):
            return None
        users = [key for key, code in derivative.formulas.items() if name in _names_in(code)]
        if len(users) != 1 or len(users[0]) != 1:
            return None
        return diff_names.index(users[0][0])

    def slots_for_call(self, args):
        """Map each differentiable input to its edge slot(s) for these arguments
        (a Tensor[] input has one slot per element)."""
        position = {}
        n = 0
        for i in self.diff_indices:
            if self.is_list_arg[i]:
                count = len(args[i])
                position[self.arg_names[i]] = list(range(n, n + count))
                n += count
            else:
                position[self.arg_names[i]] = [n]
                n += 1
        return position


def _metadata_referenced(args, referenced) -> list:
    """(name, argument position, getter) of each ``<arg>_<metadata>`` name used."""
    return [(f"{a.name}_{suffix}", i, fn) for i, a in enumerate(args)
            for suffix, fn in _METADATA.items() if f"{a.name}_{suffix}" in referenced]


def _names_in(code) -> set:
    names = set(code.co_names) | set(code.co_varnames)
    for const in code.co_consts:
        if hasattr(const, "co_names"):
            names |= _names_in(const)
    return names


# Saved metadata PyTorch keeps but does not expose as ``_saved_*`` (no Python type).
_HIDDEN_METADATA = ("_scalar_type", "_options")


def _node_class(info):
    """The node class: a slot per saved value, and ``_saved_<name>`` properties
    named as PyTorch names them (``result1`` of ``nll_loss_forward`` is
    ``_saved_total_weight``: a named return goes by its name)."""
    slots = tuple("_raw_saved_" + n for n in info.saved_names)
    namespace = {"__slots__": slots, "_info": info}
    # (nor the metadata of a Tensor[] argument: ``CatBackward0`` shows no sizes)
    hidden = {name for name, i, _ in info.saved_metadata if info.is_list_arg[i]}
    for name in info.saved_names:
        if name.endswith(_HIDDEN_METADATA) or name in hidden:
            continue
        public = name
        if name in info.saved_results and name != "result":
            public = info.schema.returns[int(name[6:])].name or name
        namespace["_saved_" + public] = _saved_property(name)
    return type(info.node_name, (BuiltinNode,), namespace)


def _saved_property(name):
    """Saved tensors unpacked (version-checked); lists read back as tuples, as
    PyTorch's getters return them."""
    attr = "_raw_saved_" + name

    def get(self):
        value = getattr(self, attr)
        if type(value) is SavedVariable:
            return value.unpack(self)
        if type(value) is list:
            return tuple(v.unpack(self) if type(v) is SavedVariable else v for v in value)
        return value
    return property(get)


# -- recording ---------------------------------------------------------------------

def _arg_values(info, args, kwargs):
    """Every schema argument's value for this call, defaults filled in."""
    n = len(args)
    if not kwargs:
        return args + info.defaults[n:] if n < info.n_args else args
    return [args[i] if i < n else kwargs.get(name, info.defaults[i])
            for i, name in enumerate(info.arg_names)]


def _record(info, kind, op, ks, args, kwargs):
    """The slow path of an autograd kernel: build the node, run the op below
    autograd, set the outputs' history."""
    values = _arg_values(info, args, kwargs)
    for i in info.checked_indices:
        value = values[i]
        if any(requires_grad(v) for v in (value if info.is_list_arg[i] else (value,))
               if v is not None):
            raise RuntimeError(f"The function '{op._schema.name.split('::')[1]}' is not "
                               f"differentiable with respect to argument '{info.arg_names[i]}'. "
                               "This input cannot have requires_grad True.")
    if info.static_slots is not None:
        flat = [values[i] for i in info.diff_indices]
    else:
        flat = []
        for i in info.diff_indices:
            if info.is_list_arg[i]:
                flat.extend(values[i])
            else:
                flat.append(values[i])
    if kind == INPLACE or kind == INPLACE_VIEW:
        check_inplace(values[0], True)
    node = info.node_cls()
    edges = node._next_edges = tuple([_edge_of(t) for t in flat])
    node._slot_map = info.static_slots or info.slots_for_call(values)
    if anomaly_mode.state.enabled:
        anomaly_mode.record_forward(node)
    _save_inputs(node, info, values, edges, kind)
    result = _call_below(op, ks, args, kwargs)
    if info.saved_after_plan:
        _save_inputs(node, info, values, edges, kind, info.saved_after_plan)

    outputs = result if info.returns_tuple or info.returns_list else (result,)
    # (a backward op such as convolution_backward returns None for outputs its
    # output_mask did not ask for)
    node._input_metadata = tuple([(o._shape, o.dtype, o.device) if o is not None else None
                                  for o in outputs])
    differentiable = info.output_differentiability
    for i, out in enumerate(outputs):
        if differentiable is not None and not differentiable[i]:
            continue
        if out is not None and differentiable is not None and out.dtype.category < dt.FLOATING:
            # an integer output declared differentiable (PyTorch's history for every
            # output of a formula-less op, e.g. _embedding_bag_forward_only)
            raise RuntimeError(f"Autograd not support dtype: {out.dtype._short}")
        if out is None or out.dtype.category < dt.FLOATING:
            continue
        if kind == INPLACE:
            _rebase_history(out, node)
        elif kind == INPLACE_VIEW:
            set_history(out, node, 0)   # a view stays a view of its base, with new geometry
        else:
            set_history(out, node, i)
            if kind == VIEW:
                creation = _propagate_creation_meta(
                    values[0], MULTI_OUTPUT_NODE if info.returns_list else DEFAULT)
                if creation != DEFAULT:
                    out._autograd_meta.creation_meta = creation
    for name in info.saved_results:
        value = result if name == "result" else outputs[int(name[6:])]
        setattr(node, "_raw_saved_" + name,
                [SavedVariable(v, is_output=True) for v in value] if info.returns_list and
                name == "result" else SavedVariable(value, is_output=True))
    return result


def _record_simple(info, kind, op, ks, args, kwargs):
    """``_record`` for the common case, spelled out: a functional op with one
    tensor output and plain Tensor inputs, called with positional arguments."""
    if kwargs:
        return _record(info, kind, op, ks, args, kwargs)
    n = len(args)
    values = args + info.defaults[n:] if n < info.n_args else args   # (x + y: alpha=1)
    node = _new(info.node_cls)
    node._seq = next(_sequence)
    node._slot_map = info.static_slots
    edges = node._next_edges = tuple([_edge_of(values[i]) for i in info.diff_indices])
    if anomaly_mode.state.enabled:
        anomaly_mode.record_forward(node)
    _save_inputs(node, info, values, edges, kind)
    result = _call_below(op, ks, args, kwargs)
    node._input_metadata = ((result._shape, result.dtype, result.device),)
    if result.dtype.category >= dt.FLOATING:
        set_history(result, node, 0)
    if info.saved_results:
        node._raw_saved_result = SavedVariable(result, is_output=True)
    return result


def _save_inputs(node, info, values, edges, kind, plan=None) -> None:
    """Keep what the formulas name: tensors as SavedVariables (an in-place op's
    old ``self`` as a copy), Python numbers for Tensor arguments wrapped,
    metadata instead of tensors where that is all a formula needs.  ``plan``:
    only those arguments (the written ones, after the call)."""
    for attr, i, tensor_arg, list_arg, guard in (info.saved_arg_plan if plan is None else plan):
        value = values[i]
        if guard is not None and edges[guard] is None:
            value = SavedVariable(None)     # only an input not requiring grad needs it
        elif tensor_arg:
            if list_arg:
                value = None if value is None else [SavedVariable(v) for v in value]
            elif isinstance(value, Tensor):
                value = SavedVariable(_original_self(value) if kind == INPLACE and i == 0
                                      else value)
            elif value is not None:   # formulas always see tensors
                value = SavedVariable(_wrapped_number(value), wrapped_number=True)
        setattr(node, attr, value)
    if plan is not None:
        return
    for attr, i, fn, list_arg in info.saved_metadata_plan:
        value = values[i]
        if list_arg:
            value = [fn(v) for v in value]
        elif value is not None:
            value = fn(value if isinstance(value, Tensor) else _wrapped_number(value))
        setattr(node, attr, value)


def _call_below(op, ks, args, kwargs):
    """Run the op below autograd: a structured kernel directly (memoized per
    key set), unless a trace or observer must see the call (and the ops its
    kernel then dispatches inside: kernels/_inner.py), or anything else, under
    the AutoDispatchBelowADInplaceOrView guard."""
    below = ks & BELOW_AUTOGRAD
    if not op._calls_no_ops:
        return redispatch_below_autograd(op, below, args, kwargs)
    fn = op._entry.unboxed_below.get(below)
    if fn and not kwargs and not (_dispatch_traces or _dispatch_observers):
        return fn(*args)
    return redispatch_below_autograd(op, below, args, kwargs)


def _edge_of(t):
    """gradient_edge(t) if t requires grad, else None; the common cases inline."""
    meta = getattr(t, "_autograd_meta", None)   # (None, or a Python number: no attribute)
    if meta is None and getattr(t, "_base", None) is None:
        return None
    if t._base is None:
        if meta is None:
            return None
        fn = meta.grad_fn
        if fn is not None:
            return (fn, meta.output_nr)
        if not meta.requires_grad:
            return None
        ref = meta.grad_accumulator       # a leaf: its (weakly cached) AccumulateGrad
        node = ref() if ref is not None else None
        if node is None:
            node = AccumulateGrad(t)
            meta.grad_accumulator = _weakref(node)
        return (node, 0)
    return gradient_edge(t) if requires_grad(t) else None


def _is_number(value) -> bool:
    return isinstance(value, (bool, int, float, complex))


_WRAPPED: dict = {}


def _wrapped_number(value):
    """A Python number given for a Tensor argument, as the 0-dim tensor PyTorch
    wraps it in (double for floats, long for ints).  Cached per value: loops
    keep multiplying by the same constants."""
    key = (type(value), value)
    out = _WRAPPED.get(key)
    if out is None:
        from .._ops.structured import checked_convert, empty_tensor
        from .._core.device import device
        dtype = dt.bool_ if isinstance(value, bool) else dt.int64 if isinstance(value, int) \
            else dt.float64 if isinstance(value, float) else dt.complex128
        out = empty_tensor((), dtype, device("cpu"))
        out._np()[()] = checked_convert(value, dtype)
        if len(_WRAPPED) < 1024:
            _WRAPPED[key] = out
            wrapped_numbers[id(out)] = value
    return out


def _original_self(t):
    """An in-place op's formula that needs the old ``self`` gets a copy taken
    before the op (PyTorch's ``original_self``).  The copy is recorded
    (CloneBackward0), so double backward reaches the old self's history."""
    return t.clone()


def _rebase_history(t, node) -> None:
    """In-place on ``t``: ``t`` gets ``node`` as history; if ``t`` is a view,
    its base gets a CopySlices wrapping ``node`` instead.  A retain_grad hook
    follows the tensor to its new node."""
    base = t._base
    if base is not None and base.dtype.category >= dt.FLOATING:
        from .view_nodes import CopySlices
        t, node = base, CopySlices(base, t, node)
    meta = t._autograd_meta
    old_fn, old_nr = (meta.grad_fn, meta.output_nr) if meta is not None else (None, 0)
    set_history(t, node, 0)
    move_retains_grad_hook(t, old_fn, old_nr)


def _propagate_creation_meta(source, creation):
    """A view of a view keeps the more restrictive CreationMeta of the two (a
    slice of an unbind output may not be modified in place either)."""
    meta = source._autograd_meta if source._base is not None else None
    previous = meta.creation_meta if meta is not None else DEFAULT
    return previous if creation == DEFAULT or previous == INFERENCE_MODE else creation


def _mark_view_created_without_grad(result, creation) -> None:
    outputs = result if isinstance(result, (list, tuple)) else (result,)
    for out in outputs:
        if out._base is not None and out.dtype.category >= dt.FLOATING:
            meta = out._meta_for_write()
            meta.creation_meta = creation
            meta.attr_version = version_counter(out)[0]


# -- forward-mode AD (the forward-grad half of gen_variable_type.py's kernels) -------

_FW_NOT_IMPLEMENTED = (
    "Trying to use forward AD with {} that does not support it because it has not been "
    "implemented yet.\nPlease file an issue to PyTorch at "
    "https://github.com/pytorch/pytorch/issues/new?template=feature-request.yml so that we can "
    "prioritize its implementation")
_FW_MISSING = " or submit a PR adding the implementation to derivatives.yaml"


def _dual(info, kind, op, plain, ks, args, kwargs):
    """The autograd kernel while a dual level is active: ``plain`` (the kernel
    proper: history for backward, then the op), and when an input has a
    tangent at the level, the outputs' tangents from the op's forward formula.
    The formula runs with forward AD off: its primals are the inputs
    themselves, and its own ops compute no tangents (PyTorch reads the
    primals through ``_fw_primal``; with one level the two agree)."""
    if not fw_grad_mode.enabled:
        return plain(ks, *args, **kwargs)
    level = len(fw_levels) - 1
    values = _arg_values(info, args, kwargs)
    tangents = _input_tangents(info, values, level)
    if tangents is None:
        result = plain(ks, *args, **kwargs)
        if kind == VIEW:
            _propagate_no_fw_view(values[0], result)
        return result
    forward = info.forward
    if not forward and info.node_name == "NotImplemented":
        # an op PyTorch has no derivatives.yaml entry for: its autograd
        # fallback's message (autograd_not_implemented_fallback.cpp)
        raise NotImplementedError(f"Trying to use forward AD with {op._schema.name} that does "
                                  "not support it.")
    if not forward or forward[0][1] == "not_implemented":
        name = op._schema.name.split("::")[1]
        raise NotImplementedError(_FW_NOT_IMPLEMENTED.format(name) +
                                  ("." if forward else _FW_MISSING))
    if forward[0][1] == "jvp_decomposition":
        return _jvp_decomposition(info, args, kwargs)
    fw_grad_mode.enabled = False
    try:
        original = values[0].clone() if kind == INPLACE and info.forward_uses_self else None
        fw_grad_mode.enabled = True
        result = plain(ks, *args, **kwargs)
        fw_grad_mode.enabled = False
        outputs = result if info.returns_tuple else (result,)
        env = _forward_env(info, values, tangents, original, result, outputs)
        for position, code in forward:
            if code == "auto_element_wise":
                # PyTorch's rule: the backward formula at grad = conj(tangent),
                # conjugated (the identity for real tensors)
                env["grad"] = env[info.formulas[0].slots[0] + "_t"].conj()
                env["grad_input_mask"] = [True]
                value = eval(info.formulas[0].code, FORMULA_GLOBALS, env).conj()
            elif code == "auto_linear":
                value = _auto_linear(info, op if kind == INPLACE_VIEW else info.functional_op,
                                     args, kwargs, env)
            else:
                value = eval(code, FORMULA_GLOBALS, env)
            _set_output_tangent(info, kind, position, outputs[position], value, tangents, level)
    finally:
        fw_grad_mode.enabled = True
    return result


def _jvp_decomposition(info, args, kwargs):
    """Run the op's decomposition instead of its kernel: its ops compute the
    tangents (and record for backward), as PyTorch's jvp decompositions do."""
    from .._decomp import decomposition_table
    from .formulas.forward import JVP_DECOMPOSITIONS
    decomposition = JVP_DECOMPOSITIONS.get(info.op_name) or \
        decomposition_table[info.functional_op]
    return decomposition(*args, **kwargs)


def _input_tangents(info, values, level):
    """Argument position -> tangent (a list for a Tensor[]) of the
    differentiable inputs that have one; None when none has."""
    found = None
    for i in info.diff_indices:
        value = values[i]
        if info.is_list_arg[i]:
            if value is None:
                continue
            tangent = [fw_grad(v, level) if isinstance(v, Tensor) else None for v in value]
            if all(t is None for t in tangent):
                continue
        elif isinstance(value, Tensor):
            tangent = fw_grad(value, level)
            if tangent is None:
                continue
        else:
            continue
        if found is None:
            found = {}
        found[i] = tangent
    return found


def _zero_tangent(value):
    from .. import zeros_like
    return zeros_like(value) if isinstance(value, Tensor) else None


def _forward_env(info, values, tangents, original, result, outputs) -> dict:
    """The names a forward formula reads: ``<arg>`` and ``<arg>_p`` (the
    primal: an in-place op's ``self`` as it was before), ``<arg>_t`` (zeros
    where an input has no tangent), metadata as the backward formulas name
    it, ``result`` and ``result<i>`` and the named returns."""
    env = {}
    for i, name in enumerate(info.arg_names):
        value = original if i == 0 and original is not None else values[i]
        if info.is_tensor_arg[i] and not info.is_list_arg[i] and value is not None \
                and not isinstance(value, Tensor):
            value = _wrapped_number(value)
        env[name] = env[name + "_p"] = value
        tangent = tangents.get(i)
        if info.is_list_arg[i]:
            if value is not None:
                tangent = [_zero_tangent(v) if t is None else t
                           for v, t in zip(value, tangent or [None] * len(value))]
        elif tangent is None:
            tangent = _zero_tangent(value)
        env[name + "_t"] = tangent
    for name, i, fn in info.forward_metadata:
        value = env[info.arg_names[i]]
        env[name] = [fn(v) for v in value] if info.is_list_arg[i] else \
            (fn(value) if value is not None else None)
    env["result"] = result
    for i, out in enumerate(outputs):
        env[f"result{i}"] = out
        if info.return_names[i]:
            env[info.return_names[i]] = out
    return env


def _auto_linear(info, fn, args, kwargs, env):
    """PyTorch's ``auto_linear``: the op is linear in its differentiable
    inputs, so the output's tangent is the op applied to their tangents (for a
    view op, a view of the input's tangent; for an in-place view op, the input's
    tangent changed in place)."""
    args = list(args)
    kwargs = dict(kwargs)
    for i in info.diff_indices:
        name = info.arg_names[i]
        if i < len(args):
            args[i] = env[name + "_t"]
        elif name in kwargs:
            kwargs[name] = env[name + "_t"]
    return fn(*args, **kwargs)


def _set_output_tangent(info, kind, position, out, value, tangents, level) -> None:
    """Give output ``position`` its tangent.  An in-place op updates ``self``'s
    tangent in place when it had one (so views of it see the change), else
    sets it (a view's lands in its base's, as PyTorch's set_fw_grad does)."""
    if value is None or out is None:
        return
    differentiable = info.output_differentiability
    if differentiable is not None and not differentiable[position]:
        return
    if info.returns_list:
        for o, v in zip(out, value):
            if v is not None and o.dtype.category >= dt.FLOATING:
                set_fw_grad(o, v, level, False)
        return
    if out.dtype.category < dt.FLOATING:
        return
    if kind == INPLACE or kind == INPLACE_VIEW:
        old = tangents.get(0)
        if old is None:
            set_fw_grad(out, value, level, True)
        elif value is not old:
            old.copy_(value)
        return
    set_fw_grad(out, value, level, False)
    _share_with_saved_result(info, out, position)


def _share_with_saved_result(info, out, position) -> None:
    """A node keeps its saved outputs as aliases; they get the output's
    tangent too, so a backward pass run under a dual level (forward-over-
    reverse) sees it (PyTorch's SavedVariable saves the forward grad)."""
    if not info.saved_results:
        return
    meta = out._autograd_meta
    node = meta.grad_fn
    if type(node) is not info.node_cls:
        return
    name = "result" if f"result{position}" not in info.saved_results else f"result{position}"
    saved = getattr(node, "_raw_saved_" + name, None)
    if type(saved) is SavedVariable and saved.data is not None and saved.data is not out:
        saved.data._meta_for_write().fw_grad = meta.fw_grad


def _propagate_no_fw_view(source, result) -> None:
    """A view of a primal from ``unpack_dual`` is no forward view of its base
    either: it must not read the base's tangent (PyTorch's forward view info
    stops at ``_fw_primal``)."""
    meta = getattr(source, "_autograd_meta", None)
    if meta is None or not meta.__dict__.get("no_fw_view"):
        return
    for out in (result if isinstance(result, (list, tuple)) else (result,)):
        out._meta_for_write().no_fw_view = True


# -- kernel generation -------------------------------------------------------------

def _make_kernel(info, kind, op):
    """Generate the autograd kernel: a cheap "does anything need grad?" test on
    the differentiable inputs, then record or just redispatch.  Arguments are
    passed on exactly as received (kernels below keep their own defaults)."""
    lines = ["    if _tls.grad_enabled:",
             "        n = len(args)"]
    leaf = op._calls_no_ops
    for i in info.diff_indices + info.checked_indices:
        name = info.arg_names[i]
        get = f"args[{i}] if n > {i} else kwargs.get({name!r})"
        lines.append(f"        a = {get}")
        if info.is_list_arg[i]:
            lines.append("        if a is not None and any(t is not None and _rg(t) for t in a):")
        else:
            lines.append("        if a is not None and _rg(a):")
        lines.append("            return _record(_INFO, _KIND, _OP, ks, args, kwargs)")
    if kind == VIEW:
        lines += ["    result = _redispatch(_OP, ks & _BELOW, args, kwargs)",
                  "    if not _tls.grad_enabled:",
                  "        _mark(result, _NO_GRAD)",
                  "    elif _MULTI:",
                  "        _mark(result, _MULTI_OUTPUT)",
                  "    return result"]
    elif leaf:
        # a structured kernel below calls no op unless observed (its inner
        # ops: kernels/_inner.py): nothing to guard.  The kernel below is
        # memoized per key set (redispatch's key computation, skipped unless
        # a trace or observer must see the call, then under the guard)
        lines += ["    below = ks & _BELOW",
                  "    fn = _UNBOXED.get(below)",
                  "    if fn is None:",
                  "        fn = _UNBOXED[below] = _ENTRY.unboxed_kernel_for(below) or False",
                  "    if fn and not (_traces or _observers):",
                  "        return fn(*args, **kwargs)",
                  "    return _redispatch(_OP, below, args, kwargs)"]
    else:
        lines.append("    return _redispatch(_OP, ks & _BELOW, args, kwargs)")
    simple = (kind == FUNCTIONAL and info.static_slots is not None and not info.checked_indices
              and not info.returns_tuple and not info.returns_list
              and info.output_differentiability is None
              and info.saved_results in ([], ["result"]) and not info.saved_after_plan)
    namespace = {"_UNBOXED": op._entry.unboxed_below,
                 "_ENTRY": op._entry, "_traces": _dispatch_traces, "_observers": _dispatch_observers,
                 "_tls": _tls, "_rg": requires_grad,
                 "_record": _record_simple if simple else _record, "_INFO": info,
                 "_KIND": kind, "_OP": op, "_redispatch": redispatch_below_autograd,
                 "_BELOW": BELOW_AUTOGRAD,
                 "_mark": _mark_view_created_without_grad,
                 "_NO_GRAD": NO_GRAD_MODE, "_MULTI_OUTPUT": MULTI_OUTPUT_NODE,
                 "_MULTI": info.returns_list, "_FW_LEVELS": fw_levels, "_dual": _dual}
    # the kernel proper, and the kernel registered: the same body after one
    # test of the dual levels (a list that stays empty unless forward AD is on)
    body = "\n".join(lines)
    source = ("def plain(ks, *args, **kwargs):\n" + body + "\n\n"
              "def kernel(ks, *args, **kwargs):\n"
              "    if _FW_LEVELS:\n"
              "        return _dual(_INFO, _KIND, _OP, plain, ks, args, kwargs)\n" + body)
    exec(startup_cache.compile_cached(source, "<string>"), namespace)
    kernel = namespace["kernel"]
    kernel.__name__ = f"autograd_{op._name.replace('.', '_').replace('::', '_')}"
    kernel.__qualname__ = kernel.__name__
    kernel.__module__ = __name__
    return kernel


def _make_out_kernel(op, base_name):
    message = (f"{base_name}(): functions with out=... arguments don't support automatic "
               "differentiation, but one of the arguments requires grad.")

    def out_kernel(op_, ks, args, kwargs):
        if _tls.grad_enabled:
            for value in list(args) + list(kwargs.values()):
                if isinstance(value, Tensor) and requires_grad(value):
                    raise RuntimeError(message)
                if isinstance(value, (list, tuple)) and any(
                        isinstance(v, Tensor) and requires_grad(v) for v in value):
                    raise RuntimeError(message)
        return redispatch_below_autograd(op_, ks & BELOW_AUTOGRAD, args, kwargs)
    return out_kernel


def _make_inplace_or_view_kernel(op):
    """ADInplaceOrView for an op that writes: check, run below, bump versions."""
    written = [(i, a.name) for i, a in enumerate(op._schema.arguments) if a.is_write]

    def inplace_or_view(op_, ks, args, kwargs):
        targets = []
        for i, name in written:
            t = args[i] if i < len(args) else kwargs.get(name)
            if t is None:
                continue
            for x in (t if isinstance(t, (list, tuple)) else (t,)):
                if not _tls.inference_mode and is_inference(x):
                    raise RuntimeError(
                        "Inplace update to inference tensor outside InferenceMode is not allowed."
                        "You can make a clone to get a normal tensor before doing inplace update."
                        "See https://github.com/pytorch/rfcs/pull/17 for more details.")
                targets.append(x)
        result = redispatch_below_autograd(op_, ks & BELOW_ADINPLACEORVIEW, args, kwargs)
        for x in targets:
            if not is_inference(x):
                version_counter(x)[0] += 1
        return result
    return inplace_or_view


# VariableTypeManual's autograd kernels that are profiler ranges of their own
# (RECORD_FUNCTION), opened here one key lower: a call from inside another
# kernel, below both keys, shows none, as in PyTorch
_MANUAL_RANGES = {"aten::detach": "detach"}


def _make_view_inplace_or_view_kernel(op):
    """ADInplaceOrView for a view op.  In inference mode only normal tensors
    carry this key, so this kernel sees the views made there of normal tensors
    and tags them INFERENCE_MODE: modifying one in place outside is refused."""
    def view_inplace_or_view(ks, *args, **kwargs):
        result = redispatch_below_autograd(op, ks & BELOW_ADINPLACEORVIEW, args, kwargs)
        if _tls.inference_mode:
            _mark_view_created_without_grad(result, INFERENCE_MODE)
        return result
    range_name = _MANUAL_RANGES.get(op._entry.name)
    if range_name is None:
        return view_inplace_or_view

    def ranged(ks, *args, **kwargs):
        with function_range(range_name, args):
            return view_inplace_or_view(ks, *args, **kwargs)
    return ranged


def _is_view_op(schema) -> bool:
    return any(r.alias_info is not None and not r.alias_info.is_write for r in schema.returns)


def _kind_of(schema, op):
    """A view op's outputs are views; an in-place op with an entry of its own
    (copy_, fill_, normal_ ...) rebases self's history, except an in-place view
    op (squeeze_ ...), whose self takes the node as its own history."""
    if _is_view_op(schema):
        return VIEW
    if schema.arguments and schema.arguments[0].is_write:
        return INPLACE_VIEW if Tag.inplace_view in op.tags else INPLACE
    return FUNCTIONAL


def _non_differentiable_view_kernel(op_, ks, args, kwargs):
    """A view op with no differentiable output (view.dtype): the result shares
    storage and version counter, but autograd does not see it as a view of its
    input (PyTorch's make_variable_non_differentiable_view)."""
    result = redispatch_below_autograd(op_, ks & BELOW_AUTOGRAD, args, kwargs)
    result._base = None
    return result


def _variants_of(entry):
    """The in-place and out= overloads derived from a functional overload."""
    from .._ops.registry import DECLARATIONS, _autogen_list, _derive
    decl = DECLARATIONS.get(entry.name)
    found = []
    if decl is None:
        return found
    for spec in _autogen_list(decl):
        kind, text = _derive(entry.schema, spec)
        found.append((kind, dispatcher.find("aten::" + text[:text.index("(")])))   # its name
    return found


# Autograd kernels written by hand (VariableTypeManual.cpp): the whole op at the
# Autograd key, nothing redispatched, so no ADInplaceOrView kernel either
_MANUAL = {"aten::detach_": _detach_}


def register_autograd_kernels() -> None:
    """Install autograd kernels from derivatives.yaml and ADInplaceOrView
    kernels for every op that writes to an argument."""
    from .._dispatcher.dispatcher import deferred_updates
    with deferred_updates():
        _register_autograd_kernels()


def _register_autograd_kernels() -> None:
    derivatives = derivatives_yaml.load()
    for name, fn in _MANUAL.items():
        dispatcher.find(name).register(DispatchKey.Autograd, KernelFunction(
            fn, UNBOXED, "registered at glasstorch/autograd/variable_type.py (manual)"))
    debug = "registered at glasstorch/autograd/variable_type.py (generated from derivatives.yaml)"
    for op_name, derivative in derivatives.items():
        entry = dispatcher.find(op_name)
        formula_debug = (f"registered at derivatives.yaml:{derivative.line} (kernel generated by "
                         "glasstorch/autograd/variable_type.py)")
        info = DerivativeInfo(derivative, entry)
        op = _op_of(entry)
        info.functional_op = op
        _mark_structured(op, entry)
        kind = _kind_of(entry.schema, op)
        if kind == VIEW and info.formulas == []:
            entry.register(DispatchKey.Autograd,
                           KernelFunction(_non_differentiable_view_kernel, BOXED, formula_debug))
        else:
            entry.register(DispatchKey.Autograd,
                           KernelFunction(_make_kernel(info, kind, op), KEYSET, formula_debug))
        base = entry.schema.name.split("::")[1]
        for variant_kind, variant in _variants_of(entry):
            if variant is None:
                continue
            variant_op = _op_of(variant)
            variant_op._calls_no_ops = op._calls_no_ops
            if variant_kind == "inplace":
                if variant.has_kernel(DispatchKey.Autograd) or variant.name in derivatives:
                    continue    # it has an entry of its own (leaky_relu_, copy_ ...)
                kernel = _make_kernel(info, INPLACE, variant_op)
                variant.register(DispatchKey.Autograd, KernelFunction(kernel, KEYSET, formula_debug))
            else:
                variant.register(DispatchKey.Autograd,
                                 KernelFunction(_make_out_kernel(variant_op, base), BOXED, debug))
    for name, entry in dispatcher.operators.items():
        if not name.startswith("aten::"):
            continue
        if any(a.is_out for a in entry.schema.arguments) and not (
                entry.has_kernel(DispatchKey.Autograd) or
                entry.has_kernel(DispatchKey.CompositeImplicitAutograd)):
            entry.register(DispatchKey.Autograd, KernelFunction(
                _make_out_kernel(_op_of(entry), entry.schema.name.split("::")[1]), BOXED, debug))
        if name in _MANUAL:
            continue
        if any(a.is_write for a in entry.schema.arguments):
            entry.register(DispatchKey.ADInplaceOrView,
                           KernelFunction(_make_inplace_or_view_kernel(_op_of(entry)), BOXED,
                                          "registered at glasstorch/autograd/variable_type.py"))
        elif _is_view_op(entry.schema):
            entry.register(DispatchKey.ADInplaceOrView,
                           KernelFunction(_make_view_inplace_or_view_kernel(_op_of(entry)),
                                          KEYSET,
                                          "registered at glasstorch/autograd/variable_type.py"))


def _mark_structured(op, entry) -> None:
    """``op._calls_no_ops``: its CPU/Meta kernels are structured (meta rule +
    numpy body), so nothing below autograd dispatches again and the autograd
    kernel can skip the AutoDispatchBelowADInplaceOrView guard (not so for a
    structured op with a CPU kernel of its own, as mse_loss_backward)."""
    from .._ops.registry import DECLARATIONS
    decl = DECLARATIONS.get(entry.name) or {}
    op._calls_no_ops = bool(decl.get("structured")) and not decl.get("dispatch")


def _op_of(entry):
    base = entry.schema.name.split("::")[1]
    return getattr(getattr(ops.aten, base), entry.schema.overload_name or "default")

"""Custom autograd Functions (torch/autograd/function.py over the C++ halves
python_function.cpp: THPFunction_apply / PyNode, and custom_function.cpp:
_wrap_outputs).

    class Exp(Function):
        @staticmethod
        def forward(ctx, x):            # or forward(x) + setup_context(ctx, inputs, output)
            y = x.exp(); ctx.save_for_backward(y); return y
        @staticmethod
        def backward(ctx, g):
            (y,) = ctx.saved_tensors; return g * y

    y = Exp.apply(x)

``apply`` does what THPFunction_apply does:

1. ``ctx`` is a fresh ``ExpBackward`` node (the class ``FunctionMeta`` made for
   ``Exp``): ``y.grad_fn`` *is* the ctx, so attributes set in forward are read
   back from it.  Its next edges go to the tensor arguments (one edge per
   tensor, None where it does not require grad); the node is "executable" only
   when grad mode is on and some tensor argument requires grad.
2. forward (and setup_context) run with grad mode off.
3. the outputs are wrapped (``_wrap_output``): differentiable ones get the node
   as history; an input returned as-is becomes a view of itself; tensors given
   to ``mark_dirty`` were modified in place, so their history is rebased onto
   the node (CopySlices for views); ``mark_non_differentiable`` outputs and
   integer outputs get no history.
4. tensors given to ``save_for_backward`` become ``SavedVariable``s (version
   checked, saved-tensor hooks applied); an output is saved without its
   grad_fn and gets the node back on unpack.

In backward the engine calls ``ExpBackward.apply(grads)``: undefined output
grads become zeros (unless ``set_materialize_grads(False)``), the user's
``backward`` runs, and its result is checked (one gradient per forward
argument; None for non-tensor arguments) before the engine's own checks.
"""
from __future__ import annotations

import functools
import inspect
import warnings

from .._core.tls import state as _tls
from .._tensor import Tensor
from . import anomaly_mode
from .graph import (ERR_BACKWARD_TWICE, Node, SavedVariable, increment_version,
                    is_differentiable_dtype)
from .variable import (IN_CUSTOM_FUNCTION, MULTI_OUTPUT_NODE, _is_differentiable_view,
                       check_inplace, fw_grad, fw_grad_mode, fw_levels, gradient_edge,
                       requires_grad, set_fw_grad, set_history)
from .variable_type import _rebase_history

__all__ = ["FunctionCtx", "BackwardCFunction", "FunctionMeta", "Function", "once_differentiable",
           "InplaceFunction"]


class FunctionCtx:
    """What ``forward``/``setup_context`` may record on ``ctx``.  The calls only
    store their arguments; ``apply`` acts on them once forward returned."""

    def save_for_backward(self, *tensors):
        """Keep tensors (or None) for ``backward``, read back via ``ctx.saved_tensors``."""
        self.to_save = tensors

    def save_for_forward(self, *tensors):
        for tensor in tensors:
            if not (isinstance(tensor, Tensor) or tensor is None):
                raise AssertionError("save_for_forward expects all arguments to be tensors; you "
                                     "should save non-tensors as attributes on ctx.")
        self.saved_for_forward = tensors

    def mark_dirty(self, *args):
        """These inputs were modified in place by forward (and must be returned)."""
        self.dirty_tensors = args

    def mark_non_differentiable(self, *args):
        """These outputs get no gradient (backward still receives zeros for them)."""
        self.non_differentiable = args

    def set_materialize_grads(self, value):
        """False: backward receives None instead of zeros for undefined grads."""
        self.materialize_grads = value


class BackwardCFunction(Node, FunctionCtx):
    """Base of the ``<Name>Backward`` node classes: the ctx of one ``apply`` call
    and, when executable, the node in the graph (PyTorch's PyNode)."""

    __repr__ = object.__repr__

    _forward_cls = None
    materialize_grads = True
    to_save = dirty_tensors = non_differentiable = saved_for_forward = None

    def __init__(self):
        super().__init__()
        self._saved = None          # list of SavedVariable once forward returned
        self._freed = False
        self._cleared = False       # clear_saved_tensors_on_access: already read
        self._is_tensor_input = ()
        self._output_info = ()      # (shape, dtype, device) per tensor output, None otherwise

    @property
    def saved_tensors(self):
        if self.saved_for_forward is not None:     # inside jvp
            return tuple(self.saved_for_forward)
        if self._freed:
            raise RuntimeError(ERR_BACKWARD_TWICE)
        if self._cleared:
            raise RuntimeError(
                "saved_tensors can only be accessed once when clear_saved_tensors_on_access=True "
                "is set on the autograd.Function. Either access saved_tensors only once, or set "
                "clear_saved_tensors_on_access=False.")
        if self._saved is None:
            return ()
        result = tuple(sv.unpack(self) for sv in self._saved)
        if self._forward_cls.clear_saved_tensors_on_access:
            self._saved = None
            self._cleared = True
        return result

    def _user_backward(self):
        cls = self._forward_cls
        if cls.backward is not Function.backward and cls.vjp is not Function.vjp:
            raise RuntimeError("Implementing both 'backward' and 'vjp' for a custom Function is "
                               "not allowed. You should only implement one of them.")
        return cls.vjp if cls.vjp is not Function.vjp else cls.backward

    def apply(self, grads):
        """Engine entry: one grad per forward output -> one grad per tensor input."""
        user_fn = self._user_backward()
        if self.materialize_grads:
            grads = [_zeros(info) if g is None and info is not None else g
                     for g, info in zip(grads, self._output_info)]
        if self._forward_cls.boxed_grads_call:
            result = user_fn(self, list(grads))
        else:
            result = user_fn(self, *grads)
        return self._check_result(result)

    def _check_result(self, result):
        """PyNode::apply's checks: count, types, None for non-tensor inputs."""
        if not isinstance(result, tuple):
            result = (result,)
        expected = len(self._is_tensor_input)
        if len(result) > expected and all(g is None for g in result[expected:]):
            result = result[:expected]
        if len(result) != expected:
            raise RuntimeError(f"function {self.name()} returned an incorrect number of gradients "
                               f"(expected {expected}, got {len(result)})")
        grads = []
        for i, (grad, is_tensor) in enumerate(zip(result, self._is_tensor_input)):
            if is_tensor:
                if grad is not None and not isinstance(grad, Tensor):
                    raise RuntimeError(f"expected Variable or None (got {type(grad).__name__})")
                grads.append(grad)
            elif grad is not None:
                raise RuntimeError(f"function {self.name()} returned a gradient different than "
                                   f"None at position {i + 1}, but the corresponding forward "
                                   f"input was not a Variable")
        return grads

    def release_variables(self):
        if self._saved is not None:
            for sv in self._saved:
                sv.release()
        self._freed = True


def _zeros(info):
    from .. import zeros
    shape, dtype, device = info
    return zeros(shape, dtype=dtype, device=device)


class FunctionMeta(type):
    """Gives every Function subclass its own node class ``<Name>Backward``."""

    def __init__(cls, name, bases, attrs):
        cls._backward_cls = type(name + "Backward", (BackwardCFunction,), {"_forward_cls": cls})
        super().__init__(name, bases, attrs)


class Function(FunctionCtx, metaclass=FunctionMeta):
    """Base class of custom autograd Functions: override the static ``forward``
    and ``backward`` (or ``vjp``), call ``apply``."""

    clear_saved_tensors_on_access = False   # saved_tensors may be read only once
    boxed_grads_call = False                # backward(ctx, grads_list) instead of *grads

    def __init__(self, *args, **kwargs):
        warnings.warn(
            f"{self.__class__} should not be instantiated. Methods on autograd functions are all "
            "static, so you should invoke them on the class itself. Instantiating an autograd "
            "function will raise an error in a future version of PyTorch.",
            DeprecationWarning, stacklevel=2)

    def __call__(self, *args, **kwargs):
        raise RuntimeError(
            "Legacy autograd function with non-static forward method is deprecated. Please use "
            "new-style autograd function with static forward method. (Example: "
            "https://pytorch.org/docs/stable/autograd.html#torch.autograd.Function)")

    @staticmethod
    def forward(*args, **kwargs):
        raise NotImplementedError("You must implement the forward function for custom "
                                  "autograd.Function.")

    @staticmethod
    def setup_context(ctx, inputs, output):
        raise NotImplementedError("setup_context is not implemented.")

    @staticmethod
    def backward(ctx, *grad_outputs):
        raise NotImplementedError("You must implement either the backward or vjp method for your "
                                  "custom autograd.Function to use it with backward mode AD.")

    vjp = backward

    @staticmethod
    def jvp(ctx, *grad_inputs):
        raise NotImplementedError("You must implement the jvp function for custom "
                                  "autograd.Function to use it with forward mode AD.")

    @classmethod
    def apply(cls, *args, **kwargs):
        """Run forward and record the node.  Keyword arguments naming forward's
        positional parameters are moved into ``args`` (so tensors passed by
        keyword are tracked); with ``setup_context``, defaults are filled in too."""
        overrides_setup = cls.setup_context is not Function.setup_context
        if overrides_setup:
            bound = inspect.signature(cls.forward).bind(*args, **kwargs)
            bound.apply_defaults()
            args, kwargs = bound.args, bound.kwargs
        if kwargs:
            args = _kwargs_to_positional(cls.forward, args, kwargs, 0 if overrides_setup else 1)
        return _apply(cls, args, overrides_setup)


def _kwargs_to_positional(forward, args, kwargs, skip):
    """THPFunction_apply's keyword handling: no defaults are filled, and only
    positional parameters (after ctx) may be named."""
    kinds = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    names = [p.name for p in inspect.signature(forward).parameters.values()
             if p.kind in kinds][skip:]
    for name in kwargs:
        if name not in names:
            raise TypeError(f"forward() got an unexpected keyword argument '{name}'")
        if names.index(name) < len(args):
            raise TypeError(f"forward() got multiple values for argument '{name}'")
    last = max(names.index(name) for name in kwargs)
    filled = list(args)
    for position in range(len(args), last + 1):
        if names[position] not in kwargs:
            raise TypeError(f"forward() missing required argument: '{names[position]}' "
                            f"(position {position})")
        filled.append(kwargs[names[position]])
    return tuple(filled)


def _apply(cls, args, overrides_setup):
    """THPFunction_apply: make the ctx node, run forward without grad, wrap."""
    is_tensor = tuple(isinstance(a, Tensor) for a in args)
    tensor_inputs = [a for a, t in zip(args, is_tensor) if t]
    ctx = cls._backward_cls()
    ctx.needs_input_grad = tuple(t and requires_grad(a) for a, t in zip(args, is_tensor))
    ctx._is_tensor_input = is_tensor
    executable = _tls.grad_enabled and any(ctx.needs_input_grad)
    if executable:
        ctx._next_edges = tuple(gradient_edge(t) if requires_grad(t) else None
                                for t in tensor_inputs)
        if anomaly_mode.state.enabled:
            anomaly_mode.record_forward(ctx)
    # forward runs with grad mode and forward AD off; the inputs' tangents,
    # if any, go to jvp afterwards
    fw_enabled = fw_grad_mode.enabled
    tangents = None
    if fw_levels and fw_enabled:
        level = len(fw_levels) - 1
        tangents = [fw_grad(a, level) if t else None for a, t in zip(args, is_tensor)]
        if all(t is None for t in tangents):
            tangents = None
    prev = _tls.grad_enabled
    _tls.grad_enabled = False
    fw_grad_mode.enabled = False
    try:
        try:
            if overrides_setup:
                output = cls.forward(*args)
                cls.setup_context(ctx, args, output)
            else:
                output = cls.forward(ctx, *args)
        finally:
            _tls.grad_enabled = prev
        return _process_outputs(ctx, tensor_inputs, output, executable, overrides_setup,
                                tangents)
    finally:
        fw_grad_mode.enabled = fw_enabled


def _tensor_ids(values, what) -> set:
    """ids of the tensors given to mark_dirty / mark_non_differentiable."""
    for value in values or ():
        if not isinstance(value, Tensor):
            raise RuntimeError(what)
    return {id(v) for v in values or ()}


def _process_outputs(ctx, tensor_inputs, output, executable, overrides_setup, tangents):
    """Act on what forward recorded on ctx: bump dirty versions, wrap every
    output, check the dirty ones came back, save tensors, give the outputs
    the tangents jvp computes (custom_function.cpp)."""
    is_tuple = isinstance(output, tuple)
    raw = output if is_tuple else (output,)
    non_diff = _tensor_ids(ctx.non_differentiable,
                           "mark_non_differentiable only accepts variable arguments, but got ")
    dirty = _tensor_ids(ctx.dirty_tensors, "mark_dirty can only accept variables, but argument ")
    for t in ctx.dirty_tensors or ():
        increment_version(t)
    ctx.dirty_tensors = ctx.non_differentiable = None
    node = ctx if executable else None
    inputs = {id(t) for t in tensor_inputs}
    saved_ids = {id(t) for t in ctx.to_save or () if isinstance(t, Tensor)} \
        if overrides_setup else set()
    metadata, info, outputs = [], [], []
    for i, var in enumerate(raw):
        if not isinstance(var, Tensor):
            metadata.append(None)
            info.append(None)
            outputs.append(var)
            continue
        key = id(var)
        is_input, is_modified = key in inputs, key in dirty
        differentiable = node is not None and key not in non_diff and \
            is_differentiable_dtype(var.dtype)
        metadata.append((var._shape, var.dtype, var.device) if differentiable else None)
        info.append((var._shape, var.dtype, var.device))
        var = _wrap_output(var, node, i, len(raw), is_input, is_modified, differentiable,
                           key in saved_ids)
        if not (is_input and is_modified) and _is_view(var):
            var._meta_for_write().creation_meta = IN_CUSTOM_FUNCTION
        outputs.append(var)
    if node is not None and sum(m is not None for m in metadata) > 1:
        for var in outputs:
            if isinstance(var, Tensor) and _is_view(var):
                var._meta_for_write().creation_meta = MULTI_OUTPUT_NODE
    returned = {id(v) for v in raw if isinstance(v, Tensor)}
    if not dirty <= returned:
        raise RuntimeError("Some elements marked as dirty during the forward method were not "
                           "returned as output. The inputs that are modified inplace must all be "
                           "outputs of the Function.")
    ctx._output_info = tuple(info)
    if node is not None:
        ctx._input_metadata = tuple(metadata)
        ctx._saved = _save_variables(ctx)
    ctx.to_save = None
    if tangents is not None:
        _process_forward_ad(ctx, tensor_inputs, tangents, raw, outputs, non_diff, dirty)
    ctx.saved_for_forward = None
    return tuple(outputs) if is_tuple else outputs[0]


def _process_forward_ad(ctx, tensor_inputs, tangents, raw, outputs, non_diff, dirty):
    """custom_function.cpp's _process_forward_mode_AD: call the user's
    ``jvp(ctx, *tangents)`` (one per forward argument, None where there is
    none) and check and set what it returns: a modified input's tangent must
    have been modified in place and returned as-is; an output that is a view
    of an input with a tangent must get a view of that tangent."""
    level = len(fw_levels) - 1
    input_tangents = [t for t, is_t in zip(tangents, ctx._is_tensor_input) if is_t]
    versions = [t._version if t is not None else None for t in input_tangents]
    result = ctx._forward_cls.jvp(ctx, *tangents)
    result = result if isinstance(result, tuple) else (result,)
    if len(result) != len(raw):
        raise RuntimeError(f"Function's jvp returned an invalid number of forward gradients "
                           f"(expected {len(raw)} but got {len(result)})")
    position = {id(t): i for i, t in enumerate(tensor_inputs)}
    bases = {id(t._base if _is_view(t) else t): i for i, t in enumerate(tensor_inputs)}
    for i, (var, out, grad) in enumerate(zip(raw, outputs, result)):
        if not isinstance(var, Tensor) or id(var) in non_diff or \
                not is_differentiable_dtype(var.dtype):
            if grad is not None:
                raise RuntimeError(
                    f"Function's jvp returned a gradient at position {i}, but  the corresponding "
                    "forward output is not a differentiable Tensor.You should return None at that "
                    "position instead.")
            continue
        if grad is None:
            continue
        if id(var) in dirty:
            j = position.get(id(var))
            if j is None:
                raise RuntimeError(
                    "Only input Tensors should be given to ctx.mark_dirty(). If a Tensor is not "
                    "an input, there is no need to pass it to mark_dirty().")
            if input_tangents[j] is None:
                set_fw_grad(out, grad, level, True)
                continue
            if grad._version == versions[j]:
                raise RuntimeError(
                    "An inplace custom Function is not modifying the forward mode gradients "
                    "inplace. If the forward is modifying an input inplace, then the jvp function "
                    "must modify the corresponding gradient inplace.")
            if grad is not input_tangents[j]:
                raise RuntimeError(
                    "An inplace custom Function is not returning the forward mode gradients "
                    "as-is. If the forward is modifying an input inplace, then the jvp function "
                    "must modify the gradient inplace and return it as-is.")
            continue
        j = bases.get(id(out._base)) if _is_view(out) else None
        if j is not None:
            input_grad = input_tangents[j]
            if input_grad is None:
                set_fw_grad(out, grad, level, True)
                continue
            if grad._base is None:
                raise RuntimeError("A custom Function's forward is returning a view (or an input "
                                   "as-is) but the jvp is not returning a view.")
            if input_grad._base is not None and input_grad._base is not grad._base:
                raise RuntimeError("A custom Function is returning a view but the jvp is not "
                                   "returning a view of the same base as the given grad input.")
            if input_grad._base is None and input_grad is not grad._base:
                raise RuntimeError("A custom Function is returning a view but the jvp is not "
                                   "returning a view of the given grad input.")
        set_fw_grad(out, grad, level, False)


def _is_view(t) -> bool:
    """A differentiable view (PyTorch's ``is_view()``)."""
    return t._base is not None and _is_differentiable_view(t)


def _view_as_self(t):
    """An input returned as-is gets its own autograd identity: a view of itself."""
    return t.view_as(t)


def _wrap_output(var, node, output_nr, num_outputs, is_input, is_modified, differentiable,
                 saved_in_setup_context):
    """custom_function.cpp's set_history for one tensor output."""
    if not differentiable:
        if not requires_grad(var):
            return _view_as_self(var) if is_input and not is_modified else var
        # outputs of a non-executable call, or marked non-differentiable, lose
        # their history (a view keeps it, as a view made under no_grad does)
        if is_input:
            return var.detach()
        if not _is_view(var):
            var.detach_()
        return var
    if is_modified:
        view = _is_view(var)
        if not view and var.is_leaf and requires_grad(var):
            raise RuntimeError("a leaf Variable that requires grad has been used in an in-place "
                               "operation.")
        if not is_input:
            warnings.warn("ctx.mark_dirty() received a tensor that was not an input. Only input "
                          "Tensors that have been mutated should be passed to ctx.mark_dirty(). "
                          "(Triggered internally at /__w/pytorch/pytorch/torch/csrc/autograd/"
                          "custom_function.cpp:320.)", UserWarning, stacklevel=4)
        if view:
            if num_outputs > 1:
                raise RuntimeError(
                    "If your Function modifies inplace an input that is a view of another Tensor, "
                    "your Function cannot return more than one Tensor. This is not supported by "
                    "the current autograd engine. You should either make sure the input is not a "
                    "view (using .clone() for example) or make your Function only return one "
                    "Tensor (potentially splitting it into two Functions: one doing the inplace "
                    "that returns a single Tensor and a second one that does the other "
                    "operations). You can ask on the forum https://discuss.pytorch.org/ if you "
                    "need help to do this change.")
            check_inplace(var, True)
            _rebase_history(var, node)
        else:
            set_history(var, node, output_nr)
        return var
    if is_input:
        if saved_in_setup_context:
            raise RuntimeError(
                "An input that has been returned as-is as output is being saved for backward. "
                "This is not supported if you override setup_context. You should return and save "
                "a view of the input instead, e.g. with x.view_as(x) or setup ctx inside the "
                "forward function itself.")
        var = _view_as_self(var)
    set_history(var, node, output_nr)
    return var


def _save_variables(ctx):
    """``ctx.to_save`` -> SavedVariables; the node's own outputs are saved as outputs."""
    saved = []
    for i, t in enumerate(ctx.to_save or ()):
        if t is not None and not isinstance(t, Tensor):
            raise TypeError(f"save_for_backward can only save variables, but argument {i} is of "
                            f"type {type(t).__name__}")
        meta = t._autograd_meta if t is not None else None
        saved.append(SavedVariable(t, is_output=meta is not None and meta.grad_fn is ctx))
    return saved


# -- once_differentiable -------------------------------------------------------------

_ONCE_MESSAGE = "trying to differentiate twice a function that was marked with @once_differentiable"


class Error(Node):
    """The node behind ``once_differentiable`` results: differentiating through
    it raises (PyTorch's DelayedError / Error functions)."""

    __slots__ = ("msg",)
    _name_prefix = "torch::autograd::"

    def __init__(self, msg, next_edges):
        super().__init__(tuple(next_edges))
        self.msg = msg

    def apply(self, grads):
        raise RuntimeError(self.msg)


def _attach_outputs(node, outputs):
    """Give fresh tensors ``node`` as grad_fn, one output slot each (what the
    C++ functions' wrap_outputs does); None entries stay None."""
    metadata = []
    for i, out in enumerate(outputs):
        if out is not None:
            set_history(out, node, i)
            metadata.append((out._shape, out.dtype, out.device))
        else:
            metadata.append(None)
    node._input_metadata = tuple(metadata)
    return outputs[0] if len(outputs) == 1 else tuple(outputs)


def _delayed_error(msg, tensors):
    """Aliases of ``tensors`` whose grad_fn is an ``Error`` node; its edges go
    to fresh leaves so that the aliases require grad."""
    leaves = []
    for t in tensors:
        if t is not None:
            t = t.detach()
            t.requires_grad = True
        leaves.append(t)
    node = Error(msg, [gradient_edge(t) if t is not None else None for t in leaves])
    return _attach_outputs(node, [t.data if t is not None else None for t in leaves])


def once_differentiable(fn):
    """Decorate a ``backward`` that is not itself differentiable: it runs under
    no_grad, and with create_graph its results are tied to a node that raises
    if anyone differentiates through them."""

    @functools.wraps(fn)
    def wrapper(ctx, *args):
        prev = _tls.grad_enabled
        _tls.grad_enabled = False
        try:
            outputs = fn(ctx, *args)
        finally:
            _tls.grad_enabled = prev
        if not prev or not any(isinstance(a, Tensor) and requires_grad(a) for a in args):
            return outputs
        return _delayed_error(_ONCE_MESSAGE, outputs if isinstance(outputs, tuple) else (outputs,))

    return wrapper


class InplaceFunction(Function):
    """Kept for backward compatibility: a Function with an ``inplace`` flag."""

    def __init__(self, inplace=False):
        super().__init__()
        self.inplace = inplace


def _iter_tensors(obj):
    """The tensors of a nested structure, depth first."""
    if isinstance(obj, Tensor):
        yield obj
    elif isinstance(obj, (list, tuple)):
        for item in obj:
            yield from _iter_tensors(item)
    elif isinstance(obj, dict):
        for item in obj.values():
            yield from _iter_tensors(item)


def _unflatten(flat, structure):
    """``flat``'s tensors put back into ``structure``'s nesting."""
    flat = iter(flat)

    def rebuild(obj):
        if isinstance(obj, Tensor) or obj is None:
            return next(flat)
        if isinstance(obj, (list, tuple)):
            return type(obj)(rebuild(item) for item in obj)
        return obj
    return rebuild(structure)


class NestedIOFunction(Function):
    """The legacy (instance-style) Function whose inputs and outputs may be
    nested: subclasses write ``forward_extended`` / ``backward_extended``.
    Kept, as PyTorch keeps it, for old code; it relies on the legacy
    ``_do_forward`` protocol, which neither PyTorch 2 nor glasstorch has."""

    def _do_forward(self, *input):
        self._nested_input = input
        flat_output = super()._do_forward(*_iter_tensors(input))
        return _unflatten(flat_output, self._nested_output)

    def _do_backward(self, gradients, retain_variables):
        self.retain_variables = retain_variables
        result = super()._do_backward(gradients, retain_variables)
        if not retain_variables:
            del self._nested_output
            del self._to_save_nested
        return result

    def backward(self, *gradients):
        nested = _unflatten(gradients, self._nested_output)
        return tuple(self.backward_extended(*nested))

    __call__ = _do_forward

    def forward(self, *args):
        nested = self._nested_input
        result = self.forward_extended(*nested)
        del self._nested_input
        self._nested_output = result
        return tuple(_iter_tensors(result))

    def save_for_backward(self, *args):
        self.to_save = tuple(_iter_tensors(args))
        self._to_save_nested = args

    @property
    def saved_tensors(self):
        return _unflatten(super().saved_tensors, self._to_save_nested)

    def mark_dirty(self, *args, **kwargs):
        self.dirty_tensors = tuple(_iter_tensors((args, kwargs)))

    def mark_non_differentiable(self, *args, **kwargs):
        self.non_differentiable = tuple(_iter_tensors((args, kwargs)))

    def forward_extended(self, *input):
        """The user's forward over the nested inputs."""
        raise NotImplementedError

    def backward_extended(self, *grad_output):
        """The user's backward over the nested gradients."""
        raise NotImplementedError

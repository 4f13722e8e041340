"""The autograd half of a tensor (torch/csrc/autograd/variable.cpp, VariableHooks,
python_variable.cpp) and the Tensor methods built on it.

A tensor's autograd state lives in its lazily created ``AutogradMeta``
(``glasstorch._tensor``): requires_grad, grad, grad_fn/output_nr, hooks, the
weakly cached grad accumulator and, for views, ``attr_version`` and
``creation_meta``.  A view's ``_base`` is its root base; a differentiable view
derives ``requires_grad`` from its base and regenerates its ``grad_fn``
(``AsStridedBackward0`` onto the base's history) whenever the shared version
counter moved since its grad_fn was set: that is how a view sees an in-place
op applied to its base or to another view.
"""
from __future__ import annotations

import sys
import threading
import warnings
import weakref

from .._core import dispatch_key as dk
from .._core import dtype as dt
from .._core.layout import contiguous_format, strided
from .._core.tls import state as _tls
from .._dispatcher.dispatcher import function_range
from .._tensor import Tensor
from .graph import _BACKWARD_SUFFIX, AccumulateGrad, _add_hook, is_inference, version_counter

# CreationMeta (torch/csrc/autograd/variable.h)
DEFAULT, IN_CUSTOM_FUNCTION, MULTI_OUTPUT_NODE, NO_GRAD_MODE, INFERENCE_MODE = range(5)


# -- reading the graph position of a tensor ------------------------------------------

def requires_grad(t) -> bool:
    """Leaf flag, or has history, or is a differentiable view of such a tensor."""
    # (getattr with a default: a Python number passed for a Tensor argument
    # has neither attribute, and raising to find that out would be slow)
    meta = getattr(t, "_autograd_meta", None)
    if meta is not None and meta.requires_grad:
        return True
    base = getattr(t, "_base", None)
    return base is not None and _is_differentiable_view(t) and requires_grad(base)


def _is_differentiable_view(t) -> bool:
    return t.dtype.category >= dt.FLOATING and t._base.dtype.category >= dt.FLOATING


def grad_fn(t):
    """``t.grad_fn``; for a view, regenerated if an in-place op moved the version."""
    meta = t._autograd_meta
    base = t._base
    if base is None or not _is_differentiable_view(t):
        return None if meta is None else meta.grad_fn
    current = version_counter(t)[0]
    if meta is not None and meta.attr_version == current:
        return meta.grad_fn
    if not requires_grad(base):
        return None if meta is None else meta.grad_fn
    if meta is not None and meta.creation_meta != DEFAULT:
        raise RuntimeError(_view_rebase_message(t, meta, meta.creation_meta, indirect=True))
    if meta is None:
        # made without recording (grad mode off or base not requiring grad then):
        # its grad_fn is regenerated only once its version moves
        meta = t._meta_for_write()
        if not _tls.grad_enabled and meta.grad_fn is None:
            meta.attr_version = current
            return None
    from .view_nodes import as_strided_backward_node
    old_fn, old_nr = meta.grad_fn, meta.output_nr
    meta.grad_fn = as_strided_backward_node(t, base)
    meta.output_nr = 0
    meta.attr_version = current
    move_retains_grad_hook(t, old_fn, old_nr)
    return meta.grad_fn


def gradient_edge(t):
    """Where a gradient for ``t`` goes: (grad_fn, output_nr) or its accumulator."""
    fn = grad_fn(t)
    if fn is not None:
        return (fn, t._autograd_meta.output_nr)
    return (grad_accumulator(t), 0)


def grad_accumulator(t):
    """The leaf's AccumulateGrad, cached weakly (the graph owns it)."""
    meta = t._meta_for_write()
    ref = meta.grad_accumulator
    node = ref() if ref is not None else None
    if node is None:
        node = AccumulateGrad(t)
        meta.grad_accumulator = weakref.ref(node)
    return node


def set_history(t, node, output_nr) -> None:
    meta = t._autograd_meta
    if meta is None:
        meta = t._meta_for_write()
    meta.grad_fn = node
    meta.output_nr = output_nr
    meta.requires_grad = True
    if t._base is not None:
        meta.attr_version = version_counter(t)[0]


def move_retains_grad_hook(t, old_fn, old_output_nr) -> None:
    """``t``'s grad_fn was replaced (an in-place op, or a view regenerating its
    grad_fn): its retain_grad hook moves to the new node.  Hooks registered
    with ``register_hook`` stay on the old one (PyTorch's
    update_tensor_hooks_on_new_gradfn)."""
    meta = t._autograd_meta
    if meta is None or not meta.retains_grad or old_fn is None:
        return
    hook = old_fn._retains_grad_hooks.pop(old_output_nr, None)
    if hook is not None:
        new_fn = meta.grad_fn
        if new_fn._retains_grad_hooks is None:
            new_fn._retains_grad_hooks = {}
        new_fn._retains_grad_hooks[meta.output_nr] = hook


# -- forward-mode AD: tangents per level (forward_grad.h, autograd_meta.cpp) ----------
#
# A tensor's tangents live in its AutogradMeta as a ``ForwardGrad`` (level ->
# tangent).  Levels are process-wide, as PyTorch's ``all_fw_levels``: each
# knows the ForwardGrads holding one of its tangents and clears them on exit.
# ``fw_levels`` is empty unless a level is active, so the autograd kernels
# test it alone to know that forward AD costs them nothing.

fw_levels: list = []


class ForwardGrad:
    """The tangents of one tensor, by level."""

    __slots__ = ("content", "__weakref__")

    def __init__(self):
        self.content = {}


class ForwardADLevel:
    """One dual level: forgets its tangents when it exits."""

    __slots__ = ("idx", "grads")

    def __init__(self, idx):
        self.idx = idx
        self.grads = weakref.WeakSet()

    def clear(self) -> None:
        for fw in list(self.grads):
            fw.content.pop(self.idx, None)
        self.grads.clear()


class _FwGradMode(threading.local):
    enabled = True      # c10::AutogradState's fw_grad_mode


fw_grad_mode = _FwGradMode()


def enter_dual_level() -> int:
    """ForwardADLevel::get_next_idx: only one level at a time."""
    if fw_levels:
        raise RuntimeError("Nested forward mode AD is not supported at the moment")
    fw_levels.append(ForwardADLevel(0))
    return 0


def exit_dual_level(level) -> None:
    """ForwardADLevel::release_idx."""
    if level < 0:
        raise RuntimeError("Dual level must be a positive number.")
    if level + 1 != len(fw_levels):
        raise RuntimeError("Exiting a forward AD level that is not the last that was created is "
                           "not support. Ensure they are released in the reverse order they "
                           "were created.")
    fw_levels.pop().clear()


def _level(level) -> ForwardADLevel:
    if level < 0 or level >= len(fw_levels):
        raise RuntimeError("Trying to access a forward AD level with an invalid index. This index "
                           "was either not created or is already deleted.")
    return fw_levels[level]


def fw_grad(t, level):
    """``t._fw_grad(level)``: its tangent at ``level`` or None.  A view without
    one of its own takes a view of its base's tangent (set by an in-place op
    after the view was made), unless it is a primal from ``unpack_dual``."""
    if not fw_grad_mode.enabled:
        return None
    meta = t._autograd_meta
    fw = meta.__dict__.get("fw_grad") if meta is not None else None
    if fw is not None:
        tangent = fw.content.get(level)
        if tangent is not None:
            return tangent
    base = t._base
    if base is None or (meta is not None and meta.__dict__.get("no_fw_view")) \
            or not _is_differentiable_view(t):
        return None
    base_tangent = fw_grad(base, level)
    if base_tangent is None:
        return None
    tangent = base_tangent.as_strided(t._shape, t._stride, t._offset)
    _store_fw_grad(t, tangent, level)
    return tangent


def has_fw_grad(t) -> bool:
    """Does ``t`` hold a tangent at some level (its own, not its base's)?"""
    meta = t._autograd_meta
    fw = meta.__dict__.get("fw_grad") if meta is not None else None
    return fw is not None and bool(fw.content)


def _store_fw_grad(t, tangent, level) -> None:
    meta = t._meta_for_write()
    fw = meta.__dict__.get("fw_grad")
    if fw is None:
        fw = meta.fw_grad = ForwardGrad()
    _level(level).grads.add(fw)
    fw.content[level] = tangent


def _same_layout(a, b) -> bool:
    """PyTorch's has_same_meta: same sizes, strides, offset and storage size."""
    return (a._shape == b._shape and a._stride == b._stride and a._offset == b._offset
            and a._storage.nbytes() // a.element_size() == b._storage.nbytes() // b.element_size())


def _zeros_with_layout(like, t):
    """``_new_zeros_with_same_feature_meta(like, t)``: zeros of ``like``'s dtype
    laid out as ``t`` is (storage size, strides, offset), so the views of
    ``t`` can be taken of it too."""
    numel = t._storage.nbytes() // t.element_size()
    return like.new_zeros((numel,)).as_strided(t._shape, t._stride, t._offset)


def set_fw_grad(t, tangent, level, is_inplace_op) -> None:
    """``t._set_fw_grad(tangent, level, is_inplace_op)``.  The tangent is kept
    as-is when laid out as ``t``, else copied into zeros that are.  In-place
    on a view whose base has no tangent gives the base a zero tangent first and
    makes the view's tangent a view of it, so the base sees the update."""
    _level(level)
    if tangent._shape != t._shape:
        raise RuntimeError(
            "Trying to set a forward gradient that has a different size than that of the "
            f"original Tensor, this is not supported. Tensor is of size {list(t._shape)} while "
            f"the given forward gradient is of size {list(tangent._shape)}.")
    base = t._base
    if is_inplace_op and base is not None and _is_differentiable_view(t) \
            and fw_grad(base, level) is None:
        if _same_layout(tangent, base) and _same_layout(tangent, t):
            base_tangent = tangent
        else:
            base_tangent = _zeros_with_layout(tangent, base)
            view = base_tangent.as_strided(t._shape, t._stride, t._offset)
            view.copy_(tangent)
            tangent = view
        _store_fw_grad(base, base_tangent, level)
    if not _same_layout(tangent, t):
        tangent = _zeros_with_layout(tangent, t).copy_(tangent)
    _store_fw_grad(t, tangent, level)


# -- gradient accumulation into .grad (AccumulateGrad::accumulateGrad) --------------

def accumulate_grad(variable, new_grad) -> None:
    meta = variable._autograd_meta
    if meta is None or not meta.requires_grad:
        return
    old = meta.grad
    if old is None:
        # steal the incoming tensor when nobody else can see it and it already
        # has the layout .grad must have; otherwise store a copy that has it
        # (a sparse gradient: a copy of it, or its shallow copy when stolen)
        if new_grad.layout is not strided:
            meta.grad = new_grad.detach() if not _tls.grad_enabled and \
                sys.getrefcount(new_grad) <= 3 else new_grad.clone()
        elif (not _tls.grad_enabled and sys.getrefcount(new_grad) <= 3
                and (_obeys_layout(variable, new_grad) or not _tls.grad_layout_enforced)):
            meta.grad = new_grad.detach()
        else:
            meta.grad = _clone_obey_contract(variable, new_grad)
    else:
        if not _tls.grad_enabled and old._shape == new_grad._shape and \
                not (old.layout is not strided and new_grad.layout is strided):
            old.add_(new_grad)      # in place: .grad keeps its identity
        elif old.layout is not strided and new_grad.layout is strided:
            meta.grad = new_grad + old      # (sparse + dense has no kernel: dense first)
        else:
            meta.grad = old + new_grad
        if _tls.grad_layout_enforced and not _LAYOUT_WARNED and not meta.grad.is_sparse \
                and not _obeys_layout(variable, meta.grad):
            _warn_layout(variable, meta.grad)
    hooks = meta.post_acc_hooks
    if hooks:
        for fn in list(hooks.values()):
            fn(variable)


_LAYOUT_WARNED = []


def _warn_layout(variable, grad) -> None:
    """AccumulateGrad's CHECK_RESULT: once per process, as TORCH_WARN_ONCE."""
    _LAYOUT_WARNED.append(True)
    sizes = lambda t: "[" + ", ".join(map(str, t)) + "]"  # noqa: E731
    warnings.warn("grad and param do not obey the gradient layout contract. This is not an "
                  "error, but may impair performance.\n"
                  f"grad.sizes() = {sizes(grad._shape)}, strides() = {sizes(grad._stride)}\n"
                  f"param.sizes() = {sizes(variable._shape)}, strides() = "
                  f"{sizes(variable._stride)} (Triggered internally at "
                  "/__w/pytorch/pytorch/torch/csrc/autograd/functions/accumulate_grad.h:252.)",
                  UserWarning, stacklevel=2)


def _obeys_layout(variable, grad) -> bool:
    if variable.is_non_overlapping_and_dense():
        return grad._stride == variable._stride
    return grad._is_contiguous()


def _clone_obey_contract(variable, grad):
    """Same strides as the parameter when it is dense, else row-major.  Under
    create_graph the copy is recorded (CopyBackwards or CloneBackward0, as in
    PyTorch)."""
    if variable.is_non_overlapping_and_dense():
        out = grad.new_empty_strided(variable._shape, variable._stride)
        return out.copy_(grad)
    return grad.clone(memory_format=contiguous_format)


# -- in-place checks (VariableTypeUtils.h: check_inplace) ---------------------------

def check_inplace(t, any_requires_grad) -> None:
    """Errors for in-place ops that autograd cannot record."""
    if not (any_requires_grad and _tls.grad_enabled):
        return
    base = t._base
    meta = t._autograd_meta
    if base is not None and _is_differentiable_view(t):
        creation = meta.creation_meta if meta is not None else DEFAULT
        if creation != DEFAULT:
            raise RuntimeError(_view_rebase_message(t, meta, creation))
        if base._autograd_meta is not None and base._autograd_meta.requires_grad \
                and base._autograd_meta.grad_fn is None:
            raise RuntimeError("a view of a leaf Variable that requires grad is being used in an "
                               "in-place operation.")
    elif meta is not None and meta.requires_grad and meta.grad_fn is None:
        raise RuntimeError("a leaf Variable that requires grad is being used in an in-place "
                           "operation.")


_REBASE_REASONS = {
    MULTI_OUTPUT_NODE: (
        "This view is the output of a function that returns multiple views. Such functions do "
        "not allow the output views to be modified inplace. You should replace the inplace "
        "operation by an out-of-place one."),
    NO_GRAD_MODE: (
        "Given that this use case is ambiguous and error-prone, it is forbidden. You can clarify "
        "your code by moving both the view and the inplace either both inside the no_grad block "
        "(if you don't want the inplace to be tracked) or both outside (if you want the inplace "
        "to be tracked)."),
    INFERENCE_MODE: (
        "Given that this use case is ambiguous and error-prone, it is forbidden. You can clarify "
        "your code by moving both the view and the inplace either both inside the inference_mode "
        "block (if you don't want the inplace to be tracked) or both outside (if you want the "
        "inplace to be tracked)."),
    IN_CUSTOM_FUNCTION: (
        "This view was created inside a custom Function (or because an input was returned "
        "as-is) and the autograd logic to handle view+inplace would override the custom "
        "backward associated with the custom Function, leading to incorrect gradients. This "
        "behavior is forbidden. You can fix this by cloning the output of the custom Function."),
}


def _view_rebase_message(t, meta, creation, indirect=False) -> str:
    """PyTorch's handle_view_on_rebase: why this view may not be modified in place
    (``indirect``: its base or another view of it was, found when its grad_fn is
    regenerated).  The node is named without its "Backward" suffix."""
    modified = "its base or another view of its base has been" if indirect else "is being"
    fn = meta.grad_fn if meta is not None else None
    name = fn is not None and (meta.view_fn_name or _BACKWARD_SUFFIX.sub("", fn.name()))
    if creation in (NO_GRAD_MODE, INFERENCE_MODE) or fn is None:
        prefix = (f"Output {meta.output_nr} of {name} is a view of a view which was created in"
                  if fn is not None else "A view was created in")
        if creation == INFERENCE_MODE:
            message = f"{prefix} inference mode and {modified} modified inplace in normal mode."
        else:
            message = (f"{prefix} no_grad mode and {modified} modified inplace with grad mode "
                       "enabled.")
    else:
        message = f"Output {meta.output_nr} of {name} is a view and {modified} modified inplace."
    return f"{message} {_REBASE_REASONS[creation]}"


# -- Tensor methods ---------------------------------------------------------------------

def _requires_grad_get(self) -> bool:
    return requires_grad(self)


def _requires_grad_set(self, value) -> None:
    _set_requires_grad(self, value, "requires_grad")


def _set_requires_grad(self, value, how) -> None:
    value = bool(value)
    meta = self._autograd_meta
    if meta is not None and meta.grad_fn is not None or (self._base is not None and not value
                                                          and grad_fn(self) is not None):
        if not value:
            raise RuntimeError("you can only change requires_grad flags of leaf variables. If you "
                               "want to use a computed variable in a subgraph that doesn't require "
                               "differentiation use var_no_grad = var.detach().")
        return
    if value:
        if self.dtype.category < dt.FLOATING:
            if how == "requires_grad_":
                raise RuntimeError("only Tensors of floating point dtype can require gradients")
            raise RuntimeError("only Tensors of floating point and complex dtype can require "
                               "gradients")
        if is_inference(self) and not _tls.inference_mode:
            raise RuntimeError("Setting requires_grad=True on inference tensor outside "
                               "InferenceMode is not allowed.")
    self._meta_for_write().requires_grad = value


def _requires_grad_(self, requires_grad=True):
    _set_requires_grad(self, requires_grad, "requires_grad_")
    return self


def _grad_fn_get(self):
    return grad_fn(self)


def _is_leaf(self) -> bool:
    return grad_fn(self) is None


def _grad_get(self):
    meta = self._autograd_meta
    grad = None if meta is None else meta.grad
    if grad is None and not (meta is not None and meta.retains_grad) and grad_fn(self) is not None:
        warnings.warn(
            "The .grad attribute of a Tensor that is not a leaf Tensor is being accessed. Its "
            ".grad attribute won't be populated during autograd.backward(). If you indeed want "
            "the .grad field to be populated for a non-leaf Tensor, use .retain_grad() on the "
            "non-leaf Tensor. If you access the non-leaf Tensor by mistake, make sure you access "
            "the leaf Tensor instead. See github.com/pytorch/pytorch/pull/30531 for more "
            "information. (Triggered internally at "
            "/__w/pytorch/pytorch/build/aten/src/ATen/core/TensorBody.h:493.)", UserWarning,
            stacklevel=2)
    return grad


def _grad_set(self, value) -> None:
    if value is not None:
        if not isinstance(value, Tensor):
            raise TypeError(f"assigned grad expected to be a Tensor or None but got grad of type "
                            f"{type(value).__name__}")
        if value.dtype is not self.dtype:
            raise RuntimeError(
                f"attempting to assign a gradient with dtype '{dt.type_meta_name(value.dtype)}' to "
                f"a tensor with grad_dtype '{self.dtype._short}'. The gradient must match the "
                "tensor's grad_dtype (defaults to the tensor's dtype). You can set the tensor's "
                "grad_dtype attribute with a specific dtype, or None to allow any dtype. Set "
                "grad_dtype with caution. Diverging the dtypes of a tensor and its gradient may "
                "break downstream systems that assume they match.")
        if value.device.type != self.device.type:
            raise RuntimeError(
                f"attempting to assign a gradient with device type '{value.device.type}' to a "
                f"tensor with device type '{self.device.type}'. Please ensure that the gradient "
                "and the tensor are on the same device")
        if value._shape != self._shape:
            raise RuntimeError(
                f"attempting to assign a gradient of size '{list(value._shape)}' to a tensor of "
                f"size '{list(self._shape)}'. Please ensure that the gradient and the tensor are "
                "the same size")
    self._meta_for_write().grad = value




def _version(self) -> int:
    if is_inference(self):
        raise RuntimeError("Inference tensors do not track version counter.")
    vc = self._version_counter
    if vc is None and self._base is not None:
        vc = version_counter(self)
    return vc[0] if vc is not None else 0


def _output_nr(self) -> int:
    meta = self._autograd_meta
    return 0 if meta is None else meta.output_nr


def _register_hook(self, hook):
    """``fn(grad) -> Tensor or None`` run when the gradient for this tensor is computed."""
    if not requires_grad(self):
        raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
    fn = grad_fn(self)
    if fn is not None:
        return fn._register_tensor_pre_hook(self._autograd_meta.output_nr, hook)
    return _add_hook(self._meta_for_write(), "hooks", hook)


def _register_post_accumulate_grad_hook(self, hook):
    if grad_fn(self) is not None:
        raise RuntimeError("post accumulate grad hooks cannot be registered on non-leaf tensors")
    if not requires_grad(self):
        raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
    return _add_hook(self._meta_for_write(), "post_acc_hooks", hook)


def _retain_grad(self) -> None:
    if not requires_grad(self):
        raise RuntimeError("can't retain_grad on Tensor that has requires_grad=False")
    fn = grad_fn(self)
    if fn is None:   # leaves keep their grad anyway
        return
    meta = self._autograd_meta
    if meta.retains_grad:
        return
    ref = weakref.ref(self)

    def retain(grad):
        t = ref()
        if t is None:
            return
        t_meta = t._autograd_meta
        if t_meta.grad is None:
            t_meta.grad = grad.clone(memory_format=contiguous_format)
        else:
            t_meta.grad = t_meta.grad + grad

    if fn._retains_grad_hooks is None:
        fn._retains_grad_hooks = {}
    fn._retains_grad_hooks[meta.output_nr] = retain
    meta.retains_grad = True


def _retains_grad(self) -> bool:
    meta = self._autograd_meta
    return meta is not None and meta.retains_grad


def _is_inference_method(self) -> bool:
    return is_inference(self)


def _data_get(self):
    """A plain Tensor (whatever ``self``'s class) sharing storage, with no history
    and a fresh version counter, as PyTorch's ``variable_data()``.  A tensor with
    a ``__torch_dispatch__`` makes its own, through the ``detach`` op."""
    if self._keys & dk.PYTHON:
        from .._dispatcher.dispatcher import ops
        out = ops.aten.detach.default(self)
        out._base = None
        out._version_counter = None
        return out
    out = Tensor._make(self._storage, self._shape, self._stride, self._offset, self.dtype,
                       self.device, self._keys)
    out._array = self._array
    return out


def _data_set(self, value) -> None:
    """``x.data = y``: x takes y's storage and geometry (its autograd state stays)."""
    if not isinstance(value, Tensor):
        raise TypeError(f"Variable data has to be a tensor, but got {type(value).__name__}")
    self._storage = value._storage
    self.dtype = value.dtype
    self.device = value.device
    self._keys = value._keys | (self._keys & (dk.ADINPLACEORVIEW | dk.AUTOGRAD_FUNCTIONALITY))
    self._set_sizes_strides(value._shape, value._stride, value._offset)


def _detach_(self):
    """``aten::detach_``'s autograd kernel (VariableTypeManual's detach_): in
    place, drop history, become a leaf (views can't).  A range named
    "detach_" to the profiler; it redispatches nothing, so a dispatch mode
    doesn't see it."""
    with function_range("detach_", (self,)):
        if self._base is not None and _is_differentiable_view(self):
            raise RuntimeError(
                "Can't detach views in-place. Use detach() instead. If you are using "
                "DistributedDataParallel (DDP) for training, and gradient_as_bucket_view is set "
                "as True, gradients are views of DDP buckets, and hence detach_() cannot be "
                "called on these gradients. To fix this error, please refer to the "
                "Optimizer.zero_grad() function in torch/optim/optimizer.py as the solution.")
        meta = self._autograd_meta
        if meta is not None:
            meta.grad_fn = None
            meta.requires_grad = False
            meta.output_nr = 0
        return self


def _backward(self, gradient=None, retain_graph=None, create_graph=False, inputs=None):
    from . import backward
    backward(self, gradient, retain_graph, create_graph, inputs=inputs)


def install() -> None:
    Tensor.requires_grad = property(_requires_grad_get, _requires_grad_set)
    Tensor.requires_grad_ = _requires_grad_
    Tensor.grad_fn = property(_grad_fn_get)
    Tensor.is_leaf = property(_is_leaf)
    Tensor.grad = property(_grad_get, _grad_set)
    Tensor._version = property(_version)
    Tensor.output_nr = property(_output_nr)
    Tensor.register_hook = _register_hook
    Tensor.register_post_accumulate_grad_hook = _register_post_accumulate_grad_hook
    Tensor.retain_grad = _retain_grad
    Tensor.retains_grad = property(_retains_grad)
    Tensor.is_inference = _is_inference_method
    Tensor.data = property(_data_get, _data_set)
    Tensor.backward = _backward

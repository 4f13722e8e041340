"""``torch.utils``: hook handles, checkpointing, data loading, safetensors."""
from . import data  # noqa: F401  (torch.utils.data)

import copyreg as _copyreg
import weakref as _weakref

# The fields of glasstorch's TensorImpl: a Tensor's internal slots (its Python-visible
# state, ``__dict__`` and subclass slots, is swapped separately).
_IMPL_SLOTS = ("_storage", "_shape", "_stride", "_offset", "dtype", "device", "_keys", "_array",
               "_contiguous", "_base", "_version_counter", "_autograd_meta")


def _poisoned_accumulate_grad(grad_outputs):
    raise RuntimeError(
        "Trying to execute AccumulateGrad node that was poisoned by swap_tensors this can happen "
        "when you try to run backward on a tensor that was swapped. For a module m with "
        "`torch.__future__.set_swap_module_params_on_conversion(True)` you should not change "
        "the device or dtype of the module (e.g. `m.cpu()` or `m.half()`) between running "
        "forward and backward. To resolve this, please only change the device/dtype before "
        "running forward (or after both forward and backward).")


def swap_tensors(t1, t2) -> None:
    """``torch.utils.swap_tensors``: exchange everything two tensor objects hold
    (class, ``__dict__``, slots and the tensor itself: storage, geometry, dtype,
    autograd state) so that ``t1`` keeps its identity with ``t2``'s content.

    PyTorch swaps the two C++ TensorImpls; here the impl is the Tensor's internal
    slots.  A leaf's existing AccumulateGrad node stays with its impl and is
    poisoned (a backward reaching it raises), as PyTorch does.  PyTorch also
    refuses tensors whose C++ use count shows other holders (saved by a graph);
    that count has no Python equivalent, so that check is not made."""
    if _weakref.getweakrefs(t1):
        raise RuntimeError("Cannot swap t1 because it has weakref associated with it")
    if _weakref.getweakrefs(t2):
        raise RuntimeError("Cannot swap t2 because it has weakref associated with it")
    t1_slots = set(_copyreg._slotnames(t1.__class__)) - set(_IMPL_SLOTS)
    t2_slots = set(_copyreg._slotnames(t2.__class__)) - set(_IMPL_SLOTS)
    if t1_slots != t2_slots:
        raise RuntimeError("Cannot swap t1 and t2 if they have different slots")
    for t in (t1, t2):
        meta = t._autograd_meta
        ref = meta.grad_accumulator if meta is not None else None
        node = ref() if ref is not None else None
        if node is not None:
            node.register_prehook(_poisoned_accumulate_grad)
            node.variable = t2 if t is t1 else t1     # the node stays with its impl

    def swap(name):
        first = getattr(t1, name)
        setattr(t1, name, getattr(t2, name))
        setattr(t2, name, first)

    swap("__class__")
    swap("__dict__")
    for slot in t1_slots:
        has1, has2 = hasattr(t1, slot), hasattr(t2, slot)
        if has1 and has2:
            swap(slot)
        elif has1:
            setattr(t2, slot, getattr(t1, slot))
            delattr(t1, slot)
        elif has2:
            setattr(t1, slot, getattr(t2, slot))
            delattr(t2, slot)
    for slot in _IMPL_SLOTS:
        swap(slot)

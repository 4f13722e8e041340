"""``torch.utils.module_tracker``: which nn.Modules are running right now.

``ModuleTracker`` keeps ``parents``, the set of names of the modules whose
forward (or whose backward) is under way, always with ``"Global"`` in it.  Names
are built as PyTorch builds them: the class name of the first module seen, then
dotted child names under it (``"Sequential.0"``).

Forward is tracked with the global module forward hooks.  Backward is tracked
with ``register_multi_grad_hook`` on each module's tensors: the module enters
once all its outputs the pass reaches have their gradients, and leaves once all
its inputs have; after the backward pass ``parents`` goes back to ``{"Global"}``.
"""
from __future__ import annotations

import weakref

from .._tensor import Tensor
from ..autograd.engine import current_graph_task_id, queue_callback
from ..autograd.graph import register_multi_grad_hook
from ..nn.modules.module import register_module_forward_hook, register_module_forward_pre_hook
from ._pytree import tree_leaves

__all__ = ["ModuleTracker"]


class ModuleTracker:
    """Context manager; read ``parents`` (and ``is_bw``) while it is active."""

    def __init__(self) -> None:
        self.parents = {"Global"}
        self._known_modules = weakref.WeakKeyDictionary()
        self._seen_modules = weakref.WeakSet()
        self._has_callback = False
        self._hooks = []

    @property
    def is_bw(self) -> bool:
        """True while a backward pass is running."""
        return current_graph_task_id() != -1

    def _get_mod_name(self, mod) -> str:
        """The module's name, naming its children (dotted) the first time it is seen."""
        if mod not in self._known_modules:
            self._known_modules[mod] = type(mod).__name__
        name = self._known_modules[mod]
        if mod not in self._seen_modules:
            for child_name, child in mod.named_children():
                self._known_modules[child] = f"{name}.{child_name}"
                self._get_mod_name(child)
            self._seen_modules.add(mod)
        return name

    def _reset_after_backward(self) -> None:
        """Once per backward pass: empty ``parents`` back to Global when it ends."""
        if self._has_callback:
            return

        def reset():
            self.parents = {"Global"}
            self._has_callback = False

        queue_callback(reset)
        self._has_callback = True

    def _enter(self, name: str, in_backward: bool) -> None:
        if in_backward:
            self._reset_after_backward()
        self.parents.add(name)

    def _leave(self, name: str) -> None:
        self.parents.discard(name)

    def _on_gradient(self, tensors, action) -> None:
        """Run ``action()`` once the backward pass has given every one of ``tensors``
        (those needing one) that it reaches its gradient."""
        tensors = [t for t in tree_leaves(tensors) if isinstance(t, Tensor) and t.requires_grad]
        if tensors:
            self._hooks.append(register_multi_grad_hook(tensors, lambda grads: action()))

    def _fw_pre_hook(self, mod, args) -> None:
        name = self._get_mod_name(mod)
        self._enter(name, False)
        self._on_gradient(args, lambda: self._leave(name))

    def _fw_post_hook(self, mod, args, output) -> None:
        name = self._get_mod_name(mod)
        self._leave(name)
        self._on_gradient(output, lambda: self._enter(name, True))

    def __enter__(self):
        self._fw_pre_handle = register_module_forward_pre_hook(self._fw_pre_hook)
        self._fw_post_handle = register_module_forward_hook(self._fw_post_hook)
        return self

    def __exit__(self, *args):
        self._fw_pre_handle.remove()
        self._fw_post_handle.remove()
        for handle in self._hooks:
            handle.remove()
        self._hooks.clear()

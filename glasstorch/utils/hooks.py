"""``torch.utils.hooks``: the handle every ``register_*hook`` returns, and the
machinery behind ``nn.Module`` full backward hooks."""
from __future__ import annotations

import itertools
import warnings
import weakref

__all__ = ["RemovableHandle", "BackwardHook"]


class RemovableHandle:
    """Removes one hook from the dict(s) it was stored in.  The dicts are held
    weakly, so a handle never keeps a graph or module alive."""

    _next_id = itertools.count()

    def __init__(self, hooks_dict, *, extra_dict=None) -> None:
        self.hooks_dict_ref = weakref.ref(hooks_dict)
        self.id = next(RemovableHandle._next_id)
        extras = extra_dict if isinstance(extra_dict, (list, tuple)) else \
            ([] if extra_dict is None else [extra_dict])
        self.extra_dict_ref = tuple(weakref.ref(d) for d in extras)

    def remove(self) -> None:
        hooks_dict = self.hooks_dict_ref()
        if hooks_dict is not None:
            hooks_dict.pop(self.id, None)
        for ref in self.extra_dict_ref:
            extra = ref()
            if extra is not None:
                extra.pop(self.id, None)

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.remove()


def _backward_hook_function():
    """The identity ``autograd.Function`` whose nodes mark where a module's inputs
    and outputs meet the graph (torch.nn.modules._functions.BackwardHookFunction).
    Built on first use: autograd itself imports this module."""
    global _BackwardHookFunction
    if _BackwardHookFunction is None:
        from ..autograd.function import Function

        class BackwardHookFunction(Function):
            @staticmethod
            def forward(ctx, *args):
                ctx.mark_non_differentiable(*[arg for arg in args if not arg.requires_grad])
                return args

            @staticmethod
            def backward(ctx, *args):
                return args

        _BackwardHookFunction = BackwardHookFunction
    return _BackwardHookFunction


_BackwardHookFunction = None


class BackwardHook:
    """Runs a module's full backward (pre-)hooks.

    The module's tensor inputs and outputs each pass through one identity
    ``BackwardHookFunction`` node.  In backward, a hook on the output node
    captures grad_output (running the backward pre-hooks, which may replace
    it); a hook on the input node then calls the user hooks with
    ``(module, grad_input, grad_output)``, where non-tensor arguments appear as
    None, and their result may replace grad_input.
    """

    def __init__(self, module, user_hooks, user_pre_hooks) -> None:
        self.user_hooks = user_hooks
        self.user_pre_hooks = user_pre_hooks
        self.module = module
        self.grad_outputs = None
        self.n_outputs = -1
        self.output_tensors_index = None
        self.n_inputs = -1
        self.input_tensors_index = None

    @staticmethod
    def _pack_with_none(indices, values, size):
        """Gradients of the tensor arguments spread back to argument positions."""
        packed = [None] * size
        for index, value in zip(indices, values):
            packed[index] = value
        return tuple(packed)

    @staticmethod
    def _unpack_none(indices, values):
        return tuple(values[index] for index in indices)

    def _set_user_hook(self, grad_fn) -> None:
        def hook(grad_input, _):
            if self.grad_outputs is None:
                # the gradient reached the inputs without passing through the
                # outputs (e.g. double backward): nothing to report
                return None
            result = self._pack_with_none(self.input_tensors_index, grad_input, self.n_inputs)
            for user_hook in self.user_hooks:
                out = user_hook(self.module, result, self.grad_outputs)
                if out is None:
                    continue
                if len(out) != len(result):
                    raise RuntimeError("Backward hook returned an invalid number of grad_input, "
                                       f"got {len(out)}, but expected {len(result)}")
                result = out
            self.grad_outputs = None
            return self._unpack_none(self.input_tensors_index, result)

        grad_fn.register_hook(hook)

    def _apply_on_tensors(self, fn, args):
        """Route the tensors among ``args`` through one BackwardHookFunction node and
        give that node to ``fn``; returns (new args, tensor positions), or
        (args, None) when no tensor requires grad (or grad mode is off)."""
        from ..autograd.grad_mode import is_grad_enabled
        from .._tensor import Tensor
        tensors_idx, tensors = [], []
        requires_grad = False
        for i, arg in enumerate(args):
            if isinstance(arg, Tensor):
                tensors_idx.append(i)
                tensors.append(arg)
                requires_grad |= arg.requires_grad
        if not (requires_grad and is_grad_enabled()):
            return args, None
        new_tensors = _backward_hook_function().apply(*tensors)
        if len(new_tensors) == 0:
            raise RuntimeError("Cannot set Module backward hook for a Module with no input "
                               "Tensors.")
        grad_fns = [t.grad_fn for t in new_tensors
                    if t.grad_fn is not None and t.grad_fn.name() == "BackwardHookFunctionBackward"]
        if not grad_fns:
            raise RuntimeError("Error while setting up backward hooks. Please open an issue with a "
                               "code sample to reproduce this.")
        fn(grad_fns[0])
        arg_list = list(args)
        for index, value in zip(tensors_idx, new_tensors):
            arg_list[index] = value
        out = tuple(arg_list) if type(args) is tuple else type(args)(*arg_list)
        return out, tensors_idx

    def setup_input_hook(self, args):
        """Wrap the forward arguments; their node's hook calls the user hooks."""
        result, input_idx = self._apply_on_tensors(self._set_user_hook, args)
        self.n_inputs = len(args)
        self.input_tensors_index = input_idx
        return result

    def setup_output_hook(self, args):
        """Wrap the forward result; its node's hook records grad_output."""
        def fn(grad_fn) -> None:
            def hook(_, grad_output):
                self.grad_outputs = self._pack_with_none(self.output_tensors_index, grad_output,
                                                         self.n_outputs)
                expected_len = len(self.grad_outputs)
                for user_pre_hook in self.user_pre_hooks:
                    hook_grad_outputs = user_pre_hook(self.module, self.grad_outputs)
                    if hook_grad_outputs is None:
                        continue
                    if len(hook_grad_outputs) != expected_len:
                        raise RuntimeError("Backward pre hook returned an invalid number of "
                                           f"grad_output, got {len(hook_grad_outputs)}, but "
                                           f"expected {expected_len}")
                    self.grad_outputs = hook_grad_outputs
                local_grad_outputs = self.grad_outputs
                if self.input_tensors_index is None:
                    # no input requires grad: the hooks fire here, with no grad_input
                    warnings.warn(
                        "Full backward hook is firing when gradients are computed with respect "
                        "to module outputs since no inputs require gradients. See "
                        "https://docs.pytorch.org/docs/main/generated/torch.nn.Module.html#torch."
                        "nn.Module.register_full_backward_hook for more details.", stacklevel=5)
                    grad_inputs = self._pack_with_none([], [], self.n_inputs)
                    for user_hook in self.user_hooks:
                        res = user_hook(self.module, grad_inputs, self.grad_outputs)
                        if res is not None and not (isinstance(res, tuple)
                                                    and all(el is None for el in res)):
                            raise RuntimeError(
                                "Backward hook for Modules where no input requires gradient "
                                "should always return None or None for all gradients.")
                    self.grad_outputs = None
                if local_grad_outputs is not None:
                    return tuple(local_grad_outputs[i] for i in self.output_tensors_index)
                return None

            grad_fn.register_hook(hook)

        is_tuple = isinstance(args, tuple)
        if not is_tuple:
            args = (args,)
        result, output_idx = self._apply_on_tensors(fn, args)
        self.n_outputs = len(args)
        self.output_tensors_index = output_idx
        return result if is_tuple else result[0]


def _add_hook(hooks: dict, hook, prepend: bool = False, extra_dict=None) -> RemovableHandle:
    """Store ``hook`` in ``hooks`` (an OrderedDict; first with ``prepend``) under a new
    handle's id; removing the handle also clears its id from ``extra_dict``."""
    handle = RemovableHandle(hooks, extra_dict=extra_dict)
    hooks[handle.id] = hook
    if prepend:
        hooks.move_to_end(handle.id, last=False)
    return handle

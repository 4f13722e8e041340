"""torch.optim.optimizer: the ``Optimizer`` base class every algorithm builds on.

An optimizer holds ``param_groups`` (a list of dicts: ``"params"`` plus that
group's hyperparameters, the constructor's ``defaults`` filled in) and ``state``
(a defaultdict keyed by parameter tensor).  ``step()`` is wrapped so the step
hooks run around it; ``state_dict()`` replaces tensors by integer ids (their
position across all groups) so a checkpoint does not depend on object identity,
and ``load_state_dict()`` maps the ids back onto this optimizer's parameters.

The algorithms' update functions (sgd.py, adam.py ...) are PyTorch's
single-tensor ("for-loop") implementations, op for op: the dispatcher sees
PyTorch's op sequence and the results agree with PyTorch's CPU path to float
rounding (bit for bit wherever the core kernels round as PyTorch's do).
``foreach=True`` and ``fused=True`` are accepted where PyTorch accepts them and
run that same loop: on CPU PyTorch's multi-tensor path is the same arithmetic
(ASGD's and NAdam's regroup it, so they agree to rounding), and its fused
kernels agree with it to rounding.
"""
from __future__ import annotations

import functools
import warnings
from collections import OrderedDict, defaultdict
from collections.abc import Iterable
from copy import deepcopy
from itertools import chain

import glasstorch as torch
from .._creation import typename
from ..nn.modules.module import _reset_grads
from ..utils.hooks import RemovableHandle, _add_hook

__all__ = ["Optimizer", "register_optimizer_step_pre_hook", "register_optimizer_step_post_hook"]

_global_optimizer_pre_hooks: OrderedDict = OrderedDict()
_global_optimizer_post_hooks: OrderedDict = OrderedDict()

# Device types PyTorch has fused / capturable optimizer kernels for (as its messages list them).
_FUSED_DEVICES = ["mps", "cuda", "xpu", "hpu", "cpu", "mtia", "privateuseone"]
_CAPTURABLE_DEVICES = ["cuda", "xpu", "hpu", "privateuseone", "xla"]


class _RequiredParameter:
    """Marks a hyperparameter every param group must give (no default)."""

    def __repr__(self) -> str:
        return "<required parameter>"


required = _RequiredParameter()


def _use_grad_for_differentiable(step):
    """Run ``step`` with grad mode on only for ``differentiable=True`` optimizers
    (the update is then part of the graph); otherwise under no_grad."""
    @functools.wraps(step)
    def run(self, *args, **kwargs):
        previous = torch.is_grad_enabled()
        torch.set_grad_enabled(self.defaults["differentiable"])
        try:
            return step(self, *args, **kwargs)
        finally:
            torch.set_grad_enabled(previous)
    return run


def _get_value(x):
    """A Python number from a 0-dim tensor (the step count), or ``x`` itself;
    while the step is being compiled, the tensor (so one graph serves every
    step), as PyTorch's does."""
    if torch.compiler.is_compiling():
        return x
    return x.item() if isinstance(x, torch.Tensor) else x


def _to_scalar(x):
    """A hyperparameter given as a 1-element tensor, squeezed to 0-dim."""
    if isinstance(x, torch.Tensor) and x.dim() != 0:
        return x.squeeze()
    return x


def _get_scalar_dtype(is_fused=None):
    """The dtype of ``state["step"]``: float32, or float64 under a float64 default dtype."""
    if is_fused:
        return torch.float32
    return torch.float64 if torch.get_default_dtype() == torch.float64 else torch.float32


def _device_dtype_check_for_fused(p) -> None:
    if not (p.device.type in _FUSED_DEVICES and torch.is_floating_point(p)):
        raise RuntimeError(
            "`fused=True` requires all the params to be floating point Tensors of "
            f"supported devices: {_FUSED_DEVICES} but {p.dtype} and {p.device.type}")


def _check_capturable_devices(param, *state, names="params and state_steps",
                              devices=_CAPTURABLE_DEVICES) -> None:
    """``capturable=True`` needs the parameter and its scalar ``state`` tensors (the
    step count...) on a graph-capturable device (never the case for glasstorch's CPU
    tensors: PyTorch raises the same); ``names`` says which in the message."""
    if not (all(param.device.type == t.device.type for t in state)
            and param.device.type in devices):
        raise AssertionError(f"If capturable=True, {names} must be on supported "
                             f"devices: {devices}.")


def _check_state_steps(state_steps) -> None:
    if not all(isinstance(t, torch.Tensor) for t in state_steps):
        raise RuntimeError("API has changed, `state_steps` argument must contain a list of "
                           "singleton tensors")


def _step_tensor_for_state(value, group, param):
    """A loaded step count that was saved as a number becomes a tensor again."""
    if group.get("capturable") or group.get("fused"):
        return torch.tensor(value, dtype=_get_scalar_dtype(is_fused=group.get("fused")),
                            device=param.device)
    return torch.tensor(value, dtype=_get_scalar_dtype())


# How the constructors' "Invalid ..." messages name an option (else "<name> value").
_OPTION_NAMES_IN_MESSAGES = {"lr": "learning rate", "eps": "epsilon value"}


def _check_non_negative(**options) -> None:
    """The constructors' range checks: the first option that is not ``>= 0`` (NaN
    included) raises ``ValueError("Invalid <option>: <value>")``."""
    for name, value in options.items():
        if not 0.0 <= value:
            raise ValueError(f"Invalid {_OPTION_NAMES_IN_MESSAGES.get(name, name + ' value')}: "
                             f"{value}")


def _check_betas(betas) -> None:
    """Adam-family betas: each in ``[0, 1)``."""
    for index in (0, 1):
        if not 0.0 <= betas[index] < 1.0:
            raise ValueError(f"Invalid beta parameter at index {index}: {betas[index]}")


def _check_tensor_lr(lr) -> None:
    if isinstance(lr, torch.Tensor) and lr.numel() != 1:
        raise ValueError("Tensor lr must be 1-element")


def register_optimizer_step_pre_hook(hook) -> RemovableHandle:
    """A pre hook run before every optimizer's ``step``: ``hook(optimizer, args, kwargs)``
    returning None or new ``(args, kwargs)``."""
    return _add_hook(_global_optimizer_pre_hooks, hook)


def register_optimizer_step_post_hook(hook) -> RemovableHandle:
    """A post hook run after every optimizer's ``step``: ``hook(optimizer, args, kwargs)``."""
    return _add_hook(_global_optimizer_post_hooks, hook)


class Optimizer:
    r"""Base class for all optimizers.

    Args:
        params (iterable): tensors, ``(name, tensor)`` pairs, or dicts defining
            parameter groups (each with a ``"params"`` entry).
        defaults (dict): default values of the optimization options, used when
            a parameter group doesn't specify them.
    """

    def __init__(self, params, defaults) -> None:
        self.defaults = defaults
        self._optimizer_step_pre_hooks: OrderedDict = OrderedDict()
        self._optimizer_step_post_hooks: OrderedDict = OrderedDict()
        self._optimizer_state_dict_pre_hooks: OrderedDict = OrderedDict()
        self._optimizer_state_dict_post_hooks: OrderedDict = OrderedDict()
        self._optimizer_load_state_dict_pre_hooks: OrderedDict = OrderedDict()
        self._optimizer_load_state_dict_post_hooks: OrderedDict = OrderedDict()
        self._patch_step_function()

        if isinstance(params, torch.Tensor):
            raise TypeError("params argument given to the optimizer should be an iterable of "
                            "Tensors or dicts, but got " + typename(params))
        self.state: defaultdict = defaultdict(dict)
        self.param_groups: list = []

        param_groups = list(params)
        if len(param_groups) == 0:
            raise ValueError("optimizer got an empty parameter list")
        if not isinstance(param_groups[0], dict):
            param_groups = [{"params": param_groups}]
        for param_group in param_groups:
            self.add_param_group(param_group)

    # -- pickling -----------------------------------------------------------------------

    def __getstate__(self):
        return {"defaults": self.defaults, "state": self.state,
                "param_groups": self.param_groups}

    def __setstate__(self, state) -> None:
        self.__dict__.update(state)
        for name in ("_optimizer_step_pre_hooks", "_optimizer_step_post_hooks",
                     "_optimizer_state_dict_pre_hooks", "_optimizer_state_dict_post_hooks",
                     "_optimizer_load_state_dict_pre_hooks",
                     "_optimizer_load_state_dict_post_hooks"):
            self.__dict__.setdefault(name, OrderedDict())
        self._patch_step_function()
        self.defaults.setdefault("differentiable", False)

    def _fill_missing_group_options(self, options: dict) -> None:
        """Give each group the options a checkpoint from an older PyTorch lacks."""
        for group in self.param_groups:
            for name, value in options.items():
                group.setdefault(name, value)

    def _restore_step_tensors(self, keys=("step",)) -> None:
        """Step counts (and the other scalar ``keys``) saved as numbers (older
        checkpoints) become tensors again."""
        for group in self.param_groups:
            for p in group["params"]:
                p_state = self.state.get(p, [])
                for key in keys if len(p_state) != 0 else ():
                    if not torch.is_tensor(p_state[key]):
                        p_state[key] = _step_tensor_for_state(float(p_state[key]), group, p)

    def __repr__(self) -> str:
        text = self.__class__.__name__ + " ("
        for i, group in enumerate(self.param_groups):
            text += f"\nParameter Group {i}\n"
            for key in sorted(group.keys()):
                if key != "params":
                    text += f"    {key}: {group[key]}\n"
        return text + ")"

    # -- step and its hooks -------------------------------------------------------------

    def _optimizer_step_code(self) -> None:
        """Called after each ``step`` (PyTorch's profiler hooks into it); does nothing."""

    @staticmethod
    def profile_hook_step(func):
        """Wrap a ``step`` so the global and per-optimizer step hooks run around it,
        and the step is a ``record_function`` range (a profiler row, as in PyTorch)."""
        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            self = args[0]
            for pre_hook in chain(_global_optimizer_pre_hooks.values(),
                                  self._optimizer_step_pre_hooks.values()):
                result = pre_hook(self, args, kwargs)
                if result is not None:
                    if isinstance(result, tuple) and len(result) == 2:
                        args, kwargs = result
                    else:
                        raise RuntimeError(f"{func} must return None or a tuple of "
                                           f"(new_args, new_kwargs), but got {result}.")
            from ..autograd.profiler import record_function
            with record_function(f"Optimizer.step#{self.__class__.__name__}.step"):
                out = func(*args, **kwargs)
                self._optimizer_step_code()
            for post_hook in chain(self._optimizer_step_post_hooks.values(),
                                   _global_optimizer_post_hooks.values()):
                post_hook(self, args, kwargs)
            return out
        return wrapper

    def _patch_step_function(self) -> None:
        """Wrap this class's ``step`` with the hooks, once per class."""
        self._zero_grad_profile_name = f"Optimizer.zero_grad#{self.__class__.__name__}.zero_grad"
        if not getattr(self.__class__.step, "hooked", None):
            self.__class__.step = self.profile_hook_step(self.__class__.step)
            self.__class__.step.hooked = True

    def register_step_pre_hook(self, hook) -> RemovableHandle:
        """``hook(optimizer, args, kwargs)`` before ``step``; may return new (args, kwargs)."""
        return _add_hook(self._optimizer_step_pre_hooks, hook)

    def register_step_post_hook(self, hook) -> RemovableHandle:
        """``hook(optimizer, args, kwargs)`` after ``step``."""
        return _add_hook(self._optimizer_step_post_hooks, hook)

    def step(self, closure=None):
        """Perform a single optimization step (the algorithms override this)."""
        raise NotImplementedError

    @staticmethod
    def _evaluate_closure(closure):
        """The loss ``step(closure)`` returns: ``closure()`` run with grad enabled, or None."""
        if closure is None:
            return None
        with torch.enable_grad():
            return closure()

    def _check_fused_options(self, fused, foreach, differentiable) -> None:
        """``fused=True`` excludes ``differentiable`` and ``foreach``; a fused step
        takes AMP's gradient scale itself."""
        if fused:
            if differentiable:
                raise RuntimeError("`fused` does not support `differentiable`")
            if foreach:
                raise RuntimeError("`fused` and `foreach` cannot be `True` together.")
            self._step_supports_amp_scaling = True

    @staticmethod
    def _gather_params_with_grad(group, params_with_grad, grads, sparse_error: str) -> bool:
        """Append the parameters of ``group`` that have a gradient to ``params_with_grad``
        and their gradients to ``grads`` (a sparse one raises ``sparse_error``); returns
        whether any of them is complex."""
        has_complex = False
        for p in group["params"]:
            if p.grad is None:
                continue
            if p.grad.is_sparse:
                raise RuntimeError(sparse_error)
            has_complex |= torch.is_complex(p)
            params_with_grad.append(p)
            grads.append(p.grad)
        return has_complex

    def _check_fused_param_once(self, param) -> None:
        """The fused device/dtype check, made on the first parameter with a gradient."""
        if getattr(self, "_need_device_dtype_check_for_fused", True):
            _device_dtype_check_for_fused(param)
            self._need_device_dtype_check_for_fused = False

    # -- state_dict ---------------------------------------------------------------------

    def register_state_dict_pre_hook(self, hook, prepend: bool = False) -> RemovableHandle:
        """``hook(optimizer)`` before ``state_dict`` builds the dict."""
        return _add_hook(self._optimizer_state_dict_pre_hooks, hook, prepend)

    def register_state_dict_post_hook(self, hook, prepend: bool = False) -> RemovableHandle:
        """``hook(optimizer, state_dict)``; may return a replacement dict."""
        return _add_hook(self._optimizer_state_dict_post_hooks, hook, prepend)

    def state_dict(self):
        """``{"state": {id: {...}}, "param_groups": [{..., "params": [ids]}]}``: each
        parameter is replaced by its position across all groups (a parameter
        already seen in an earlier group keeps that group's id)."""
        for pre_hook in self._optimizer_state_dict_pre_hooks.values():
            pre_hook(self)

        ids: dict = {}   # id(param) -> its index
        start = 0        # a group's first index: the count of entries in the groups before it

        def pack_group(group):
            nonlocal start
            packed = {k: v for k, v in group.items() if k != "params"}
            # a parameter repeated within the group takes its last index there
            ids.update({id(p): index for index, p in enumerate(group["params"], start)
                        if id(p) not in ids})
            packed["params"] = [ids[id(p)] for p in group["params"]]
            start += len(packed["params"])
            return packed

        param_groups = [pack_group(g) for g in self.param_groups]
        packed_state = {(ids[id(k)] if isinstance(k, torch.Tensor) else k): v
                        for k, v in self.state.items()}
        state_dict = {"state": packed_state, "param_groups": param_groups}
        for post_hook in self._optimizer_state_dict_post_hooks.values():
            result = post_hook(self, state_dict)
            if result is not None:
                state_dict = result
        return state_dict

    @staticmethod
    def _process_value_according_to_param_policy(param, value, param_id, param_groups,
                                                 key=None):
        """A loaded state tensor moved to its parameter's device; floating-point
        state takes the parameter's dtype too, except the step count."""
        fused = capturable = False
        for group in param_groups:
            if param_id in group["params"]:
                fused = group.get("fused", False)
                capturable = group.get("capturable", False)
                break
        if key == "step":
            if capturable or fused:
                return value.to(dtype=torch.float32, device=param.device)
            return value
        if param.is_floating_point():
            return value.to(dtype=param.dtype, device=param.device)
        return value.to(device=param.device)

    def register_load_state_dict_pre_hook(self, hook, prepend: bool = False) -> RemovableHandle:
        """``hook(optimizer, state_dict)`` before loading; may return a replacement dict."""
        return _add_hook(self._optimizer_load_state_dict_pre_hooks, hook, prepend)

    def register_load_state_dict_post_hook(self, hook, prepend: bool = False) -> RemovableHandle:
        """``hook(optimizer)`` after loading."""
        return _add_hook(self._optimizer_load_state_dict_post_hooks, hook, prepend)

    def load_state_dict(self, state_dict) -> None:
        """Load a ``state_dict()``: groups are matched by position, parameters by
        their order within the groups (ids are not checked)."""
        state_dict = state_dict.copy()
        for pre_hook in self._optimizer_load_state_dict_pre_hooks.values():
            result = pre_hook(self, state_dict)
            if result is not None:
                state_dict = result

        groups = self.param_groups
        saved_groups = deepcopy(state_dict["param_groups"])
        if len(groups) != len(saved_groups):
            raise ValueError("loaded state dict has a different number of parameter groups")
        if any(len(g["params"]) != len(s["params"]) for g, s in zip(groups, saved_groups)):
            raise ValueError("loaded state dict contains a parameter group that doesn't match "
                             "the size of optimizer's group")

        id_map = dict(zip(chain.from_iterable(g["params"] for g in saved_groups),
                          chain.from_iterable(g["params"] for g in groups)))

        def cast(param, value, param_id=None, key=None):
            """A deep copy of ``value`` with its tensors placed as ``param`` needs."""
            if isinstance(value, torch.Tensor):
                return Optimizer._process_value_according_to_param_policy(
                    param, value, param_id, state_dict["param_groups"], key)
            if isinstance(value, dict):
                return {k: cast(param, v, param_id, key=k) for k, v in value.items()}
            if isinstance(value, Iterable):
                return type(value)(cast(param, v, param_id) for v in value)
            return value

        state: defaultdict = defaultdict(dict)
        for k, v in state_dict["state"].items():
            if k in id_map:
                param = id_map[k]
                state[param] = cast(param, v, param_id=k)
            else:   # state not tied to a parameter is kept as it is
                state[k] = v

        def update_group(group, new_group):
            new_group["params"] = group["params"]
            if "param_names" in group and "param_names" not in new_group:
                new_group["param_names"] = group["param_names"]
            return new_group

        param_groups = [update_group(g, ng) for g, ng in zip(groups, saved_groups)]
        self.__setstate__({"state": state, "param_groups": param_groups})
        for post_hook in self._optimizer_load_state_dict_post_hooks.values():
            post_hook(self)

    # -- gradients and groups -----------------------------------------------------------

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Reset the gradients: drop them (default) or detach and zero them in place."""
        from ..autograd.profiler import record_function
        with record_function(self._zero_grad_profile_name):
            _reset_grads((p for group in self.param_groups for p in group["params"]),
                         set_to_none)

    def add_param_group(self, param_group) -> None:
        """Add a group of parameters (with its own options) to ``param_groups``."""
        if not isinstance(param_group, dict):
            raise TypeError(f"param_group must be a dict, but got {type(param_group)}")

        params = param_group["params"]
        if isinstance(params, torch.Tensor):
            params = [params]
        elif isinstance(params, set):
            raise TypeError("optimizer parameters need to be organized in ordered collections, "
                            "but the ordering of tensors in sets will change between runs. "
                            "Please use a list instead.")
        else:
            params = list(params)

        tensors, names = [], []
        for param in params:
            if isinstance(param, tuple):   # (name, tensor) from named_parameters()
                names.append(param[0])
                tensors.append(param[1])
            else:
                tensors.append(param)
        param_group["params"] = tensors
        if names:
            if len(names) != len(tensors):
                raise ValueError("all optimizer params should be with/without names. Some param "
                                 "names are missing")
            param_group["param_names"] = names

        for param in tensors:
            if not isinstance(param, torch.Tensor):
                raise TypeError("optimizer can only optimize Tensors, but one of the params is "
                                + typename(param))
            if not self.defaults.get("differentiable", None) and \
                    not (param.is_leaf or param.retains_grad):
                raise ValueError("can't optimize a non-leaf Tensor")

        for name, default in self.defaults.items():
            if default is required and name not in param_group:
                raise ValueError("parameter group didn't specify a value of required "
                                 f"optimization parameter {name}")
            param_group.setdefault(name, default)

        if len(tensors) != len(set(tensors)):
            warnings.warn("optimizer contains a parameter group with duplicate parameters; "
                          "in future, this will cause an error; see "
                          "github.com/pytorch/pytorch/issues/40967 for more information",
                          stacklevel=3)

        seen: set = set()
        for group in self.param_groups:
            seen.update(group["params"])
            if ("param_names" in param_group) != ("param_names" in group):
                kind = "with names" if "param_names" in param_group else "without names"
                raise ValueError("all optimizer param groups should be with/without names. "
                                 f"cannot add param group {kind} to the optimizer")
        if not seen.isdisjoint(tensors):
            raise ValueError("some parameters appear in more than one parameter group")

        self.param_groups.append(param_group)

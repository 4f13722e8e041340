"""torch.optim.swa_utils: weight averaging (SWA, EMA) of a model's parameters.

``AveragedModel`` keeps a deep copy of a model whose parameters are a running
average of the model's: ``update_parameters(model)`` folds the model's current
values in (the first call copies them).  The average is SWA's equal-weight mean
by default, ``avg = avg + (p - avg) / (n + 1)``, or any rule given as
``avg_fn(avg, p, n)`` / ``multi_avg_fn(avgs, ps, n)`` (``get_ema_*`` build the
exponential moving average ``avg = decay * avg + (1 - decay) * p``).
``update_bn`` recomputes batch-norm running statistics for the averaged
weights, and ``SWALR`` anneals each group's learning rate to a fixed SWA rate.
"""
from __future__ import annotations

import itertools
import math
from copy import deepcopy

import glasstorch as torch

from ..nn.modules.batchnorm import _BatchNorm
from ..nn.modules.module import Module
from ..autograd.grad_mode import no_grad
from .lr_scheduler import LRScheduler, _format_param, _warn_get_lr_called_within_step

__all__ = ["AveragedModel", "update_bn", "SWALR", "get_ema_multi_avg_fn",
           "get_swa_multi_avg_fn", "get_ema_avg_fn", "get_swa_avg_fn"]


def _check_decay(decay):
    if decay < 0.0 or decay > 1.0:
        raise ValueError(f"Invalid decay value {decay} provided. Please provide a value in "
                         "[0,1] range.")


def _is_inexact(t) -> bool:
    return torch.is_floating_point(t) or torch.is_complex(t)


def get_ema_multi_avg_fn(decay=0.999):
    """EMA over lists of tensors, in place: ``avg.lerp_(p, 1 - decay)``."""
    _check_decay(decay)

    @no_grad()
    def ema_update(ema_params, current_params, _num_averaged):
        for ema, current in zip(ema_params, current_params):
            if _is_inexact(ema):
                ema.lerp_(current, 1 - decay)
            else:
                ema.copy_(ema * decay + current * (1 - decay))
    return ema_update


def get_swa_multi_avg_fn():
    """SWA's running mean over lists of tensors, in place."""
    @no_grad()
    def swa_update(averaged_params, current_params, num_averaged):
        for avg, current in zip(averaged_params, current_params):
            if _is_inexact(avg):
                avg.lerp_(current, float(1 / (num_averaged + 1)))
            elif isinstance(num_averaged, torch.Tensor):
                avg.addcdiv_(current - avg, num_averaged + 1)
            else:
                avg.add_(current - avg, alpha=1.0 / (num_averaged + 1))
    return swa_update


def get_ema_avg_fn(decay=0.999):
    """EMA of one tensor: returns ``decay * avg + (1 - decay) * p``."""
    _check_decay(decay)

    @no_grad()
    def ema_update(ema_param, current_param, _num_averaged):
        return decay * ema_param + (1 - decay) * current_param
    return ema_update


def get_swa_avg_fn():
    """SWA's running mean of one tensor: returns ``avg + (p - avg) / (n + 1)``."""
    @no_grad()
    def swa_update(averaged_param, current_param, num_averaged):
        return averaged_param + (current_param - averaged_param) / (num_averaged + 1)
    return swa_update


class AveragedModel(Module):
    """A copy of ``model`` whose parameters (and, with ``use_buffers``, buffers)
    hold a running average; ``n_averaged`` counts the models folded in."""

    def __init__(self, model, device=None, avg_fn=None, multi_avg_fn=None, use_buffers=False):
        super().__init__()
        if avg_fn is not None and multi_avg_fn is not None:
            raise AssertionError("Only one of avg_fn and multi_avg_fn should be provided")
        self.module = deepcopy(model)
        if device is not None:
            self.module = self.module.to(device)
        self.register_buffer("n_averaged", torch.tensor(0, dtype=torch.long, device=device))
        self.avg_fn = avg_fn
        self.multi_avg_fn = multi_avg_fn
        self.use_buffers = use_buffers

    def forward(self, *args, **kwargs):
        return self.module(*args, **kwargs)

    def _averaged(self, module):
        if self.use_buffers:
            return itertools.chain(module.parameters(), module.buffers())
        return module.parameters()

    def update_parameters(self, model):
        """Fold ``model``'s current values into the average (the first call copies them)."""
        averaged = [p.detach() for p in self._averaged(self.module)]
        current = [p.detach().to(a.device) for a, p in zip(averaged, self._averaged(model))]
        if self.n_averaged == 0:
            for a, p in zip(averaged, current):
                a.copy_(p)
        else:
            n = self.n_averaged
            if self.multi_avg_fn is not None:
                self.multi_avg_fn(averaged, current, n)
            else:
                # (CPU has no foreach kernels: PyTorch averages one tensor at a time)
                avg_fn = self.avg_fn if self.avg_fn is not None else get_swa_avg_fn()
                with torch.no_grad():
                    for a, p in zip(averaged, current):
                        a.copy_(avg_fn(a, p, n.to(a.device)))
        if not self.use_buffers:
            # buffers follow the model as they are (batch-norm statistics: see update_bn)
            for b_avg, b_model in zip(self.module.buffers(), model.buffers()):
                b_avg.detach().copy_(b_model.detach().to(b_avg.device))
        self.n_averaged += 1


@no_grad()
def update_bn(loader, model, device=None):
    """Recompute every batch norm's running statistics with one pass over
    ``loader`` (a cumulative average: momentum None), then restore the modes."""
    momenta = {}
    for module in model.modules():
        if isinstance(module, _BatchNorm):
            module.reset_running_stats()
            momenta[module] = module.momentum
    if not momenta:
        return
    was_training = model.training
    model.train()
    for module in momenta:
        module.momentum = None
    for batch in loader:
        if isinstance(batch, (list, tuple)):
            batch = batch[0]
        if device is not None:
            batch = batch.to(device)
        model(batch)
    for module, momentum in momenta.items():
        module.momentum = momentum
    model.train(was_training)


class SWALR(LRScheduler):
    """Anneal each group's learning rate from its value to ``swa_lr`` over
    ``anneal_epochs`` steps (cosine or linear), then hold it there."""

    def __init__(self, optimizer, swa_lr, anneal_epochs=10, anneal_strategy="cos",
                 last_epoch=-1):
        for lr, group in zip(_format_param("swa_lr", optimizer, swa_lr), optimizer.param_groups):
            group["swa_lr"] = lr
        if anneal_strategy not in ["cos", "linear"]:
            raise ValueError("anneal_strategy must be one of 'cos' or 'linear', "
                             f"instead got {anneal_strategy}")
        self._set_anneal_func(anneal_strategy)
        if not isinstance(anneal_epochs, int) or anneal_epochs < 0:
            raise ValueError(f"anneal_epochs must be equal or greater than 0, got {anneal_epochs}")
        self.anneal_epochs = anneal_epochs
        super().__init__(optimizer, last_epoch)

    @staticmethod
    def _linear_anneal(t):
        return t

    @staticmethod
    def _cosine_anneal(t):
        return (1 - math.cos(math.pi * t)) / 2

    @staticmethod
    def _get_initial_lr(lr, swa_lr, alpha):
        """The rate before annealing, recovered from the current one."""
        if alpha == 1:
            return swa_lr
        return (lr - alpha * swa_lr) / (1 - alpha)

    def _fraction(self, step):
        return max(0, min(1, step / max(1, self.anneal_epochs)))

    def get_lr(self):
        _warn_get_lr_called_within_step(self)
        step = self._step_count - 1
        if self.anneal_epochs == 0:
            step = max(1, step)
        prev_alpha = self.anneal_func(self._fraction(step - 1))
        alpha = self.anneal_func(self._fraction(step))
        return [group["swa_lr"] * alpha
                + self._get_initial_lr(group["lr"], group["swa_lr"], prev_alpha) * (1 - alpha)
                for group in self.optimizer.param_groups]

    def _set_anneal_func(self, anneal_strategy):
        self._anneal_strategy = anneal_strategy
        self.anneal_func = self._cosine_anneal if anneal_strategy == "cos" else self._linear_anneal

    def state_dict(self):
        return {key: value for key, value in self.__dict__.items()
                if key not in ("optimizer", "anneal_func")}

    def load_state_dict(self, state_dict):
        self.__dict__.update(state_dict)
        self._set_anneal_func(self._anneal_strategy)

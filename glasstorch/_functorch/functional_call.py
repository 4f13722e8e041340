"""``torch.func.stack_module_state`` (torch/_functorch/functional_call.py): the
parameters and buffers of same-class modules stacked along a new first dim,
for running an ensemble as one model under ``vmap``."""
from __future__ import annotations

__all__ = ["stack_module_state"]


def stack_module_state(models):
    """(params, buffers): for each name, the models' tensors stacked; stacked
    parameters are new leaves (they require grad when the originals do)."""
    if len(models) == 0:
        raise RuntimeError("stack_module_state: Expected at least one model, got 0.")
    if not (all(m.training for m in models) or all(not m.training for m in models)):
        raise RuntimeError("stack_module_state: Expected all models to have the same "
                           "training/eval mode.")
    if not all(type(m) is type(models[0]) for m in models):
        raise RuntimeError("stack_module_state: Expected all models to be of the same class.")
    params = [dict(m.named_parameters()) for m in models]
    buffers = [dict(m.named_buffers()) for m in models]
    return ({k: _stacked_leaf([p[k] for p in params], k) for k in params[0]},
            {k: _stacked_leaf([b[k] for b in buffers], k) for k in buffers[0]})


def _stacked_leaf(tensors, name):
    from .. import stack
    requires = [t.requires_grad for t in tensors]
    if any(requires) and not all(requires):
        raise RuntimeError(f"Expected {name} from each model to have the same .requires_grad")
    result = stack(tensors)
    return result.detach().requires_grad_() if all(requires) else result

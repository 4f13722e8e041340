"""Less common torch.nn layers against real PyTorch: GaussianNLLLoss (values,
gradients, var shapes, errors)."""
import numpy as np
import pytest

from .differential import differential


def _tensors(lib, *shapes, seed=0, positive=()):
    rng = np.random.default_rng(seed)
    out = []
    for i, shape in enumerate(shapes):
        values = rng.standard_normal(shape).astype(np.float32)
        if i in positive:
            values = np.abs(values)
        out.append(lib.from_numpy(values).requires_grad_())
    return out


@pytest.mark.parametrize("var_shape", [(4, 3), (4,), (4, 1), "float"])
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("full", [False, True])
def test_gaussian_nll_loss(var_shape, reduction, full):
    def scenario(lib):
        x, y = _tensors(lib, (4, 3), (4, 3))
        var = 0.7 if var_shape == "float" else _tensors(lib, var_shape, seed=1, positive=(0,))[0]
        loss = lib.nn.GaussianNLLLoss(full=full, reduction=reduction)(x, y, var)
        loss.sum().backward()
        return loss, x.grad, y.grad, None if var_shape == "float" else var.grad
    differential(scenario)


@pytest.mark.parametrize("case", ["negative_float", "negative_tensor", "bad_size", "bad_reduction"])
def test_gaussian_nll_loss_errors(case):
    def scenario(lib):
        x, y = lib.zeros(4, 3), lib.zeros(4, 3)
        var = {"negative_float": -1.0, "negative_tensor": -lib.ones(4, 3),
               "bad_size": lib.ones(2, 3), "bad_reduction": lib.ones(4, 3)}[case]
        reduction = "avg" if case == "bad_reduction" else "mean"
        return lib.nn.functional.gaussian_nll_loss(x, y, var, reduction=reduction)
    differential(scenario, may_raise=True)


def test_gaussian_nll_loss_repr():
    differential(lambda lib: repr(lib.nn.GaussianNLLLoss(full=True, eps=1e-3)))

"""torch.utils.swap_tensors, torch.__future__'s conversion switches (their effect
on Module._apply / .to() / load_state_dict), and load_state_dict(assign=True),
against real PyTorch."""
from __future__ import annotations

import weakref

import pytest

from .differential import differential


@pytest.fixture(autouse=True)
def _reset_future_flags(torch):
    import glasstorch as gt
    yield
    for lib in (torch, gt):
        lib.__future__.set_swap_module_params_on_conversion(False)
        lib.__future__.set_overwrite_module_params_on_conversion(False)


def test_swap_tensors_contents_class_and_attributes():
    def scenario(lib):
        a = lib.nn.Parameter(lib.tensor([1., 2.]))
        b = lib.arange(6, dtype=lib.float64).view(2, 3)
        b.note = "b's"
        ida, idb = id(a), id(b)
        lib.utils.swap_tensors(a, b)
        return (id(a) == ida, id(b) == idb, type(a).__name__, type(b).__name__, a, b,
                a.note, hasattr(b, "note"), a.requires_grad, b.requires_grad, a.stride())
    differential(scenario)


def test_swap_tensors_errors():
    def scenario(lib):
        out = []
        a, b = lib.ones(2), lib.zeros(2)
        ref = weakref.ref(a)
        for args in ((a, b), (b, a)):
            try:
                lib.utils.swap_tensors(*args)
            except RuntimeError as e:
                out.append(str(e))
        del ref
        return out
    differential(scenario)


def test_swap_tensors_poisons_accumulate_grad():
    def scenario(lib):
        p = lib.ones(2, requires_grad=True)
        out = (p * 2).sum()
        lib.utils.swap_tensors(p, lib.zeros(2, requires_grad=True))
        try:
            out.backward()
            return "ran"
        except RuntimeError as e:
            return str(e)
    differential(scenario)


@pytest.mark.parametrize("flag", [None, "overwrite", "swap"])
def test_module_conversion_switches(flag):
    def scenario(lib):
        lib.manual_seed(0)
        if flag == "overwrite":
            lib.__future__.set_overwrite_module_params_on_conversion(True)
        if flag == "swap":
            lib.__future__.set_swap_module_params_on_conversion(True)
        m = lib.nn.Linear(2, 2)
        m(lib.ones(1, 2)).sum().backward()
        weight, grad = m.weight, m.weight.grad
        m.double()
        return (lib.__future__.get_overwrite_module_params_on_conversion(),
                lib.__future__.get_swap_module_params_on_conversion(), m.weight is weight,
                m.weight.grad is grad, weight.dtype, grad.dtype, m.weight.dtype,
                type(m.weight).__name__, m.weight.grad, m.weight.is_leaf)
    differential(scenario)


@pytest.mark.parametrize("swap", [False, True])
@pytest.mark.parametrize("assign", [False, True])
def test_load_state_dict_assign_and_swap(swap, assign):
    def scenario(lib):
        lib.manual_seed(0)
        lib.__future__.set_swap_module_params_on_conversion(swap)
        m = lib.nn.BatchNorm1d(2)
        m.weight.requires_grad_(False)
        weight = m.weight
        source = {"weight": lib.tensor([3., 4.], dtype=lib.float64),
                  "bias": lib.nn.Parameter(lib.tensor([1., 2.])),
                  "running_mean": lib.tensor([5., 6.]), "running_var": lib.tensor([7., 8.]),
                  "num_batches_tracked": lib.tensor(3)}
        result = m.load_state_dict(source, assign=assign)
        return (repr(result), m.weight is weight, m.weight is source["weight"],
                m.bias is source["bias"], m.running_mean is source["running_mean"],
                type(m.weight).__name__, m.weight, m.weight.requires_grad, m.bias, m.running_var,
                m.num_batches_tracked)
    differential(scenario)


def test_load_state_dict_swap_module_load_override():
    def scenario(lib):
        lib.__future__.set_swap_module_params_on_conversion(True)

        class Returns(lib.Tensor):
            def module_load(self, other, assign=False):
                return self

        m = lib.nn.Linear(1, 1)
        m.weight = lib.nn.Parameter(lib.ones(1, 1).as_subclass(Returns))
        try:
            m.load_state_dict({"weight": lib.ones(1, 1), "bias": lib.ones(1)})
        except RuntimeError as e:
            return str(e).split("\n\t")[1][:120]
    differential(scenario)

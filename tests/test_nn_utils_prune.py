"""torch.nn.utils.prune against real PyTorch: masks (seeded random ones
included), reparametrized modules, containers, global pruning, removal, errors."""
from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

import glasstorch.nn.utils.prune  # noqa: F401  (a submodule imported on demand, as in torch)
import torch.nn.utils.prune  # noqa: F401

from .differential import differential


def _state(lib, m, name="weight"):
    """What pruning left on ``m``: parameter/buffer names, mask, pruned tensor, hooks."""
    return ([n for n, _ in m.named_parameters()], [n for n, _ in m.named_buffers()],
            getattr(m, name + "_mask", None), getattr(m, name),
            [type(h).__name__ for h in m._forward_pre_hooks.values()],
            lib.nn.utils.prune.is_pruned(m))


@pytest.mark.parametrize("method,args", [
    ("random_unstructured", dict(amount=0.3)), ("random_unstructured", dict(amount=5)),
    ("l1_unstructured", dict(amount=0.5)), ("l1_unstructured", dict(amount=0)),
    ("random_structured", dict(amount=2, dim=0)), ("random_structured", dict(amount=0.5, dim=-1)),
    ("ln_structured", dict(amount=0.5, n=2, dim=0)), ("ln_structured", dict(amount=1, n=1, dim=1)),
    ("ln_structured", dict(amount=2, n=float("inf"), dim=-1)), ("identity", {})])
def test_functional_pruning(method, args):
    def scenario(lib):
        lib.manual_seed(0)
        m = lib.nn.Linear(5, 4)
        getattr(lib.nn.utils.prune, method)(m, "weight", **args)
        out = m(lib.ones(2, 5))
        out.sum().backward()
        return _state(lib, m), out, m.weight_orig.grad
    differential(scenario)


def test_forward_pre_hook_recomputes_after_update():
    def scenario(lib):
        lib.manual_seed(0)
        m = lib.nn.Conv2d(2, 3, 2)
        lib.nn.utils.prune.l1_unstructured(m, "bias", amount=1)
        with lib.no_grad():
            m.bias_orig.fill_(2.0)
        m(lib.ones(1, 2, 3, 3))
        return _state(lib, m, "bias")
    differential(scenario)


@given(seed=st.integers(0, 1000), amount=st.floats(0, 1), rows=st.integers(2, 5),
       cols=st.integers(2, 5))
def test_seeded_random_pruning_matches(seed, amount, rows, cols):
    def scenario(lib):
        lib.manual_seed(seed)
        m = lib.nn.Linear(cols, rows)
        lib.nn.utils.prune.random_unstructured(m, "weight", amount=amount)
        lib.nn.utils.prune.random_structured(m, "weight", amount=amount, dim=0)
        return m.weight_mask, type(m._forward_pre_hooks[next(iter(m._forward_pre_hooks))])
    differential(scenario, normalize=lambda o: (o[0], (o[1][0], o[1][1].__name__)) + o[2:])


def test_iterative_pruning_container_and_remove():
    def scenario(lib):
        lib.manual_seed(0)
        prune = lib.nn.utils.prune
        m = lib.nn.Linear(6, 4)
        prune.l1_unstructured(m, "weight", amount=0.25)
        prune.ln_structured(m, "weight", amount=1, n=2, dim=0)
        prune.random_unstructured(m, "weight", amount=2)
        hook = next(iter(m._forward_pre_hooks.values()))
        kinds = [type(h).__name__ for h in hook]
        mask = m.weight_mask.clone()
        prune.remove(m, "weight")
        try:
            prune.remove(m, "weight")
        except ValueError as e:
            err = str(e)
        return (kinds, len(hook), mask, [n for n, _ in m.named_parameters()],
                list(m.state_dict()), m.weight, prune.is_pruned(m), err)
    differential(scenario)


def test_importance_scores_custom_mask_and_global():
    def scenario(lib):
        lib.manual_seed(0)
        prune = lib.nn.utils.prune
        net = lib.nn.Sequential(lib.nn.Linear(4, 3), lib.nn.Linear(3, 2))
        scores = lib.arange(12.).view(3, 4)
        prune.l1_unstructured(net[0], "weight", amount=3, importance_scores=scores)
        prune.custom_from_mask(net[1], "bias", mask=lib.tensor([0., 1.]))
        params = [(net[0], "weight"), (net[1], "weight")]
        prune.global_unstructured(params, pruning_method=prune.L1Unstructured, amount=0.5)
        prune.global_unstructured([(net[1], "bias")], prune.RandomUnstructured, amount=1)
        return (_state(lib, net[0]), _state(lib, net[1]), net[1].bias_mask, list(net.state_dict()),
                prune.is_pruned(net))
    differential(scenario)


def test_method_objects_prune_and_compute_mask():
    def scenario(lib):
        lib.manual_seed(0)
        prune = lib.nn.utils.prune
        t = lib.randn(3, 4)
        out = [prune.L1Unstructured(amount=0.5).prune(t),
               prune.LnStructured(amount=1, n=1, dim=1).compute_mask(t, lib.ones(3, 4)),
               prune.RandomStructured(amount=0.4, dim=0).prune(t),
               prune.CustomFromMask(lib.tensor([1., 0., 1., 0.])).prune(lib.ones(4)),
               prune.Identity().prune(t, importance_scores=t)]
        c = prune.PruningContainer()
        c._tensor_name = "w"
        m1 = prune.L1Unstructured(2)
        m1._tensor_name = "w"
        c.add_pruning_method(m1)
        out.append(c.compute_mask(t, lib.ones(3, 4)))
        return out
    differential(scenario)


@pytest.mark.parametrize("case", ["amount_type", "amount_float", "amount_negative",
                                  "amount_too_big", "structured_1d", "bad_dim", "scores_shape",
                                  "global_not_iterable", "global_scores_type",
                                  "global_structured", "container_name", "container_type",
                                  "custom_shape"])
def test_prune_errors(case):
    def scenario(lib):
        prune = lib.nn.utils.prune
        m = lib.nn.Linear(3, 2)
        if case == "amount_type":
            prune.random_unstructured(m, "weight", amount="a")
        elif case == "amount_float":
            prune.l1_unstructured(m, "weight", amount=1.5)
        elif case == "amount_negative":
            prune.l1_unstructured(m, "weight", amount=-1)
        elif case == "amount_too_big":
            prune.l1_unstructured(m, "weight", amount=7)
        elif case == "structured_1d":
            prune.ln_structured(m, "bias", amount=1, n=2, dim=0)
        elif case == "bad_dim":
            prune.random_structured(m, "weight", amount=1, dim=2)
        elif case == "scores_shape":
            prune.l1_unstructured(m, "weight", amount=1, importance_scores=lib.ones(3))
        elif case == "global_not_iterable":
            prune.global_unstructured(3, prune.L1Unstructured, amount=1)
        elif case == "global_scores_type":
            prune.global_unstructured([(m, "weight")], prune.L1Unstructured,
                                      importance_scores=[1], amount=1)
        elif case == "global_structured":
            prune.global_unstructured([(m, "weight")], prune.RandomStructured, amount=1)
        elif case == "container_name":
            a, b = prune.Identity(), prune.Identity()
            a._tensor_name, b._tensor_name = "x", "y"
            prune.PruningContainer(a).add_pruning_method(b)
        elif case == "container_type":
            a = prune.Identity()
            a._tensor_name = "x"
            prune.PruningContainer(a).add_pruning_method(3)
        elif case == "custom_shape":
            prune.custom_from_mask(m, "weight", mask=lib.ones(2))
        return [n for n, _ in m.named_parameters()]

    def blank_objects(outcome):
        # container reprs and class reprs carry addresses and module paths
        if outcome[0] == "raised":
            message = outcome[2].split(" to PruningContainer")[0].split("Found method")[0]
            return outcome[:2] + (message,) + outcome[3:]
        return outcome
    outcome = differential(scenario, may_raise=True, normalize=blank_objects)
    assert outcome[0] == "raised"

"""torch.nn.utils.parametrize / parametrizations, the legacy weight_norm and
spectral_norm hooks, fusion, memory_format and skip_init, against real PyTorch."""
from __future__ import annotations

import copy
import pickle

import pytest
from hypothesis import given
from hypothesis import strategies as st

import glasstorch as gt

from .differential import differential


def _sym(lib):
    class Symmetric(lib.nn.Module):
        def forward(self, X):
            return X.triu() + X.triu(1).mT

        def right_inverse(self, A):
            return A.triu()
    return Symmetric()


def _double(lib):
    class Double(lib.nn.Module):
        def forward(self, X):
            return 2 * X

        def right_inverse(self, X):
            return X / 2
    return Double()


def test_register_parametrization_class_state_dict_repr_and_grads():
    def scenario(lib):
        lib.manual_seed(0)
        m = lib.nn.Linear(3, 3)
        lib.nn.utils.parametrize.register_parametrization(m, "weight", _sym(lib))
        out = m(lib.ones(2, 3)).pow(2).sum()
        out.backward()
        original = m.parametrizations.weight.original
        return (type(m).__name__, repr(m), list(m.state_dict()), m.weight, original.grad,
                m.bias.grad, lib.nn.utils.parametrize.is_parametrized(m),
                lib.nn.utils.parametrize.is_parametrized(m, "bias"),
                lib.nn.utils.parametrize.type_before_parametrizations(m).__name__,
                type(m).__bases__[0].__name__, type(lib.nn.Linear(1, 1)).__name__)
    differential(scenario)


def test_chain_right_inverse_assignment_and_removal():
    def scenario(lib):
        lib.manual_seed(1)
        m = lib.nn.Linear(3, 3)
        P = lib.nn.utils.parametrize
        P.register_parametrization(m, "weight", _sym(lib))
        P.register_parametrization(m, "weight", _double(lib))
        sym = lib.tensor([[1., 2., 3.], [2., 4., 5.], [3., 5., 6.]])
        m.weight = sym                      # right_inverse of the chain, last first
        original = m.parametrizations.weight.original.detach().clone()
        weight = m.weight
        P.remove_parametrizations(m, "weight", leave_parametrized=False)
        after_plain = (type(m).__name__, m.weight, list(m.state_dict()))
        n = lib.nn.Linear(3, 3)
        P.register_parametrization(n, "weight", _double(lib))
        P.remove_parametrizations(n, "weight")          # leave_parametrized=True
        return (original, weight, after_plain, type(n).__name__, n.weight,
                hasattr(n, "parametrizations"), len(m.parametrizations)
                if hasattr(m, "parametrizations") else None)
    differential(scenario)


def test_buffers_multiple_tensors_and_unsafe():
    def scenario(lib):
        class Split(lib.nn.Module):
            def forward(self, a, b):
                return a + b

            def right_inverse(self, X):
                return X * 0.25, X * 0.75

        class Grow(lib.nn.Module):
            def forward(self, X):
                return lib.cat([X, X])

        m = lib.nn.BatchNorm1d(2)
        P = lib.nn.utils.parametrize
        P.register_parametrization(m, "running_var", _double(lib))   # a buffer
        m.running_var = lib.tensor([4., 6.])
        m2 = lib.nn.Linear(2, 2)
        with lib.no_grad():
            m2.weight.copy_(lib.tensor([[1., 2.], [3., 4.]]))
        P.register_parametrization(m2, "weight", Split())
        m3 = lib.nn.Linear(2, 2)
        P.register_parametrization(m3, "bias", Grow(), unsafe=True)
        return (list(m.state_dict()), m.running_var, m.parametrizations.running_var.original,
                list(m2.state_dict()), m2.weight, m2.parametrizations.weight.original1,
                m2.parametrizations.weight.original0.requires_grad, m3.bias.shape,
                m3.parametrizations.bias.unsafe)
    differential(scenario)


@pytest.mark.parametrize("case", ["dtype", "shape", "missing", "not_tensor", "no_inverse",
                                  "remove_missing", "leave_sequence", "inverse_dtype",
                                  "second_shape", "empty_list"])
def test_parametrize_errors(case):
    def scenario(lib):
        P = lib.nn.utils.parametrize

        class ToDouble(lib.nn.Module):
            def forward(self, X):
                return X.double()

        class Shrink(lib.nn.Module):
            def forward(self, X):
                return X[:1]

        class NoTensor(lib.nn.Module):
            def forward(self, X):
                return 3

        class Split(lib.nn.Module):
            def forward(self, a, b):
                return a + b

            def right_inverse(self, X):
                return X, X

        class BadInverse(lib.nn.Module):
            def forward(self, X):
                return X

            def right_inverse(self, X):
                return X.double()

        m = lib.nn.Linear(2, 2)
        if case == "dtype":
            P.register_parametrization(m, "weight", ToDouble())
        elif case == "shape":
            P.register_parametrization(m, "weight", Shrink())
        elif case == "missing":
            P.register_parametrization(m, "nothing", ToDouble())
        elif case == "not_tensor":
            P.register_parametrization(m, "weight", NoTensor())
        elif case == "no_inverse":
            P.register_parametrization(m, "weight", Shrink(), unsafe=True)
            m.weight = lib.ones(2, 2)
        elif case == "remove_missing":
            P.remove_parametrizations(m, "weight")
        elif case == "leave_sequence":
            P.register_parametrization(m, "weight", Split())
            P.remove_parametrizations(m, "weight", leave_parametrized=False)
        elif case == "inverse_dtype":
            P.register_parametrization(m, "weight", BadInverse())
        elif case == "second_shape":
            P.register_parametrization(m, "weight", _double(lib))
            P.register_parametrization(m, "weight", Shrink())
        elif case == "empty_list":
            P.ParametrizationList([], m.weight)
    outcome = differential(scenario, may_raise=True)
    assert outcome[0] == "raised"


def test_cached_and_pickling_and_deepcopy():
    calls = []

    def scenario(lib):
        class Counted(lib.nn.Module):
            def forward(self, X):
                calls.append(lib.__name__)
                return X * 3

        m = lib.nn.Linear(2, 2)
        lib.nn.utils.parametrize.register_parametrization(m, "weight", Counted())
        before = calls.count(lib.__name__)
        with lib.nn.utils.parametrize.cached():
            a, b = m.weight, m.weight
            same = a is b
        c = m.weight
        copied = copy.deepcopy(m)
        try:
            pickle.dumps(m)
            pickled = "pickled"
        except RuntimeError as e:
            pickled = str(e)
        return (same, calls.count(lib.__name__) - before, c is a, type(copied).__name__,
                list(copied.state_dict()), pickled)
    differential(scenario)


def test_transfer_parametrizations_and_params():
    def scenario(lib):
        lib.manual_seed(3)
        src = lib.nn.Linear(3, 3)
        P = lib.nn.utils.parametrize
        P.register_parametrization(src, "weight", _sym(lib))
        dst = lib.nn.Linear(3, 3)
        P.transfer_parametrizations_and_params(src, dst)
        shared = dst.parametrizations.weight.original is src.parametrizations.weight.original
        blank = lib.nn.Module()
        P.transfer_parametrizations_and_params(src, blank, "weight")
        return shared, dst.weight, type(dst).__name__, blank.weight, list(blank.state_dict())
    differential(scenario)


@pytest.mark.parametrize("dim", [0, 1, -1, None, -2])
def test_weight_norm_parametrization(dim):
    def scenario(lib):
        lib.manual_seed(0)
        m = lib.nn.Conv2d(3, 4, 2)
        lib.nn.utils.parametrizations.weight_norm(m, dim=dim)
        x = lib.randn(2, 3, 4, 4)
        m(x).square().sum().backward()
        g = m.parametrizations.weight.original0
        v = m.parametrizations.weight.original1
        return (list(m.state_dict()), m.weight.detach(), g.detach(), g.grad, v.grad,
                m.parametrizations.weight[0].dim)
    differential(scenario)


def test_weight_norm_parametrization_loads_legacy_state_dict():
    def scenario(lib):
        lib.manual_seed(0)
        with pytest.warns(FutureWarning):
            old = lib.nn.utils.weight_norm(lib.nn.Linear(3, 2))
        new = lib.nn.utils.parametrizations.weight_norm(lib.nn.Linear(3, 2))
        result = new.load_state_dict(old.state_dict())
        return repr(result), new.weight.detach(), list(old.state_dict())
    differential(scenario)


def test_weight_norm_gradcheck_float64():
    m = gt.nn.utils.parametrizations.weight_norm(gt.nn.Linear(3, 2).double(), dim=1)
    g = m.parametrizations.weight.original0.detach().requires_grad_()
    v = m.parametrizations.weight.original1.detach().requires_grad_()
    assert gt.autograd.gradcheck(lambda g, v: m.parametrizations.weight[0](g, v), (g, v))


@pytest.mark.parametrize("dim", [0, None, 1])
def test_legacy_weight_norm_and_remove(dim):
    def scenario(lib):
        lib.manual_seed(0)
        m = lib.nn.Linear(4, 3)
        lib.nn.utils.weight_norm(m, dim=dim)
        names = [n for n, _ in m.named_parameters()]
        x = lib.randn(2, 4)
        m(x).sum().backward()
        grads = (m.weight_g.grad, m.weight_v.grad)
        try:
            lib.nn.utils.weight_norm(m, dim=dim)
        except RuntimeError as e:
            twice = str(e)
        lib.nn.utils.remove_weight_norm(m)
        try:
            lib.nn.utils.remove_weight_norm(m)
        except ValueError as e:
            missing = str(e).split(" in ")[0]
        return names, grads, m.weight, [n for n, _ in m.named_parameters()], twice, missing
    differential(scenario)


@pytest.mark.parametrize("module", ["linear", "conv_t", "conv"])
def test_spectral_norm_parametrization(module):
    def scenario(lib):
        lib.manual_seed(0)
        m = {"linear": lambda: lib.nn.Linear(5, 4),
             "conv_t": lambda: lib.nn.ConvTranspose2d(3, 2, 2),
             "conv": lambda: lib.nn.Conv1d(2, 3, 2)}[module]()
        lib.nn.utils.parametrizations.spectral_norm(m, n_power_iterations=2)
        w_train = m.weight
        m.eval()
        w_eval = m.weight
        P = m.parametrizations.weight
        w_train.sum().backward()
        return (list(m.state_dict()), w_train, w_eval, P.original.grad, P[0]._u, P[0]._v,
                P[0].dim)
    differential(scenario)


def test_spectral_norm_parametrization_errors_and_vector():
    def scenario(lib):
        out = []
        for kwargs in ({"dim": 3}, {"n_power_iterations": 0}):
            try:
                lib.nn.utils.parametrizations.spectral_norm(lib.nn.Linear(2, 2), **kwargs)
            except (IndexError, ValueError) as e:
                out.append((type(e).__name__, str(e)))
        m = lib.nn.Linear(3, 2)
        with lib.no_grad():
            m.bias.copy_(lib.tensor([3., 4.]))
        lib.nn.utils.parametrizations.spectral_norm(m, "bias")
        return out, m.bias
    differential(scenario)


@pytest.mark.parametrize("shape,orth_map", [((4, 4), None), ((5, 3), "householder"),
                                            ((3, 5), "cayley"), ((3, 5), "matrix_exp"),
                                            ((4, 3), None)])
def test_orthogonal(shape, orth_map):
    def scenario(lib):
        lib.manual_seed(0)
        m = lib.nn.Linear(shape[1], shape[0])
        lib.nn.utils.parametrizations.orthogonal(m, orthogonal_map=orth_map)
        Q = m.weight
        Q.sum().backward()
        return (list(m.state_dict()), Q.detach(), m.parametrizations.weight.original.grad,
                type(m.parametrizations.weight[0].base).__name__)
    differential(scenario)


def test_orthogonal_without_trivialization_and_errors():
    def scenario(lib):
        lib.manual_seed(0)
        m = lib.nn.Linear(3, 4)
        lib.nn.utils.parametrizations.orthogonal(m, orthogonal_map="householder",
                                                 use_trivialization=False)
        out = [m.weight.detach(), list(m.state_dict())]
        for kwargs in ({"orthogonal_map": "nope"}, {"name": "bias"}):
            try:
                lib.nn.utils.parametrizations.orthogonal(lib.nn.Linear(2, 2), **kwargs)
            except ValueError as e:
                out.append(str(e))
        e2 = lib.nn.Linear(2, 2)
        lib.nn.utils.parametrizations.orthogonal(e2, use_trivialization=False)
        try:
            e2.weight = lib.eye(2)
        except NotImplementedError as e:
            out.append(str(e))
        return out
    differential(scenario)


def test_legacy_spectral_norm_training_eval_state_dict_and_remove():
    def scenario(lib):
        lib.manual_seed(0)
        m = lib.nn.Linear(4, 3)
        lib.nn.utils.spectral_norm(m, n_power_iterations=3)
        m(lib.ones(1, 4)).sum().backward()
        sd = m.state_dict()
        meta = dict(sd._metadata[""])
        state = (list(sd), m.weight, m.weight_orig.grad, m.weight_u, m.weight_v, meta)
        m.eval()
        w_eval = m(lib.ones(1, 4))
        lib.nn.utils.remove_spectral_norm(m)
        try:
            lib.nn.utils.remove_spectral_norm(m)
        except ValueError as e:
            missing = str(e).split(" in ")[0]
        try:      # PyTorch leaves its load pre-hook registered
            m.load_state_dict(lib.nn.Linear(4, 3).state_dict())
            reload = "loaded"
        except RuntimeError as e:
            reload = str(e)
        return state, w_eval, list(m.state_dict()), missing, reload
    differential(scenario)


def test_legacy_spectral_norm_version0_state_dict_and_conv_transpose_dim():
    def scenario(lib):
        lib.manual_seed(0)
        # (a full-rank W^T W: PyTorch's pinverse solve is ill-posed otherwise)
        m = lib.nn.utils.spectral_norm(lib.nn.Linear(3, 4))
        m(lib.ones(1, 3))
        sd = m.state_dict()
        sd["weight"] = m.weight.detach()
        del sd["weight_v"]
        del sd._metadata[""]["spectral_norm"]
        sd._metadata[""]["spectral_norm"] = {"weight.version": 0}
        fresh = lib.nn.utils.spectral_norm(lib.nn.Linear(3, 4))
        fresh.load_state_dict(sd)
        ct = lib.nn.utils.spectral_norm(lib.nn.ConvTranspose1d(2, 3, 2))
        return fresh.weight_v, ct.weight_u.shape, ct.weight_v.shape
    differential(scenario)


@pytest.mark.parametrize("transpose", [False, True])
def test_fuse_conv_bn(transpose):
    def scenario(lib):
        lib.manual_seed(0)
        conv = (lib.nn.ConvTranspose2d(3, 4, 2) if transpose else lib.nn.Conv2d(3, 4, 2,
                                                                                  bias=False))
        bn = lib.nn.BatchNorm2d(4)
        bn.running_mean.uniform_(-1, 1)
        bn.running_var.uniform_(0.5, 2)
        with lib.no_grad():
            bn.weight.uniform_(0.5, 2)
        conv.eval()
        bn.eval()
        fused = lib.nn.utils.fuse_conv_bn_eval(conv, bn, transpose=transpose)
        x = lib.randn(2, 3, 5, 5)
        try:
            lib.nn.utils.fuse_conv_bn_eval(conv.train(), bn)
        except AssertionError as e:
            err = str(e)
        return fused(x), bn(conv.eval()(x)), fused.weight, fused.bias, err
    differential(scenario)


def test_fuse_linear_bn():
    def scenario(lib):
        lib.manual_seed(0)
        lin, bn = lib.nn.Linear(3, 4).eval(), lib.nn.BatchNorm1d(4).eval()
        bn.running_mean.uniform_(-1, 1)
        fused = lib.nn.utils.fuse_linear_bn_eval(lin, bn)
        x = lib.randn(2, 3)
        w, b = lib.nn.utils.fuse_linear_bn_weights(lin.weight, None, bn.running_mean,
                                                  bn.running_var, 1e-3, bn.weight, bn.bias)
        try:
            lib.nn.utils.fuse_linear_bn_eval(lin, lib.nn.BatchNorm1d(3).eval())
        except AssertionError as e:
            err = str(e)
        return fused(x), bn(lin(x)), w, b, err
    differential(scenario)


def test_memory_format_and_skip_init():
    def scenario(lib):
        lib.manual_seed(0)
        model = lib.nn.Sequential(lib.nn.Conv2d(2, 3, 2), lib.nn.Sequential(
            lib.nn.ConvTranspose2d(3, 2, 2)), lib.nn.Conv3d(2, 2, 1))
        lib.nn.utils.convert_conv2d_weight_memory_format(model, lib.channels_last)
        lib.nn.utils.convert_conv3d_weight_memory_format(model, lib.channels_last_3d)
        strides = [m.weight.stride() for m in model.modules() if hasattr(m, "weight")]
        skipped = lib.nn.utils.skip_init(lib.nn.Linear, 3, 2)
        errors = []
        for cls in (int, lib.nn.ReLU):
            try:
                lib.nn.utils.skip_init(cls)
            except RuntimeError as e:
                errors.append(str(e))
        return strides, skipped.weight.shape, skipped.weight.device.type, errors
    differential(scenario)


@given(rows=st.integers(1, 4), cols=st.integers(1, 4), seed=st.integers(0, 100))
def test_weight_norm_random_shapes(rows, cols, seed):
    def scenario(lib):
        lib.manual_seed(seed)
        m = lib.nn.utils.parametrizations.weight_norm(lib.nn.Linear(cols, rows))
        m.weight.sum().backward()
        return (m.weight.detach(), m.parametrizations.weight.original0.grad,
                m.parametrizations.weight.original1.grad)
    differential(scenario)


def test_nn_utils_exports_match_torch(torch):
    assert sorted(gt.nn.utils.__all__) == sorted(torch.nn.utils.__all__)
    for module in ("parametrize", "parametrizations"):
        ours = __import__(f"glasstorch.nn.utils.{module}", fromlist=["x"]).__all__
        theirs = __import__(f"torch.nn.utils.{module}", fromlist=["x"]).__all__
        assert sorted(ours) == sorted(theirs)

"""torch.func's reverse-mode transforms and their compositions with vmap,
against real PyTorch: grad, grad_and_value, vjp, jacrev, hessian,
stack_module_state; per-sample gradients, ensembles, NTK-style contractions;
the transform stack's levels and wrappers."""
from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch
from hypothesis import given, settings, strategies as st

import glasstorch as gt

from .differential import differential, raised
from .helpers import assert_same

RNG = np.random.default_rng(0)


def data(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


def T(lib, array):
    return lib.from_numpy(np.array(array))


# -- grad ------------------------------------------------------------------------

@pytest.mark.parametrize("name, fn", [
    ("sin", lambda lib, x: x.sin().sum()),
    ("poly", lambda lib, x: (x ** 3 - 2 * x).mean()),
    ("softmax", lambda lib, x: lib.softmax(x, -1)[..., 0].sum()),
    ("norm", lambda lib, x: x.norm()),
    ("detach", lambda lib, x: (x.detach() * x).sum()),
    ("views", lambda lib, x: x.t().reshape(-1)[1:].exp().sum()),
    ("where", lambda lib, x: lib.where(x > 0, x, x * x).sum()),
])
def test_grad_matches_torch(name, fn):
    x = data(3, 4)
    differential(lambda lib: lib.func.grad(lambda t: fn(lib, t))(T(lib, x)))


def test_grad_and_value_argnums_and_aux():
    x, y = data(4), data(4, seed=1)

    def scenario(lib):
        def f(a, b):
            return (a * b.sin()).sum(), {"aux": a.cos()}
        return lib.func.grad_and_value(f, argnums=(0, 1), has_aux=True)(T(lib, x), T(lib, y))
    differential(scenario)


def test_nested_grad_separates_levels():
    """grad(grad(f)): the inner level differentiates only its own input, even when
    the outer input is captured (functorch's perturbation-confusion case)."""
    x = data(3)

    def scenario(lib):
        def outer(a):
            inner = lib.func.grad(lambda b: (a * b ** 2).sum())(a)   # 2ab at b = a
            return inner.sum()
        return lib.func.grad(outer)(T(lib, x)), lib.func.grad(lib.func.grad(
            lambda a: a.sin().sum().sin()))(T(lib, np.float32(0.3) * np.ones((), np.float32)))
    differential(scenario)


def test_grad_of_outer_requires_grad_tensor_is_separate():
    x, w = data(3), data(3, seed=2)

    def scenario(lib):
        weight = T(lib, w).requires_grad_()
        g = lib.func.grad(lambda a: (a * weight).sum())(T(lib, x))   # = weight
        (g * g).sum().backward()                                     # regular autograd outside
        return g, weight.grad
    differential(scenario)


@pytest.mark.parametrize("case", ["nonscalar", "nontensor", "int_input", "argnum_range",
                                  "argnum_type", "aux_shape", "aux_type", "captured_inplace",
                                  "empty_argnums", "duplicate_argnums"])
def test_grad_errors_match_torch(case):
    def scenario(lib):
        x = T(lib, data(3))
        y = T(lib, data(3, seed=1))
        return {
            "nonscalar": lambda: lib.func.grad(lambda a: a * 2)(x),
            "nontensor": lambda: lib.func.grad(lambda a: 3.0)(x),
            "int_input": lambda: lib.func.grad(lambda a: a.sum())(lib.arange(3)),
            "argnum_range": lambda: lib.func.grad(lambda a, b: (a * b).sum(), argnums=2)(x, y),
            "argnum_type": lambda: lib.func.grad(lambda a, b: (a * b).sum(), argnums=1.0)(x, y),
            "aux_shape": lambda: lib.func.grad(lambda a: a.sum(), has_aux=True)(x),
            "aux_type": lambda: lib.func.grad(lambda a: (a.sum(), 1), has_aux=True)(x),
            "captured_inplace": lambda: lib.func.grad(lambda a: y.add_(a).sum())(x),
            "empty_argnums": lambda: lib.func.grad(lambda a: a.sum(), argnums=())(x),
            "duplicate_argnums": lambda: lib.func.grad(lambda a: a.sum(), argnums=(0, 0))(x),
        }[case]()
    raised(differential(scenario, may_raise=True))


# -- vjp, jacrev, hessian ------------------------------------------------------------

def test_vjp_matches_torch():
    x, y, ct = data(3, 4), data(4), data(3, 4, seed=3)

    def scenario(lib):
        out, fn = lib.func.vjp(lambda a, b: (a * b).tanh(), T(lib, x), T(lib, y))
        return out, fn(T(lib, ct))
    differential(scenario)


@pytest.mark.parametrize("case", ["int_output", "cotangent_structure"])
def test_vjp_errors_match_torch(case):
    def scenario(lib):
        x = T(lib, data(3))
        if case == "int_output":
            return lib.func.vjp(lambda a: (a > 0).long(), x)
        return lib.func.vjp(lambda a: a * 2, x)[1]((x, x))
    raised(differential(scenario, may_raise=True))


@pytest.mark.parametrize("argnums", [0, 1, (0, 1)])
def test_jacrev_matches_torch(argnums):
    x, y = data(3), data(2, 3, seed=1)

    def scenario(lib):
        def f(a, b):
            return (b * a.sin()).sum(0), a.exp() @ b.t()
        return lib.func.jacrev(f, argnums=argnums)(T(lib, x), T(lib, y))
    differential(scenario)


def test_jacrev_has_aux_and_chunks():
    x = data(5)

    def scenario(lib):
        return lib.func.jacrev(lambda a: (a.cumsum(0), a.max()), has_aux=True,
                               chunk_size=2)(T(lib, x))
    differential(scenario)


def test_hessian_matches_torch():
    x = data(4)
    differential(lambda lib: lib.func.hessian(lambda a: (a.sin() * a ** 2).sum())(T(lib, x)))


UNARY = ["sin", "cos", "exp", "tanh", "sigmoid", "relu", "abs", "square", "neg"]


@settings(max_examples=25, deadline=None)
@given(ops=st.lists(st.sampled_from(UNARY), min_size=1, max_size=4),
       shape=st.lists(st.integers(1, 4), min_size=1, max_size=3), seed=st.integers(0, 1000),
       reduce=st.sampled_from(["sum", "mean", "amax"]))
def test_grad_and_jacrev_of_generated_functions(ops, shape, seed, reduce):
    """Random chains of unary ops: grad of their reduction and jacrev of the chain
    (float32 tolerance: a saturated tanh's derivative is 0 or 1e-6 by ulps)."""
    x = data(*shape, seed=seed)

    def chain(t):
        for name in ops:
            t = getattr(t, name)()
        return t

    results = []
    for lib in (torch, gt):
        value = T(lib, x)
        results.append((lib.func.grad(lambda t: getattr(chain(t), reduce)())(value),
                        lib.func.jacrev(chain)(value)))
    assert_same(results[1], results[0], atol=1e-5, rtol=1e-4)


# -- compositions ---------------------------------------------------------------------

def _mlp(lib):
    lib.manual_seed(0)
    return lib.nn.Sequential(lib.nn.Linear(6, 16), lib.nn.ReLU(), lib.nn.Linear(16, 3))


def _cnn(lib):
    lib.manual_seed(0)
    return lib.nn.Sequential(lib.nn.Conv2d(1, 4, 3), lib.nn.ReLU(), lib.nn.Flatten(),
                             lib.nn.Linear(4 * 4 * 4, 3))


def _same_weights(model_gt, model_torch):
    model_gt.load_state_dict({k: gt.from_numpy(v.detach().numpy().copy())
                              for k, v in model_torch.state_dict().items()})
    return model_gt


@pytest.mark.parametrize("build, shape", [(_mlp, (6,)), (_cnn, (1, 6, 6))])
def test_per_sample_gradients(build, shape):
    """vmap(grad(loss)) equals a loop of single-example gradients, and torch's."""
    xs, ys = data(8, *shape, seed=4), np.random.default_rng(5).integers(0, 3, 8)
    results = {}
    for lib in (torch, gt):
        model = build(lib) if lib is torch else _same_weights(build(gt), build(torch))
        params = {k: v.detach() for k, v in model.named_parameters()}

        def loss(p, x, y, lib=lib, model=model):
            out = lib.func.functional_call(model, p, (x.unsqueeze(0),))
            return lib.nn.functional.cross_entropy(out, y.unsqueeze(0))
        x, y = T(lib, xs), T(lib, ys)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            batched = lib.func.vmap(lib.func.grad(loss), in_dims=(None, 0, 0))(params, x, y)
        looped = [lib.func.grad(loss)(params, x[i], y[i]) for i in range(8)]
        for k in params:
            assert_same(batched[k], lib.stack([g[k] for g in looped]), atol=1e-5, rtol=1e-4,
                        strides=False)
        results[lib.__name__] = batched
    for k in results["torch"]:
        assert_same(results["glasstorch"][k], results["torch"][k], atol=1e-5, rtol=1e-4,
                    strides=False)


def test_model_ensembling_with_stack_module_state():
    data_in = data(10, 6, seed=6)

    def scenario(lib):
        lib.manual_seed(0)
        models = [_mlp(lib) for _ in range(3)]
        for i, m in enumerate(models):       # distinct weights, equal in both libraries
            for j, p in enumerate(m.parameters()):
                p.data.copy_(T(lib, data(*p.shape, seed=10 * i + j)))
        params, buffers = lib.func.stack_module_state(models)

        def run(p, b, x):
            return lib.func.functional_call(models[0], (p, b), (x,))
        out = lib.func.vmap(run, in_dims=(0, 0, None))(params, buffers, T(lib, data_in))
        out.sum().backward()
        return out, params["0.weight"].grad, sorted(params)
    differential(scenario)


def test_ntk_style_contraction():
    """Empirical NTK: per-example Jacobians with jacrev under vmap, contracted."""
    xs = data(4, 6, seed=7)

    def scenario(lib):
        model = _mlp(lib)
        for j, p in enumerate(model.parameters()):
            p.data.copy_(T(lib, data(*p.shape, seed=20 + j)))
        params = {k: v.detach() for k, v in model.named_parameters()}

        def f(p, x):
            return lib.func.functional_call(model, p, (x.unsqueeze(0),)).squeeze(0)
        jac = lib.func.vmap(lib.func.jacrev(f), in_dims=(None, 0))(params, T(lib, xs))
        flat = [j.flatten(2) for j in jac.values()]
        return sum(lib.einsum("aip,bjp->abij", a, a) for a in flat)
    differential(scenario)


def test_vmap_of_gpt_forward_over_parameter_sets_equals_the_loop():
    from benchmarks.bench_train import _gpt_module
    example = _gpt_module("glasstorch")
    gt.manual_seed(0)
    config = example.GPTConfig(vocab_size=20, block_size=8, n_layer=1, n_head=2, n_embd=16,
                               dropout=0.0)
    models = [example.GPT(config) for _ in range(3)]
    params, buffers = gt.func.stack_module_state(models)
    idx = gt.from_numpy(np.random.default_rng(8).integers(0, 20, (2, 8)))

    def run(p, b):
        return gt.func.functional_call(models[0], (p, b), (idx,))[0]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        batched = gt.func.vmap(run)(params, buffers)
    for i, m in enumerate(models):
        assert_same(batched[i], m(idx)[0], atol=2e-5, rtol=1e-4, strides=False)


# -- the stack itself -------------------------------------------------------------------

def test_keys_and_levels_inside_transforms_match_torch():
    def scenario(lib):
        seen = []

        def probe(t):
            fn = lib._C._functorch
            seen.append((str(lib._C._dispatch_keys(t)), str(lib._C._dispatch_tls_local_include_set()),
                         fn.maybe_get_level(t), fn.is_batchedtensor(t), fn.is_gradtrackingtensor(t)))
            return t.sin().sum()
        lib.func.vmap(lib.func.grad(probe))(T(lib, data(2, 3)))
        lib.func.grad(lambda t: lib.func.vmap(probe)(t).sum())(T(lib, data(2, 3)))
        return seen
    differential(scenario)


def test_escaped_wrapper_stands_for_its_value():
    def scenario(lib):
        kept = []

        def f(t):
            kept.append(t * 2)
            return t.sum()
        lib.func.grad(f)(T(lib, data(3)))
        return kept[0] + 1
    differential(scenario)


def test_transforms_leave_the_thread_as_they_found_it():
    before = (str(gt._C._dispatch_tls_local_include_set()), str(gt._C._dispatch_tls_local_exclude_set()))
    with pytest.raises(RuntimeError):
        gt.func.vmap(lambda t: gt.func.grad(lambda u: u * 2)(t))(gt.randn(2, 3))
    after = (str(gt._C._dispatch_tls_local_include_set()), str(gt._C._dispatch_tls_local_exclude_set()))
    assert before == after
    assert gt._C._functorch.maybe_current_level() is None


# -- forward mode ----------------------------------------------------------------------

def test_jvp_matches_torch():
    x, y, tx, ty = data(3, 4), data(4, seed=1), data(3, 4, seed=2), data(4, seed=3)
    differential(lambda lib: lib.func.jvp(lambda a, b: ((a * b).tanh(), a.sum(0) @ b),
                                          (T(lib, x), T(lib, y)), (T(lib, tx), T(lib, ty))))


def test_nested_jvp_and_its_compositions_match_torch():
    x = data(3)

    def scenario(lib):
        ones = lib.ones(3)

        def inner(a):
            return lib.func.jvp(lambda b: (b * a).sin(), (a,), (ones,))[1]
        return (lib.func.jvp(inner, (T(lib, x),), (ones,)),
                lib.func.jacfwd(lib.func.jacrev(lambda a: (a.sin() * a).sum()))(T(lib, x)),
                lib.func.vmap(lambda t: lib.func.jvp(lambda a: a.exp(), (T(lib, x),), (t,))[1])(
                    lib.eye(3)))
    differential(scenario)


@pytest.mark.parametrize("argnums", [0, (0, 1)])
def test_jacfwd_matches_torch(argnums):
    x, y = data(3), data(2, 3, seed=1)
    differential(lambda lib: lib.func.jacfwd(lambda a, b: (b * a.sin()).sum(0), argnums=argnums)(
        T(lib, x), T(lib, y)))


def test_linearize_matches_torch():
    x, t = data(4), data(4, seed=5)

    def scenario(lib):
        out, jvp_fn = lib.func.linearize(lambda a: a.exp().cumsum(0), T(lib, x))
        return out, jvp_fn(T(lib, t))
    differential(scenario, warning_types=())    # (torch's make_fx trace warns of a get_attr)


@pytest.mark.parametrize("case", ["not_tuple", "structure", "non_tensor", "empty", "output",
                                  "tangent_size", "aux"])
def test_jvp_errors_match_torch(case):
    def scenario(lib):
        x = T(lib, data(3))
        return {
            "not_tuple": lambda: lib.func.jvp(lambda a: a, x, x),
            "structure": lambda: lib.func.jvp(lambda a: a, (x,), (x, x)),
            "non_tensor": lambda: lib.func.jvp(lambda a: a, (1.0,), (1.0,)),
            "empty": lambda: lib.func.jvp(lambda: 1, (), ()),
            "output": lambda: lib.func.jvp(lambda a: 3, (x,), (x,)),
            "tangent_size": lambda: lib.func.jvp(lambda a: a, (x,), (T(lib, data(4)),)),
            "aux": lambda: lib.func.jvp(lambda a: a, (x,), (x,), has_aux=True),
        }[case]()
    raised(differential(scenario, may_raise=True))


def test_jacrev_of_jacrev_and_vmap_of_jacfwd_match_torch():
    x, xs = data(3), data(4, 3, seed=9)

    def scenario(lib):
        f = lambda a: (a.sin() * a.cumsum(0)).sum()   # noqa: E731
        return (lib.func.jacrev(lib.func.jacrev(f))(T(lib, x)),
                lib.func.vmap(lib.func.jacfwd(lambda a: a.tanh() * a.sum()))(T(lib, xs)))
    differential(scenario)


@pytest.mark.parametrize("name", ["adam", "sgd", "adamw"])
def test_vmap_of_a_functional_optimizer_step(name):
    """One optimizer update per example (functional API), against torch's (whose
    vmap runs some of these in-place ops by its loop fallback: values only)."""
    import importlib
    results = []
    for lib in (torch, gt):
        module = importlib.import_module(f"{lib.__name__}.optim.{name}")
        p, g = T(lib, data(4, 3)), T(lib, data(4, 3, seed=1))

        def step(p, g, lib=lib, module=module):
            p, m, v = p.clone(), lib.zeros_like(p), lib.zeros_like(p)
            if name == "sgd":
                module.sgd([p], [g], [m], lr=0.1, momentum=0.9, dampening=0.0,
                           weight_decay=0.01, nesterov=True, maximize=False)
            else:
                getattr(module, name)([p], [g], [m], [v], [], [lib.tensor(0.)], foreach=False,
                                      amsgrad=False, beta1=0.9, beta2=0.999, lr=0.1,
                                      weight_decay=0.01, eps=1e-8, maximize=False)
            return p, m, v
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            results.append(lib.vmap(step)(p, g))
    assert_same(results[1], results[0], atol=1e-6, rtol=1e-5)


@pytest.mark.parametrize("case", ["empty", "classes", "modes", "requires_grad"])
def test_stack_module_state_errors_match_torch(case):
    def scenario(lib):
        a, b = lib.nn.Linear(2, 2), lib.nn.Linear(2, 2)
        if case == "empty":
            return lib.func.stack_module_state([])
        if case == "classes":
            return lib.func.stack_module_state([a, lib.nn.Bilinear(2, 2, 2)])
        if case == "modes":
            return lib.func.stack_module_state([a, b.eval()])
        b.bias.requires_grad_(False)
        return lib.func.stack_module_state([a, b])
    raised(differential(scenario, may_raise=True))



def test_jacobians_of_mixed_dtypes_match_torch():
    """Each basis block takes its own tensor's dtype (outputs for jacrev, inputs
    for jacfwd), as PyTorch's standard basis does."""
    x, y = data(2).astype(np.float64), data(3, seed=1)

    def scenario(lib):
        def f(a, b):
            return a.sin() * b.double().sum(), b * a.float().sum()
        a, b = T(lib, x), T(lib, y)
        return (lib.func.jacrev(f, argnums=(0, 1))(a, b),
                lib.func.jacfwd(f, argnums=(0, 1))(a, b))
    differential(scenario)

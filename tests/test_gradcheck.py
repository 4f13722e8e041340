"""gradcheck / gradgradcheck against real PyTorch: the same verdicts, the same
GradcheckError messages (Jacobians printed in full), the same warnings."""
from __future__ import annotations

import importlib

import numpy as np
import pytest
from hypothesis import given, strategies as st

from .test_autograd_function import differential, raised, returned


def checks(a):
    return importlib.import_module(a.name + ".autograd.gradcheck")


def double(a, values, requires_grad=True):
    return a.lib.tensor(values, dtype=a.lib.float64, requires_grad=requires_grad)


def scaled(a, factor, backward_factor=None, materialize=True, undefined=None):
    """``x * factor`` whose backward multiplies by ``backward_factor``; with
    ``materialize=False`` backward sees None grads and answers ``undefined``."""
    class Scaled(a.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.set_materialize_grads(materialize)
            return x * factor

        @staticmethod
        def backward(ctx, g):
            if g is None:
                return undefined(a) if undefined else None
            return g * (factor if backward_factor is None else backward_factor)
    return Scaled


def test_correct_gradients_pass():
    def scenario(a):
        gc = checks(a)
        x = double(a, [[1.0, -2.0], [0.5, 3.0]])
        y = double(a, [[0.25, 1.5], [-1.0, 2.0]])
        n = double(a, [1.0, 2.0], requires_grad=False)
        return (gc.gradcheck(lambda p, q: p * q + p, (x, y)),
                gc.gradcheck(lambda p, k, q: (p * k, q + p * q), (x, 3.0, y)),
                gc.gradcheck(lambda p, m: p * m, (x, n)),
                gc.gradcheck(scaled(a, 3.0).apply, x),
                gc.gradcheck(lambda p: p.t() * 2, (x.t(),)),
                gc.gradcheck(lambda p: (p * 2, (p * 0).long()), (x,)))
    assert returned(differential(scenario)) == (True,) * 6


def test_jacobian_mismatch_message():
    def scenario(a):
        x = double(a, [1.0, 2.0, 3.0])
        y = double(a, [[1.0, 2.0], [3.0, 4.0]])

        class Product(a.Function):
            @staticmethod
            def forward(ctx, p, q):
                return p * q

            @staticmethod
            def backward(ctx, g):
                return g, g
        out = [checks(a).gradcheck(scaled(a, 3.0, 2.0).apply, (x,), raise_exception=False)]
        for attempt in (lambda: checks(a).gradcheck(scaled(a, 3.0, 2.0).apply, (x,)),
                        lambda: checks(a).gradcheck(Product.apply, (y, y.detach() * 1))):
            try:
                attempt()
            except checks(a).GradcheckError as e:
                out.append((isinstance(e, RuntimeError), str(e)))
        return out
    outcome = returned(differential(scenario))
    assert outcome[0] is False
    assert outcome[1][1].startswith("Jacobian mismatch for output 0 with respect to input 0,\n"
                                    "numerical:tensor([[3.0000, 0.0000, 0.0000],")


def test_single_precision_warns_and_fails_with_the_same_numbers():
    def scenario(a):
        x = a.lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
        return checks(a).gradcheck(lambda p: p * 2, (x,))
    outcome = differential(scenario, may_raise=True)
    assert outcome[:2] == ("raised", "GradcheckError")
    assert outcome[-1] == (("UserWarning", "Input #0 requires gradient and is not a double "
                            "precision floating point or complex. This check will likely fail if "
                            "all the inputs are not of double precision floating point or "
                            "complex. "),)


def test_input_errors():
    def no_input_requires_grad(a):
        return checks(a).gradcheck(lambda p: p * 2, (double(a, [1.0], requires_grad=False),))

    def stride_zero(a):
        x = a.lib.ones(1, dtype=a.lib.float64).expand(3).requires_grad_()
        return checks(a).gradcheck(lambda p: p * 2, (x,))
    raised(differential(no_input_requires_grad, may_raise=True), "ValueError",
           "gradcheck expects at least one input tensor to require gradient, but none of them "
           "have requires_grad=True.")
    raised(differential(stride_zero, may_raise=True), "RuntimeError",
           "The 0th input has a dimension with stride 0. gradcheck only supports inputs that are "
           "non-overlapping to be able to compute the numerical gradients correctly. You should "
           "call .contiguous on the input before passing it to gradcheck.")


def test_no_differentiable_outputs():
    def scenario(a):
        x = double(a, [1.0, 2.0])
        out = [checks(a).gradcheck(lambda p: p.detach() * 0, (x,))]
        try:
            checks(a).gradcheck(lambda p: p.detach() * 2, (x,))
        except checks(a).GradcheckError as e:
            out.append(str(e))
        return out
    assert returned(differential(scenario)) == (True, "Numerical gradient for function "
                                                "expected to be zero")


def test_backward_not_multiplied_by_grad_output():
    def scenario(a):
        class Constant(a.Function):
            @staticmethod
            def forward(ctx, x):
                return x * 3

            @staticmethod
            def backward(ctx, g):
                return g * 0 + 3
        x = double(a, [1.0, 2.0])
        return checks(a).gradcheck(Constant.apply, (x,), atol=10)
    raised(differential(scenario, may_raise=True), "GradcheckError",
           "backward not multiplied by grad_output")


def test_nondeterministic_backward():
    def scenario(a):
        calls = [0]

        class Drifting(a.Function):
            @staticmethod
            def forward(ctx, x):
                return x * 3

            @staticmethod
            def backward(ctx, g):
                calls[0] += 1
                return g * (3 + calls[0] * 1e-4)
        x = double(a, [1.0, 2.0])
        out = [checks(a).gradcheck(Drifting.apply, (x,), atol=1e-2, nondet_tol=1e-2)]
        try:
            checks(a).gradcheck(Drifting.apply, (x,), atol=1e-2)
        except checks(a).GradcheckError as e:
            out.append(str(e))
        return out
    outcome = returned(differential(scenario))
    assert outcome[0] is True and outcome[1].startswith("Backward is not reentrant")


def test_undefined_output_grads():
    """Backward must cope with undefined grads: returning None or zeros is fine;
    nonzero grads or an error are reported (with the BC warning)."""
    def scenario(a):
        x = double(a, [1.0, 2.0])
        gc = checks(a)
        out = [gc.gradcheck(scaled(a, 2.0, materialize=False).apply, (x,)),
               gc.gradcheck(scaled(a, 2.0, materialize=False,
                                   undefined=lambda a: a.lib.zeros(2, dtype=a.lib.float64)).apply,
                            (x,))]
        for undefined in (lambda a: a.lib.ones(2, dtype=a.lib.float64),
                          lambda a: a.lib.ones(5, dtype=a.lib.float64)):
            fn = scaled(a, 2.0, materialize=False, undefined=undefined).apply
            try:
                gc.gradcheck(fn, (x,))
            except gc.GradcheckError as e:
                out.append((str(e), type(e.__cause__).__name__))
            out.append(gc.gradcheck(fn, (x,), check_undefined_grad=False))
        return out
    outcome = differential(scenario)
    assert returned(outcome)[:2] == (True, True) and len(outcome[-1]) == 2


def test_gradgradcheck():
    def scenario(a):
        gc = checks(a)
        x = double(a, [1.0, -2.0, 0.5])

        class DetachedSquare(a.Function):
            """First derivative right, second wrong: backward hides x from autograd."""
            @staticmethod
            def forward(ctx, p):
                ctx.save_for_backward(p)
                return p * p

            @staticmethod
            def backward(ctx, g):
                (p,) = ctx.saved_tensors
                return 2 * p.detach() * g
        seed = (double(a, [1.0, 0.5, -1.0]),)
        out = [gc.gradgradcheck(lambda p: p * p * p, (x,)),
               gc.gradgradcheck(lambda p: p * p * p, (x,), gen_non_contig_grad_outputs=True),
               gc.gradgradcheck(lambda p, q: (p * q, p + q), (x, x.detach() * 2),
                                (seed[0], double(a, [2.0, 2.0, 2.0], requires_grad=False))),
               gc.gradcheck(DetachedSquare.apply, (x,)),
               gc.gradgradcheck(DetachedSquare.apply, (x,), seed, raise_exception=False)]
        try:
            gc.gradgradcheck(DetachedSquare.apply, (x,), seed)
        except gc.GradcheckError as e:
            out.append(str(e))
        return out
    outcome = returned(differential(scenario))
    assert outcome[:5] == (True, True, True, True, False)
    assert outcome[5].startswith("Jacobian mismatch for output 0 with respect to input 0,")


def test_unsupported_modes():
    import glasstorch as gt
    gc = importlib.import_module("glasstorch.autograd.gradcheck")
    x = gt.tensor([1.0], dtype=gt.float64, requires_grad=True)
    with pytest.raises(NotImplementedError):
        gc.gradcheck(lambda p: p * 2, (x,), check_forward_ad=True)
    with pytest.raises(AssertionError, match="check_forward_ad or check_backward_ad"):
        gc.gradcheck(lambda p: p * 2, (x,), check_backward_ad=False)


@given(st.lists(st.integers(1, 3), min_size=1, max_size=3), st.integers(0, 2 ** 16),
       st.booleans())
def test_random_shapes(shape, seed, transpose):
    data = np.random.RandomState(seed).uniform(-2, 2, size=(2,) + tuple(shape)).tolist()

    def scenario(a):
        x, y = (double(a, d) for d in data)
        if transpose and len(shape) > 1:
            x, y = x.detach().transpose(0, 1).requires_grad_(), y.detach().transpose(0, 1)
        return checks(a).gradcheck(lambda p, q: p * q * p + q, (x, y))
    assert returned(differential(scenario)) is True

"""Finite-difference gradient checks (torch/autograd/gradcheck.py, slow mode).

``gradcheck(func, inputs)`` compares two Jacobians per (differentiable output,
input requiring grad) pair, both laid out as ``J[input_index, output_index]``:

    numerical   column per input element k:  (f(x + eps e_k) - f(x - eps e_k)) / 2 eps
                the element is perturbed in place through ``x.data`` (no
                version bump, no graph), every output is cloned
    analytical  row per output element j:    autograd.grad(out, inputs, e_j)
                computed twice; the two must agree within ``nondet_tol``

and fails with ``GradcheckError`` ("Jacobian mismatch for output i with
respect to input j, ...") where ``allclose(analytical, numerical, rtol, atol)``
does not hold.  Then it checks that backward is linear in grad_output (zero
grad_outputs give zero grads) and, with ``check_undefined_grad``, that
backward copes with undefined (None) output gradients.

Complex outputs are split into their real and imaginary parts (two real
checks); a complex input's numerical column is the conjugate Wirtinger
derivative ``ds/dx + 1j ds/dy``.  ``gradgradcheck`` runs ``gradcheck`` on the
function ``(inputs, grad_outputs) -> autograd.grad(..., create_graph=True)``.

Not here (PyTorch has them): forward-mode AD and vmap-based batched checks
(glasstorch has neither), sparse inputs.  ``fast_mode`` runs the slow check.
"""
from __future__ import annotations

import itertools
import warnings

from .._tensor import Tensor
from .function import _attach_outputs
from .graph import Node
from .grad_mode import no_grad
from .variable import gradient_edge

__all__ = ["gradcheck", "gradgradcheck", "GradcheckError"]


class GradcheckError(RuntimeError):
    """Error raised by :func:`gradcheck` and :func:`gradgradcheck`."""


FAILED_NONDET_MSG = """\n
NOTE: If your op relies on non-deterministic operations i.e., it is listed here:
https://pytorch.org/docs/stable/generated/torch.use_deterministic_algorithms.html
this failure might be expected.

If you are adding a new operator, please file an issue and then use one of the
workarounds. The workaround depends on how your test invokes gradcheck/gradgradcheck.
If the test
- manually invokes gradcheck/gradgradcheck, then call gradcheck/gradgradcheck
  with `nondet_tol=<tol>` as a keyword argument.
- is OpInfo-based (e.g., in test_ops_gradients.py), then modify the OpInfo for the test
  to have `gradcheck_nondet_tol=<tol>`.
- is a Module test (e.g., in common_nn.py), then modify the corresponding
  module_test entry to have `gradcheck_nondet_tol=<tol>`
"""

_UNDEFINED_NOTE = 'Please look at "Notes about undefined output gradients" in ' \
                  '"tools/autograd/derivatives.yaml"'


def _as_tuple(x):
    if isinstance(x, tuple):
        return x
    if isinstance(x, list):
        return tuple(x)
    return (x,)


def _differentiable_outputs(x):
    return tuple(o for o in _as_tuple(x) if o.requires_grad)


def _is_float_or_complex(t) -> bool:
    return isinstance(t, Tensor) and (t.is_floating_point() or t.is_complex())


def _diff_inputs(inputs):
    return [t for t in inputs if isinstance(t, Tensor) and t.requires_grad]


# -- inputs ------------------------------------------------------------------------------

def _check_inputs(inputs) -> None:
    from .. import complex128, float64
    any_requires_grad = False
    for idx, inp in enumerate(inputs):
        if not (isinstance(inp, Tensor) and inp.requires_grad):
            continue
        if inp.dtype not in (float64, complex128):
            warnings.warn(f"Input #{idx} requires gradient and is not a double precision floating "
                          "point or complex. This check will likely fail if all the inputs are not "
                          "of double precision floating point or complex. ", stacklevel=4)
        if not all(st > 0 or sz <= 1 for st, sz in zip(inp.stride(), inp.size())):
            raise RuntimeError(
                f"The {idx}th input has a dimension with stride 0. gradcheck only supports "
                "inputs that are non-overlapping to be able to compute the numerical gradients "
                "correctly. You should call .contiguous on the input before passing it to "
                "gradcheck.")
        any_requires_grad = True
    if not any_requires_grad:
        raise ValueError("gradcheck expects at least one input tensor to require gradient, but "
                         "none of them have requires_grad=True.")


# -- numerical Jacobian --------------------------------------------------------------------

def _numerical_jacobians(func, inputs, outputs, eps):
    """``result[i][o]``: Jacobian of output ``o`` w.r.t. the i-th input requiring
    grad, shape (input.numel(), output.numel()), by central differences."""
    result = []
    for inp in _diff_inputs(inputs):
        data = inp.data                     # perturbing it bumps no version of inp
        columns = [out.new_zeros((inp.numel(), out.numel()),
                                 dtype=inp.dtype if inp.is_complex() else out.dtype)
                   for out in outputs]
        for k, index in enumerate(itertools.product(*[range(n) for n in inp.shape])):
            entry = data[index]
            dx = _perturbed_difference(func, inputs, entry, eps, index)
            if inp.is_complex():
                dy = _perturbed_difference(func, inputs, entry, eps * 1j, index)
                dx = [a + b * 1j for a, b in zip(dx, dy)]
            for column, d in zip(columns, dx):
                column[k] = d
        result.append(columns)
    return result


def _perturbed_difference(func, inputs, entry, delta, index):
    """(f(entry + delta) - f(entry - delta)) / (2 |delta|), flattened, per
    floating or complex output."""
    norm = abs(delta)
    orig = entry.clone()
    entry.copy_(orig - delta)
    before = [o.clone() for o in _as_tuple(func(*inputs))]
    entry.copy_(orig + delta)
    after = [o.clone() for o in _as_tuple(func(*inputs))]
    entry.copy_(orig)
    diffs = []
    for a, b in zip(before, after):
        _check_same_dtype_and_shape(a, b, norm, index)
        if _is_float_or_complex(a):
            diffs.append(((b - a) / (2 * norm)).detach().reshape(-1))
    return diffs


def _check_same_dtype_and_shape(a, b, eps, index) -> None:
    where = f"on index {index} "
    if a.shape != b.shape:
        raise AssertionError(f"Expected `func` to return outputs with the same shape when inputs "
                             f"are perturbed {where}by {eps}, but got: shapes {a.shape} and "
                             f"{b.shape}.")
    if a.dtype != b.dtype:
        raise AssertionError(f"Expected `func` to return outputs with the same dtype when inputs "
                             f"are perturbed {where}by {eps}, but got: dtypes {a.dtype} and "
                             f"{b.dtype}.")


# -- analytical Jacobian -------------------------------------------------------------------

def _analytical_jacobian_rows(output, diff_inputs):
    """``rows[i][j]``: gradient w.r.t. input i for grad_output = j-th basis vector."""
    from .. import autograd, contiguous_format, zeros_like
    grad_out = zeros_like(output, memory_format=contiguous_format)
    flat = grad_out.view(-1)
    rows = [[] for _ in diff_inputs]
    for j in range(flat.numel()):
        flat.zero_()
        flat[j] = 1.0
        grads = autograd.grad(output, diff_inputs, grad_out, retain_graph=True,
                              allow_unused=True)
        for row, g in zip(rows, grads):
            row.append(g.clone() if g is not None else None)
    return rows


def _stack(rows, diff_inputs, numel_output):
    """Rows -> one (input.numel(), output.numel()) Jacobian per input, plus
    whether every gradient had the input's size and dtype."""
    jacobians, sizes_ok, types_ok = [], True, True
    for inp, row in zip(diff_inputs, rows):
        jacobian = inp.new_zeros((inp.numel(), numel_output))
        for j, g in enumerate(row):
            if g is None:
                continue
            if g.size() != inp.size():
                sizes_ok = False
            elif g.dtype != inp.dtype:
                types_ok = False
            jacobian[:, j] = g.reshape(-1)
        jacobians.append(jacobian)
    return jacobians, sizes_ok, types_ok


def _analytical_jacobians(inputs, output, nondet_tol, check_grad_dtypes):
    diff_inputs = _diff_inputs(inputs)
    first, sizes_ok, types_ok = _stack(_analytical_jacobian_rows(output.clone(), diff_inputs),
                                       diff_inputs, output.numel())
    second, _, _ = _stack(_analytical_jacobian_rows(output.clone(), diff_inputs),
                          diff_inputs, output.numel())
    if not types_ok and check_grad_dtypes:
        raise GradcheckError("Gradient has dtype mismatch")
    if not sizes_ok:
        raise GradcheckError("Analytical gradient has incorrect size")
    for a, b in zip(first, second):
        if a.numel() != 0 and (a - b).abs().max() > nondet_tol:
            raise GradcheckError(
                "Backward is not reentrant, i.e., running backward with same input and "
                "grad_output multiple times gives different values, although analytical gradient "
                f"matches numerical gradient.The tolerance for nondeterminism was {nondet_tol}."
                + FAILED_NONDET_MSG)
    return first


# -- the checks ------------------------------------------------------------------------------

def _mismatch_message(analytical, numerical, output_idx, input_idx, complex_indices, test_imag):
    prefix = ""
    if complex_indices and output_idx in complex_indices:
        part = "imaginary" if test_imag else "real"
        prefix = f"While considering the {part} part of complex outputs only, "
    return (prefix + f"Jacobian mismatch for output {output_idx:d} with respect to input "
            f"{input_idx:d},\nnumerical:{numerical}\nanalytical:{analytical}\n")


def _allclose(a, b, rtol, atol) -> bool:
    """``torch.allclose`` after type promotion: |a - b| <= atol + rtol |b| (or a == b)."""
    from .. import promote_types
    dtype = promote_types(a.dtype, b.dtype)
    a, b = a.to(dtype), b.to(dtype)
    return bool(((a - b).abs() <= atol + rtol * b.abs()).logical_or(a == b).all())


def _slow_gradcheck(func, func_out, inputs, outputs, eps, rtol, atol, check_grad_dtypes,
                    nondet_tol, complex_indices=None, test_imag=False):
    func_out = _as_tuple(func_out)
    float_outputs = [o for o in func_out if _is_float_or_complex(o)]
    numerical = _numerical_jacobians(func, inputs, float_outputs, eps)
    if not outputs:
        for per_input in numerical:
            for jacobian in per_input:
                if bool(jacobian.ne(0).any()):
                    raise GradcheckError("Numerical gradient for function expected to be zero")
        return
    # [input][output] -> [differentiable output][input]
    numerical = [list(col) for o, col in zip(float_outputs, zip(*numerical)) if o.requires_grad]
    for i, out in enumerate(outputs):
        analytical = _analytical_jacobians(inputs, out, nondet_tol, check_grad_dtypes)
        for j, (a, n) in enumerate(zip(analytical, numerical[i])):
            if not _allclose(a, n, rtol, atol):
                raise GradcheckError(_mismatch_message(a, n, i, j, complex_indices, test_imag))


def _real_and_imag_output(func):
    """Two functions returning the real / imaginary parts of complex outputs."""
    def part(fn):
        def wrapped(*inputs):
            return tuple(fn(o) if o.is_complex() else o for o in _as_tuple(func(*inputs)))
        return wrapped
    from .. import imag, real
    return part(real), part(imag)


def _check_jacobians(func, func_out, inputs, outputs, eps, rtol, atol, check_grad_dtypes,
                     nondet_tol):
    if not any(o.is_complex() for o in _as_tuple(func_out)):
        _slow_gradcheck(func, func_out, inputs, outputs, eps, rtol, atol, check_grad_dtypes,
                        nondet_tol)
        return
    complex_indices = [i for i, o in enumerate(outputs) if o.is_complex()]
    real_fn, imag_fn = _real_and_imag_output(func)
    for fn, test_imag in ((imag_fn, True), (real_fn, False)):
        out = fn(*inputs)
        _slow_gradcheck(fn, out, inputs, _differentiable_outputs(out), eps, rtol, atol,
                        check_grad_dtypes, nondet_tol, complex_indices, test_imag)


def _test_backward_mul_by_grad_output(outputs, inputs) -> None:
    from .. import autograd, zeros_like
    diff_inputs = _diff_inputs(inputs)
    grads = autograd.grad(outputs, diff_inputs, [zeros_like(o) for o in outputs],
                          allow_unused=True)
    for gi, di in zip(grads, diff_inputs):
        if gi is None:
            continue
        if not bool(gi.eq(0).all()):
            raise GradcheckError("backward not multiplied by grad_output")
        if gi.dtype != di.dtype:
            raise GradcheckError("grad is incorrect type")
        if gi.device != di.device:
            raise GradcheckError("grad is incorrect device")
        if gi.size() != di.size():
            raise GradcheckError("grad is incorrect size")


class UndefinedGradBackward(Node):
    """Passes undefined (None) gradients to its inputs."""

    __slots__ = ()
    _name_prefix = "torch::autograd::"

    def apply(self, grads):
        return [None] * len(self._next_edges)


def _undefined_grad(t):
    """A copy of ``t`` whose gradient reaches ``t`` as undefined
    (``torch._C._functions.UndefinedGrad``)."""
    with no_grad():
        out = t.clone()
    return _attach_outputs(UndefinedGradBackward((gradient_edge(t),)), [out])


def _warn_bc_breaking() -> None:
    warnings.warn('Backwards compatibility: New undefined gradient support checking feature is '
                  'enabled by default, but it may break existing callers of this function. If '
                  'this is true for you, you can call this function with '
                  '"check_undefined_grad=False" to disable the feature', stacklevel=4)


def _test_undefined_backward_mode(func, outputs, inputs) -> None:
    """Backward must accept undefined output grads: all of them at once, and
    (with several outputs) one at a time."""
    from .. import autograd, zeros_like
    diff_inputs = _diff_inputs(inputs)
    to_check = [[_undefined_grad(o) for o in _differentiable_outputs(func(*inputs))]]
    if len(to_check[0]) > 1:
        for undefined in range(len(outputs)):
            fresh = _differentiable_outputs(func(*inputs))
            to_check.append([_undefined_grad(o) if k == undefined else o
                             for k, o in enumerate(fresh)])
    for outs in to_check:
        try:
            grads = autograd.grad(outs, diff_inputs, [zeros_like(o) for o in outs],
                                  allow_unused=True)
        except RuntimeError as e:
            _warn_bc_breaking()
            raise GradcheckError("Expected backward function to handle undefined output grads. "
                                 + _UNDEFINED_NOTE) from e
        for gi in grads:
            if gi is not None and not bool(gi.eq(0).all()):
                _warn_bc_breaking()
                raise GradcheckError("Expected all input grads to be undefined or zero when all "
                                     "output grads are undefined or zero. " + _UNDEFINED_NOTE)


def gradcheck(func, inputs, *, eps=1e-6, atol=1e-5, rtol=1e-3, raise_exception=True,
              nondet_tol=0.0, check_undefined_grad=True, check_grad_dtypes=False,
              check_batched_grad=False, check_batched_forward_grad=False,
              check_forward_ad=False, check_backward_ad=True, fast_mode=False, masked=None):
    """Check ``func``'s backward against finite differences at ``inputs``
    (double precision expected).  Returns True, or raises ``GradcheckError``
    (False instead with ``raise_exception=False``)."""
    if not (check_forward_ad or check_backward_ad):
        raise AssertionError("Expected at least one of check_forward_ad or check_backward_ad to "
                             "be True")
    if check_batched_grad and not check_backward_ad:
        raise AssertionError("Setting check_batched_grad=True requires check_backward_ad to be "
                             "True")
    if check_batched_forward_grad and not check_forward_ad:
        raise AssertionError("Setting check_batched_forward_grad=True requires check_forward_ad "
                             "to be True")
    if check_forward_ad or check_batched_grad:
        raise NotImplementedError("gradcheck: forward-mode AD and batched (vmap) gradients are "
                                  "not implemented in glasstorch")
    try:
        return _gradcheck(func, inputs, eps, atol, rtol, nondet_tol, check_undefined_grad,
                          check_grad_dtypes, check_backward_ad)
    except GradcheckError:
        if raise_exception:
            raise
        return False


def _gradcheck(func, inputs, eps, atol, rtol, nondet_tol, check_undefined_grad,
               check_grad_dtypes, check_backward_ad):
    inputs = _as_tuple(inputs)
    _check_inputs(inputs)
    func_out = func(*inputs)
    outputs = _differentiable_outputs(func_out)
    if not check_backward_ad:
        return True
    _check_jacobians(func, func_out, inputs, outputs, eps, rtol, atol, check_grad_dtypes,
                     nondet_tol)
    _test_backward_mul_by_grad_output(outputs, inputs)
    if check_undefined_grad:
        _test_undefined_backward_mode(func, outputs, inputs)
    return True


def _random_grad_output(out, noncontiguous):
    """Uniform in [-1, 1), requiring grad; optionally a strided (every other
    element of the last dim) tensor."""
    from .. import float64, rand
    dtype = out.dtype if out.is_floating_point() or out.is_complex() else float64
    shape = tuple(out.shape)
    with no_grad():
        if noncontiguous and shape:
            t = rand(shape[:-1] + (2 * shape[-1],), dtype=dtype, device=out.device)[..., ::2]
        else:
            t = rand(shape, dtype=dtype, device=out.device)
        t.mul_(2).sub_(1)
    return t.requires_grad_()


def gradgradcheck(func, inputs, grad_outputs=None, *, eps=1e-6, atol=1e-5, rtol=1e-3,
                  gen_non_contig_grad_outputs=False, raise_exception=True, nondet_tol=0.0,
                  check_undefined_grad=True, check_grad_dtypes=False, check_batched_grad=False,
                  check_fwd_over_rev=False, check_rev_over_rev=True, fast_mode=False,
                  masked=False):
    """gradcheck of the backward: of ``(inputs, grad_outputs) -> grads`` computed
    with ``create_graph=True``.  Random grad_outputs in [-1, 1) if not given."""
    if not (check_fwd_over_rev or check_rev_over_rev):
        raise AssertionError("Expected at least one of check_fwd_over_rev or check_rev_over_rev "
                             "to be True")
    if check_undefined_grad and not check_rev_over_rev:
        raise AssertionError("Setting check_undefined_grad=True requires check_rev_over_rev to "
                             "be True")
    if check_batched_grad and not check_rev_over_rev:
        raise AssertionError("Setting check_batched_grad=True requires check_rev_over_rev to be "
                             "True")
    from .. import autograd
    inputs = _as_tuple(inputs)
    if grad_outputs is None:
        grad_outputs = tuple(_random_grad_output(o, gen_non_contig_grad_outputs)
                             for o in _differentiable_outputs(func(*inputs)))
    else:
        grad_outputs = _as_tuple(grad_outputs)
    num_outputs = len(grad_outputs)
    diff_input_indices = {i for i, x in enumerate(inputs)
                          if isinstance(x, Tensor) and x.requires_grad}
    diff_grad_output_indices = {i for i, x in enumerate(grad_outputs) if x.requires_grad}

    def new_func(*args):
        input_args = tuple(x.requires_grad_() if i in diff_input_indices else x
                           for i, x in enumerate(args[:-num_outputs]))
        outputs = _differentiable_outputs(func(*input_args))
        grads_out = tuple(x.requires_grad_() if i in diff_grad_output_indices else x
                          for i, x in enumerate(args[-num_outputs:]))
        diff_inputs = tuple(x for i, x in enumerate(input_args) if i in diff_input_indices)
        grads = autograd.grad(outputs, diff_inputs, grads_out, create_graph=True,
                              allow_unused=True)
        return tuple(g for g in grads if g is not None)

    return gradcheck(new_func, inputs + grad_outputs, eps=eps, atol=atol, rtol=rtol,
                     raise_exception=raise_exception, nondet_tol=nondet_tol,
                     check_undefined_grad=check_undefined_grad,
                     check_grad_dtypes=check_grad_dtypes, check_batched_grad=check_batched_grad,
                     fast_mode=fast_mode, check_forward_ad=check_fwd_over_rev,
                     check_backward_ad=check_rev_over_rev, masked=masked)

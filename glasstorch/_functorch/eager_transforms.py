"""Reverse-mode transforms (torch/_functorch/eager_transforms.py): ``grad``,
``grad_and_value``, ``vjp``, ``jacrev``, ``hessian``.

Each runs the function at a new grad level (``pyfunctorch.GradInterpreter``):

    grad(f)(x)
      level = push GradInterpreter
      w = TensorWrapper(x, level).requires_grad_()       (every tensor argument is
      out = f(w)                                          wrapped; only argnums'
      g = autograd.grad(out, w, create_graph=True)        require grad)
      unwrap g and out at level; pop

``create_graph=True`` always: an outer level (another ``grad``, or a ``vmap``
around this one) sees the backward's ops as ops of its own and can
differentiate or batch them.  ``vjp`` returns a function that runs the
backward later, over the wrappers of its ended level (they stand for their
values then): that is what lets ``jacrev`` batch the backward with ``vmap``.
"""
from __future__ import annotations

import functools

from .. import autograd
from .._tensor import Tensor
from ..autograd import grad_mode
from ..utils import _pytree as pytree
from .pyfunctorch import GradInterpreter, interpreter_scope, next_level
from .tensor_wrapper import unwrap_at, wrap_at
from .vmap import vmap

__all__ = ["grad", "grad_and_value", "vjp", "jacrev", "hessian"]


# -- arguments ------------------------------------------------------------------------

def _check_argnums(argnums, n_args: int) -> None:
    if isinstance(argnums, int):
        argnums = (argnums,)
    elif isinstance(argnums, tuple):
        if len(argnums) == 0:
            raise RuntimeError("argnums must be non-empty")
        if len(set(argnums)) != len(argnums):
            raise RuntimeError(f"argnums elements must be unique, got {argnums}")
    if not isinstance(argnums, tuple) or not all(isinstance(a, int) for a in argnums):
        raise RuntimeError(f"argnums must be int or Tuple[int, ...], got: {type(argnums)}")
    for a in argnums:
        if not -n_args <= a < n_args:
            raise RuntimeError(f"Got argnum={a}, but only {n_args} positional inputs")


def _diff_args(args, argnums):
    return args[argnums] if isinstance(argnums, int) else tuple(args[a] for a in argnums)


def _wrap_all(tree, interpreter):
    return pytree.tree_map(lambda t: wrap_at(t, interpreter) if isinstance(t, Tensor) else t, tree)


def _unwrap(tree, level):
    """Every leaf of ``tree`` (all tensors) seen from below ``level``."""
    def unwrap(t):
        if not isinstance(t, Tensor):
            raise RuntimeError(f"Expected tensors, got unsupported type {type(t)}")
        return unwrap_at(t, level)
    return pytree.tree_map(unwrap, tree)


def _create_differentiable(tree):
    def require(t):
        if not isinstance(t, Tensor):
            raise RuntimeError(f"Expected tensors, got unsupported type {type(t)}")
        return t.requires_grad_()
    return pytree.tree_map(require, tree)


def _grad_of(outputs, inputs, grad_outputs=None, retain_graph=True, create_graph=True):
    """``autograd.grad`` over flat lists, a zero where an input is unused
    (functorch's ``_autograd_grad``)."""
    pairs = [(o, g) for o, g in zip(outputs, grad_outputs or [None] * len(outputs))
             if o.requires_grad]
    if not pairs:
        return [i.new_zeros(i.shape) for i in inputs]
    grads = autograd.grad([o for o, _ in pairs], inputs,
                          [g for _, g in pairs] if grad_outputs is not None else None,
                          retain_graph=retain_graph, create_graph=create_graph, allow_unused=True)
    return [g if g is not None else i.new_zeros(i.shape) for g, i in zip(grads, inputs)]


# -- grad -----------------------------------------------------------------------------

def grad_and_value(func, argnums=0, has_aux=False):
    """``torch.func.grad_and_value``: (gradient of the scalar ``func`` with respect
    to the ``argnums`` arguments, its value) — ``(value, aux)`` with ``has_aux``."""
    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        _check_argnums(argnums, len(args))
        level = next_level()
        interpreter = GradInterpreter(level, grad_mode.is_grad_enabled())
        with interpreter_scope(interpreter), grad_mode.enable_grad():
            args = _wrap_all(args, interpreter)
            kwargs = _wrap_all(kwargs, interpreter)
            diff_args = _create_differentiable(_diff_args(args, argnums))
            output = func(*args, **kwargs)
            if has_aux:
                if not (isinstance(output, tuple) and len(output) == 2):
                    raise RuntimeError("grad_and_value(f)(*args): output of function f should "
                                       "be a tuple: (output, aux) if has_aux is True")
                output, aux = output
            if not isinstance(output, Tensor):
                raise RuntimeError("grad_and_value(f)(*args): Expected f(*args) to return a "
                                   f"Tensor, got {type(output)}")
            if output.dim() != 0:
                raise RuntimeError("grad_and_value(f)(*args): Expected f(*args) to return a "
                                   f"scalar Tensor, got tensor with {output.dim()} dims. Maybe "
                                   "you wanted to use the vjp or jacrev APIs instead?")
            flat_diff, spec = pytree.tree_flatten(diff_args)
            grads = pytree.tree_unflatten(_grad_of([output], flat_diff), spec)
            grads, output = _unwrap(grads, level), _unwrap(output, level)
            if has_aux:
                return grads, (output, _unwrap(aux, level))
            return grads, output
    return wrapper


def grad(func, argnums=0, has_aux=False):
    """``torch.func.grad``: the gradient of the scalar ``func`` with respect to its
    ``argnums`` arguments (and ``aux`` with ``has_aux``)."""
    transformed = grad_and_value(func, argnums, has_aux)

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        grads, value = transformed(*args, **kwargs)
        return (grads, value[1]) if has_aux else grads
    return wrapper


# -- vjp ------------------------------------------------------------------------------

def vjp(func, *primals, has_aux=False):
    """``torch.func.vjp``: ``(func(*primals), vjp_fn)``; ``vjp_fn(cotangents)`` is
    the cotangents pulled back to the primals (a tuple, one per primal)."""
    level = next_level()
    interpreter = GradInterpreter(level, grad_mode.is_grad_enabled())
    with interpreter_scope(interpreter), grad_mode.enable_grad():
        wrapped = _wrap_all(primals, interpreter)
        diff_primals = _create_differentiable(wrapped)
        outputs = func(*diff_primals)
        if has_aux:
            if not (isinstance(outputs, tuple) and len(outputs) == 2):
                raise RuntimeError("vjp(f, *primals): output of function f should be a tuple: "
                                   "(output, aux) if has_aux is True")
            outputs, aux = outputs
        flat_out, out_spec = pytree.tree_flatten(outputs)
        for out in flat_out:
            if not isinstance(out, Tensor):
                raise RuntimeError(f"vjp(f, *primals): Expected f to be a function that has "
                                   f"non-empty output, got {type(out)}")
            if not (out.is_floating_point() or out.is_complex()):
                raise RuntimeError("vjp(f, ...): All outputs of f must be floating-point or "
                                   f"complex Tensors, got Tensor with dtype {out.dtype}")
        flat_primals, primals_spec = pytree.tree_flatten(diff_primals)
        results = _unwrap(outputs, level)

    def vjp_fn(cotangents, retain_graph=True, create_graph=None):
        if create_graph is None:
            create_graph = grad_mode.is_grad_enabled()
        flat_cot, cot_spec = pytree.tree_flatten(cotangents)
        if cot_spec != out_spec:
            raise RuntimeError(f"Expected pytree structure of cotangents to be the same as pytree "
                               f"structure of outputs to the function. cotangents: "
                               f"{pytree.treespec_pprint(cot_spec)}, primal output: "
                               f"{pytree.treespec_pprint(out_spec)}")
        grads = _grad_of(flat_out, flat_primals, flat_cot, retain_graph, create_graph)
        return pytree.tree_unflatten(grads, primals_spec)

    if has_aux:
        return results, vjp_fn, _unwrap(aux, level)
    return results, vjp_fn


# -- Jacobians ------------------------------------------------------------------------

def jacrev(func, argnums=0, *, has_aux=False, chunk_size=None, _preallocate_and_copy=False):
    """``torch.func.jacrev``: the Jacobian of ``func`` by reverse mode, one ``vjp``
    batched by ``vmap`` over the rows of an identity (the output's basis)."""
    @functools.wraps(func)
    def wrapper(*args):
        _check_argnums(argnums, len(args))
        diff = (argnums,) if isinstance(argnums, int) else argnums

        def over_diff(*diff_args):
            full = list(args)
            for a, v in zip(diff, diff_args):
                full[a] = v
            return func(*full)
        result = vjp(over_diff, *[args[a] for a in diff], has_aux=has_aux)
        outputs, vjp_fn = result[0], result[1]
        flat_out, out_spec = pytree.tree_flatten(outputs)
        sizes = [o.numel() for o in flat_out]
        total = sum(sizes)
        first = flat_out[0]
        basis = first.new_zeros((total, total))
        basis.diagonal().fill_(1)
        cotangents = pytree.tree_unflatten(
            [part.reshape(total, *o.shape) for part, o in zip(basis.split(sizes, 1), flat_out)],
            out_spec)
        columns = vmap(vjp_fn, chunk_size=chunk_size)(cotangents)   # per diff arg, a pytree
        flat_cols, cols_spec = pytree.tree_flatten(columns)
        per_output = []
        for o, start, size in zip(flat_out, _offsets(sizes), sizes):
            blocks = [c.narrow(0, start, size).reshape(*o.shape, *c.shape[1:]) for c in flat_cols]
            per_arg = pytree.tree_unflatten(blocks, cols_spec)
            per_output.append(per_arg[0] if isinstance(argnums, int) else per_arg)
        jac = pytree.tree_unflatten(per_output, out_spec)
        return (jac, result[2]) if has_aux else jac
    return wrapper


def _offsets(sizes):
    start = 0
    for s in sizes:
        yield start
        start += s


def hessian(func, argnums=0):
    """``torch.func.hessian``: the Jacobian of the Jacobian.  PyTorch takes the
    outer one by forward mode (``jacfwd(jacrev(f))``); this one is
    ``jacrev(jacrev(f))``, the same values by reverse mode."""
    return jacrev(jacrev(func, argnums), argnums)

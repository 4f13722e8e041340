"""The autodiff transforms (torch/_functorch/eager_transforms.py): reverse
mode ``grad``, ``grad_and_value``, ``vjp``, ``jacrev``; forward mode ``jvp``,
``jacfwd``, ``linearize``; ``hessian``.

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

import contextlib
import functools
import itertools

from .. import autograd
from .._tensor import Tensor
from ..autograd import functional, grad_mode
from ..utils import _pytree as pytree
from .pyfunctorch import GradInterpreter, JvpInterpreter, interpreter_scope, next_level
from .tensor_wrapper import unwrap_at, wrap_at
from .vmap import vmap

__all__ = ["grad", "grad_and_value", "vjp", "jacrev", "jvp", "jacfwd", "linearize", "hessian"]


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
        over_diff, diff_args = _of_diff_args(func, args, argnums)
        result = vjp(over_diff, *diff_args, has_aux=has_aux)
        outputs, vjp_fn = result[0], result[1]
        flat_out, out_spec = pytree.tree_flatten(outputs)
        basis, sizes = _standard_basis(flat_out)
        columns = vmap(vjp_fn, chunk_size=chunk_size)(pytree.tree_unflatten(basis, out_spec))
        flat_cols, cols_spec = pytree.tree_flatten(columns)     # per diff arg, a pytree
        per_output = []
        for o, start, size in zip(flat_out, itertools.accumulate([0] + sizes), sizes):
            blocks = [c.narrow(0, start, size).reshape(*o.shape, *c.shape[1:]) for c in flat_cols]
            per_arg = pytree.tree_unflatten(blocks, cols_spec)
            per_output.append(per_arg[0] if isinstance(argnums, int) else per_arg)
        jac = pytree.tree_unflatten(per_output, out_spec)
        return (jac, result[2]) if has_aux else jac
    return wrapper


def _of_diff_args(func, args, argnums):
    """(``func`` as a function of the ``argnums`` arguments only, their values)."""
    diff = (argnums,) if isinstance(argnums, int) else argnums

    def over_diff(*diff_args):
        full = list(args)
        for a, v in zip(diff, diff_args):
            full[a] = v
        return func(*full)
    return over_diff, tuple(args[a] for a in diff)


def _standard_basis(flat):
    """autograd.functional's standard basis (one identity row per element of
    ``flat``'s tensors together, a block per tensor in its dtype), each block
    shaped as its tensor ((total, *shape)), and the tensors' sizes: the
    cotangents of ``jacrev``, the tangents of ``jacfwd``."""
    sizes = [t.numel() for t in flat]
    blocks = functional._standard_basis(flat, sizes)
    return [b.reshape(b.shape[0], *t.shape) for b, t in zip(blocks, flat)], sizes


# -- forward mode --------------------------------------------------------------------

def jvp(func, primals, tangents, *, strict=False, has_aux=False):
    """``torch.func.jvp``: ``(func(*primals), J @ tangents)``, forward mode at a
    new level whose wrappers carry the tangents (``autograd.forward_ad``)."""
    from ..autograd import forward_ad
    where = "jvp(f, primals, tangents)"
    if not isinstance(primals, tuple):
        raise RuntimeError(f"{where}: Expected primals to be a tuple. E.g. it should be valid to "
                           "call f(*primals).")
    flat_primals, primals_spec = pytree.tree_flatten(primals)
    flat_tangents, tangents_spec = pytree.tree_flatten(tangents)
    if primals_spec != tangents_spec:
        raise RuntimeError(f"{where}: Expected primals and tangents to have the same python "
                           "structure. For example, if primals is a tuple of 3 tensors, tangents "
                           f"also must be. Got primals with structure {primals_spec} and tangents "
                           f"with structure {tangents_spec}")
    for name, flat in (("primals", flat_primals), ("tangents", flat_tangents)):
        if not flat:
            raise RuntimeError(f"{where}: Expected {name} to contain at least one Tensor.")
        for t in flat:
            if not isinstance(t, Tensor):
                raise RuntimeError(f"{where}: Expected {name} to only contain Tensors, got "
                                   f"{type(t)}")
    level = next_level()
    interpreter = JvpInterpreter(level, grad_mode.is_grad_enabled(),
                                 forward_ad._is_fwd_grad_enabled())
    # a nested jvp reuses the forward-AD level already open: functorch's levels,
    # not forward AD's, keep nested transforms apart
    nested = forward_ad._current_level >= 0
    with interpreter_scope(interpreter), forward_ad._set_fwd_grad_enabled(True), \
            (contextlib.nullcontext() if nested else forward_ad.dual_level()):
        duals = [forward_ad.make_dual(wrap_at(p, interpreter), wrap_at(t, interpreter))
                 for p, t in zip(flat_primals, flat_tangents)]
        outputs = func(*pytree.tree_unflatten(duals, primals_spec))
        if has_aux:
            if not (isinstance(outputs, tuple) and len(outputs) == 2):
                raise RuntimeError(f"{where}: output of function f should be a tuple: "
                                   "(output, aux) if has_aux is True")
            outputs, aux = outputs
        flat_out, out_spec = pytree.tree_flatten(outputs)
        primals_out, tangents_out = [], []
        for out in flat_out:
            if not isinstance(out, Tensor):
                raise RuntimeError(f"{where}: expected f(*primals) to return only tensors, got "
                                   f"unsupported type {type(out)}")
            primal, tangent = forward_ad.unpack_dual(out)
            primals_out.append(unwrap_at(primal, level))
            tangents_out.append(unwrap_at(tangent, level) if tangent is not None
                                else unwrap_at(primal, level).new_zeros(primal.shape))
        result = (pytree.tree_unflatten(primals_out, out_spec),
                  pytree.tree_unflatten(tangents_out, out_spec))
        return result + (_unwrap(aux, level),) if has_aux else result


def jacfwd(func, argnums=0, has_aux=False, *, randomness="error"):
    """``torch.func.jacfwd``: the Jacobian by forward mode, one ``jvp`` batched by
    ``vmap`` over the columns of an identity (the inputs' basis)."""
    @functools.wraps(func)
    def wrapper(*args):
        _check_argnums(argnums, len(args))
        over_diff, diff_args = _of_diff_args(func, args, argnums)
        flat_in, in_spec = pytree.tree_flatten(diff_args)
        basis_parts, sizes = _standard_basis(flat_in)

        def push(*flat_tangents):
            tangents = pytree.tree_unflatten(list(flat_tangents), in_spec)
            result = jvp(over_diff, diff_args, tangents, has_aux=has_aux)
            return (result[1], result[0], result[2]) if has_aux else (result[1], result[0])
        columns = vmap(push, randomness=randomness,
                       out_dims=(0, None, None) if has_aux else (0, None))(*basis_parts)
        tangents_out, primals_out = columns[0], columns[1]
        flat_t, out_spec = pytree.tree_flatten(tangents_out)
        flat_p = pytree.tree_flatten(primals_out)[0]
        per_output = []
        for t, o in zip(flat_t, flat_p):
            blocks = [c.movedim(0, -1).reshape(*o.shape, *inp.shape)
                      for c, inp in zip(t.split(sizes, 0), flat_in)]
            per_arg = pytree.tree_unflatten(blocks, in_spec)
            per_output.append(per_arg[0] if isinstance(argnums, int) else per_arg)
        jac = pytree.tree_unflatten(per_output, out_spec)
        return (jac, columns[2]) if has_aux else jac
    return wrapper


def linearize(func, *primals):
    """``torch.func.linearize``: ``(func(*primals), jvp_fn)``.  PyTorch traces the
    forward once with make_fx; here ``jvp_fn`` runs ``jvp`` again (the same
    values, the forward recomputed)."""
    output = func(*primals)

    def jvp_fn(*tangents):
        return jvp(func, primals, tangents)[1]
    return output, jvp_fn


def hessian(func, argnums=0):
    """``torch.func.hessian``: the forward-mode Jacobian of the reverse-mode one
    (``jacfwd(jacrev(f))``)."""
    return jacfwd(jacrev(func, argnums), argnums)

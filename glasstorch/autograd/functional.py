"""``torch.autograd.functional``: derivatives of a whole function
(torch/autograd/functional.py): ``vjp``, ``jvp``, ``jacobian``, ``hessian``,
``hvp``, ``vhp``.

All of them are built on ``autograd.grad`` and follow one recipe:

1. the inputs become a tuple of *new* tensor objects that require grad
   (``_fresh_inputs``), so gradients are taken with respect to exactly the
   arguments ``func`` received, never to a tensor it captured;
2. ``func`` runs with grad mode on; its outputs become a tuple and are checked;
3. one or more ``autograd.grad`` calls; outputs that do not require grad are
   skipped (``_autograd_grad``) and the ``None`` gradients that result become
   zeros, or errors with ``strict=True`` (``_zeros_for_none``);
4. results are detached unless ``create_graph`` and lose the tuple nesting the
   caller did not use (``_untuple``).

``jvp`` and ``hvp`` need a Jacobian-vector product, which reverse mode gives by
the double-backward trick: ``u -> J^T u`` is linear in ``u``, so differentiating
``<J^T u, v>`` with respect to ``u`` gives ``J v`` whatever ``u`` is (zeros here).

``vectorize=True`` computes every row of a Jacobian in one ``autograd.grad``
call with ``is_grads_batched=True`` (vmap over the grad_outputs);
``strategy="forward-mode"`` pushes a batch of tangents through
``autograd.forward_ad`` under vmap instead.
"""
from __future__ import annotations

import glasstorch as torch

from . import forward_ad

__all__ = ["vjp", "jvp", "jacobian", "hessian", "hvp", "vhp"]


# ----------------------------------------------------------------- tuples

def _as_tuple(inp, arg_name, fn_name):
    """``(was_tuple, tuple_of_tensors)``; anything but a Tensor or a tuple of
    Tensors is a TypeError."""
    is_tuple = isinstance(inp, tuple)
    items = inp if is_tuple else (inp,)
    for i, el in enumerate(items):
        if not isinstance(el, torch.Tensor):
            where = f"the value at index {i}" if is_tuple else f"the given {arg_name}"
            raise TypeError(f"The {arg_name} given to {fn_name} must be either a Tensor or a "
                            f"tuple of Tensors but {where} has type {type(el)}.")
    return is_tuple, items


def _untuple(res, was_tuple, inner_was_tuple=True):
    """Undo ``_as_tuple``: unwrap ``res`` where the caller passed a bare Tensor;
    with ``inner_was_tuple`` False, also the inner level of a tuple of tuples
    (jacobian's ``[output][input]``)."""
    if not inner_was_tuple:
        res = tuple(el[0] for el in res)
    return res if was_tuple else res[0]


# ----------------------------------------------------- preparing the inputs

def _fresh_inputs(inputs, create_graph, need_graph):
    """New tensor objects for ``inputs``: a differentiable alias (``view_as``)
    of an input that requires grad when the caller wants a graph back to it
    (``create_graph``), otherwise a detached one requiring grad iff
    ``need_graph``.  (PyTorch clones sparse inputs instead; glasstorch has none.)"""
    return tuple(inp.view_as(inp) if create_graph and inp.requires_grad
                 else inp.detach().requires_grad_(need_graph)
                 for inp in inputs)


def _prepare_v(v, refs, refs_is_tuple, fn_name, create_graph, refs_are_outputs):
    """Check the vector ``v`` against ``refs`` (the outputs for vjp, the
    inputs otherwise) and return it as a tuple; ``None`` only stands for
    ``1`` when ``refs`` is one single-element tensor."""
    if v is None:
        if len(refs) != 1 or refs[0].nelement() != 1:
            what = ("user-provided function returns a single Tensor" if refs_are_outputs
                    else "input to the user-provided function is a single Tensor")
            raise RuntimeError(f"The vector v can only be None if the {what} with a single "
                               f"element.")
        return None
    _, v = _as_tuple(v, "v", fn_name)
    v = _fresh_inputs(v, create_graph, need_graph=False)
    if len(v) != len(refs):
        if refs_is_tuple:
            raise RuntimeError(f"v is a tuple of invalid length: should be {len(refs)} but got "
                               f"{len(v)}.")
        raise RuntimeError("The given v should contain a single Tensor.")
    for i, (el_v, ref) in enumerate(zip(v, refs)):
        if el_v.size() != ref.size():
            entry = f"Entry {i} in " if refs_is_tuple else ""
            raise RuntimeError(f"{entry}v has invalid size: should be {ref.size()} but got "
                               f"{el_v.size()}.")
    return v


# ------------------------------------------------------------ strict checks

_NOT_REQUIRING_GRAD = {
    "outputs": "Output {i} of the user-provided function does not require gradients. The "
               "outputs must be computed in a differentiable manner from the input when "
               "running in strict mode.",
    "grad_inputs": "The gradient with respect to input {i} is independent of the inputs of "
                   "the user-provided function. This is not allowed in strict mode.",
    "jacobian": "While computing the hessian, found that the jacobian of the user-provided "
                "function with respect to input {i} is independent of the input. This is not "
                "allowed in strict mode. You should ensure that your function is twice "
                "differentiable and that the jacobian depends on the inputs (this would be "
                "violated by a linear function for example).",
    "hessian": "The hessian of the user-provided function with respect to input {i} is "
               "independent of the input. This is not allowed in strict mode. You should "
               "ensure that your function is thrice differentiable and that the hessian "
               "depends on the inputs.",
}


def _check_requires_grad(tensors, kind, strict):
    """In strict mode, every one of ``tensors`` (a ``kind`` of intermediate
    result) must exist and be connected to the graph."""
    if not strict:
        return
    for i, t in enumerate(tensors):
        if t is None:
            raise RuntimeError(f"The output of the user-provided function is independent of "
                               f"input {i}. This is not allowed in strict mode.")
        if not t.requires_grad:
            raise RuntimeError(_NOT_REQUIRING_GRAD[kind].format(i=i))


_INDEPENDENT = {
    "back": "The output of the user-provided function is independent of input {i}. This is "
            "not allowed in strict mode.",
    "back_trick": "The gradient with respect to the input is independent of entry {i} in the "
                  "grad_outputs when using the double backward trick to compute forward mode "
                  "gradients. This is not allowed in strict mode.",
    "double_back": "The jacobian of the user-provided function is independent of input {i}. "
                   "This is not allowed in strict mode.",
    "double_back_trick": "The hessian of the user-provided function is independent of entry "
                         "{i} in the grad_jacobian. This is not allowed in strict mode as it "
                         "prevents from using the double backward trick to replace forward "
                         "mode AD.",
}


def _zeros_for_none(grads, refs, strict, create_graph, stage):
    """Replace each ``None`` gradient by zeros shaped like its ``refs`` entry.
    Strict mode refuses a ``None`` and, with ``create_graph``, a gradient that
    has no graph; ``stage`` names the backward pass for the message."""
    res = []
    for i, g in enumerate(grads):
        if g is None:
            if strict:
                raise RuntimeError(_INDEPENDENT[stage].format(i=i))
            g = torch.zeros_like(refs[i])
        elif strict and create_graph and not g.requires_grad:
            what = "hessian" if stage.startswith("double") else "jacobian"
            raise RuntimeError(f"The {what} of the user-provided function is independent of "
                               f"input {i}. This is not allowed in strict mode when "
                               f"create_graph=True.")
        res.append(g)
    return tuple(res)


# ------------------------------------------------------------ gradients

def _autograd_grad(outputs, inputs, grad_outputs=None, create_graph=False, retain_graph=None,
                   is_grads_batched=False):
    """``autograd.grad`` over the outputs that require grad (``None`` entries
    and constants are dropped with their grad_outputs); all-``None`` when no
    output does.  Unused inputs get ``None``."""
    if grad_outputs is None:
        grad_outputs = (None,) * len(outputs)
    kept = [(out, g) for out, g in zip(outputs, grad_outputs)
            if out is not None and out.requires_grad]
    if not kept:
        return (None,) * len(inputs)
    kept_outputs, kept_grads = zip(*kept)
    return torch.autograd.grad(kept_outputs, inputs, kept_grads, allow_unused=True,
                               create_graph=create_graph, retain_graph=retain_graph,
                               is_grads_batched=is_grads_batched)


def _last_backward(outputs, inputs, v, refs, strict, create_graph, stage):
    """The backward pass that gives vjp, jvp, hvp and vhp their result: it
    records a graph if the caller asked for one (otherwise the caller's grad
    mode stands); ``None`` gradients become zeros shaped like ``refs``."""
    with torch.set_grad_enabled(create_graph or torch.is_grad_enabled()):
        grads = _autograd_grad(outputs, inputs, v, create_graph=create_graph)
        return _zeros_for_none(grads, refs, strict, create_graph, stage)


def _finish(outputs, outputs_were_tuple, result, result_was_tuple, create_graph):
    """``(outputs, result)`` detached unless ``create_graph``, each untupled."""
    return (_untuple(_detach_unless(outputs, create_graph), outputs_were_tuple),
            _untuple(_detach_unless(result, create_graph), result_was_tuple))


def _detach_unless(tensors, create_graph):
    """Results carry history only with ``create_graph``; works on a tuple of
    tensors or a tuple of such tuples."""
    if create_graph:
        return tensors
    if isinstance(tensors[0], torch.Tensor):
        return tuple(t.detach() for t in tensors)
    return tuple(_detach_unless(t, create_graph) for t in tensors)


def _standard_basis(tensors, numels):
    """The ``N x N`` identity (``N = sum(numels)``) cut column-wise into one
    ``N x numel`` block per tensor, in that tensor's dtype and device: row ``k``
    is the one-hot seed for the ``k``-th element across all ``tensors``."""
    total = sum(numels)
    blocks = tuple(t.new_zeros(total, n) for t, n in zip(tensors, numels))
    offset = 0
    for block, n in zip(blocks, numels):
        block.diagonal(offset).fill_(1)
        offset -= n
    return blocks


# ------------------------------------------------------------ public API

def vjp(func, inputs, v=None, create_graph=False, strict=False):
    """``(func(*inputs), v^T J)``: the vector-Jacobian product at ``inputs``,
    shaped like the inputs.  ``v`` is shaped like the outputs (may be left out
    for a single one-element output)."""
    with torch.enable_grad():
        is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "vjp")
        inputs = _fresh_inputs(inputs, create_graph, need_graph=True)
        is_outputs_tuple, outputs = _as_tuple(func(*inputs),
                                              "outputs of the user-provided function", "vjp")
        _check_requires_grad(outputs, "outputs", strict)
        v = _prepare_v(v, outputs, is_outputs_tuple, "vjp", create_graph, refs_are_outputs=True)

    result = _last_backward(outputs, inputs, v, inputs, strict, create_graph, "back")
    return _finish(outputs, is_outputs_tuple, result, is_inputs_tuple, create_graph)


def jvp(func, inputs, v=None, create_graph=False, strict=False):
    """``(func(*inputs), J v)``: the Jacobian-vector product, shaped like the
    outputs, by the double-backward trick.  ``v`` is shaped like the inputs."""
    with torch.enable_grad():
        is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "jvp")
        inputs = _fresh_inputs(inputs, create_graph, need_graph=True)
        v = _prepare_v(v, inputs, is_inputs_tuple, "jvp", create_graph, refs_are_outputs=False)
        is_outputs_tuple, outputs = _as_tuple(func(*inputs),
                                              "outputs of the user-provided function", "jvp")
        _check_requires_grad(outputs, "outputs", strict)
        # Any finite u serves (the result does not depend on it): zeros.
        u = tuple(torch.zeros_like(out, requires_grad=True) for out in outputs)
        grad_inputs = _autograd_grad(outputs, inputs, u, create_graph=True)
        _check_requires_grad(grad_inputs, "grad_inputs", strict)

    result = _last_backward(grad_inputs, u, v, outputs, strict, create_graph, "back_trick")
    return _finish(outputs, is_outputs_tuple, result, is_outputs_tuple, create_graph)


def jacobian(func, inputs, create_graph=False, strict=False, vectorize=False,
             strategy="reverse-mode"):
    """The Jacobian of ``func`` at ``inputs``: entry ``[i][j]`` has shape
    ``outputs[i].shape + inputs[j].shape``, the tuple levels kept only where
    the caller passed / ``func`` returned tuples.  Reverse mode takes one
    ``autograd.grad`` per output element, or one batched call with
    ``vectorize``; forward mode needs ``vectorize``."""
    if strategy not in ("forward-mode", "reverse-mode"):
        raise AssertionError(
            'Expected strategy to be either "forward-mode" or "reverse-mode". Hint: If your '
            'function has more outputs than inputs, "forward-mode" tends to be more '
            'performant. Otherwise, prefer to use "reverse-mode".')
    if strategy == "forward-mode":
        if create_graph:
            raise NotImplementedError(
                "torch.autograd.functional.jacobian: `create_graph=True` and "
                '`strategy="forward-mode"` are not supported together (yet). Please either '
                'set `create_graph=False` or `strategy="reverse-mode"`.')
        return _jacfwd(func, inputs, strict, vectorize)

    with torch.enable_grad():
        is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "jacobian")
        inputs = _fresh_inputs(inputs, create_graph, need_graph=True)
        is_outputs_tuple, outputs = _as_tuple(
            func(*inputs), "outputs of the user-provided function", "jacobian")
        _check_requires_grad(outputs, "outputs", strict)
        if vectorize:
            if strict:
                raise RuntimeError(
                    "torch.autograd.functional.jacobian: `strict=True` and `vectorized=True` "
                    "are not supported together. Please either set `strict=False` or "
                    "`vectorize=False`.")
            jac = _jacrev_vectorized(outputs, inputs, create_graph)
        else:
            jac = tuple(_jacobian_rows(i, out, inputs, create_graph, strict)
                        for i, out in enumerate(outputs))
        return _untuple(_detach_unless(jac, create_graph), is_outputs_tuple, is_inputs_tuple)


def _jacobian_rows(i, out, inputs, create_graph, strict):
    """Output ``i``'s Jacobian blocks, one per input, row by row: one
    ``autograd.grad`` per element of ``out`` (the graph is kept between them)."""
    rows = tuple([] for _ in inputs)
    flat = out.reshape(-1)
    for k in range(out.nelement()):
        grads = _autograd_grad((flat[k],), inputs, retain_graph=True, create_graph=create_graph)
        for j, (g, inp) in enumerate(zip(grads, inputs)):
            if g is None:
                if strict:
                    raise RuntimeError(f"Output {i} of the user-provided function is independent "
                                       f"of input {j}. This is not allowed in strict mode.")
                g = torch.zeros_like(inp)
            elif strict and create_graph and not g.requires_grad:
                # PyTorch names the output's index here, not the input's.
                raise RuntimeError(f"The jacobian of the user-provided function is independent "
                                   f"of input {i}. This is not allowed in strict mode when "
                                   f"create_graph=True.")
            rows[j].append(g)
    return tuple(torch.stack(r, dim=0).view(out.size() + inp.size())
                 for r, inp in zip(rows, inputs))


def _jacrev_vectorized(outputs, inputs, create_graph):
    """Every row at once: the standard basis of the flattened outputs (split
    per output) is one batch of grad_outputs for a single batched
    ``autograd.grad``; each input's ``(N, *input.shape)`` result is then cut
    back per output.  Returns ``[output][input]`` blocks."""
    numels = tuple(out.numel() for out in outputs)
    seeds = _standard_basis(outputs, numels)
    flat_outputs = tuple(out.reshape(-1) for out in outputs)
    grads = _autograd_grad(flat_outputs, inputs, seeds, create_graph=create_graph,
                           is_grads_batched=True)
    per_input = []
    for g, inp in zip(grads, inputs):
        if g is None:
            g = torch.zeros_like(inp).expand((sum(numels),) + inp.shape)
        per_input.append(tuple(block.view(out.shape + inp.shape)
                               for block, out in zip(g.split(numels, dim=0), outputs)))
    return tuple(zip(*per_input))


def _jacfwd(func, inputs, strict, vectorize):
    """Forward-mode Jacobian: the standard basis of the flattened inputs is a
    batch of tangents; one vmapped forward-AD pass of ``func`` gives, per
    output, ``(N, *output.shape)`` tangents, cut per input and moved so the
    input dims come last."""
    if strict:
        raise RuntimeError(
            "torch.autograd.functional.jacobian: `strict=True` and "
            '`strategy="forward-mode"` are not supported together (yet). Please either set '
            '`strict=False` or `strategy="reverse-mode"`.')
    is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "jacobian")
    if not vectorize:
        # (sic: PyTorch's message lacks the space)
        raise NotImplementedError("Computing Jacobian using forward-AD or forward-over-reverse "
                                  "Hessian isonly implemented for `vectorize=True`.")
    from .._functorch.apis import vmap
    numels = tuple(inp.numel() for inp in inputs)
    output_info = []

    def push_tangents(tangents):
        with forward_ad.dual_level():
            duals = tuple(forward_ad.make_dual(inp, t.view_as(inp)) for inp, t in zip(inputs, tangents))
            is_outputs_tuple, dual_outputs = _as_tuple(
                func(*duals), "outputs of the user-provided function", "jacobian")
            primals, out_tangents = zip(*(forward_ad.unpack_dual(d) for d in dual_outputs))
            output_info.extend((is_outputs_tuple, primals))
            return tuple(torch.zeros_like(p) if t is None else t
                         for p, t in zip(primals, out_tangents))

    batched = vmap(push_tangents)(_standard_basis(inputs, numels))
    is_outputs_tuple, outputs = output_info
    jac = tuple(tuple(block.permute(*range(1, block.ndim), 0).reshape(out.shape + inp.shape)
                      for block, inp in zip(jv.split(numels, dim=0), inputs))
                for jv, out in zip(batched, outputs))
    return _untuple(jac, is_outputs_tuple, is_inputs_tuple)


def _scalar_output(func, inputs, fn_name, strict):
    """Call ``func``, which must return a single one-element Tensor (hessian,
    hvp, vhp); returns the output as a one-tuple."""
    is_tuple, outputs = _as_tuple(func(*inputs), "outputs of the user-provided function",
                                  fn_name)
    _check_requires_grad(outputs, "outputs", strict)
    if is_tuple:
        raise RuntimeError(f"The function given to {fn_name} should return a single Tensor")
    if outputs[0].nelement() != 1:
        raise RuntimeError(f"The Tensor returned by the function given to {fn_name} should "
                           f"contain a single element")
    return outputs


def hessian(func, inputs, create_graph=False, strict=False, vectorize=False,
            outer_jacobian_strategy="reverse-mode"):
    """The Hessian of a scalar ``func``: the Jacobian (by
    ``outer_jacobian_strategy``) of its reverse-mode gradient.  Entry
    ``[i][j]`` has shape ``inputs[i].shape + inputs[j].shape``."""
    is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "hessian")
    if outer_jacobian_strategy not in ("forward-mode", "reverse-mode"):
        raise AssertionError('Expected strategy to be either "forward-mode" or "reverse-mode".')

    def scalar_func(*inp):
        return _scalar_output(func, inp, "hessian", strict)[0].squeeze()

    def gradient(*inp):
        if outer_jacobian_strategy == "forward-mode":
            # so that _fresh_inputs keeps the dual inputs' tangents (no detach)
            inp = tuple(t.requires_grad_(True) for t in inp)
        jac = jacobian(scalar_func, inp, create_graph=True)
        _check_requires_grad(jac, "jacobian", strict)
        return jac

    res = jacobian(gradient, inputs, create_graph=create_graph, strict=strict,
                   vectorize=vectorize, strategy=outer_jacobian_strategy)
    return _untuple(res, is_inputs_tuple, is_inputs_tuple)


def _gradient_of_scalar(func, inputs, v, create_graph, strict, fn_name):
    """What vhp and hvp share: fresh inputs, ``v`` checked against them, the
    scalar output and its gradient with a graph (for the second backward)."""
    is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", fn_name)
    inputs = _fresh_inputs(inputs, create_graph, need_graph=True)
    v = _prepare_v(v, inputs, is_inputs_tuple, fn_name, create_graph, refs_are_outputs=False)
    outputs = _scalar_output(func, inputs, fn_name, strict)
    jac = _autograd_grad(outputs, inputs, create_graph=True)
    _check_requires_grad(jac, "jacobian", strict)
    return is_inputs_tuple, inputs, v, outputs, jac


def vhp(func, inputs, v=None, create_graph=False, strict=False):
    """``(func(*inputs), v^T H)`` for a scalar ``func``: the gradient's
    vector-Jacobian product, one more backward pass."""
    with torch.enable_grad():
        is_inputs_tuple, inputs, v, outputs, jac = _gradient_of_scalar(
            func, inputs, v, create_graph, strict, "vhp")

    result = _last_backward(jac, inputs, v, inputs, strict, create_graph, "double_back")
    return _finish(outputs, False, result, is_inputs_tuple, create_graph)


def hvp(func, inputs, v=None, create_graph=False, strict=False):
    """``(func(*inputs), H v)`` for a scalar ``func``: the gradient's
    Jacobian-vector product, by the double-backward trick (a backward pass
    through the gradient seeded with zeros ``u``, then one with respect to ``u``)."""
    with torch.enable_grad():
        is_inputs_tuple, inputs, v, outputs, jac = _gradient_of_scalar(
            func, inputs, v, create_graph, strict, "hvp")
        u = tuple(torch.zeros_like(inp, requires_grad=True) for inp in inputs)
        double_back = _autograd_grad(jac, inputs, u, create_graph=True)
        # PyTorch checks the gradient again here, not double_back.
        _check_requires_grad(jac, "hessian", strict)

    result = _last_backward(double_back, u, v, inputs, strict, create_graph, "double_back_trick")
    return _finish(outputs, False, result, is_inputs_tuple, create_graph)

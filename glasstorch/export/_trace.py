"""``torch.export.export``: a Module's forward as one graph of ATen ops, with
its parameters, buffers and tensor constants lifted to inputs.

The trace (PyTorch's non-strict export; ``strict=True`` puts Dynamo's capture
in front, see ``_strict_capture``):

    1. bind the example inputs to ``forward``'s parameters; each leaf gets a
       placeholder named after its path (``x``, ``xs_0``, ``d_k``)
    2. lift the state: a placeholder per parameter (``p_fc_weight``), buffer
       (``b_running_mean``) and plain tensor attribute (``c_table``), each the
       FakeTensor the module sees while it runs (``_reparametrize_module``)
    3. run ``forward`` on FakeTensors with make_fx's proxy mode at the
       PreDispatch key (``_dispatcher/pre_dispatch.py``): every op the program
       calls is one node, before autograd and before composite ops decompose,
       so ``F.linear`` stays ``aten.linear.default``
    4. the dynamic dims (``dynamic_shapes``) are symbols of one ShapeEnv;
       a Dim the program pinned to one value is an error, as in PyTorch

The graph is the "training IR": in-place ops stay in-place (BatchNorm's
``num_batches_tracked.add_(1)``); ``ExportedProgram.run_decompositions``
makes it functional and core-ATen.
"""
from __future__ import annotations

import copy
import inspect

from .._dispatcher.dispatcher import ops
from .._dynamo.exc import UserError, UserErrorType
from ..compiler import _tracing
from .._subclasses.fake_tensor import DataDependentOutputException, FakeTensorMode
from .._tensor import Tensor
from .._dispatcher.pre_dispatch import pre_dispatch_mode
from ..fx.experimental.proxy_tensor import (PythonKeyTracer, ProxyTorchDispatchMode,
                                            _drop_unused_sym_nodes, _Thunk)
from ..fx.experimental.sym_node import SymInt
from ..fx.experimental.symbolic_shapes import GuardOnDataDependentSymNode, ShapeEnv
from ..fx.graph_module import GraphModule
from ..nn.modules.module import Module
from ..nn.utils.stateless import _reparametrize_module
from ..utils import _pytree as pytree
from .dynamic_shapes import Dim, _DimHint, _DimHintType
from .exported_program import ExportedProgram
from .graph_signature import (ConstantArgument, ExportGraphSignature, InputKind, InputSpec,
                              OutputKind, OutputSpec, SymIntArgument, TensorArgument)

__all__ = ["export"]


def export(mod, args, kwargs=None, *, dynamic_shapes=None, strict: bool = False,
           preserve_module_call_signature: tuple = (),
           prefer_deferred_runtime_asserts_over_guards: bool = False) -> ExportedProgram:
    """``torch.export.export(mod, args, kwargs, dynamic_shapes=..., strict=...)``."""
    if not isinstance(mod, Module):
        raise ValueError(f"Expected `mod` to be an instance of `torch.nn.Module`, "
                         f"got {type(mod)}.")
    if not isinstance(args, tuple):
        raise UserError(UserErrorType.INVALID_INPUT,
                        f"Expecting `args` to be a tuple of example positional inputs, "
                        f"got {type(args)}")
    kwargs = dict(kwargs or {})
    bound = inspect.signature(mod.forward).bind(*args, **kwargs)
    inputs = _flatten_inputs(bound)
    specs = _dim_specs(dynamic_shapes, bound)
    if strict:
        _strict_capture(mod, args, kwargs)
    return _ExportTrace(mod, bound, inputs, specs).run()


# -- inputs -----------------------------------------------------------------------------

def _flatten_inputs(bound) -> list:
    """(placeholder name, source name, value) per leaf of the bound arguments."""
    leaves = []
    for name, value in bound.arguments.items():
        for path, leaf in pytree.tree_flatten_with_path(value)[0]:
            keys = [getattr(k, "idx", getattr(k, "key", getattr(k, "name", None))) for k in path]
            placeholder = "_".join([name] + [str(k) for k in keys])
            source = f"L[{name!r}]" + pytree.keystr(path)
            leaves.append((placeholder, source, leaf))
    return leaves


def _dim_specs(dynamic_shapes, bound) -> dict:
    """{placeholder name: {dim: Dim or _DimHint}} from ``dynamic_shapes``."""
    if dynamic_shapes is None:
        return {}
    names = list(bound.arguments)
    if isinstance(dynamic_shapes, dict):
        if set(dynamic_shapes) - set(names) or len(dynamic_shapes) > len(names):
            raise UserError(
                UserErrorType.INVALID_INPUT,
                f"When `dynamic_shapes` is specified as a dict, its top-level keys must be the "
                f"arg names {names} of `inputs`, but here they are {list(dynamic_shapes)}. "
                f"Alternatively, you could also ignore arg names entirely and specify "
                f"`dynamic_shapes` as a list/tuple matching `inputs`.",
                case_name="dynamic_shapes_validation")
        per_input = [dynamic_shapes.get(name) for name in names]
    else:
        per_input = list(dynamic_shapes) + [None] * (len(names) - len(dynamic_shapes))
    specs = {}
    for name, value, spec in zip(names, bound.arguments.values(), per_input):
        _spec_leaves(name, value, spec, specs)
    return specs


def _spec_leaves(prefix: str, value, spec, out: dict) -> None:
    """Walk ``value`` and its ``spec`` together down to each tensor."""
    if spec is None:
        return
    if isinstance(value, Tensor):
        dims = dict(enumerate(spec)) if isinstance(spec, (list, tuple)) else dict(spec)
        dynamic = {d: s for d, s in dims.items() if isinstance(s, (Dim, _DimHint)) and
                   not (isinstance(s, _DimHint) and s.type is _DimHintType.STATIC)}
        if dynamic:
            out[prefix] = dynamic
        return
    items = value.items() if isinstance(value, dict) else enumerate(value) \
        if isinstance(value, (list, tuple)) else ()
    for key, child in items:
        _spec_leaves(f"{prefix}_{key}", child, spec[key], out)


# -- the trace --------------------------------------------------------------------------

class _ExportTrace:
    """One export: the graph, its signature and its symbols."""

    def __init__(self, mod: Module, bound, inputs: list, specs: dict):
        self.mod, self.bound, self.inputs, self.specs = mod, bound, inputs, specs
        self.shape_env = ShapeEnv() if specs else None
        self.fake_mode = FakeTensorMode(shape_env=self.shape_env)
        self.tracer = PythonKeyTracer()
        self.tracer.fake_mode = self.fake_mode
        self.tracer.record_stack_traces = True
        self.input_specs: list = []
        self.dim_symbols: dict = {}          # symbol -> (its Dim or hint, the range asked)

    def run(self) -> ExportedProgram:
        mod, tracer = self.mod, self.tracer
        state = self._lift_state()
        fake_inputs = self._user_inputs()
        args, kwargs = _rebuild(self.bound, [value for _, _, value in fake_inputs])
        mode = ProxyTorchDispatchMode(tracer, "symbolic" if self.shape_env else "fake")
        exporting, _tracing.exporting = _tracing.exporting, True    # is_exporting()
        try:
            with _reparametrize_module(mod, state, tie_weights=True), self.fake_mode, \
                    pre_dispatch_mode(mode):
                out = mod(*args, **kwargs)
        except DataDependentOutputException as e:
            raise GuardOnDataDependentSymNode(
                f"Could not guard on data-dependent expression: the program reads a tensor's "
                f"value ({e.func}) to decide what to run.\n\nconsider using data-dependent "
                f"friendly APIs such as guard_or_false, guard_or_true and "
                f"statically_known_true, or express the branch with torch.cond.") from None
        finally:
            _tracing.exporting = exporting
        flat_out, out_spec = pytree.tree_flatten(out)
        graph = tracer.graph
        graph.output(tuple(tracer.to_arg(flat_out)))
        output_specs = [OutputSpec(OutputKind.USER_OUTPUT, _argument(node, value), None)
                        for node, value in zip(tracer.to_arg(flat_out), flat_out)]
        self._drop_unused_constants()
        if self.shape_env is not None:
            _drop_unused_sym_nodes(graph)
        range_constraints = self._range_constraints()
        gm = GraphModule(tracer.root, graph)
        signature = ExportGraphSignature(self.input_specs, output_specs)
        in_spec = pytree.tree_flatten((self.bound.args, self.bound.kwargs))[1]
        return ExportedProgram(gm, signature, self._state_dict(), range_constraints,
                               constants=self._constants(), example_inputs=(
                                   self.bound.args, self.bound.kwargs),
                               in_spec=in_spec, out_spec=out_spec, root=mod)

    def _lift_state(self) -> dict:
        """Placeholders for parameters, buffers and tensor constants, in that
        order; returns {path: fake} for the module to run with."""
        mod, graph = self.mod, self.tracer.graph
        fakes = {}
        for kind, prefix, items in ((InputKind.PARAMETER, "p_", _named(mod.named_parameters)),
                                    (InputKind.BUFFER, "b_", _named(mod.named_buffers)),
                                    (InputKind.CONSTANT_TENSOR, "c_", _tensor_constants(mod))):
            for path, tensor in items:
                node = graph.placeholder(prefix + path.replace(".", "_"))
                fake = self.fake_mode.from_tensor(tensor)
                self.tracer.track(fake, node)
                fakes[path] = fake
                persistent = _is_persistent(mod, path) if kind is InputKind.BUFFER else None
                self.input_specs.append(InputSpec(kind, TensorArgument(node.name), path,
                                                  persistent))
        return fakes

    def _user_inputs(self) -> list:
        """A placeholder per input leaf; tensors as fakes (symbolic where a Dim says)."""
        self._shared_symbols()
        graph, tracer, result, sized = self.tracer.graph, self.tracer, [], []
        for name, source, value in self.inputs:
            node = graph.placeholder(name)
            if isinstance(value, Tensor):
                dims = self.specs.get(name)
                fake = self.fake_mode.from_tensor(value, source=source if dims else None,
                                                  symbolic_context=set(dims) if dims else None)
                tracer.track(fake, node)
                sized.extend((node, i, fake.shape[i]) for i in dims or ())
                value = fake
                argument = TensorArgument(node.name)
            else:
                node.meta["val"] = value
                argument = ConstantArgument(node.name, value)
            self.input_specs.append(InputSpec(InputKind.USER_INPUT, argument, None))
            result.append((name, source, value))
        reads = {}      # each dynamic size read up front; a Dim's last input stands for it
        for node, i, size in sized:
            read = tracer._sym_node(ops.aten.sym_size.int, (node, i), size)
            reads[size.node.expr] = _Thunk(lambda read=read: read)
        for node, i, size in sized:
            tracer.symbol_tracker[size.node.expr] = reads[size.node.expr]
            tracer.symnode_tracker[id(size.node)] = (size.node, reads[size.node.expr])
            tracer.pinned_symbols.add(size.node.expr)
        return result

    def _shared_symbols(self) -> None:
        """One symbol per Dim and example size (or per hinted dim), bound to every
        size it names: a Dim given two different sizes is two symbols, and the
        program's first op combining them fails, as in PyTorch."""
        by_dim: dict = {}
        for name, source, value in self.inputs:
            for i, dim in self.specs.get(name, {}).items():      # a hint is its own dim
                key = (name, i) if isinstance(dim, _DimHint) else (dim.__name__, value.shape[i])
                by_dim.setdefault(key, (dim, value.shape[i], []))[2].append(
                    f"{source}.size()[{i}]")
        for dim, hint, sources in by_dim.values():
            low = dim.min if dim.min is not None else 2
            high = dim.max if dim.max is not None else float("inf")
            symbol = self.shape_env.create_shared_symbol(hint, sources, max(low, 2), high)
            self.dim_symbols[symbol] = (dim, (low, high))

    def _range_constraints(self) -> dict:
        """Each dynamic symbol's range; a named Dim the program pinned is an error."""
        constraints = {}
        for symbol, (dim, (low, high)) in self.dim_symbols.items():
            lo, hi = self.shape_env.var_to_range[symbol]
            if lo == hi and isinstance(dim, Dim):
                raise UserError(
                    UserErrorType.CONSTRAINT_VIOLATION,
                    f"Constraints violated ({dim.__name__})! For more information, run with "
                    f"TORCH_LOGS=\"+dynamic\".\n  - You marked {dim.__name__} as dynamic but "
                    f"your code specialized it to be a constant ({lo}). If you're using "
                    f"mark_dynamic, either remove it or use maybe_mark_dynamic. If you're "
                    f"using Dim.DYNAMIC, replace it with either Dim.STATIC or Dim.AUTO.\n"
                    f"Suggested fixes:\n  {dim.__name__} = {lo}")
            if lo == hi:
                continue
            constraints[symbol] = _ValueRange(low if lo == max(low, 2) else lo, hi)
        return constraints

    def _drop_unused_constants(self) -> None:
        """A tensor attribute the program never read is no input (PyTorch lifts
        constants as they are used)."""
        graph = self.tracer.graph
        unused = {n.name for n in graph.nodes if n.op == "placeholder" and not n.users and
                  n.name.startswith("c_")}
        kept = []
        for spec in self.input_specs:
            if spec.kind is InputKind.CONSTANT_TENSOR and spec.arg.name in unused:
                graph.erase_node(next(n for n in graph.nodes if n.name == spec.arg.name))
            else:
                kept.append(spec)
        self.input_specs = kept

    def _state_dict(self) -> dict:
        return {**dict(_named(self.mod.named_parameters)), **{
            path: t for path, t in _named(self.mod.named_buffers)
            if _is_persistent(self.mod, path)}}

    def _constants(self) -> dict:
        lifted = {s.target for s in self.input_specs if s.kind is InputKind.CONSTANT_TENSOR}
        non_persistent = {path: t for path, t in _named(self.mod.named_buffers)
                          if not _is_persistent(self.mod, path)}
        return {**non_persistent, **{path: t for path, t in _tensor_constants(self.mod)
                                     if path in lifted}}


class _ValueRange:
    """A symbol's range as export reports it (PyTorch's ValueRanges)."""

    def __init__(self, lower, upper):
        self.lower, self.upper = lower, upper

    def __repr__(self):
        from .dynamic_shapes import format_range
        return format_range(self.lower, self.upper)

    def __eq__(self, other):
        return isinstance(other, _ValueRange) and (self.lower, self.upper) == \
            (other.lower, other.upper)


def _argument(node, value):
    if isinstance(value, Tensor):
        return TensorArgument(node.name)
    if isinstance(value, SymInt):
        return SymIntArgument(node.name)
    return ConstantArgument("", value)


def _rebuild(bound, values: list):
    """``bound``'s args and kwargs with each leaf replaced by the next of ``values``."""
    leaves = iter(values)
    rebuilt = {}
    for name, value in bound.arguments.items():
        flat, spec = pytree.tree_flatten(value)
        rebuilt[name] = pytree.tree_unflatten([next(leaves) for _ in flat], spec)
    copy = bound.signature.bind_partial()
    copy.arguments.update(rebuilt)
    return copy.args, copy.kwargs


def _named(named_tensors):
    """Every name of every parameter (or buffer): a tied weight is lifted once per
    name, and the program reads the last one, as PyTorch's export does."""
    return named_tensors(remove_duplicate=False)


def _tensor_constants(mod: Module):
    """(path, tensor) for each plain tensor attribute (not a parameter or buffer)."""
    for prefix, sub in mod.named_modules():
        for name, value in vars(sub).items():
            if isinstance(value, Tensor) and not name.startswith("_"):
                yield (f"{prefix}.{name}" if prefix else name), value


def _is_persistent(mod: Module, path: str) -> bool:
    *owner, name = path.split(".")
    return name not in mod.get_submodule(".".join(owner))._non_persistent_buffers_set


def _strict_capture(mod: Module, args: tuple, kwargs: dict) -> None:
    """strict=True: Dynamo must capture ``forward`` whole (fullgraph), so what
    Dynamo cannot trace (data-dependent branches, unsupported calls) is
    refused with its error before the ATen-level trace runs.  The capture
    runs on a copy, so the module's buffers are left as they were."""
    from .._dynamo.backends.registry import lookup_backend
    from .._dynamo.eval_frame import DynamoContext
    context = DynamoContext(lookup_backend("eager"), fullgraph=True)
    copied = copy.deepcopy((mod, args, kwargs))
    context.wrap(copied[0].forward)(*copied[1], **copied[2])


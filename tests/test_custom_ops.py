"""torch.library's custom operators against PyTorch's: schema inference,
custom_op's registrations and checks, register_fake / register_autograd /
register_kernel, the string-named forms (define, impl), and opcheck.

Scenarios run in both libraries through ``tests/differential.py``; every
operator lives in a namespace unique to its test, and the ``ops`` fixture
destroys what the test registered, in both libraries."""
import itertools
import re
import typing

import pytest

import glasstorch
from glasstorch._dispatcher import dispatch_trace
from glasstorch._dispatcher.op_counter import OpCounter

from .differential import differential, raised, run, returned

_counter = itertools.count()


class _Registrations:
    """Creates custom ops and libraries in either library and remembers them."""

    def __init__(self):
        self.libraries = []
        self.ns = f"gt_custom_{next(_counter)}"

    def custom_op(self, lib, name, fn=None, **kwargs):
        if fn is None:
            return lambda fn: self.custom_op(lib, name, fn, **kwargs)
        op = lib.library.custom_op(f"{self.ns}::{name}", fn, **kwargs)
        self.libraries.append(op._lib)
        return op

    def library(self, lib, kind="FRAGMENT"):
        library = lib.library.Library(self.ns, kind)
        self.libraries.append(library)
        return library

    def destroy(self):
        for library in reversed(self.libraries):
            library._destroy()


@pytest.fixture
def ops():
    registrations = _Registrations()
    yield registrations
    registrations.destroy()


def _normalized(message: str) -> str:
    """An error message with glasstorch's module paths spelled as torch's."""
    message = re.sub(r"<module 'glasstorch\._library\.custom_ops' from '[^']*'>",
                     "<module 'torch._library.custom_ops'>", message)
    message = re.sub(r"<module 'torch\._library\.custom_ops' from '[^']*'>",
                     "<module 'torch._library.custom_ops'>", message)
    message = re.sub(r"glasstorch\._tensor\.Tensor", "torch.Tensor", message)
    message = re.sub(r"glasstorch\._core\.(dtype|device)\.", "torch.", message)
    # glasstorch has no torch.distributed, whose GroupName torch also accepts
    return re.sub(r", (typing\.Optional\[)?torch\.distributed\.distributed_c10d\.GroupName\]?",
                  "", message)


def _normalized_outcome(outcome):
    """An outcome with its error message normalized (module paths); glasstorch's
    schema parser raises SchemaParseError, a RuntimeError as torch's error is."""
    if outcome[0] != "raised":
        return outcome
    kind = "RuntimeError" if outcome[1] == "SchemaParseError" else outcome[1]
    return ("raised", kind, _normalized(outcome[2])) + outcome[3:]


def _same_outcome(fn, **options):
    """``differential`` with error messages normalized."""
    return differential(fn, normalize=_normalized_outcome, **options)


def _without_sources(outcome):
    """An outcome with the ``file:line`` a registration was made at blanked."""
    if outcome[0] != "raised":
        return outcome
    message = re.sub(r"registered at \S+:\d+", "registered at X", outcome[2])
    return (*outcome[:2], message, *outcome[3:])


def _dump_keys(lib, name):
    """The keys ``_dispatch_dump`` lists registrations for (shadowed ones folded)."""
    keys = {line.split(":")[0].replace(" (inactive)", "")
            for line in lib._C._dispatch_dump(name).splitlines()[4:] if line}
    return sorted(keys)


# -- schema inference -------------------------------------------------------------------------

# (source of the function, mutates_args); names resolve in a namespace holding
# the library's Tensor, torch itself and typing's names.
SIGNATURES = [
    ("def f(x: Tensor) -> Tensor: ...", ()),
    ("def f(x: Tensor, y: Optional[Tensor], n: int, f: float = 1.0, flag: bool = True, "
     "name: str = 'hi') -> Tensor: ...", ()),
    ("def f(xs: list[Tensor], ns: Sequence[int], fs: list[float], bs: List[bool]) "
     "-> tuple[Tensor, Tensor]: ...", ()),
    ("def f(x: Tensor, dt: torch.dtype = torch.float32, dev: Optional[torch.device] = None) "
     "-> None: ...", ()),
    ("def f(x: Tensor, y: Tensor) -> None: ...", ("x",)),
    ("def f(x: Tensor, y: Tensor, n: int) -> Tensor: ...", "unknown"),
    ("def f(x: Tensor, *, alpha: float = 2.5, n: Optional[int] = None) -> list[Tensor]: ...", ()),
    ("def f(x: Optional[Sequence[int]], y: Optional[float], z: Optional[bool], w: Optional[str])"
     " -> Tensor: ...", ()),
    ("def f(x: Tensor) -> tuple[Tensor]: ...", ()),
    ("def f(x: Tensor, n: int = -3, f: float = 1e-5, g: float = 0.1, h: float = -2.0, "
     "k: float = 1e10) -> int: ...", ()),
    ("def f(x: Tensor, dt: torch.dtype, dev: torch.device) -> float: ...", ()),
    ("def f(x: list[Optional[Tensor]], y: Optional[list[int]], z: Optional[Sequence[float]]) "
     "-> bool: ...", ()),
    ("def f(xs: list[Tensor], y: Optional[Tensor]) -> None: ...", ("xs",)),
    ("def f(x: Tensor, y: Optional[Tensor]) -> Tensor: ...", ("y",)),
    ("def f(x: 'Tensor', y: 'Optional[Tensor]') -> 'Tensor': ...", ()),
    ("def f(x: Tensor, d: torch.device = torch.device('cpu'), b: bool = False) -> Tensor: ...",
     ()),
    ("def f(x: typing.List[Tensor], y: typing.Sequence[Tensor]) -> typing.List[Tensor]: ...", ()),
    ("def f(x: Tensor, f: float = 3, z: Optional[float] = None) -> Tensor: ...", ()),
    ("def f(x: Tensor, s: int | float | bool, t: Optional[int | float | bool] = None) "
     "-> int | float | bool: ...", ()),
    ("def f(x: Tensor, dt: Optional[torch.dtype] = torch.int64) -> tuple[Tensor, int, float]: ...",
     ()),
    ("def f(x: Tensor, y: Tensor) -> tuple[Tensor, Tensor]: ...", {"x", "y"}),
    ("def f(x: Tensor, *, out_scale: float, dims: list[int]) -> Tensor: ...", ()),
]

BAD_SIGNATURES = [
    ("def f(x) -> Tensor: ...", ()),
    ("def f(x: Tensor, y: tuple = (1, 2)) -> Tensor: ...", ()),
    ("def f(x: Tensor, y: tuple[int, int]) -> Tensor: ...", ()),
    ("def f(x: Tensor): ...", ()),
    ("def f(x: Tensor, *args: Tensor) -> Tensor: ...", ()),
    ("def f(x: Tensor, /, y: Tensor) -> Tensor: ...", ()),
    ("def f(x: Tensor, n: int) -> Tensor: ...", ("n",)),
    ("def f(x: Tensor, n: int) -> Tensor: ...", ("zz",)),
    ("def f(x: Tensor, n: int) -> Tensor: ...", "bogus"),
    ("def f(x: Tensor) -> dict: ...", ()),
    ("def f(x: Tensor, y: dict) -> Tensor: ...", ()),
    ("def f(x: Tensor, l: list[int] = [1]) -> Tensor: ...", ()),
    ("def f(x: 'NoSuchType') -> Tensor: ...", ()),
]


def _function(lib, source):
    namespace = {"Tensor": lib.Tensor, "torch": lib, "typing": typing,
                 **{n: getattr(typing, n) for n in ("Optional", "Sequence", "List")}}
    exec(source, namespace)
    return namespace["f"]


@pytest.mark.parametrize("source, mutates_args", SIGNATURES + BAD_SIGNATURES)
def test_infer_schema_matches_pytorch(source, mutates_args):
    _same_outcome(lambda lib: lib.library.infer_schema(_function(lib, source),
                                                       mutates_args=mutates_args),
                  may_raise=(source, mutates_args) in BAD_SIGNATURES)


@pytest.mark.parametrize("source, mutates_args", SIGNATURES)
def test_custom_op_schema_matches_pytorch(ops, source, mutates_args):
    """The operator's schema as the dispatcher holds it (defaults normalized)."""
    def scenario(lib):
        op = ops.custom_op(lib, "f", _function(lib, source), mutates_args=mutates_args)
        return str(op._opoverload._schema), str(getattr(lib.ops, ops.ns).f.default._schema)
    differential(scenario)


def test_infer_schema_with_op_name():
    differential(lambda lib: lib.library.infer_schema(
        _function(lib, SIGNATURES[1][0]), mutates_args=(), op_name="my_op"))


# -- the seed examples (unchanged but for the import line) -----------------------------

def _seed_myadd(torch):
    # 1. Declare and implement the op for real backends
    @torch.library.custom_op("mylib::myadd", mutates_args=())
    def myadd(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        return x + y  # or call into a Triton kernel here

    # 2. Tell the compiler/dynamo how shapes propagate (the "fake" / meta impl)
    @myadd.register_fake
    def _(x, y):
        # Must match real op's output shape/dtype/device, with no real compute
        return torch.empty_like(x)

    # 3. Register an autograd rule
    def myadd_setup_context(ctx, inputs, output):
        # Save what backward needs
        pass  # nothing for plain add

    def myadd_backward(ctx, grad):
        return grad, grad  # dx, dy

    myadd.register_autograd(myadd_backward, setup_context=myadd_setup_context)
    return myadd


def _seed_clip_norm(torch):
    @torch.library.custom_op("mylib::clip_norm", mutates_args=())
    def clip_norm(x: torch.Tensor, max_norm: float) -> torch.Tensor:
        n = x.norm()
        scale = (max_norm / (n + 1e-12)).clamp(max=1.0)
        return x * scale

    @clip_norm.register_fake
    def _(x, max_norm):
        return torch.empty_like(x)

    # autograd: easiest is to leave it to the implementation
    # since it uses only autograd-aware ops; but custom_op disables
    # autograd-through-implementation by default. So:
    def _bwd(ctx, g):
        x, scale = ctx.saved
        # d(x*scale)/dx = scale (treating scale as constant for simplicity)
        return g * scale, None

    def _setup(ctx, inputs, output):
        x, max_norm = inputs
        n = x.norm()
        scale = (max_norm / (n + 1e-12)).clamp(max=1.0)
        ctx.saved = (x, scale)

    clip_norm.register_autograd(_bwd, setup_context=_setup)
    return clip_norm


def test_seed_myadd():
    def scenario(lib):
        myadd = _seed_myadd(lib)
        try:
            lib.manual_seed(0)
            x = lib.randn(3, requires_grad=True)
            y = lib.randn(3, requires_grad=True)
            z = lib.ops.mylib.myadd(x, y)
            (z * z).sum().backward()
            meta = myadd(lib.empty(2, 3, device="meta"), lib.empty(2, 3, device="meta"))
            return z, x.grad, y.grad, z.grad_fn, meta.shape, meta.device.type
        finally:
            myadd._lib._destroy()
    differential(scenario)


def test_seed_clip_norm():
    def scenario(lib):
        clip_norm = _seed_clip_norm(lib)
        try:
            lib.manual_seed(1)
            w = lib.randn(5, requires_grad=True)
            out = clip_norm(w, 0.5)
            out.pow(2).sum().backward()
            small = clip_norm(lib.tensor([0.1, 0.2]), 10.0)
            return out, w.grad, small, clip_norm(lib.empty(5, device="meta"), 1.0).shape
        finally:
            clip_norm._lib._destroy()
    differential(scenario)


def test_seed_torch_library_triple(ops):
    """Section 4.5's TORCH_LIBRARY(myops) / TORCH_LIBRARY_IMPL(myops, CPU) example."""
    def scenario(lib):
        library = lib.library.Library("myops", "DEF")
        try:
            library.define("triple(Tensor x) -> Tensor")

            def triple_cpu(x):
                return x * 3

            library.impl("triple", triple_cpu, "CPU")
            x = lib.arange(4.0)
            return (lib.ops.myops.triple(x), lib.ops.myops.triple.default(x),
                    _dump_keys(lib, "myops::triple"))
        finally:
            library._destroy()
    differential(scenario)


# -- registrations -----------------------------------------------------------------------

@pytest.mark.parametrize("case", ["plain", "mutating", "cpu_only", "factory"])
def test_registrations_match_pytorch(ops, case):
    def scenario(lib):
        Tensor = lib.Tensor
        if case == "plain":
            def f(x: Tensor) -> Tensor:
                return x.clone()
            op = ops.custom_op(lib, "f", f, mutates_args=())
        elif case == "mutating":
            def f(x: Tensor, y: Tensor) -> None:
                x.add_(y)
            op = ops.custom_op(lib, "f", f, mutates_args={"x"})
        elif case == "cpu_only":
            def f(x: Tensor) -> Tensor:
                return x * 2
            op = ops.custom_op(lib, "f", f, mutates_args=(), device_types="cpu")
        else:
            def f(n: int, device: lib.device) -> Tensor:
                return lib.ones(n)
            op = ops.custom_op(lib, "f", f, mutates_args=(), device_types="cpu")
        tags = [getattr(tag, "name", tag) for tag in op._opoverload.tags]   # torch: Tag members
        return (_dump_keys(lib, f"{ops.ns}::f"), tags, repr(op), op._qualname,
                getattr(lib.ops, ops.ns).f.overloads())
    differential(scenario)


def test_custom_op_dispatches_like_a_builtin(ops):
    """The op enters at AutogradCPU, goes below autograd to the CPU kernel, and
    the ops its implementation calls dispatch afresh with autograd excluded."""
    Tensor = glasstorch.Tensor

    def f(x: Tensor) -> Tensor:
        return x * 2
    op = ops.custom_op(glasstorch, "f", f, mutates_args=())
    x = glasstorch.ones(2, requires_grad=True)
    with dispatch_trace() as trace, OpCounter() as counts:
        op(x)
    lines = str(trace).splitlines()
    assert lines[0] == f"[call] op=[{ops.ns}::f], key=[AutogradCPU]"
    assert lines[1] == f" [redispatch] op=[{ops.ns}::f], key=[CPU]"
    assert "[call] op=[aten::mul.Tensor], key=[CPU]" in lines[2]
    assert counts.by_op_key[f"{ops.ns}::f", "AutogradCPU"] == 1
    assert counts.by_op_key[f"{ops.ns}::f", "CPU"] == 1


def test_mutation_bumps_versions_like_pytorch(ops):
    def scenario(lib):
        Tensor = lib.Tensor

        def f(x: Tensor, ys: list[Tensor], z: Tensor) -> None:
            x.add_(1)                       # a version bump of its own
            ys[0].numpy()[...] = 7.0        # none: written behind the dispatcher's back
        op = ops.custom_op(lib, "f", f, mutates_args={"x", "ys"})
        x, ys, z = lib.zeros(2), [lib.zeros(2), lib.zeros(1)], lib.zeros(2)
        before = [t._version for t in (x, *ys, z)]
        op(x, ys, z)
        return [t._version - b for t, b in zip((x, *ys, z), before)], x, ys[0]
    differential(scenario)


# -- calling convention --------------------------------------------------------------------

def test_kernels_receive_normalized_arguments(ops):
    """Trailing defaults are dropped before the implementation runs; setup_context
    sees them filled in, keyword-only ones separately."""
    def scenario(lib):
        Tensor = lib.Tensor
        seen = []

        def f(x: Tensor, a: int = 2, b: float = 1.0, *, c: bool = False) -> Tensor:
            return x * a

        op = ops.custom_op(lib, "f", f, mutates_args=())

        @op.register_kernel("cpu")
        def _(*args, **kwargs):
            seen.append((len(args), sorted(kwargs), [type(a).__name__ for a in args[1:]]))
            return args[0].clone()

        def setup_context(ctx, inputs, keyword_only_inputs, output):
            seen.append(("setup", inputs[1:], keyword_only_inputs))

        op.register_autograd(lambda ctx, g: g, setup_context=setup_context)
        x = lib.ones(2, requires_grad=True)
        for args, kwargs in [((), {}), ((2,), {}), ((3,), {}), ((), {"a": 3}), ((), {"b": 2}),
                             ((), {"c": True}), ((2, 1.0), {"c": False})]:
            op(x, *args, **kwargs)
        getattr(lib.ops, ops.ns).f(x.detach(), 5, b=3.0)
        return seen
    differential(scenario)


@pytest.mark.parametrize("call", ["missing", "too_many", "unknown_kw", "bad_int", "bad_list",
                                  "bad_float", "bad_tensor"])
def test_argument_errors_match_pytorch(ops, call):
    def scenario(lib):
        Tensor = lib.Tensor

        def g(x: Tensor, a: float, n: int, xs: list[Tensor]) -> Tensor:
            return x.clone()
        op = ops.custom_op(lib, "g", g, mutates_args=())
        x = lib.ones(2)
        args = {"missing": (x,), "too_many": (x, 1.0, 2, [x], 5), "unknown_kw": (x, 1.0, 2),
                "bad_int": (x, 1.0, 2.5, [x]), "bad_list": (x, 1.0, 2, [x, 1]),
                "bad_float": (x, "a", 2, [x]), "bad_tensor": (3, 1.0, 2, [x])}[call]
        kwargs = {"zz": 1} if call == "unknown_kw" else {}
        op._opoverload(*args, **kwargs)

    raised(_same_outcome(scenario, may_raise=True), "RuntimeError")


# -- autograd ------------------------------------------------------------------------------

def test_backward_without_formula_raises_like_pytorch(ops):
    def scenario(lib):
        Tensor = lib.Tensor

        def two(x: Tensor, y: Tensor) -> Tensor:
            return x * y
        op = ops.custom_op(lib, "two", two, mutates_args=())
        x = lib.ones(2, requires_grad=True)
        y = op(x, lib.ones(2))
        with lib.no_grad():
            z = op(x, x)
        observed = (y, z)
        y.sum().backward()
        return observed
    raised(differential(scenario, may_raise=True), "RuntimeError")


def _mul_op(ops, lib):
    Tensor = lib.Tensor

    def mul(x: Tensor, y: Tensor, n: int) -> Tensor:
        return x * y * n
    return ops.custom_op(lib, "mul", mul, mutates_args=())


@pytest.mark.parametrize("returns", ["one", "all_three", "with_none", "extra_nones", "too_many"])
def test_backward_gradient_count_errors_match_pytorch(ops, returns):
    def scenario(lib):
        op = _mul_op(ops, lib)
        backward = {"one": lambda ctx, g: g,
                    "all_three": lambda ctx, g: (g, g, g),
                    "with_none": lambda ctx, g: (g * 2, g * 3, None),
                    "extra_nones": lambda ctx, g: (g, g, None, None),
                    "too_many": lambda ctx, g: (g, g, None, g)}[returns]
        op.register_autograd(backward)
        a, b = lib.ones(2, requires_grad=True), lib.ones(2, requires_grad=True)
        op(a, b, 2).sum().backward()
        return a.grad, b.grad
    differential(scenario, may_raise=True)


def test_ctx_like_autograd_function(ops):
    """setup_context saves tensors and attributes; backward sees needs_input_grad
    without the hidden metadata argument; grads flow to the right inputs."""
    def scenario(lib):
        op = _mul_op(ops, lib)
        seen = []

        def setup_context(ctx, inputs, output):
            x, y, n = inputs
            ctx.save_for_backward(x, y)
            ctx.n = n
            seen.append((type(ctx).__name__, output))

        def backward(ctx, grad):
            x, y = ctx.saved_tensors
            seen.append(ctx.needs_input_grad)
            return grad * y * ctx.n, grad * x * ctx.n, None

        op.register_autograd(backward, setup_context=setup_context)
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        y = lib.tensor([3.0, 4.0])
        out = op(x, y, 3)
        out.sum().backward()
        w = lib.tensor([1.0, 1.0], requires_grad=True)
        (op(x.detach(), w, 2) * 2).sum().backward()
        return seen, out, x.grad, w.grad, out.grad_fn.next_functions[0][0]
    differential(scenario)


def test_register_autograd_refuses_non_functional_ops(ops):
    def scenario(lib):
        Tensor = lib.Tensor

        def f(x: Tensor) -> Tensor:
            x.add_(1)
            return x + 1
        op = ops.custom_op(lib, "f", f, mutates_args={"x"})
        op.register_autograd(lambda ctx, g: g)
    raised(differential(scenario, may_raise=True), "RuntimeError")


def test_tensor_list_inputs_and_outputs(ops):
    def scenario(lib):
        Tensor = lib.Tensor

        def split_scale(xs: list[Tensor], w: Tensor, scale: float) -> list[Tensor]:
            return [x * w * scale for x in xs]

        op = ops.custom_op(lib, "split_scale", split_scale, mutates_args=())
        seen = []

        def setup_context(ctx, inputs, output):
            xs, w, scale = inputs
            ctx.save_for_backward(w, *xs)
            ctx.scale = scale

        def backward(ctx, grads):
            w, *xs = ctx.saved_tensors
            seen.append(ctx.needs_input_grad)
            return ([g * w * ctx.scale for g in grads],
                    sum(g * x for g, x in zip(grads, xs)) * ctx.scale, None)

        op.register_autograd(backward, setup_context=setup_context)
        lib.manual_seed(3)
        xs = [lib.randn(3, requires_grad=True), lib.randn(3, requires_grad=True)]
        w = lib.randn(3, requires_grad=True)
        outs = op(xs, w, 0.5)
        (outs[0] * 2 + outs[1]).sum().backward()
        return outs, [x.grad for x in xs], w.grad, seen
    differential(scenario)


def test_multiple_and_integer_outputs(ops):
    def scenario(lib):
        Tensor = lib.Tensor

        def stats(x: Tensor) -> tuple[Tensor, Tensor, Tensor]:
            return x.sum(), x.argmax(), x * 2

        op = ops.custom_op(lib, "stats", stats, mutates_args=())
        op.register_autograd(lambda ctx, gs, gi, gd: lib.ones_like(gd) * gs + gd * 2)
        x = lib.tensor([1.0, 3.0, 2.0], requires_grad=True)
        s, i, d = op(x)
        (s + d.sum()).backward()
        return s, i, d, x.grad
    differential(scenario)


def test_register_autograd_for_a_library_op(ops):
    """The string-named path: define + impl + register_fake + register_autograd."""
    def scenario(lib):
        library = ops.library(lib)
        lib.library.define(f"{ops.ns}::sin", "(Tensor x) -> Tensor", lib=library)
        lib.library.impl(f"{ops.ns}::sin", "cpu", lambda x: x.sin(), lib=library)

        @lib.library.register_fake(f"{ops.ns}::sin", lib=library)
        def _(x):
            return lib.empty_like(x)

        def setup_context(ctx, inputs, output):
            ctx.save_for_backward(inputs[0])

        def backward(ctx, grad):
            (x,) = ctx.saved_tensors
            return grad * x.cos()

        lib.library.register_autograd(f"{ops.ns}::sin", backward, setup_context=setup_context,
                                      lib=library)
        x = lib.tensor([0.5, 1.0], requires_grad=True)
        y = getattr(lib.ops, ops.ns).sin(x)
        y.sum().backward()
        meta = getattr(lib.ops, ops.ns).sin(lib.empty(4, device="meta"))
        return y, x.grad, meta.shape, _dump_keys(lib, f"{ops.ns}::sin")
    differential(scenario)


def test_register_autograd_refusals_for_library_ops(ops):
    def scenario(lib):
        library = ops.library(lib)
        library.define("inplace(Tensor(a!) x) -> Tensor(a!)")
        lib.library.register_autograd(f"{ops.ns}::inplace", lambda ctx, g: g, lib=library)
    raised(differential(scenario, may_raise=True), "RuntimeError")


# -- output checks, fake impls ---------------------------------------------------------------

@pytest.mark.parametrize("returns", ["input", "view", "same_twice", "clone"])
def test_outputs_may_not_alias_inputs(ops, returns):
    def scenario(lib):
        Tensor = lib.Tensor

        def f(x: Tensor) -> tuple[Tensor, Tensor]:
            y = x.clone()
            return {"input": (x, y), "view": (x.view(-1), y), "same_twice": (y, y),
                    "clone": (y, x.clone())}[returns]
        op = ops.custom_op(lib, "f", f, mutates_args=())
        return op(lib.ones(2, 2))
    _same_outcome(scenario, may_raise=returns != "clone")


def test_meta_tensors_run_the_fake_impl(ops):
    def scenario(lib):
        Tensor = lib.Tensor

        def f(x: Tensor, n: int) -> Tensor:
            return x.repeat(n)
        op = ops.custom_op(lib, "f", f, mutates_args=())
        meta = lib.empty(3, device="meta")
        outcomes = [run(lambda _: op(meta, 2), lib)]

        @op.register_fake
        def _(x, n):
            ctx = lib.library.get_ctx()
            return x.new_empty(x.shape[0] * n), ctx

        outcomes.append(run(lambda _: op(meta, 2), lib))
        # the message names the registration's file:line
        return [re.sub(r" \(\S+:\d+\):", " (SOURCE):", str(o)) for o in outcomes], \
            lib.library.get_ctx()
    differential(scenario)


def test_mutating_op_without_return_needs_no_fake_impl(ops):
    def scenario(lib):
        Tensor = lib.Tensor

        def f(x: Tensor) -> None:
            x.mul_(2)
        op = ops.custom_op(lib, "f", f, mutates_args={"x"})
        return op(lib.empty(3, device="meta"))
    differential(scenario)


def test_register_fake_refuses_a_second_one(ops):
    def scenario(lib):
        library = ops.library(lib)
        library.define("f(Tensor x) -> Tensor")
        lib.library.register_fake(f"{ops.ns}::f", lambda x: x, lib=library)
        lib.library.register_fake(f"{ops.ns}::f", lambda x: x, lib=library, allow_override=False)
    message = raised(differential(scenario, may_raise=True, normalize=_without_sources),
                     "RuntimeError")
    assert "already has a fake impl registered at" in message


# -- custom_op's own errors ----------------------------------------------------------------

@pytest.mark.parametrize("case", ["no_colon", "two_colons", "no_mutates_args", "bad_name",
                                  "schema_mismatch", "kwarg_only_tensor", "bad_device_type",
                                  "factory_without_device"])
def test_custom_op_errors_match_pytorch(ops, case):
    def scenario(lib):
        Tensor = lib.Tensor

        def f(x: Tensor) -> Tensor:
            return x.clone()

        def kw(x: Tensor, *, y: Tensor) -> Tensor:
            return x.clone()

        def factory(n: int) -> Tensor:
            return lib.ones(n)
        name = f"{ops.ns}::f"
        if case == "no_colon":
            lib.library.custom_op("nocolon", f, mutates_args=())
        elif case == "two_colons":
            lib.library.custom_op(f"{ops.ns}::a::b", f, mutates_args=())
        elif case == "no_mutates_args":
            lib.library.custom_op(name, f)
        elif case == "bad_name":
            ops.custom_op(lib, "1f", f, mutates_args=())
        elif case == "schema_mismatch":
            ops.custom_op(lib, "f", f, mutates_args=(), schema="(Tensor(a!) x) -> Tensor")
        elif case == "kwarg_only_tensor":
            ops.custom_op(lib, "f", kw, mutates_args=())
        elif case == "bad_device_type":
            ops.custom_op(lib, "f", f, mutates_args=(), device_types="bogus")
        else:
            ops.custom_op(lib, "f", factory, mutates_args=(), device_types="cpu")
    raised(_same_outcome(scenario, may_raise=True))


def test_redefinition_replaces_the_operator(ops):
    def scenario(lib):
        Tensor = lib.Tensor

        def f(x: Tensor) -> Tensor:
            return x * 2
        first = ops.custom_op(lib, "f", f, mutates_args=())

        def f(x: Tensor, y: Tensor) -> Tensor:  # noqa: F811
            return x * y
        second = ops.custom_op(lib, "f", f, mutates_args=())
        x = lib.tensor([1.0, 2.0])
        return (first._opoverload is second._opoverload, str(second._opoverload._schema),
                getattr(lib.ops, ops.ns).f(x, x))
    differential(scenario)


# -- kernels per device --------------------------------------------------------------------

def test_register_kernel_and_impl(ops):
    def scenario(lib):
        Tensor = lib.Tensor

        def k(x: Tensor) -> Tensor:
            return x * 2
        op = ops.custom_op(lib, "k", k, mutates_args=())
        x = lib.ones(1)
        results = [op(x)]

        @op.register_kernel("cpu")
        def _(x):
            return x * 3
        results.append(op(x))
        with op.set_kernel_enabled("cpu", False):
            results.append(op(x))
        results.append(op(x))
        lib.library.register_kernel(op, "cpu", lambda x: x * 4)
        results.append(op(x))
        lib.library.register_kernel(f"{ops.ns}::k", "cpu", lambda x: x * 5)
        results.append(op(x))
        return results, _dump_keys(lib, f"{ops.ns}::k")
    differential(scenario)


def test_impl_types_and_library_checks(ops):
    def scenario(lib):
        library = ops.library(lib)
        names = [library.define("f(Tensor x) -> Tensor"),
                 library.define("g.ov(Tensor x) -> Tensor")]
        lib.library.impl(f"{ops.ns}::f", "default", lambda x: x + 1, lib=library)
        x = lib.zeros(1)
        results = [getattr(lib.ops, ops.ns).f(x)]
        lib.library.impl(f"{ops.ns}::f", ["cpu"], lambda x: x + 2, lib=library)
        results.append(getattr(lib.ops, ops.ns).f(x))
        lib.library.impl(f"{ops.ns}::f", "Meta", lambda x: x.new_empty(2), lib=library)
        results.append(getattr(lib.ops, ops.ns).f(x.to("meta")))
        errors = [run(lambda _: library.impl("f", 3, "CPU"), lib),
                  run(lambda _: library.impl("f", lambda x: x, "CPU", allow_override=False), lib),
                  run(lambda _: lib.library.define(f"{ops.ns}::h", "h(Tensor x) -> Tensor"), lib),
                  run(lambda _: lib.library.define(3, "(Tensor x) -> Tensor"), lib),
                  run(lambda _: lib.library.define("nocolon", "(Tensor x) -> Tensor"), lib),
                  run(lambda _: lib.library.register_kernel(3, "cpu", lambda x: x), lib)]
        return names, results, errors, _dump_keys(lib, f"{ops.ns}::f")
    differential(scenario)


@pytest.mark.parametrize("kind", ["DEF", "FRAGMENT", "IMPL", "BOGUS"])
def test_library_kinds(kind):
    def scenario(lib):
        library = lib.library.Library("prim", kind)
        library._destroy()
        return repr(library)
    differential(scenario, may_raise=True)


def test_factory_op_selects_the_backend_from_its_device(ops):
    def scenario(lib):
        Tensor = lib.Tensor

        def fac(n: int, device: lib.device) -> Tensor:
            return lib.ones(n)
        op = ops.custom_op(lib, "fac", fac, mutates_args=(), device_types="cpu")
        return op(3, lib.device("cpu")), op(2, "cpu"), run(lambda _: op(2, "meta"), lib)
    differential(scenario)


# -- the op inside a model -----------------------------------------------------------------

def test_custom_op_in_a_module_trains_like_pytorch(ops):
    def scenario(lib):
        Tensor = lib.Tensor

        def scaled_tanh(x: Tensor, alpha: float) -> Tensor:
            return (x * alpha).tanh()

        op = ops.custom_op(lib, "scaled_tanh", scaled_tanh, mutates_args=())

        def setup_context(ctx, inputs, output):
            ctx.save_for_backward(output)
            ctx.alpha = inputs[1]

        def backward(ctx, grad):
            (y,) = ctx.saved_tensors
            return grad * (1 - y * y) * ctx.alpha, None

        op.register_autograd(backward, setup_context=setup_context)
        op.register_fake(lambda x, alpha: lib.empty_like(x))

        class Net(lib.nn.Module):
            def __init__(self):
                super().__init__()
                self.fc1 = lib.nn.Linear(4, 8)
                self.fc2 = lib.nn.Linear(8, 2)

            def forward(self, x):
                return self.fc2(op(self.fc1(x), 0.7))

        lib.manual_seed(0)
        net = Net()
        optimizer = lib.optim.SGD(net.parameters(), lr=0.1)
        x, target = lib.randn(5, 4), lib.randn(5, 2)
        losses = []
        for _ in range(2):
            optimizer.zero_grad()
            loss = lib.nn.functional.mse_loss(net(x), target)
            loss.backward()
            optimizer.step()
            losses.append(loss.detach())
        return losses, [p.detach() for p in net.parameters()]
    differential(scenario)


# -- opcheck ---------------------------------------------------------------------------------

def _opcheck_outcome(lib, *args, **kwargs):
    """opcheck's result dict, exceptions described by type and message."""
    result = lib.library.opcheck(*args, **kwargs)
    return {k: v if isinstance(v, str) else (type(v).__name__, str(v)) for k, v in result.items()}


_NO_FAKE = ("test_schema", "test_autograd_registration")


def _opcheck_case(ops, lib, case):
    """(op, args) for one opcheck scenario."""
    Tensor = lib.Tensor
    x = lib.tensor([1.0, 2.0])
    if case in ("good", "good_requires_grad"):
        op = _seed_clip_norm_like(ops, lib)
        return op, (x.requires_grad_(case == "good_requires_grad"), 1.0)
    if case == "undeclared_mutation":
        def f(x: Tensor) -> Tensor:
            x.add_(1)
            return x + 1
        return ops.custom_op(lib, "f", f, mutates_args=()), (x,)
    if case == "declared_mutation_not_done":
        def f(x: Tensor) -> None:
            pass
        return ops.custom_op(lib, "f", f, mutates_args={"x"}), (x,)
    library = ops.library(lib)
    schema, kernel = {
        "returns_view": ("f(Tensor x) -> Tensor", lambda x: x.view(-1)),
        "returns_input": ("f(Tensor(a) x) -> Tensor(a)", lambda x: x),
        "outputs_alias": ("f(Tensor x) -> (Tensor, Tensor)", lambda x: (x * 2,) * 2),
        "inplace": ("f(Tensor(a!) x) -> Tensor(a!)", lambda x: x.add_(1)),
        "autograd_at_backend": ("f(Tensor x) -> Tensor", lambda x: x * 3),
        "no_grad_at_backend": ("f(Tensor x) -> Tensor", lambda x: x.detach() * 3),
    }[case]
    library.define(schema)
    library.impl("f", kernel, "CPU")
    return getattr(lib.ops, ops.ns).f, (x.requires_grad_(case.endswith("_at_backend")),)


def _seed_clip_norm_like(ops, lib):
    Tensor = lib.Tensor

    def clip(x: Tensor, max_norm: float) -> Tensor:
        return x * (max_norm / (x.norm() + 1e-12)).clamp(max=1.0)
    op = ops.custom_op(lib, "clip", clip, mutates_args=())
    op.register_fake(lambda x, max_norm: lib.empty_like(x))

    def setup_context(ctx, inputs, output):
        x, max_norm = inputs
        ctx.scale = (max_norm / (x.norm() + 1e-12)).clamp(max=1.0)

    op.register_autograd(lambda ctx, g: (g * ctx.scale, None), setup_context=setup_context)
    return op


@pytest.mark.parametrize("case", ["good", "good_requires_grad", "undeclared_mutation",
                                  "declared_mutation_not_done", "returns_view", "returns_input",
                                  "outputs_alias", "inplace", "autograd_at_backend",
                                  "no_grad_at_backend"])
def test_opcheck_schema_and_autograd_registration(ops, case):
    def scenario(lib):
        op, args = _opcheck_case(ops, lib, case)
        return (_opcheck_outcome(lib, op, args, test_utils=_NO_FAKE, raise_exception=False),
                run(lambda _: lib.library.opcheck(op, args, test_utils=_NO_FAKE), lib)[:3])
    differential(scenario, warning_types=())


def test_opcheck_argument_errors(ops):
    def scenario(lib):
        library = ops.library(lib)
        library.define("f(Tensor x) -> Tensor")
        library.impl("f", lambda x: x * 2, "CPU")
        # torch segfaults in _jit_get_all_schemas once a library that defined two
        # overloads of one name is destroyed: torch's "g" is kept alive
        overloads = ops.library(lib) if lib is glasstorch else _kept_alive(lib.library.Library(
            ops.ns, "FRAGMENT"))
        overloads.define("g(Tensor x) -> Tensor")
        overloads.define("g.ov(Tensor x) -> Tensor")
        f, g, x = getattr(lib.ops, ops.ns).f, getattr(lib.ops, ops.ns).g, lib.ones(2)
        return [run(call, lib)[:3] for call in (
            lambda _: lib.library.opcheck(f.default, (x,), test_utils="test_bogus"),
            lambda _: lib.library.opcheck(f.default, (x,), atol=1.0),
            lambda _: lib.library.opcheck(lambda x: x, (x,)),
            lambda _: lib.library.opcheck(g, (x,)),
            lambda _: lib.library.opcheck(f, (x,), test_utils="test_schema"),
            lambda _: lib.library.opcheck(f.default, (x.to("meta"),), test_utils=_NO_FAKE))]
    differential(scenario)


_TORCH_LIBRARIES_KEPT = []


def _kept_alive(library):
    _TORCH_LIBRARIES_KEPT.append(library)
    return library


@pytest.mark.parametrize("case", ["good", "good_requires_grad", "wrong_fake_shape",
                                  "wrong_fake_dtype", "no_fake", "no_autograd"])
def test_opcheck_with_fake_tensors(ops, case):
    def scenario(lib):
        if case.startswith("good"):
            op, args = _opcheck_case(ops, lib, case)
        else:
            Tensor = lib.Tensor

            def f(x: Tensor) -> Tensor:
                return x * 2
            op = ops.custom_op(lib, "f", f, mutates_args=())
            if case != "no_fake":
                op.register_fake({"wrong_fake_shape": lambda x: x.new_empty(3),
                                  "wrong_fake_dtype": lambda x: x.new_empty(2, dtype=lib.float64),
                                  "no_autograd": lambda x: lib.empty_like(x)}[case])
            args = (lib.ones(2, requires_grad=case == "no_autograd"),)
        return _opcheck_outcome(lib, op, args, raise_exception=False)
    differential(scenario, warning_types=())


# -- the Python dispatch layer ----------------------------------------------------------------

def _logging_mode(lib):
    if lib is glasstorch:
        from glasstorch.utils._python_dispatch import TorchDispatchMode
    else:
        from torch.utils._python_dispatch import TorchDispatchMode

    class Log(TorchDispatchMode):
        def __init__(self):
            super().__init__()
            self.seen = []

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            self.seen.append(str(func))
            return func(*args, **(kwargs or {}))
    return Log


def test_dispatch_modes_see_custom_ops(ops):
    """Below autograd, a mode sees ``ns.f.default`` (not the ops inside it, which
    run while the mode is popped), then backward's ops."""
    def scenario(lib):
        Tensor = lib.Tensor

        def f(x: Tensor) -> Tensor:
            return x * 2
        op = ops.custom_op(lib, "f", f, mutates_args=())
        op.register_autograd(lambda ctx, g: g * 2)
        x = lib.ones(2, requires_grad=True)
        with _logging_mode(lib)() as mode:
            op(x).sum().backward()
        return mode.seen, x.grad
    differential(scenario)


def test_register_torch_dispatch_rule(ops):
    def scenario(lib):
        Tensor = lib.Tensor

        def f(x: Tensor) -> Tensor:
            return x * 2
        op = ops.custom_op(lib, "f", f, mutates_args=())
        mode_class = _logging_mode(lib)

        @op.register_torch_dispatch(mode_class)
        def _(mode, func, types, args, kwargs):
            mode.seen.append(("rule", str(func)))
            return func(*args, **kwargs) + 1

        with mode_class() as mode:
            y = op(lib.ones(2))
        return mode.seen, y
    differential(scenario)


def test_library_op_without_meta_kernel_on_meta_tensors(ops):
    def scenario(lib):
        library = ops.library(lib)
        library.define("f(Tensor x) -> Tensor")
        library.impl("f", lambda x: x * 3, "CPU")
        return getattr(lib.ops, ops.ns).f(lib.empty(2, device="meta"))
    raised(differential(scenario, may_raise=True), "NotImplementedError")


def test_custom_op_appears_in_the_profiler(ops):
    """A user op is a dispatcher op: the profiler records it, with its body's ops
    nested inside, as PyTorch's does."""
    def scenario(lib):
        __import__(f"{lib.__name__}.profiler")
        Tensor = lib.Tensor

        def twice(x: Tensor) -> Tensor:
            return x * 2
        op = ops.custom_op(lib, "twice", twice, mutates_args=())
        x = lib.ones(3)
        with lib.profiler.profile() as prof:
            op(x)
        keys = [e.key for e in prof.key_averages()]
        name = f"{ops.ns}::twice"
        return name in keys, "aten::mul" in keys, \
            [e.name for e in prof.events() if e.name == name][0] == name
    assert returned(differential(scenario)) == (True, True, True)

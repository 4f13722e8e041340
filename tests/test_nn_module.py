"""nn.Module, the containers and Parameter/Buffer, against real PyTorch.

Every scenario is a function of the library: it builds small toy modules with
``lib.nn`` and returns what it observed (names, reprs, tensors, hook logs);
``differential`` runs it in both libraries and asserts the same outcome, or
the same exception type and message.
"""
from __future__ import annotations

import copy
import pickle

import numpy as np
import pytest
import torch

import glasstorch as gt

from .differential import differential, raised, returned

LIBS = [torch, gt]


# -- toy modules, one set per library ---------------------------------------------------------

def toys(lib):
    """Small Module subclasses built on ``lib.nn``."""
    nn = lib.nn

    class Affine(nn.Module):
        def __init__(self, n_in=2, n_out=3):
            super().__init__()
            self.weight = nn.Parameter(lib.arange(float(n_in * n_out)).reshape(n_in, n_out) / 10)
            self.bias = nn.Parameter(lib.zeros(n_out))
            self.register_buffer("running", lib.ones(n_out))
            self.register_buffer("scratch", lib.zeros(1), persistent=False)

        def forward(self, x):
            return x @ self.weight + self.bias

    class Pair(nn.Module):
        """Two inputs (one optional), two outputs, a keyword argument."""

        def __init__(self):
            super().__init__()
            self.w = nn.Parameter(lib.tensor([[1.0, -2.0, 0.5], [0.25, 3.0, -1.0]]))

        def forward(self, x, y=None, scale=1.0):
            out = (x @ self.w) * scale
            return out, (out * out).sum() if y is None else out + y

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.first = Affine()
            self.body = nn.Sequential(Affine(3, 3), nn.Sequential(Affine(3, 3)))
            self.heads = nn.ModuleList([Affine(3, 1), Affine(3, 1)])
            self.scale = nn.Parameter(lib.tensor(2.0))
            self.register_buffer("steps", lib.tensor(0))

        def forward(self, x):
            h = self.body(self.first(x))
            return sum(head(h) for head in self.heads) * self.scale

    class Extra(nn.Module):
        """A module with extra state and a multi-line extra_repr."""

        def __init__(self):
            super().__init__()
            self.value = 7
            self.w = nn.Parameter(lib.ones(1))

        def get_extra_state(self):
            return {"value": self.value}

        def set_extra_state(self, state):
            self.value = state["value"]

        def extra_repr(self):
            return "value=7\nsecond line"

    return Affine, Pair, Net, Extra


def names(pairs):
    return [name for name, _ in pairs]


# -- registration and attribute access -------------------------------------------------------

def test_registration_kinds():
    def scenario(lib):
        Affine, _, _, _ = toys(lib)
        m = Affine()
        m.plain = lib.ones(2)                       # a plain tensor: just an attribute
        m.buf = lib.nn.Buffer(lib.ones(2), persistent=False)
        m.sub = Affine()
        m.extra = lib.nn.Parameter(lib.ones(1))
        m.running = lib.full((3,), 5.0)             # reassigning a buffer keeps it a buffer
        m.bias = None                               # a parameter slot set to None
        m.sub = None
        return (names(m.named_parameters()), names(m.named_buffers()), names(m.named_children()),
                list(m.state_dict()), "plain" in m.__dict__, m.running, m.bias, m.sub)
    differential(scenario)


def test_kind_change_moves_the_name():
    def scenario(lib):
        Affine, _, _, _ = toys(lib)
        m = Affine()
        m.running = None
        m.w2 = lib.nn.Parameter(lib.ones(1))
        del m.w2
        m.w2 = Affine()          # was a parameter, now a module
        m.scratch = lib.nn.Parameter(lib.ones(1))   # was a non-persistent buffer
        return (names(m.named_parameters()), names(m.named_buffers()), names(m.named_children()),
                list(m.state_dict()))
    differential(scenario)


@pytest.mark.parametrize("case", [
    lambda lib, m: m.register_parameter("a.b", lib.nn.Parameter(lib.ones(1))),
    lambda lib, m: m.register_parameter("", None),
    lambda lib, m: m.register_parameter(3, None),
    lambda lib, m: m.register_parameter("forward", None),
    lambda lib, m: m.register_parameter("w", lib.ones(1)),
    lambda lib, m: m.register_parameter("w", lib.nn.Parameter(lib.ones(1)) * 2),
    lambda lib, m: m.register_buffer("a.b", lib.ones(1)),
    lambda lib, m: m.register_buffer("", lib.ones(1)),
    lambda lib, m: m.register_buffer("weight", lib.ones(1)),
    lambda lib, m: m.register_buffer("x", [1, 2]),
    lambda lib, m: m.add_module("x", lib.ones(1)),
    lambda lib, m: m.add_module("a.b", lib.nn.Module()),
    lambda lib, m: m.add_module("", lib.nn.Module()),
    lambda lib, m: m.add_module(1, lib.nn.Module()),
    lambda lib, m: m.add_module("bias", lib.nn.Module()),
    lambda lib, m: setattr(m, "weight", lib.ones(2, 3)),
    lambda lib, m: setattr(m, "running", 3),
    lambda lib, m: (setattr(m, "sub", lib.nn.Module()), setattr(m, "sub", 4)),
    lambda lib, m: m.missing,
    lambda lib, m: delattr(m, "missing"),
    lambda lib, m: lib.nn.Module(3),
    lambda lib, m: lib.nn.Module(foo=3),
    lambda lib, m: lib.nn.Module()(lib.ones(1)),
])
def test_registration_errors(case):
    def scenario(lib):
        Affine, _, _, _ = toys(lib)
        return case(lib, Affine())
    raised(differential(scenario, may_raise=True))


def test_assign_before_init():
    def scenario(lib):
        class Early(lib.nn.Module):
            def __init__(self, what):
                if what == "param":
                    self.p = lib.nn.Parameter(lib.ones(1))
                elif what == "module":
                    self.m = lib.nn.Module()
                else:
                    self.register_buffer("b", lib.ones(1))
        errors = []
        for what in ("param", "module", "buffer"):
            try:
                Early(what)
            except AttributeError as e:
                errors.append(str(e))
        return errors
    differential(scenario)


def test_buffer_class():
    def scenario(lib):
        b = lib.nn.Buffer(lib.ones(2, requires_grad=True))
        m = lib.nn.Module()
        m.kept = lib.nn.Buffer(lib.zeros(1))
        m.dropped = lib.nn.Buffer(lib.zeros(1), persistent=False)
        Buffer = lib.nn.Buffer
        return (type(b).__name__, isinstance(b, Buffer), isinstance(lib.ones(1), Buffer),
                b.requires_grad, names(m.named_buffers()), list(m.state_dict()))
    differential(scenario)


# -- Parameter -------------------------------------------------------------------------------

def test_parameter_basics():
    def scenario(lib):
        P = lib.nn.Parameter
        p = P(lib.ones(2, 2))
        results = [p + 1, p.detach(), p.clone(), p[0], p.view(4), p.t(), p * p, p.sum(), p.data]
        q = P(p)
        frozen = P(lib.ones(2), requires_grad=False)
        return ([type(r).__name__ for r in results], repr(p), repr(P()), repr(frozen),
                type(q).__name__, q is p, q.requires_grad, isinstance(p, lib.Tensor),
                isinstance(lib.ones(1), P), repr(P(lib.ones(2, dtype=lib.int64), False)),
                repr(p.data), p.data.requires_grad)
    differential(scenario)


def test_parameter_integer_requires_grad_error():
    raised(differential(lambda lib: lib.nn.Parameter(lib.ones(2, dtype=lib.int64)), may_raise=True))


def test_parameter_aliases_its_data():
    def scenario(lib):
        t = lib.zeros(3)
        p = lib.nn.Parameter(t)
        t.add_(1)
        return p, p._version == t._version
    differential(scenario)


def test_deepcopy_tensors_and_parameters():
    def scenario(lib):
        p = lib.nn.Parameter(lib.ones(2))
        p.grad = lib.full((2,), 3.0)
        t = lib.ones(3, requires_grad=True)
        t.grad = lib.zeros(3)
        base = lib.arange(6.0)
        views = copy.deepcopy([base, base[2:]])
        views[1][0] = 100.0                     # views of one storage stay views
        dp, dtt = copy.deepcopy(p), copy.deepcopy(t)
        return (type(dp).__name__, dp, dp.grad, dp is p, dtt, dtt.grad, views[0], base)
    differential(scenario)


def _module_level_toys(lib):
    """``toys(lib)`` bound to names of this module, so that pickle can find them."""
    classes = toys(lib)
    for cls in classes:
        cls.__qualname__ = f"{cls.__name__}_{lib.__name__}"
        globals()[cls.__qualname__] = cls
    return classes


PICKLABLE_TOYS = {lib.__name__: _module_level_toys(lib) for lib in LIBS}


def test_pickle_round_trip():
    """A pickled module comes back whole: structure, parameters, buffers (the
    non-persistent one too), training flags, extra state, tied weights, and the
    same forward results."""
    def scenario(lib):
        _, _, Net, Extra = PICKLABLE_TOYS[lib.__name__]
        net = Net()
        net.tied = net.first.weight
        net.extra = Extra()
        net.extra.value = 9
        net.body.eval()
        net.first.scratch.fill_(4.0)
        clone = pickle.loads(pickle.dumps(net))
        p = pickle.loads(pickle.dumps(lib.nn.Parameter(lib.ones(2), requires_grad=False)))
        x = lib.tensor([[1.0, -2.0]])
        return (repr(clone), type(clone).__name__, list(clone.state_dict().items()),
                list(clone.named_buffers()), [m.training for m in clone.modules()],
                clone.extra.value, clone.tied is clone.first.weight,
                type(clone.first.weight).__name__, clone.first.weight.requires_grad, repr(p),
                clone(x), net(x))
    differential(scenario)


def test_deepcopy_non_leaf_error():
    raised(differential(lambda lib: copy.deepcopy(lib.ones(2, requires_grad=True) * 2),
                        may_raise=True))


# -- iteration -------------------------------------------------------------------------------

def test_named_iterators():
    def scenario(lib):
        _, _, Net, _ = toys(lib)
        net = Net()
        return (names(net.named_parameters()), names(net.named_buffers()),
                names(net.named_modules()), names(net.named_children()),
                names(net.named_parameters(prefix="model")),
                names(net.named_parameters(recurse=False)),
                names(net.named_buffers(prefix="p", recurse=False)),
                names(net.named_modules(prefix="root")),
                len(list(net.parameters())), len(list(net.buffers())),
                len(list(net.children())), len(list(net.modules())))
    differential(scenario)


def test_shared_members_and_remove_duplicate():
    def scenario(lib):
        Affine, _, _, _ = toys(lib)
        shared = Affine()
        seq = lib.nn.Sequential(shared, Affine(3, 3), shared)
        seq.tied = seq[1].weight
        return (names(seq.named_parameters()), names(seq.named_parameters(remove_duplicate=False)),
                names(seq.named_modules()), names(seq.named_modules(remove_duplicate=False)),
                names(seq.named_buffers(remove_duplicate=False)), list(seq.state_dict()),
                len(list(seq.children())))
    differential(scenario)


def test_get_submodule_parameter_buffer():
    def scenario(lib):
        _, _, Net, _ = toys(lib)
        net = Net()
        net.plain = 3
        found = [type(net.get_submodule("body.1.0")).__name__, net.get_submodule("") is net,
                 net.get_parameter("body.1.0.weight").shape, net.get_buffer("heads.1.running"),
                 net.get_parameter("scale")]
        errors = []
        for call in (lambda: net.get_submodule("body.5"), lambda: net.get_submodule("scale.x"),
                     lambda: net.get_parameter("first.running"),
                     lambda: net.get_parameter("first.nope"),
                     lambda: net.get_buffer("first.weight"), lambda: net.get_buffer("plain"),
                     lambda: net.get_submodule("plain")):
            try:
                call()
            except AttributeError as e:
                errors.append(str(e))
        return found, errors
    differential(scenario)


def test_set_submodule():
    def scenario(lib):
        Affine, _, Net, _ = toys(lib)
        net = Net()
        net.set_submodule("body.1.0", Affine(3, 3))
        net.set_submodule("body.new", Affine(1, 1))
        try:
            net.set_submodule("body.other", Affine(), strict=True)
        except AttributeError as e:
            return str(e), names(net.named_modules())
    differential(scenario)


# -- modes, gradients, apply ---------------------------------------------------------------

def test_train_eval_requires_grad_apply():
    def scenario(lib):
        _, _, Net, _ = toys(lib)
        net = Net()
        modes = [net.eval() is net, [m.training for m in net.modules()]]
        net.train()
        modes.append([m.training for m in net.modules()])
        net.heads.train(False)
        modes.append([m.training for m in net.modules()])
        net.requires_grad_(False)
        modes.append([p.requires_grad for p in net.parameters()])
        visited = []
        net.apply(lambda m: visited.append(type(m).__name__))
        try:
            net.train("yes")
        except ValueError as e:
            modes.append(str(e))
        return modes, visited
    differential(scenario)


@pytest.mark.parametrize("set_to_none", [True, False])
def test_zero_grad(set_to_none):
    def scenario(lib):
        _, _, Net, _ = toys(lib)
        net = Net()
        net(lib.ones(4, 2)).sum().backward()
        before = [p.grad.abs().sum().item() > 0 for p in net.parameters()]
        net.zero_grad(set_to_none=set_to_none)
        return before, [p.grad for p in net.parameters()]
    differential(scenario)


# -- forward and hooks -------------------------------------------------------------------------

def _values(grads):
    return [None if g is None else np.round(g.detach().numpy(), 5).tolist() for g in grads]


def test_forward_hooks_order_and_arguments():
    def scenario(lib):
        _, Pair, _, _ = toys(lib)
        m = Pair()
        log = []
        m.register_forward_pre_hook(lambda mod, args: log.append(("pre", len(args))))
        m.register_forward_pre_hook(lambda mod, args, kw: log.append(("pre_kw", sorted(kw))),
                                    with_kwargs=True, prepend=True)
        m.register_forward_pre_hook(lambda mod, args: (args[0] * 2,) + args[1:])
        m.register_forward_hook(lambda mod, args, out: log.append(("fwd", args[0].sum().item())))
        m.register_forward_hook(lambda mod, args, kw, out: log.append(("fwd_kw", kw)),
                                with_kwargs=True)
        handle = m.register_forward_hook(lambda mod, args, out: (out[0] + 100, out[1]),
                                         prepend=True)
        first = m(lib.ones(1, 2), scale=3.0)
        handle.remove()
        second = m(lib.ones(1, 2))
        return log, first, second
    differential(scenario)


def test_forward_pre_hook_kwargs_replacement_and_error():
    def scenario(lib):
        _, Pair, _, _ = toys(lib)
        m = Pair()
        m.register_forward_pre_hook(lambda mod, args, kw: (args, {"scale": 10.0}),
                                    with_kwargs=True)
        out = m(lib.ones(1, 2))
        bad = Pair()
        bad.register_forward_pre_hook(lambda mod, args, kw: args, with_kwargs=True)
        try:
            bad(lib.ones(1, 2))
        except RuntimeError as e:
            return out, str(e)
    differential(scenario)


def test_always_call_hook_runs_when_forward_raises():
    def scenario(lib):
        class Failing(lib.nn.Module):
            def forward(self, x):
                raise ValueError("forward failed")
        m = Failing()
        log = []
        m.register_forward_hook(lambda mod, args, out: log.append(("always", args, out)),
                                always_call=True)
        m.register_forward_hook(lambda mod, args, out: log.append("never"))
        try:
            m(5)
        except ValueError as e:
            log.append(str(e))
        return log
    differential(scenario)


def test_global_forward_hooks():
    def scenario(lib):
        from importlib import import_module
        hooks = import_module(lib.__name__ + ".nn.modules.module")
        _, _, Net, _ = toys(lib)
        net = Net()
        log = []
        h1 = hooks.register_module_forward_pre_hook(
            lambda m, a: log.append(("gpre", type(m).__name__)))
        h2 = hooks.register_module_forward_hook(
            lambda m, a, o: log.append(("gfwd", type(m).__name__)))
        net.first.register_forward_pre_hook(lambda m, a: log.append("own pre"))
        try:
            net(lib.ones(1, 2))
        finally:
            h1.remove()
            h2.remove()
        net(lib.ones(1, 2))
        return log
    differential(scenario)


def test_global_backward_hooks():
    def scenario(lib):
        from importlib import import_module
        hooks = import_module(lib.__name__ + ".nn.modules.module")
        _, Pair, _, _ = toys(lib)
        m = Pair()
        log = []
        m.register_full_backward_hook(lambda mod, gi, go: log.append("own"))
        handles = [hooks.register_module_full_backward_pre_hook(
                       lambda mod, go: log.append(("global pre", _values(go)))),
                   hooks.register_module_full_backward_hook(
                       lambda mod, gi, go: log.append(("global", _values(gi))))]
        try:
            x = lib.tensor([[1.0, -1.0]], requires_grad=True)
            m(x)[0].sum().backward()
        finally:
            for handle in handles:
                handle.remove()
        m(x)[0].sum().backward()
        return log, x.grad
    differential(scenario)


def test_full_backward_hooks_grads_and_order():
    def scenario(lib):
        _, Pair, _, _ = toys(lib)
        m = Pair()
        log = []
        m.register_full_backward_pre_hook(lambda mod, go: log.append(("pre", _values(go))))
        m.register_full_backward_pre_hook(lambda mod, go: (go[0] * 2, go[1]))

        def hook(mod, grad_input, grad_output):
            log.append(("hook", _values(grad_input), _values(grad_output)))
            return (grad_input[0] * 10,) + tuple(grad_input[1:])

        m.register_full_backward_hook(hook)
        m.register_full_backward_hook(lambda mod, gi, go: log.append(("after", _values(gi))),
                                      prepend=False)
        x = lib.tensor([[1.0, 2.0]], requires_grad=True)
        y = lib.tensor([[0.5, 0.5, 0.5]], requires_grad=True)
        out, other = m(x, y, scale=2.0)
        (out.sum() * 3 + other.sum()).backward()
        return log, x.grad, y.grad, m.w.grad, out
    differential(scenario)


def test_backward_hook_with_non_tensor_and_frozen_inputs():
    def scenario(lib):
        class Scaled(lib.nn.Module):
            def __init__(self):
                super().__init__()
                self.w = lib.nn.Parameter(lib.tensor([2.0, -1.0]))

            def forward(self, x, k, frozen):
                return x * self.w * k + frozen
        m = Scaled()
        log = []
        m.register_full_backward_hook(lambda mod, gi, go: log.append((_values(gi), _values(go))))
        x = lib.tensor([1.0, 3.0], requires_grad=True)
        m(x, 3, lib.ones(2)).sum().backward()
        return log, x.grad
    differential(scenario)


def test_backward_hook_when_no_input_requires_grad():
    def scenario(lib):
        _, Pair, _, _ = toys(lib)
        m = Pair()
        log = []
        m.register_full_backward_hook(lambda mod, gi, go: log.append((_values(gi), _values(go))))
        out, total = m(lib.ones(1, 2))
        total.backward()
        return log, m.w.grad
    differential(scenario)


def test_backward_hook_wrong_count_error():
    def scenario(lib):
        _, Pair, _, _ = toys(lib)
        m = Pair()
        m.register_full_backward_hook(lambda mod, gi, go: (gi[0], gi[0]))
        out, _ = m(lib.ones(1, 2, requires_grad=True))
        out.sum().backward()
    raised(differential(scenario, may_raise=True))


@pytest.mark.parametrize("inputs", ["leaf", "computed", "two", "non_tensor"])
def test_legacy_backward_hook(inputs):
    def scenario(lib):
        class Scale(lib.nn.Module):
            def forward(self, x, *rest):
                return x * 3 if inputs != "two" else (x * 3, x + 1)
        m = Scale()
        log = []
        m.register_backward_hook(lambda mod, gi, go: log.append((_values(gi), _values(go))))
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        arg = x * 1 if inputs == "computed" else x
        out = m(arg, 5) if inputs == "non_tensor" else m(arg)
        (out[0] if inputs == "two" else out).sum().backward()
        return log, x.grad
    differential(scenario, warning_types=(FutureWarning,))


def test_mixing_backward_hook_kinds_error():
    def scenario(lib):
        m = lib.nn.Module()
        m.register_full_backward_hook(lambda *a: None)
        m.register_backward_hook(lambda *a: None)
    raised(differential(scenario, may_raise=True))


def test_backward_hook_grads_match_plain_run():
    """A hook that returns nothing leaves every gradient as without hooks."""
    def grads(lib, hooked):
        _, _, Net, _ = toys(lib)
        net = Net()
        if hooked:
            for mod in net.modules():
                mod.register_full_backward_hook(lambda *a: None)
                mod.register_full_backward_pre_hook(lambda *a: None)
        x = lib.tensor([[0.5, -1.0], [2.0, 1.0]], requires_grad=True)
        net(x).sum().backward()
        return [x.grad] + [p.grad for p in net.parameters()]
    assert returned(differential(lambda lib: grads(lib, True))) == \
        returned(differential(lambda lib: grads(lib, False)))


# -- state_dict / load_state_dict ------------------------------------------------------------

def test_state_dict_contents():
    def scenario(lib):
        _, _, Net, Extra = toys(lib)
        net = Net()
        sd = net.state_dict()
        kept = net.state_dict(keep_vars=True)
        dest = {}
        net.first.state_dict(destination=dest, prefix="pre.")
        extra = Extra().state_dict()
        return (type(sd).__name__, list(sd), dict(sd._metadata), sd["first.weight"],
                [v.requires_grad for v in sd.values()], [v.requires_grad for v in kept.values()],
                kept["scale"] is net.scale, list(dest), extra)
    differential(scenario)


def test_state_dict_positional_args_warn():
    def scenario(lib):
        Affine, _, _, _ = toys(lib)
        dest = {}
        Affine().state_dict(dest, "x.")
        return list(dest)
    differential(scenario)


def test_load_state_dict_round_trip():
    def scenario(lib):
        _, _, Net, Extra = toys(lib)
        src, dst = Net(), Net()
        with lib.no_grad():
            for p in src.parameters():
                p.add_(1.5)
        src.steps.fill_(4)
        before = dst.first.weight
        result = dst.load_state_dict(src.state_dict())
        e = Extra()
        e.value = 9
        e2 = Extra()
        e2.load_state_dict(e.state_dict())
        return (repr(result), str(result), dst.first.weight is before, dst.first.weight,
                dst.steps, dst.scale.requires_grad, e2.value)
    differential(scenario)


@pytest.mark.parametrize("edit", [
    lambda lib, sd: sd.pop("first.bias"),
    lambda lib, sd: sd.update({"first.extra": lib.ones(1), "nothere.x": lib.ones(1)}),
    lambda lib, sd: sd.update({"first.weight": lib.ones(3, 2)}),
    lambda lib, sd: sd.update({"first.weight": [1, 2]}),
    lambda lib, sd: (sd.pop("scale"), sd.update({"heads.0.weight": lib.ones(1),
                                                  "unexpected": lib.ones(1)})),
    lambda lib, sd: sd.update({"first.scratch": lib.ones(1)}),
])
@pytest.mark.parametrize("strict", [True, False])
def test_load_state_dict_errors(edit, strict):
    def scenario(lib):
        _, _, Net, _ = toys(lib)
        net = Net()
        sd = net.state_dict()
        edit(lib, sd)
        return repr(net.load_state_dict(sd, strict=strict))
    differential(scenario, may_raise=True)


def test_load_state_dict_scalar_from_one_element_and_not_a_mapping():
    def scenario(lib):
        _, _, Net, _ = toys(lib)
        net = Net()
        sd = net.state_dict()
        sd["scale"] = lib.tensor([5.0])
        net.load_state_dict(sd)
        try:
            net.load_state_dict([1, 2])
        except TypeError as e:
            return net.scale, str(e)
    differential(scenario)


def test_load_state_dict_assign():
    def scenario(lib):
        Affine, _, _, _ = toys(lib)
        m = Affine()
        m.bias.requires_grad_(False)
        new_w = lib.full((2, 3), 7.0)
        sd = {"weight": new_w, "bias": lib.nn.Parameter(lib.ones(3)), "running": lib.zeros(3)}
        m.load_state_dict(sd, assign=True)
        return (type(m.weight).__name__, m.weight.requires_grad, m.bias.requires_grad,
                m.weight.data_ptr() == new_w.data_ptr(), m.running is sd["running"])
    differential(scenario)


def test_load_state_dict_hooks():
    def scenario(lib):
        _, _, Net, _ = toys(lib)
        net = Net()
        log = []

        def pre(module, state_dict, prefix, local_metadata, strict, missing, unexpected, errors):
            log.append(("pre", type(module).__name__, prefix, sorted(local_metadata), strict))

        def post(module, incompatible):
            log.append(("post", type(module).__name__, list(incompatible.missing_keys)))
            incompatible.unexpected_keys.clear()

        net.first.register_load_state_dict_pre_hook(pre)
        net.register_load_state_dict_post_hook(post)
        net.heads.register_load_state_dict_post_hook(post)
        sd = net.state_dict()
        sd["bogus"] = lib.ones(1)
        result = net.load_state_dict(sd)
        return log, repr(result)
    differential(scenario)


def test_state_dict_hooks():
    def scenario(lib):
        Affine, _, _, _ = toys(lib)
        m = Affine()
        log = []
        m.register_state_dict_pre_hook(
            lambda mod, prefix, keep_vars: log.append((prefix, keep_vars)))
        m.register_state_dict_post_hook(
            lambda mod, sd, prefix, meta: log.append((prefix, sorted(sd), dict(meta))))
        m.state_dict(prefix="a.")
        bad = Affine()
        bad.register_state_dict_post_hook(lambda *args: {})
        try:
            bad.state_dict()
        except RuntimeError as e:
            log.append(str(e))
        return log
    differential(scenario)


# -- conversion ------------------------------------------------------------------------------

@pytest.mark.parametrize("convert", [
    lambda lib, m: m.half(), lambda lib, m: m.double(), lambda lib, m: m.bfloat16(),
    lambda lib, m: m.double().float(), lambda lib, m: m.to(lib.float64),
    lambda lib, m: m.to("cpu", lib.float16), lambda lib, m: m.to(device="cpu"),
    lambda lib, m: m.to(lib.ones(1, dtype=lib.float64)), lambda lib, m: m.to(dtype=lib.float16),
    lambda lib, m: m.cpu(), lambda lib, m: m.type(lib.float64),
    lambda lib, m: m.to(lib.float64, non_blocking=True), lambda lib, m: m.to(lib.complex64),
])
def test_conversion(convert):
    def scenario(lib):
        _, _, Net, _ = toys(lib)
        net = Net()
        net(lib.ones(1, 2)).sum().backward()
        weight = net.first.weight
        assert convert(lib, net) is net
        return ([(n, str(t.dtype), t.requires_grad, str(t.device)) for n, t in
                 net.state_dict(keep_vars=True).items()],
                net.first.weight is weight, str(weight.grad.dtype), type(weight).__name__,
                str(net(lib.ones(1, 2, dtype=net.first.weight.dtype)).dtype))
    differential(scenario)


def test_conversion_errors():
    def scenario(lib):
        Affine, _, _, _ = toys(lib)
        return Affine().to(lib.int64)
    raised(differential(scenario, may_raise=True))


def test_cuda_unavailable():
    def scenario(lib):
        Affine, _, _, _ = toys(lib)
        return Affine().cuda()
    raised(differential(scenario, may_raise=True))


# -- copying -------------------------------------------------------------------------------

def test_deepcopy_module():
    def scenario(lib):
        _, _, Net, _ = toys(lib)
        net = Net()
        net.tied = net.first.weight
        net(lib.ones(1, 2)).sum().backward()
        clone = copy.deepcopy(net)
        with lib.no_grad():
            clone.first.weight.add_(1)
        return (clone.tied is clone.first.weight, clone.first.weight is net.first.weight,
                net.first.weight, clone.first.weight, clone.first.weight.grad,
                list(clone.state_dict()), repr(clone) == repr(net), clone.training)
    differential(scenario)


# -- printing -------------------------------------------------------------------------------

def test_repr_nested_containers():
    def scenario(lib):
        Affine, _, Net, Extra = toys(lib)
        nn = lib.nn
        net = Net()
        net.more = nn.ModuleDict({"a": Extra(), "b": nn.ModuleList([Extra(), Extra(), Affine()]),
                                  "c": nn.ModuleList(), "d": nn.Sequential()})
        net.params = nn.ParameterList([nn.Parameter(lib.ones(2, 3)),
                                       lib.zeros(4, dtype=lib.float64), "text"])
        net.pdict = nn.ParameterDict({"z": lib.ones(1), "a": nn.Parameter(lib.ones(2, 2))})
        net.none = None                        # a plain attribute
        net.register_module("absent", None)   # a registered empty slot
        return repr(net), str(net.params), repr(net.pdict), repr(nn.Module())
    differential(scenario)


# -- containers ------------------------------------------------------------------------------

def test_sequential_operations():
    def scenario(lib):
        Affine, _, _, Extra = toys(lib)
        nn = lib.nn
        a, b, c = Affine(3, 3), Affine(3, 3), Affine(3, 3)
        seq = nn.Sequential(a, b)
        out = [len(seq), seq[0] is a, seq[-1] is b, type(seq[0:1]).__name__, len(seq[::-1])]
        seq.append(c)
        seq.insert(0, Extra())
        seq.insert(-1, Extra())
        out.append(names(seq.named_children()))
        out.append(type(seq.pop(0)).__name__)
        del seq[1]
        out.append([type(m).__name__ for m in seq])
        seq[0] = Affine(3, 3)
        seq.extend(nn.Sequential(Affine(3, 3)))
        out.append(list(seq.state_dict())[:4])
        combined = seq + nn.Sequential(Affine(3, 3))
        out.append(len(combined))
        seq += nn.Sequential(Affine(3, 3))
        out.append(len(seq))
        out.append(len(seq * 2))
        seq2 = nn.Sequential(nn.Sequential(), Affine(3, 3))
        seq2 *= 3
        out.append(names(seq2.named_children()))
        del seq[1:3]
        out.append(names(seq.named_children()))
        named = nn.Sequential(__import__("collections").OrderedDict(first=Affine(2, 3),
                                                                     second=Affine(3, 1)))
        out.append(named(lib.ones(1, 2)))
        out.append([k for k in dir(seq) if k.isdigit()])
        return out
    differential(scenario)


@pytest.mark.parametrize("case", [
    lambda lib, seq: seq[5],
    lambda lib, seq: seq["a"],
    lambda lib, seq: seq + 3,
    lambda lib, seq: seq * 0,
    lambda lib, seq: seq * 1.5,
    lambda lib, seq: seq.insert(9, lib.nn.Sequential()),
    lambda lib, seq: lib.nn.ModuleList([lib.nn.Sequential()])[3],
    lambda lib, seq: lib.nn.ModuleList(3),
    lambda lib, seq: lib.nn.ModuleDict({"a": lib.nn.Sequential()})["b"],
    lambda lib, seq: lib.nn.ModuleDict([("a",)]),
    lambda lib, seq: lib.nn.ModuleDict(5),
    lambda lib, seq: lib.nn.ParameterList(lib.ones(2)),
    lambda lib, seq: lib.nn.ParameterList()(1),
    lambda lib, seq: lib.nn.ParameterDict({1: lib.ones(1)}),
    lambda lib, seq: lib.nn.ParameterDict([("a", lib.ones(1), 3)]),
    lambda lib, seq: lib.nn.ParameterDict()(1),
])
def test_container_errors(case):
    def scenario(lib):
        try:
            return case(lib, lib.nn.Sequential(lib.nn.Sequential(), lib.nn.Sequential()))
        except Exception as e:   # messages naming a class name its module: compare as torch
            raise type(e)(str(e).replace("glasstorch.", "torch.")) from None
    raised(differential(scenario, may_raise=True))


def test_module_list_and_dict():
    def scenario(lib):
        Affine, _, _, _ = toys(lib)
        nn = lib.nn
        ml = nn.ModuleList([Affine(), Affine(3, 3)])
        ml.append(Affine(3, 1))
        ml.extend([Affine(1, 1)])
        ml.insert(1, Affine(2, 2))
        ml += [Affine()]
        out = [len(ml), [m.weight.shape for m in ml], type(ml[1:3]).__name__, len(ml[::2])]
        ml[0] = Affine(5, 5)
        del ml[-1]
        out.append(type(ml.pop(1)).__name__)
        out.append(names(ml.named_children()))
        out.append(len(ml + nn.ModuleList([Affine()])))
        del ml[0:2]
        out.append(list(ml.state_dict())[:3])
        md = nn.ModuleDict({"b": Affine(), "a": Affine(3, 3)})
        md["c"] = Affine(1, 1)
        md.update([("d", Affine())])
        md.update(nn.ModuleDict({"e": Affine()}))
        out += [list(md), list(md.keys()), "a" in md, len(md), [k for k, _ in md.items()],
                len(list(md.values())), type(md.pop("b")).__name__, list(md)]
        del md["a"]
        out.append(list(md.state_dict())[:2])
        md.clear()
        out.append(len(md))
        return out
    differential(scenario)


def test_parameter_list_and_dict():
    def scenario(lib):
        nn = lib.nn
        pl = nn.ParameterList([lib.ones(2), nn.Parameter(lib.zeros(3))])
        pl.append(lib.ones(1, dtype=lib.float64))
        pl.extend([nn.Parameter(lib.ones(4))])
        pl.append("not a tensor")
        pl[0] = lib.full((2,), 3.0)
        out = [len(pl), [type(p).__name__ for p in pl], names(pl.named_parameters()),
               len(pl[1:3]), pl[-2].shape, list(pl.state_dict())]
        pd = nn.ParameterDict({"b": lib.ones(1), "a": lib.ones(2)})
        pd["c"] = nn.Parameter(lib.zeros(3))
        pd.update([("d", lib.ones(1))])
        pd.update(__import__("collections").OrderedDict(z=lib.ones(1), y=lib.ones(1)))
        out += [list(pd), list(pd.keys()), [k for k, _ in pd.items()], len(pd), "a" in pd,
                pd.get("nope", 5), type(pd["a"]).__name__, pd.setdefault("e", lib.ones(2)).shape,
                list(reversed(pd))]
        out.append(pd.pop("b"))
        out.append(pd.popitem()[0])
        out.append(list(pd.copy()))
        out.append(list(pd | nn.ParameterDict({"q": lib.ones(1)})))
        out.append(list(pd.fromkeys(["x", "w"], lib.ones(1))))
        del pd["a"]
        out.append(names(pd.named_parameters()))
        pd.clear()
        out.append(len(pd))
        return out
    differential(scenario)


# -- registration hooks and misc -------------------------------------------------------------

def test_global_registration_hooks():
    def scenario(lib):
        from importlib import import_module
        hooks = import_module(lib.__name__ + ".nn.modules.module")
        log = []
        handles = [
            hooks.register_module_parameter_registration_hook(
                lambda m, n, p: log.append(("param", n))),
            hooks.register_module_buffer_registration_hook(
                lambda m, n, b: log.append(("buffer", n))),
            hooks.register_module_module_registration_hook(
                lambda m, n, s: log.append(("module", n))),
        ]
        try:
            Affine, _, _, _ = toys(lib)
            seq = lib.nn.Sequential(Affine())
            seq.extra = lib.nn.Module()
        finally:
            for h in handles:
                h.remove()
        lib.nn.Sequential(Affine())
        return log
    differential(scenario)


def test_dir_lists_members():
    for lib in LIBS:
        Affine, _, _, _ = toys(lib)
        m = Affine()
        m.child = Affine()
        listing = dir(m)
        assert {"weight", "bias", "running", "scratch", "child", "forward"} <= set(listing)
        assert listing == sorted(listing)


def test_call_fast_path_runs_forward():
    """Without hooks, __call__ is forward (and grads flow as without a module)."""
    def scenario(lib):
        Affine, _, _, _ = toys(lib)
        m = Affine()
        x = lib.tensor([[1.0, -2.0]], requires_grad=True)
        out = m(x)
        out.sum().backward()
        return out, x.grad, m.weight.grad, m.bias.grad
    differential(scenario)


def test_linear_through_the_module_machinery():
    """``nn.Linear`` through the Module machinery: repr, state_dict, half."""

    def scenario(lib):
        lib.manual_seed(0)
        net = lib.nn.Sequential(lib.nn.Linear(3, 4), lib.nn.Linear(4, 2, bias=False))
        return repr(net), net.state_dict(), net.half().state_dict()
    differential(scenario)


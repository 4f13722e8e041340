"""torch.utils.flop_counter.FlopCounterMode, differential against real torch."""
import contextlib
import importlib
import io

import pytest

from .differential import differential, raised, returned


def flop_counter(lib):
    return importlib.import_module(lib.__name__ + ".utils.flop_counter")


def counts(counter):
    """get_flop_counts() with op packets named (they differ between libraries)."""
    return {module: {str(packet): n for packet, n in ops.items()}
            for module, ops in counter.get_flop_counts().items()}


def count_run(lib, body, **options):
    with flop_counter(lib).FlopCounterMode(display=False, **options) as counter:
        body(lib)
    return counts(counter), counter.get_total_flops()


def mlp(lib):
    lib.manual_seed(0)
    return lib.nn.Sequential(lib.nn.Linear(4, 6), lib.nn.ReLU(), lib.nn.Linear(6, 3))


def nested(lib):
    """Modules within modules, one tensor flowing through them."""
    lib.manual_seed(0)
    block = lib.nn.Sequential(lib.nn.Conv2d(2, 3, 3, padding=1), lib.nn.ReLU())
    return lib.nn.Sequential(block, lib.nn.Flatten(), lib.nn.Sequential(lib.nn.Linear(75, 4)))


def test_linear_forward():
    def body(lib):
        lib.nn.Linear(5, 7)(lib.randn(3, 5))
    assert returned(differential(lambda lib: count_run(lib, body)))[1] == 2 * 3 * 5 * 7


@pytest.mark.parametrize("input_grad", [False, True])
def test_mlp_forward_backward_per_module(input_grad):
    def body(lib):
        mlp(lib)(lib.randn(2, 4, requires_grad=input_grad)).sum().backward()
    outcome = returned(differential(lambda lib: count_run(lib, body)))
    assert {"Global", "Sequential", "Sequential.0", "Sequential.2"} <= set(outcome[0])


def test_bmm_baddbmm_mm_addmm():
    def body(lib):
        a, b = lib.randn(2, 3, 4), lib.randn(2, 4, 5)
        lib.bmm(a, b)
        lib.baddbmm(lib.randn(2, 3, 5), a, b)
        lib.mm(a[0], b[0])
        lib.addmm(lib.randn(5), a[1], b[1])
        lib.matmul(lib.randn(6, 4), b)
    differential(lambda lib: count_run(lib, body))


@pytest.mark.parametrize("transposed", [False, True])
def test_conv2d_forward_backward(transposed):
    def body(lib):
        lib.manual_seed(0)
        conv = (lib.nn.ConvTranspose2d(3, 2, 3, stride=2) if transposed
                else lib.nn.Conv2d(3, 2, 3, stride=2, padding=1))
        conv(lib.randn(2, 3, 7, 7, requires_grad=True)).sum().backward()
    assert returned(differential(lambda lib: count_run(lib, body)))[1] > 0


def test_sdpa():
    def body(lib):
        q = lib.randn(2, 3, 4, 5, requires_grad=True)
        lib.nn.functional.scaled_dot_product_attention(q, q, q, is_causal=True).sum().backward()
    differential(lambda lib: count_run(lib, body))


def test_nested_modules_and_repeat():
    def body(lib):
        model = nested(lib)
        for _ in range(2):
            model(lib.randn(2, 2, 5, 5, requires_grad=True)).sum().backward()
    outcome = returned(differential(lambda lib: count_run(lib, body)))
    assert "Sequential.0.0" in outcome[0] and "Sequential.2.0" in outcome[0]


def test_custom_mapping_overrides_and_adds():
    def body(lib):
        lib.mm(lib.randn(2, 3), lib.randn(3, 4))
        lib.randn(3, 3).mul(2)

    def run(lib):
        aten = lib.ops.aten
        mapping = {aten.mm: lambda a, b, *args, out_shape=None, **kw: a[0] + b[1],
                   aten.mul: lambda a, b, *args, out_shape=None, **kw: list(out_shape)[0]}
        return count_run(lib, body, custom_mapping=mapping)
    differential(run)


def test_register_flop_formula_and_errors():
    def run(lib):
        module = flop_counter(lib)
        packet = lib.ops.aten.cumsum
        try:
            module.register_flop_formula(packet)(lambda x, *a, out_shape=None, **k: x[0] * 7)
            result = count_run(lib, lambda lib: lib.randn(4, 2).cumsum(0))
            with pytest.raises(RuntimeError) as duplicate:
                module.register_flop_formula(packet)(lambda *a, **k: 0)
        finally:
            module.flop_registry.pop(packet, None)
        return result, str(duplicate.value)
    differential(run)
    outcome = differential(lambda lib: flop_counter(lib).register_flop_formula("mm")(len),
                           may_raise=True)
    raised(outcome, "ValueError")


def test_depth_display_and_mods_warning():
    def run(lib):
        model = mlp(lib)
        counter = flop_counter(lib).FlopCounterMode(model, depth=1, display=False)
        with counter:
            model(lib.randn(1, 4))
        return counter.depth, counts(counter)
    differential(run)


TABLE_BODIES = {
    "outside_modules": lambda lib: lib.mm(lib.randn(2, 2), lib.randn(2, 2)),
    "nested_backward": lambda lib: nested(lib)(lib.randn(2, 2, 5, 5, requires_grad=True))
    .sum().backward(),
    "nested_and_outside": lambda lib: (nested(lib)(lib.randn(2, 2, 5, 5)),
                                       lib.mm(lib.randn(3, 4), lib.randn(4, 5))),
    "nothing": lambda lib: lib.randn(3).relu(),
}


@pytest.mark.parametrize("depth", [None, 1, 2, 3])
@pytest.mark.parametrize("body", sorted(TABLE_BODIES))
def test_displayed_table_equals_pytorchs(body, depth):
    """The table printed on exit (tabulate), and get_table at other depths, are
    PyTorch's text."""
    def scenario(lib):
        printed = io.StringIO()
        options = {} if depth is None else {"depth": depth}
        with contextlib.redirect_stdout(printed):
            with flop_counter(lib).FlopCounterMode(**options) as counter:
                TABLE_BODIES[body](lib)
        return printed.getvalue(), [counter.get_table(d) for d in (None, 1, 2, 5)]
    printed, tables = returned(differential(scenario))
    assert printed.startswith("Module") and tables[0] in printed


def test_counts_cleared_on_reentry_and_no_leak_after_exit():
    def run(lib):
        counter = flop_counter(lib).FlopCounterMode(display=False)
        model = mlp(lib)
        with counter:
            model(lib.randn(2, 4)).sum().backward()
        with counter:
            lib.mm(lib.randn(2, 2), lib.randn(2, 2))
        model(lib.randn(2, 4)).sum().backward()      # after exit: not counted
        return counts(counter)
    differential(run)


def test_module_with_several_outputs_is_credited_as_in_pytorch():
    """A module returning two tensors enters the backward tracking once both
    outputs have their gradients (register_multi_grad_hook, mode "all")."""
    def scenario(lib):
        fc = __import__(f"{lib.__name__}.utils.flop_counter", fromlist=["x"])
        nn = lib.nn

        class Outer(nn.Module):
            def __init__(self):
                super().__init__()
                self.inner = nn.Linear(4, 3)
                self.conv = nn.Conv2d(1, 2, 3)

            def forward(self, x, img):
                return self.inner(x), self.conv(img)

        lib.manual_seed(0)
        model = Outer()
        x, img = lib.randn(2, 4, requires_grad=True), lib.randn(1, 1, 5, 5)
        with fc.FlopCounterMode(display=False) as counter:
            a, b = model(x, img)
            (a.sum() + b.sum()).backward()
        return {name: {str(op): n for op, n in ops.items()}
                for name, ops in counter.get_flop_counts().items()}
    differential(scenario)

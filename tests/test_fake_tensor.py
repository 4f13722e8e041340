"""FakeTensor and FakeTensorMode, against PyTorch's and against real runs.

* Acceptance: for every sample of every aten overload (``tests/opinfo.py``),
  the op on FakeTensors (inputs converted with ``from_tensor``) gives outputs
  with the shape, dtype, strides, storage offset, device and aliasing of the
  real CPU run -- or, for the ops whose result depends on the data (listed
  below with the reason), PyTorch's DynamicOutputShape / DataDependentOutput
  exception.
* Behaviour differentially against ``torch._subclasses.fake_tensor``:
  printing, factories, devices, views, in-place ops, autograd, constants,
  ``from_tensor``, the errors and their messages, custom ops' fake impls.
* Whole models (the example GPT, a CNN, an MLP, an LSTM, a Transformer
  encoder) built and trained one step under the mode give the shapes, dtypes
  and strides of a real run.
"""
from __future__ import annotations

import re

import pytest
import torch

import glasstorch as gt
from glasstorch._subclasses import fake_tensor as gt_fake
from glasstorch._tensor import NO_DATA_MESSAGE

from . import samples  # noqa: F401  (loads every sample)
from .differential import differential, node_name, raised
from .opinfo import EXEMPT, SAMPLES, Maker



def _fake(lib):
    return lib._subclasses.fake_tensor


def describe(value):
    """What a fake can be compared on: class, shape, dtype, strides, storage
    offset, device and autograd state (containers element by element)."""
    if isinstance(value, (torch.Tensor, gt.Tensor)):
        return ("tensor", type(value).__name__, tuple(value.shape), str(value.dtype),
                tuple(value.stride()), value.storage_offset(), str(value.device),
                value.requires_grad, node_name(value.grad_fn), value.is_leaf)
    if isinstance(value, (list, tuple)):
        return tuple(describe(v) for v in value)
    return value


# -- acceptance: every op sample, real vs fake ------------------------------------------

def _index_with_mask(args, kwargs):
    return any(i is not None and i.dtype in (gt.bool, gt.uint8) for i in args[1])


_READS_BATCH_SIZES = ("reads the values of batch_sizes (a CPU tensor) to size its loops; "
                      "PyTorch's fake fails too, on the data access")
# op -> (exception, message, why the output depends on the data, which samples (None: all))
DATA_DEPENDENT = {
    "aten::_local_scalar_dense": (gt_fake.DataDependentOutputException,
                                  "aten._local_scalar_dense.default",
                                  "the result is the tensor's value", None),
    "aten::item": (gt_fake.DataDependentOutputException, "aten._local_scalar_dense.default",
                   "the result is the tensor's value", None),
    "aten::is_nonzero": (gt_fake.DataDependentOutputException,
                         "aten._local_scalar_dense.default",
                         "the result is whether the tensor's value is nonzero", None),
    "aten::index.Tensor": (gt_fake.DynamicOutputShapeException, "aten.nonzero.default",
                           "a boolean mask selects as many elements as it has True values",
                           _index_with_mask),
    "aten::linalg_lstsq": (gt_fake.DynamicOutputShapeException, "aten.linalg_lstsq.default",
                           "gelsd and gelss give residuals only where every matrix has full "
                           "rank", None),
    "aten::linalg_lstsq.out": (gt_fake.DynamicOutputShapeException, "aten.linalg_lstsq.out",
                               "gelsd and gelss give residuals only where every matrix has full "
                               "rank", None),
    **{name: (gt_fake.DynamicOutputShapeException, f"aten._ctc_loss.{overload}",
              "log_alpha's last dim is twice the longest target, read from target_lengths",
              None)
       for name, overload in (("aten::_ctc_loss", "default"), ("aten::ctc_loss.IntList", "default"),
                              ("aten::_ctc_loss.Tensor", "Tensor"),
                              ("aten::ctc_loss.Tensor", "Tensor"))},
    "aten::_ctc_loss.Tensor_out": (
        RuntimeError, NO_DATA_MESSAGE,
        "the kernel reads the lengths; PyTorch's fake, finding no meta kernel, runs the CPU "
        "kernel on zero-filled stand-ins, a fallback glasstorch's fake does not have", None),
    "aten::_pack_padded_sequence": (gt_fake.DynamicOutputShapeException,
                                    "aten._pack_padded_sequence.default",
                                    "the packed length is the sum of the lengths", None),
    **{name: (gt_fake.DataDependentOutputException, "aten._local_scalar_dense.default",
              _READS_BATCH_SIZES, None)
       for name in ("aten::_pack_padded_sequence_backward", "aten::_pad_packed_sequence",
                    "aten::gru.data", "aten::lstm.data", "aten::rnn_relu.data",
                    "aten::rnn_tanh.data")},
    "aten::tensor_split.tensor_indices_or_sections": (
        gt_fake.DataDependentOutputException, "aten._local_scalar_dense.default",
        "a 0-dim sections tensor is read with item(), as in PyTorch's fake",
        lambda args, kwargs: args[1].dim() == 0),
    **{name: (RuntimeError, "high must be a scalar tensor and on CPU",
              "ATen reads high's value and only from a CPU tensor; PyTorch's fake fails "
              "the same way", None)
       for name in ("aten::randint_like.Tensor_generator",
                    "aten::randint_like.Tensor_generator_out")},
}
# Ops whose kernel reads an input's data for some samples: PyTorch's fake fails
# on the data access too, with ATen's message (op -> which samples).
READS_FAKE_DATA = {
    "aten::tensor_split.tensor_indices_or_sections": lambda args, kwargs: args[1].dim() == 1,
}


def _expected_failure(name, args, kwargs):
    """(exception, message) the op raises on these fakes, or None."""
    expected = DATA_DEPENDENT.get(name)
    if expected is not None and (expected[3] is None or expected[3](args, kwargs)):
        return expected[:2]
    reads = READS_FAKE_DATA.get(name)
    if reads is not None and reads(args, kwargs):
        return RuntimeError, NO_DATA_MESSAGE
    return None

CASES = [(name, s) for name in sorted(SAMPLES) for s in SAMPLES[name]]


def _op(lib, name):
    base, _, overload = name.split("::")[1].partition(".")
    return getattr(getattr(lib.ops.aten, base), overload or "default")


def _map(fn, value):
    if isinstance(value, gt.Tensor):
        return fn(value)
    if type(value) in (list, tuple):
        return type(value)(_map(fn, v) for v in value)
    if isinstance(value, dict):
        return {k: _map(fn, v) for k, v in value.items()}
    return value


def _flat(value):
    if isinstance(value, (list, tuple)):
        for v in value:
            yield from _flat(v)
    else:
        yield value


def _aliasing(outputs, inputs):
    """For each output tensor: which inputs it is, and which share its storage."""
    tensors = [t for t in _flat(inputs) if isinstance(t, gt.Tensor)]
    return [([i for i, t in enumerate(tensors) if out is t],
             [i for i, t in enumerate(tensors) if out.untyped_storage() is t.untyped_storage()])
            for out in _flat(outputs) if isinstance(out, gt.Tensor)]


@pytest.mark.parametrize("name,smp", CASES, ids=[s.name for _, s in CASES])
def test_fake_shapes_equal_real_shapes(name, smp):
    """One data seed: the real run, then the same inputs converted to fakes."""
    args, kwargs = smp.fn(Maker(gt, 7), gt)
    real = _op(gt, name)(*args, **kwargs)
    real = args[0] if smp.inplace else real
    real_aliasing = _aliasing(real, (args, kwargs))

    args, kwargs = smp.fn(Maker(gt, 7), gt)
    mode = gt_fake.FakeTensorMode()
    args, kwargs = _map(mode.from_tensor, (list(args), kwargs))
    expected = _expected_failure(name, args, kwargs)
    if expected is not None:
        with pytest.raises(expected[0]) as info, mode:
            _op(gt, name)(*args, **kwargs)
        assert str(info.value) == expected[1]
        return
    with mode:
        fake = _op(gt, name)(*args, **kwargs)
    fake = args[0] if smp.inplace else fake
    ours, theirs = list(_flat(fake)), list(_flat(real))
    assert len(ours) == len(theirs)
    for f, r in zip(ours, theirs):
        if isinstance(r, gt.Tensor):
            assert type(f) is gt_fake.FakeTensor and f.fake_mode is mode
            assert (f.shape, f.dtype, f.device, f.storage_offset()) == \
                (r.shape, r.dtype, r.device, r.storage_offset())
            if r.numel() > 1:
                assert f.stride() == r.stride()
        else:
            assert f == r or (f != f and r != r)     # (nan)
    assert _aliasing(fake, (args, kwargs)) == real_aliasing


def test_every_data_dependent_exception_is_listed_for_a_real_op():
    assert all(name in SAMPLES for name in DATA_DEPENDENT)


# Ops with no samples (no Meta kernel: see tests/opinfo.py EXEMPT) raise PyTorch's
# exception under the fake mode (nonzero, unique, masked_select ... as users call them).
EXEMPT_CALLS = {
    "aten::nonzero": lambda lib, x: lib.nonzero(x),
    "aten::nonzero.out": lambda lib, x: lib.nonzero(x, out=lib.empty(0, dtype=lib.long)),
    "aten::masked_select": lambda lib, x: lib.masked_select(x, x > 0),
    "aten::masked_select.out": lambda lib, x: lib.masked_select(x, x > 0, out=lib.empty(0)),
    "aten::_unique2": lambda lib, x: lib.unique(x),
    "aten::unique_dim": lambda lib, x: lib.unique(x, dim=0),
    "aten::bincount": lambda lib, x: lib.bincount(x.long().abs()),
    "aten::equal": lambda lib, x: lib.equal(x, x),
    "aten::argwhere": lambda lib, x: lib.argwhere(x),
    "aten::combinations": lambda lib, x: lib.combinations(x[0]),
    "aten::unique_consecutive": lambda lib, x: lib.unique_consecutive(x),
    "aten::istft": lambda lib, x: lib.istft(lib.ones(5, 3, dtype=lib.complex64), n_fft=8,
                                            window=lib.ones(8)),
    "aten::allclose": lambda lib, x: lib.allclose(x, x),
}


def test_exempt_ops_are_the_data_dependent_ones():
    assert set(EXEMPT_CALLS) == {name for name, why in EXEMPT.items() if "data-dependent" in why}


@pytest.mark.parametrize("name", sorted(EXEMPT_CALLS))
def test_ops_without_meta_raise_pytorchs_exception(name):
    def scenario(lib):
        with _fake(lib).FakeTensorMode():
            EXEMPT_CALLS[name](lib, lib.randn(3, 2) * 3)
    raised(differential(scenario, may_raise=True))


# -- behaviour, differentially against PyTorch ---------------------------------------------

def test_factories_make_fakes_that_print_like_pytorch():
    def scenario(lib):
        with _fake(lib).FakeTensorMode() as mode:
            x = lib.randn(2, 3)
            made = [x, lib.zeros(3, dtype=lib.int64), lib.zeros(0), lib.tensor(3.0),
                    lib.ones(2, 2, dtype=lib.float64, requires_grad=True), lib.arange(5),
                    lib.full((2,), 7), lib.empty(2, 3).t()]
            return ([repr(t) for t in made], describe(made), x.fake_mode is mode,
                    str(x.fake_device), x.untyped_storage().nbytes(),
                    str(x.untyped_storage().device), x.is_cpu, x.is_meta)
    differential(scenario)


def test_ops_views_and_inplace_ops_update_the_fakes():
    def scenario(lib):
        with _fake(lib).FakeTensorMode():
            x = lib.randn(2, 3)
            v = x.t()
            w = lib.empty(4)
            w.resize_(2, 5)
            shape_after_resize = describe(w)
            w.transpose_(0, 1)
            out = lib.empty(0)
            lib.add(lib.ones(3), 1, out=out)
            s = x[:, 1:]
            s.mul_(2)
            return (describe([x + 1, x @ x.t(), v, x.sum(1), x.max(1), x.split(1), x.unbind(1),
                              x.to(lib.float16), x.double() * x, x.expand(4, 2, 3)]),
                    v._base is x, v.untyped_storage() is x.untyped_storage(),
                    shape_after_resize, describe([w, out, s]), s._version, x._version)
    differential(scenario)


def test_autograd_runs_on_fakes():
    def scenario(lib):
        with _fake(lib).FakeTensorMode():
            x = lib.randn(2, 3, dtype=lib.float64, requires_grad=True)
            y = (x * 2).sum()
            y.backward()
            a = lib.randn(3, 4, requires_grad=True)
            b = a * 1
            b[0].mul_(2)                                  # in place on a view: CopySlices
            b.sum().backward()
            layer = lib.nn.Linear(3, 2)
            loss = layer(lib.randn(5, 3)).relu().mean()
            loss.backward()
            return (describe([x, y, x.grad, b, a.grad, loss, layer.weight.grad,
                              layer.bias.grad]), repr(layer.weight))
    differential(scenario)


@pytest.mark.parametrize("case", [
    "item_of_many", "item", "bool", "int", "float", "tolist", "mask_index",
    "repeat_interleave", "numpy", "one_hot_inferred", "array"])
def test_data_dependent_operations_raise_pytorchs_errors(case):
    def scenario(lib):
        with _fake(lib).FakeTensorMode():
            x = lib.randn(3)
            calls = {
                "item_of_many": lambda: x.item(), "item": lambda: x.sum().item(),
                "bool": lambda: bool(x.sum() > 0), "int": lambda: int(x[0]),
                "float": lambda: float(x.max()), "tolist": lambda: x.tolist(),
                "mask_index": lambda: x[x > 0],
                "repeat_interleave": lambda: x.repeat_interleave(lib.tensor([1, 2, 3])),
                "numpy": lambda: x.numpy(),
                "one_hot_inferred": lambda: lib.nn.functional.one_hot(lib.randint(0, 3, (3,))),
                "array": lambda: __import__("numpy").asarray(x),
            }
            calls[case]()
    raised(differential(scenario, may_raise=True))


def test_what_does_not_depend_on_data_still_runs():
    def scenario(lib):
        with _fake(lib).FakeTensorMode():
            x = lib.randn(3)
            return describe([x.repeat_interleave(lib.tensor([1, 2, 3]), output_size=6),
                             x[lib.tensor([0, 2])], x.any(), lib.randperm(5),
                             lib.multinomial(x.abs(), 2),
                             lib.nn.functional.one_hot(lib.randint(0, 3, (3,)), 4)])
    differential(scenario)


def test_small_tensors_from_data_stay_known():
    """``torch.tensor`` of one element is a constant: its value survives ops on
    constants, and ``item()`` returns it; a write that mixes in unknown values
    forgets it."""
    def scenario(lib):
        with _fake(lib).FakeTensorMode():
            t = lib.tensor(3.0)
            u = t * 2
            known = (repr(t.constant), u.item(), bool(u), repr(lib.tensor([1.0, 2.0]).constant))
            t.add_(lib.randn(()))
            try:
                t.item()
            except Exception as e:               # noqa: BLE001
                return known, type(e).__name__, str(e), t.constant
    differential(scenario)


def test_real_tensors_are_refused_or_converted():
    def mixing(lib):
        real = lib.randn(2, 3)
        with _fake(lib).FakeTensorMode():
            lib.randn(2, 3) + real
    raised(differential(mixing, may_raise=True), "AssertionError")

    def allowed(lib):
        real = lib.randn(2, 3)
        with _fake(lib).FakeTensorMode(allow_non_fake_inputs=True) as mode:
            out = lib.ones(3) + real
            return describe(out), mode.from_tensor(real) is mode.from_tensor(real)
    differential(allowed)

    def inplace_view_on_real(lib):
        real = lib.randn(2, 3)
        with _fake(lib).FakeTensorMode(allow_non_fake_inputs=True):
            real.t_()
    raised(differential(inplace_view_on_real, may_raise=True), "AssertionError")


def without_addresses(outcome):
    """An outcome with the objects its messages name (``<... at 0x7f...>``) unnamed."""
    strip = re.compile(r"<(torch|glasstorch)\.([\w.]+) object at 0x[0-9a-f]+>")
    return tuple(strip.sub(r"<\2>", x) if isinstance(x, str) else x for x in outcome)


def test_mixing_two_fake_modes_is_refused():
    def scenario(lib):
        fake = _fake(lib).FakeTensorMode().from_tensor(lib.randn(2))
        with _fake(lib).FakeTensorMode():
            lib.randn(2) + fake
    message = raised(differential(scenario, may_raise=True, normalize=without_addresses),
                     "AssertionError")
    assert message.startswith("Mixing fake modes NYI x.fake_mode=")


def test_fake_devices():
    def scenario(lib):
        with _fake(lib).FakeTensorMode():
            c = lib.zeros(2, 3, device="cuda")
            meta = lib.zeros(2, device="meta")
            result = describe([c, c + lib.tensor(1.0), c.sum(), c.cpu(), meta, meta + 1])
            return repr(c), repr(meta), result, c.is_cuda, str(c.device)
    differential(scenario)

    def mismatch(lib):
        with _fake(lib).FakeTensorMode():
            lib.zeros(2, 3, device="cuda") + lib.ones(3)
    raised(differential(mismatch, may_raise=True), "FakeTensorDeviceMismatchError")


def test_from_tensor_keeps_views_parameters_and_autograd_state():
    def scenario(lib):
        mode = _fake(lib).FakeTensorMode()
        a = lib.randn(4, 5)
        b = a[1:].t()
        fa, fb = mode.from_tensor(a), mode.from_tensor(b)
        fresh = _fake(lib).FakeTensorMode().from_tensor(b)     # its base converted too
        p = lib.nn.Parameter(lib.randn(3))
        fp = mode.from_tensor(p)
        leaf = lib.randn(3, requires_grad=True)
        leaf.grad = lib.ones(3)
        nonleaf = mode.from_tensor(leaf * 2)
        base = lib.randn(3, 4, requires_grad=True)
        row = mode.from_tensor(base[1])
        with mode:
            row.sum().backward()
            try:
                nonleaf.sum().backward()
            except RuntimeError as e:
                refused = str(e)
        x = lib.zeros(4)
        y = x.view(1, 4)
        y.requires_grad_()
        fy = mode.from_tensor(y)
        return (fb._base is fa, fb.untyped_storage() is fa.untyped_storage(),
                mode.from_tensor(a) is fa,
                describe([fa, fb, fresh, fresh._base, fp, nonleaf, row, fy, fy._base,
                          mode.from_tensor(leaf).grad, mode.from_tensor(base).grad,
                          mode.from_tensor(lib.randn(2).to(lib.bfloat16)),
                          mode.from_tensor(lib.randn(2, device="meta"))]),
                repr(fp), isinstance(fp, lib.nn.Parameter), nonleaf.grad_fn.name(),
                [node_name(n) for n, _ in nonleaf.grad_fn.next_functions], refused,
                row._base is mode.from_tensor(base), mode.from_tensor(lib.tensor(3)).constant)
    differential(scenario)


def test_ops_on_fakes_outside_the_mode_run_under_it():
    def scenario(lib):
        mode = _fake(lib).FakeTensorMode()
        fa = mode.from_tensor(lib.randn(4, 5))
        z = fa + fa
        return describe([z, fa.sum(), fa.data, fa.detach()]), z.fake_mode is mode
    differential(scenario)


def test_a_dispatch_mode_inside_the_fake_mode_sees_fakes():
    def scenario(lib):
        log = []

        class Logger(lib.utils._python_dispatch.TorchDispatchMode):
            def __torch_dispatch__(self, func, types, args=(), kwargs=None):
                log.append((str(func), [type(a).__name__ for a in args
                                        if isinstance(a, lib.Tensor)]))
                return func(*args, **(kwargs or {}))

        mode = _fake(lib).FakeTensorMode()
        with mode, Logger():
            x = lib.randn(2)
            y = x + 1
        with Logger():
            z = mode.from_tensor(lib.randn(2)) * 2
        return log, describe([y, z])
    differential(scenario)


def test_custom_op_runs_its_fake_impl_on_fakes():
    def scenario(lib):
        seen = []
        # schemas spelled out: this module's annotations are strings, which
        # custom_op cannot resolve to a local ``lib.Tensor``

        @lib.library.custom_op("fakelib::scaled", mutates_args=(),
                               schema="(Tensor x, Tensor y) -> Tensor")
        def scaled(x, y):
            return x * 2 + y

        @scaled.register_fake
        def _(x, y):
            seen.append((type(x).__name__, str(x.device), tuple(x.shape)))
            return lib.empty_like(x)

        scaled.register_autograd(lambda ctx, g: (g * 2, g),
                                 setup_context=lambda ctx, inputs, output: None)

        @lib.library.custom_op("fakelib::unfaked", mutates_args=(),
                               schema="(Tensor x) -> Tensor")
        def unfaked(x):
            return x.sin()

        with _fake(lib).FakeTensorMode():
            a = lib.randn(3, requires_grad=True)
            out = scaled(a, a)
            out.sum().backward()
            try:
                unfaked(a)
            except RuntimeError as e:
                refused = str(e)
        return seen, describe([out, a.grad]), refused
    differential(scenario)


# -- whole models: fake runs against real runs ----------------------------------------------

def _same_metadata(real, fake):
    """Shapes, dtypes, strides and devices of ``real`` (tensors in nested
    containers) equal ``fake``'s, whose tensors are all FakeTensors."""
    real, fake = list(_flat(real)), list(_flat(fake))
    assert len(real) == len(fake)
    for r, f in zip(real, fake):
        assert type(f) is gt_fake.FakeTensor
        assert (f.shape, f.dtype, f.stride(), f.device, f.requires_grad) == \
            (r.shape, r.dtype, r.stride(), r.device, r.requires_grad)


def _train_step(build, inputs):
    """Build a model, run forward, backward and an Adam step; what it produced."""
    model = build()
    out = model(*inputs())
    loss = sum(t.float().mean() for t in _flat(out) if t.is_floating_point())
    loss.backward()
    opt = gt.optim.Adam(model.parameters(), lr=0.01)
    opt.step()
    grads = [p.grad for p in model.parameters()]
    return out, grads, list(model.parameters()), list(model.buffers())


MODELS = {
    "cnn": (lambda: gt.nn.Sequential(
        gt.nn.Conv2d(3, 8, 3, padding=1), gt.nn.BatchNorm2d(8), gt.nn.ReLU(), gt.nn.MaxPool2d(2),
        gt.nn.Conv2d(8, 4, 3, stride=2), gt.nn.AdaptiveAvgPool2d(1), gt.nn.Flatten(),
        gt.nn.Linear(4, 10)), lambda: (gt.randn(2, 3, 16, 16),)),
    "mlp": (lambda: gt.nn.Sequential(gt.nn.Linear(5, 7), gt.nn.Tanh(), gt.nn.Dropout(0.1),
                                     gt.nn.Linear(7, 2), gt.nn.LogSoftmax(-1)),
            lambda: (gt.randn(4, 5),)),
    "lstm": (lambda: gt.nn.LSTM(4, 6, num_layers=2, batch_first=True),
             lambda: (gt.randn(2, 3, 4),)),
    "transformer_encoder": (lambda: gt.nn.TransformerEncoderLayer(16, 4, 32, batch_first=True),
                            lambda: (gt.randn(2, 5, 16),)),
}


@pytest.mark.parametrize("name", sorted(MODELS))
def test_models_built_and_trained_under_the_mode_match_real_runs(name):
    build, inputs = MODELS[name]
    real = _train_step(build, inputs)
    with gt_fake.FakeTensorMode():
        fake = _train_step(build, inputs)
    for r, f in zip(real, fake):
        _same_metadata(r, f)


def test_the_example_gpt_under_the_mode_matches_a_real_run():
    from examples.dual import load_example
    gpt = load_example("gpt.py", "glasstorch")
    config = gpt.GPTConfig(vocab_size=65, block_size=16, n_layer=2, n_head=4, n_embd=32)

    def step():
        model = gpt.GPT(config)
        idx = gt.randint(0, 65, (3, 16))
        logits, loss = model(idx, idx)
        loss.backward()
        optimizer = model.configure_optimizers(0.1, 1e-3, (0.9, 0.95))
        optimizer.step()
        return logits, loss, [p.grad for p in model.parameters()], list(model.parameters())

    real = step()
    with gt_fake.FakeTensorMode():
        fake = step()
    for r, f in zip(real, fake):
        _same_metadata(r, f)


def test_a_real_model_runs_on_fake_inputs():
    """``allow_non_fake_inputs``: the real parameters are converted once, and the
    gradients the real parameters receive are fakes."""
    layer = gt.nn.Linear(3, 2)
    with gt_fake.FakeTensorMode(allow_non_fake_inputs=True) as mode:
        out = layer(gt.randn(4, 3))
        out.sum().backward()
    assert describe(out)[1:] == ("FakeTensor",) + describe(layer(gt.randn(4, 3)))[2:]
    assert type(layer.weight.grad) is gt_fake.FakeTensor
    assert mode.from_tensor(layer.weight) is mode.from_tensor(layer.weight)


def test_the_fake_tensor_api():
    def scenario(lib):
        ft = _fake(lib)
        mode = ft.FakeTensorMode()
        made = ft.FakeTensor(mode, lib.empty(2, 3, device="meta"), "cpu")
        cuda = ft.FakeTensor(mode, lib.empty(2, 3, device="meta", requires_grad=True),
                             lib.device("cuda"))
        with mode:
            with ft.unset_fake_temporarily() as popped:
                real = lib.randn(2)
        moved = mode.fake_tensor_converter.from_meta_and_device(
            mode, lib.empty(4, device="meta"), lib.device("cuda"))
        made_fake_device = repr(made)
        made.fake_device = lib.device("cuda")
        return (made_fake_device, repr(made), made.is_cuda, repr(cuda), made.fake_mode is mode,
                type(real).__name__, popped is mode, ft.is_fake(made), ft.is_fake(real),
                ft.maybe_get_fake_mode(made) is mode, ft.maybe_get_fake_mode(1), repr(moved),
                repr(ft.DataDependentOutputException(lib.ops.aten.equal.default)),
                ft.DynamicOutputShapeException(lib.ops.aten.nonzero.default).args[0].__name__,
                ft.FakeTensorMode.is_infra_mode())
    differential(scenario)

    def not_meta(lib):
        ft = _fake(lib)
        ft.FakeTensor(ft.FakeTensorMode(), lib.empty(2), "cpu")
    raised(differential(not_meta, may_raise=True), "AssertionError")

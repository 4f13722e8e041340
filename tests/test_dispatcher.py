"""The dispatcher against PyTorch's: table filling from alias keys, fallthrough,
redispatch, errors, traces, and dumps."""
import re
import itertools

import pytest
from hypothesis import given, strategies as st

import glasstorch
from glasstorch._C import DispatchKey, DispatchKeySet
from glasstorch._dispatcher import dispatch_trace
from glasstorch.library import Library

_counter = itertools.count()
KEYS_TO_TRY = ["CPU", "Meta", "CompositeImplicitAutograd", "CompositeExplicitAutograd",
               "CompositeExplicitAutogradNonFunctional", "Autograd", "AutogradCPU"]
CHECKED = ["Undefined", "CPU", "CUDA", "Meta", "QuantizedCPU", "SparseCPU", "AutogradOther",
           "AutogradCPU", "AutogradCUDA", "AutogradMeta", "AutogradNestedTensor"]


def _labels(dump):
    """key -> label ('kernel', 'math kernel', ...) from a _dispatch_dump_table text."""
    out = {}
    for line in dump.splitlines():
        m = re.match(r"(\w+): .*\[(.+)\]$", line)
        if m:
            out[m.group(1)] = m.group(2)
    return out


@given(st.sets(st.sampled_from(KEYS_TO_TRY), min_size=1))
def test_table_filling_matches_pytorch(torch, keys):
    """For any set of registrations, each runtime key resolves to the same kind
    of entry as in PyTorch (OperatorEntry::computeDispatchTableEntry)."""
    ns = f"gt_table_{next(_counter)}"
    theirs_lib = torch.library.Library(ns, "DEF")
    ours_lib = Library(ns, "DEF")
    try:
        errors = []
        for lib in (theirs_lib, ours_lib):
            lib.define("f(Tensor x) -> Tensor")
            try:
                for key in sorted(keys):
                    lib.impl("f", lambda x: x, key)
                errors.append(None)
            except RuntimeError as e:    # Meta next to CompositeImplicitAutograd is refused
                errors.append(str(e))
        assert errors[0] == errors[1]
        theirs = _labels(torch._C._dispatch_dump_table(f"{ns}::f"))
        ours = _labels(glasstorch._C._dispatch_dump_table(f"{ns}::f"))
        for key in CHECKED:
            t, o = theirs.get(key), ours.get(key)
            # fallbacks differ in which subsystems exist; only their presence matters
            if t == "backend fallback" or o == "backend fallback":
                continue
            assert o == t, f"{key}: ours {o}, PyTorch {t} (registered: {sorted(keys)})"
    finally:
        ours_lib._destroy()


def test_tensor_key_sets(torch):
    x = glasstorch.tensor([1.0, 2.0])
    assert str(glasstorch._C._dispatch_keys(x)) == str(torch._C._dispatch_keys(torch.tensor([1.0])))
    assert str(x._dispatch_key_set()) == "DispatchKeySet(CPU, ADInplaceOrView, AutogradCPU, AutocastCPU)"


def test_tls_sets_match_pytorch(torch):
    assert str(glasstorch._C._dispatch_tls_local_include_set()) == \
        str(torch._C._dispatch_tls_local_include_set())
    assert str(glasstorch._C._dispatch_tls_local_exclude_set()) == \
        str(torch._C._dispatch_tls_local_exclude_set())


@pytest.mark.parametrize("key", ["AutogradCPU", "ADInplaceOrView", "Python", "CPU", "AutocastCPU",
                                 "BackendSelect", "Functionalize", "PythonTLSSnapshot"])
def test_full_after_matches_pytorch(torch, key):
    ours = glasstorch._C._dispatch_keyset_full_after(DispatchKey[key])
    theirs = torch._C._dispatch_keyset_full_after(getattr(torch._C.DispatchKey, key))
    assert str(ours) == str(theirs)


def test_priority_order():
    ks = DispatchKeySet(DispatchKey.CPU) | DispatchKeySet(DispatchKey.AutogradCPU) | \
        DispatchKeySet(DispatchKey.Python) | DispatchKeySet(DispatchKey.Functionalize)
    order = []
    while ks.repr & ~0xFFFF:
        top = ks.highestPriorityTypeId()
        order.append(top.name)
        ks = ks.remove(top)
    assert order == ["AutogradCPU", "Functionalize", "Python", "CPU"]


def test_meta_beats_cuda_beats_cpu():
    ks = DispatchKeySet(DispatchKey.CPU) | DispatchKeySet(DispatchKey.CUDA)
    assert ks.highestPriorityTypeId() == DispatchKey.CUDA
    assert (ks | DispatchKeySet(DispatchKey.Meta)).highestPriorityTypeId() == DispatchKey.Meta


def test_exclude_guard_changes_dispatch():
    lib = Library("gt_guard", "DEF")
    try:
        lib.define("f(Tensor x) -> Tensor")
        lib.impl("f", lambda x: "cpu", "CPU")
        lib.impl("f", lambda x: "autograd", "AutogradCPU")
        x = glasstorch.tensor([1.0])
        assert glasstorch.ops.gt_guard.f(x) == "autograd"
        with glasstorch._C._ExcludeDispatchKeyGuard(DispatchKeySet(DispatchKey.AutogradCPU)):
            assert glasstorch.ops.gt_guard.f(x) == "cpu"
        assert glasstorch.ops.gt_guard.f(x) == "autograd"
    finally:
        lib._destroy()


def test_redispatch_below_own_key_and_trace():
    lib = Library("gt_redispatch", "DEF")
    try:
        lib.define("f(Tensor x) -> Tensor")
        op = None

        def autograd_kernel(ks, x):
            below = ks & glasstorch._C._dispatch_keyset_full_after(DispatchKey.AutogradCPU).repr
            return op.redispatch(below, x) + 1

        lib.impl("f", lambda x: x * 2, "CPU")
        lib.impl("f", autograd_kernel, "AutogradCPU", with_keyset=True)
        op = glasstorch.ops.gt_redispatch.f.default
        x = glasstorch.tensor([1.0, 2.0])   # outside the trace: torch.tensor dispatches too
        with dispatch_trace() as trace:
            out = op(x)
        assert out.tolist() == [3.0, 5.0]
        lines = str(trace).splitlines()
        assert lines[0] == "[call] op=[gt_redispatch::f], key=[AutogradCPU]"
        assert lines[1] == " [redispatch] op=[gt_redispatch::f], key=[CPU]"
        # x * 2 inside the CPU kernel dispatches afresh (mul has an autograd kernel)
        assert "[call] op=[aten::mul.Tensor], key=[AutogradCPU]" in lines[2]
        assert "[redispatch] op=[aten::mul.Tensor], key=[CPU]" in lines[3]
    finally:
        lib._destroy()


def test_missing_kernel_error_matches_pytorch(torch):
    ours_lib, theirs_lib = Library("gt_missing", "DEF"), torch.library.Library("gt_missing", "DEF")
    try:
        for lib in (ours_lib, theirs_lib):
            lib.define("foo(Tensor x) -> Tensor")
            lib.impl("foo", lambda x: x, "Meta")
        with pytest.raises(NotImplementedError) as ours:
            glasstorch.ops.gt_missing.foo(glasstorch.tensor([1.0]))
        with pytest.raises(NotImplementedError) as theirs:
            torch.ops.gt_missing.foo(torch.tensor([1.0]))
        head = "Could not run 'gt_missing::foo' with arguments from the 'CPU' backend."
        assert str(ours.value).startswith(head) and str(theirs.value).startswith(head)
        assert "'gt_missing::foo' is only available for these backends: [Meta" in str(ours.value)
    finally:
        ours_lib._destroy()


def test_fallthrough_kernel_skips_key():
    lib = Library("gt_fallthrough", "DEF")
    try:
        lib.define("f(Tensor x) -> Tensor")
        lib.impl("f", lambda x: "cpu", "CPU")
        lib.impl("f", glasstorch.library.fallthrough_kernel, "AutogradCPU")
        assert glasstorch.ops.gt_fallthrough.f(glasstorch.tensor([1.0])) == "cpu"
    finally:
        lib._destroy()


def test_boxed_fallback_sees_every_op():
    seen = []

    def fallback(op, ks, args, kwargs):
        seen.append(op.__name__)
        below = ks & glasstorch._C._dispatch_keyset_full_after(DispatchKey.AutogradCPU).repr
        return op.redispatch(below, *args, **kwargs)

    lib = Library("_", "IMPL")
    try:
        lib.fallback(fallback, "AutogradCPU")
        x = glasstorch.tensor([1.0])
        (x + x).eq(x).logical_not()
    finally:
        lib._destroy()
    # ops with their own autograd kernel (add) don't reach the fallback
    assert seen == ["eq.Tensor", "logical_not.default"]
    assert (glasstorch.tensor([2.0]) * 2).tolist() == [4.0]   # fallthrough restored


def test_library_errors(torch):
    with pytest.raises(ValueError, match="Unsupported kind: FOO"):
        Library("gt_x", "FOO")
    lib = Library("gt_dup", "DEF")
    try:
        with pytest.raises(RuntimeError, match="Only a single TORCH_LIBRARY"):
            Library("gt_dup", "DEF")
        lib.define("f(Tensor x) -> Tensor")
        with pytest.raises(RuntimeError, match="same name and overload name multiple times"):
            lib.define("f(Tensor x) -> Tensor")
        with pytest.raises(RuntimeError, match="Cannot define an operator inside of a TORCH_LIBRARY_IMPL"):
            Library("gt_dup", "IMPL").define("g(Tensor x) -> Tensor")
    finally:
        lib._destroy()


def test_op_overload_objects(torch):
    ours, theirs = glasstorch.ops.aten.add.Tensor, torch.ops.aten.add.Tensor
    assert ours.__name__ == theirs.__name__ == "add.Tensor"
    assert repr(ours) == repr(theirs)
    assert str(ours) == str(theirs)
    assert ours.name() == theirs.name()
    assert str(ours._schema) == str(theirs._schema)
    assert ours.overloadpacket is glasstorch.ops.aten.add
    assert repr(glasstorch.ops.aten.add) == repr(torch.ops.aten.add)
    assert glasstorch.ops.aten.add.default if "default" in glasstorch.ops.aten.add.overloads() else True
    with pytest.raises(AttributeError, match="has no overload name 'nope'"):
        glasstorch.ops.aten.add.nope
    with pytest.raises(AttributeError, match="object has no attribute 'nope'"):
        glasstorch.ops.aten.nope


def test_dispatch_dump_lists_registrations(torch):
    text = glasstorch._C._dispatch_dump("aten::add.Tensor")
    lines = text.splitlines()
    assert lines[0] == "name: aten::add.Tensor"
    assert lines[1] == "schema: " + str(torch.ops.aten.add.Tensor._schema)
    assert lines[3] == "alias analysis kind: FROM_SCHEMA"
    assert any(line.startswith("CPU: registered at") for line in lines)
    assert any(line.startswith("Meta: registered at") for line in lines)
    table = glasstorch._C._dispatch_dump_table("aten::add.Tensor")
    assert "AutogradCPU: registered at derivatives.yaml:" in table
    assert "[autograd kernel]" in table and "CPU: registered" in table
    table = glasstorch._C._dispatch_dump_table("aten::eq.Tensor")
    assert "AutogradCPU: fallthrough" in table


@pytest.mark.parametrize("name", ["aten::add.Tensor", "aten::matmul", "aten::convolution_backward",
                                  "aten::trace", "aten::logit"])
def test_dispatch_dump_names_each_kernels_code(name):
    """Each kernel line ends with the file and line of its code (a structured
    op's meta rule and impl), and the autograd line names its derivatives.yaml
    entry: the lines really are those definitions."""
    import inspect
    import os
    import re
    root = os.path.dirname(os.path.dirname(glasstorch.__file__))
    text = glasstorch._C._dispatch_dump(name)
    sites = re.findall(r"(kernel|meta rule|impl) (glasstorch/[\w/]+\.py):(\d+)", text)
    assert sites, text
    for role, path, line in sites:
        with open(os.path.join(root, path)) as f:
            source = f.read().splitlines()[int(line) - 1:int(line) + 3]
        assert any(l.lstrip().startswith("def ") for l in source), (role, path, line, source)
    autograd = [l for l in text.splitlines() if l.startswith("Autograd")]
    if "convolution_backward" in name or "add" in name or "trace" in name or "logit" in name:
        yaml_line = int(re.search(r"derivatives.yaml:(\d+)", autograd[0]).group(1))
        path = os.path.join(os.path.dirname(inspect.getfile(glasstorch._ops.registry)),
                            "derivatives.yaml")
        with open(path) as f:
            entry = f.read().splitlines()[yaml_line - 1]
        assert entry.startswith("- name: " + name.split("::")[1].split(".")[0]), entry


def test_wrong_argument_types_are_type_errors(torch):
    x = glasstorch.tensor([1.0])
    with pytest.raises(TypeError, match=r"add\(\): argument 'other' \(position 2\) must be Tensor, not str"):
        glasstorch.add(x, "a")
    with pytest.raises(TypeError):
        x + "a"


def test_packet_call_picks_overload_or_says_none_matched(torch):
    x = glasstorch.ones(2, 2)
    assert glasstorch.ops.aten.sum(x, [0]).tolist() == [2.0, 2.0]      # sum.dim_IntList
    with pytest.raises(RuntimeError) as ours:
        glasstorch.ops.aten.add(x, "a")
    with pytest.raises(RuntimeError) as theirs:
        torch.ops.aten.add(torch.ones(2, 2), "a")
    head = "Overloaded torch operator invoked from Python failed to match any schema:"
    assert str(ours.value).startswith(head) and str(theirs.value).startswith(head)


def test_has_kernel_for_dispatch_key_means_registered_there(torch):
    """``OpOverload.has_kernel_for_dispatch_key``: a kernel registered at exactly
    that key; an alias's kernel filling the slot doesn't count (as in PyTorch)."""
    answers = []
    for lib in (glasstorch, torch):
        library = lib.library.Library("gt_has_kernel", "DEF")
        try:
            library.define("f(Tensor x) -> Tensor")
            library.impl("f", lambda x: x + 1, "CompositeExplicitAutograd")
            library.impl("f", lambda x: x + 2, "Meta")
            op = lib.ops.gt_has_kernel.f.default
            answers.append([op.has_kernel_for_dispatch_key(k) for k in
                            ("CPU", "Meta", "CompositeExplicitAutograd", "AutogradCPU")])
        finally:
            library._destroy()
    assert answers[0] == answers[1]

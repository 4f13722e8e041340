"""c10 pieces against PyTorch: dtypes and promotion, devices, key sets, storage."""
import subprocess
import sys

import pytest
from hypothesis import given, strategies as st

import glasstorch
from glasstorch._core import dtype as dt
from glasstorch._core.allocator import cpu_allocator

DTYPES = [d.name for d in dt.ALL_DTYPES]


def _pair(torch, name):
    return getattr(glasstorch, name), getattr(torch, name)


def _promoted(lib, a, b):
    """promote_types' answer, or its error (uint16/32/64 promote with few types)."""
    try:
        return str(lib.promote_types(a, b))
    except RuntimeError as e:
        return str(e)


@pytest.mark.parametrize("a", DTYPES)
def test_promote_types_and_can_cast_match(torch, a):
    for b in DTYPES:
        ga, ta = _pair(torch, a)
        gb, tb = _pair(torch, b)
        assert _promoted(glasstorch, ga, gb) == _promoted(torch, ta, tb), (a, b)
        assert glasstorch.can_cast(ga, gb) == torch.can_cast(ta, tb), (a, b)


@pytest.mark.parametrize("name", DTYPES)
def test_dtype_attributes(torch, name):
    ours, theirs = _pair(torch, name)
    assert repr(ours) == repr(theirs)
    assert ours.is_floating_point == theirs.is_floating_point
    assert ours.is_complex == theirs.is_complex
    assert ours.is_signed == theirs.is_signed
    assert ours.itemsize == theirs.itemsize


def test_dtype_aliases(torch):
    for alias in ["float", "double", "half", "long", "int", "short", "cfloat", "cdouble", "bool"]:
        assert repr(getattr(glasstorch, alias)) == repr(getattr(torch, alias))


_operand = st.one_of(
    st.tuples(st.just("tensor"), st.sampled_from(DTYPES), st.integers(0, 2)),
    st.tuples(st.just("scalar"), st.sampled_from(["bool", "int", "float", "complex"]), st.just(0)),
)


def _build(lib, spec):
    kind, name, ndim = spec
    if kind == "scalar":
        return {"bool": True, "int": 3, "float": 1.5, "complex": 1j}[name]
    data = [1, 0, 1, 1][: [1, 2, 4][ndim]]
    data = data[0] if ndim == 0 else (data if ndim == 1 else [data[:2], data[2:]])
    return lib.tensor(data, dtype=getattr(lib, name))


@given(_operand, _operand)
def test_result_type_tiers_match(torch, a, b):
    """Dimensioned tensors > zero-dim tensors > Python scalars, by category."""
    if a[0] == "scalar":
        a, b = b, a
    if a[0] == "scalar":
        a = ("tensor", "int16", 1)
    def outcome(lib):
        """The result dtype, or the error (uint16/32/64 promote with few types)."""
        try:
            return lib.result_type(_build(lib, a), _build(lib, b))
        except RuntimeError as e:
            return ("raised", str(e))
    ours, theirs = outcome(glasstorch), outcome(torch)
    if str(theirs) == "torch.complex32":
        # glasstorch has no complex32 (ComplexHalf) storage: it promotes to complex64
        assert ours is glasstorch.complex64
        return
    assert str(ours) == str(theirs), (a, b)


@pytest.mark.parametrize("expr,expected", [
    (lambda m: m.tensor([1, 2]) + 1.5, "float32"),
    (lambda m: m.tensor([1, 2], dtype=m.int32) + 5, "int32"),
    (lambda m: m.tensor([1, 2], dtype=m.int32) + m.tensor(1, dtype=m.int64), "int32"),
    (lambda m: m.tensor([1, 2], dtype=m.int32) + m.tensor(1.0, dtype=m.float64), "float64"),
    (lambda m: m.tensor([1, 2], dtype=m.float16) + m.tensor(1.0, dtype=m.float64), "float16"),
    (lambda m: m.tensor([1, 2], dtype=m.uint8) + m.tensor([1, 2], dtype=m.int8), "int16"),
    (lambda m: m.tensor([True]) + True, "bool"),
    (lambda m: m.tensor([True]) + 1, "int64"),
    (lambda m: m.tensor([True]) + 1.0, "float32"),
    (lambda m: m.tensor([1.0]) + 1j, "complex64"),
    (lambda m: m.tensor([1.0], dtype=m.float64) + 1j, "complex128"),
    (lambda m: m.tensor([1.0], dtype=m.bfloat16) + m.tensor([1.0], dtype=m.float16), "float32"),
])
def test_promotion_table_from_facts(torch, expr, expected):
    assert str(expr(glasstorch).dtype) == str(expr(torch).dtype) == "torch." + expected


def test_uint8_wraps(torch):
    ours = glasstorch.tensor([1], dtype=glasstorch.uint8) + 1000
    theirs = torch.tensor([1], dtype=torch.uint8) + 1000
    assert ours.tolist() == theirs.tolist() == [233]


def test_default_dtype(torch):
    assert glasstorch.get_default_dtype() is glasstorch.float32
    glasstorch.set_default_dtype(glasstorch.float64)
    try:
        assert glasstorch.tensor(1.5).dtype is glasstorch.float64
        assert glasstorch.tensor(1j).dtype is glasstorch.complex128
    finally:
        glasstorch.set_default_dtype(glasstorch.float32)
    with pytest.raises(TypeError, match="only floating-point types are supported as the default type"):
        glasstorch.set_default_dtype(glasstorch.int64)


@pytest.mark.parametrize("text", ["cpu", "cuda", "cuda:0", "cuda:1", "meta", "cpu:0"])
def test_device_parsing(torch, text):
    ours, theirs = glasstorch.device(text), torch.device(text)
    assert (str(ours), repr(ours), ours.type, ours.index) == \
        (str(theirs), repr(theirs), theirs.type, theirs.index)


@pytest.mark.parametrize("text", ["foo", "cuda:x", "cuda:-1", "cuda:01"])
def test_device_errors(torch, text):
    with pytest.raises(RuntimeError) as theirs:
        torch.device(text)
    with pytest.raises(RuntimeError) as ours:
        glasstorch.device(text)
    assert str(ours.value) == str(theirs.value)


def test_device_equality_and_hash():
    assert glasstorch.device("cuda", 0) == glasstorch.device("cuda:0")
    assert len({glasstorch.device("cpu"), glasstorch.device("cpu")}) == 1


def test_size_repr(torch):
    assert repr(glasstorch.Size([2, 3])) == repr(torch.Size([2, 3]))
    assert glasstorch.Size([2, 3]).numel() == 6
    assert isinstance(glasstorch.Size([2, 3])[0:1], glasstorch.Size)


def test_allocator_counts_every_output():
    stats = cpu_allocator.stats
    before_allocs, before_bytes = stats.allocations, stats.current
    x = glasstorch.tensor([[1.0, 2.0], [3.0, 4.0]])   # 16 bytes
    y = x + x                                         # 16 more
    assert stats.allocations - before_allocs == 2
    assert stats.current - before_bytes == 32
    assert stats.peak >= stats.current
    del x, y
    assert stats.current == before_bytes


def test_large_allocations_are_64_byte_aligned(torch):
    """As c10's alloc_cpu (checked on torch's own tensors): memory of
    ALIGNED_FROM bytes or more starts on a 64-byte boundary (vector loops
    over it never split a load across cache lines), through factories, op
    outputs, copies, resizes and compiled outputs alike; the bytes counted
    are the tensor's."""
    from glasstorch._core.allocator import ALIGNED_FROM, ALIGNMENT
    theirs = [torch.empty(1 << 18), torch.randn(513, 1025) * 2, torch.ones(3, 50000).sum(0)]
    assert ALIGNMENT == 64 and all(t.data_ptr() % ALIGNMENT == 0 for t in theirs)
    stats = cpu_allocator.stats
    before = stats.current
    made = [glasstorch.empty(1 << 18), glasstorch.randn(513, 1025),
            glasstorch.zeros(1 << 20, dtype=glasstorch.int8),
            glasstorch.ones(3, 50000, dtype=glasstorch.float64)]
    made += [made[1] * 2, made[1].t().contiguous(), made[3].sum(0), glasstorch.empty(10)]
    grown = glasstorch.empty(0)
    grown.resize_(300000)
    made.append(grown)
    from glasstorch._inductor.compile_fx import empty_strided     # compiled code's buffers
    made.append(empty_strided((600, 600), (1, 600), glasstorch.float32))
    for t in made:
        if t.nbytes >= ALIGNED_FROM:
            assert t.data_ptr() % ALIGNMENT == 0, (t.shape, t.dtype, t.data_ptr() % ALIGNMENT)
    assert stats.current - before >= sum(t.nbytes for t in made[:4])
    del made, grown, t
    assert stats.current == before


def test_storage_is_untyped_bytes(torch):
    x = glasstorch.tensor([1.0, 2.0])
    s = x.untyped_storage()
    assert s.nbytes() == 8 and s.element_size() == 1
    assert s.data_ptr() == x.data_ptr()
    assert s.tolist() == list(torch.tensor([1.0, 2.0]).untyped_storage().tolist())


def test_metadata_matches(torch):
    ours, theirs = glasstorch.tensor([[1, 2, 3], [4, 5, 6]]), torch.tensor([[1, 2, 3], [4, 5, 6]])
    for attr in ["shape", "ndim", "dtype", "device", "is_leaf", "requires_grad", "layout",
                 "is_cuda", "is_meta", "itemsize", "nbytes"]:
        assert str(getattr(ours, attr)) == str(getattr(theirs, attr)), attr
    for method in ["size", "stride", "dim", "numel", "storage_offset", "element_size",
                   "is_contiguous", "is_floating_point", "is_complex", "get_device"]:
        assert getattr(ours, method)() == getattr(theirs, method)(), method
    assert ours.size(-1) == theirs.size(-1) and ours.stride(0) == theirs.stride(0)
    with pytest.raises(IndexError, match=r"Dimension out of range \(expected to be in range of "
                                         r"\[-2, 1\], but got 2\)"):
        ours.size(2)


def test_numpy_is_zero_copy():
    x = glasstorch.tensor([1.0, 2.0, 3.0])
    x.numpy()[1] = 20.0
    assert x.tolist() == [1.0, 20.0, 3.0]
    import numpy as np
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    t = glasstorch.from_numpy(a)
    a[0, 0] = 7
    assert t.tolist()[0][0] == 7.0
    assert t.data_ptr() == a.__array_interface__["data"][0]


def test_glasstorch_never_imports_torch():
    """Import glasstorch and train: linear regression by hand (autograd, updates
    under no_grad), then a classifier with nn.Linear, F.cross_entropy and
    optim.SGD / optim.Adam fed by a DataLoader; torch must never be loaded."""
    code = """
import sys, numpy as np
import glasstorch as gt
x = gt.from_numpy(np.random.default_rng(0).normal(size=(64, 3)).astype(np.float32))
y = x @ gt.tensor([[1.0], [-2.0], [0.5]])
w = gt.zeros(3, 1, requires_grad=True)
losses = []
for _ in range(20):
    loss = ((x @ w - y) ** 2).mean()
    loss.backward()
    losses.append(loss.item())
    with gt.no_grad():
        w -= w.grad * 0.1
        w.grad = None
assert losses[-1] < losses[0] * 0.1, losses

labels = (x[:, 0] > 0).long() + (x[:, 1] > 0).long()
loader = gt.utils.data.DataLoader(gt.utils.data.TensorDataset(x, labels), batch_size=16, shuffle=True)
for make_optimizer in (lambda p: gt.optim.SGD(p, lr=0.5, momentum=0.9), lambda p: gt.optim.Adam(p, lr=0.05)):
    gt.manual_seed(0)
    model = gt.nn.Sequential(gt.nn.Linear(3, 16), gt.nn.ReLU(), gt.nn.Linear(16, 3))
    optimizer = make_optimizer(model.parameters())
    epoch_losses = []
    for _ in range(15):
        total = 0.0
        for xb, yb in loader:
            loss = gt.nn.functional.cross_entropy(model(xb), yb)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            total += loss.item()
        epoch_losses.append(total)
    assert epoch_losses[-1] < epoch_losses[0] * 0.5, epoch_losses
assert "torch" not in sys.modules, [m for m in sys.modules if m.startswith("torch")]
print("ok")
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "ok"


def test_aliases_follow_storage_reallocation():
    """resize_ may reallocate a storage; views cached before must see the new bytes."""
    a = glasstorch.zeros(2, 2)
    b = a.t()
    b._np()                                  # cache b's array over the old buffer
    a.untyped_storage()._resize_(64)         # reallocates
    a.fill_(3.0)
    assert b.tolist() == [[3.0, 3.0], [3.0, 3.0]]


def test_external_storage_cannot_grow(torch):
    """from_numpy memory is not ours to reallocate: PyTorch's error, not a crash."""
    import numpy as np
    with pytest.raises(RuntimeError) as theirs:
        torch.from_numpy(np.zeros(2, np.float32)).resize_(10)
    with pytest.raises(RuntimeError) as ours:
        glasstorch.from_numpy(np.zeros(2, np.float32)).resize_(10)
    assert str(ours.value) == str(theirs.value)


def test_import_is_silent():
    """Loading the op library and the autograd kernels warns about nothing
    (e.g. no kernel registered twice for the same key)."""
    out = subprocess.run([sys.executable, "-W", "error", "-c", "import glasstorch"],
                         capture_output=True, text=True)
    assert out.returncode == 0, out.stderr

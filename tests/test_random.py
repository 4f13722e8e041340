"""Randomness: reproducibility, generator state, and bit-exactness with PyTorch's
CPU generator (mt19937 + PyTorch's transformations).

Bit-exact with PyTorch for the same seed: rand/uniform_ (all float dtypes),
randint/random_ (all overloads), randperm, bernoulli (float p and tensor p),
exponential_, multinomial, randn/normal_ for float64 and for any float dtype
below 16 elements or non-contiguous (scalar Box-Muller path, including the
cached spare sample), get_rng_state bytes; on every CPU (libm's log/cos/sin as
PyTorch calls them, not numpy's SIMD versions; ``cpu_paths`` tests).  randn
for >= 16 contiguous float32 elements matches to ~1 ulp (PyTorch uses AVX2
approximations of log/sin/cos there); float16/bfloat16 randn of >= 16
elements differs (another code path).
"""
import numpy as np
import pytest
from hypothesis import given, strategies as st

import glasstorch as gt

from .helpers import assert_same

seeds = st.integers(0, 2 ** 32 - 1)


def _seeded(torch, seed, fn):
    torch.manual_seed(seed)
    gt.manual_seed(seed)
    return fn(gt), fn(torch)


def _exact(ours, theirs):
    assert_same(ours, theirs, atol=0, rtol=0)


EXACT = {
    "rand": lambda L: L.rand(3, 5),
    "rand_f64": lambda L: L.rand(7, dtype=L.float64),
    "rand_f16": lambda L: L.rand(9, dtype=L.float16),
    "rand_bf16": lambda L: L.rand(9, dtype=L.bfloat16),
    "uniform_": lambda L: L.empty(11).uniform_(-2, 3),
    "uniform_noncontig": lambda L: L.empty(4, 3).t().uniform_(),
    "randn_small": lambda L: L.randn(5),
    "randn_twice": lambda L: (L.randn(5), L.randn(3))[1],
    "randn_f64": lambda L: L.randn(37, dtype=L.float64),
    "randn_noncontig": lambda L: L.empty(20, 3).t().normal_(),
    "normal_tensor": lambda L: L.normal(L.zeros(5), L.ones(5)),
    "randint": lambda L: L.randint(0, 10, (20,)),
    "randint_big": lambda L: L.randint(-2 ** 40, 2 ** 40, (20,)),
    "randint_i32": lambda L: L.randint(3, 100, (20,), dtype=L.int32),
    "randint_float": lambda L: L.randint(3, (6,), dtype=L.float32),
    "randperm": lambda L: L.randperm(50),
    "random_i64": lambda L: L.empty(10, dtype=L.int64).random_(),
    "random_i32": lambda L: L.empty(10, dtype=L.int32).random_(),
    "random_f32": lambda L: L.empty(10).random_(),
    "random_u8": lambda L: L.empty(10, dtype=L.uint8).random_(),
    "random_bool": lambda L: L.empty(10, dtype=L.bool).random_(),
    "random_from_none_i32": lambda L: L.empty(6, dtype=L.int32).random_(3, None),
    "random_from_none_f32": lambda L: L.empty(6).random_(3, None),
    "bernoulli_p": lambda L: L.empty(20).bernoulli_(0.3),
    "bernoulli_tensor": lambda L: L.bernoulli(L.full((20,), 0.3)),
    "bernoulli_tensor_f64": lambda L: L.bernoulli(L.full((20,), 0.3, dtype=L.float64)),
    "exponential": lambda L: L.empty(20).exponential_(2.0),
    "multinomial_replacement": lambda L: L.multinomial(L.tensor([0.1, 0.2, 0.7]), 20, True),
    "multinomial": lambda L: L.multinomial(L.tensor([[0.1, 0.2, 0.3, 0.4], [1., 0, 0, 1]]), 2),
    "rng_state": lambda L: (L.randn(3), L.rand(2), L.get_rng_state())[2],
}


@pytest.mark.parametrize("name", sorted(EXACT))
def test_bit_exact_with_pytorch(torch, name):
    _exact(*_seeded(torch, 0, EXACT[name]))


@pytest.mark.cpu_paths
@given(seed=seeds, n=st.integers(0, 40))
def test_bit_exact_hypothesis(torch, seed, n):
    _exact(*_seeded(torch, seed, lambda L: L.rand(n)))
    _exact(*_seeded(torch, seed, lambda L: L.randint(-7, 1000, (n,))))
    _exact(*_seeded(torch, seed, lambda L: L.randn(n, dtype=L.float64)))
    ours, theirs = _seeded(torch, seed, lambda L: L.randn(n))
    assert_same(ours, theirs, atol=1e-5, rtol=1e-5)


def test_large_float32_randn_close(torch):
    ours, theirs = _seeded(torch, 1, lambda L: L.randn(1000))
    assert_same(ours, theirs, atol=1e-5, rtol=1e-5)


def test_reproducible_and_generators():
    gt.manual_seed(123)
    a = gt.randn(10)
    gt.manual_seed(123)
    b = gt.randn(10)
    assert np.array_equal(a.numpy(), b.numpy())
    g1 = gt.Generator().manual_seed(5)
    g2 = gt.Generator().manual_seed(5)
    for op in (lambda g: gt.rand(4, generator=g), lambda g: gt.randint(0, 9, (4,), generator=g),
               lambda g: gt.randperm(6, generator=g), lambda g: gt.empty(3).normal_(generator=g),
               lambda g: gt.multinomial(gt.ones(4), 2, generator=g)):
        assert np.array_equal(op(g1).numpy(), op(g2).numpy())
    # a private generator doesn't touch the default one
    gt.manual_seed(7)
    gt.rand(3, generator=g1)
    c = gt.rand(3)
    gt.manual_seed(7)
    assert np.array_equal(gt.rand(3).numpy(), c.numpy())


def test_state_round_trip(torch):
    gt.manual_seed(9)
    gt.randn(3)            # leaves a cached normal sample
    state = gt.get_rng_state()
    assert state.dtype == gt.uint8 and state.shape == (5056,)
    a = gt.randn(5)
    gt.set_rng_state(state)
    assert np.array_equal(gt.randn(5).numpy(), a.numpy())
    # PyTorch's state bytes load into glasstorch and continue PyTorch's stream
    torch.manual_seed(4)
    torch.randn(3)
    gt.set_rng_state(gt.from_numpy(torch.get_rng_state().numpy().copy()))
    _exact(gt.randn(6), torch.randn(6))
    g = gt.Generator()
    g.set_state(gt.Generator().manual_seed(3).get_state())
    assert g.initial_seed() == 3


def test_seed_functions(torch):
    assert gt.manual_seed(42) is gt.default_generator
    assert gt.initial_seed() == 42
    s = gt.seed()
    assert gt.initial_seed() == s
    assert gt.Generator().manual_seed(-1).initial_seed() == torch.Generator().manual_seed(-1).initial_seed()
    assert gt.random.initial_seed() == gt.initial_seed()
    with gt.random.fork_rng():
        gt.rand(3)
    assert gt.Generator().device == gt.device("cpu")


@given(shape=st.lists(st.integers(0, 4), max_size=3).map(tuple),
       device=st.sampled_from(["cpu", "meta"]))
def test_random_shapes_dtypes(torch, shape, device):
    for name, kwargs in (("rand", {}), ("randn", {"dtype": "float64"}), ("randint", {})):
        def run(L):
            kw = {k: getattr(L, v) for k, v in kwargs.items()}
            args = (5, shape) if name == "randint" else (shape,)
            return getattr(L, name)(*args, device=device, **kw)
        ours, theirs = run(gt), run(torch)
        assert ours.device.type == device
        assert_same(ours, theirs, values=False)


def test_distribution_sanity():
    gt.manual_seed(0)
    x = gt.randn(20000, dtype=gt.float64).numpy()
    assert abs(x.mean()) < 0.05 and abs(x.std() - 1) < 0.05
    u = gt.rand(20000).numpy()
    assert u.min() >= 0 and u.max() < 1 and abs(u.mean() - 0.5) < 0.02
    p = gt.randperm(100).numpy()
    assert sorted(p.tolist()) == list(range(100))


@pytest.mark.parametrize("fn,exc,msg", [
    (lambda L: L.randint(5, 3, (2,)), RuntimeError,
     "random_ expects 'from' to be less than 'to', but got from=5 >= to=3"),
    (lambda L: L.randperm(-1), RuntimeError, "Trying to create tensor with negative dimension"),
    (lambda L: L.multinomial(L.ones(3), 4), RuntimeError,
     "cannot sample n_sample > prob_dist.size"),
    (lambda L: L.multinomial(L.ones(3), 0), RuntimeError, "cannot sample n_sample <= 0 samples"),
    (lambda L: L.multinomial(L.ones(2, 2, 2), 1), RuntimeError, "prob_dist must be 1 or 2 dim"),
    (lambda L: L.multinomial(L.ones(3, dtype=L.long), 1), RuntimeError,
     "multinomial only supports floating-point dtypes for input, got: Long"),
    (lambda L: L.multinomial(L.tensor([1., -1.]), 1), RuntimeError,
     "probability tensor contains either `inf`, `nan` or element < 0"),
    (lambda L: L.multinomial(L.tensor([0., 0.]), 1), RuntimeError,
     r"invalid multinomial distribution \(sum of probabilities <= 0\)"),
    (lambda L: L.empty(2).normal_(0, -1), RuntimeError, "normal expects std >= 0.0, but found std -1"),
    (lambda L: L.empty(2).uniform_(1, 0), RuntimeError,
     r"uniform_ expects to return a \[from, to\) range, but found from=1 > to=0"),
    (lambda L: L.empty(2).bernoulli_(1.5), RuntimeError,
     r"bernoulli_ expects p to be in \[0, 1\], but got p=1.5"),
    (lambda L: L.empty(2).exponential_(-1), RuntimeError,
     "exponential_ expects lambda > 0.0, but found lambda=-1"),
    (lambda L: L.empty(2, dtype=L.int64).uniform_(), NotImplementedError,
     "\"check_uniform_bounds\" not implemented for 'Long'"),
    (lambda L: L.empty(2, dtype=L.int64).normal_(), NotImplementedError,
     "\"normal_kernel_cpu\" not implemented for 'Long'"),
    (lambda L: L.empty(3, dtype=L.uint8).random_(0, 300), RuntimeError,
     "to - 1 is out of bounds for unsigned char"),
    (lambda L: L.randint(3.5, (2,)), TypeError, "randint"),
])
def test_errors(torch, fn, exc, msg):
    for L in (torch, gt):
        with pytest.raises(exc, match=msg):
            fn(L)


def test_random_overload_resolution(torch):
    for L in (gt, torch):
        x = L.empty(200)
        assert 0 <= x.random_(10).min().item() and x.max().item() < 10
        x.random_(3, 6)
        assert 3 <= x.min().item() and x.max().item() < 6
        assert x.random_().min().item() >= 0
    _exact(*_seeded(torch, 2, lambda L: L.empty(8, dtype=L.int64).random_(10)))

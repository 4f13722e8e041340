"""torch.cuda without a CUDA backend: glasstorch answers as PyTorch's CPU-only build.

glasstorch cannot put a tensor on a GPU yet, so a visible GPU (CuPy installed and
seeing one) must not make ``is_available()`` True: the usual
``"cuda" if torch.cuda.is_available() else "cpu"`` would then fail on first use.
"""
import sys
import types

import pytest
import torch

import glasstorch


@pytest.fixture
def cupy_sees_a_gpu(monkeypatch):
    """A fake CuPy whose runtime reports one device."""
    runtime = types.SimpleNamespace(getDeviceCount=lambda: 1)
    fake = types.ModuleType("cupy")
    fake.cuda = types.SimpleNamespace(runtime=runtime, is_available=lambda: True)
    monkeypatch.setitem(sys.modules, "cupy", fake)
    monkeypatch.setitem(sys.modules, "cupy.cuda", fake.cuda)
    return fake


QUERIES = ["is_available", "device_count", "is_initialized", "is_bf16_supported",
           "get_arch_list", "memory_allocated", "max_memory_allocated", "memory_reserved",
           "max_memory_reserved", "memory_stats", "empty_cache"]


@pytest.mark.parametrize("name", QUERIES)
def test_queries_answer_as_cpu_only_torch(cupy_sees_a_gpu, name):
    assert getattr(glasstorch.cuda, name)() == getattr(torch.cuda, name)()


def test_is_available_false_although_cupy_sees_a_gpu(cupy_sees_a_gpu):
    import cupy
    assert cupy.cuda.runtime.getDeviceCount() == 1
    assert glasstorch.cuda.is_available() is False
    assert glasstorch.cuda.device_count() == 0
    device = "cuda" if glasstorch.cuda.is_available() else "cpu"
    assert glasstorch.ones(2, device=device).device.type == "cpu"


def _error(call):
    with pytest.raises(BaseException) as info:
        call()
    return type(info.value), str(info.value)


NEEDS_DEVICE = [
    lambda t: t.cuda.init(),
    lambda t: t.cuda.current_device(),
    lambda t: t.cuda.synchronize(),
    lambda t: t.cuda.get_device_name(),
    lambda t: t.cuda.get_device_properties(0),
    lambda t: t.cuda.get_device_capability(),
    lambda t: t.cuda.mem_get_info(),
    lambda t: t.zeros(2, device="cuda"),
    lambda t: t.empty(3, device="cuda:0"),
    lambda t: t.tensor([1.0], device="cuda"),
    lambda t: t.ones(2).cuda(),
    lambda t: t.ones(2).to("cuda"),
]


@pytest.mark.parametrize("case", range(len(NEEDS_DEVICE)))
def test_device_use_raises_cpu_only_assertion(cupy_sees_a_gpu, case):
    expected = _error(lambda: NEEDS_DEVICE[case](torch))
    assert expected == (AssertionError, "Torch not compiled with CUDA enabled")
    assert _error(lambda: NEEDS_DEVICE[case](glasstorch)) == expected

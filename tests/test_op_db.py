"""PyTorch's OpInfo database against glasstorch (issue 16): every OpInfo that
docs/op-db.md lists as matching still matches, on the first
``op_db.MAX_TEST_SAMPLES`` samples of each dtype (the full run,
``python -m tests.op_db``, takes minutes); and the driver itself notices each
kind of difference it reports."""
from __future__ import annotations

import functools

import numpy as np
import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

import glasstorch

from . import op_db

MATCHING = op_db.matching_names(op_db.DOC.read_text())


@functools.cache
def opinfos() -> dict:
    return {op_db.op_id(op): op for op in op_db.load_op_db()}


@pytest.mark.parametrize("name", MATCHING)
def test_listed_opinfo_still_matches(name):
    result = op_db.check_opinfo(opinfos()[name], op_db.MAX_TEST_SAMPLES)
    assert result.reason == "match", f"{name}: {result.reason}: {result.detail}"


# --- the driver finds each kind of difference --------------------------------

def _check_cos(monkeypatch, ours):
    monkeypatch.setattr(glasstorch, "cos", ours)
    return op_db.check_opinfo(opinfos()["cos"], 2)


def test_a_wrong_value_is_reported(monkeypatch):
    result = _check_cos(monkeypatch, glasstorch.sin)
    assert (result.reason, result.detail.split(":")[0]) == ("value", "bfloat16 sample 0")


def test_a_wrong_dtype_is_reported(monkeypatch):
    result = _check_cos(monkeypatch, lambda x: glasstorch.Tensor.cos(x).to(glasstorch.float64))
    assert result.reason == "dtype"
    assert result.detail == "bfloat16 sample 0: torch.float64 instead of torch.bfloat16"


def test_an_error_is_reported(monkeypatch):
    def broken(x):
        raise ValueError("no cos today")
    result = _check_cos(monkeypatch, broken)
    assert (result.reason, result.detail) == ("error", "bfloat16 sample 0: ValueError: no cos today")


def test_a_wrong_gradient_is_reported(monkeypatch):
    # right values, but a result cut off from x: its gradient is zero
    cos = glasstorch.cos
    result = _check_cos(monkeypatch, lambda x, **out: cos(x.detach(), **out)
                        .requires_grad_(x.requires_grad))
    assert result.reason == "grad" and result.detail.startswith("value: float64 sample 0: backward")


def test_a_missing_name_is_reported(monkeypatch):
    monkeypatch.delattr(glasstorch, "cos")
    result = op_db.check_opinfo(opinfos()["cos"], 1)
    assert (result.reason, result.detail) == ("missing", "glasstorch.cos")


def test_a_variant_is_compared_too(monkeypatch):
    monkeypatch.setattr(glasstorch.Tensor, "cos_", glasstorch.Tensor.sin_)
    result = op_db.check_opinfo(opinfos()["cos"], 2)
    assert result.reason == "inplace"


# --- calling glasstorch as a user would --------------------------------------

@pytest.mark.parametrize("theirs,ours", [
    (torch.add, glasstorch.add), (torch.Tensor.add, glasstorch.Tensor.add),
    (torch.linalg.svd, glasstorch.linalg.svd), (torch.fft.fft, glasstorch.fft.fft),
    (torch.nn.functional.relu, glasstorch.nn.functional.relu),
    (torch.nn.functional.avg_pool2d, glasstorch.nn.functional.avg_pool2d),
    (torch.Tensor.__rsub__, glasstorch.Tensor.__rsub__),
    (torch.ops.aten.slice.Tensor, glasstorch.ops.aten.slice.Tensor)])
def test_torch_callables_map_to_glasstorch_by_name(theirs, ours):
    assert op_db.glasstorch_callable(theirs) is ours


def test_an_opinfo_lambda_runs_with_glasstorch_as_torch():
    # nn.functional.embedding's OpInfo swaps the arguments in a lambda that calls
    # torch.nn.functional.embedding: rebound, it calls glasstorch's
    lambda_ = opinfos()["nn.functional.embedding"].op
    ours = op_db.glasstorch_callable(lambda_)
    weight = glasstorch.arange(6.).reshape(3, 2)
    result = ours(weight, glasstorch.tensor([2, 0]))
    assert isinstance(result, glasstorch.Tensor) and result.tolist() == [[4., 5.], [0., 1.]]


@given(shape=st.lists(st.integers(0, 4), min_size=1, max_size=4), data=st.data())
def test_samples_keep_their_strides_offsets_and_aliases(shape, data):
    """A sample tensor becomes a glasstorch tensor with the same values, sizes,
    strides and storage offset; one tensor used twice stays one tensor."""
    base = torch.randn([n + 2 for n in shape], dtype=torch.float64)
    index = tuple(slice(data.draw(st.integers(0, 2)), None,
                        data.draw(st.integers(1, 2))) for _ in shape)
    view = base[index].permute(*data.draw(st.permutations(range(len(shape)))))
    if data.draw(st.booleans()) and view.shape[0]:        # a broadcast (stride 0) dim
        view = view.select(0, 0).unsqueeze(0).expand(3, *view.shape[1:])
    convert = op_db.Translator()
    ours, again = convert([view, view])
    assert ours is again
    assert (ours.shape, ours.stride(), ours.storage_offset(), ours.dtype) == \
        (view.shape, view.stride(), view.storage_offset(), glasstorch.float64)
    np.testing.assert_array_equal(ours.numpy(), view.numpy())


def test_dtypes_glasstorch_lacks_are_counted_not_run():
    op = opinfos()["abs"]
    lacking = [d for d in op.supported_dtypes("cpu")
               if not isinstance(getattr(glasstorch, str(d).removeprefix("torch."), None),
                                 glasstorch.dtype)]
    assert sorted(op_db.check_opinfo(op, 1).skipped_dtypes, key=str) == sorted(lacking, key=str)

"""derivatives.yaml loads and validates against the declared ops."""
import pytest

import glasstorch  # noqa: F401  (declares the ops)
from glasstorch._ops import derivatives


def test_loads_and_names_nodes_like_pytorch():
    table = derivatives.load()
    assert table["aten::add.Tensor"].node_name == "AddBackward0"
    assert table["aten::mul.Tensor"].node_name == "MulBackward0"
    assert set(table["aten::add.Tensor"].formulas) == {("self",), ("other",)}


def test_rejects_unknown_ops_and_arguments(tmp_path):
    bad = tmp_path / "d.yaml"
    bad.write_text("- name: nope(Tensor self) -> Tensor\n  self: grad\n")
    with pytest.raises(RuntimeError, match="not declared"):
        derivatives.load(str(bad))
    bad.write_text("- name: mul.Tensor(Tensor self, Tensor other) -> Tensor\n  selff: grad\n")
    with pytest.raises(RuntimeError, match="no argument"):
        derivatives.load(str(bad))
    bad.write_text("- name: mul.Tensor(Tensor self, Tensor other) -> Tensor\n  self: grad *\n")
    with pytest.raises(RuntimeError, match="bad formula"):
        derivatives.load(str(bad))

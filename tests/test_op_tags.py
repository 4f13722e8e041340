"""torch.Tag and every operator's tags, compared with PyTorch's."""
import pytest
import torch

import glasstorch as gt
from glasstorch._dispatcher.dispatcher import dispatcher

ATEN = sorted(name[len("aten::"):] for name in dispatcher.operators if name.startswith("aten::"))


def overload(lib, name):
    base, _, overload_name = name.partition(".")
    return getattr(getattr(lib.ops.aten, base), overload_name or "default")


def test_tag_enum_is_pytorchs():
    assert [(name, tag.value) for name, tag in gt.Tag.__members__.items()] == \
        [(name, tag.value) for name, tag in torch.Tag.__members__.items()]
    assert (str(gt.Tag.core), repr(gt.Tag.pointwise)) == (str(torch.Tag.core), repr(torch.Tag.pointwise))
    assert gt._C.Tag is gt.Tag


def test_every_aten_overload_has_pytorchs_tags():
    assert len(ATEN) > 900
    differ = {name: ([t.name for t in overload(gt, name).tags], [t.name for t in overload(torch, name).tags])
              for name in ATEN
              if [t.name for t in overload(gt, name).tags] != [t.name for t in overload(torch, name).tags]}
    assert not differ, differ


@pytest.mark.parametrize("tag", ["inplace_view", "nondeterministic_seeded", "dynamic_output_shape",
                                 "data_dependent_output", "core", "pointwise", "view_copy"])
def test_ops_with_a_tag_are_pytorchs(tag):
    def having(lib):
        return {name for name in ATEN if getattr(lib.Tag, tag) in overload(lib, name).tags}
    assert having(gt) == having(torch)


def test_custom_op_tags():
    def run(lib, ns):
        @lib.library.custom_op(f"{ns}::f", mutates_args=(), tags=lib.Tag.pointwise)
        def f(x: lib.Tensor) -> lib.Tensor:
            return x.clone()
        library = lib.library.Library(f"{ns}_lib", "DEF")
        library.define("k(Tensor x) -> Tensor", tags=(lib.Tag.pointwise, lib.Tag.core))
        tags = ([t.name for t in getattr(lib.ops, ns).f.default.tags],
                [t.name for t in getattr(lib.ops, f"{ns}_lib").k.default.tags])
        with pytest.raises(TypeError):
            library.define("h(Tensor x) -> Tensor", tags="pointwise")
        return tags
    assert run(gt, "gt_tags") == run(torch, "torch_tags")

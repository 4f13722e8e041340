"""docs/api-coverage.md is what tests/api_coverage.py computes today (issue 16):
adding a name without regenerating it, or losing one, fails here."""
from __future__ import annotations

from . import api_coverage


def test_the_coverage_document_is_current():
    expected = api_coverage.document(api_coverage.coverage())
    assert api_coverage.DOC.read_text() == expected, \
        "docs/api-coverage.md is stale: run python -m tests.api_coverage --write"


def test_exclusions_are_only_out_of_scope_families():
    assert api_coverage.excluded("quantize_per_tensor") and api_coverage.excluded("jit")
    for kept in ("add", "Tensor", "quantile", "nanquantile", "trace", "is_quantized"):
        assert api_coverage.excluded(kept) is None, kept

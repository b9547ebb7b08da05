"""Literal words found in a text without regexes."""
from __future__ import annotations

from translator.textsearch import occurrences, occurs_at_any


def test_occurrences_do_not_overlap() -> None:
    assert occurrences("<<<<< <<", "<<") == [0, 2, 6]
    assert occurrences("CUresult CUstream", "cuda") == []


def test_a_word_is_found_at_given_places_only() -> None:
    text = "cudaError_t e; CUresult r;"
    at = occurrences(text, "CU")
    assert occurs_at_any(text, "CUresult", at)
    assert not occurs_at_any(text, "CUstream", at)
    assert not occurs_at_any(text, "CUresult", [0])

"""Each labelled failure (tests/causes/labelled) gets the cause its label names as the headline,
and the notebook's first match is the labelled entry (or nothing where the label says none)."""
from __future__ import annotations

import pytest

from tests.causes.labelled import Case, evaluate, load_cases

CASES = load_cases()


def test_the_set_covers_every_cause_and_family() -> None:
    assert len(CASES) >= 80
    assert {c.cause for c in CASES} == {"environment", "translation", "build_configuration", "project_code", "migrator"}
    assert sum(c.holdout for c in CASES) >= 20


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_labelled_case(case: Case) -> None:
    outcome = evaluate(case)
    assert outcome.cause == case.cause, outcome.reason
    assert outcome.entry_verdict != "wrong", outcome.entry
    if not case.holdout:  # a held-out case may find no entry (bench/causes_bench.py counts those), never a wrong one
        assert outcome.entry == case.entry

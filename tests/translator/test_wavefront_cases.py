"""The labelled cases (tests/translator/wavefront_cases): the scan's precision and recall stay at target."""
from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

from translator.wavefront import KINDS, scan_source

CASES = Path(__file__).parent / "wavefront_cases"
EXPECT = re.compile(r"//\s*expect:\s*([\w\-, ]+)")


def _labels(path: Path) -> set[tuple[int, str]]:
    found = set()
    for number, line in enumerate(path.read_text().splitlines(), start=1):
        match = EXPECT.search(line)
        if match:
            found |= {(number, kind.strip()) for kind in match.group(1).split(",")}
    return found


def test_there_are_enough_cases_of_every_kind_and_safe_look_alikes() -> None:
    files = sorted(CASES.glob("*.cu"))
    kinds = Counter(kind for path in files for _, kind in _labels(path))
    assert len(files) >= 60
    assert set(kinds) == set(KINDS)
    assert sum(1 for path in files if not _labels(path)) >= 20  # safe look-alikes only


def test_precision_and_recall_are_at_least_0_9_per_kind_and_overall() -> None:
    tp: Counter[str] = Counter()
    fp: Counter[str] = Counter()
    fn: Counter[str] = Counter()
    for path in sorted(CASES.glob("*.cu")):
        expected = _labels(path)
        found = {(hazard.line, hazard.kind) for hazard in scan_source(path.read_text())}
        tp.update(kind for _, kind in found & expected)
        fp.update(kind for _, kind in found - expected)
        fn.update(kind for _, kind in expected - found)
    for kind in KINDS:
        assert tp[kind] / max(1, tp[kind] + fp[kind]) >= 0.9, kind
        assert tp[kind] / max(1, tp[kind] + fn[kind]) >= 0.9, kind
    assert sum(tp.values()) / (sum(tp.values()) + sum(fp.values())) >= 0.9
    assert sum(tp.values()) / (sum(tp.values()) + sum(fn.values())) >= 0.9

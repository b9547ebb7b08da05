"""Accuracy of the failure causes on the labelled set (tests/causes/labelled, issue 27).

    .venv/bin/python bench/causes_bench.py [-v]

For the tuned cases and the held-out ones (written last, never tuned on), side by side: the share
whose headline cause is the labelled one, and the notebook's first match: right, absent (nothing
matched) or wrong. Targets: headline >= 90 % right; first match right or absent >= 95 %.
"""
from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from tests.causes.labelled import Outcome, evaluate, load_cases  # noqa: E402


def _line(name: str, outcomes: list[Outcome]) -> str:
    n = len(outcomes) or 1
    right = sum(o.cause_right for o in outcomes)
    entries = Counter(o.entry_verdict for o in outcomes)
    return (f"{name:<9} {len(outcomes):>4} cases  headline right {right:>3} ({100 * right / n:5.1f} %)  "
            f"notebook first match right {entries['right']:>3}, absent {entries['absent']:>2}, wrong {entries['wrong']:>2} "
            f"(right or absent {100 * (entries['right'] + entries['absent']) / n:5.1f} %)")


def _per_cause(outcomes: list[Outcome]) -> str:
    """Headline right/total for each labelled cause."""
    totals = Counter(o.case.cause for o in outcomes)
    right = Counter(o.case.cause for o in outcomes if o.cause_right)
    return ", ".join(f"{cause} {right[cause]}/{total}" for cause, total in sorted(totals.items()))


def main(verbose: bool) -> None:
    outcomes = [evaluate(case) for case in load_cases()]
    tuned = [o for o in outcomes if not o.case.holdout]
    held = [o for o in outcomes if o.case.holdout]
    for name, part in (("tuned", tuned), ("held out", held), ("all", outcomes)):
        print(_line(name, part))
    for batch in sorted({o.case.id.split("/", 1)[0] for o in held}):
        part = [o for o in held if o.case.id.startswith(batch + "/")]
        print(_line(batch, part) + "  by cause: " + _per_cause(part))
    by_cause = Counter(o.case.cause for o in outcomes)
    print("cases per cause: " + ", ".join(f"{k} {v}" for k, v in sorted(by_cause.items())))
    for o in outcomes:
        if verbose and (not o.cause_right or o.entry_verdict != "right"):
            print(f"  {o.case.id}: cause {o.cause} (label {o.case.cause}: {o.reason}); entry {o.entry} (label {o.case.entry})")


if __name__ == "__main__":
    main("-v" in sys.argv[1:])

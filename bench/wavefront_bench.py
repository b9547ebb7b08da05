"""Precision and recall of the wavefront-hazard scan on our labelled cases, per kind and overall.

    .venv/bin/python bench/wavefront_bench.py [--cases DIR] [--verbose]

The cases (tests/translator/wavefront_cases/*.cu, our own code in the style of real kernels) label
each hazard on the line where it starts (``// expect: KIND``); every other finding is a false
positive. A finding matches a label of the same kind on the same line. Targets: recall >= 0.9 and
precision >= 0.9, overall and for each kind with labels. Exit status 1 when a target is missed.
"""
from __future__ import annotations

import argparse
import re
import sys
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from translator.wavefront import KINDS, scan_source  # noqa: E402

CASES = ROOT / "tests" / "translator" / "wavefront_cases"
EXPECT = re.compile(r"//\s*expect:\s*([\w\-, ]+)")
TARGET = 0.9
Label = tuple[str, int, str]  # file, line, kind


def labels(path: Path) -> set[Label]:
    found: set[Label] = set()
    for number, line in enumerate(path.read_text().splitlines(), start=1):
        match = EXPECT.search(line)
        if match:
            found |= {(path.name, number, kind.strip()) for kind in match.group(1).split(",") if kind.strip()}
    return found


def findings(path: Path) -> set[Label]:
    return {(path.name, hazard.line, hazard.kind) for hazard in scan_source(path.read_text())}


def score(cases: Path) -> tuple[Counter[str], Counter[str], Counter[str], list[str], int, float]:
    true_pos: Counter[str] = Counter()
    false_pos: Counter[str] = Counter()
    false_neg: Counter[str] = Counter()
    misses: list[str] = []
    files = sorted(cases.glob("*.cu"))
    started = time.perf_counter()
    for path in files:
        expected, got = labels(path), findings(path)
        for _, _line, kind in got & expected:
            true_pos[kind] += 1
        for _, line, kind in sorted(got - expected):
            false_pos[kind] += 1
            misses.append(f"false positive  {path.name}:{line} {kind}")
        for _, line, kind in sorted(expected - got):
            false_neg[kind] += 1
            misses.append(f"missed          {path.name}:{line} {kind}")
    return true_pos, false_pos, false_neg, misses, len(files), time.perf_counter() - started


def ratio(good: int, bad: int) -> float:
    return good / (good + bad) if good + bad else 1.0


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--cases", type=Path, default=CASES)
    parser.add_argument("--verbose", action="store_true", help="list every false positive and miss")
    args = parser.parse_args()
    tp, fp, fn, misses, files, seconds = score(args.cases)
    labelled = sum(tp.values()) + sum(fn.values())
    print(f"{files} cases, {labelled} labelled hazards, scanned in {seconds * 1000:.0f} ms")
    print(f"{'kind':<22}{'labels':>7}{'found':>7}{'TP':>5}{'FP':>5}{'FN':>5}{'precision':>11}{'recall':>8}")
    met = True
    for kind in KINDS:
        precision, recall = ratio(tp[kind], fp[kind]), ratio(tp[kind], fn[kind])
        if tp[kind] + fn[kind] and (precision < TARGET or recall < TARGET):
            met = False
        print(f"{kind:<22}{tp[kind] + fn[kind]:>7}{tp[kind] + fp[kind]:>7}{tp[kind]:>5}{fp[kind]:>5}{fn[kind]:>5}"
              f"{precision:>11.2f}{recall:>8.2f}")
    precision = ratio(sum(tp.values()), sum(fp.values()))
    recall = ratio(sum(tp.values()), sum(fn.values()))
    met = met and precision >= TARGET and recall >= TARGET
    print(f"{'overall':<22}{labelled:>7}{sum(tp.values()) + sum(fp.values()):>7}{sum(tp.values()):>5}"
          f"{sum(fp.values()):>5}{sum(fn.values()):>5}{precision:>11.2f}{recall:>8.2f}")
    print(f"targets (precision >= {TARGET}, recall >= {TARGET}, overall and per kind): {'met' if met else 'NOT met'}")
    if args.verbose or not met:
        print("\n".join(misses))
    return 0 if met else 1


if __name__ == "__main__":
    sys.exit(main())

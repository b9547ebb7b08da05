"""Checks on a smoke run's output, and comparison of the ROCm run with the CUDA reference.

Numbers are compared with ``math.isclose`` (rel_tol/abs_tol); lines are aligned by difflib
on their text with the numbers masked, so ``sum = 42.0`` and ``sum = 42.000001`` pair up.
"""
from __future__ import annotations

import difflib
import math
import re
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Literal

from worker.project_settings import SmokeCheck

NUMBER = re.compile(r"[-+]?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?|[-+]?\b(?:inf|nan)\b", re.IGNORECASE)
MAX_REPORTED_DIFFERENCES = 5


@dataclass(frozen=True)
class CheckResult:
    name: str
    passed: bool
    detail: str
    skipped: bool = False  # could not be judged (e.g. no reference run yet); not a failure

    def to_dict(self) -> dict[str, object]:
        return asdict(self)


def numbers_in(text: str) -> list[float]:
    return [float(token) for token in NUMBER.findall(text)]


def numbers_close(a: float, b: float, rel_tol: float, abs_tol: float) -> bool:
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    return math.isclose(a, b, rel_tol=rel_tol, abs_tol=abs_tol)


def _first_mismatch(got: list[float], want: list[float], rel_tol: float, abs_tol: float) -> str:
    """'' when the lists match within tolerance, else what differs first."""
    if len(got) != len(want):
        return f"{len(got)} number(s) where {len(want)} were expected"
    for position, (a, b) in enumerate(zip(got, want)):
        if not numbers_close(a, b, rel_tol, abs_tol):
            return f"number {position + 1}: got {a!r}, expected {b!r}"
    return ""


def _matching_lines(pattern: re.Pattern[str], text: str) -> list[str]:
    return [line for line in text.splitlines() if pattern.search(line)]


def check_numeric(check: SmokeCheck, stdout: str, reference_stdout: str | None) -> CheckResult:
    name = f"numeric {check.pattern!r}"
    try:
        pattern = re.compile(check.pattern)
    except re.error as exc:
        return CheckResult(name, False, f"bad regular expression: {exc}")
    lines = _matching_lines(pattern, stdout)
    if not lines:
        return CheckResult(name, False, "no output line matches the pattern")
    if check.expected:
        want, source = numbers_in(check.expected), "the expected values"
    elif reference_stdout is not None:
        want, source = numbers_in("\n".join(_matching_lines(pattern, reference_stdout))), "the CUDA reference"
    else:
        return CheckResult(name, False, "no expected values and no CUDA reference run to compare", skipped=True)
    got = numbers_in("\n".join(lines))
    mismatch = _first_mismatch(got, want, check.rel_tol, check.abs_tol)
    if mismatch:
        return CheckResult(name, False, f"against {source}: {mismatch}")
    return CheckResult(name, True, f"{len(got)} number(s) match {source} within tolerance")


def check_one(check: SmokeCheck, stdout: str, reference_stdout: str | None) -> CheckResult:
    if check.kind == "text":
        found = check.pattern in stdout
        return CheckResult(f"text {check.pattern!r}", found, "found" if found else "not in the output")
    if check.kind == "regex":
        try:
            match = re.search(check.pattern, stdout, re.MULTILINE)
        except re.error as exc:
            return CheckResult(f"regex {check.pattern!r}", False, f"bad regular expression: {exc}")
        detail = f"matched {match.group(0)[:200]!r}" if match else "no match in the output"
        return CheckResult(f"regex {check.pattern!r}", match is not None, detail)
    return check_numeric(check, stdout, reference_stdout)


def check_exit_code(exit_code: int | None, signal_name: str | None, expected: int) -> CheckResult:
    if exit_code is None:
        return CheckResult("exit code", False, f"ended by {signal_name or 'a signal'}, expected exit {expected}")
    passed = exit_code == expected
    return CheckResult("exit code", passed, f"exited {exit_code}, expected {expected}")


def run_checks(
    stdout: str,
    exit_code: int | None,
    signal_name: str | None,
    expected_exit: int,
    checks: Sequence[SmokeCheck],
    reference_stdout: str | None = None,
) -> list[CheckResult]:
    """The exit-code check, then each configured check, in order."""
    results = [check_exit_code(exit_code, signal_name, expected_exit)]
    results.extend(check_one(check, stdout, reference_stdout) for check in checks)
    return results


# --- whole-output comparison -------------------------------------------------------------------

ComparisonStatus = Literal["equal", "within-tolerance", "different"]


@dataclass(frozen=True)
class LineDifference:
    rocm_line: int | None  # 1-based, None when the line exists on one side only
    cuda_line: int | None
    rocm_text: str
    cuda_text: str


@dataclass
class Comparison:
    status: ComparisonStatus
    detail: str
    differences: list[LineDifference] = field(default_factory=list)  # the first few
    difference_count: int = 0

    def to_dict(self) -> dict[str, object]:
        return asdict(self)


def _skeleton(line: str) -> str:
    return NUMBER.sub("#", line.rstrip())


def _unpaired(tag: str, a: list[str], b: list[str], i1: int, i2: int, j1: int, j2: int) -> list[LineDifference]:
    """Line differences for a difflib opcode whose lines do not pair up."""
    rows = []
    for offset in range(max(i2 - i1, j2 - j1)):
        i, j = i1 + offset, j1 + offset
        rows.append(
            LineDifference(
                i + 1 if i < i2 else None, j + 1 if j < j2 else None,
                a[i] if i < i2 else "", b[j] if j < j2 else "",
            )
        )
    return rows


def compare_outputs(
    rocm_stdout: str, cuda_stdout: str, rel_tol: float, abs_tol: float, ignore: Sequence[str] = ()
) -> Comparison:
    """Compare two outputs line by line; lines matching an ``ignore`` regex (timings) are dropped."""
    drop = [re.compile(p) for p in ignore]
    a = [line for line in rocm_stdout.splitlines() if not any(d.search(line) for d in drop)]
    b = [line for line in cuda_stdout.splitlines() if not any(d.search(line) for d in drop)]
    matcher = difflib.SequenceMatcher(None, [_skeleton(x) for x in a], [_skeleton(y) for y in b], autojunk=False)
    differences: list[LineDifference] = []
    tolerated = 0
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag != "equal":
            differences += _unpaired(tag, a, b, i1, i2, j1, j2)
            continue
        for i, j in zip(range(i1, i2), range(j1, j2)):
            if a[i].rstrip() == b[j].rstrip():
                continue
            if _first_mismatch(numbers_in(a[i]), numbers_in(b[j]), rel_tol, abs_tol):
                differences.append(LineDifference(i + 1, j + 1, a[i], b[j]))
            else:
                tolerated += 1
    return _summarise(differences, tolerated)


def _summarise(differences: list[LineDifference], tolerated: int) -> Comparison:
    ordered = sorted(differences, key=lambda d: (d.rocm_line or d.cuda_line or 0))
    shown = ordered[:MAX_REPORTED_DIFFERENCES]
    if ordered:
        first = shown[0]
        detail = (
            f"{len(ordered)} line(s) differ; first: ROCm line {first.rocm_line} {first.rocm_text!r}"
            f" vs CUDA line {first.cuda_line} {first.cuda_text!r}"
        )
        return Comparison("different", detail, shown, len(ordered))
    if tolerated:
        return Comparison("within-tolerance", f"{tolerated} line(s) differ only within tolerance")
    return Comparison("equal", "outputs are identical")

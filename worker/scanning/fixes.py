"""Apply the safe replacements of findings to a tree, in place.

A fix applies only where the finding's text is still at its line and column, so running
twice, or on a tree already fixed, changes nothing. Overlapping fixes on one line keep the
leftmost one; a re-scan then reports what remains. A finding with empty text is an insertion
at its column (a flag after a token, or lines after a CMake command when the replacement starts
with a newline); it is skipped where its text is already there.
"""
from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from pathlib import Path

from worker.scanning.model import AppliedFix, Finding


def apply_fixes(tree: Path, findings: Iterable[Finding], disabled_rules: set[str]) -> list[AppliedFix]:
    by_file: dict[str, list[Finding]] = defaultdict(list)
    for finding in findings:
        if finding.replacement is not None and finding.rule_id not in disabled_rules:
            by_file[finding.file].append(finding)
    applied: list[AppliedFix] = []
    for rel in sorted(by_file):
        applied += _fix_file(tree, rel, by_file[rel])
    return applied


def _fix_file(tree: Path, rel: str, findings: list[Finding]) -> list[AppliedFix]:
    path = tree / rel
    # Findings may come back from stored JSON: never follow them out of the tree or through links.
    if path.is_symlink() or not path.is_file() or not path.resolve().is_relative_to(tree.resolve()):
        return []
    try:
        text = path.read_bytes().decode("utf-8")
    except (OSError, UnicodeDecodeError):
        return []
    lines = text.splitlines(keepends=True)
    applied: list[AppliedFix] = []
    by_line: dict[int, list[Finding]] = defaultdict(list)
    for finding in findings:
        by_line[finding.line].append(finding)
    for number, line_findings in sorted(by_line.items()):
        if 1 <= number <= len(lines):
            following = lines[number] if number < len(lines) else ""
            line_findings = [f for f in line_findings if not _already_inserted(f, lines[number - 1], following)]
            new_line, line_fixes = _fix_line(rel, number, lines[number - 1], line_findings)
            lines[number - 1] = new_line
            applied += line_fixes
    if applied:
        path.write_text("".join(lines), encoding="utf-8", newline="")
    return applied


def _already_inserted(finding: Finding, line: str, following: str) -> bool:
    if finding.text or not finding.replacement:
        return False
    if finding.replacement.startswith("\n"):
        return following.startswith(finding.replacement[1:].split("\n", 1)[0])
    return line.startswith(finding.replacement, finding.column)


def _fix_line(rel: str, number: int, line: str, findings: list[Finding]) -> tuple[str, list[AppliedFix]]:
    chosen: list[Finding] = []
    end_of_previous = -1
    for finding in sorted(findings, key=lambda f: (f.column, bool(f.text), -len(f.text))):
        body = len(line.rstrip("\r\n"))
        fits = line.startswith(finding.text, finding.column) if finding.text else finding.column <= body
        if fits and finding.column >= end_of_previous and finding.text != finding.replacement:
            chosen.append(finding)
            end_of_previous = finding.column + len(finding.text)
    applied = []
    for finding in reversed(chosen):  # right to left keeps earlier columns valid
        assert finding.replacement is not None
        before = line
        line = line[: finding.column] + finding.replacement + line[finding.column + len(finding.text):]
        applied.append(AppliedFix(finding.rule_id, rel, number, before.rstrip("\r\n"), line.rstrip("\r\n")))
    return line, list(reversed(applied))

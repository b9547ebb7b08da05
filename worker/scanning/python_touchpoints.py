"""GPU touchpoints of a Python project: its sources, training configs and launch commands; the
readiness figures for a Python application (touchpoints, not C++ CUDA references); ROCm files the
repository already ships."""
from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from pathlib import Path

from worker.scanning.files import MAX_FILE_BYTES, build_kind, read_text, walk_tree
from worker.scanning.fixes import apply_fixes
from worker.scanning.model import AppliedFix, Finding
from worker.scanning.rules_llm_config import scan_launch_lines, scan_training_yaml
from worker.scanning.rules_pysource import scan_python_source

_LAUNCH_KINDS = ("shell", "dockerfile", "compose", "ci")
_ROCM_FROM = re.compile(r"^\s*FROM\s+(?:--platform=\S+\s+)?rocm/", re.IGNORECASE | re.MULTILINE)


def scan_touchpoints(tree: Path, exclude_globs: Iterable[str]) -> list[Finding]:
    findings: list[Finding] = []
    for tree_file in walk_tree(tree, exclude_globs):
        name = tree_file.name.lower()
        kind = build_kind(tree_file.rel)
        wanted = name.endswith((".py", ".yaml", ".yml")) or kind in _LAUNCH_KINDS
        if not wanted or tree_file.size > MAX_FILE_BYTES:
            continue
        text = read_text(tree_file)
        if text is None:
            continue
        if name.endswith(".py"):
            findings += scan_python_source(tree_file.rel, text)
        elif name.endswith((".yaml", ".yml")) and kind not in ("ci", "compose"):
            findings += scan_training_yaml(tree_file.rel, text)
        if kind in _LAUNCH_KINDS or name.endswith((".yaml", ".yml")):
            findings += scan_launch_lines(tree_file.rel, text)
    return sorted(findings, key=lambda f: (f.file, f.line, f.column, f.rule_id))


def fix_touchpoints(tree: Path, exclude_globs: Iterable[str], disabled_rules: set[str]) -> list[AppliedFix]:
    """Apply the safe fixes of these rules to ``tree`` in place (the hipify stage's translated copy)."""
    return apply_fixes(tree, scan_touchpoints(tree, exclude_globs), disabled_rules)


@dataclass
class PythonReadiness:
    touchpoints: int = 0
    fixed_automatically: int = 0
    hand_work: int = 0  # errors and warnings without a safe fix
    informational: int = 0
    by_rule: dict[str, int] = field(default_factory=dict)
    rocm_files_shipped: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, object]:
        return asdict(self)

    def summary(self) -> str:
        shipped = f"; already ships {', '.join(self.rocm_files_shipped[:3])}" if self.rocm_files_shipped else ""
        return (f"{self.touchpoints} GPU touchpoints in Python and configs ({self.fixed_automatically} fixed "
                f"automatically, {self.hand_work} need hand work, {self.informational} to check){shipped}")


def python_readiness(findings: list[Finding], rocm_files: list[str]) -> PythonReadiness:
    readiness = PythonReadiness(touchpoints=len(findings), rocm_files_shipped=rocm_files)
    for finding in findings:
        if finding.fixable:
            readiness.fixed_automatically += 1
        elif finding.severity == "info":
            readiness.informational += 1
        else:
            readiness.hand_work += 1
    readiness.by_rule = dict(Counter(f.rule_id for f in findings).most_common())
    return readiness


def rocm_files_shipped(tree: Path, exclude_globs: Iterable[str]) -> list[str]:
    """Dockerfiles built FROM a rocm/ image, and ROCm requirement files, already in the repository."""
    found = []
    for tree_file in walk_tree(tree, exclude_globs):
        kind = build_kind(tree_file.rel)
        if kind == "dockerfile" and tree_file.size <= MAX_FILE_BYTES:
            text = read_text(tree_file) or ""
            if _ROCM_FROM.search(text):
                found.append(tree_file.rel)
        elif kind == "requirements" and "rocm" in tree_file.name.lower():
            found.append(tree_file.rel)
    return found

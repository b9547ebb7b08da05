"""Pick the lines of a failed stage's log that look like errors, for "add to notebook".

Compiler and linker errors come first; generic "failed" lines (progress summaries) only after them.
"""
from __future__ import annotations

import re

from migrator.projects.logs import log_tail
from migrator.projects.models import Stage

STRONG = re.compile(
    r"\b(error:|fatal error|undefined reference|cannot find|no such file|hipError\w+|cudaError\w+|"
    r"segmentation fault|traceback|\w+Error:)",
    re.IGNORECASE,
)
WEAK = re.compile(r"\b(error|fatal|failed|exception)\b", re.IGNORECASE)
SCAN_BYTES = 2 * 1024 * 1024


def failing_lines(stage: Stage, limit: int = 30) -> list[str]:
    text, _, _ = log_tail(stage, SCAN_BYTES)
    strong: dict[str, None] = {}
    weak: dict[str, None] = {}
    for raw in text.splitlines():
        line = raw.strip()[:1000]
        if not line or line.startswith("[migrator]"):
            continue
        if STRONG.search(line):
            strong.setdefault(line, None)
        elif WEAK.search(line):
            weak.setdefault(line, None)
        if len(strong) >= limit:
            break
    return (list(strong) + list(weak))[:limit]

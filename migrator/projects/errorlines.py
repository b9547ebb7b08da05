"""Pick the lines of a failed stage's log that look like errors, for "add to notebook"."""
from __future__ import annotations

import re

from migrator.projects.logs import log_tail
from migrator.projects.models import Stage

ERROR_LINE = re.compile(
    r"\b(error|fatal|undefined reference|cannot find|no such file|hipError\w+|cudaError\w+|"
    r"segmentation fault|traceback|exception|failed)\b",
    re.IGNORECASE,
)
SCAN_BYTES = 2 * 1024 * 1024


def failing_lines(stage: Stage, limit: int = 30) -> list[str]:
    text, _, _ = log_tail(stage, SCAN_BYTES)
    seen: dict[str, None] = {}
    for line in text.splitlines():
        line = line.strip()
        if line and not line.startswith("[migrator]") and ERROR_LINE.search(line):
            seen.setdefault(line[:1000], None)
            if len(seen) >= limit:
                break
    return list(seen)

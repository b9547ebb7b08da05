"""The lines of a failed stage's log that state errors, for "Failing log lines" and "add to notebook";
warnings counted beside them and folded, never mixed in.

Error lines are chosen as the notebook chooses them (``migrator.lib.signatures.failure_lines``: compiler,
linker, CMake and make errors, runtime error codes; a tool's probing traceback left out of build logs,
kept for smoke). A line is a warning when the first severity it states is ``warning``
(``a.cu:3:1: warning: ... [-Wfoo]``, ``CMake Warning``, ``ld: warning: ...``), even where a later word
says "error" (``-Werror`` names, "error-prone").
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from migrator.lib.signatures.failure_lines import own_error_lines
from migrator.projects.logs import log_tail
from migrator.projects.models import Stage

SCAN_BYTES = 2 * 1024 * 1024
_SEVERITY = re.compile(r"\b(?:(fatal error|error)|(warning))\b\s*(?::|\()|\bCMake (?:(Error)|(Warning))\b", re.IGNORECASE)
SHOWN_WARNINGS = 50


@dataclass(frozen=True)
class FailingLines:
    errors: list[str]  # at most ``limit``, in log order, each once
    warnings: list[str]  # the first SHOWN_WARNINGS warning lines, each once
    warning_count: int  # all warning lines (repeats included), as the log printed them


def is_warning(line: str) -> bool:
    found = _SEVERITY.search(line)
    return found is not None and bool(found.group(2) or found.group(4))


def failing_lines(stage: Stage, limit: int = 30) -> FailingLines:
    text, _, _ = log_tail(stage, SCAN_BYTES)
    warnings: dict[str, None] = {}
    count = 0
    for raw in text.splitlines():
        if is_warning(raw):
            count += 1
            if len(warnings) < SHOWN_WARNINGS:
                warnings.setdefault(raw.strip()[:1000], None)
    errors = [line for line in own_error_lines(text, keep_tracebacks=stage.name == "smoke") if not is_warning(line)]
    return FailingLines(errors[:limit], list(warnings), count)

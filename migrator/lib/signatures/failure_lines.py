"""The lines of a failed stage that state its failure: what the notebook matches and fingerprints.

A build log holds much that is not the failure: CMake's chatter, warnings, and tools that print a
harmless Python traceback while probing for GPUs (``rocm_agent_enumerator`` about
``/sys/class/kfd`` during CMake's configure step). Matching the whole log let such noise outrank the
real error. Here only error lines count: compiler, linker, CMake and make errors, runtime error
codes, and the stage's own structured diagnostics. Tracebacks are dropped from build logs (a tool's
crash while probing is not the build's failure) but kept for the smoke stage, where the program's
own exception is the failure.
"""
from __future__ import annotations

import re
from collections.abc import Iterable

MAX_LINES = 400
MAX_CHARS = 1000
ERROR_LINE = re.compile(
    r"\b(?:fatal )?error\b\s*(?::|\(|\d)|\bCMake Error\b|\bundefined (?:reference|symbol)\b|\bcannot find -l|"
    r"\bunable to find library\b|\bNo rule to make target\b|\*\*\* \[|\bhipError\w+|\bcudaError\w+|"
    r"\bmultiple definition of\b|\bduplicate symbol\b|: (?:No such file or directory|command not found)$|"
    r"\bSegmentation fault\b|\bAborted\b|\bcore dumped\b|\bStop\.$",
    re.IGNORECASE,
)
# Lines that only report that an error happened (the cause is on another line): matched, never fingerprinted.
CONSEQUENCE = re.compile(
    r"linker command failed with exit code|command failed with exit code \d+ \(use -v|\b\d+ errors? generated\b|"
    r"^(?:g?make)(?:\[\d+\])?: \*\*\* |^ninja: build stopped|Configuring incomplete, errors occurred|"
    r"CMake Generate step failed|^CMake Error at [^ ]+ \(\w+\):$",
    re.IGNORECASE,
)
_TRACEBACK = "Traceback (most recent call last):"
_CMAKE_BLOCK = re.compile(r"^CMake Error\b")
MAX_BLOCK_LINES = 30


def _without_tracebacks(lines: Iterable[str]) -> list[str]:
    """Drop each ``Traceback (most recent call last):`` block, its exception line included."""
    kept: list[str] = []
    inside = False
    for line in lines:
        if line.strip().startswith(_TRACEBACK):
            inside = True
            continue
        if inside:
            if line.startswith((" ", "\t")) or not line.strip():
                continue
            inside = False  # the exception line ("FileNotFoundError: ...") closes the block
            continue
        kept.append(line)
    return kept


def _error_lines(lines: list[str]) -> list[str]:
    """Lines that state an error; a ``CMake Error`` keeps its indented message lines with it."""
    chosen: list[str] = []
    block = 0
    for raw in lines:
        if _CMAKE_BLOCK.match(raw):
            chosen.append(raw)
            block = MAX_BLOCK_LINES
        elif block and (raw.startswith((" ", "\t")) or not raw.strip()):
            block -= 1
            chosen.append(raw)
        else:
            block = 0
            if ERROR_LINE.search(raw):
                chosen.append(raw)
    return chosen


def is_consequence(line: str) -> bool:
    return CONSEQUENCE.search(line.strip()) is not None


def own_error_lines(log: str, diagnostics: Iterable[str] = (), *, keep_tracebacks: bool = False) -> list[str]:
    """The failure's own error lines: structured diagnostics first, then error lines of the log."""
    lines = log.splitlines() if keep_tracebacks else _without_tracebacks(log.splitlines())
    chosen: dict[str, None] = {}
    for line in [*diagnostics, *_error_lines(lines)]:
        text = line.strip()[:MAX_CHARS]
        if text and not text.startswith("[migrator]"):
            chosen.setdefault(text, None)
        if len(chosen) >= MAX_LINES:
            break
    return list(chosen)

"""Signatures proposed from a failing log line: the "add to notebook" button's prefill.

A raw log line carries what differs between machines and runs (colour codes, progress counters,
time stamps, the file:line:column location, a tool's full path). The proposal drops those so the
text that remains names the failure and, normalised, matches the same failure in other logs.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from migrator.lib.signatures.failure_lines import ERROR_LINE, is_consequence
from migrator.lib.signatures.validate import MAX_PATTERN_LENGTH, MIN_TEXT_LENGTH

_ANSI_ESCAPE = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
_LOG_PREFIXES = [
    re.compile(r"^\[\s*\d+%\]\s*"),  # CMake/Ninja progress: "[ 42%] "
    re.compile(r"^\[\d+/\d+\]\s*"),  # Ninja: "[12/40] "
    re.compile(r"^\d{4}-\d\d-\d\d[T ][\d:.,]+Z?\s*"),  # timestamps
    # Compiler location "path/file.cu:3:10: " or "file.cu(3): "
    re.compile(r"^[^\s:]+(?::\d+){1,2}:\s*"),
    re.compile(r"^[^\s:(]+\(\d+\):\s*"),
    # Linker location "u.cpp:(.text+0x27): " or "u.o: "
    re.compile(r"^[^\s:]+:\(\.[^)]*\):\s*"),
    re.compile(r"^[^\s:]+\.(?:o|obj|a|so):\s*"),
]
_TOOL_PATH = re.compile(r"^(?:\S*/)([^\s/:]+:\s)")
# What varies between runs of the same failure at the end of a line: g++'s guesses, warning flags, hints.
_VARYING_TAIL = re.compile(r"(?:; did you mean [^;]*\?|\s+\[-W[\w,=-]+\]|\s+\(use -v to see invocation\)|\s+Stop\.)$")
# Lines that only head or report a failure stated elsewhere (CMake's "at file:line (command):" header,
# "Error 1", "N errors generated"): a signature written from them would match every failure.
_HEADER = re.compile(r"^CMake Error(?: \(dev\))? (?:at|in) [^ ]+(?: \(\w+\))?:$|^compilation terminated\.$|"
                     r"ld returned \d+ exit status$|^ninja: build stopped")
SPECIFIC_WINDOW = 20


def signature_from_log_line(line: str) -> str:
    """Propose a text signature from a raw failing log line ("add to notebook" prefill).

    Drops colour codes, progress and time stamps, and the file:line:column location, and
    shortens a tool path to its name: "/usr/bin/ld: cannot find -lcublas" -> "ld: cannot
    find -lcublas". The result is capped at the signature length limit.
    """
    text = _ANSI_ESCAPE.sub("", line).strip()
    for prefix in _LOG_PREFIXES:
        stripped = prefix.sub("", text, count=1)
        if len(stripped.strip()) >= MIN_TEXT_LENGTH:
            text = stripped
    text = _TOOL_PATH.sub(r"\1", text, count=1)
    text = _VARYING_TAIL.sub("", text)
    return " ".join(text.split())[:MAX_PATTERN_LENGTH]


def _general(line: str) -> bool:
    text = line.strip()
    return is_consequence(text) or _HEADER.search(text) is not None


def specific_signature(line: str, log_lines: Sequence[str] = ()) -> str:
    """The proposal for ``line``, or, when the line only heads or reports a failure stated on another
    line (a CMake header, make's ``Error 1``, ``linker command failed``), for that line: the
    message under a CMake header, else the nearest error line before it in ``log_lines``."""
    if not _general(line):
        return signature_from_log_line(line)
    stripped = [raw.rstrip() for raw in log_lines]
    at = next((i for i, raw in enumerate(stripped) if raw.strip() == line.strip()), None)
    if at is None:
        return signature_from_log_line(line)
    if line.strip().startswith("CMake Error"):
        below = [raw.strip() for raw in stripped[at + 1:at + 1 + SPECIFIC_WINDOW] if raw.startswith((" ", "\t"))]
        if below and below[0]:
            return signature_from_log_line(below[0])
    for raw in reversed(stripped[max(0, at - SPECIFIC_WINDOW):at]):
        if ERROR_LINE.search(raw) and not _general(raw):
            return signature_from_log_line(raw)
    return signature_from_log_line(line)

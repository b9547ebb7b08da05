"""Signatures proposed from a failing log line: the "add to notebook" button's prefill.

A raw log line carries what differs between machines and runs (colour codes, progress counters,
time stamps, the file:line:column location, a tool's full path). The proposal drops those so the
text that remains names the failure and, normalised, matches the same failure in other logs.
"""

from __future__ import annotations

import re

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
    return " ".join(text.split())[:MAX_PATTERN_LENGTH]

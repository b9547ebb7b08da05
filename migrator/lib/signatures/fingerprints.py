"""Fingerprints of failing diagnostics that no notebook entry explains yet.

Two teams' logs of the same failure differ in paths, line numbers, identifiers and versions; the
fingerprint removes those so the same failure counts once however often, and wherever, it was seen:

- a leading ``file:line:col:`` location and tool paths go (``/usr/bin/ld:`` becomes ``ld:``);
- absolute paths keep only their last component (``/opt/x/include/foo.h`` -> ``foo.h``);
- quoted identifiers become ``'<id>'`` (quoted header names and flags stay: they name what is wrong);
- mangled C++ symbols become ``<sym>``, hexadecimal numbers ``<hex>``, versions ``<v>``, numbers ``<n>``;
- case and runs of spaces are folded.
"""
from __future__ import annotations

import hashlib
import re

_LOCATION = re.compile(r"^\s*(?:[^\s:]+(?::\d+){1,2}:|[^\s:(]+\(\d+\):|[^\s:]+:\(\.[^)]*\):)\s*")
_TOOL = re.compile(r"^(?:\S*/)([^\s/:]+:\s)")
_PATH = re.compile(r"(?<![\w.])(?:~|\.{1,2})?/(?:[\w.+-]+/)*([\w.+-]+)")  # absolute or ./ paths
_IDENTIFIER = re.compile(r"^[A-Za-z_][\w:<>, *&]*$")
_QUOTED = re.compile(r"['\"‘’“”`]([^'\"‘’“”`]{1,200})['\"‘’“”`]")
_MANGLED = re.compile(r"\b_Z\w+")
_HEX = re.compile(r"\b0x[0-9a-f]+\b", re.IGNORECASE)
_VERSION = re.compile(r"\b\d+(?:\.\d+)+\w*")
_NUMBER = re.compile(r"\d+")
_SPACES = re.compile(r"\s+")


def _quoted(match: re.Match[str]) -> str:
    inner = match.group(1)
    return "'<id>'" if _IDENTIFIER.match(inner) else f"'{inner}'"


def normalise_failure(line: str) -> str:
    text = _TOOL.sub(r"\1", _LOCATION.sub("", line.strip(), count=1), count=1)
    text = _PATH.sub(r"\1", text)
    text = _QUOTED.sub(_quoted, text)
    text = _MANGLED.sub("<sym>", text)
    text = _HEX.sub("<hex>", text)
    text = _VERSION.sub("<v>", text)
    text = _NUMBER.sub("<n>", text)
    return _SPACES.sub(" ", text).strip().lower()[:500]


def fingerprint(line: str) -> tuple[str, str]:
    """(a 20-character key, the normalised text it was made from)."""
    normalised = normalise_failure(line)
    return hashlib.sha256(normalised.encode()).hexdigest()[:20], normalised

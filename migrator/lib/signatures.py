"""Error-notebook signatures: validation, fast matching against build logs, proposals.

A notebook entry has one or more signatures, each of kind "text" or "regex". Both match
within a single log line.

Regex signatures
    Compiled with the `regex` package, case-insensitive (VERSION0 syntax, as `re`), searched in
    the raw line. Every search carries a timeout; a regex that times out is reported as skipped.

Text signatures and normalisation
    Plain text is compared after `normalise_text` has been applied to both the signature and
    the log line, so a signature written from one machine matches logs from another:

    1. lowercase;
    2. quotes ' " ` ‘ ’ “ ” ´ all become ';
    3. directory prefixes are dropped, keeping the last path component:
       "/usr/bin/ld:" -> "ld:", "src/a/b.cu:3:10:" -> "b.cu:3:10:"; a -I or -L flag in front
       of a path stays as its own word ("-I/usr/local/cuda/include" -> "-i include");
    4. every number, dotted versions included, becomes one placeholder character (U+E000):
       "foo.cu:12:3:" and "foo.cu:99:1:" compare equal, so do "libcudart.so.11.0" and
       "libcudart.so.12", and so do "+cu118" and "+cu121" (digits inside words count too;
       "gfx90a" and "gfx942" still differ by the trailing "a");
    5. runs of whitespace become one space; leading and trailing whitespace go.

    The text signature matches a line when its normalised form is a substring of the line's
    normalised form. So "cannot find -lcublas" matches
    "/usr/bin/ld: cannot find -lcublas: No such file or directory", and
    "fatal error: 'cuda_runtime.h' file not found" matches
    "src/a/b.cu:3:10: fatal error: \"cuda_runtime.h\" file not found".
    Because numbers and directories are ignored, write the words that identify the error; to
    pin a path or a version, use a regex.

Speed
    `compile_signatures` gives every signature up to two requirements: literals that every
    matching line must contain (text: pieces of the normalised text that survive in the raw
    line; regex: literal runs found by walking the parsed pattern; see `sig_literals`), chosen
    to be long and shared by few signatures. One Aho-Corasick pass over the lowercased log
    finds the lines holding each literal; a signature's candidate lines are the intersection
    for its requirements, and only those lines are confirmed (text: a cheap piece check, then
    full normalisation; regex: a search with a timeout). Regexes without any literal run over
    the whole log once, with a timeout. `time_budget_s` bounds the regex work of one call: a
    regex that times out, or that is reached after the budget is spent, is reported in
    `MatchResults.skipped`. bench/match_bench.py measures it all.
"""

from __future__ import annotations

import re

from migrator.lib.sig_matcher import (
    EntryMatch,
    Matcher,
    MatchResults,
    SignatureSpec,
    SkippedSignature,
    compile_signatures,
)
from migrator.lib.sig_normalise import normalise_text
from migrator.lib.sig_seed import SeedEntry, SeedError, SeedSignature, load_seed_entries
from migrator.lib.sig_validate import (
    MAX_PATTERN_LENGTH,
    MIN_TEXT_LENGTH,
    SIGNATURE_KINDS,
    SignatureError,
    SignatureKind,
    validate_signature,
)

__all__ = [
    "SIGNATURE_KINDS",
    "EntryMatch",
    "MatchResults",
    "Matcher",
    "SeedEntry",
    "SeedError",
    "SeedSignature",
    "SignatureError",
    "SignatureKind",
    "SignatureSpec",
    "SkippedSignature",
    "compile_signatures",
    "load_seed_entries",
    "normalise_text",
    "signature_from_log_line",
    "validate_signature",
]

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

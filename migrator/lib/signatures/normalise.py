"""Normalisation shared by plain-text signatures and the log lines they are matched against.

A notebook entry has one or more signatures, each of kind "text" or "regex"; both match within a
single log line. Plain text is compared after `normalise_text` has been applied to both the
signature and the log line, so a signature written from one machine's log matches another
machine's log even when paths, line numbers and library versions differ:

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
"""

from __future__ import annotations

import re

# Stands for any number (a run of digits, dotted versions included). A private-use character,
# so it never occurs in real logs and cannot be forged by them.
NUMBER_PLACEHOLDER = "\ue000"

# Characters that may form a path component. The same class delimits prefilter fragments
# (see `invariant_fragments`), which is what makes those fragments safe.
_COMPONENT_CHARS = r"\w.+~@\-"
_QUOTES = "'\"`\u2018\u2019\u201c\u201d\u00b4"
QUOTE_CHARS: tuple[str, ...] = tuple(_QUOTES)

# The look-behind anchors a path at the start of a token; without it the engine would retry
# from every character of every word (quadratic on long lines).
_PATH_PREFIX = re.compile(
    rf"(?<![{_COMPONENT_CHARS}])(-[il])?(?:[{_COMPONENT_CHARS}]*/)+"
)
_NUMBER = re.compile(r"\d+(?:\.\d+)*")
_WHITESPACE = re.compile(r"\s+")
_FRAGMENT = re.compile(rf"[{_COMPONENT_CHARS}]+")


def _drop_path_prefix(match: re.Match[str]) -> str:
    # Keep a -I / -L flag as its own word: "-I/usr/local/cuda/include" -> "-i include".
    flag = match.group(1)
    return f"{flag} " if flag else ""


def normalise_text(text: str) -> str:
    """Return the comparison form of a signature or of one log line."""
    lowered = text.lower()
    for quote in _QUOTES[1:]:
        if quote in lowered:  # a membership test is much cheaper than str.translate
            lowered = lowered.replace(quote, "'")
    without_dirs = _PATH_PREFIX.sub(_drop_path_prefix, lowered)
    numbers_hidden = _NUMBER.sub(NUMBER_PLACEHOLDER, without_dirs)
    return _WHITESPACE.sub(" ", numbers_hidden).strip()


def invariant_fragments(normalised: str) -> list[str]:
    """Fragments of a normalised signature that the lowercased raw log line must contain.

    A fragment is a maximal run of path-component characters without a number placeholder.
    Normalisation never splices such a run together from separate parts of the raw line:
    a removed directory prefix always follows a character outside the class, and
    placeholders, quotes and whitespace are excluded. So if the normalised line contains the
    normalised signature, the lowercased raw line contains every fragment verbatim.
    """
    return list(_FRAGMENT.findall(normalised.replace(NUMBER_PLACEHOLDER, " ")))


def quick_form(lowered_line: str) -> str:
    """A cheap partial normalisation of an already lowercased line: quotes and whitespace only."""
    for quote in _QUOTES[1:]:
        if quote in lowered_line:
            lowered_line = lowered_line.replace(quote, "'")
    return " ".join(lowered_line.split())


def required_pieces(normalised: str) -> list[str]:
    """Substrings that `quick_form` of a line must contain when the normalised line matches.

    Each piece is a fragment (see `invariant_fragments`) followed by the run of punctuation,
    quotes and spaces after it in the signature. Normalisation never removes or changes the
    characters right after a component run (a removed directory prefix begins at the start of
    a run, never after one), so the piece is in the quick form verbatim. Only the characters
    before a fragment can differ, which is why pieces never extend to the left. A -i/-l flag is
    not extended: its following space may have been inserted by the path rule.
    """
    pieces: list[str] = []
    for match in _PIECE.finditer(normalised):
        fragment, tail = match.group(1), match.group(2)
        if fragment in ("-i", "-l") and tail.startswith(" "):
            tail = ""
        pieces.append(fragment + tail)
    return pieces


_PIECE = re.compile(
    rf"([{_COMPONENT_CHARS}]+)([^{_COMPONENT_CHARS}{NUMBER_PLACEHOLDER}/]*)"
)

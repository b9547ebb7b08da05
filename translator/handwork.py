"""Constructs a translation leaves for a person: inline PTX (``asm(...)``, ``mma.sync`` included) and
tensor-core code (WMMA), found in the translated text, so that every rewrite that ports one
(an inline-PTX idiom turned into a builtin, WMMA into rocWMMA) takes it off the list by itself.

``sites(text)`` finds them in any text (the scan counts the original's with it too); ``left(out,
original)`` gives those of a translation at their original lines.
"""
from __future__ import annotations

import re
from typing import TypedDict

PATTERNS = {
    "inline-ptx": re.compile(r"\b(?:asm|__asm__|__asm)\s*(?:volatile\s*|__volatile__\s*)?\("),
    "tensor-cores": re.compile(r"\b(?:nvcuda::)?wmma::\w+"),  # PTX mma.sync is inside asm: an inline-PTX site
}
HINTS = {"inline-ptx": "asm", "tensor-cores": "mma"}
_COMMENT_OR_STRING = re.compile(r"""//[^\n]*|/\*.*?\*/|"(?:\\.|[^"\\\n])*\"""", re.DOTALL)
NOTES = {
    "inline-ptx": "inline PTX has no HIP path: rewrite it with HIP builtins or AMDGCN assembly",
    "tensor-cores": "WMMA/MMA needs rocWMMA or MFMA builtins",
}


class HandWorkData(TypedDict):
    kind: str  # inline-ptx, tensor-cores
    line: int  # 1-based, in the original source
    text: str  # the line, stripped (at most 160 characters)


def sites(text: str) -> list[tuple[str, int, str]]:
    """(kind, line, line text) of each site: one per ``asm`` statement, one per line using WMMA/MMA."""
    found: list[tuple[str, int, str]] = []
    kinds = [kind for kind, hint in HINTS.items() if hint in text]
    if not kinds:
        return found
    code = _COMMENT_OR_STRING.sub(_blank, text)
    lines = text.splitlines()
    for kind in kinds:
        lines_seen: set[int] = set()
        for match in PATTERNS[kind].finditer(code):
            line = code.count("\n", 0, match.start()) + 1
            if kind == "tensor-cores" and line in lines_seen:
                continue
            lines_seen.add(line)
            found.append((kind, line, lines[line - 1].strip()[:160] if line <= len(lines) else ""))
    return sorted(found, key=lambda site: site[1])


def _blank(match: re.Match[str]) -> str:
    """Comments and strings become spaces (same offsets and lines)."""
    token = match.group()
    if token.startswith('"'):
        return '"' + " " * (len(token) - 2) + '"'
    return re.sub(r"[^\n]", " ", token)


def left(out: str, original: str) -> list[HandWorkData]:
    """The sites of the translated ``out``, at the line of ``original`` they come from."""
    found = sites(out)
    if not found:
        return []
    original_lines = [line.strip() for line in original.splitlines()]
    return [HandWorkData(kind=kind, line=_original_line(original_lines, line, text), text=text)
            for kind, line, text in found]


def _original_line(original_lines: list[str], translated_line: int, text: str, reach: int = 200) -> int:
    """The nearest original line with the same text (the translation adds or drops a few include lines)."""
    index = translated_line - 1
    for distance in range(reach):
        for candidate in (index - distance, index + distance):
            if 0 <= candidate < len(original_lines) and original_lines[candidate][:160] == text:
                return candidate + 1
    return min(max(translated_line, 1), max(len(original_lines), 1))

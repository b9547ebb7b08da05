"""Where device code is: the bodies of ``__global__``/``__device__`` functions (and of macros that
expand to those qualifiers), found by matching parentheses and braces while stepping over comments
and literals. It reads the raw text, so its cost follows the size of the device code, not the file."""
from __future__ import annotations

import functools
import re
from bisect import bisect_right
from collections.abc import Iterable
from typing import NamedTuple

_SKIPPED = r"""//[^\n]*|/\*.*?(?:\*/|\Z)|"(?:\\.|[^"\\\n])*"|'(?:\\.|[^'\\\n])*'"""
_HEAD = re.compile(_SKIPPED + r"|[(){};=]", re.DOTALL)
_BRACES = re.compile(_SKIPPED + r"|[{}]", re.DOTALL)


class Region(NamedTuple):
    head: int  # where the declaration starts (return type, qualifiers)
    open: int  # offset of the body's "{"
    close: int  # offset of the matching "}" (len(text) when unbalanced)


@functools.lru_cache(maxsize=32)
def qualifier_pattern(macros: frozenset[str]) -> re.Pattern[str]:
    """``__global__``, ``__device__`` and the macros standing for them. Plain alternatives (no leading \b), so
    the regex engine skips ahead fast; ``region_at`` checks the character before."""
    names = sorted({"__global__", "__device__", *macros}, key=lambda n: (-len(n), n))
    return re.compile("(?:" + "|".join(map(re.escape, names)) + r")(?!\w)")


_BLOCK_COMMENT = re.compile(r"/\*.*?(?:\*/|\Z)", re.DOTALL)


def device_regions(text: str, qualifiers: re.Pattern[str],
                   comments: list[tuple[int, int]] | None = None) -> list[Region]:
    """Every device function body of ``text``, in order."""
    regions: list[Region] = []
    covered = -1
    comments = block_comments(text) if comments is None else comments
    for match in qualifiers.finditer(text):
        if match.start() < covered:
            continue
        region = region_at(text, match.start(), match.end(), comments)
        if region is not None:
            regions.append(region)
            covered = region.close
    return regions


def region_at(text: str, qualifier: int, end: int, comments: list[tuple[int, int]]) -> Region | None:
    """The function whose qualifier (``__device__``) spans [qualifier, end), or None (a variable, a declaration)."""
    if qualifier and (text[qualifier - 1].isalnum() or text[qualifier - 1] == "_") or _not_code(text, qualifier, comments):
        return None
    opening = _body_start(text, end)
    if opening < 0:
        return None
    return Region(_statement_start(text, qualifier), opening, _matching_brace(text, opening))


def block_comments(text: str) -> list[tuple[int, int]]:
    return [m.span() for m in _BLOCK_COMMENT.finditer(text)] if "/*" in text else []


def _not_code(text: str, position: int, comments: list[tuple[int, int]]) -> bool:
    """In a comment or on a preprocessor line (``#define HD __host__ __device__``)."""
    line_start = text.rfind("\n", 0, position) + 1
    before = text[line_start:position]
    if before.lstrip().startswith("#") or "//" in before:
        return True
    index = bisect_right(comments, (position, len(text))) - 1
    return index >= 0 and comments[index][0] <= position < comments[index][1]


def _statement_start(text: str, position: int) -> int:
    floor = max(0, position - 4000)  # a declaration head is never longer
    start = max(text.rfind(";", floor, position), text.rfind("}", floor, position), text.rfind("{", floor, position),
                text.rfind(">\n", floor, position))  # after a template header on its own line
    return max(start + 1, floor)


def _body_start(text: str, position: int) -> int:
    """Offset of the function body's "{" after a qualifier, or -1 for a declaration or a variable."""
    depth = 0
    saw_parameters = False
    for match in _HEAD.finditer(text, position):
        char = match.group()
        if len(char) > 1 or char in "\"'/":
            continue  # a comment or a literal
        if char == "(":
            depth += 1
        elif char == ")":
            depth -= 1
            saw_parameters = saw_parameters or depth == 0
        elif depth == 0:
            return match.start() if char == "{" and saw_parameters else -1
    return -1


def _matching_brace(text: str, opening: int) -> int:
    depth = 0
    for match in _BRACES.finditer(text, opening):
        char = match.group()
        if len(char) > 1 or char not in "{}":
            continue
        depth += 1 if char == "{" else -1
        if depth == 0:
            return match.start()
    return len(text)


def device_code_in(text: str, macros: Iterable[str]) -> bool:
    pattern = qualifier_pattern(frozenset(macros))
    return any(m.start() == 0 or not (text[m.start() - 1].isalnum() or text[m.start() - 1] == "_")
               for m in pattern.finditer(text))

"""Preprocessor branches that are not taken (hipify-clang's ``--skip-excluded-preprocessor-conditional-blocks``).

The file is read alone: a macro counts as defined when the file ``#define``s it before the test (and
has not ``#undef``ed it), when it is given as an option (``-DNAME=VALUE``), or when nvcc defines it
(``__CUDACC__``, the CUDA version macros). Anything else is undefined, as in a translation unit
without the project's other headers, except version macros of libraries (``CUSPARSE_VERSION``): their
values are not known here. A condition that cannot be evaluated keeps its branch active.
"""
from __future__ import annotations

import bisect
import re
from collections.abc import Mapping

DIRECTIVE = re.compile(r"^[ \t]*#[ \t]*(if|ifdef|ifndef|elif|else|endif|define|undef)\b([^\n\\]*(?:\\\n[^\n\\]*)*)",
                       re.MULTILINE)
DEFINE = re.compile(r"\s*(\w+)(?:\s+(.*))?", re.DOTALL)
EXPRESSION_TOKEN = re.compile(
    r"\s*(?:(defined)\s*\(\s*(\w+)\s*\)|(defined)\s+(\w+)|(0[xX][0-9a-fA-F]+|\d+)[uUlL]*|([A-Za-z_]\w*)"
    r"|(&&|\|\||==|!=|<=|>=|<<|>>|[()!<>+\-*/%~&|^]))")
UNKNOWN_VERSION = re.compile(r"VERSION|_VER_|_VER$")
PYTHON_OPERATORS = {"&&": " and ", "||": " or ", "!": " not ", "/": "//"}


class InactiveRegions:
    """Character ranges of ``text`` inside branches that are not taken."""

    def __init__(self, ranges: list[tuple[int, int]]) -> None:
        self.starts = [start for start, _ in ranges]
        self.ranges = ranges

    def __contains__(self, position: object) -> bool:
        if not isinstance(position, int) or not self.ranges:
            return False
        index = bisect.bisect_right(self.starts, position) - 1
        return index >= 0 and self.ranges[index][0] <= position < self.ranges[index][1]


def inactive_regions(text: str, predefined: Mapping[str, str]) -> InactiveRegions:
    macros = dict(predefined)
    ranges: list[tuple[int, int]] = []
    stack: list[tuple[bool, bool, int]] = []  # (parent active, a branch was taken, start of inactive part)
    active = True
    for match in DIRECTIVE.finditer(text):
        keyword, rest = match.group(1), match.group(2).replace("\\\n", " ")
        if keyword in ("define", "undef"):
            if active:
                _define(macros, keyword, rest)
            continue
        if keyword in ("if", "ifdef", "ifndef"):
            taken = active and _condition(keyword, rest, macros)
            stack.append((active, taken, match.end()))
            active = taken
        elif keyword in ("elif", "else") and stack:
            parent, taken_before, since = stack[-1]
            if active:
                since = match.end()
            elif parent:
                ranges.append((since, match.start()))
                since = match.end()
            now = parent and not taken_before and (keyword == "else" or _condition("if", rest, macros))
            stack[-1] = (parent, taken_before or now, since)
            active = now
        elif keyword == "endif" and stack:
            parent, _taken, since = stack.pop()
            if parent and not active:
                ranges.append((since, match.start()))
            active = parent
    return InactiveRegions(sorted(ranges))


def _define(macros: dict[str, str], keyword: str, rest: str) -> None:
    found = DEFINE.match(rest)
    if found is None:
        return
    if keyword == "undef":
        macros.pop(found.group(1), None)
    else:
        macros[found.group(1)] = (found.group(2) or "").strip() or "1"


def _condition(keyword: str, rest: str, macros: Mapping[str, str]) -> bool:
    if keyword in ("ifdef", "ifndef"):
        name = rest.split("//")[0].split("/*")[0].strip()
        return (name in macros) == (keyword == "ifdef")
    value = evaluate(rest.split("//")[0], macros)
    return True if value is None else value != 0


def evaluate(expression: str, macros: Mapping[str, str], depth: int = 0) -> int | None:
    """The integer value of a ``#if`` expression; None when it is not understood."""
    pieces: list[str] = []
    position = 0
    expression = re.sub(r"/\*.*?\*/", " ", expression).strip()
    while position < len(expression):
        match = EXPRESSION_TOKEN.match(expression, position)
        if match is None or match.end() == position:
            return None
        position = match.end()
        name = match.group(2) or match.group(4)
        if name is not None:
            pieces.append("1" if name in macros else "0")
        elif match.group(5) is not None:
            pieces.append(str(int(match.group(5), 0)))
        elif match.group(6) is not None:
            value = macros.get(match.group(6))
            if value is None and UNKNOWN_VERSION.search(match.group(6)):
                return None
            inner = evaluate(value, macros, depth + 1) if value is not None and depth < 8 else 0
            if inner is None:
                return None
            pieces.append(str(inner))
        else:
            pieces.append(PYTHON_OPERATORS.get(match.group(7), match.group(7)))
    try:
        result = eval("".join(pieces) or "0", {"__builtins__": {}}, {})  # only ints and operators reach here
    except (SyntaxError, ZeroDivisionError, TypeError, ValueError):
        return None
    return int(result)

"""A small C++ lexer for the hazard scan: comments and literals blanked, then tokens with offsets.

``blank`` keeps every offset and newline of the text but turns comments into spaces and the inside
of string and character literals into spaces (the quotes stay), so later regex searches and brace
matching on the result never see code that is not code. ``tokenize`` splits a blanked span into
tokens (identifiers, numbers, punctuators), dropping preprocessor lines. The engine's own scanner
(``translator.source``) only surfaces CUDA names; the hazard scan needs every token of the code it
looks at, so it has this one, run only on device-function bodies that contain a trigger.
"""
from __future__ import annotations

import re

_LITERALS = re.compile(r"""//[^\n]*|/\*.*?(?:\*/|\Z)|"(?:\\.|[^"\\\n])*"|'(?:\\.|[^'\\\n])*'""", re.DOTALL)
_NOT_NEWLINE = re.compile(r"[^\n]")
_TOKEN = re.compile(
    r"(?m)^[ \t]*\#(?:[^\n\\]|\\.)*"  # a preprocessor line (with continuations): dropped
    r"|([A-Za-z_]\w*"
    r"|0[xX][0-9a-fA-F']+[uUlL]*|(?:\d[\d']*\.?[\d']*|\.\d[\d']*)(?:[eE][+-]?\d+)?[uUlLfF]*"
    r"|->|::|<<=|>>=|<<|>>|<=|>=|==|!=|&&|\|\||\+\+|--|[-+*/%&|^]="
    r"|[^\s\w])",
    re.DOTALL,
)


def _blank_match(match: re.Match[str]) -> str:
    token = match.group()
    if token[0] in "\"'":
        return token[0] + " " * (len(token) - 2) + token[-1]
    return _NOT_NEWLINE.sub(" ", token) if "\n" in token else " " * len(token)


def blank(text: str) -> str:
    """``text`` with comments and literal contents replaced by spaces (same length, same lines)."""
    return _LITERALS.sub(_blank_match, text)


def tokenize(blanked: str, start: int = 0, end: int | None = None) -> tuple[list[str], list[int]]:
    """The tokens of ``blanked[start:end]`` and their offsets in ``blanked``."""
    spans = [m.span(1) for m in _TOKEN.finditer(blanked, start, len(blanked) if end is None else end)]
    offsets = [first for first, _ in spans if first >= 0]  # a preprocessor line has no group 1: (-1, -1)
    texts = [blanked[first:last] for first, last in spans if first >= 0]
    return texts, offsets


def token_texts(blanked: str) -> list[str]:
    """The tokens of ``blanked`` without their offsets (what ``evaluate`` reads): ``tokenize(blanked)[0]``."""
    return [token for token in _TOKEN.findall(blanked) if token]  # a preprocessor line gives ""


_INT = re.compile(r"(0[xX][0-9a-fA-F']+|0[bB][01']+|0[0-7']*|[1-9][\d']*)([uUlL]*)$")


def int_literal(token: str) -> tuple[int, int] | None:
    """(value, bits of its type) of an integer literal token, or None."""
    match = _INT.match(token)
    if match is None:
        return None
    digits, suffix = match.group(1).replace("'", ""), match.group(2).lower()
    if digits[:2] in ("0x", "0X"):
        value = int(digits, 16)
    elif digits[:2] in ("0b", "0B"):
        value = int(digits[2:], 2)
    elif len(digits) > 1 and digits[0] == "0":
        value = int(digits, 8)
    else:
        value = int(digits)
    long = "ll" in suffix or ("l" in suffix)  # long is 64 bits on the LP64 targets ROCm builds for
    return value, 64 if long or value > 0xFFFFFFFF else 32

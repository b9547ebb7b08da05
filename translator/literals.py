"""Bracket matching and argument splitting that skip string/char literals and comments."""
from __future__ import annotations

import re

# A literal or comment (skipped whole), a bracket, or a comma.
PIECE = re.compile(r""""(?:\\.|[^"\\\n])*"|'(?:\\.|[^'\\\n])*'|//[^\n]*|/\*.*?\*/|[()\[\]{},]""", re.DOTALL)
OPENERS = {"(": ")", "[": "]", "{": "}"}


def matching_paren(text: str, open_at: int) -> int | None:
    """Index of the ``)`` closing the ``(`` at ``open_at``; None when unbalanced."""
    depth = 0
    for match in PIECE.finditer(text, open_at):
        char = match.group()
        if char in OPENERS:
            depth += 1
        elif char in ")]}":
            depth -= 1
            if depth == 0:
                return match.start() if char == ")" else None
    return None


def split_arguments(inside: str) -> list[str]:
    """Top-level comma-separated pieces of an argument list (raw, whitespace kept); [] when empty."""
    if not inside.strip():
        return []
    pieces: list[str] = []
    depth = 0
    start = 0
    for match in PIECE.finditer(inside):
        char = match.group()
        if char in OPENERS:
            depth += 1
        elif char in ")]}":
            depth -= 1
        elif char == "," and depth == 0:
            pieces.append(inside[start:match.start()])
            start = match.end()
    pieces.append(inside[start:])
    return pieces

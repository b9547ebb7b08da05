"""Counted nouns for summaries: "1 file", "2 files", "1 match", "3 matches"."""
from __future__ import annotations


def counted(count: int, singular: str, plural: str = "") -> str:
    return f"{count} {singular if count == 1 else plural or singular + 's'}"

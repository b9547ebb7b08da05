"""Counted nouns and waits for summaries: "1 file", "2 files", "3 matches", "30 min"."""
from __future__ import annotations


def counted(count: int, singular: str, plural: str = "") -> str:
    return f"{count} {singular if count == 1 else plural or singular + 's'}"


def wait_text(seconds: int) -> str:
    """A wait limit as people say it: "30 min", "2 h", "90 s"."""
    if seconds >= 3600 and seconds % 3600 == 0:
        return f"{seconds // 3600} h"
    if seconds >= 60 and seconds % 60 == 0:
        return f"{seconds // 60} min"
    return f"{seconds} s"

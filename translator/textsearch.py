"""Literal words in a text, found with ``str.find`` (no regex), for the tests the engine makes before
deciding whether a rewrite or a scan has anything to look at."""
from __future__ import annotations

from collections.abc import Sequence


def occurrences(text: str, word: str) -> list[int]:
    """Where ``word`` occurs in ``text``, each occurrence after the end of the one before."""
    found = []
    position = text.find(word)
    while position >= 0:
        found.append(position)
        position = text.find(word, position + len(word))
    return found


def occurs_at_any(text: str, word: str, positions: Sequence[int]) -> bool:
    """Whether ``word`` occurs in ``text`` at one of ``positions``."""
    for position in positions:
        if text.startswith(word, position):
            return True
    return False

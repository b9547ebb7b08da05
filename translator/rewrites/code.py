"""Where the code is: comments and string literals of a text, skipped by the rewrite passes."""
from __future__ import annotations

import bisect
import re

NOT_CODE = re.compile(r"""//[^\n]*|/\*.*?\*/|"(?:\\.|[^"\\\n])*"|'(?:\\.|[^'\\\n])*'""", re.DOTALL)
Spans = tuple[list[int], list[int]]
# The spans of the text last mapped: the passes that run on one unchanged text (several do, in a row)
# share one scan of it. Keyed by identity, so holding the text keeps the key from being reused.
_last: tuple[str, Spans] | None = None


class CodeMap:
    """``position in map``: True when the position is inside a comment or a literal of ``text``.

    The text is scanned at the first question, not when the map is made: most passes find nothing to
    rewrite and never ask."""

    def __init__(self, text: str) -> None:
        self.text = text
        self._spans: Spans | None = None

    def __contains__(self, position: object) -> bool:
        if not isinstance(position, int):
            return False
        starts, ends = self._spans or self._scan()
        index = bisect.bisect_right(starts, position) - 1
        return index >= 0 and position < ends[index]

    def _scan(self) -> Spans:
        global _last
        if _last is None or _last[0] is not self.text:
            starts: list[int] = []
            ends: list[int] = []
            for match in NOT_CODE.finditer(self.text):
                start, end = match.span()
                starts.append(start)
                ends.append(end)
            _last = (self.text, (starts, ends))
        self._spans = _last[1]
        return self._spans


def line_of(text: str, position: int) -> tuple[int, int]:
    """(start, end) of the line holding ``position`` (end excludes the line break)."""
    start = text.rfind("\n", 0, position) + 1
    end = text.find("\n", position)
    return start, len(text) if end < 0 else end

"""Where the code is: comments and string literals of a text, skipped by the rewrite passes."""
from __future__ import annotations

import bisect
import re

NOT_CODE = re.compile(r"""//[^\n]*|/\*.*?\*/|"(?:\\.|[^"\\\n])*"|'(?:\\.|[^'\\\n])*'""", re.DOTALL)


class CodeMap:
    """``position in map``: True when the position is inside a comment or a literal of ``text``."""

    def __init__(self, text: str) -> None:
        spans = [m.span() for m in NOT_CODE.finditer(text)]
        self.starts = [start for start, _ in spans]
        self.spans = spans

    def __contains__(self, position: object) -> bool:
        if not isinstance(position, int):
            return False
        index = bisect.bisect_right(self.starts, position) - 1
        return index >= 0 and position < self.spans[index][1]


def line_of(text: str, position: int) -> tuple[int, int]:
    """(start, end) of the line holding ``position`` (end excludes the line break)."""
    start = text.rfind("\n", 0, position) + 1
    end = text.find("\n", position)
    return start, len(text) if end < 0 else end

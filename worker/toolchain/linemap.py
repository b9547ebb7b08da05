"""Map a line of a translated (hipified) file back to the original CUDA file.

The two texts are aligned with ``difflib.SequenceMatcher`` on lines: unchanged
lines map exactly, rewritten blocks map line by line in order, and lines the
translator inserted (e.g. an extra ``#include``) map to the original line just
before the insertion. ``TreeLineMap`` does this for whole trees, following
``.cu`` -> ``.hip`` renames.
"""
from __future__ import annotations

import difflib
from bisect import bisect_right
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class _Block:
    translated_start: int  # 0-based, inclusive
    translated_end: int  # exclusive
    original_start: int
    original_end: int
    tag: str  # difflib opcode: equal, replace, insert, delete


class LineMap:
    """Line alignment of one original text and its translation."""

    def __init__(self, original: str, translated: str) -> None:
        matcher = difflib.SequenceMatcher(None, original.splitlines(), translated.splitlines(), autojunk=False)
        self._blocks = [
            _Block(j1, j2, i1, i2, tag)
            for tag, i1, i2, j1, j2 in matcher.get_opcodes()
            if tag != "delete"
        ]
        self._starts = [block.translated_start for block in self._blocks]

    def original_line(self, translated_line: int) -> int:
        """1-based original line for a 1-based translated line (0 when unknown)."""
        index = translated_line - 1
        position = bisect_right(self._starts, index) - 1
        if position < 0 or index >= self._blocks[position].translated_end:
            return 0
        block = self._blocks[position]
        if block.tag == "insert":
            return max(block.original_start, 1)  # the original line just before the insertion
        offset = min(index - block.translated_start, block.original_end - block.original_start - 1)
        return block.original_start + offset + 1

    def is_exact(self, translated_line: int) -> bool:
        """True when the translated line is unchanged from the original."""
        index = translated_line - 1
        position = bisect_right(self._starts, index) - 1
        return position >= 0 and self._blocks[position].tag == "equal" and index < self._blocks[position].translated_end


class TreeLineMap:
    """Maps (translated file, line) to (original file, line) across two trees."""

    def __init__(self, translated_root: Path, original_root: Path, renames: dict[str, str] | None = None) -> None:
        self.translated_root = translated_root.resolve()
        self.original_root = original_root
        self.renames = dict(renames or {})  # translated relative path -> original relative path
        self._maps: dict[str, LineMap | None] = {}

    def relative(self, path: str) -> str:
        """A compiler-printed path (relative to the translated root, or absolute) made tree-relative."""
        candidate = Path(path)
        full = candidate if candidate.is_absolute() else self.translated_root / candidate
        try:
            return full.resolve().relative_to(self.translated_root).as_posix()
        except ValueError:
            return ""  # outside the tree (system header)

    def original_path(self, relative: str) -> str:
        if relative in self.renames:
            return self.renames[relative]
        if (self.original_root / relative).is_file():
            return relative
        for suffix in (".cu", ".cuh"):
            renamed = Path(relative).with_suffix(suffix).as_posix()
            if Path(relative).suffix in (".hip", ".h", ".hpp") and (self.original_root / renamed).is_file():
                return renamed
        return ""

    def map(self, path: str, line: int) -> tuple[str, int]:
        """Original (relative path, line); ("", 0) when the file has no original."""
        relative = self.relative(path)
        original = self.original_path(relative) if relative else ""
        if not original:
            return "", 0
        line_map = self._line_map(relative, original)
        return original, (line_map.original_line(line) if line_map and line > 0 else 0)

    def _line_map(self, relative: str, original: str) -> LineMap | None:
        if relative not in self._maps:
            try:
                original_text = (self.original_root / original).read_text(errors="replace")
                translated_text = (self.translated_root / relative).read_text(errors="replace")
            except OSError:
                self._maps[relative] = None
            else:
                self._maps[relative] = LineMap(original_text, translated_text)
        return self._maps[relative]

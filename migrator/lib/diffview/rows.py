"""Row arithmetic of the diff view: which lines each row shows, and chunk bounds."""

from __future__ import annotations

import itertools
from collections.abc import Iterable

from migrator.lib.diffview.models import Block, RowKind

# (row kind, 0-based left line or None, 0-based right line or None, block index)
Skeleton = tuple[RowKind, int | None, int | None, int]


def side_by_side_row(position: int, block: Block, offset: int) -> Skeleton:
    if block.kind == "fold":
        return ("fold", None, None, position)
    if block.kind == "equal":
        return ("equal", block.i1 + offset, block.j1 + offset, position)
    i = block.i1 + offset if offset < block.i2 - block.i1 else None
    j = block.j1 + offset if offset < block.j2 - block.j1 else None
    kind: RowKind = (
        "replace"
        if i is not None and j is not None
        else ("delete" if j is None else "insert")
    )
    return (kind, i, j, position)


def unified_row(position: int, block: Block, offset: int) -> Skeleton:
    """Unified rows; a changed line also names its partner line (for word marks) if it has one."""
    if block.kind != "change":
        return side_by_side_row(position, block, offset)
    removed = block.i2 - block.i1
    added = block.j2 - block.j1
    if offset < removed:
        return (
            "delete",
            block.i1 + offset,
            block.j1 + offset if offset < added else None,
            position,
        )
    offset -= removed
    return (
        "insert",
        block.i1 + offset if offset < removed else None,
        block.j1 + offset,
        position,
    )


def line_number(index: int | None) -> int | None:
    return None if index is None else index + 1


def prefix_sums(counts: Iterable[int]) -> list[int]:
    return [0, *itertools.accumulate(counts)]


def chunk_bounds(index: int, size: int, total: int) -> tuple[int, int, int]:
    """(start, stop, chunk count) of chunk `index`; IndexError past the end."""
    if size < 1:
        raise ValueError("chunk size must be positive")
    count = max(1, -(-total // size))
    if not 0 <= index < count:
        raise IndexError(f"chunk {index} out of range (0..{count - 1})")
    return index * size, min(total, (index + 1) * size), count


def page_bounds(start: int, limit: int, total: int) -> tuple[int, int]:
    """(start, stop) of a page from row `start`; IndexError when `start` is past the rows."""
    if limit < 1:
        raise ValueError("page size must be positive")
    if start < 0 or (start >= total and start != 0):
        raise IndexError(f"row {start} out of range (0..{total - 1})")
    return start, min(total, start + limit)

"""Folding of unchanged stretches: keep `context` lines around changes and annotated lines."""

from __future__ import annotations

import bisect
from collections.abc import Sequence

from migrator.lib.diffview.align import Opcode
from migrator.lib.diffview.models import Block

# A hidden stretch of one line is shown instead: its fold row would take the same space.
MIN_FOLD = 2


def fold_blocks(
    opcodes: Sequence[Opcode],
    context: int | None,
    left_anchors: Sequence[int] = (),
    right_anchors: Sequence[int] = (),
) -> list[Block]:
    """Blocks for `opcodes`; anchors are sorted 0-based line indices that must stay visible."""
    blocks: list[Block] = []
    last = len(opcodes) - 1
    for position, op in enumerate(opcodes):
        if op.kind != "equal":
            blocks.append(Block("change", op.i1, op.i2, op.j1, op.j2))
        elif context is None:
            blocks.append(Block("equal", op.i1, op.i2, op.j1, op.j2))
        else:
            offsets = _anchor_offsets(op, left_anchors, right_anchors)
            visible = _visible_ranges(
                op.i2 - op.i1, context, position > 0, position < last, offsets
            )
            blocks.extend(_split_equal(op, visible))
    return blocks


def _anchor_offsets(op: Opcode, left: Sequence[int], right: Sequence[int]) -> list[int]:
    offsets = [
        i - op.i1
        for i in left[bisect.bisect_left(left, op.i1) : bisect.bisect_left(left, op.i2)]
    ]
    offsets += [
        j - op.j1
        for j in right[
            bisect.bisect_left(right, op.j1) : bisect.bisect_left(right, op.j2)
        ]
    ]
    return sorted(offsets)


def _visible_ranges(
    length: int,
    context: int,
    after_change: bool,
    before_change: bool,
    anchors: list[int],
) -> list[tuple[int, int]]:
    """Merged half-open offset ranges of an equal run that stay visible."""
    wanted: list[tuple[int, int]] = []
    if after_change:
        wanted.append((0, context))
    wanted += [(offset - context, offset + context + 1) for offset in anchors]
    if before_change:
        wanted.append((length - context, length))
    merged: list[tuple[int, int]] = []
    for start, stop in sorted(wanted):
        start, stop = max(0, start), min(length, stop)
        if start >= stop:
            continue
        if merged and start - merged[-1][1] < MIN_FOLD:
            merged[-1] = (merged[-1][0], max(merged[-1][1], stop))
        else:
            merged.append((start, stop))
    if not merged and length < MIN_FOLD:
        return [(0, length)]
    if merged and merged[0][0] < MIN_FOLD:
        merged[0] = (0, merged[0][1])
    if merged and length - merged[-1][1] < MIN_FOLD:
        merged[-1] = (merged[-1][0], length)
    return merged


def _split_equal(op: Opcode, visible: list[tuple[int, int]]) -> list[Block]:
    blocks: list[Block] = []
    cursor = 0
    length = op.i2 - op.i1
    for start, stop in visible + [(length, length)]:
        if start > cursor:
            blocks.append(
                Block(
                    "fold", op.i1 + cursor, op.i1 + start, op.j1 + cursor, op.j1 + start
                )
            )
        if stop > start:
            blocks.append(
                Block("equal", op.i1 + start, op.i1 + stop, op.j1 + start, op.j1 + stop)
            )
        cursor = max(cursor, stop)
    return blocks

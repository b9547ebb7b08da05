"""Line alignment for the diff view and patches: a patience-style anchored diff.

Why not plain `difflib.SequenceMatcher` on whole files: source files repeat lines
("}", "", "    }") hundreds of times. With `autojunk=False` every repeated line
is a candidate match start, and a 5,000-line file took 19 s in our measurement
(bench/diff_bench.py); with `autojunk=True` it took 0.4 s and popular lines can
no longer anchor a match, which gives odd alignments.

Translated files correspond to their originals almost line by line, so we
first strip the common prefix and suffix, then anchor on lines that occur
exactly once on each side (patience diff), keep the longest increasing run of
those anchors, and recurse into the gaps between them. Only small gaps without
unique lines reach `SequenceMatcher` (stdlib, well tested), where its cost is
bounded. The result uses SequenceMatcher's opcode format, with neighbouring
non-equal opcodes merged into one "replace"/"delete"/"insert" block.
"""

from __future__ import annotations

import bisect
import difflib
from collections import Counter
from collections.abc import Hashable, Sequence
from typing import Literal, NamedTuple

OpKind = Literal["equal", "replace", "delete", "insert"]

# Gaps up to this many lines per side go to SequenceMatcher without autojunk.
EXACT_GAP_LIMIT = 600


class Opcode(NamedTuple):
    kind: OpKind
    i1: int
    i2: int
    j1: int
    j2: int


class _Range(NamedTuple):
    alo: int
    ahi: int
    blo: int
    bhi: int


def align_lines(a: Sequence[Hashable], b: Sequence[Hashable]) -> list[Opcode]:
    """Opcodes turning `a` into `b`, covering both sequences completely and in order."""
    raw: list[Opcode] = []
    stack: list[_Range | Opcode] = [_Range(0, len(a), 0, len(b))]
    while stack:
        task = stack.pop()
        if isinstance(task, Opcode):
            raw.append(task)
        else:
            stack.extend(reversed(_split_range(a, b, task)))
    return _merge(raw)


def _split_range(
    a: Sequence[Hashable], b: Sequence[Hashable], r: _Range
) -> list[_Range | Opcode]:
    """Either final opcodes for `r` or smaller ranges separated by equal anchor lines."""
    alo, ahi, blo, bhi = r
    head = 0
    while alo + head < ahi and blo + head < bhi and a[alo + head] == b[blo + head]:
        head += 1
    tail = 0
    while (
        alo + head < ahi - tail
        and blo + head < bhi - tail
        and a[ahi - tail - 1] == b[bhi - tail - 1]
    ):
        tail += 1
    middle = _Range(alo + head, ahi - tail, blo + head, bhi - tail)
    parts: list[_Range | Opcode] = []
    if head:
        parts.append(Opcode("equal", alo, alo + head, blo, blo + head))
    parts.extend(_split_middle(a, b, middle))
    if tail:
        parts.append(Opcode("equal", ahi - tail, ahi, bhi - tail, bhi))
    return parts


def _split_middle(
    a: Sequence[Hashable], b: Sequence[Hashable], r: _Range
) -> list[_Range | Opcode]:
    alo, ahi, blo, bhi = r
    if alo == ahi or blo == bhi:
        return (
            [Opcode("replace", alo, ahi, blo, bhi)] if (alo < ahi or blo < bhi) else []
        )
    anchors = _unique_anchors(a, b, r)
    if not anchors:
        return list(_sequence_matcher_opcodes(a, b, r))
    parts: list[_Range | Opcode] = []
    prev_i, prev_j = alo, blo
    for i, j in anchors:
        if i - prev_i == j - prev_j and a[prev_i:i] == b[prev_j:j]:
            # The common case in translated files: nothing changed since the last anchor.
            parts.append(Opcode("equal", prev_i, i + 1, prev_j, j + 1))
        else:
            parts.append(_Range(prev_i, i, prev_j, j))
            parts.append(Opcode("equal", i, i + 1, j, j + 1))
        prev_i, prev_j = i + 1, j + 1
    parts.append(_Range(prev_i, ahi, prev_j, bhi))
    return parts


def _unique_anchors(
    a: Sequence[Hashable], b: Sequence[Hashable], r: _Range
) -> list[tuple[int, int]]:
    """Pairs of lines unique on both sides, longest run increasing on both sides."""
    alo, ahi, blo, bhi = r
    count_a = Counter(a[alo:ahi])
    count_b = Counter(b[blo:bhi])
    position_b = {b[j]: j for j in range(blo, bhi) if count_b[b[j]] == 1}
    pairs = [
        (i, position_b[a[i]])
        for i in range(alo, ahi)
        if count_a[a[i]] == 1 and a[i] in position_b
    ]
    return _longest_increasing(pairs)


def _longest_increasing(pairs: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Longest subsequence of `pairs` (sorted by first item) increasing in the second."""
    tails: list[int] = []  # smallest j ending an increasing run of each length
    tail_index: list[int] = []
    previous: list[int] = []
    for index, (_, j) in enumerate(pairs):
        length = bisect.bisect_left(tails, j)
        if length == len(tails):
            tails.append(j)
            tail_index.append(index)
        else:
            tails[length] = j
            tail_index[length] = index
        previous.append(tail_index[length - 1] if length else -1)
    result: list[tuple[int, int]] = []
    cursor = tail_index[-1] if tail_index else -1
    while cursor >= 0:
        result.append(pairs[cursor])
        cursor = previous[cursor]
    return result[::-1]


def _sequence_matcher_opcodes(
    a: Sequence[Hashable], b: Sequence[Hashable], r: _Range
) -> list[Opcode]:
    alo, ahi, blo, bhi = r
    small = ahi - alo <= EXACT_GAP_LIMIT and bhi - blo <= EXACT_GAP_LIMIT
    matcher = difflib.SequenceMatcher(None, a[alo:ahi], b[blo:bhi], autojunk=not small)
    return [
        Opcode(kind, alo + i1, alo + i2, blo + j1, blo + j2)
        for kind, i1, i2, j1, j2 in matcher.get_opcodes()
    ]


def _merge(raw: list[Opcode]) -> list[Opcode]:
    """Join neighbouring opcodes: equal with equal, any non-equal run into one change."""
    merged: list[Opcode] = []
    for op in raw:
        if op.i1 == op.i2 and op.j1 == op.j2:
            continue
        if merged and (merged[-1].kind == "equal") == (op.kind == "equal"):
            last = merged[-1]
            merged[-1] = Opcode(last.kind, last.i1, op.i2, last.j1, op.j2)
        else:
            merged.append(op)
    return [_classify(op) for op in merged]


def _classify(op: Opcode) -> Opcode:
    if op.kind == "equal":
        return op
    if op.i1 == op.i2:
        return op._replace(kind="insert")
    if op.j1 == op.j2:
        return op._replace(kind="delete")
    return op._replace(kind="replace")

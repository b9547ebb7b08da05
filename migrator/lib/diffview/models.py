"""Plain, picklable payloads of the diff view (no Django, no HTML parsing).

`*_html` fields hold HTML built only from `html.escape`d text and fixed
`<span class=...>` markup (see migrator/lib/diffview/highlight.py), so templates may
mark them safe. Annotation messages are plain text: let the template escape them.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Literal, NamedTuple

Side = Literal["left", "right"]
RowKind = Literal["equal", "replace", "delete", "insert", "fold"]
BlockKind = Literal["equal", "change", "fold"]
NoticeKind = Literal["binary", "encoding", "too_large"]

SIDES: tuple[Side, Side] = ("left", "right")


@dataclass(frozen=True)
class Annotation:
    """A margin note on one line of one side (1-based line number)."""

    side: Side
    line: int
    kind: str  # "unconverted" | "diagnostic" | "fix"
    severity: str
    message: str


def normalise_annotations(
    items: Iterable[Annotation | Mapping[str, object]],
) -> list[Annotation]:
    """Annotations from dataclasses or dicts; raises ValueError on a bad side or line."""
    result: list[Annotation] = []
    for item in items:
        if isinstance(item, Annotation):
            annotation = item
        else:
            annotation = Annotation(
                side=str(item.get("side", "")),  # type: ignore[arg-type]
                line=_as_int(item.get("line")),
                kind=str(item.get("kind", "diagnostic")),
                severity=str(item.get("severity", "")),
                message=str(item.get("message", "")),
            )
        if annotation.side not in SIDES:
            raise ValueError(
                f"annotation side must be 'left' or 'right', not {annotation.side!r}"
            )
        result.append(annotation)
    return result


def _as_int(value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, str)):
        # One exception type for every bad annotation keeps callers simple.
        raise ValueError(f"annotation line must be an integer, not {value!r}")  # noqa: TRY004
    return int(value)


class Block(NamedTuple):
    """A run of aligned rows: equal lines, one change, or one folded stretch (0-based, half-open)."""

    kind: BlockKind
    i1: int
    i2: int
    j1: int
    j2: int

    def side_by_side_rows(self) -> int:
        if self.kind == "fold":
            return 1
        return max(self.i2 - self.i1, self.j2 - self.j1)

    def unified_rows(self) -> int:
        if self.kind == "fold":
            return 1
        if self.kind == "equal":
            return self.i2 - self.i1
        return (self.i2 - self.i1) + (self.j2 - self.j1)


@dataclass(frozen=True)
class FoldRange:
    """Hidden unchanged lines, 1-based and inclusive; pass `fold_id` to `SideBySide.expand`."""

    fold_id: int
    left_start: int
    left_end: int
    right_start: int
    right_end: int

    @property
    def count(self) -> int:
        return self.left_end - self.left_start + 1


@dataclass
class Row:
    """One side-by-side row; a side without a line has number None and empty HTML."""

    kind: RowKind
    left_no: int | None
    right_no: int | None
    left_html: str = ""
    right_html: str = ""
    left_annotations: list[Annotation] = field(default_factory=list)
    right_annotations: list[Annotation] = field(default_factory=list)
    fold: FoldRange | None = None


@dataclass
class Chunk:
    """Rows [start, stop) of a view; ask for the next page at `stop` while `has_more`."""

    index: int
    rows: list[Row]
    has_more: bool
    chunk_count: int
    total_rows: int
    start: int = 0
    stop: int = 0


@dataclass
class UnifiedRow:
    kind: RowKind  # never "replace": a replaced line shows as a delete row and an insert row
    old_no: int | None
    new_no: int | None
    html: str = ""
    annotations: list[Annotation] = field(default_factory=list)
    fold: FoldRange | None = None


@dataclass
class UnifiedChunk:
    """Rows [start, stop) of a view; ask for the next page at `stop` while `has_more`."""

    index: int
    rows: list[UnifiedRow]
    has_more: bool
    chunk_count: int
    total_rows: int
    start: int = 0
    stop: int = 0

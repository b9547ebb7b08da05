"""Side-by-side and unified diff of one file, computed once and rendered in chunks.

`compute_side_by_side` aligns the lines (migrator/lib/diffview/align.py, an anchored
diff because plain SequenceMatcher is far too slow on repetitive 20,000-line
files), folds unchanged stretches (migrator/lib/diffview/fold.py) and keeps only
compact blocks plus the two texts, so a `SideBySide` pickles small and is cheap
to cache. Nothing is highlighted up front: `chunk()` / `page()` and their
unified twins lex only the lines their rows show (migrator/lib/diffview/highlight.py)
and mark changed words inside replaced line pairs (migrator/lib/diffview/words.py).
Pygments costs about 0.3 ms a shown line, so a 500-row page takes ~150 ms of
CPU; a first page of 200 rows, or a diff `prerender()`ed in the background,
stays well under that (bench/diff_bench.py).

`diff_file` is the entry for raw file contents: it returns a notice instead of
a diff for binary files (NUL byte in the first 8 KB), non-UTF-8 files and very
large files.
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass

from migrator.lib.diffview.align import align_lines
from migrator.lib.diffview.fold import fold_blocks
from migrator.lib.diffview.highlight import (
    LOOKBACK,
    PrerenderedSide,
    WindowHighlighter,
    construct_lookback,
    ends_in_clean_state,
    split_lines,
)
from migrator.lib.diffview.models import (
    Annotation,
    Block,
    Chunk,
    FoldRange,
    NoticeKind,
    Row,
    UnifiedChunk,
    UnifiedRow,
    normalise_annotations,
)
from migrator.lib.diffview.rows import (
    Skeleton,
    chunk_bounds,
    line_number,
    page_bounds,
    prefix_sums,
    side_by_side_row,
    unified_row,
)
from migrator.lib.diffview.words import render_word_diff

CHUNK_SIZE = 500
BINARY_SNIFF_BYTES = 8192
MAX_DIFF_BYTES = 20 * 1024 * 1024

AnnotationInput = Iterable[Annotation | Mapping[str, object]]
_LineSource = WindowHighlighter | PrerenderedSide


class SideBySide:
    """An aligned diff of two texts; picklable (no lexers or caches are stored)."""

    def __init__(
        self,
        old_lines: list[str],
        new_lines: list[str],
        blocks: list[Block],
        annotations: list[Annotation],
        old_name: str,
        new_name: str,
    ) -> None:
        self.old_lines = old_lines
        self.new_lines = new_lines
        self.blocks = blocks
        self.old_name = old_name
        self.new_name = new_name
        self.notes: dict[tuple[str, int], list[Annotation]] = {}
        self.unplaced_annotations: list[Annotation] = []
        for note in annotations:
            limit = len(old_lines) if note.side == "left" else len(new_lines)
            if 1 <= note.line <= limit:
                self.notes.setdefault((note.side, note.line), []).append(note)
            else:
                self.unplaced_annotations.append(note)
        self._row_starts = prefix_sums(block.side_by_side_rows() for block in blocks)
        self._unified_starts = prefix_sums(block.unified_rows() for block in blocks)
        self._block_j1 = [block.j1 for block in blocks]
        self.prerendered: tuple[PrerenderedSide, PrerenderedSide] | None = None

    @property
    def total_rows(self) -> int:
        return self._row_starts[-1]

    @property
    def added(self) -> int:
        return sum(b.j2 - b.j1 for b in self.blocks if b.kind == "change")

    @property
    def removed(self) -> int:
        return sum(b.i2 - b.i1 for b in self.blocks if b.kind == "change")

    def chunk_count(self, size: int = CHUNK_SIZE) -> int:
        return max(1, -(-self.total_rows // size))

    def chunk(self, index: int, size: int = CHUNK_SIZE) -> Chunk:
        """Rows [index*size, (index+1)*size) of the side-by-side view; IndexError past the end."""
        start, _, _ = chunk_bounds(index, size, self.total_rows)
        return self.page(start, size)

    def page(self, start: int, limit: int = CHUNK_SIZE) -> Chunk:
        """Up to `limit` rows from row `start` (a cursor: the next page starts at `.stop`).

        Lets the first page be small (fast to lex) and later pages large.
        """
        start, stop = page_bounds(start, limit, self.total_rows)
        rows = self._render_rows(list(self._side_by_side_skeleton(start, stop)))
        total = self.total_rows
        count = max(1, -(-total // limit))
        return Chunk(start // limit, rows, stop < total, count, total, start, stop)

    def expand(
        self, fold_id: int, start: int = 0, limit: int | None = None
    ) -> list[Row]:
        """Equal rows hidden by fold `fold_id`, from its `start`-th line, at most `limit` rows."""
        if not 0 <= fold_id < len(self.blocks) or self.blocks[fold_id].kind != "fold":
            raise KeyError(f"no fold with id {fold_id}")
        block = self.blocks[fold_id]
        length = block.i2 - block.i1
        stop = length if limit is None else min(length, max(0, start) + max(0, limit))
        skeleton: list[Skeleton] = [
            ("equal", block.i1 + offset, block.j1 + offset, fold_id)
            for offset in range(max(0, start), stop)
        ]
        return self._render_rows(skeleton)

    def unified_chunk(self, index: int, size: int = CHUNK_SIZE) -> UnifiedChunk:
        """Rows of the unified view; a changed block shows its deletions before its insertions."""
        start, _, _ = chunk_bounds(index, size, self._unified_starts[-1])
        return self.unified_page(start, size)

    def unified_page(self, start: int, limit: int = CHUNK_SIZE) -> UnifiedChunk:
        """Up to `limit` unified rows from row `start`; the next page starts at `.stop`."""
        total = self._unified_starts[-1]
        start, stop = page_bounds(start, limit, total)
        rows = self._render_unified(list(self._unified_skeleton(start, stop)))
        count = max(1, -(-total // limit))
        return UnifiedChunk(
            start // limit, rows, stop < total, count, total, start, stop
        )

    def _blocks_in(
        self, starts: list[int], start: int, stop: int
    ) -> Iterator[tuple[int, Block, int, int]]:
        """(block index, block, first row offset, end row offset) for rows in [start, stop)."""
        position = max(0, bisect.bisect_right(starts, start) - 1)
        while position < len(self.blocks) and starts[position] < stop:
            first = max(start, starts[position]) - starts[position]
            end = min(stop, starts[position + 1]) - starts[position]
            yield position, self.blocks[position], first, end
            position += 1

    def _side_by_side_skeleton(self, start: int, stop: int) -> Iterator[Skeleton]:
        for position, block, first, end in self._blocks_in(
            self._row_starts, start, stop
        ):
            for offset in range(first, end):
                yield side_by_side_row(position, block, offset)

    def _unified_skeleton(self, start: int, stop: int) -> Iterator[Skeleton]:
        for position, block, first, end in self._blocks_in(
            self._unified_starts, start, stop
        ):
            for offset in range(first, end):
                yield unified_row(position, block, offset)

    def prerender(self) -> None:
        """Highlight both files whole, ahead of time (exact lexer state, seconds for big files).

        Meant for a background task: chunks of a prerendered (and cached) diff
        only decode compact token codes. The right side keeps only its changed lines.
        """
        right_changed = [
            j
            for block in self.blocks
            if block.kind == "change"
            for j in range(block.j1, block.j2)
        ]
        self.prerendered = (
            PrerenderedSide.highlight(self.old_lines, self.old_name),
            PrerenderedSide.highlight(
                self.new_lines, self.new_name, keep=right_changed
            ),
        )

    def _highlighters(
        self, skeleton: list[Skeleton]
    ) -> tuple[_LineSource, _LineSource]:
        if self.prerendered is not None:
            return self.prerendered
        left = WindowHighlighter(self.old_lines, self.old_name)
        right = WindowHighlighter(self.new_lines, self.new_name)
        left.prepare(i for _, i, _, _ in skeleton if i is not None)
        # Equal lines are identical on both sides: they are lexed on the left only.
        right.prepare(
            (j for kind, _, j, _ in skeleton if j is not None and kind != "equal"),
            lambda j: self._right_lookback(j, left),
        )
        return left, right

    def _right_lookback(self, j: int, left: WindowHighlighter) -> int:
        """Lines a right-side window starting at `j` must lex first to be in the right state.

        The lines before a change are equal on both sides, so the left side's tokens
        tell whether the lexer is back in its root state there; then none are needed.
        """
        position = bisect.bisect_right(self._block_j1, j) - 1
        block = self.blocks[position]
        if block.kind == "change" and j == block.j1 and position > 0:
            before = self.blocks[position - 1]
            for back in range(1, min(LOOKBACK, before.i2 - before.i1) + 1):
                clean = ends_in_clean_state(left.pieces(before.i2 - back))
                if clean is not None:
                    return back - 1 if clean else LOOKBACK
        return construct_lookback(self.new_lines, j)

    def _render_rows(self, skeleton: list[Skeleton]) -> list[Row]:
        left, right = self._highlighters(skeleton)
        rows: list[Row] = []
        for kind, i, j, position in skeleton:
            row = Row(kind, line_number(i), line_number(j))
            if kind == "fold":
                row.fold = self._fold_range(position)
            elif kind == "equal" and i is not None:
                row.left_html = row.right_html = left.html(i)
            elif kind == "replace" and i is not None and j is not None:
                row.left_html, row.right_html = render_word_diff(
                    left.pieces(i), right.pieces(j)
                )
            elif i is not None:
                row.left_html = left.html(i)
            elif j is not None:
                row.right_html = right.html(j)
            row.left_annotations = self._notes_at("left", i)
            row.right_annotations = self._notes_at("right", j)
            rows.append(row)
        return rows

    def _render_unified(self, skeleton: list[Skeleton]) -> list[UnifiedRow]:
        left, right = self._highlighters(skeleton)
        rows: list[UnifiedRow] = []
        for kind, i, j, position in skeleton:
            if kind == "fold":
                rows.append(
                    UnifiedRow("fold", None, None, fold=self._fold_range(position))
                )
            elif kind == "equal" and i is not None and j is not None:
                notes = self._notes_at("left", i) + self._notes_at("right", j)
                rows.append(UnifiedRow("equal", i + 1, j + 1, left.html(i), notes))
            elif kind == "delete" and i is not None:
                html = (
                    render_word_diff(left.pieces(i), right.pieces(j))[0]
                    if j is not None
                    else left.html(i)
                )
                rows.append(
                    UnifiedRow("delete", i + 1, None, html, self._notes_at("left", i))
                )
            elif j is not None:
                html = (
                    render_word_diff(left.pieces(i), right.pieces(j))[1]
                    if i is not None
                    else right.html(j)
                )
                rows.append(
                    UnifiedRow("insert", None, j + 1, html, self._notes_at("right", j))
                )
        return rows

    def _notes_at(self, side: str, index: int | None) -> list[Annotation]:
        return [] if index is None else self.notes.get((side, index + 1), [])

    def _fold_range(self, position: int) -> FoldRange:
        block = self.blocks[position]
        return FoldRange(position, block.i1 + 1, block.i2, block.j1 + 1, block.j2)


def compute_side_by_side(
    old_text: str,
    new_text: str,
    *,
    context: int | None = 3,
    annotations: AnnotationInput = (),
    old_name: str = "",
    new_name: str | None = None,
    prerender: bool = False,
) -> SideBySide:
    """Align two texts; `context=None` disables folding. Names choose the lexers.

    Annotated lines are kept visible (never folded), with `context` lines around them.
    `prerender=True` highlights everything now (see `SideBySide.prerender`).
    """
    old_lines = split_lines(old_text)
    new_lines = split_lines(new_text)
    notes = normalise_annotations(annotations)
    left_anchors = sorted({n.line - 1 for n in notes if n.side == "left"})
    right_anchors = sorted({n.line - 1 for n in notes if n.side == "right"})
    blocks = fold_blocks(
        align_lines(old_lines, new_lines), context, left_anchors, right_anchors
    )
    diff = SideBySide(
        old_lines,
        new_lines,
        blocks,
        notes,
        old_name,
        old_name if new_name is None else new_name,
    )
    if prerender:
        diff.prerender()
    return diff


@dataclass
class FileDiff:
    """A file's diff, or a notice saying why there is none (then `diff` is None)."""

    old_name: str | None
    new_name: str | None
    diff: SideBySide | None
    notice: str | None = None
    notice_kind: NoticeKind | None = None


def is_binary(data: bytes) -> bool:
    return b"\0" in data[:BINARY_SNIFF_BYTES]


def _notice_for(data: bytes, side: str) -> tuple[NoticeKind, str] | None:
    if len(data) > MAX_DIFF_BYTES:
        return (
            "too_large",
            f"The {side} file is larger than {MAX_DIFF_BYTES // (1024 * 1024)} MB; no diff shown.",
        )
    if is_binary(data):
        return "binary", f"The {side} file is binary; no diff shown."
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return "encoding", f"The {side} file is not valid UTF-8 text; no diff shown."
    return None


def diff_file(
    old_data: bytes | None,
    new_data: bytes | None,
    *,
    old_name: str | None,
    new_name: str | None = None,
    context: int | None = 3,
    annotations: AnnotationInput = (),
) -> FileDiff:
    """Diff of raw file contents; None stands for an added (old) or removed (new) file."""
    new_name = old_name if new_name is None else new_name
    for data, side in ((old_data, "original"), (new_data, "translated")):
        notice = _notice_for(data, side) if data is not None else None
        if notice:
            return FileDiff(old_name, new_name, None, notice[1], notice[0])
    old_text = old_data.decode("utf-8") if old_data is not None else ""
    new_text = new_data.decode("utf-8") if new_data is not None else ""
    diff = compute_side_by_side(
        old_text,
        new_text,
        context=context,
        annotations=annotations,
        old_name=old_name or new_name or "",
        new_name=new_name or old_name or "",
    )
    return FileDiff(old_name, new_name, diff)


def render_unified(
    diff: SideBySide, index: int = 0, size: int = CHUNK_SIZE
) -> UnifiedChunk:
    """Chunk `index` of the unified view of `diff`."""
    return diff.unified_chunk(index, size)

"""HTML of diff rows, built in Python because it is the hot path of the diff page.

A 200-row page through Django's template engine cost ~40 ms of CPU (every line number went
through number localisation, every cell through variable resolution), more than half of what
highlighting the rows costs; these f-strings take ~2 ms. Safety is the same as autoescape:
the library's `*_html` fields are already escaped (html.escape plus fixed Pygments classes,
see migrator/lib/diffview/highlight.py), and everything else here (note texts, URLs) goes through
`html.escape`; numbers are ints.
"""
from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from html import escape

from migrator.lib.diffview.models import Annotation, FoldRange, Row, UnifiedRow

# Notes sit inline under the line they explain (inside its code cell), so the code keeps the
# width: two notes columns squeezed each side to about 45 characters at 1,400 px.
SPLIT_COLUMNS = 4  # number, original code, number, translated code
UNIFIED_COLUMNS = 3  # original number, translated number, code


@dataclass(frozen=True)
class RowLinks:
    fold_url: str  # the fold endpoint, ending in "?" or "&" so "fold=N&start=M" can follow
    whole_url: str  # the unfolded file page (the real href beside each fold's hx-get)
    unified: bool

    @property
    def columns(self) -> int:
        return UNIFIED_COLUMNS if self.unified else SPLIT_COLUMNS


def inline_notes(notes: Iterable[Annotation]) -> str:
    inner = "".join(
        f'<div class="note note-{escape(n.kind)} sev-{escape(n.severity)}">{escape(n.message)}</div>' for n in notes
    )
    return f'<div class="inline-notes">{inner}</div>' if inner else ""


def number_cell(prefix: str, number: int | None) -> str:
    if number is None:
        return '<td class="num"></td>'
    return f'<td class="num" id="{prefix}{number}"><a href="#{prefix}{number}">{number}</a></td>'


def fold_row(fold: FoldRange, offset: int, links: RowLinks) -> str:
    """A "show more" row for the lines of `fold` (from `offset` within its block on)."""
    count = fold.count
    hx_get = escape(f"{links.fold_url}fold={fold.fold_id}&start={offset}")
    href = escape(f"{links.whole_url}#o{fold.left_start}")
    return (
        f'<tr class="row-fold" id="fold-{fold.fold_id}-{offset}"><td colspan="{links.columns}">'
        f'<a href="{href}" hx-get="{hx_get}" hx-target="closest tr" hx-swap="outerHTML">'
        f'Show {count} unchanged line{"" if count == 1 else "s"} ({fold.left_start}–{fold.left_end})</a></td></tr>\n'
    )


def more_row(chunk_url: str, page_url: str, shown: int, total: int, links: RowLinks) -> str:
    """The lazy-load sentinel: htmx swaps it for the next chunk when it scrolls into view."""
    return (
        f'<tr class="row-more" hx-get="{escape(chunk_url)}" hx-trigger="revealed" hx-swap="outerHTML">'
        f'<td colspan="{links.columns}"><a href="{escape(page_url)}">More rows ({shown} of {total} shown)</a>'
        f"</td></tr>\n"
    )


def split_rows(rows: Iterable[Row], links: RowLinks) -> str:
    out: list[str] = []
    for row in rows:
        if row.fold is not None:
            out.append(fold_row(row.fold, 0, links))
            continue
        out.append(
            f'<tr class="line row-{row.kind}">{number_cell("o", row.left_no)}'
            f'<td class="code old">{row.left_html}{inline_notes(row.left_annotations)}</td>{number_cell("t", row.right_no)}'
            f'<td class="code new">{row.right_html}{inline_notes(row.right_annotations)}</td></tr>\n'
        )
    return "".join(out)


def unified_rows(rows: Iterable[UnifiedRow], links: RowLinks) -> str:
    out: list[str] = []
    for row in rows:
        if row.fold is not None:
            out.append(fold_row(row.fold, 0, links))
            continue
        out.append(
            f'<tr class="line row-{row.kind}">{number_cell("o", row.old_no)}{number_cell("t", row.new_no)}'
            f'<td class="code">{row.html}{inline_notes(row.annotations)}</td></tr>\n'
        )
    return "".join(out)

"""Pages of a file's diff as HTML rows: the first page, lazy-loaded chunks and opened folds.

Rendered pages are cached next to the diff (same key plus view, start and size), so a page
someone has seen costs a Redis read instead of Pygments lexing.
"""
from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import urlencode

from django.core.cache import cache
from django.urls import reverse

from migrator.lib.diffview.models import FoldRange, Row, UnifiedRow
from migrator.lib.diffview.sidebyside import SideBySide
from migrator.projects.models import Run
from migrator.review.diffcache import CACHE_SECONDS, diff_key
from migrator.review.rowhtml import RowLinks, fold_row, more_row, split_rows, unified_rows
from migrator.review.tree import FilePair, ReviewTree

FIRST_PAGE_ROWS = 200
CHUNK_ROWS = 500
FOLD_ROWS = 500


@dataclass(frozen=True)
class DiffPage:
    html: str  # the rows, then the lazy-load sentinel when more follow
    start: int
    stop: int
    total_rows: int


def view_query(unified: bool, full: bool, **extra: int) -> str:
    params: dict[str, object] = {**extra}
    if unified:
        params["view"] = "unified"
    if full:
        params["full"] = "1"
    return "?" + urlencode(params) if params else ""


def row_links(run: Run, pair: FilePair, *, unified: bool, full: bool) -> RowLinks:
    args = [run.pk, pair.original_path]
    query = view_query(unified, full)
    return RowLinks(
        fold_url=reverse("review:fold", args=args) + (query + "&" if query else "?"),
        whole_url=reverse("review:file", args=args) + view_query(unified, True),
        unified=unified,
    )


def page_key(run: Run, tree: ReviewTree, original_path: str, *, full: bool, unified: bool, start: int,
             limit: int) -> str:
    return f"{diff_key(run, tree, original_path, full=full)}:page:{int(unified)}:{start}:{limit}"


def diff_page(run: Run, tree: ReviewTree, pair: FilePair, diff: SideBySide, *, unified: bool, full: bool,
              start: int, limit: int) -> DiffPage:
    """Rows [start, start + limit) with their sentinel; IndexError when `start` is past the end."""
    key = page_key(run, tree, pair.original_path, full=full, unified=unified, start=start, limit=limit)
    cached = cache.get(key)
    if isinstance(cached, DiffPage):
        return cached
    links = row_links(run, pair, unified=unified, full=full)
    if unified:
        upage = diff.unified_page(start, limit)
        html, stop, total, more = unified_rows(upage.rows, links), upage.stop, upage.total_rows, upage.has_more
    else:
        spage = diff.page(start, limit)
        html, stop, total, more = split_rows(spage.rows, links), spage.stop, spage.total_rows, spage.has_more
    if more:
        args = [run.pk, pair.original_path]
        html += more_row(reverse("review:chunk", args=args) + view_query(unified, full, start=stop),
                         reverse("review:file", args=args) + view_query(unified, full, start=stop), stop, total, links)
    page = DiffPage(html, start, stop, total)
    cache.set(key, page, CACHE_SECONDS)
    return page


def fold_rows(run: Run, pair: FilePair, diff: SideBySide, fold_id: int, offset: int, *, unified: bool,
              full: bool) -> str:
    """Up to FOLD_ROWS hidden lines of fold `fold_id` from `offset`, then a fold row for the rest; KeyError if no fold."""
    rows = diff.expand(fold_id, offset, FOLD_ROWS)
    links = row_links(run, pair, unified=unified, full=full)
    html = unified_rows([_as_unified(row) for row in rows], links) if unified else split_rows(rows, links)
    shown = offset + len(rows)
    block = diff.blocks[fold_id]
    if shown < block.i2 - block.i1:
        rest = FoldRange(fold_id, block.i1 + shown + 1, block.i2, block.j1 + shown + 1, block.j2)
        html += fold_row(rest, shown, links)
    return html


def _as_unified(row: Row) -> UnifiedRow:
    """An opened (equal) line in the unified view's shape."""
    return UnifiedRow("equal", row.left_no, row.right_no, row.left_html, row.left_annotations + row.right_annotations)

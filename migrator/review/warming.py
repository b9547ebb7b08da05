"""Warm the review cache of a run once compile has finished (the cache key is final then)."""
from __future__ import annotations

import time

from migrator.projects.models import Run
from migrator.review.diffcache import file_diff, file_list
from migrator.review.pages import FIRST_PAGE_ROWS, diff_page
from migrator.review.tree import review_tree


def warm_run(run: Run, *, budget_s: float = 10.0) -> int:
    """Compute and cache the diffs of a run's changed files, largest change first, within a time budget.

    Called on the worker once compile has finished (the cache key is final then), so the first
    reader of a big file gets a cached diff (and its first highlighted page) instead of paying
    for the alignment and the lexing.
    """
    tree = review_tree(run)
    if not tree.translated:
        return 0
    deadline = time.monotonic() + budget_s
    warmed = 0
    for entry in sorted((e for e in file_list(run, tree) if e.changed and not e.binary),
                        key=lambda e: e.added + e.removed, reverse=True):
        pair = tree.pair(entry.original_path)
        if pair is None:
            continue
        result = file_diff(run, tree, pair)
        if result.diff is not None and result.diff.total_rows > FIRST_PAGE_ROWS:
            # Big files: highlight the first page too, the slow part of a first visit.
            diff_page(run, tree, pair, result.diff, unified=False, full=False, start=0, limit=FIRST_PAGE_ROWS)
        warmed += 1
        if time.monotonic() > deadline:
            break
    return warmed

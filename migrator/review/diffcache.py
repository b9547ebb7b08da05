"""Computed diffs and file lists of a run, kept in Django's cache (Redis) between requests.

A key names the run, its workspace folder and the finish times of the hipify and compile
stages (the annotations come from them), so a re-run or a later compile never serves
stale notes. A `SideBySide` pickles small (the two texts plus compact blocks): pages are
highlighted on demand from it, so both the side-by-side and the unified view of a file
share one entry; folding on or off (`full`) are two entries.
"""
from __future__ import annotations

import hashlib

from django.core.cache import cache

from migrator.lib.diffview.sidebyside import FileDiff, diff_file
from migrator.projects.models import Run
from migrator.review.annotations import file_annotations
from migrator.review.filelist import FileEntry, collect_files
from migrator.review.tree import FilePair, ReviewTree

KEY_VERSION = 1
CACHE_SECONDS = 6 * 3600
# Bigger diffs are recomputed each time rather than filling Redis with tens of megabytes.
MAX_CACHED_BYTES = 16 * 1024 * 1024
CONTEXT_LINES = 3


def _key(run: Run, tree: ReviewTree, *parts: str) -> str:
    finished = [
        f"{stage.name}@{stage.finished_at.isoformat() if stage.finished_at else '-'}"
        for stage in run.stages.all()
        if stage.name in ("hipify", "compile")
    ]
    material = "\0".join([str(KEY_VERSION), str(run.pk), str(tree.source.parent), *finished, *parts])
    return "review:" + hashlib.sha256(material.encode("utf-8", "surrogateescape")).hexdigest()


def diff_key(run: Run, tree: ReviewTree, original_path: str, *, full: bool) -> str:
    return _key(run, tree, "file", original_path, "full" if full else "folded")


def file_diff(run: Run, tree: ReviewTree, pair: FilePair, *, full: bool = False) -> FileDiff:
    """The diff of one file with its margin notes, from the cache or computed (and cached) now."""
    key = diff_key(run, tree, pair.original_path, full=full)
    cached = cache.get(key)
    if isinstance(cached, FileDiff):
        return cached
    old, new = tree.read_original(pair), tree.read_translation(pair)
    # An unchanged file would fold away whole; it is shown whole instead.
    context = None if full or old == new else CONTEXT_LINES
    diff = diff_file(old, new, old_name=pair.original_path, new_name=pair.translated_path, context=context,
                     annotations=file_annotations(run, tree, pair))
    if len(old or b"") + len(new or b"") <= MAX_CACHED_BYTES:
        cache.set(key, diff, CACHE_SECONDS)
    return diff


def file_list(run: Run, tree: ReviewTree) -> list[FileEntry]:
    key = _key(run, tree, "files")
    cached = cache.get(key)
    if isinstance(cached, list):
        return cached
    entries = collect_files(run, tree)
    cache.set(key, entries, CACHE_SECONDS)
    return entries

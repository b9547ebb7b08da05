"""The file list of a run's review: every file with its change counts and marks, filtered and grouped.

Changed files come from `tree_changes` (migrator/lib/diffview/tree.py), which reads both trees;
the rest of the original tree is listed as unchanged so the identifier and error filters
can find files the translation left alone.
"""
from __future__ import annotations

from dataclasses import dataclass
from itertools import groupby
from pathlib import Path, PurePosixPath
from typing import Literal

from migrator.lib.diffview.tree import tree_changes
from migrator.projects.models import Run
from migrator.review.stagedata import account_entries, as_int, build_fixes, diagnostic_counts
from migrator.review.tree import SKIPPED_DIRS, ReviewTree
from worker.contained import walk_beneath

FileFilter = Literal["changed", "unconverted", "errors", "all"]
FILTER_CHOICES: list[tuple[FileFilter, str]] = [
    ("changed", "Changed files"),
    ("unconverted", "With unconverted identifiers"),
    ("errors", "With compile errors"),
    ("all", "All files"),
]


@dataclass(frozen=True)
class FileEntry:
    original_path: str  # the review URL's path (the translated one for files only the translation has)
    translated_path: str
    status: str  # modified, renamed, added, removed, unchanged
    added: int = 0
    removed: int = 0
    binary: bool = False
    unconverted: int = 0
    errors: int = 0
    warnings: int = 0
    fixes: int = 0

    @property
    def changed(self) -> bool:
        return self.status != "unchanged"

    @property
    def name(self) -> str:
        return PurePosixPath(self.original_path).name

    @property
    def directory(self) -> str:
        parent = PurePosixPath(self.original_path).parent.as_posix()
        return "" if parent == "." else parent


@dataclass(frozen=True)
class Directory:
    path: str
    files: list[FileEntry]

    @property
    def depth(self) -> int:
        return self.path.count("/") + 1 if self.path else 0


def collect_files(run: Run, tree: ReviewTree) -> list[FileEntry]:
    """Every file of the run, sorted by path; empty when the translated tree is missing."""
    if not tree.translated or not tree.source.is_dir():
        return []
    marks = _Marks(run, tree)
    entries: list[FileEntry] = []
    seen: set[str] = set()
    for change in tree_changes(tree.source, tree.hip, tree.renames):
        original = change.old_path or change.path
        seen.add(original)
        entries.append(marks.entry(original, change.path, change.status, change.added, change.removed, change.binary))
    for relative in _relative_files(tree.source):
        if relative not in seen:
            entries.append(marks.entry(relative, tree.translated_name(relative), "unchanged"))
    return sorted(entries, key=lambda entry: entry.original_path)


def filter_files(entries: list[FileEntry], which: FileFilter) -> list[FileEntry]:
    if which == "changed":
        return [e for e in entries if e.changed]
    if which == "unconverted":
        return [e for e in entries if e.unconverted]
    if which == "errors":
        return [e for e in entries if e.errors]
    return list(entries)


def group_by_directory(entries: list[FileEntry]) -> list[Directory]:
    ordered = sorted(entries, key=lambda e: (e.directory, e.name))
    return [Directory(path, list(files)) for path, files in groupby(ordered, key=lambda e: e.directory)]


class _Marks:
    """Per-file counts from the stage data, looked up by original or translated path."""

    def __init__(self, run: Run, tree: ReviewTree) -> None:
        self.unconverted = {
            str(e.get("path")): as_int(e.get("unconverted_total"))
            for e in account_entries(run, tree.records, full=False)
        }
        self.diagnostics = diagnostic_counts(run)
        self.fixes: dict[str, int] = {}
        for fix in build_fixes(run):
            self.fixes[str(fix.get("file"))] = self.fixes.get(str(fix.get("file")), 0) + 1

    def entry(self, original: str, translated: str, status: str, added: int = 0, removed: int = 0,
              binary: bool = False) -> FileEntry:
        counts = self.diagnostics.get(translated, {"errors": 0, "warnings": 0})
        return FileEntry(original, translated, status, added, removed, binary, self.unconverted.get(original, 0),
                         counts["errors"], counts["warnings"], self.fixes.get(translated, 0))


def _relative_files(root: Path) -> list[str]:
    """Regular files under `root` (no symlinks, no VCS folders) as POSIX relative paths."""
    return [entry.relative for entry in walk_beneath(root, skip=SKIPPED_DIRS)]

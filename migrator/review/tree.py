"""Where a run's original and translated files live, and which relative paths may be read.

The review reads the fetched source (``source/``), the translated tree as translation wrote it
(``hip/``) and the run's records (``records/``), never the build's ``work/``. Paths come from URLs,
so a path is accepted only when it names a regular file inside its tree: no "..", no absolute paths,
no symbolic links (a hostile repository could point one anywhere), no VCS folders; and every file is
opened through ``worker.contained`` (by directory descriptor, beneath its tree).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from django.db.models import prefetch_related_objects

from migrator.lib.diffview.tree import read_file
from migrator.projects.access import AnyUser, get_run_or_404
from migrator.projects.models import Run
from migrator.projects.workspaces import workspace_for
from migrator.review.stagedata import hipify_data
from worker.contained import is_file_beneath

SKIPPED_DIRS = frozenset({".git", ".hg", ".svn"})


@dataclass(frozen=True)
class FilePair:
    """One file of the review: its original and translated relative paths and where they are."""

    original_path: str
    translated_path: str
    has_original: bool  # False: the file exists only in the translated tree
    has_translation: bool  # False: the translation removed it (or hipify did not run)


@dataclass(frozen=True)
class ReviewTree:
    source: Path
    hip: Path
    records: Path
    renames: dict[str, str] = field(default_factory=dict)  # original -> translated

    def read_original(self, pair: FilePair) -> bytes | None:
        return read_file(self.source, pair.original_path) if pair.has_original else None

    def read_translation(self, pair: FilePair) -> bytes | None:
        return read_file(self.hip, pair.translated_path) if pair.has_translation else None

    @property
    def translated(self) -> bool:
        return self.hip.is_dir()

    def translated_name(self, original: str) -> str:
        return self.renames.get(original, original)

    def original_name(self, translated: str) -> str:
        for original, renamed in self.renames.items():
            if renamed == translated:
                return original
        return translated

    def pair(self, path: str) -> FilePair | None:
        """The pair for an original path (or a translated one with no original); None if neither exists."""
        if not is_safe_relative(path):
            return None
        old_file = safe_file(self.source, path)
        original = path
        if not old_file and path not in self.renames:
            original = self.original_name(path)
            old_file = safe_file(self.source, original) if original != path else False
        translated = self.translated_name(original)
        new_file = safe_file(self.hip, translated) if self.translated else False
        if not old_file and not new_file:
            return None
        return FilePair(original, translated, old_file, new_file)


def review_tree(run: Run) -> ReviewTree:
    workspace = workspace_for(run.pk)
    renames = hipify_data(run).get("renames")
    clean = {str(k): str(v) for k, v in renames.items()} if isinstance(renames, dict) else {}
    return ReviewTree(workspace.source, workspace.hip, workspace.records, clean)


def get_review_or_404(user: AnyUser, run_id: int) -> tuple[Run, ReviewTree]:
    """The run the user may see, with its stages loaded once (the review reads several), and its trees."""
    run = get_run_or_404(user, run_id)
    prefetch_related_objects([run], "stages")
    return run, review_tree(run)


def is_safe_relative(path: str) -> bool:
    if not path or "\0" in path or path.startswith("/"):
        return False
    parts = PurePosixPath(path).parts
    return all(part not in ("", ".", "..") for part in parts) and not SKIPPED_DIRS.intersection(parts)


def safe_file(root: Path, relative: str) -> bool:
    """True when `root/relative` is a regular file inside `root` reached without symbolic links."""
    return is_safe_relative(relative) and is_file_beneath(root, relative, follow_links=False)

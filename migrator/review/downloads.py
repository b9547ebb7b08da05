"""Downloads of a run's translation: the whole change as a git patch, the translated tree as .tar.gz,
and the stylesheet of the diff view's token colours."""
from __future__ import annotations

import tempfile
from collections.abc import Iterator
from functools import lru_cache

from django.contrib.auth.decorators import login_required
from django.http import FileResponse, Http404, HttpRequest, HttpResponse, StreamingHttpResponse
from django.views.decorators.http import require_GET

from migrator.lib.diffview.highlight import pygments_css
from migrator.lib.diffview.patch import build_patch_bytes
from migrator.lib.diffview.tree import tree_changes, tree_patch_pairs, write_tree_archive
from migrator.review.expired import unless_expired
from migrator.review.tree import ReviewTree, get_review_or_404

CODE_SCOPE = ".diff-code"


def _translated_tree_or_404(request: HttpRequest, run_id: int) -> tuple[int, ReviewTree]:
    run, tree = get_review_or_404(request.user, run_id)
    if not tree.translated or not tree.source.is_dir():
        raise Http404("This run has no translated tree (the hipify stage did not run)")
    return run.pk, tree


def _patch_pieces(tree: ReviewTree) -> Iterator[bytes]:
    """The patch file by file, so a large change is never held whole in memory."""
    changes = tree_changes(tree.source, tree.hip, tree.renames)
    for pair in tree_patch_pairs(tree.source, tree.hip, changes):
        yield build_patch_bytes([pair])


@login_required
@require_GET
@unless_expired
def run_patch(request: HttpRequest, run_id: int) -> StreamingHttpResponse:
    run_pk, tree = _translated_tree_or_404(request, run_id)
    response = StreamingHttpResponse(_patch_pieces(tree), content_type="text/x-diff; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="run-{run_pk}-hip.patch"'
    response["X-Content-Type-Options"] = "nosniff"
    return response


@login_required
@require_GET
@unless_expired
def run_archive(request: HttpRequest, run_id: int) -> FileResponse:
    """The translated tree under a top folder `run-<id>-hip/`, spooled through a temporary file."""
    run_pk, tree = _translated_tree_or_404(request, run_id)
    spool = tempfile.TemporaryFile()  # closed by FileResponse once sent
    write_tree_archive(tree.hip, spool, prefix=f"run-{run_pk}-hip")
    spool.seek(0)
    return FileResponse(spool, as_attachment=True, filename=f"run-{run_pk}-hip.tar.gz", content_type="application/gzip")


@lru_cache(maxsize=1)
def _stylesheet() -> str:
    return pygments_css(CODE_SCOPE)


@require_GET
def pygments_stylesheet(request: HttpRequest) -> HttpResponse:
    """Token colours of the diff view: the same text for everyone, so browsers may keep it a day."""
    response = HttpResponse(_stylesheet(), content_type="text/css; charset=utf-8")
    response["Cache-Control"] = "public, max-age=86400"
    return response

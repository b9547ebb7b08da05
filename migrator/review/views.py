"""Review of a run's translation: the file tree with change counts, and each file's diff.

A diff page shows its first `FIRST_PAGE_ROWS` rows (Pygments lexing dominates, so it stays
small); a sentinel row then fetches the next `CHUNK_ROWS` with htmx when it scrolls into view,
and each folded stretch opens in pieces (migrator/review/pages.py). The computed diff and the
rendered pages are cached (migrator/review/diffcache.py). Downloads live in downloads.py.
"""
from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseBadRequest
from django.shortcuts import render
from django.urls import reverse
from django.utils.safestring import mark_safe
from django.views.decorators.http import require_GET

from migrator.lib.diffview.sidebyside import SideBySide
from migrator.projects.models import Run
from migrator.review.delivery_modes import DELIVERY_LABELS, preview_mode
from migrator.review.diffcache import file_diff, file_list
from migrator.review.expired import unless_expired
from migrator.review.filelist import FILTER_CHOICES, filter_files, group_by_directory
from migrator.review.forms import DeliveryModeForm, DiffViewForm, FileFilterForm, FoldForm
from migrator.review.pages import CHUNK_ROWS, FIRST_PAGE_ROWS, diff_page, fold_rows, view_query
from migrator.review.tree import FilePair, ReviewTree, get_review_or_404


def _pair_or_404(tree: ReviewTree, path: str) -> FilePair:
    pair = tree.pair(path)
    if pair is None:
        raise Http404("No such file in this run")
    return pair


def _hipify_state(run: Run) -> str:
    stage = next((s for s in run.stages.all() if s.name == "hipify"), None)
    return stage.get_state_display() if stage is not None else "absent"


@login_required
@require_GET
@unless_expired
def run_files(request: HttpRequest, run_id: int) -> HttpResponse:
    run, tree = get_review_or_404(request.user, run_id)
    form = FileFilterForm(request.GET)
    which = form.which()
    entries = file_list(run, tree)
    shown = filter_files(entries, which)
    context = {
        "run": run, "tree": tree, "form": form, "which": which, "filters": FILTER_CHOICES,
        "directories": group_by_directory(shown), "shown_count": len(shown), "total_count": len(entries),
        "changed_count": sum(1 for e in entries if e.changed), "added": sum(e.added for e in entries),
        "removed": sum(e.removed for e in entries), "hipify_state": _hipify_state(run),
    }
    mode = DeliveryModeForm(request.GET).mode()
    context |= {"delivery_mode": mode, "delivery_labels": DELIVERY_LABELS}
    if mode:
        context["delivery"] = preview_mode(run, mode)
    return render(request, "review/files.html", context)


def _diff_context(run: Run, tree: ReviewTree, pair: FilePair, form: DiffViewForm) -> dict[str, object]:
    """The diff, or the notice that replaces it, and the first rows from `start`."""
    full, unified, start = bool(form.cleaned_data.get("full")), form.view_kind() == "unified", form.start_row()
    result = file_diff(run, tree, pair, full=full)
    context: dict[str, object] = {"notice": result.notice, "notice_kind": result.notice_kind, "diff": result.diff}
    if result.diff is not None:
        try:
            page = diff_page(run, tree, pair, result.diff, unified=unified, full=full, start=start,
                             limit=FIRST_PAGE_ROWS if start == 0 else CHUNK_ROWS)
        except IndexError as exc:
            raise Http404("No such rows") from exc
        context |= {"page": page, "rows_html": mark_safe(page.html)}  # escaped in rowhtml.py
    return context


@login_required
@require_GET
@unless_expired
def file_view(request: HttpRequest, run_id: int, path: str) -> HttpResponse:
    run, tree = get_review_or_404(request.user, run_id)
    pair = _pair_or_404(tree, path)
    form = DiffViewForm(request.GET)
    if not form.is_valid():
        return HttpResponseBadRequest("bad query parameters")
    view, full = form.view_kind(), bool(form.cleaned_data.get("full"))
    url = reverse("review:file", args=[run.pk, pair.original_path])
    context: dict[str, object] = {
        "run": run, "pair": pair, "tree": tree, "view": view, "full": full, "file_url": url,
        "split_url": url + view_query(False, full), "unified_url": url + view_query(True, full),
        "folded_url": url + view_query(view == "unified", False), "whole_url": url + view_query(view == "unified", True),
    }
    if tree.translated:
        context |= _diff_context(run, tree, pair, form)
    return render(request, "review/file.html", context)


def _diff_or_404(run: Run, tree: ReviewTree, pair: FilePair, full: bool) -> SideBySide:
    diff = file_diff(run, tree, pair, full=full).diff if tree.translated else None
    if diff is None:
        raise Http404("No diff for this file")
    return diff


def _shadowed(tree: ReviewTree, path: str, suffix: str) -> str | None:
    """A real file named like an endpoint ("dir/chunk") wins over the endpoint of a missing "dir"."""
    candidate = f"{path}/{suffix}"
    return candidate if tree.pair(path) is None and tree.pair(candidate) is not None else None


@login_required
@require_GET
@unless_expired
def file_chunk(request: HttpRequest, run_id: int, path: str) -> HttpResponse:
    """The next rows of a diff (an htmx fragment that replaces the sentinel row)."""
    run, tree = get_review_or_404(request.user, run_id)
    shadowed = _shadowed(tree, path, "chunk")
    if shadowed is not None:
        return file_view(request, run_id, shadowed)
    pair = _pair_or_404(tree, path)
    form = DiffViewForm(request.GET)
    if not form.is_valid() or form.cleaned_data.get("start") is None:
        return HttpResponseBadRequest("start is required")
    full = bool(form.cleaned_data.get("full"))
    diff = _diff_or_404(run, tree, pair, full)
    try:
        page = diff_page(run, tree, pair, diff, unified=form.view_kind() == "unified", full=full,
                         start=form.start_row(), limit=CHUNK_ROWS)
    except IndexError as exc:
        raise Http404("No such rows") from exc
    return HttpResponse(page.html)


@login_required
@require_GET
@unless_expired
def file_fold(request: HttpRequest, run_id: int, path: str) -> HttpResponse:
    """The lines hidden by one fold (an htmx fragment that replaces the fold row)."""
    run, tree = get_review_or_404(request.user, run_id)
    shadowed = _shadowed(tree, path, "fold")
    if shadowed is not None:
        return file_view(request, run_id, shadowed)
    pair = _pair_or_404(tree, path)
    form = FoldForm(request.GET)
    if not form.is_valid():
        return HttpResponseBadRequest("fold is required")
    full = bool(form.cleaned_data.get("full"))
    diff = _diff_or_404(run, tree, pair, full)
    try:
        html = fold_rows(run, pair, diff, form.cleaned_data["fold"], form.start_row(),
                         unified=form.view_kind() == "unified", full=full)
    except KeyError as exc:
        raise Http404("No such fold") from exc
    return HttpResponse(html)


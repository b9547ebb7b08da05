"""Notebook pages: search (as you type), entries, authoring from a failing log line, history."""
from __future__ import annotations

import json

from django.contrib import messages
from django.contrib.admin.views.decorators import staff_member_required
from django.contrib.auth.decorators import login_required
from django.http import HttpResponse, JsonResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from migrator.accounts.requests import AuthenticatedRequest
from migrator.lib.markdown import render_markdown
from migrator.lib.signatures.proposal import specific_signature
from migrator.notebook import actions
from migrator.notebook.forms import EntryForm, ImportForm, PrefillForm, SearchForm, signature_lines
from migrator.notebook.learning import top_unmatched
from migrator.notebook.models import Entry
from migrator.notebook.search import search_entries
from migrator.projects.access import get_run_or_404, teams_for
from migrator.projects.models import LogChunk


def _all_tags() -> list[str]:
    tags: set[str] = set()
    for entry_tags in Entry.objects.values_list("tags", flat=True):
        tags.update(entry_tags or [])
    return sorted(tags)


@login_required
@require_GET
def notebook_index(request: AuthenticatedRequest) -> HttpResponse:
    form = SearchForm(request.GET)
    params = form.cleaned_data if form.is_valid() else {"q": "", "stage": "", "tag": ""}
    hits = search_entries(params["q"], stage=params["stage"], tag=params["tag"])
    context = {"form": form, "hits": hits, "query": params["q"], "tags": _all_tags()}
    if request.htmx:
        return render(request, "notebook/index.html#results", context)
    context["unmatched"] = top_unmatched(teams_for(request.user).values_list("pk", flat=True))
    return render(request, "notebook/index.html", context)


@login_required
@require_GET
def entry_detail(request: AuthenticatedRequest, slug: str) -> HttpResponse:
    entry = get_object_or_404(Entry.objects.prefetch_related("signatures"), slug=slug)
    context = {
        "entry": entry, "cause_html": render_markdown(entry.cause), "fix_html": render_markdown(entry.fix),
        "voted": entry.fixed_votes.filter(user=request.user).exists(),
        "recent_matches": entry.matches.select_related("stage__run__project").filter(
            stage__run__project__team__memberships__user=request.user
        ).order_by("-created_at")[:10],
    }
    return render(request, "notebook/entry.html", context)


@login_required
@require_http_methods(["GET", "POST"])
def entry_new(request: AuthenticatedRequest) -> HttpResponse:
    if request.method == "POST":
        form = EntryForm(request.POST)
        if form.is_valid():
            entry = actions.save_entry(form.cleaned_data["entry"], user=request.user, note=form.cleaned_data["note"] or "created")
            messages.success(request, "Entry added to the notebook.")
            return redirect(entry)
    else:
        form = EntryForm(initial=_prefill(request))
    return render(request, "notebook/edit.html", {"form": form, "entry": None})


def _stage_log_lines(run_id: int | None, stage: str) -> list[str]:
    """The log of the stage a prefilled line came from (already checked to be visible), for a specific signature."""
    if not run_id or not stage:
        return []
    chunks = LogChunk.objects.filter(stage__run_id=run_id, stage__name=stage).order_by("offset").values_list("text", flat=True)
    return "".join(chunks[:2000]).splitlines()


def _prefill(request: AuthenticatedRequest) -> dict[str, object]:
    """Initial values from a failing log line ("add to notebook" on a stage)."""
    prefill = PrefillForm(request.GET)
    if not prefill.is_valid() or not prefill.cleaned_data["line"]:
        return {}
    line = prefill.cleaned_data["line"]
    if prefill.cleaned_data["run"]:
        get_run_or_404(request.user, prefill.cleaned_data["run"])  # only lines of runs the user may see
    signature = specific_signature(line, _stage_log_lines(prefill.cleaned_data["run"], prefill.cleaned_data["stage"]))
    initial: dict[str, object] = {"signatures": f"text: {signature}", "symptom": line.strip()[:500], "title": signature[:120]}
    if prefill.cleaned_data["stage"]:
        initial["stages"] = [prefill.cleaned_data["stage"]]
    return initial


@login_required
@require_http_methods(["GET", "POST"])
def entry_edit(request: AuthenticatedRequest, slug: str) -> HttpResponse:
    entry = get_object_or_404(Entry, slug=slug)
    if request.method == "POST":
        form = EntryForm(request.POST)
        if form.is_valid():
            actions.save_entry(form.cleaned_data["entry"], user=request.user, entry=entry, note=form.cleaned_data["note"])
            messages.success(request, "Entry saved; the previous version is in its history.")
            return redirect(entry)
    else:
        form = EntryForm(initial={
            "title": entry.title, "symptom": entry.symptom, "cause": entry.cause, "fix": entry.fix,
            "stages": entry.stages, "tags": ", ".join(entry.tags), "links": "\n".join(entry.links),
            "signatures": signature_lines([(s.kind, s.pattern) for s in entry.signatures.all()]),
        })
    return render(request, "notebook/edit.html", {"form": form, "entry": entry})


@login_required
@require_GET
def entry_history(request: AuthenticatedRequest, slug: str) -> HttpResponse:
    entry = get_object_or_404(Entry, slug=slug)
    revisions = entry.revisions.select_related("author")
    return render(request, "notebook/history.html", {"entry": entry, "revisions": revisions})


@login_required
@require_POST
def entry_fixed(request: AuthenticatedRequest, slug: str) -> HttpResponse:
    entry = get_object_or_404(Entry, slug=slug)
    if actions.mark_fixed(entry, request.user):
        messages.success(request, "Thanks: counted as 'this fixed it'.")
    else:
        messages.info(request, "You had already marked this entry as the fix.")
    return redirect(entry)


@login_required
@require_GET
def notebook_export(request: AuthenticatedRequest) -> JsonResponse:
    response = JsonResponse(actions.export_notebook(), json_dumps_params={"indent": 1})
    response["Content-Disposition"] = 'attachment; filename="migrator-notebook.json"'
    return response


@staff_member_required
@require_http_methods(["GET", "POST"])
def notebook_import(request: AuthenticatedRequest) -> HttpResponse:
    form = ImportForm(request.POST or None, request.FILES or None)
    if request.method == "POST" and form.is_valid():
        try:
            payload = json.load(form.cleaned_data["file"])
            counts = actions.import_notebook(payload, user=request.user)
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            messages.error(request, f"not a JSON file: {exc}")
        except actions.NotebookError as exc:
            messages.error(request, f"nothing imported: {exc}")
        else:
            messages.success(request, "imported: " + ", ".join(f"{k} {v}" for k, v in counts.items()))
            return redirect("notebook:index")
    return render(request, "notebook/import.html", {"form": form})

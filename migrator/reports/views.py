"""Report pages: the permanent HTML page of a run's report and its Markdown and JSON exports."""
from __future__ import annotations

import nh3
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render
from django.utils.safestring import mark_safe
from django.views.decorators.http import require_GET
from markdown_it import MarkdownIt

from migrator.projects.access import get_run_or_404
from migrator.reports.build import build_report
from migrator.reports.icons import with_icons
from migrator.reports.markdown import export_markdown


def markdown_to_html(text: str) -> str:
    """Our Markdown as sanitised HTML (cells are escaped already; nh3 is the safety net)."""
    html = MarkdownIt("commonmark", {"html": True}).enable("table").render(text)
    return nh3.clean(html, link_rel="noopener noreferrer")


@login_required
@require_GET
def run_report(request: HttpRequest, run_id: int) -> HttpResponse:
    run = get_run_or_404(request.user, run_id)
    report = build_report(run)
    body = mark_safe(with_icons(markdown_to_html(export_markdown(report))))  # sanitised; icons are our own markup
    posts = run.status_posts.all()
    return render(request, "reports/run.html", {"run": run, "report": report, "body": body, "posts": posts})


@login_required
@require_GET
def run_report_markdown(request: HttpRequest, run_id: int) -> HttpResponse:
    run = get_run_or_404(request.user, run_id)
    text = export_markdown(build_report(run))
    response = HttpResponse(text, content_type="text/markdown; charset=utf-8")
    response["Content-Disposition"] = f'inline; filename="run-{run.pk}-report.md"'
    return response


@login_required
@require_GET
def run_report_json(request: HttpRequest, run_id: int) -> HttpResponse:
    run = get_run_or_404(request.user, run_id)
    response = JsonResponse(build_report(run), json_dumps_params={"indent": 1})
    response["Content-Disposition"] = f'inline; filename="run-{run.pk}-report.json"'
    return response

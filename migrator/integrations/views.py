"""Webhook endpoints for GitHub and GitLab. No login: each delivery proves itself with the project's secret.

Answers: 401 bad or missing signature/token, 404 unknown project or no integration, 413 a body over
``MAX_BODY_BYTES``, 400 a payload or event we do not understand (including JSON nested deeper than
``MAX_JSON_DEPTH``: size and nesting are bounded before parsing), 409 a project without a git source, 202 a delivery recorded and its
run queued (a worker creates it), or a known event needing no run (``ignored``), 200 a replayed
delivery (nothing queued), the same change again under a fresh delivery id within the dedup window, or a
delivery over the project's hourly bound (``skipped`` with the reason, recorded, nothing queued), or a ping.
"""
from __future__ import annotations

import hashlib

from django.http import Http404, HttpRequest, JsonResponse
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_POST

from migrator.integrations.actions import accept_delivery
from migrator.integrations.events import (
    PayloadError,
    RunRequest,
    github_run_request,
    gitlab_run_request,
)
from migrator.integrations.models import HostKind, ProjectIntegration
from migrator.integrations.verify import verify_github_signature, verify_gitlab_token
from migrator.lib.jsonbounds import JsonBoundsError, load_bounded
from migrator.projects.constants import SourceKind
from migrator.projects.queueing import retry_after_s

MAX_DELIVERY_ID = 100
MAX_BODY_BYTES = 5 * 1024 * 1024  # GitHub and GitLab events are far smaller; bigger bodies are not read
MAX_JSON_DEPTH = 64  # real payloads nest about 6 levels


def _integration_or_404(project_id: int) -> ProjectIntegration:
    # Only what a delivery needs: this runs on every delivery (see bench/webhook_bench.py).
    integration = (
        ProjectIntegration.objects.select_related("project")
        .only("webhook_secret", "gitlab_token", "project__id", "project__source_kind")
        .filter(project_id=project_id)
        .first()
    )
    if integration is None:
        raise Http404("no such project")
    return integration


def _error(message: str, status: int) -> JsonResponse:
    return JsonResponse({"error": message}, status=status)


def _too_large(request: HttpRequest) -> JsonResponse | None:
    """413 before the body is read when its declared length is over the limit."""
    try:
        declared = int(request.META.get("CONTENT_LENGTH") or 0)
    except ValueError:
        return _error("malformed Content-Length", 400)
    return _error(f"body over the limit of {MAX_BODY_BYTES} bytes", 413) if declared > MAX_BODY_BYTES else None


def _payload(body: bytes) -> dict[str, object]:
    try:
        payload = load_bounded(body, max_bytes=MAX_BODY_BYTES, max_depth=MAX_JSON_DEPTH)
    except JsonBoundsError as exc:
        raise PayloadError(str(exc)) from exc
    if not isinstance(payload, dict):
        raise PayloadError("body is not a JSON object")
    return payload


def _start(integration: ProjectIntegration, provider: str, delivery_id: str, wanted: RunRequest | None) -> JsonResponse:
    if wanted is None:
        return JsonResponse({"ignored": True}, status=202)
    project = integration.project
    if project.source_kind != SourceKind.GIT:
        return _error("this project has no git source to fetch the commit from", 409)
    outcome = accept_delivery(project, provider, delivery_id, wanted)
    if outcome.skipped:
        return JsonResponse({"skipped": outcome.skipped, "reason": outcome.reason, "delivery": outcome.delivery_id},
                            status=200)
    if not outcome.created:
        run_id = outcome.run.pk if outcome.run else None
        return JsonResponse({"duplicate": True, "delivery": outcome.delivery_id, "run": run_id}, status=200)
    if not outcome.queued:  # recorded: a redelivery is answered as a duplicate, the sweep queues it
        response = _error("the work queue cannot be reached right now; the delivery is recorded", 503)
        response["Retry-After"] = str(retry_after_s())
        return response
    return JsonResponse({"queued": True, "delivery": outcome.delivery_id}, status=202)


@csrf_exempt
@require_POST
def github_hook(request: HttpRequest, project_id: int) -> JsonResponse:
    integration = _integration_or_404(project_id)
    if refused := _too_large(request):
        return refused
    body = request.body
    if not verify_github_signature(integration.webhook_secret, body, request.headers.get("X-Hub-Signature-256")):
        return _error("bad or missing X-Hub-Signature-256", 401)
    event = request.headers.get("X-GitHub-Event", "")
    if event == "ping":
        return JsonResponse({"pong": True})
    delivery_id = request.headers.get("X-GitHub-Delivery", "").strip()
    if not delivery_id or len(delivery_id) > MAX_DELIVERY_ID:
        return _error("missing or overlong X-GitHub-Delivery", 400)
    try:
        wanted = github_run_request(event, _payload(body))
    except PayloadError as exc:
        return _error(str(exc), 400)
    return _start(integration, HostKind.GITHUB, delivery_id, wanted)


@csrf_exempt
@require_POST
def gitlab_hook(request: HttpRequest, project_id: int) -> JsonResponse:
    integration = _integration_or_404(project_id)
    if not verify_gitlab_token(integration.gitlab_token, request.headers.get("X-Gitlab-Token")):
        return _error("bad or missing X-Gitlab-Token", 401)
    if refused := _too_large(request):
        return refused
    body = request.body
    # Without an event UUID (older GitLab), identical bodies count as the same delivery.
    delivery_id = request.headers.get("X-Gitlab-Event-UUID", "").strip() or "sha256:" + hashlib.sha256(body).hexdigest()
    if len(delivery_id) > MAX_DELIVERY_ID:
        return _error("overlong X-Gitlab-Event-UUID", 400)
    try:
        wanted = gitlab_run_request(request.headers.get("X-Gitlab-Event", ""), _payload(body))
    except PayloadError as exc:
        return _error(str(exc), 400)
    return _start(integration, HostKind.GITLAB, delivery_id, wanted)

"""Refusing new work while the message broker is down: 503 with Retry-After, nothing recorded.

Checked before a run is recorded, so a client that retries after the 503 never leaves a duplicate
behind. A broker that fails between this check and the publish (after commit) loses nothing: the
run is recorded and the sweep publishes its first stage when the broker answers again.
"""
from __future__ import annotations

from django.conf import settings as django_settings
from django.http import HttpResponse, JsonResponse

from migrator.pipeline.broker import broker_reachable

QUEUE_DOWN_MESSAGE = "The work queue cannot be reached right now; nothing was started. Try again in {seconds} s."


def queue_is_down() -> bool:
    return not broker_reachable()


def retry_after_s() -> int:
    return int(django_settings.MIGRATOR_BROKER_RETRY_AFTER_S)


def queue_down_message() -> str:
    return QUEUE_DOWN_MESSAGE.format(seconds=retry_after_s())


def with_retry_after(response: HttpResponse) -> HttpResponse:
    response.status_code = 503
    response["Retry-After"] = str(retry_after_s())
    return response


def queue_down_json(key: str = "detail") -> JsonResponse:
    response = JsonResponse({key: queue_down_message()}, status=503)
    response["Retry-After"] = str(retry_after_s())
    return response

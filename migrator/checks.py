"""Start-up checks of the deployment settings that Django's own checks do not know about.

Run by every ``manage.py`` command (``./dev up`` runs ``migrate`` first, so the warning shows there) and
logged once by the WSGI application at start, since gunicorn runs no checks of its own."""
from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

from django.apps import AppConfig
from django.conf import settings
from django.core.checks import CheckMessage, Warning, register

from migrator.envconf import is_loopback_host, split_bind

log = logging.getLogger(__name__)


def public_url_problem() -> str:
    """Why the links this dashboard sends out may point nowhere; empty when they are fine."""
    if getattr(settings, "MIGRATOR_PUBLIC_URL_SET", True):
        return ""
    host, _ = split_bind(str(settings.MIGRATOR_BIND))
    if is_loopback_host(host):
        return ""
    return (f"MIGRATOR_PUBLIC_URL is unset while the dashboard listens on {settings.MIGRATOR_BIND}: report, "
            f"status and pull-request links use {settings.MIGRATOR_PUBLIC_URL}, guessed from the bind address; "
            "set MIGRATOR_PUBLIC_URL to the address clients use")


@register()
def check_public_url(app_configs: Sequence[AppConfig] | None, **kwargs: Any) -> list[CheckMessage]:
    problem = public_url_problem()
    return [Warning(problem, id="migrator.W001")] if problem else []


def warn_at_start() -> None:
    if problem := public_url_problem():
        log.warning("%s", problem)

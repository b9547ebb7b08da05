"""Links that leave the site (report comments, JSON reports) use the dashboard's public address."""
from __future__ import annotations

from django.conf import settings


def absolute_url(path: str) -> str:
    """``path`` on the public address of this dashboard (MIGRATOR_PUBLIC_URL), for links leaving the site."""
    base = str(getattr(settings, "MIGRATOR_PUBLIC_URL", "") or "http://localhost:8000")
    return base.rstrip("/") + path

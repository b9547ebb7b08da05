"""The request type of views behind ``@login_required``: its user is a signed-in ``User``, and
django-htmx's middleware has set ``htmx``. Annotating such views with it lets mypy check what they
do with the user instead of widening everything to ``AnonymousUser``."""
from __future__ import annotations

from django.contrib.auth.models import User
from django.http import HttpRequest
from django_htmx.middleware import HtmxDetails


class AuthenticatedRequest(HttpRequest):
    user: User  # narrower than HttpRequest's: login_required ensures it
    htmx: HtmxDetails

"""The Content-Security-Policy header on every response.

Our pages load scripts (htmx, served from our static files) and stylesheets only from this site and
carry no inline script, inline style or event-handler attribute, so the policy allows 'self' and
nothing else. A response that already sets its own policy keeps it.
"""
from __future__ import annotations

from collections.abc import Callable

from django.conf import settings as django_settings
from django.http import HttpRequest, HttpResponse


class ContentSecurityPolicyMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response
        self.policy = str(django_settings.MIGRATOR_CONTENT_SECURITY_POLICY)

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        if self.policy and "Content-Security-Policy" not in response:
            response["Content-Security-Policy"] = self.policy
        return response

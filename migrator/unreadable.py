"""A request whose body the client stopped sending (cut off by the server's read deadline, see
``migrator.serving``) answers 408 Request Timeout, not a CSRF failure or a 500 with a traceback."""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.http import HttpRequest, HttpResponse, HttpResponseBase, UnreadablePostError

TIMED_OUT = "The request did not arrive in time; please try again."


def _timed_out() -> HttpResponse:
    response = HttpResponse(TIMED_OUT, status=408, content_type="text/plain; charset=utf-8")
    response["Connection"] = "close"
    return response


class UnreadableRequestMiddleware:
    """Placed before CsrfViewMiddleware, which reads form bodies and takes an unreadable one for a
    missing token; views that read the body themselves (the API, webhooks) raise, answered here."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponseBase]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponseBase:
        return self.get_response(request)

    def process_view(self, request: HttpRequest, view: Callable[..., Any], args: Any, kwargs: Any) -> HttpResponse | None:
        # Only where the CSRF middleware is about to read the form: views exempt from it (uploads set
        # their own upload handlers first, webhooks read the raw body) read it themselves.
        if request.method == "POST" and not getattr(view, "csrf_exempt", False):
            try:
                request.POST  # noqa: B018 - parse the form body now, as the CSRF check is about to
            except UnreadablePostError:
                return _timed_out()
        return None

    def process_exception(self, request: HttpRequest, exception: Exception) -> HttpResponse | None:
        return _timed_out() if isinstance(exception, UnreadablePostError) else None

"""Sign-in with back-off: per account and per client address (see ``throttle``).

A locked sign-in is answered 429 with ``Retry-After`` and a message saying how long to wait; the
password is not checked while locked, so a correct guess in the middle of a flood gets nowhere.
"""
from __future__ import annotations

from typing import Any

from django.contrib.admin.forms import AdminAuthenticationForm
from django.contrib.auth import views as auth_views
from django.contrib.auth.forms import AuthenticationForm
from django.core.exceptions import ValidationError
from django.http import HttpRequest, HttpResponseBase

from migrator.accounts import throttle


class ThrottledLoginMixin:
    request: HttpRequest | None
    cleaned_data: dict[str, Any]

    def clean(self) -> dict[str, Any]:
        request = self.request
        if request is None:  # a form built without a request cannot be throttled; refuse it
            raise ValidationError("sign-in needs a request", code="no_request")
        account = str(self.cleaned_data.get("username") or "")
        address = throttle.client_address(request)
        checks = [(throttle.login_account_policy(), account), (throttle.login_address_policy(), address)]
        wait = max(throttle.wait_s(policy, who) for policy, who in checks)
        if wait:
            raise self._locked(request, wait)
        try:
            data: dict[str, Any] = super().clean()  # type: ignore[misc]
        except ValidationError:
            wait = max(throttle.record_failure(policy, who) for policy, who in checks)
            if wait:
                raise self._locked(request, wait) from None
            raise
        throttle.clear(throttle.login_account_policy(), account)
        return data

    @staticmethod
    def _locked(request: HttpRequest, wait: int) -> ValidationError:
        request.throttled_for = wait  # type: ignore[attr-defined]
        return ValidationError(throttle.wait_message(wait), code="throttled")


class ThrottledAuthenticationForm(ThrottledLoginMixin, AuthenticationForm):
    pass


class ThrottledAdminAuthenticationForm(ThrottledLoginMixin, AdminAuthenticationForm):
    pass


_login_view = auth_views.LoginView.as_view(authentication_form=ThrottledAuthenticationForm)


def login(request: HttpRequest) -> HttpResponseBase:
    """Django's LoginView with the throttled form; a locked attempt answers 429 with Retry-After."""
    response = _login_view(request)
    wait = getattr(request, "throttled_for", 0)
    if wait:
        response.status_code = 429
        response["Retry-After"] = str(wait)
    return response

"""Sign-in with growing delays (see ``throttle``): per account and client address, per address, and per
device for a browser that signed in to the account before.

A delayed attempt is answered 429 with ``Retry-After`` and a message saying how long to wait; its
password is not checked, so a correct guess in the middle of a flood gets nowhere. The delays are
keyed so that they fall on whoever failed: a correct password from another address, or from a browser
that signed in to the account before, is never refused because of someone else's failures.
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
        checks = throttle.login_keys(request, account)
        wait = max(throttle.wait_s(policy, who) for policy, who in checks)
        if wait:
            raise self._delayed(request, wait)
        try:
            data: dict[str, Any] = super().clean()  # type: ignore[misc]
        except ValidationError:
            wait = max(throttle.record_failure(policy, who) for policy, who in checks)
            if wait:
                raise self._delayed(request, wait) from None
            raise
        for policy, who in checks:
            if policy.scope != "login-address":  # one known account never resets a spray from its address
                throttle.clear(policy, who)
        request.signed_in_as = account  # type: ignore[attr-defined]
        return data

    @staticmethod
    def _delayed(request: HttpRequest, wait: int) -> ValidationError:
        request.throttled_for = wait  # type: ignore[attr-defined]
        return ValidationError(throttle.wait_message(wait), code="throttled")


class ThrottledAuthenticationForm(ThrottledLoginMixin, AuthenticationForm):
    pass


class ThrottledAdminAuthenticationForm(ThrottledLoginMixin, AdminAuthenticationForm):
    pass


_login_view = auth_views.LoginView.as_view(authentication_form=ThrottledAuthenticationForm)


def login(request: HttpRequest) -> HttpResponseBase:
    """Django's LoginView with the throttled form; a delayed attempt answers 429 with Retry-After, a
    successful one leaves the browser's device cookie for the account."""
    response = _login_view(request)
    wait = getattr(request, "throttled_for", 0)
    if wait:
        response.status_code = 429
        response["Retry-After"] = str(wait)
    account = getattr(request, "signed_in_as", "")
    if account and request.user.is_authenticated:
        throttle.remember_device(response, request, account)
    return response

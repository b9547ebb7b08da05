"""Sign-in throttling: per account and per client address, with back-off and a clear message."""
from __future__ import annotations

from typing import TYPE_CHECKING

import pytest
from django.contrib.auth.models import User
from django.test import Client
from pytest_django import Settings

from migrator.accounts import throttle
from migrator.accounts.models import Team

if TYPE_CHECKING:
    from django.test.client import _MonkeyPatchedWSGIResponse as TestResponse  # what Client's methods return

pytestmark = pytest.mark.django_db


def _login(client: Client, username: str, password: str, address: str = "198.51.100.7",
           forwarded_for: str | None = None) -> TestResponse:
    headers = {"X-Forwarded-For": forwarded_for} if forwarded_for is not None else {}
    return client.post("/login/", {"username": username, "password": password}, headers=headers, REMOTE_ADDR=address)


def _signed_in(client: Client) -> bool:
    return "_auth_user_id" in client.session


def test_wrong_passwords_lock_the_account_and_then_the_right_one_is_refused(
    client: Client, team_user: tuple[User, Team]
) -> None:
    for _ in range(5):
        page = _login(client, "alice", "wrong")
        assert page.status_code == 200 and "correct username and password" in page.content.decode()
    locked = _login(client, "alice", "wrong")
    assert locked.status_code == 429 and locked["Retry-After"] == "30"
    assert "Too many failed attempts. Try again in 30 seconds." in locked.content.decode()
    right = _login(client, "alice", "pw-alice-123")
    assert right.status_code == 429 and not _signed_in(client)
    # The lock is on the account: another address is refused too.
    assert _login(client, "alice", "pw-alice-123", address="203.0.113.9").status_code == 429


def test_each_further_failure_doubles_the_wait_up_to_the_limit(
    client: Client, team_user: tuple[User, Team], monkeypatch: pytest.MonkeyPatch, settings: Settings
) -> None:
    settings.MIGRATOR_THROTTLE_MAX_S = 100
    now = [1_000_000.0]
    monkeypatch.setattr("migrator.accounts.throttle.time.time", lambda: now[0])
    waits = []
    for _ in range(5 + 4):
        response = _login(client, "alice", "wrong")
        if response.status_code == 429:
            waits.append(int(response["Retry-After"]))
            now[0] += waits[-1]  # wait out the lock, then fail again
    assert waits == [30, 60, 100, 100]


def test_a_success_clears_the_account_count(client: Client, team_user: tuple[User, Team]) -> None:
    for _ in range(4):
        _login(client, "alice", "wrong")
    assert _login(client, "alice", "pw-alice-123").status_code == 302 and _signed_in(client)
    client.logout()
    for _ in range(5):
        assert _login(client, "alice", "wrong").status_code == 200


def test_one_address_spraying_many_accounts_is_locked(client: Client, team_user: tuple[User, Team]) -> None:
    for i in range(20):
        assert _login(client, f"user{i}", "wrong").status_code == 200
    assert _login(client, "someone-else", "wrong").status_code == 429
    assert _login(client, "alice", "pw-alice-123").status_code == 429 and not _signed_in(client)
    assert _login(client, "alice", "pw-alice-123", address="203.0.113.9").status_code == 302


def test_x_forwarded_for_counts_only_behind_a_configured_proxy(
    client: Client, team_user: tuple[User, Team], settings: Settings
) -> None:
    for i in range(20):
        _login(client, f"user{i}", "wrong", forwarded_for=f"192.0.2.{i}")
    # Without MIGRATOR_PROXY_HOPS a forged header changes nothing: the socket address is locked.
    assert _login(client, "x", "wrong", forwarded_for="192.0.2.250").status_code == 429
    settings.MIGRATOR_PROXY_HOPS = 1
    assert _login(client, "alice", "pw-alice-123", forwarded_for="192.0.2.251").status_code == 302


def test_the_admin_sign_in_is_throttled_too(client: Client, team_user: tuple[User, Team]) -> None:
    for _ in range(5):
        client.post("/admin/login/", {"username": "alice", "password": "wrong"}, REMOTE_ADDR="198.51.100.7")
    page = client.post("/admin/login/", {"username": "alice", "password": "wrong"}, REMOTE_ADDR="198.51.100.7")
    assert "Too many failed attempts" in page.content.decode()


def test_counts_live_in_redis_shared_by_every_web_process(
    client: Client, team_user: tuple[User, Team], settings: Settings
) -> None:
    import os

    import redis

    url = os.environ.get("MIGRATOR_TEST_REDIS_URL", "redis://127.0.0.1:6379/13")
    prefix = f"throttle-test-{os.getpid()}"
    settings.CACHES = {
        **settings.CACHES,
        "throttle": {"BACKEND": "django.core.cache.backends.redis.RedisCache", "LOCATION": url, "KEY_PREFIX": prefix},
    }
    try:
        for _ in range(6):
            _login(client, "alice", "wrong", address="198.51.100.77")
        assert list(redis.Redis.from_url(url).scan_iter(f"{prefix}:*:throttle:login-account:*"))
        # A fresh client (as another web process would be) from another address meets the same lock.
        assert _login(Client(), "alice", "pw-alice-123", address="198.51.100.78").status_code == 429
    finally:
        throttle.clear(throttle.login_account_policy(), "alice")
        throttle.clear(throttle.login_address_policy(), "198.51.100.77")

"""Sign-in throttling: growing delays per (account, address), per address and per signed-in device, with a
clear message; a correct password is never refused because of someone else's failures, and the counts go
on (per process, said in the operator log) when Redis is down."""
from __future__ import annotations

from typing import TYPE_CHECKING

import pytest
from django.contrib.auth.models import User
from django.test import Client, RequestFactory
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


def _sign_out(client: Client) -> None:
    """Sign out as a browser does: the session goes, the device cookie stays (Client.logout drops all cookies)."""
    device = client.cookies[throttle.DEVICE_COOKIE].value
    client.logout()
    client.cookies[throttle.DEVICE_COOKIE] = device


def test_wrong_passwords_delay_that_address_only(client: Client, team_user: tuple[User, Team]) -> None:
    for _ in range(5):
        page = _login(client, "alice", "wrong")
        assert page.status_code == 200 and "correct username and password" in page.content.decode()
    delayed = _login(client, "alice", "wrong")
    assert delayed.status_code == 429 and delayed["Retry-After"] == "30"
    assert "Too many failed attempts. Try again in 30 seconds." in delayed.content.decode()
    right = _login(client, "alice", "pw-alice-123")
    assert right.status_code == 429 and not _signed_in(client)  # not checked while that address waits
    # Alice elsewhere is not refused because of what was tried from 198.51.100.7.
    assert _login(Client(), "alice", "pw-alice-123", address="203.0.113.9").status_code == 302


def test_a_browser_that_signed_in_before_is_never_refused_for_others_failures(
    client: Client, team_user: tuple[User, Team]
) -> None:
    assert _login(client, "alice", "pw-alice-123").status_code == 302
    assert throttle.DEVICE_COOKIE in client.cookies
    _sign_out(client)
    attacker = Client()
    for i in range(40):  # the same address: alice's account, then a spray of other names
        _login(attacker, "alice" if i < 10 else f"user{i}", "wrong")
    assert _login(attacker, "alice", "pw-alice-123").status_code == 429
    assert _login(client, "alice", "pw-alice-123").status_code == 302 and _signed_in(client)


def test_failures_from_a_known_browser_delay_that_browser(client: Client, team_user: tuple[User, Team]) -> None:
    assert _login(client, "alice", "pw-alice-123").status_code == 302
    _sign_out(client)
    for _ in range(5):
        assert _login(client, "alice", "wrong").status_code == 200
    assert _login(client, "alice", "wrong").status_code == 429
    assert _login(Client(), "alice", "pw-alice-123").status_code == 302  # the address itself is not delayed


@pytest.mark.parametrize("cookie", ["forged", "alice-for-bob"])
def test_a_device_cookie_counts_only_when_signed_for_that_account(
    client: Client, team_user: tuple[User, Team], cookie: str
) -> None:
    assert _login(client, "alice", "pw-alice-123").status_code == 302
    if cookie == "forged":
        client.cookies[throttle.DEVICE_COOKIE] = client.cookies[throttle.DEVICE_COOKIE].value[:-3] + "xyz"
    account = "alice" if cookie == "forged" else "bob"
    _sign_out(client)
    for _ in range(5):
        _login(Client(), account, "wrong")  # another browser at the same address
    assert _login(client, account, "wrong").status_code == 429  # counted with that address, not as a device


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
    client.logout()  # the device cookie goes too: the count cleared is the one for this address
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
        assert list(redis.Redis.from_url(url).scan_iter(f"{prefix}:*:throttle:login-pair:*"))
        # A fresh client (as another web process would be) from the same address meets the same delay.
        assert _login(Client(), "alice", "pw-alice-123", address="198.51.100.77").status_code == 429
    finally:
        for policy, who in throttle.login_keys(RequestFactory().get("/", REMOTE_ADDR="198.51.100.77"), "alice"):
            throttle.clear(policy, who)


def test_with_redis_down_failures_are_still_counted_and_the_operator_is_told(
    client: Client, team_user: tuple[User, Team], settings: Settings, caplog: pytest.LogCaptureFixture
) -> None:
    settings.CACHES = {
        **settings.CACHES,
        "throttle": {"BACKEND": "django.core.cache.backends.redis.RedisCache", "LOCATION": "redis://127.0.0.1:1/0",
                     "OPTIONS": {"socket_connect_timeout": 1}},
    }
    for _ in range(5):
        assert _login(client, "alice", "wrong").status_code == 200
    assert _login(client, "alice", "wrong").status_code == 429
    assert _login(client, "alice", "pw-alice-123").status_code == 429
    assert _login(Client(), "alice", "pw-alice-123", address="203.0.113.9").status_code == 302  # nobody locked out
    said = [r for r in caplog.records if r.name == "migrator.accounts.throttle" and r.levelname == "ERROR"]
    assert len(said) == 1 and "counted in this process only" in said[0].getMessage()


def test_ipv6_clients_are_counted_per_64_block(client: Client, team_user: tuple[User, Team]) -> None:
    for i in range(20):
        _login(client, f"user{i}", "wrong", address=f"2001:db8:1:2::{i + 1:x}")
    assert _login(client, "x", "wrong", address="2001:db8:1:2:ffff::1").status_code == 429
    assert _login(client, "x", "wrong", address="2001:db8:1:3::1").status_code == 200

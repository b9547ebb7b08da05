"""Growing delays for repeated failed sign-ins and bad API tokens, counted in the ``throttle`` cache (Redis).

Each scope counts failures per key within a window. The first ``free`` failures cost nothing; after
that the key must wait ``base_s`` seconds, doubled per further failure up to ``max_s``, before its next
attempt is even checked. Keys are chosen so that an attacker's failures delay the attacker, never
someone else's correct password or valid token:

- sign-in from a browser that signed in to the account before (it carries a signed device cookie):
  per (account, device);
- any other sign-in: per (account, client address), and per client address over every account (a
  spray of many names, known or not; the same for both, so the answers tell nobody which names exist);
- API tokens: per client address, and a valid token is always let through (only bad ones wait).

IPv6 clients are counted per /64, the block one client usually holds. When the counter store is
unreachable the counts go on in this process (a bounded in-memory cache: with N web processes an
attacker gets at most N times the attempts) and the operator log says so once a minute: never
unlimited, and nobody is locked out because Redis is down.
"""
from __future__ import annotations

import hashlib
import ipaddress
import logging
import secrets
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

from django.conf import settings as django_settings
from django.core import signing
from django.core.cache import BaseCache, caches
from django.core.cache.backends.locmem import LocMemCache
from django.http import HttpRequest, HttpResponseBase

log = logging.getLogger(__name__)
CACHE_ALIAS = "throttle"
DEVICE_COOKIE = "migrator_device"
DEVICE_SALT = "migrator.accounts.device"
STORE_DOWN_LOG_EVERY_S = 60
T = TypeVar("T")

# Where counts go while the shared store is down: per process, bounded (least recently used first out).
_fallback = LocMemCache("migrator-throttle-fallback", {"OPTIONS": {"MAX_ENTRIES": 50_000, "CULL_FREQUENCY": 10}})


@dataclass(frozen=True)
class Policy:
    scope: str
    free: int  # failures allowed before any delay
    base_s: int  # first delay; doubled for each further failure
    max_s: int  # longest delay
    window_s: int  # failures older than this are forgotten


def login_pair_policy() -> Policy:
    return Policy("login-pair", django_settings.MIGRATOR_LOGIN_FREE_ATTEMPTS, *_backoff())


def login_device_policy() -> Policy:
    return Policy("login-device", django_settings.MIGRATOR_LOGIN_FREE_ATTEMPTS, *_backoff())


def login_address_policy() -> Policy:
    return Policy("login-address", django_settings.MIGRATOR_LOGIN_ADDRESS_FREE_ATTEMPTS, *_backoff())


def token_address_policy() -> Policy:
    return Policy("token-address", django_settings.MIGRATOR_TOKEN_FREE_ATTEMPTS, *_backoff())


def _backoff() -> tuple[int, int, int]:
    base = int(django_settings.MIGRATOR_THROTTLE_BASE_S)
    longest = int(django_settings.MIGRATOR_THROTTLE_MAX_S)
    return base, longest, max(3600, longest * 4)


def client_address(request: HttpRequest) -> str:
    """The client's address: REMOTE_ADDR, or with MIGRATOR_PROXY_HOPS trusted proxies in front, the
    address those proxies saw (counted from the right of X-Forwarded-For, which clients can forge)."""
    hops = int(django_settings.MIGRATOR_PROXY_HOPS)
    remote = str(request.META.get("REMOTE_ADDR", "") or "unknown")
    if hops <= 0:
        return remote
    chain = [part.strip() for part in str(request.META.get("HTTP_X_FORWARDED_FOR", "")).split(",") if part.strip()]
    return chain[-hops] if len(chain) >= hops else remote


def address_key(address: str) -> str:
    """What one client is counted as: its IPv4 address, or the /64 its IPv6 address lies in."""
    try:
        ip = ipaddress.ip_address(address)
    except ValueError:
        return address
    if isinstance(ip, ipaddress.IPv6Address):
        if ip.ipv4_mapped:
            return str(ip.ipv4_mapped)
        return str(ipaddress.ip_network(f"{ip}/64", strict=False))
    return str(ip)


def login_keys(request: HttpRequest, account: str) -> list[tuple[Policy, str]]:
    """What a sign-in attempt for ``account`` is counted against (see the module's docstring)."""
    device = device_of(request, account)
    if device:
        return [(login_device_policy(), f"{account.strip().lower()}\n{device}")]
    address = address_key(client_address(request))
    return [(login_pair_policy(), f"{account.strip().lower()}\n{address}"), (login_address_policy(), address)]


def device_of(request: HttpRequest, account: str) -> str:
    """The device id of ``request``'s device cookie when it was issued for ``account`` (else "")."""
    raw = request.COOKIES.get(DEVICE_COOKIE, "")
    if not raw:
        return ""
    try:
        value = signing.loads(raw, salt=DEVICE_SALT, max_age=_device_age_s())
    except signing.BadSignature:
        return ""
    if not isinstance(value, dict) or value.get("u") != account.strip().lower():
        return ""
    return str(value.get("d", ""))


def remember_device(response: HttpResponseBase, request: HttpRequest, account: str) -> None:
    """After a successful sign-in: the browser's device cookie for ``account`` (kept, or a new one)."""
    device = device_of(request, account) or secrets.token_urlsafe(16)
    value = signing.dumps({"u": account.strip().lower(), "d": device}, salt=DEVICE_SALT)
    response.set_cookie(DEVICE_COOKIE, value, max_age=_device_age_s(), secure=django_settings.SESSION_COOKIE_SECURE,
                        httponly=True, samesite="Lax")


def _device_age_s() -> int:
    return int(django_settings.MIGRATOR_LOGIN_DEVICE_DAYS) * 24 * 3600


def _key(policy: Policy, who: str, kind: str) -> str:
    digest = hashlib.sha256(who.strip().lower().encode("utf-8", "replace")).hexdigest()[:32]
    return f"throttle:{policy.scope}:{kind}:{digest}"


class _Store:
    """The shared counter store, or this process's own while the shared one cannot be reached."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._down_since = 0.0
        self._last_said = 0.0

    def use(self, operation: Callable[[BaseCache], T]) -> T:
        try:
            result = operation(caches[CACHE_ALIAS])
        except Exception as exc:  # any failure of the shared store: count here instead, and say so
            self._down(exc)
            return operation(_fallback)
        if self._down_since:
            self._up()
        return result

    def _down(self, exc: Exception) -> None:
        now = time.monotonic()
        with self._lock:
            self._down_since = self._down_since or now
            if now - self._last_said < STORE_DOWN_LOG_EVERY_S:
                return
            self._last_said = now
        log.error("throttle store unreachable (%s: %s): sign-in and API token failures are counted in this "
                  "process only until it is back", type(exc).__name__, exc)

    def _up(self) -> None:
        with self._lock:
            if not self._down_since:
                return
            down_for, self._down_since, self._last_said = time.monotonic() - self._down_since, 0.0, 0.0
        log.warning("throttle store reachable again after %.0f s; counting there again", down_for)


_store = _Store()


def wait_s(policy: Policy, who: str) -> int:
    """Seconds ``who`` must still wait before its next attempt is checked (0: none)."""
    until = _store.use(lambda cache: cache.get(_key(policy, who, "until")))
    if until is None:
        return 0
    return max(0, int(float(until) - time.time() + 0.999))


def record_failure(policy: Policy, who: str) -> int:
    """Count one failure; returns the delay it caused in seconds (0: still within the free ones)."""
    count_key = _key(policy, who, "count")

    def count(cache: BaseCache) -> int:
        cache.add(count_key, 0, timeout=policy.window_s)
        try:
            failures = int(cache.incr(count_key))
        except ValueError:  # the count expired between add and incr: this is the first failure again
            cache.set(count_key, 1, timeout=policy.window_s)
            failures = 1
        if failures <= policy.free:
            return 0
        delay = min(policy.max_s, policy.base_s * 2 ** min(failures - policy.free - 1, 20))
        cache.set(_key(policy, who, "until"), time.time() + delay, timeout=delay)
        return int(delay)

    return _store.use(count)


def clear(policy: Policy, who: str) -> None:
    _store.use(lambda cache: cache.delete_many([_key(policy, who, "count"), _key(policy, who, "until")]))


def clear_fallback() -> None:
    """Forget the in-process counts (tests start each from zero)."""
    _fallback.clear()


def wait_message(seconds: int) -> str:
    return f"Too many failed attempts. Try again in {seconds} second{'s' if seconds != 1 else ''}."

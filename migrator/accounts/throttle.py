"""Back-off for repeated failed sign-ins and bad API tokens, kept in the ``throttle`` cache (Redis).

Each scope counts failures per key (an account name, a client address) within a window. The first
``free`` failures cost nothing; every further one locks the key for ``base_s`` seconds, doubled per
failure up to ``max_s``. While a key is locked every attempt is refused before the password or token
is even checked, so guessing stops paying off and the right password cannot slip through a flood.
A success clears the account's count (never the address's, so one known account cannot reset a
spray from that address).
"""
from __future__ import annotations

import hashlib
import logging
import time
from dataclasses import dataclass

from django.conf import settings as django_settings
from django.core.cache import caches
from django.http import HttpRequest

log = logging.getLogger(__name__)
CACHE_ALIAS = "throttle"


@dataclass(frozen=True)
class Policy:
    scope: str
    free: int  # failures allowed before any lock
    base_s: int  # first lock; doubled for each further failure
    max_s: int  # longest lock
    window_s: int  # failures older than this are forgotten


def login_account_policy() -> Policy:
    return Policy("login-account", django_settings.MIGRATOR_LOGIN_FREE_ATTEMPTS, *_backoff())


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


def _key(policy: Policy, who: str, kind: str) -> str:
    digest = hashlib.sha256(who.strip().lower().encode("utf-8", "replace")).hexdigest()[:32]
    return f"throttle:{policy.scope}:{kind}:{digest}"


def wait_s(policy: Policy, who: str) -> int:
    """Seconds ``who`` must still wait (0: not locked)."""
    try:
        until = caches[CACHE_ALIAS].get(_key(policy, who, "until"))
    except Exception:  # the cache down must not lock everyone out; log it loudly
        log.exception("throttle cache unreachable; %s not checked", policy.scope)
        return 0
    if until is None:
        return 0
    return max(0, int(float(until) - time.time() + 0.999))


def record_failure(policy: Policy, who: str) -> int:
    """Count one failure; returns the lock it caused in seconds (0: still within the free ones)."""
    cache = caches[CACHE_ALIAS]
    count_key = _key(policy, who, "count")
    try:
        cache.add(count_key, 0, timeout=policy.window_s)
        failures = int(cache.incr(count_key))
        if failures <= policy.free:
            return 0
        lock = min(policy.max_s, policy.base_s * 2 ** min(failures - policy.free - 1, 20))
        cache.set(_key(policy, who, "until"), time.time() + lock, timeout=lock)
    except Exception:
        log.exception("throttle cache unreachable; failure for %s not counted", policy.scope)
        return 0
    return int(lock)


def clear(policy: Policy, who: str) -> None:
    try:
        caches[CACHE_ALIAS].delete_many([_key(policy, who, "count"), _key(policy, who, "until")])
    except Exception:
        log.exception("throttle cache unreachable; %s not cleared", policy.scope)


def wait_message(seconds: int) -> str:
    return f"Too many failed attempts. Try again in {seconds} second{'s' if seconds != 1 else ''}."

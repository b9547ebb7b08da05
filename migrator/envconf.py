"""Typed readers for settings taken from the environment; bad values fail loudly at start-up."""
from __future__ import annotations

import ipaddress
import os
import socket
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

from django.core.exceptions import ImproperlyConfigured


def env_str(name: str, default: str) -> str:
    """A string setting; ``NAME_FILE`` (a path) wins over ``NAME`` so secrets can live in files."""
    file_path = os.environ.get(f"{name}_FILE")
    if file_path:
        try:
            return Path(file_path).read_text().strip()
        except OSError as exc:
            raise ImproperlyConfigured(f"{name}_FILE: cannot read {file_path}: {exc}") from exc
    return os.environ.get(name, default)


def env_int(name: str, default: int, minimum: int | None = None) -> int:
    raw = os.environ.get(name)
    if raw is None or raw == "":
        return default
    try:
        value = int(raw)
    except ValueError as exc:
        raise ImproperlyConfigured(f"{name} must be a whole number, got {raw!r}") from exc
    if minimum is not None and value < minimum:
        raise ImproperlyConfigured(f"{name} must be at least {minimum}, got {value}")
    return value


def env_bool(name: str, default: bool) -> bool:
    raw = os.environ.get(name)
    if raw is None or raw == "":
        return default
    lowered = raw.strip().lower()
    if lowered in ("1", "true", "yes", "on"):
        return True
    if lowered in ("0", "false", "no", "off"):
        return False
    raise ImproperlyConfigured(f"{name} must be true or false, got {raw!r}")


def env_list(name: str, default: list[str]) -> list[str]:
    raw = os.environ.get(name)
    if raw is None:
        return default
    return [item.strip() for item in raw.split(",") if item.strip()]


def env_https_urls(name: str, default: list[str]) -> list[str]:
    """A comma-separated list of https URLs (no query or fragment), each without its trailing slash."""
    urls = env_list(name, default)
    for url in urls:
        parts = urlsplit(url)
        if parts.scheme != "https" or not parts.hostname or parts.query or parts.fragment or parts.username:
            raise ImproperlyConfigured(f"{name}: {url!r} is not an https URL such as https://gitlab.example.com/api/v4")
    return [url.rstrip("/") for url in urls]


def env_networks(name: str, default: list[str]) -> list[str]:
    """A comma-separated list of IP networks in CIDR notation (``10.20.0.0/16``, ``fd12::/64``)."""
    networks = env_list(name, default)
    for network in networks:
        try:
            ipaddress.ip_network(network, strict=False)
        except ValueError as exc:
            raise ImproperlyConfigured(f"{name}: {network!r} is not an IP network ({exc})") from exc
    return networks


RUN_MODES = ("production", "demo", "test")


def env_mode(name: str = "MIGRATOR_MODE") -> str:
    mode = os.environ.get(name, "").strip() or "production"
    if mode not in RUN_MODES:
        raise ImproperlyConfigured(f"{name} must be one of {', '.join(RUN_MODES)}, got {mode!r}")
    return mode


def env_fake_gpus(mode: str, name: str = "MIGRATOR_FAKE_GPUS") -> str:
    """Fake GPU targets (``gfx90a,gfx90a``), accepted only in test and demo mode: a fake device's
    result must never be taken for a real one, so a production process refuses to start with them."""
    value = os.environ.get(name, "").strip()
    if value and mode == "production":
        raise ImproperlyConfigured(
            f"{name} is set ({value!r}) but fake GPUs are only for tests and demos: unset it, or set "
            "MIGRATOR_MODE=demo to run a demonstration whose GPU results are all labelled fake"
        )
    return value


def env_fake_torch(mode: str, name: str = "MIGRATOR_FAKE_ROCM_TORCH") -> str:
    """A fake ROCm PyTorch version for a runner (``2.9.1+rocm7.2``), accepted only in test and demo mode, for
    the reason fake GPUs are: a result obtained with it must never be taken for a real one."""
    value = os.environ.get(name, "").strip()
    if value and mode == "production":
        raise ImproperlyConfigured(
            f"{name} is set ({value!r}) but a fake ROCm PyTorch is only for tests and demos: unset it, or set "
            "MIGRATOR_MODE=demo to run a demonstration whose PyTorch results are all labelled fake"
        )
    return value


def redis_url_next_db(base: str, name: str = "MIGRATOR_CACHE_URL") -> str:
    """``base`` (a redis:// URL) with the database number after its own: where the cache lives unless set.

    One instance's broker and cache then follow its MIGRATOR_REDIS_URL, so two instances with different
    bases never share a cache (and with it sign-in throttling)."""
    parts = urlsplit(base)
    if parts.scheme not in ("redis", "rediss", "unix"):
        raise ImproperlyConfigured(f"MIGRATOR_REDIS_URL must be a redis:// URL, got {base!r}")
    number = parts.path.strip("/") or "0"
    if not number.isdigit():
        raise ImproperlyConfigured(f"MIGRATOR_REDIS_URL: {number!r} is not a database number")
    if int(number) >= 15:
        raise ImproperlyConfigured(f"MIGRATOR_REDIS_URL uses database {number}; set {name} too (Redis has 0-15)")
    return urlunsplit((parts.scheme, parts.netloc, f"/{int(number) + 1}", parts.query, parts.fragment))


def split_bind(bind: str) -> tuple[str, int]:
    """gunicorn's ``HOST:PORT`` (``[::1]:8000`` for IPv6) as (host, port)."""
    host, _, port = bind.rpartition(":")
    host = host.strip("[]")
    if not host or not port.isdigit():
        raise ImproperlyConfigured(f"MIGRATOR_BIND must be HOST:PORT such as 127.0.0.1:8000, got {bind!r}")
    return host, int(port)


def is_loopback_host(host: str) -> bool:
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def public_url_from_bind(bind: str) -> str:
    """The dashboard's address when MIGRATOR_PUBLIC_URL is unset: where gunicorn listens (``localhost`` for a
    loopback bind, this machine's name for a wildcard one)."""
    host, port = split_bind(bind)
    if is_loopback_host(host):
        host = "localhost"
    elif host in ("0.0.0.0", "::"):
        host = socket.getfqdn()
    shown = f"[{host}]" if ":" in host else host
    return f"http://{shown}:{port}"

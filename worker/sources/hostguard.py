"""Where the worker may send code-host API requests: configured bases only, never an inside address.

A URL is allowed when it lies under one of the configured API bases (same scheme, host and port,
path at or below the base's), carries no user name, query or fragment, and every address its host
resolves to is public. Loopback and private addresses are allowed only inside networks that an
administrator listed; link-local and cloud metadata addresses never are. ``pin`` returns the
address to connect to, so the name cannot resolve to something else between check and connection.
"""
from __future__ import annotations

import ipaddress
import socket
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from urllib.parse import urlsplit

DEFAULT_BASES = ("https://api.github.com", "https://gitlab.com/api/v4")
IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network
Resolver = Callable[[str, int], list[str]]
METADATA = frozenset(ipaddress.ip_address(a) for a in (
    "169.254.169.254", "169.254.170.2", "100.100.100.200", "fd00:ec2::254", "fd20:ce::254",
))


class HostRefused(ValueError):
    """The URL or the address behind it is not one the worker may call; the message says why."""


class Unresolvable(HostRefused):
    """The name resolves to nothing: the host is unreachable rather than refused."""


def system_resolver(host: str, port: int) -> list[str]:
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except socket.gaierror as exc:
        raise Unresolvable(f"cannot resolve {host}: {exc.strerror}") from exc
    return list(dict.fromkeys(str(info[4][0]) for info in infos))


@dataclass(frozen=True)
class Pinned:
    """A checked URL and the address to connect to instead of resolving its host again."""

    url: str
    host: str
    port: int
    address: str


@dataclass(frozen=True)
class HostPolicy:
    bases: tuple[str, ...] = DEFAULT_BASES
    trusted_networks: tuple[IPNetwork, ...] = ()
    resolver: Resolver = field(default=system_resolver, compare=False)

    @classmethod
    def build(cls, bases: Sequence[str], networks: Sequence[str] = ()) -> HostPolicy:
        return cls(tuple(b.rstrip("/") for b in bases), tuple(ipaddress.ip_network(n, strict=False) for n in networks))

    def check_url(self, url: str) -> tuple[str, int]:
        """The URL's host and port when it lies under a configured base; else ``HostRefused``."""
        parts = urlsplit(url)
        if parts.scheme != "https" and not any(_under(url, base) for base in self.bases):
            raise HostRefused(f"only https URLs are allowed (got {parts.scheme or 'no scheme'})")
        if parts.username or parts.password or parts.query or parts.fragment or not parts.hostname:
            raise HostRefused("the URL may not carry a user name, password, query or fragment")
        if ".." in parts.path.split("/"):
            raise HostRefused("the URL path may not contain '..'")
        if not any(_under(url, base) for base in self.bases):
            raise HostRefused(
                f"{parts.scheme}://{parts.netloc} is not a configured host API (allowed: {', '.join(self.bases)}; "
                "an administrator adds self-hosted ones with MIGRATOR_ALLOWED_HOST_API_BASES)"
            )
        try:
            port = parts.port
        except ValueError as exc:
            raise HostRefused(f"malformed port in {parts.netloc}") from exc
        return parts.hostname, port or (443 if parts.scheme == "https" else 80)

    def check_address(self, host: str, address: str) -> None:
        ip = ipaddress.ip_address(address.split("%", 1)[0])
        ip = getattr(ip, "ipv4_mapped", None) or ip
        if ip in METADATA or ip.is_link_local:
            raise HostRefused(f"{host} resolves to {ip}, a link-local or cloud metadata address")
        if ip.is_global and not ip.is_multicast:
            return
        if any(ip in network for network in self.trusted_networks):
            return
        raise HostRefused(f"{host} resolves to {ip}, {_kind(ip)} address")

    def pin_address(self, host: str, port: int) -> str:
        """The address to connect to for ``host``: every address it resolves to must pass ``check_address``
        (a name answering with one good and one bad address is refused)."""
        addresses = self.resolver(host, port)
        if not addresses:
            raise Unresolvable(f"{host} resolves to no address")
        for address in addresses:
            self.check_address(host, address)
        return addresses[0]

    def pin(self, url: str) -> Pinned:
        host, port = self.check_url(url)
        return Pinned(url, host, port, self.pin_address(host, port))


def _kind(ip: IPAddress) -> str:
    for kind, flag in (("a loopback", ip.is_loopback), ("an unspecified", ip.is_unspecified),
                       ("a multicast", ip.is_multicast), ("a reserved", ip.is_reserved), ("a private", ip.is_private)):
        if flag:
            return kind
    return "a non-public"


def _under(url: str, base: str) -> bool:
    a, b = urlsplit(url), urlsplit(base)
    try:
        if (a.scheme, (a.hostname or "").lower(), a.port) != (b.scheme, (b.hostname or "").lower(), b.port):
            return False
    except ValueError:  # a malformed port
        return False
    base_path = b.path.rstrip("/")
    return a.path == base_path or a.path.startswith(base_path + "/") or (not base_path and a.path in ("", "/"))

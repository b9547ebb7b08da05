"""Where a git URL may lead, and how git is made to connect exactly there.

``check_git_url`` is the syntax check every entry point runs (forms, API, command line, the fetch):
network transports only (``file://`` and local paths only when an operator enables them), never
``ext::`` or anything git could read as an option, no host or user name that begins with ``-``
(``ssh://-oProxyCommand=...``). With a policy it also refuses a host written as an inside address.

``pin_remote`` runs right before a fetch. The host is resolved once and every address it resolves to
must pass the outbound-address policy of ``hostguard`` (loopback, private, link-local, multicast,
reserved and metadata addresses are refused unless inside a network the operator trusts;
link-local and metadata never). Git then connects to that address and to no other:

- https/http: ``http.curloptResolve`` gives curl the checked address for the host and port, and
  ``http.followRedirects=false`` stops it from following anything. Git's own first request (the ref
  advertisement) is sent here first, to the same address; a redirect it answers is checked like the
  original URL (at most ``MAX_REDIRECTS``) and git is given the final URL, as git itself would use it.
- git://: the URL names the checked address instead of the host.
- ssh: ``ssh -o HostName=<address>`` with the host name kept as ``HostKeyAlias`` (known hosts stay
  keyed by name) and no proxy command or jump host.
Proxies from the environment are not used (see ``gitsource``): they would resolve the name again.
"""
from __future__ import annotations

import ipaddress
import re
from collections.abc import Callable
from dataclasses import dataclass
from urllib.parse import urljoin, urlsplit

import httpx

from worker.sources.hostguard import HostPolicy, HostRefused, Unresolvable

NETWORK_SCHEMES = ("https", "http", "ssh", "git")
DEFAULT_PORTS = {"https": 443, "http": 80, "ssh": 22, "git": 9418}
MAX_REDIRECTS = 5
REDIRECT_STATUSES = frozenset({301, 302, 303, 307, 308})
ADVERTISEMENT = "/info/refs?service=git-upload-pack"  # git's first request over smart HTTP
TRUST_HINT = "an operator can trust an inside network with MIGRATOR_GIT_TRUSTED_NETWORKS"

_SCP_LIKE = re.compile(r"^(?P<user>[A-Za-z0-9._-]+)@(?P<host>[A-Za-z0-9.-]+):(?P<path>[A-Za-z0-9._/~-]+)$")
_LABEL = r"[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?"
_HOST_NAME = re.compile(rf"^(?=.{{1,253}}$){_LABEL}(?:\.{_LABEL})*$")
_SSH_USER = re.compile(r"^[A-Za-z0-9._][A-Za-z0-9._-]{0,63}$")


class GitSourceError(ValueError):
    """The URL, ref or clone failed; the message is meant for the user."""


@dataclass(frozen=True)
class Remote:
    """A network git URL taken apart: ``scheme`` is ``scp`` for ``user@host:path``."""

    url: str
    scheme: str
    user: str
    host: str  # lower case; an IPv6 address without brackets
    port: int


@dataclass(frozen=True)
class PinnedRemote:
    """What git is given for one fetch: the URL, ``-c`` settings for every call, ssh options."""

    url: str
    address: str
    config: tuple[str, ...] = ()
    ssh_options: tuple[str, ...] = ()


def check_git_url(url: str, *, allow_local: bool, policy: HostPolicy | None = None) -> str:
    """The URL, stripped, when its form is allowed; ``policy``: a host written as an address must pass it."""
    url = url.strip()
    if not url:
        raise GitSourceError("git URL is empty")
    if url.startswith("-") or any(c in url for c in "\x00\n\r \t"):
        raise GitSourceError(f"malformed git URL: {url!r}")
    lowered = url.lower()
    if "::" in url.split("/", 1)[0] or lowered.startswith("ext::"):
        raise GitSourceError("git remote helpers (such as ext::) are not allowed")
    if lowered.startswith(("file://", "/", "./", "../", "~")):
        if not allow_local:
            raise GitSourceError(
                "file:// and local-path git URLs are disabled on this installation "
                "(an operator can allow them with MIGRATOR_ALLOW_LOCAL_GIT=true)"
            )
        return url
    remote = parse_remote(url)
    if policy is not None:
        _check_written_address(remote, policy)
    return url


def parse_remote(url: str) -> Remote:
    """Take a network git URL apart; ``GitSourceError`` for anything git could misread."""
    lowered = url.lower()
    if lowered.startswith(tuple(f"{scheme}://" for scheme in NETWORK_SCHEMES)):
        return _parse_url(url)
    if "://" not in url and (scp := _SCP_LIKE.match(url)):
        _refuse_dash(scp["user"], scp["host"])
        return Remote(url, "scp", scp["user"], _host(scp["host"], url), DEFAULT_PORTS["ssh"])
    raise GitSourceError(f"unsupported git URL: {url!r} (use https://, ssh://, git:// or user@host:path)")


def _parse_url(url: str) -> Remote:
    if not re.match(r"^[A-Za-z]+://[^/\s]+/.+", url):
        raise GitSourceError(f"malformed git URL (no host or path): {url!r}")
    parts = urlsplit(url)
    userinfo, _, hostport = parts.netloc.rpartition("@")
    user = userinfo.split(":", 1)[0]
    _refuse_dash(user, hostport)
    try:
        port = parts.port
    except ValueError as exc:
        raise GitSourceError(f"malformed port in git URL: {url!r}") from exc
    scheme = parts.scheme.lower()
    if scheme == "ssh" and user and not _SSH_USER.match(user):
        raise GitSourceError(f"malformed user name in ssh URL: {user!r}")
    if scheme == "git" and userinfo:
        raise GitSourceError("git:// URLs carry no user name")
    return Remote(url, scheme, user, _host(parts.hostname or "", url), port or DEFAULT_PORTS[scheme])


def _refuse_dash(user: str, hostport: str) -> None:
    if user.startswith("-") or hostport.startswith("-"):
        raise GitSourceError("git URL refused: a host or user name may not begin with '-' (ssh would read it as an option)")


def _host(host: str, url: str) -> str:
    host = host.lower()
    try:
        return str(ipaddress.ip_address(host))
    except ValueError:
        pass
    if not _HOST_NAME.match(host):
        raise GitSourceError(f"malformed host in git URL: {url!r}")
    return host


def _is_address(host: str) -> bool:
    try:
        ipaddress.ip_address(host)
    except ValueError:
        return False
    return True


def _check_written_address(remote: Remote, policy: HostPolicy) -> None:
    """At save time: a host written as an address (or ``localhost``) must pass; names are resolved at fetch."""
    if remote.host == "localhost" or remote.host.endswith(".localhost"):
        address = "127.0.0.1"
    elif _is_address(remote.host):
        address = remote.host
    else:
        return
    try:
        policy.check_address(remote.host, address)
    except HostRefused as exc:
        raise GitSourceError(refusal(exc)) from exc


def refusal(exc: HostRefused) -> str:
    if isinstance(exc, Unresolvable):
        return f"repository unreachable: {exc}"
    message = f"git URL refused: {exc}"
    return message if "metadata" in message else f"{message} ({TRUST_HINT})"


def pin_remote(url: str, policy: HostPolicy, *, timeout: float, log: Callable[[str], None]) -> PinnedRemote:
    """Check the address behind ``url`` (and behind any redirect) and say how git reaches exactly it."""
    remote = parse_remote(url)
    try:
        if remote.scheme in ("https", "http"):
            return _pin_http(remote, policy, timeout, log)
        address = policy.pin_address(remote.host, remote.port)
    except HostRefused as exc:
        raise GitSourceError(refusal(exc)) from exc
    log(f"{remote.host} is {address}: git connects there and nowhere else\n")
    if remote.scheme == "git":
        return PinnedRemote(_with_host(remote.url, address), address)
    return PinnedRemote(url, address, ssh_options=(
        f"HostName={address}", f"HostKeyAlias={remote.host}", "ProxyCommand=none", "ProxyJump=none",
    ))


def _pin_http(remote: Remote, policy: HostPolicy, timeout: float, log: Callable[[str], None]) -> PinnedRemote:
    for _hop in range(MAX_REDIRECTS + 1):
        address = policy.pin_address(remote.host, remote.port)
        moved = _advertisement_redirect(remote, address, timeout)
        if moved is None:
            log(f"{remote.host} is {address}: git connects there and nowhere else\n")
            config = ["http.followRedirects=false"]
            if not _is_address(remote.host):
                config.append(f"http.curloptResolve={remote.host}:{remote.port}:{_bracketed(address)}")
            return PinnedRemote(remote.url, address, tuple(config))
        log(f"the server moved the repository to {_without_userinfo(moved)}; checking that address too\n")
        remote = _redirected(remote, moved)
    raise GitSourceError(f"git URL refused: more than {MAX_REDIRECTS} redirects")


def _advertisement_redirect(remote: Remote, address: str, timeout: float) -> str | None:
    """Where git's first request is redirected to (None: not redirected), sent to the checked address."""
    url = httpx.URL(_without_userinfo(remote.url).rstrip("/") + ADVERTISEMENT)
    headers = {"Host": url.netloc.decode("ascii"), "User-Agent": "git/2 (migrator)", "Git-Protocol": "version=2"}
    try:
        with httpx.Client(trust_env=False, timeout=timeout, follow_redirects=False) as client, client.stream(
            "GET", url.copy_with(host=address), headers=headers, extensions={"sni_hostname": remote.host},
        ) as response:
            location = str(response.headers.get("Location") or "")
            if response.status_code not in REDIRECT_STATUSES or not location:
                return None
    except httpx.HTTPError as exc:
        raise GitSourceError(f"repository unreachable: {remote.host}:{remote.port}: {_reason(exc)}") from exc
    return urljoin(str(url), location)


def _redirected(remote: Remote, location: str) -> Remote:
    """The repository URL a redirect of the advertisement names, checked like the original."""
    if not location.endswith(ADVERTISEMENT):
        raise GitSourceError(f"git URL refused: the server redirected to {_without_userinfo(location)!r}, "
                             "which is not a git repository URL")
    base = location[: -len(ADVERTISEMENT)]
    moved = _parse_url(base)
    if moved.scheme not in ("https", "http") or remote.scheme == "https" and moved.scheme != "https":
        raise GitSourceError(f"git URL refused: the server redirected from {remote.scheme} to {moved.scheme}")
    if moved.host != remote.host and moved.user:
        raise GitSourceError("git URL refused: a redirect to another host may not carry credentials")
    if moved.host == remote.host and remote.user and not moved.user:
        moved = Remote(_with_userinfo(base, remote.url), moved.scheme, remote.user, moved.host, moved.port)
    return moved


def _reason(exc: httpx.HTTPError) -> str:
    """What went wrong while connecting, never what the server sent."""
    if isinstance(exc, httpx.TransportError) and not isinstance(exc, httpx.ProtocolError):
        return f"{type(exc).__name__}: {exc}"[:300]
    return f"{type(exc).__name__}: the host did not answer with valid HTTP"


def _bracketed(address: str) -> str:
    return f"[{address}]" if ":" in address else address


def _with_host(url: str, address: str) -> str:
    parts = urlsplit(url)
    port = f":{parts.port}" if parts.port else ""
    return parts._replace(netloc=f"{_bracketed(address)}{port}").geturl()


def _without_userinfo(url: str) -> str:
    parts = urlsplit(url)
    return parts._replace(netloc=parts.netloc.rpartition("@")[2]).geturl()


def _with_userinfo(url: str, source: str) -> str:
    userinfo = urlsplit(source).netloc.rpartition("@")[0]
    parts = urlsplit(url)
    return parts._replace(netloc=f"{userinfo}@{parts.netloc}").geturl()

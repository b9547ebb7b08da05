"""Commit statuses and PR comments through the GitHub or GitLab REST API, with retries.

Only transient failures (5xx, 429, connection errors, time-outs) are retried, with exponential
back-off and a small maximum; any other answer is final. Nothing here raises for HTTP trouble:
every call returns a ``HostAnswer`` that the caller records.

Every URL, and every redirect target, goes through the ``HostPolicy`` (configured API bases only,
no inside addresses) and is connected to at the address that was checked. Only the status line of
a failed answer is kept: a response body never reaches the run or report pages.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from urllib.parse import quote

import httpx

from worker.sources.hostguard import HostPolicy, HostRefused, Pinned

MAX_ATTEMPTS = 3
MAX_REDIRECTS = 3
REDIRECT_STATUSES = frozenset({307, 308})  # method-keeping redirects; others are final answers
BACKOFF_S = 0.5  # 0.5 s, 1 s, ... between attempts
TIMEOUT_S = 10.0
RETRY_STATUSES = frozenset({429, 500, 502, 503, 504})
STATUS_CONTEXT = "migrator"


@dataclass
class HostAnswer:
    ok: bool
    url: str
    http_status: int | None = None
    attempts: int = 0
    error: str = ""
    body: dict[str, object] | None = None


@dataclass(frozen=True)
class HostClient:
    kind: str  # "github" | "gitlab"
    api_url: str
    token: str
    backoff_s: float = BACKOFF_S
    max_attempts: int = MAX_ATTEMPTS
    policy: HostPolicy = field(default_factory=HostPolicy)

    def headers(self) -> dict[str, str]:
        if self.kind == "gitlab":
            return {"PRIVATE-TOKEN": self.token}
        return {"Authorization": f"Bearer {self.token}", "Accept": "application/vnd.github+json",
                "X-GitHub-Api-Version": "2022-11-28"}

    def project_path(self, repo: str) -> str:
        return f"/projects/{quote(repo, safe='')}" if self.kind == "gitlab" else f"/repos/{repo}"

    def request(self, method: str, path: str, payload: dict[str, object]) -> HostAnswer:
        url = self.api_url.rstrip("/") + path
        answer = HostAnswer(ok=False, url=url)
        # No proxies from the environment: the connection must go to the address that was checked.
        with httpx.Client(timeout=TIMEOUT_S, headers=self.headers(), trust_env=False) as client:
            for attempt in range(1, self.max_attempts + 1):
                answer.attempts = attempt
                if _attempt(client, self.policy, method, url, payload, answer):
                    return answer
                if attempt < self.max_attempts:
                    time.sleep(self.backoff_s * 2 ** (attempt - 1))
        return answer


def _send(client: httpx.Client, pinned: Pinned, method: str, payload: dict[str, object]) -> httpx.Response:
    """The request to the checked address, with the real host name for the Host header and TLS."""
    target = httpx.URL(pinned.url).copy_with(host=pinned.address)
    host_header = httpx.URL(pinned.url).netloc.decode("ascii")
    return client.request(method, target, json=payload, headers={"Host": host_header},
                          extensions={"sni_hostname": pinned.host})


def _follow(client: httpx.Client, policy: HostPolicy, method: str, url: str, payload: dict[str, object]) -> httpx.Response:
    """Send, following up to ``MAX_REDIRECTS`` method-keeping redirects, each target checked again."""
    for _hop in range(MAX_REDIRECTS + 1):
        response = _send(client, policy.pin(url), method, payload)
        location = response.headers.get("Location")
        if response.status_code not in REDIRECT_STATUSES or not location:
            return response
        url = str(httpx.URL(url).join(location))
    raise HostRefused(f"more than {MAX_REDIRECTS} redirects")


def _attempt(client: httpx.Client, policy: HostPolicy, method: str, url: str, payload: dict[str, object],
             answer: HostAnswer) -> bool:
    """One try; True when the answer is final (success, a refused URL or a non-retryable status)."""
    try:
        response = _follow(client, policy, method, url, payload)
    except HostRefused as exc:
        answer.error, answer.http_status = f"not sent: {exc}"[:500], None
        return True
    except httpx.HTTPError as exc:
        answer.error, answer.http_status = _describe(exc), None
        return False
    answer.http_status = response.status_code
    if response.is_success:
        answer.ok, answer.error = True, ""
        try:
            body = response.json()
        except ValueError:
            body = None
        answer.body = body if isinstance(body, dict) else None
        return True
    answer.error = f"HTTP {response.status_code} {response.reason_phrase}".strip()[:100]  # never the body
    return response.status_code not in RETRY_STATUSES


def _describe(exc: httpx.HTTPError) -> str:
    """Connection trouble as the operating system words it; never what a non-HTTP server sent back."""
    if isinstance(exc, httpx.TransportError) and not isinstance(exc, httpx.ProtocolError):
        return f"{type(exc).__name__}: {exc}"[:300]
    return f"{type(exc).__name__}: the host did not answer with valid HTTP"


# Commit statuses have no "neutral" on either host: a partial run is a success whose description
# starts with "PARTIAL" and names what was not checked (built by reports/posting.py).
GITHUB_STATES = {"pending": "pending", "passed": "success", "partial": "success", "failed": "failure", "cancelled": "error"}
GITLAB_STATES = {"pending": "running", "passed": "success", "partial": "success", "failed": "failed", "cancelled": "canceled"}


def post_commit_status(client: HostClient, repo: str, sha: str, state: str, description: str, target_url: str) -> HostAnswer:
    """``state`` is pending/passed/partial/failed/cancelled, mapped to the host's vocabulary."""
    path = f"{client.project_path(repo)}/statuses/{sha}"
    if client.kind == "gitlab":
        payload: dict[str, object] = {"state": GITLAB_STATES[state], "name": STATUS_CONTEXT,
                                      "description": description[:140], "target_url": target_url}
    else:
        payload = {"state": GITHUB_STATES[state], "context": STATUS_CONTEXT,
                   "description": description[:140], "target_url": target_url}
    return client.request("POST", path, payload)


def create_comment(client: HostClient, repo: str, number: int, body: str) -> HostAnswer:
    if client.kind == "gitlab":
        return client.request("POST", f"{client.project_path(repo)}/merge_requests/{number}/notes", {"body": body})
    return client.request("POST", f"/repos/{repo}/issues/{number}/comments", {"body": body})


def update_comment(client: HostClient, repo: str, number: int, comment_id: str, body: str) -> HostAnswer:
    if client.kind == "gitlab":
        path = f"{client.project_path(repo)}/merge_requests/{number}/notes/{comment_id}"
        return client.request("PUT", path, {"body": body})
    return client.request("PATCH", f"/repos/{repo}/issues/comments/{comment_id}", {"body": body})

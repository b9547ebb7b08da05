"""Open or update the port's pull request (GitHub) or merge request (GitLab) through the host API.

The same client as statuses and comments (``hostapi``): the outbound-address policy, retries of
transient failures only, no response body on the pages. An update of a pull request the host no
longer knows (404) opens a new one.
"""
from __future__ import annotations

from dataclasses import dataclass

from migrator.reports.hostapi import HostAnswer, HostClient

TITLE_LIMIT = 250
BODY_LIMIT = 60_000  # both hosts take more; a report this long is cut with a link to the full one


@dataclass(frozen=True)
class PullRequest:
    number: int
    url: str


def _found(client: HostClient, answer: HostAnswer) -> PullRequest | None:
    body = answer.body or {}
    number = body.get("iid" if client.kind == "gitlab" else "number")
    url = body.get("web_url" if client.kind == "gitlab" else "html_url")
    if not answer.ok or not isinstance(number, int) or not isinstance(url, str):
        return None
    return PullRequest(number, url)


def open_or_update(client: HostClient, repo: str, number: int | None, *, head: str, base: str, title: str,
                   body: str) -> tuple[PullRequest | None, HostAnswer]:
    """(the pull request, the host's last answer); None with the answer when the host refused."""
    title, body = title[:TITLE_LIMIT], body[:BODY_LIMIT]
    path = client.project_path(repo)
    if number is not None:
        if client.kind == "gitlab":
            answer = client.request("PUT", f"{path}/merge_requests/{number}", {"title": title, "description": body})
        else:
            answer = client.request("PATCH", f"{path}/pulls/{number}", {"title": title, "body": body})
        if answer.http_status != 404:
            return _found(client, answer), answer
    if client.kind == "gitlab":
        answer = client.request("POST", f"{path}/merge_requests",
                                {"source_branch": head, "target_branch": base, "title": title, "description": body})
    else:
        answer = client.request("POST", f"{path}/pulls", {"head": head, "base": base, "title": title, "body": body})
    return _found(client, answer), answer

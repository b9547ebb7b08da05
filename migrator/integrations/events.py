"""What a GitHub or GitLab webhook payload asks for: a run at a commit, nothing, or an error.

A parser returns a ``RunRequest`` for events that start a run, None for known events that
need nothing (a closed pull request, a deleted branch), and raises ``PayloadError`` for
anything it does not understand (the view answers 4xx and records nothing).
"""
from __future__ import annotations

import re
from dataclasses import dataclass

_SHA = re.compile(r"^[0-9a-f]{40}(?:[0-9a-f]{24})?$")
_NULL_SHA = re.compile(r"^0+$")
GITHUB_PR_ACTIONS = frozenset({"opened", "synchronize", "reopened"})
GITLAB_MR_ACTIONS = frozenset({"open", "reopen", "update"})


class PayloadError(ValueError):
    """The payload is not one we understand."""


@dataclass(frozen=True)
class RunRequest:
    event: str
    action: str
    sha: str
    pr_url: str = ""


def _mapping(value: object, what: str) -> dict[str, object]:
    if not isinstance(value, dict):
        raise PayloadError(f"payload has no {what} object")
    return value


def _sha(value: object) -> str:
    if not isinstance(value, str) or not _SHA.match(value):
        raise PayloadError("payload has no valid commit id")
    return value


def _pr_url(value: object) -> str:
    if not isinstance(value, str) or not value.startswith(("https://", "http://")) or len(value) > 500:
        raise PayloadError("payload has no valid pull request URL")
    return value


def github_run_request(event: str, payload: dict[str, object]) -> RunRequest | None:
    if event == "pull_request":
        action = str(payload.get("action", ""))
        if action not in GITHUB_PR_ACTIONS:
            return None
        pr = _mapping(payload.get("pull_request"), "pull_request")
        head = _mapping(pr.get("head"), "pull_request.head")
        return RunRequest(event, action, _sha(head.get("sha")), _pr_url(pr.get("html_url")))
    if event == "push":
        after = payload.get("after")
        if payload.get("deleted") is True or (isinstance(after, str) and _NULL_SHA.match(after)):
            return None
        return RunRequest(event, "", _sha(after))
    raise PayloadError(f"unsupported event {event!r}")


def gitlab_run_request(event: str, payload: dict[str, object]) -> RunRequest | None:
    if event == "Merge Request Hook":
        attributes = _mapping(payload.get("object_attributes"), "object_attributes")
        action = str(attributes.get("action", ""))
        # "update" fires for title or label edits too; only new commits (oldrev) need a run.
        if action not in GITLAB_MR_ACTIONS or action == "update" and not attributes.get("oldrev"):
            return None
        last_commit = _mapping(attributes.get("last_commit"), "object_attributes.last_commit")
        return RunRequest(event, action, _sha(last_commit.get("id")), _pr_url(attributes.get("url")))
    if event == "Push Hook":
        sha = payload.get("checkout_sha") or payload.get("after")
        if sha is None or isinstance(sha, str) and _NULL_SHA.match(sha):
            return None
        return RunRequest(event, "", _sha(sha))
    raise PayloadError(f"unsupported event {event!r}")

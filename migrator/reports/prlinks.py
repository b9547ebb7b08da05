"""Pull-request URLs of GitHub and GitLab, parsed into what the host APIs need."""
from __future__ import annotations

import re
from dataclasses import dataclass
from urllib.parse import urlsplit

_GITHUB_PR = re.compile(r"^/(?P<repo>[^/]+/[^/]+)/pull/(?P<number>\d+)/?$")
_GITLAB_MR = re.compile(r"^/(?P<repo>.+?)/-/merge_requests/(?P<number>\d+)/?$")
_GIT_REMOTE_PATH = re.compile(r"^(?:[^@/]+@[^:/]+:|[a-z+]+://[^/]+/)(?P<repo>.+?)(?:\.git)?/?$")


@dataclass(frozen=True)
class PullRequest:
    url: str
    host: str  # "github" | "gitlab"
    repo: str  # owner/name or group/sub/project
    number: int

    def to_dict(self) -> dict[str, object]:
        return {"url": self.url, "host": self.host, "repo": self.repo, "number": self.number}


def parse_pr_url(url: str) -> PullRequest | None:
    """A GitHub pull request or GitLab merge request URL; None for anything else."""
    parts = urlsplit(url.strip())
    if parts.scheme not in ("http", "https") or not parts.netloc:
        return None
    if match := _GITLAB_MR.match(parts.path):
        return PullRequest(url, "gitlab", match["repo"], int(match["number"]))
    if match := _GITHUB_PR.match(parts.path):
        return PullRequest(url, "github", match["repo"], int(match["number"]))
    return None


def repo_from_git_url(git_url: str) -> str:
    """owner/name from https://host/owner/name(.git) or git@host:owner/name.git; '' when not a remote."""
    match = _GIT_REMOTE_PATH.match(git_url.strip())
    return match["repo"] if match else ""

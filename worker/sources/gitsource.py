"""Shallow clones of a git URL at a branch, tag or commit, with the ``git`` CLI.

URLs are checked before git sees them: only network transports are allowed (``file://`` and local
paths only when an operator enables them), never ``ext::`` (it runs commands) or anything that
git could read as an option. Git never prompts for credentials; every call has a time limit.
After checkout, symbolic links that point outside the checkout (absolute, climbing above it, or
doing so once other links are followed) are removed and listed, so nothing later follows them out.
Git itself keeps the executable bit of files (modes 644 and 755 only).
"""
from __future__ import annotations

import os
import re
import shutil
import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from worker.sources.treelinks import links_leaving

_SCP_LIKE = re.compile(r"^[A-Za-z0-9._-]+@[A-Za-z0-9.-]+:[A-Za-z0-9._/~-]+$")
_REF = re.compile(r"^[A-Za-z0-9._/@+-]{1,200}$")


class GitSourceError(ValueError):
    """The URL, ref or clone failed; the message is meant for the user."""


@dataclass(frozen=True)
class CloneResult:
    commit: str
    ref: str
    removed_links: tuple[tuple[str, str], ...] = ()  # (path, link text) of links that left the checkout


def check_git_url(url: str, *, allow_local: bool) -> str:
    url = url.strip()
    if not url:
        raise GitSourceError("git URL is empty")
    if url.startswith("-") or any(c in url for c in "\x00\n\r \t"):
        raise GitSourceError(f"malformed git URL: {url!r}")
    lowered = url.lower()
    if "::" in url.split("/", 1)[0] or lowered.startswith("ext::"):
        raise GitSourceError("git remote helpers (such as ext::) are not allowed")
    if lowered.startswith(("https://", "http://", "ssh://", "git://")):
        if not re.match(r"^[a-z]+://[^/\s]+/.+", lowered):
            raise GitSourceError(f"malformed git URL (no host or path): {url!r}")
        return url
    if _SCP_LIKE.match(url):
        return url
    if lowered.startswith("file://") or url.startswith(("/", "./", "../", "~")):
        if not allow_local:
            raise GitSourceError(
                "file:// and local-path git URLs are disabled on this installation "
                "(an operator can allow them with MIGRATOR_ALLOW_LOCAL_GIT=true)"
            )
        return url
    raise GitSourceError(f"unsupported git URL: {url!r} (use https://, ssh://, git:// or user@host:path)")


def check_ref(ref: str) -> str:
    ref = ref.strip()
    if ref and (not _REF.match(ref) or ref.startswith("-") or ".." in ref):
        raise GitSourceError(f"malformed git ref: {ref!r}")
    return ref


def _git_env(allow_local: bool) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(
        GIT_TERMINAL_PROMPT="0",
        GIT_ASKPASS="/bin/true",
        SSH_ASKPASS="/bin/true",
        GIT_SSH_COMMAND="ssh -o BatchMode=yes -o StrictHostKeyChecking=accept-new",
        GIT_ALLOW_PROTOCOL="https:http:ssh:git" + (":file" if allow_local else ""),
        GIT_CONFIG_NOSYSTEM="1",
        GIT_LFS_SKIP_SMUDGE="1",
    )
    return env


def _git(args: list[str], cwd: Path, env: dict[str, str], timeout: int, log: Callable[[str], None]) -> str:
    log("$ git " + " ".join(args) + "\n")
    try:
        proc = subprocess.run(
            ["git", "-c", "core.hooksPath=/dev/null", "-c", "advice.detachedHead=false", *args],
            cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL,
        )
    except subprocess.TimeoutExpired as exc:
        raise GitSourceError(f"git {args[0]} did not finish within {timeout} s") from exc
    output = (proc.stdout + proc.stderr).strip()
    if output:
        log(output + "\n")
    if proc.returncode != 0:
        raise GitSourceError(_explain(args[0], output))
    return proc.stdout.strip()


_GIT_PREFIX = re.compile(r"^(?:fatal|error|remote):\s*", re.IGNORECASE)
_NAMED_REPOSITORY = re.compile(r"(?:repository )?'([^']+)'(?: not found| does not appear to be a git repository)")


def _explain(command: str, output: str) -> str:
    """One readable line: what went wrong, then git's own words without its ``fatal:`` prefix."""
    last = _GIT_PREFIX.sub("", output.splitlines()[-1]).strip() if output else "no output"
    if "couldn't find remote ref" in output or "not our ref" in output:
        return f"unknown ref: {last}"
    if "Could not resolve host" in output or "unable to access" in output:
        return f"repository unreachable: {last}"
    if "not found" in output.lower() or "does not appear to be a git repository" in output:
        named = _NAMED_REPOSITORY.search(output)
        return f"repository not found: {named.group(1).rstrip('/') if named else last}"
    return f"git {command} failed: {last}"


def _fetch_ref(ref: str, dest: Path, env: dict[str, str], timeout: int, log: Callable[[str], None],
               partial: bool = False) -> str:
    """Fetch ``ref`` at depth 1 (``partial``: trees only, blobs come with the sparse checkout); return what to check out."""
    blobs = ["--filter=blob:none"] if partial else []
    try:
        _git(["fetch", "--depth", "1", "--no-tags", *blobs, "origin", "--", ref or "HEAD"], dest, env, timeout, log)
        return "FETCH_HEAD"
    except GitSourceError:
        if not re.fullmatch(r"[0-9a-f]{7,64}", ref):
            raise
    # Abbreviated commit ids (and servers refusing a fetch by id) need the full history.
    log("shallow fetch by commit id refused; fetching full history\n")
    _git(["fetch", "--no-tags", *blobs, "origin"], dest, env, timeout, log)
    try:
        return _git(["rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}"], dest, env, timeout, log)
    except GitSourceError as exc:
        raise GitSourceError(f"unknown ref: no commit {ref} in the repository") from exc


def remove_links_leaving(root: Path, log: Callable[[str], None] = lambda _: None) -> tuple[tuple[str, str], ...]:
    """Delete every symbolic link under ``root`` that points outside it; return what was removed."""
    removed = links_leaving(root)
    for path, target in removed:
        (root / path).unlink()
        log(f"removed symbolic link {path} -> {target}: it points outside the checkout\n")
    return tuple(removed)


def shallow_clone(
    url: str, ref: str, dest: Path, *, allow_local: bool, timeout: int = 300,
    log: Callable[[str], None] = lambda _: None, sparse_dir: str = "",
) -> CloneResult:
    """Fetch ``ref`` (branch, tag, commit; empty = remote HEAD) at depth 1 into ``dest``; drop ``.git``.

    ``sparse_dir`` (checked by the caller: relative, no ``..``) limits the checkout to that directory
    (plus the files at the top level) and fetches only the blobs it needs: a partial, sparse clone.
    """
    url = check_git_url(url, allow_local=allow_local)
    ref = check_ref(ref)
    env = _git_env(allow_local)
    dest.mkdir(parents=True, exist_ok=False)
    try:
        _git(["init", "-q"], dest, env, timeout, log)
        _git(["remote", "add", "origin", "--", url], dest, env, timeout, log)
        if sparse_dir:
            _git(["sparse-checkout", "set", "--cone", "--", sparse_dir.strip("/")], dest, env, timeout, log)
        target = _fetch_ref(ref, dest, env, timeout, log, partial=bool(sparse_dir))
        _git(["checkout", "-q", "--detach", target], dest, env, timeout, log)
        commit = _git(["rev-parse", "HEAD"], dest, env, timeout, log)
        shutil.rmtree(dest / ".git")
        return CloneResult(commit=commit, ref=ref or "HEAD", removed_links=remove_links_leaving(dest, log))
    except BaseException:
        shutil.rmtree(dest, ignore_errors=True)
        raise

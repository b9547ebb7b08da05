"""Shallow clones of a git URL at a branch, tag or commit, with the ``git`` CLI.

URLs are checked before git sees them (``gitremote``: the URL's form, then the address behind its
host, which every git call is pinned to). Git never prompts for credentials, uses no proxy from the
environment, follows no redirect of its own; every call has a time limit.

Nothing is checked out before the tree has been measured: after the fetch, the commit's tree is
listed (``git ls-tree``) and its blob sizes read (``git cat-file --batch-check``), and a tree over the
archive limits (file count, total size, largest file) is refused with nothing written. A repository
naming one large blob under thousands of paths is small to fetch but not to check out; that is what
this catches. A sparse clone measures only what its checkout would write.

After checkout, symbolic links that point outside the checkout (absolute, climbing above it, or
doing so once other links are followed) are removed and listed, so nothing later follows them out.
Git itself keeps the executable bit of files (modes 644 and 755 only).
"""
from __future__ import annotations

import os
import posixpath
import re
import shlex
import shutil
import subprocess
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from worker.sources.archives import Limits
from worker.sources.gitremote import GitSourceError, PinnedRemote, check_git_url, parse_remote, pin_remote
from worker.sources.hostguard import HostPolicy
from worker.sources.treelinks import links_leaving

__all__ = ["CloneResult", "GitSourceError", "check_git_url", "check_ref", "shallow_clone", "remove_links_leaving"]

_REF = re.compile(r"^[A-Za-z0-9._/@+-]{1,200}$")
_PROXY_VARIABLES = frozenset({"http_proxy", "https_proxy", "all_proxy", "no_proxy", "ftp_proxy"})
PROBE_TIMEOUT_S = 30.0
_WIDEN_ROUNDS = 5  # a fragment kept beside may name further folders; each round reads what the last one added
Beside = Callable[[Path, Callable[[str], bool], Callable[[str], bool]], list[str]]  # (checkout, exists, is_file)


@dataclass(frozen=True)
class CloneResult:
    commit: str
    ref: str
    removed_links: tuple[tuple[str, str], ...] = ()  # (path, link text) of links that left the checkout


def check_ref(ref: str) -> str:
    ref = ref.strip()
    if ref and (not _REF.match(ref) or ref.startswith("-") or ".." in ref):
        raise GitSourceError(f"malformed git ref: {ref!r}")
    return ref


def _git_env(allow_local: bool, ssh_options: Sequence[str] = ()) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_") and k.lower() not in _PROXY_VARIABLES}
    ssh = ["ssh", "-o", "BatchMode=yes", "-o", "StrictHostKeyChecking=accept-new"]
    for option in ssh_options:
        ssh += ["-o", option]
    env.update(
        GIT_TERMINAL_PROMPT="0",
        GIT_ASKPASS="/bin/true",
        SSH_ASKPASS="/bin/true",
        # Every word is ours or was checked (a host name, an address), and each is quoted.
        GIT_SSH_COMMAND=shlex.join(ssh),
        GIT_SSH_VARIANT="ssh",
        GIT_ALLOW_PROTOCOL="https:http:ssh:git" + (":file" if allow_local else ""),
        GIT_CONFIG_NOSYSTEM="1",
        GIT_LFS_SKIP_SMUDGE="1",
    )
    return env


@dataclass(frozen=True)
class _Git:
    """One clone's git calls: its folder, environment, pinned settings, time limit and log."""

    cwd: Path
    env: dict[str, str]
    timeout: int
    log: Callable[[str], None]
    config: tuple[str, ...] = field(default=())

    def __call__(self, args: list[str], *, quiet: bool = False, stdin: str | None = None) -> str:
        """Run git; ``quiet``: the output is data for us, not for the stage log."""
        self.log("$ git " + " ".join(args) + "\n")
        settings = ["core.hooksPath=/dev/null", "advice.detachedHead=false", *self.config]
        command = ["git", *(word for setting in settings for word in ("-c", setting)), *args]
        try:
            proc = subprocess.run(
                command, cwd=self.cwd, env=self.env, capture_output=True, text=True, timeout=self.timeout,
                input=stdin, stdin=None if stdin is not None else subprocess.DEVNULL,
            )
        except subprocess.TimeoutExpired as exc:
            raise GitSourceError(f"git {args[0]} did not finish within {self.timeout} s") from exc
        output = (proc.stderr if quiet else proc.stdout + proc.stderr).strip()
        if output:
            self.log(output + "\n")
        if proc.returncode != 0:
            raise GitSourceError(_explain(args[0], output))
        return proc.stdout if quiet else proc.stdout.strip()


_GIT_PREFIX = re.compile(r"^(?:fatal|error|remote):\s*", re.IGNORECASE)
_NAMED_REPOSITORY = re.compile(r"(?:repository )?'([^']+)'(?: not found| does not appear to be a git repository)")


def _explain(command: str, output: str) -> str:
    """One readable line: what went wrong, then git's own words without its ``fatal:`` prefix."""
    last = _GIT_PREFIX.sub("", output.splitlines()[-1]).strip() if output else "no output"
    if "couldn't find remote ref" in output or "not our ref" in output:
        return f"unknown ref: {last}"
    if "requested URL returned error: 3" in output:
        return f"repository unreachable: the server answered with a redirect that was not checked: {last}"
    if "Could not resolve host" in output or "unable to access" in output:
        return f"repository unreachable: {last}"
    if "not found" in output.lower() or "does not appear to be a git repository" in output:
        named = _NAMED_REPOSITORY.search(output)
        return f"repository not found: {named.group(1).rstrip('/') if named else last}"
    return f"git {command} failed: {last}"


def _fetch_ref(git: _Git, ref: str, partial: bool = False) -> str:
    """Fetch ``ref`` at depth 1 (``partial``: trees only, blobs come before the sparse checkout); return what to check out."""
    blobs = ["--filter=blob:none"] if partial else []
    try:
        git(["fetch", "--depth", "1", "--no-tags", *blobs, "origin", "--", ref or "HEAD"])
        return "FETCH_HEAD"
    except GitSourceError:
        if not re.fullmatch(r"[0-9a-f]{7,64}", ref):
            raise
    # Abbreviated commit ids (and servers refusing a fetch by id) need the full history.
    git.log("shallow fetch by commit id refused; fetching full history\n")
    git(["fetch", "--no-tags", *blobs, "origin"])
    try:
        return git(["rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}"])
    except GitSourceError as exc:
        raise GitSourceError(f"unknown ref: no commit {ref} in the repository") from exc


@dataclass(frozen=True)
class _Blob:
    path: str
    oid: str


def _tree_blobs(git: _Git, target: str) -> list[_Blob]:
    """Every file of the commit's tree."""
    listing = git(["ls-tree", "-r", "-z", "--full-tree", target], quiet=True)
    blobs = []
    for entry in filter(None, listing.split("\0")):
        meta, _, path = entry.partition("\t")
        _mode, kind, oid = meta.split()
        if kind == "blob":
            blobs.append(_Blob(path, oid))
    return blobs


def _in_cone(path: str, cone: Sequence[str]) -> bool:
    """What ``git sparse-checkout set --cone <cone...>`` checks out: each directory, and the files
    directly in each folder above one (the top level included)."""
    parent = posixpath.dirname(path)
    return parent == "" or any(path.startswith(folder + "/") or (folder + "/").startswith(parent + "/")
                               for folder in cone)


def _in_checkout(blobs: list[_Blob], cone: Sequence[str]) -> list[_Blob]:
    """The files a checkout writes (a sparse cone: only those inside it)."""
    return [blob for blob in blobs if not cone or _in_cone(blob.path, cone)]


def _tree_paths(blobs: list[_Blob]) -> set[str]:
    """Every file and folder of the tree, repository-relative."""
    paths: set[str] = set()
    for blob in blobs:
        path = blob.path
        while path and path not in paths:
            paths.add(path)
            path = posixpath.dirname(path)
    return paths


def _widen(git: _Git, target: str, dest: Path, cone: list[str], beside: Beside, limits: Limits) -> None:
    """Add to the sparse cone the folders that the checked-out build files name beside it (``beside``),
    until they name nothing new; each addition measured against the limits before it is checked out."""
    blobs = _tree_blobs(git, target)
    paths = _tree_paths(blobs)
    files = {blob.path for blob in blobs}
    folders = paths - files
    for _round in range(_WIDEN_ROUNDS):
        extra = [path for path in beside(dest, paths.__contains__, files.__contains__)
                 if path in folders and path not in cone]
        if not extra:
            return
        cone += extra
        wanted = _in_checkout(blobs, cone)
        _prefetch(git, target, wanted)
        check_tree_limits(git, wanted, limits)
        git(["sparse-checkout", "add", "--", *extra])


def _prefetch(git: _Git, target: str, blobs: list[_Blob]) -> None:
    """Fetch the blobs a partial clone lacks in one request, as git's own lazy fetch does (``rev-list
    --missing=print`` lists them without fetching; ``cat-file`` would fetch them one by one)."""
    listing = git(["rev-list", "--objects", "--missing=print", target], quiet=True)
    missing = {line[1:].strip() for line in listing.splitlines() if line.startswith("?")}
    wanted = sorted(missing & {blob.oid for blob in blobs})
    if wanted:
        git(["-c", "fetch.negotiationAlgorithm=noop", "fetch", "--no-tags", "--no-write-fetch-head",
             "--recurse-submodules=no", "--filter=blob:none", "--stdin", "origin"], stdin="\n".join(wanted) + "\n")


def check_tree_limits(git: _Git, blobs: list[_Blob], limits: Limits) -> tuple[int, int]:
    """(files, bytes) the checkout would write; ``GitSourceError`` when over a limit."""
    if len(blobs) > limits.max_files:
        raise GitSourceError(f"repository tree holds {len(blobs)} files, over the limit of {limits.max_files}; "
                             "nothing was checked out")
    answer = git(["cat-file", "--batch-check=%(objectname) %(objectsize)", "--buffer"],
                 quiet=True, stdin="".join(f"{blob.oid}\n" for blob in blobs)).splitlines()
    sizes: dict[str, int] = {}
    for line in answer:
        oid, _, written = line.partition(" ")
        if not written.isdigit():
            raise GitSourceError(f"the repository lacks the object {oid}; nothing was checked out")
        sizes[oid] = int(written)
    total = 0
    for blob in blobs:
        size = sizes[blob.oid]
        if size > limits.max_file_bytes:
            raise GitSourceError(f"{blob.path} is {size} bytes, over the limit of {limits.max_file_bytes} bytes "
                                 "per file; nothing was checked out")
        total += size
    if total > limits.max_total_bytes:
        raise GitSourceError(f"repository tree is {total} bytes when checked out ({len(blobs)} files), over the "
                             f"limit of {limits.max_total_bytes} bytes; nothing was checked out")
    return len(blobs), total


def remove_links_leaving(root: Path, log: Callable[[str], None] = lambda _: None) -> tuple[tuple[str, str], ...]:
    """Delete every symbolic link under ``root`` that points outside it; return what was removed."""
    removed = links_leaving(root)
    for path, target in removed:
        (root / path).unlink()
        log(f"removed symbolic link {path} -> {target}: it points outside the checkout\n")
    return tuple(removed)


def _pinned(url: str, allow_local: bool, policy: HostPolicy, log: Callable[[str], None]) -> PinnedRemote:
    """The URL and settings git is given: a local path as it is, a network URL pinned to its checked address."""
    lowered = url.lower()
    if allow_local and lowered.startswith(("file://", "/", "./", "../", "~")):
        return PinnedRemote(url, "")
    parse_remote(url)  # the same refusals as check_git_url, before any name is resolved
    return pin_remote(url, policy, timeout=PROBE_TIMEOUT_S, log=log)


def shallow_clone(
    url: str, ref: str, dest: Path, *, allow_local: bool, timeout: int = 300,
    log: Callable[[str], None] = lambda _: None, sparse_dir: str = "",
    policy: HostPolicy | None = None, limits: Limits | None = None, beside: Beside | None = None,
) -> CloneResult:
    """Fetch ``ref`` (branch, tag, commit; empty = remote HEAD) at depth 1 into ``dest``; drop ``.git``.

    ``sparse_dir`` (checked by the caller: relative, no ``..``) limits the checkout to that directory
    (plus the files at the top level) and fetches only the blobs it needs: a partial, sparse clone.
    ``policy``: the addresses a network URL may lead to (default: public ones only). ``limits``: what
    the checkout may write (default: the archive defaults), checked before anything is checked out.
    ``beside(checkout, exists, is_file)``: the folders outside ``sparse_dir`` that its checked-out build
    files name (``exists``/``is_file`` say what the commit holds at a path); they join the sparse checkout.
    """
    url = check_git_url(url, allow_local=allow_local)
    ref = check_ref(ref)
    remote = _pinned(url, allow_local, policy or HostPolicy(bases=()), log)
    dest.mkdir(parents=True, exist_ok=False)
    git = _Git(dest, _git_env(allow_local, remote.ssh_options), timeout, log, remote.config)
    sparse_dir = sparse_dir.strip("/")
    try:
        git(["init", "-q"])
        git(["remote", "add", "origin", "--", remote.url])
        if sparse_dir:
            git(["sparse-checkout", "set", "--cone", "--", sparse_dir])
        target = _fetch_ref(git, ref, partial=bool(sparse_dir))
        cone = [sparse_dir] if sparse_dir else []
        blobs = _in_checkout(_tree_blobs(git, target), cone)
        if sparse_dir:
            _prefetch(git, target, blobs)
        files, size = check_tree_limits(git, blobs, limits or Limits())
        log(f"the checkout writes {files} files, {size} bytes: within the limits\n")
        git(["checkout", "-q", "--detach", target])
        if sparse_dir and beside is not None:
            _widen(git, target, dest, cone, beside, limits or Limits())
        commit = git(["rev-parse", "HEAD"])
        shutil.rmtree(dest / ".git")
        return CloneResult(commit=commit, ref=ref or "HEAD", removed_links=remove_links_leaving(dest, log))
    except BaseException:
        shutil.rmtree(dest, ignore_errors=True)
        raise

"""The team's repository as the delivery sees it: fetched, composed on, pushed, with the ``git`` CLI.

Git runs exactly as the fetch stage runs it (``worker.sources.gitsource``): the URL checked, a network
host pinned to the address the outbound-address policy allowed, no prompts, no proxies from the
environment, no hooks, every call with a time limit. A host token is handed to git through its
environment (``GIT_CONFIG_*``: an ``Authorization`` header for that host), never on a command line,
in a URL or in the log; nothing here runs in (or is visible to) a sandbox. Pushes never force: a port
branch that moved under us is refused by the remote and reported.
"""
from __future__ import annotations

import base64
import subprocess
import tarfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from worker.sources.gitsource import GitSourceError, _Git, _git_env, _pinned, check_git_url, check_ref
from worker.sources.hostguard import HostPolicy

AUTHOR = ("Migrator", "migrator@localhost")
Log = Callable[[str], None]


@dataclass(frozen=True)
class RemoteSpec:
    url: str
    token: str = ""  # https: sent as a header through git's environment
    token_user: str = "x-access-token"  # GitHub's; GitLab takes "oauth2"


class PortRepo:
    """A working clone of the team's repository in ``folder`` (the root side's own, never a sandbox's)."""

    def __init__(self, folder: Path, remote: RemoteSpec, *, allow_local: bool, policy: HostPolicy, log: Log,
                 timeout: int = 300) -> None:
        url = check_git_url(remote.url, allow_local=allow_local)
        pinned = _pinned(url, allow_local, policy, log)
        env = _git_env(allow_local, pinned.ssh_options)
        env.update(GIT_AUTHOR_NAME=AUTHOR[0], GIT_AUTHOR_EMAIL=AUTHOR[1], GIT_COMMITTER_NAME=AUTHOR[0],
                   GIT_COMMITTER_EMAIL=AUTHOR[1])
        if remote.token and url.lower().startswith(("https://", "http://")):
            secret = base64.b64encode(f"{remote.token_user}:{remote.token}".encode()).decode()
            env.update(GIT_CONFIG_COUNT="1", GIT_CONFIG_KEY_0="http.extraHeader",
                       GIT_CONFIG_VALUE_0=f"Authorization: Basic {secret}")
        folder.mkdir(parents=True, exist_ok=True)
        self.folder = folder
        self.url = pinned.url
        self.git = _Git(folder, env, timeout, log, pinned.config)

    def fetch(self, target: str, port: str) -> tuple[str, str | None]:
        """(head of ``target``, head of ``port`` or None where the remote has no such branch)."""
        check_ref(target)
        check_ref(port)
        if not (self.folder / ".git").is_dir():
            self.git(["init", "-q"])
            self.git(["remote", "add", "origin", "--", self.url])
        self.git(["fetch", "-q", "--no-tags", "origin", f"+refs/heads/{target}:refs/remotes/origin/{target}"])
        heads = self.git(["ls-remote", "--heads", "origin", f"refs/heads/{port}"], quiet=True).split()
        port_head = None
        if heads:
            self.git(["fetch", "-q", "--no-tags", "origin", f"+refs/heads/{port}:refs/remotes/origin/{port}"])
            port_head = self.rev(f"refs/remotes/origin/{port}")
        return self.rev(f"refs/remotes/origin/{target}"), port_head

    def has_commit(self, commit: str) -> bool:
        try:
            self.git(["cat-file", "-e", f"{commit}^{{commit}}"], quiet=True)
        except ValueError:
            return False
        return True

    def rev(self, name: str) -> str:
        return self.git(["rev-parse", "--verify", "--quiet", f"{name}^{{commit}}"], quiet=True).strip()

    def checkout(self, commit: str) -> Path:
        self.git(["checkout", "-q", "-f", "--detach", commit])
        self.git(["clean", "-q", "-f", "-d", "-x"])
        return self.folder

    def blob(self, commit: str, path: str) -> bytes | None:
        """The file at ``path`` in ``commit`` (None: no such file)."""
        listing = self.git(["ls-tree", "-z", commit, "--", path], quiet=True).strip("\0")
        if not listing:
            return None
        oid = listing.split("\t", 1)[0].split()[2]
        done = subprocess.run(["git", "-c", "core.hooksPath=/dev/null", "cat-file", "blob", oid], cwd=self.folder,
                              env=self.git.env, capture_output=True, timeout=self.git.timeout, check=False)
        if done.returncode != 0:
            raise GitSourceError(f"git cat-file failed for {path}")
        return done.stdout

    def changed(self, old: str, new: str) -> list[str]:
        return [p for p in self.git(["diff", "--name-only", "-z", "--no-renames", old, new], quiet=True).split("\0") if p]

    def is_ancestor(self, old: str, new: str) -> bool:
        try:
            self.git(["merge-base", "--is-ancestor", old, new], quiet=True)
        except ValueError:
            return False
        return True

    def commit_tree(self, parents: list[str], message: str) -> str | None:
        """Commit the working tree on ``parents``; None when its tree is that of the first parent."""
        self.git(["add", "-A", "--", "."])
        tree = self.git(["write-tree"], quiet=True).strip()
        if parents and self.git(["rev-parse", f"{parents[0]}^{{tree}}"], quiet=True).strip() == tree:
            return None
        words = [word for parent in parents for word in ("-p", parent)]
        return self.git(["commit-tree", tree, *words, "-m", message], quiet=True).strip()

    def numstat(self, old: str, new: str) -> tuple[int, int, int]:
        """(files, lines added, lines removed) from ``old`` to ``new``; a binary file counts as a file."""
        files = added = removed = 0
        for line in self.git(["diff", "--numstat", "--no-renames", old, new], quiet=True).splitlines():
            plus, minus, _path = line.split("\t", 2)
            files += 1
            added += int(plus) if plus.isdigit() else 0
            removed += int(minus) if minus.isdigit() else 0
        return files, added, removed

    def export(self, commit: str, dest: Path) -> Path:
        """The tree of ``commit`` as plain files in ``dest`` (no ``.git``): what the builds are given."""
        archive = self.folder.parent / "export.tar"
        self.git(["archive", "--format=tar", "-o", str(archive), commit])
        dest.mkdir(parents=True, exist_ok=False)
        with tarfile.open(archive) as tar:
            tar.extractall(dest, filter="data")
        archive.unlink()
        return dest

    def push(self, commit: str, branch: str) -> None:
        """Fast-forward only: a branch the team moved since the fetch is refused, never overwritten."""
        self.git(["push", "-q", "origin", f"{commit}:refs/heads/{branch}"])

    def bundle(self, commit: str, branch: str, dest: Path) -> Path:
        self.git(["update-ref", f"refs/heads/{branch}", commit])
        self.git(["bundle", "create", "-q", str(dest), f"refs/heads/{branch}"])
        return dest

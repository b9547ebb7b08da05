"""A team's repository for delivery tests: a local bare repository (the remote, by file URL) and the
team's own clone of it, driven with the git CLI."""
from __future__ import annotations

import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

_IDENTITY = ["-c", "user.name=Team Member", "-c", "user.email=member@example.com", "-c", "core.hooksPath=/dev/null"]


def git(cwd: Path, *args: str) -> str:
    done = subprocess.run(["git", *_IDENTITY, *args], cwd=cwd, capture_output=True, text=True, check=True, timeout=60)
    return done.stdout.strip()


@dataclass(frozen=True)
class TeamRepo:
    bare: Path
    clone: Path

    @property
    def url(self) -> str:
        return f"file://{self.bare}"

    def commit_all(self, message: str) -> str:
        git(self.clone, "add", "-A")
        git(self.clone, "commit", "-q", "-m", message)
        return git(self.clone, "rev-parse", "HEAD")

    def show(self, ref: str, path: str) -> str:
        return git(self.bare, "show", f"{ref}:{path}")

    def head(self, branch: str) -> str:
        return git(self.bare, "rev-parse", f"refs/heads/{branch}")

    def changed_files(self, old: str, new: str) -> list[str]:
        return git(self.bare, "diff", "--name-only", old, new).splitlines()


def team_repo(root: Path, fixture: Path) -> TeamRepo:
    """``fixture`` committed on ``main`` and pushed to a bare repository under ``root``."""
    bare, clone = root / "team.git", root / "clone"
    bare.mkdir(parents=True)
    git(bare, "init", "-q", "--bare", "-b", "main")
    shutil.copytree(fixture, clone)
    git(clone, "init", "-q", "-b", "main")
    repo = TeamRepo(bare, clone)
    repo.commit_all("CUDA code base")
    git(clone, "remote", "add", "origin", repo.url)
    git(clone, "push", "-q", "origin", "main")
    return repo

"""The next commit of a port branch: the CUDA branch's tree, the regenerated change, the team's hand edits.

Inputs: the team's repository (``PortRepo``, fetched), the CUDA commit the run translated (``base``), the
port branch's head on the remote (None: a first delivery), what was delivered last (``Previous``) and
the function that makes the change from a checked-out CUDA tree. Output: a commit whose parents are
the port branch's head (so pushing it never forces) and the CUDA commit (so the pull request shows the
CUDA branch merged in), and the list of conflicts.

Every file of the port branch that is neither the CUDA tree it was composed on nor what we wrote there
is the team's (a hand edit) and is kept, this time and every later time:
- a file we generate whose regenerated text is what we delivered last time: their version is kept;
- a file we generate whose regenerated text changed too: a conflict; their version is kept and both
  are recorded (``Conflict``) for the run page;
- another file: theirs is kept; when the CUDA branch changed it as well, that is a conflict too.
In single-source mode only files the CUDA branch changed since the last delivery are examined again;
an earlier edit of a build file that did not change is carried over as it was delivered.
"""
from __future__ import annotations

from collections.abc import Callable, Collection
from dataclasses import dataclass, field
from pathlib import Path

from worker.delivery.gitrepo import PortRepo
from worker.delivery.model import Change, FileChange, digest

MAX_CONFLICT_BYTES = 20_000  # per version kept for the run page
MakeChange = Callable[[Path, Collection[str] | None], Change]


@dataclass(frozen=True)
class Previous:
    commit: str  # our last commit on the port branch
    base: str  # the CUDA commit it was composed on
    generated: dict[str, str]  # path -> digest of what we wrote ("" = deleted)


@dataclass(frozen=True)
class Conflict:
    path: str
    regenerated: str  # what the delivery would write now
    hand: str  # what the port branch holds (kept)
    against: str  # "regenerated edit" | "CUDA branch"


@dataclass
class Composed:
    change: Change
    commit: str | None  # None: the port branch already holds this tree
    head: str  # the commit to verify and push (``commit``, else the port branch's head)
    parents: list[str] = field(default_factory=list)
    generated: dict[str, str] = field(default_factory=dict)
    conflicts: list[Conflict] = field(default_factory=list)
    kept_hand: list[str] = field(default_factory=list)
    examined: list[str] = field(default_factory=list)


def compose(repo: PortRepo, base: str, port_head: str | None, previous: Previous | None, make_change: MakeChange,
            message: str) -> Composed:
    tree = repo.checkout(base)
    since = previous.base if previous is not None and repo.has_commit(previous.base) else None
    only = set(repo.changed(since, base)) if since is not None else None
    change = make_change(tree, only)
    files = change.by_path()
    carried: dict[str, str] = {}
    if previous is not None and port_head is not None and repo.has_commit(previous.commit):
        for path, delivered in previous.generated.items():  # not examined again: as it was delivered
            data = repo.blob(previous.commit, path)
            if path not in files and digest(data) == delivered:
                files[path] = FileChange(path, data, "kept from the last delivery")
            elif path not in files:
                carried[path] = delivered  # a hand edit holds it: ours stays recorded as it was
    for item in files.values():
        _write(tree, item.path, item.data)
    composed = Composed(change, None, port_head or base, examined=sorted(change.examined),
                        generated={**carried, **{p: f.digest for p, f in files.items()}})
    if previous is not None and port_head is not None and repo.has_commit(previous.commit):
        _keep_hand_edits(repo, tree, base, port_head, previous, files, composed)
    composed.parents = [port_head, base] if port_head and not repo.is_ancestor(base, port_head) else [port_head or base]
    composed.commit = repo.commit_tree(composed.parents, message)
    composed.head = composed.commit or composed.head
    return composed


def _keep_hand_edits(repo: PortRepo, tree: Path, base: str, port_head: str, previous: Previous,
                     files: dict[str, FileChange], composed: Composed) -> None:
    """Everything on the port branch that is neither the CUDA tree it was built on nor what we wrote is
    the team's: kept, in this commit and every later one."""
    for path in repo.changed(previous.base, port_head):
        hand = repo.blob(port_head, path)
        if path in previous.generated and digest(hand) == previous.generated[path]:
            continue  # ours, untouched
        now = repo.blob(base, path)
        if hand == now and path not in files:
            continue  # the team merged the CUDA branch themselves
        composed.kept_hand.append(path)
        if path in files:
            regenerated = files[path].data
            if digest(regenerated) != previous.generated.get(path) and regenerated != hand:
                composed.conflicts.append(_conflict(path, regenerated, hand, "regenerated edit"))
        elif repo.blob(previous.base, path) != now and now != hand:
            composed.conflicts.append(_conflict(path, now, hand, "CUDA branch"))
        _write(tree, path, hand)


def _conflict(path: str, ours: bytes | None, theirs: bytes | None, against: str) -> Conflict:
    def text(data: bytes | None) -> str:
        return "" if data is None else data[:MAX_CONFLICT_BYTES].decode("utf-8", "replace")
    return Conflict(path, text(ours), text(theirs), against)


def _write(tree: Path, relative: str, data: bytes | None) -> None:
    target = tree / relative
    if data is None:
        target.unlink(missing_ok=True)
        return
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(data)

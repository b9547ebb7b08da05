"""The user id sandboxed commands run as: one per workspace, from a reserved range.

The kernel counts ``RLIMIT_NPROC`` per user id across the whole host, so with one shared id every
build counted against every other's process limit (a re-run failed at "its limit of 256 processes"
because another run was busy). A root worker runs each workspace's commands as
``MIGRATOR_SANDBOX_UID + hash(workspace) % MIGRATOR_SANDBOX_UIDS``: the same id for every sandbox over
one workspace on every host (so a run's smoke command and its CUDA reference build on another runner
never take each other's files), and another id for another workspace unless the two hash alike (one
chance in ``MIGRATOR_SANDBOX_UIDS``; it matters only where no pids cgroup limits each job, see
``cgroups.py``). Nothing to allocate or give back, so nothing leaks when a worker dies.
"""
from __future__ import annotations

import hashlib
import os
from pathlib import Path

DEFAULT_BASE = 64400
DEFAULT_COUNT = 1000


def uid_range() -> range:
    """``MIGRATOR_SANDBOX_UID`` .. ``+ MIGRATOR_SANDBOX_UIDS - 1``; ``ValueError`` outside 1000..65533."""
    base = int(os.environ.get("MIGRATOR_SANDBOX_UID") or DEFAULT_BASE)
    count = int(os.environ.get("MIGRATOR_SANDBOX_UIDS") or DEFAULT_COUNT)
    if base < 1000 or count < 1 or base + count > 65534:
        raise ValueError(f"sandbox user ids {base}..{base + count - 1} must lie within 1000..65533")
    return range(base, base + count)


def workspace_uid(workspace: Path, ids: range | None = None) -> int:
    """The id commands over ``workspace`` (an absolute, resolved path) run as."""
    ids = ids or uid_range()
    digest = hashlib.sha256(str(workspace).encode(errors="surrogateescape")).digest()
    return ids[int.from_bytes(digest[:8], "big") % len(ids)]

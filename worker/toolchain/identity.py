"""A user id of its own for each sandbox, from a reserved range, leased with a lock file per id.

The kernel counts ``RLIMIT_NPROC`` per user id across the whole host, so with one shared id every
build counted against every other's process limit. A root worker leases an id from
``MIGRATOR_SANDBOX_UID`` .. ``MIGRATOR_SANDBOX_UID + MIGRATOR_SANDBOX_UIDS - 1`` for each sandbox:
an exclusive ``flock`` on ``<state dir>/uids/<id>`` that lasts as long as the lease (and ends by
itself when the worker dies, so an id is never lost). With every id of the range taken, the sandbox
shares the first one and says so.
"""
from __future__ import annotations

import fcntl
import os
import random
import threading
from dataclasses import dataclass, field
from pathlib import Path

DEFAULT_BASE = 64400
DEFAULT_COUNT = 1000


def uid_range() -> range:
    base = int(os.environ.get("MIGRATOR_SANDBOX_UID") or DEFAULT_BASE)
    count = int(os.environ.get("MIGRATOR_SANDBOX_UIDS") or DEFAULT_COUNT)
    if not 1000 <= base or base + count > 65534 or count < 1:
        raise ValueError(f"sandbox user ids {base}..{base + count - 1} must lie within 1000..65533")
    return range(base, base + count)


@dataclass
class UidLease:
    uid: int
    shared: bool = False  # every id of the range was taken: this one is shared with another sandbox
    _fd: int | None = None
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def release(self) -> None:
        with self._lock:
            if self._fd is not None:
                os.close(self._fd)  # closing the descriptor ends the flock
                self._fd = None


def lease_uid(lock_dir: Path, ids: range | None = None) -> UidLease:
    """An id of ``ids`` no other sandbox on this host holds now."""
    ids = ids or uid_range()
    lock_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
    start = random.randrange(len(ids))  # spread the search so concurrent workers rarely collide
    for offset in range(len(ids)):
        uid = ids[(start + offset) % len(ids)]
        fd = os.open(lock_dir / str(uid), os.O_RDWR | os.O_CREAT | os.O_CLOEXEC | os.O_NOFOLLOW, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            continue
        return UidLease(uid, _fd=fd)
    return UidLease(ids[0], shared=True)

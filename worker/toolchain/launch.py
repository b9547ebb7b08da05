"""The first process of every sandboxed job: it puts itself in the job's limits, then becomes bubblewrap.

Run by ``sandbox.py`` as ``python -I -S launch.py OPTIONS... --options N BWRAP_OPTIONS... COMMAND...``
(standard library only, nothing imported that a plain start does not load already: a job's fixed
cost is this interpreter's start). OPTIONS:

- ``--cgroup PROCS``: a ``cgroup.procs`` file of the job's own groups; the launcher writes its own pid
  into each before anything else, so every process of the job is born inside them;
- ``--rlimit NAME=VALUE`` (``AS``, ``CPU``, ``FSIZE``, ``NPROC``, ``CORE``): set as soft and hard limit;
- ``--stage DIR`` and ``--view SOURCE NAME`` (root only): in a private mount namespace, a tmpfs at
  ``DIR`` and under it one read-only overlay per view, whose lower layers are named ``/proc/self/fd/N``.
  The bubblewrap options bind those overlays instead of the sources, so ``/proc/self/mountinfo`` in
  the sandbox shows ``/`` and ``overlay`` for them, never the host path of the source;
- ``--bwrap PATH``: the bubblewrap binary; ``--options N``: the next N arguments are its options. They
  reach it through ``--args FD`` (a memfd bubblewrap reads and closes), so the command line of the
  sandbox's PID 1 is ``bwrap --args N -- COMMAND...``: no host path in it.

Anything that cannot be set up ends the job before bubblewrap starts: exit status 125 and one line on
stderr starting with ``migrator-sandbox:``. ``--probe`` only sets up the views and exits 0 (``views.py``
uses it once per filesystem to learn whether overlay views work there).
"""
from __future__ import annotations

import os
import resource
import sys

TYPE_CHECKING = False  # importing typing would load re (tens of ms of every job's start)
if TYPE_CHECKING:
    from typing import NoReturn

SETUP_FAILED = 125
_CLONE_NEWNS = 0x00020000
_MS_RDONLY, _MS_NOSUID, _MS_NODEV, _MS_REC, _MS_PRIVATE = 1, 2, 4, 0x4000, 1 << 18


def fail(message: str) -> NoReturn:
    sys.stderr.write(f"migrator-sandbox: {message}\n")
    sys.stderr.flush()
    os._exit(SETUP_FAILED)


def join_cgroups(procs_files: list[str]) -> None:
    for procs in procs_files:
        try:
            with open(procs, "w") as handle:
                handle.write(str(os.getpid()))
        except OSError as exc:
            fail(f"could not enter the job's cgroup ({exc.strerror})")


def set_rlimits(limits: list[str]) -> None:
    for limit in limits:
        name, _, value = limit.partition("=")
        try:
            resource.setrlimit(getattr(resource, f"RLIMIT_{name}"), (int(value), int(value)))
        except (AttributeError, ValueError, OSError) as exc:
            fail(f"could not set the {name} limit ({exc})")


def _libc_call(libc: object, name: str, *args: object) -> None:
    import ctypes

    function = getattr(libc, name)
    if function(*args) != 0:
        error = ctypes.get_errno()
        fail(f"{name} failed while hiding host paths ({os.strerror(error)})")


def mount_views(stage: str, views: list[list[str]]) -> None:
    """A private mount namespace with one read-only overlay per source under a tmpfs at ``stage``."""
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    _libc_call(libc, "unshare", _CLONE_NEWNS)
    _libc_call(libc, "mount", None, b"/", None, _MS_REC | _MS_PRIVATE, None)
    sources = []  # opened in the new namespace: overlayfs takes layers from the caller's own mounts only
    for source, _ in views:
        try:
            sources.append(os.open(source, os.O_RDONLY | os.O_DIRECTORY))
        except OSError as exc:
            fail(f"cannot open a folder the sandbox needs ({exc.strerror})")
    _libc_call(libc, "mount", b"tmpfs", stage.encode(), b"tmpfs", _MS_NOSUID | _MS_NODEV, b"mode=0700,size=64k")
    os.mkdir(os.path.join(stage, ".empty"))
    empty = os.open(os.path.join(stage, ".empty"), os.O_RDONLY | os.O_DIRECTORY)
    for fd, (_, name) in zip(sources, views, strict=True):
        target = os.path.join(stage, name)
        os.mkdir(target)
        options = f"lowerdir=/proc/self/fd/{fd}:/proc/self/fd/{empty}".encode()
        _libc_call(libc, "mount", b"overlay", target.encode(), b"overlay", _MS_RDONLY | _MS_NOSUID | _MS_NODEV, options)
        os.close(fd)
    os.close(empty)


def exec_bubblewrap(bwrap: str, options: list[str], command: list[str]) -> None:
    fd = os.memfd_create("bwrap-args", 0)
    os.write(fd, b"".join(option.encode() + b"\0" for option in options))
    os.lseek(fd, 0, os.SEEK_SET)
    os.set_inheritable(fd, True)
    os.chdir("/")
    try:
        os.execv(bwrap, ["bwrap", "--args", str(fd), *command])
    except OSError as exc:
        fail(f"cannot start bubblewrap ({exc.strerror})")


def main(argv: list[str]) -> None:
    taken: dict[str, list[str]] = {"--cgroup": [], "--rlimit": [], "--view": [], "--stage": [], "--bwrap": []}
    probe, index = False, 0
    while index < len(argv) and argv[index] != "--options":
        option = argv[index]
        if option == "--probe":
            probe, index = True, index + 1
            continue
        width = 2 if option == "--view" else 1
        if option not in taken or index + width >= len(argv):
            fail(f"bad launcher option {option!r}")
        taken[option] += argv[index + 1:index + 1 + width]
        index += 1 + width
    join_cgroups(taken["--cgroup"])
    views = [taken["--view"][i:i + 2] for i in range(0, len(taken["--view"]), 2)]
    if views:
        mount_views(taken["--stage"][-1] if taken["--stage"] else fail("views need --stage"), views)
    if probe:
        os._exit(0)
    set_rlimits(taken["--rlimit"])
    if index + 1 >= len(argv) or not taken["--bwrap"]:
        fail("no bubblewrap options")
    count = int(argv[index + 1])
    options = argv[index + 2:index + 2 + count]
    exec_bubblewrap(taken["--bwrap"][-1], options, argv[index + 2 + count:])


if __name__ == "__main__":
    main(sys.argv[1:])

"""How a host folder is shown inside the sandbox without its host path.

``/proc/self/mountinfo`` names, for every bind mount, the bound folder's path within its source
filesystem: a plain ``--ro-bind /var/cache/migrator/toolchains/rocm-6.4 /`` tells the build where the
store is. A folder shows no host path when it is the root of a filesystem of its own:

- a work volume (a loop-mounted ext4 image, ``volume.py``) is bound as it is: ``/`` and ``/dev/loopN``;
- a read-only folder (the toolchain root, the source tree) is shown through a read-only overlay whose
  lower layers are named ``/proc/self/fd/N`` (``launch.py`` mounts it per job in a private mount
  namespace): mountinfo shows ``/``, ``overlay`` and those fd names.

Overlays need root (and overlayfs over that filesystem, probed once per filesystem); a writable
folder that is not a volume is bound as it is. What stays visible is said by ``Sandbox.notes``.
"""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

LAUNCHER = Path(__file__).resolve().with_name("launch.py")
_probed: dict[int, str] = {}  # st_dev: problem


def state_dir() -> Path:
    """Root-only folder for the sandbox's own state (the per-job staging mount point, the loop probe)."""
    return Path(os.environ.get("MIGRATOR_SANDBOX_STATE_DIR") or "/run/migrator-sandbox")


def launcher_command() -> list[str]:
    """The interpreter and script of ``launch.py``: isolated mode, no site packages (fast start)."""
    return [sys.executable or "python3", "-I", "-S", str(LAUNCHER)]


def stage_dir() -> Path:
    folder = state_dir() / "stage"
    folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    return folder


def is_filesystem_root(path: Path) -> bool:
    """Whether ``path`` is a mount point showing the root of its filesystem (so a bind of it names no host path)."""
    wanted = str(path.resolve())
    found = False
    try:
        lines = Path("/proc/self/mountinfo").read_text().splitlines()
    except OSError:
        return False
    for line in lines:  # the last mount at a point is the one in effect
        fields = line.split()
        if _unescape(fields[4]) == wanted:
            found = fields[3] == "/"
    return found


def _unescape(field: str) -> str:
    return field.replace("\\040", " ").replace("\\011", "\t").replace("\\012", "\n").replace("\\134", "\\")


def overlay_problem(path: Path) -> str:
    """Empty when a read-only overlay view of ``path`` can be mounted here, else why not."""
    if os.geteuid() != 0:
        return "hiding host paths needs a root worker (overlay mounts)"
    try:
        device = path.stat().st_dev
    except OSError as exc:
        return f"cannot read {path.name} ({exc.strerror})"
    if device not in _probed:
        _probed[device] = _probe(str(path))
    return _probed[device]


def _probe(path: str) -> str:
    """One probe per filesystem: the launcher mounts a view of ``path`` in a throw-away namespace."""
    try:
        stage = stage_dir()
    except OSError as exc:
        return f"no state folder for the sandbox ({exc.strerror})"
    probe = ["--probe", "--stage", str(stage), "--view", path, "probe"]
    try:
        done = subprocess.run([*launcher_command(), *probe], capture_output=True, text=True, timeout=30,
                              check=False, env={"PATH": "/usr/bin:/bin"})
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"the overlay probe did not run ({exc})"
    if done.returncode != 0:
        return done.stderr.strip().removeprefix("migrator-sandbox: ") or f"the overlay probe failed ({done.returncode})"
    return ""

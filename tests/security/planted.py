"""What a hostile build does to the folder its sandbox may write, and the canary files that show the root
side never wrote through what it left there.

``plant_script`` is a shell script a project ships and its own build runs (from a Makefile, a
build_command, a smoke command or a preset's server command): every name under which the pipeline has
ever recorded something, in every folder of ``/workspace`` it could be looked for, becomes a symbolic link
to a file of the host, and the build folder's ``obj`` becomes a link to a host folder. A real
attacker reads the host paths from ``/proc/self/mountinfo``; the test hands them over.
"""
from __future__ import annotations

import os
import shlex
import shutil
from pathlib import Path

# Every record name the pipeline writes (stage artifacts, the reference's log, a preset's inputs); the
# marker an older version wrote beside a pending reference stays, so a build planting it is still caught.
RECORD_NAMES = ("scan.json", "translation.json", "compile.json", "link.json", "smoke.json", "reference.json",
                "reference.log", "reference.pending", "spec.json", "preset_serve.py")
# Where a build could expect them: the old artifacts folder, the records folder, the preset folders.
PLANTED_FOLDERS = ("/workspace/artifacts", "/workspace/records", "/workspace/records/preset",
                   "/workspace/records/preset-reference", "/workspace/.migrator-preset")
HOST_FOLDERS = ("obj",)


def make_canaries(host: Path) -> dict[str, bytes]:
    """Host files (and empty host folders) a planted link points at, with what they hold now."""
    shutil.rmtree(host, ignore_errors=True)
    host.mkdir(parents=True)
    for name in RECORD_NAMES:
        (host / name).write_text(f"host file {name}: never written by the pipeline\n")
    for folder in HOST_FOLDERS:
        (host / folder).mkdir()
    return canary_state(host)


class Canaries:
    """The host files a build's links point at; ``check`` notes what a stage changed there and puts them
    back, so every stage is judged on its own and one assertion at the end names them all."""

    def __init__(self, host: Path) -> None:
        self.host = host
        self.before = make_canaries(host)
        self.changed: dict[str, list[str]] = {}

    def check(self, stage: str) -> None:
        now = canary_state(self.host)
        changed = sorted(name for name in {*now, *self.before} if now.get(name) != self.before.get(name))
        if changed:
            self.changed[stage] = changed
            make_canaries(self.host)


def canary_state(host: Path) -> dict[str, bytes]:
    """Every entry under ``host`` with its bytes (folders as b"/"): any write, new file or removal shows."""
    state: dict[str, bytes] = {}
    for folder, dirs, files in os.walk(host):
        for name in dirs:
            state[os.path.relpath(os.path.join(folder, name), host)] = b"/"
        for name in files:
            path = Path(folder) / name
            state[os.path.relpath(path, host)] = path.read_bytes() if not path.is_symlink() else b"link"
    return state


def plant_script(host: Path) -> str:
    """The script a hostile build runs: record names and build/obj become links to ``host``."""
    names = " ".join(RECORD_NAMES)
    folders = " ".join(PLANTED_FOLDERS)
    where = shlex.quote(str(host))
    return f"""#!/bin/sh
# Every record name under /workspace becomes a link to a host file; build/obj a link to a host folder.
host={where}
for dir in {folders}; do
  mkdir -p "$dir" 2>/dev/null || continue
  for name in {names}; do
    rm -rf "$dir/$name" 2>/dev/null
    ln -s "$host/$name" "$dir/$name" 2>/dev/null
  done
done
if mkdir -p /workspace/build 2>/dev/null; then
  rm -rf /workspace/build/obj && ln -s "$host/obj" /workspace/build/obj
fi
echo "planted links to the host"
"""

"""Per-file compilation's flags from make's own view of the Makefiles, not from their text.

When a tree with Makefiles is compiled file by file (``build_mode`` ``per_tu``, or a Makefile ``auto``
could not take as the project's build), each Makefile folder's ``make -pn -j1`` runs in the sandbox over
the read-only translated tree (``make_build.make_commands``' dry run, the same environment as a make
build). The compile commands its dry run prints are make's own expansion, so definitions that come
through variables (``-DNUM_BLOCKS=$(N)``), included fragments (``../common/make.config``), conditionals
and ``+=`` arrive as make decides them. Each source named there gets the definitions, include
directories (those inside the tree) and language standard of its compile command. A folder make
cannot read keeps what the static reader (``scanning/make_units.py``) found, and the log says so.
"""
from __future__ import annotations

import posixpath
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import PurePosixPath

from worker.project_settings import ProjectSettings
from worker.scanning.make_units import MAKEFILE_NAMES
from worker.toolchain.make_build import make_environment
from worker.toolchain.make_db import parse_dry_run
from worker.toolchain.project_targets import BuildCompile, make_compiles
from worker.toolchain.sandbox import Sandbox, SandboxLimits, SandboxUnavailable
from worker.toolchain.sources import BuildUnit
from worker.toolchain.version_defines import VersionDefine

_TIMEOUT_S = 120.0  # one folder's dry run
_MAX_FOLDERS = 64  # dry runs per compile; the folders beyond keep the static reading
_MEMORY_MB = 1024


@dataclass(frozen=True)
class MakeFlags:
    units: list[BuildUnit]  # the static units of the folders make could not read, and make's for the others
    read: list[str]  # folders whose flags came from make's dry run
    unread: list[tuple[str, str]]  # (folder, why) where the static reader's flags were kept


def with_make_flags(units: Sequence[BuildUnit], sandbox: Sandbox, tree_inside: str, settings: ProjectSettings,
                    defines: Sequence[VersionDefine] = (), should_stop: Callable[[], bool] = lambda: False) -> MakeFlags:
    """``units`` with those the static reader took from Makefiles replaced, folder by folder, by the
    compiles make's dry run prints there; ``tree_inside``: the tree's path in ``sandbox``."""
    folders = sorted({posixpath.dirname(u.build_file) for u in units if _is_makefile(u.build_file)})
    kept = [u for u in units if not _is_makefile(u.build_file)]
    read: list[str] = []
    unread: list[tuple[str, str]] = []
    env = make_environment(settings, defines)
    for folder in folders:
        static = [u for u in units if _is_makefile(u.build_file) and posixpath.dirname(u.build_file) == folder]
        found: list[BuildUnit] = []
        if should_stop() or len(read) + len(unread) >= _MAX_FOLDERS:
            why = "cancelled" if should_stop() else f"over {_MAX_FOLDERS} Makefile folders"
        else:
            found, why = _dry_run_units(sandbox, tree_inside, static[0].build_file, env)
        if found:
            kept += found
            read.append(folder or ".")
        else:
            kept += static
            unread.append((folder or ".", why))
    return MakeFlags(kept, read, unread)


def describe(flags: MakeFlags) -> str:
    """One line for the compile log."""
    parts = []
    if flags.read:
        parts.append(f"flags of {len(flags.read)} Makefile folder(s) from make's dry run (make -pn): "
                     + ", ".join(flags.read[:6]) + (" ..." if len(flags.read) > 6 else ""))
    parts += [f"{folder}: the static reading of its Makefile ({why})" for folder, why in flags.unread[:6]]
    return "per-file flags: " + "; ".join(parts) if parts else ""


def _dry_run_units(sandbox: Sandbox, tree_inside: str, build_file: str,
                   env: dict[str, str]) -> tuple[list[BuildUnit], str]:
    folder = posixpath.dirname(build_file)
    where = posixpath.join(tree_inside, folder) if folder else tree_inside
    started = time.monotonic()
    try:
        done = sandbox.run(["make", "-pn", "-j1", "-C", where], tree_inside,
                           SandboxLimits(timeout_s=_TIMEOUT_S, memory_mb=_MEMORY_MB), env=env)
    except SandboxUnavailable as exc:
        return [], str(exc)
    if not done.ok:
        return [], f"make -pn exit status {done.process.returncode} after {time.monotonic() - started:.1f} s"
    compiles = make_compiles(parse_dry_run(done.process.output, where))
    units = [unit for c in compiles if (unit := _unit(c, tree_inside, build_file)) is not None]
    return units, "" if units else "its dry run prints no compile command"


def _unit(compile_: BuildCompile, tree_inside: str, build_file: str) -> BuildUnit | None:
    """One compile command as a unit: its sources, -I folders inside the tree, -D definitions, -std."""
    sources = [s for s in (_in_tree(src, compile_.cwd, tree_inside) for src in compile_.sources) if s]
    if not sources:
        return None
    unit = BuildUnit(PurePosixPath(compile_.output).name or sources[0], "code-object", build_file, sources=sources)
    words = list(compile_.argv[1:])
    for index, word in enumerate(words):
        following = words[index + 1] if index + 1 < len(words) else ""
        if word in ("-D", "-I"):
            value = following
        elif word.startswith(("-D", "-I")):
            value = word[2:]
        elif word.startswith(("-std=", "--std=")):
            unit.std = word.split("=", 1)[1]
            continue
        else:
            continue
        if word.startswith("-D") and value:
            unit.defines.append(value)
        elif value and (inside := _in_tree(value, compile_.cwd, tree_inside)):
            unit.include_dirs.append(inside)
    return unit


def _in_tree(path: str, cwd: str, tree_inside: str) -> str:
    """``path`` as a command in ``cwd`` names it, relative to the tree; "" when it lies outside."""
    full = PurePosixPath(posixpath.normpath(posixpath.join(cwd, path)))
    if not full.is_relative_to(tree_inside):
        return ""
    return full.relative_to(tree_inside).as_posix() or "."


def _is_makefile(build_file: str) -> bool:
    return posixpath.basename(build_file) in MAKEFILE_NAMES

"""How the compile stage builds a translated tree: the project's own build, or file by file.

``build_mode`` ``auto`` (the default) runs the project's own build whenever it has one: a ``build_command``,
a top-level CMakeLists.txt whose targets ``build_units`` can read, or Makefiles at the top or beside the
CUDA sources (``build_folders.py``: one unit per folder; a CMakeLists.txt without targets does not hide
them). Otherwise each source file is compiled on its own, and the reason says why. ``per_tu`` compiles file by
file, taking the sources, include directories, definitions and libraries of each target from the build
files where there are any. ``project`` always runs the project's own build.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from worker.project_settings import ProjectSettings
from worker.toolchain.build_folders import make_folders
from worker.toolchain.sources import BuildUnit, build_units

Mode = Literal["project", "per_tu"]
_TOP_BUILD_FILES = ("CMakeLists.txt", "Makefile", "makefile", "GNUmakefile")


@dataclass(frozen=True)
class ModeChoice:
    mode: Mode
    reason: str  # one sentence for the log and the stage page
    units: list[BuildUnit] = field(default_factory=list)  # the build files' targets, where understood
    make_folders: list[str] = field(default_factory=list)  # project mode with Makefiles: one unit per folder


def choose_build_mode(hip_tree: Path, settings: ProjectSettings) -> ModeChoice:
    units = build_units(hip_tree, settings.exclude_globs) if hip_tree.is_dir() else []
    described = _described(hip_tree, units)
    cmake = bool(units) and (hip_tree / "CMakeLists.txt").is_file() and any(
        u.build_file.endswith("CMakeLists.txt") for u in units)
    makes = make_folders(hip_tree, settings.exclude_globs) if hip_tree.is_dir() and not cmake else None
    folders = makes.folders if makes else []
    if settings.build_mode == "project":
        return ModeChoice("project", "build_mode is project: the project's own build" + (
            f" (make in {makes.reason})" if makes and folders else ""), units, folders)
    if settings.build_mode == "per_tu":
        source = f"sources from the build files ({described})" if units else "every source file"
        return ModeChoice("per_tu", f"build_mode is per_tu: each file compiled on its own, {source}", units)
    if settings.build_command:
        return ModeChoice("project", "build_mode auto: the project's build_command is set", units)
    if cmake:
        return ModeChoice("project", f"build_mode auto: the project's own build ({described}); "
                                     "set build_mode to per_tu to compile file by file", units)
    if makes and folders:
        return ModeChoice("project", f"build_mode auto: the project's own build, make in {makes.reason}; "
                                     "set build_mode to per_tu to compile file by file", units, folders)
    top = [name for name in _TOP_BUILD_FILES if (hip_tree / name).is_file()]
    why = (f"{top[0]} at the top names no target this can read" if top else
           "no Makefile at the top of the tree or beside the CUDA sources, and no CMakeLists.txt at the top")
    return ModeChoice("per_tu", f"build_mode auto: {why}, so each source file is compiled on its own "
                                "(built file by file, not with the project's build)", units)


def _described(hip_tree: Path, units: list[BuildUnit]) -> str:
    files = sorted({unit.build_file for unit in units})
    shown = ", ".join(files[:3]) + (f" and {len(files) - 3} more" if len(files) > 3 else "")
    return f"{len(units)} target{'s' if len(units) != 1 else ''} in {shown}" if units else "no targets"

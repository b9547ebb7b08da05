"""How the compile stage builds a translated tree: the project's own build, or file by file.

``build_mode`` ``auto`` (the default) runs the project's own build whenever it has one: a ``build_command``,
a top-level CMakeLists.txt whose targets ``build_units`` can read, or Makefiles at the top or beside the
CUDA sources (``build_folders.py``: one unit per folder; a CMakeLists.txt without targets does not hide
them). Otherwise each source file is compiled on its own, and the reason says why. ``per_tu`` compiles file by
file, taking the sources, include directories, definitions and libraries of each target from the build
files where there are any. ``project`` always runs the project's own build.

``project_dir`` (from the fetch stage) is where ``source_subdir`` lies when paths beside it were kept: the
build is looked for and runs there, as if that folder were the tree, with its siblings beside it.
"""
from __future__ import annotations

import posixpath
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from worker.project_settings import ProjectSettings
from worker.toolchain.build_folders import MakeFolders, make_folders
from worker.toolchain.sources import BuildUnit, build_units

Mode = Literal["project", "per_tu"]
_TOP_BUILD_FILES = ("CMakeLists.txt", "Makefile", "makefile", "GNUmakefile")


@dataclass(frozen=True)
class ModeChoice:
    mode: Mode
    reason: str  # one sentence for the log and the stage page
    units: list[BuildUnit] = field(default_factory=list)  # the build files' targets, where understood
    make_folders: list[str] = field(default_factory=list)  # project mode with Makefiles: one unit per folder
    project_dir: str = ""  # tree-relative folder the project's build runs in ("" for the top)


def choose_build_mode(hip_tree: Path, settings: ProjectSettings, project_dir: str = "") -> ModeChoice:
    """How to build ``hip_tree``; its project's build is looked for in ``project_dir`` (tree-relative)."""
    base = hip_tree / project_dir if project_dir else hip_tree
    units = build_units(hip_tree, settings.exclude_globs) if hip_tree.is_dir() else []  # per_tu: the whole tree
    own = build_units(base, settings.exclude_globs) if project_dir and base.is_dir() else units
    described = _described(base, own) + (f" in {project_dir}/" if project_dir else "")
    cmake = bool(own) and (base / "CMakeLists.txt").is_file() and any(
        u.build_file.endswith("CMakeLists.txt") for u in own)
    makes = make_folders(base, settings.exclude_globs) if base.is_dir() and not cmake else None
    # make runs in the build's copy of the whole tree: its folders are tree-relative
    folders = [posixpath.normpath(posixpath.join(project_dir, f)) for f in makes.folders] if makes else []
    if settings.build_mode != "per_tu" and (settings.build_mode == "project" or settings.build_command or cmake
                                            or folders):
        chosen = _project_choice(settings, cmake, makes, described) + (
            f" (the project's build in {project_dir}/, the paths kept beside it with it)" if project_dir else "")
        return ModeChoice("project", chosen, units, folders, project_dir)
    if settings.build_mode == "per_tu":
        source = f"sources from the build files ({described})" if units else "every source file"
        return ModeChoice("per_tu", f"build_mode is per_tu: each file compiled on its own, {source}", units)
    top = [name for name in _TOP_BUILD_FILES if (base / name).is_file()]
    why = (f"{top[0]} at the top names no target this can read" if top else
           "no Makefile at the top of the tree or beside the CUDA sources, and no CMakeLists.txt at the top")
    return ModeChoice("per_tu", f"build_mode auto: {why}, so each source file is compiled on its own "
                                "(built file by file, not with the project's build)", units)


def _project_choice(settings: ProjectSettings, cmake: bool, makes: MakeFolders | None, described: str) -> str:
    """Why the project's own build runs: one sentence."""
    if settings.build_mode == "project":
        return "build_mode is project: the project's own build" + (
            f" (make in {makes.reason})" if makes and makes.folders else "")
    if settings.build_command:
        return "build_mode auto: the project's build_command is set"
    if cmake:
        return f"build_mode auto: the project's own build ({described}); set build_mode to per_tu to compile file by file"
    return (f"build_mode auto: the project's own build, make in {makes.reason if makes else ''}; "
            "set build_mode to per_tu to compile file by file")


def _described(hip_tree: Path, units: list[BuildUnit]) -> str:
    files = sorted({unit.build_file for unit in units})
    shown = ", ".join(files[:3]) + (f" and {len(files) - 3} more" if len(files) > 3 else "")
    return f"{len(units)} target{'s' if len(units) != 1 else ''} in {shown}" if units else "no targets"

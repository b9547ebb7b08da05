"""How the compile stage builds a translated tree: the project's own build, or file by file.

``build_mode`` ``auto`` (the default) runs the project's own build when the tree has a build system this
understands at its top (a CMakeLists.txt or Makefile whose targets ``build_units`` can read, or a
``build_command`` is set); otherwise each source file is compiled on its own. ``per_tu`` compiles file by
file, taking the sources, include directories, definitions and libraries of each target from the build
files where there are any. ``project`` always runs the project's own build.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from worker.project_settings import ProjectSettings
from worker.toolchain.sources import BuildUnit, build_units

Mode = Literal["project", "per_tu"]
_TOP_BUILD_FILES = ("CMakeLists.txt", "Makefile", "makefile", "GNUmakefile")


@dataclass(frozen=True)
class ModeChoice:
    mode: Mode
    reason: str  # one sentence for the log and the stage page
    units: list[BuildUnit] = field(default_factory=list)  # the build files' targets, where understood


def choose_build_mode(hip_tree: Path, settings: ProjectSettings) -> ModeChoice:
    units = build_units(hip_tree, settings.exclude_globs) if hip_tree.is_dir() else []
    described = _described(hip_tree, units)
    if settings.build_mode == "project":
        return ModeChoice("project", "build_mode is project: the project's own build", units)
    if settings.build_mode == "per_tu":
        source = f"sources from the build files ({described})" if units else "every source file"
        return ModeChoice("per_tu", f"build_mode is per_tu: each file compiled on its own, {source}", units)
    if settings.build_command:
        return ModeChoice("project", "build_mode auto: the project's build_command is set", units)
    top = [name for name in _TOP_BUILD_FILES if (hip_tree / name).is_file()]
    if units and top:
        return ModeChoice("project", f"build_mode auto: the project's own build ({described}); "
                                     "set build_mode to per_tu to compile file by file", units)
    return ModeChoice("per_tu", "build_mode auto: no build file this understands at the top of the tree, "
                                "so each source file is compiled on its own", units)


def _described(hip_tree: Path, units: list[BuildUnit]) -> str:
    files = sorted({unit.build_file for unit in units})
    shown = ", ".join(files[:3]) + (f" and {len(files) - 3} more" if len(files) > 3 else "")
    return f"{len(units)} target{'s' if len(units) != 1 else ''} in {shown}" if units else "no targets"

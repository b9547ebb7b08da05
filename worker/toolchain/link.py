"""Link compiled objects into the targets a project names, with ``hipcc``.

``auto``: one executable per TU defining ``main`` (linked with every object that
does not), or a shared library when no TU defines ``main``. Libraries: the
``link_libraries`` setting plus those the translated sources include (hipRAND
for ``hiprand/hiprand.h`` ...). Failures are parsed into ``LinkProblem``s.
"""
from __future__ import annotations

import re
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from worker.project_settings import ProjectSettings
from worker.toolchain.detect import Toolchain, detect_toolchain, hip_environment
from worker.toolchain.diagnostics import LinkProblem, parse_linker_output
from worker.toolchain.rocm_libraries import library_for_include
from worker.toolchain.runner import run_process
from worker.toolchain.sources import scan_tree

TargetKind = Literal["executable", "shared"]


@dataclass
class LinkTarget:
    name: str
    kind: TargetKind
    output_path: str
    units: list[str]  # tree-relative TUs whose objects went in
    status: Literal["passed", "failed", "timeout"] = "failed"
    duration_s: float = 0.0
    command: list[str] = field(default_factory=list)
    problems: list[LinkProblem] = field(default_factory=list)
    output: str = ""


@dataclass
class LinkReport:
    targets: list[LinkTarget]
    libraries: list[str]  # "-l" names used
    inferred_libraries: list[str]  # of those, the ones inferred from #include lines
    error: str = ""

    @property
    def ok(self) -> bool:
        return not self.error and all(t.status == "passed" for t in self.targets)

    @property
    def problems(self) -> list[LinkProblem]:
        return [p for t in self.targets for p in t.problems]


def link_objects(
    objects: dict[str, Path],
    hip_tree: Path,
    build_dir: Path,
    settings: ProjectSettings,
    toolchain: Toolchain | None = None,
    *,
    name: str = "project",
) -> LinkReport:
    """Link ``objects`` (tree-relative TU -> object file) into ``build_dir/bin`` or ``build_dir/lib``."""
    toolchain = toolchain or detect_toolchain()
    inferred = inferred_libraries(hip_tree, settings.exclude_globs)
    libraries = list(dict.fromkeys([*(lib.removeprefix("-l") for lib in settings.link_libraries), *inferred]))
    report = LinkReport([], libraries, inferred)
    if not toolchain.available:
        report.error = "hipcc not found on PATH"
        return report
    targets = plan_targets(objects, hip_tree, build_dir, settings.link_target, name)
    if isinstance(targets, str):
        report.error = targets
        return report
    for target in targets:
        _link_one(target, objects, build_dir, settings, toolchain, libraries)
    report.targets = targets
    return report


def plan_targets(
    objects: dict[str, Path], hip_tree: Path, build_dir: Path, link_target: str, name: str
) -> list[LinkTarget] | str:
    """The targets to build, or a message saying why there are none."""
    if link_target == "none":
        return []
    if not objects:
        return "no object files to link"
    mains = [unit for unit in sorted(objects) if _defines_main(hip_tree / unit)]
    others = [unit for unit in sorted(objects) if unit not in mains]
    if link_target == "executable" and not mains:
        return "link_target is 'executable' but no translation unit defines main()"
    if mains and link_target in ("auto", "executable"):
        return [
            LinkTarget(_executable_name(unit), "executable", str(build_dir / "bin" / _executable_name(unit)),
                       [unit, *others])
            for unit in mains
        ]
    return [LinkTarget(f"lib{name}.so", "shared", str(build_dir / "lib" / f"lib{name}.so"), others or mains)]


def inferred_libraries(hip_tree: Path, exclude_globs: tuple[str, ...] = ()) -> list[str]:
    """``-l`` names for the ROCm libraries whose headers the translated sources include."""
    tree = scan_tree(hip_tree, exclude_globs)
    found: dict[str, None] = {}
    for relative in tree.files:
        if relative not in tree.translation_units and not relative.endswith((".h", ".hpp", ".cuh", ".hh")):
            continue
        for _kind, include in tree.includes(relative):
            library = library_for_include(include)
            if library is not None and library.library != "amdhip64":
                found[library.library] = None
    return list(found)


def _link_one(
    target: LinkTarget, objects: dict[str, Path], build_dir: Path, settings: ProjectSettings,
    toolchain: Toolchain, libraries: list[str],
) -> None:
    output = Path(target.output_path)
    output.parent.mkdir(parents=True, exist_ok=True)
    output.unlink(missing_ok=True)
    command = [toolchain.hipcc, *(f"--offload-arch={arch}" for arch in settings.offload_archs)]
    if target.kind == "shared":
        command += ["-shared", "-fPIC"]
    command += [str(objects[unit]) for unit in target.units]
    command += ["-o", str(output), *(f"-l{lib}" for lib in libraries)]
    started = time.monotonic()
    process = run_process(command, build_dir, hip_environment(), settings.compile_timeout_s)
    target.duration_s = time.monotonic() - started
    target.command = command
    target.output = process.output
    target.status = "timeout" if process.timed_out else ("passed" if process.ok and output.is_file() else "failed")
    target.problems = parse_linker_output(process.output)
    by_object = {str(path): unit for unit, path in objects.items()}
    for problem in target.problems:
        problem.object = by_object.get(problem.object, problem.object)


_MAIN = re.compile(r"^[ \t]*(?:extern\s+\"C\"\s+)?(?:int|auto)\s+main\s*\(", re.MULTILINE)


def _defines_main(path: Path) -> bool:
    try:
        return bool(_MAIN.search(path.read_text(errors="replace")))
    except OSError:
        return False


def _executable_name(unit: str) -> str:
    return Path(unit).name.split(".", 1)[0]

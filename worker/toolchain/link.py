"""Link compiled objects into the targets a project names, in the sandbox over the toolchain root.

``auto``: one executable per TU defining ``main`` (linked with every object that
does not), or a shared library when no TU defines ``main``. Libraries: the
``link_libraries`` setting plus those each target's own sources include (hipRAND
for ``hiprand/hiprand.h`` ...), so a plain C target never gets hipBLAS because
another file used it. The linker is the toolchain's ``clang++ --hip-link``, called
directly with paths the pipeline derived (no shell). Failures are parsed into
``LinkProblem``s. Output folders are made and old outputs removed by sandboxed commands; whether a
target was written is seen through ``worker.contained`` (the build folder is the sandbox's).
"""
from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from worker.contained import is_file_beneath
from worker.project_settings import ProjectSettings
from worker.toolchain.compile import workspace_sandbox
from worker.toolchain.demangle import sandboxed_demangler
from worker.toolchain.detect import Toolchain, detect_toolchain
from worker.toolchain.diagnostics import LinkProblem, parse_linker_output
from worker.toolchain.link_owners import locate_definitions
from worker.toolchain.rocm_libraries import library_for_include
from worker.toolchain.sandbox import Sandbox, SandboxLimits, SandboxUnavailable
from worker.toolchain.sources import BuildUnit, SourceTree, scan_tree
from worker.toolchain.work import WorkError, make_dirs, remove

TargetKind = Literal["executable", "shared"]


@dataclass
class LinkTarget:
    name: str
    kind: TargetKind
    output_path: str
    units: list[str]  # tree-relative TUs whose objects went in
    libraries: list[str] = field(default_factory=list)  # "-l" names this target links
    status: Literal["passed", "failed", "timeout"] = "failed"
    duration_s: float = 0.0
    command: list[str] = field(default_factory=list)
    problems: list[LinkProblem] = field(default_factory=list)
    output: str = ""


@dataclass
class LinkReport:
    targets: list[LinkTarget]
    libraries: list[str]  # "-l" names used by any target
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
    units: Sequence[BuildUnit] = (),
    sandbox: Sandbox | None = None,
) -> LinkReport:
    """Link ``objects`` (tree-relative TU -> object file) into ``build_dir/bin`` or ``build_dir/lib``.

    With ``units`` (the targets of the project's build files) each executable or library target is linked
    from its own sources (and the library targets it depends on), with its own ``-l`` libraries.
    ``sandbox`` holds ``build_dir`` and the objects in its workspace (a run's: ``work.run_sandbox``);
    without one, a sandbox with ``build_dir`` as its workspace."""
    toolchain = toolchain or detect_toolchain(settings.toolchain)
    tree = scan_tree(hip_tree, settings.exclude_globs)
    given = [lib.removeprefix("-l") for lib in settings.link_libraries]
    report = LinkReport([], [], [])
    if not toolchain.available:
        report.error = toolchain.error or "the toolchain root has no hipcc"
        return report
    planned = targets_from_units(units, objects, build_dir) if units and settings.link_target == "auto" else None
    targets = planned or plan_targets(objects, hip_tree, build_dir, settings.link_target, name)
    if isinstance(targets, str):
        report.error = targets
        return report
    if sandbox is None:
        build_dir.mkdir(parents=True, exist_ok=True)  # a folder of the caller's that no sandbox used yet
        sandbox = workspace_sandbox(toolchain, hip_tree, build_dir)
    try:
        outputs = [sandbox.inside(target.output_path) for target in targets]
        for path in objects.values():
            sandbox.inside(path)
        remove(sandbox, *outputs)  # a redelivered link starts clean
        make_dirs(sandbox, *(str(Path(output).parent) for output in outputs))
    except (ValueError, WorkError, SandboxUnavailable) as exc:
        report.error = str(exc) if not isinstance(exc, ValueError) else "the objects are not in the build folder"
        return report
    for target in targets:
        inferred = libraries_for_units(tree, target.units)
        target.libraries = list(dict.fromkeys([*given, *target.libraries, *inferred]))
        report.inferred_libraries = list(dict.fromkeys([*report.inferred_libraries, *inferred]))
        _link_one(target, objects, sandbox, settings, toolchain)
        locate_definitions(target.problems, hip_tree)
    report.libraries = list(dict.fromkeys(lib for target in targets for lib in target.libraries))
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


def targets_from_units(units: Sequence[BuildUnit], objects: dict[str, Path], build_dir: Path) -> list[LinkTarget]:
    """One link target per executable or library of the build files whose sources all compiled here."""
    by_name = {unit.name: unit for unit in units}
    targets: list[LinkTarget] = []
    for unit in units:
        if unit.kind == "code-object":
            continue  # loaded at run time (hipModuleLoad), never linked
        members = [s for s in unit.sources if s in objects]
        for dependency in unit.depends:
            if dependency in by_name and by_name[dependency].kind == "library":
                members += [s for s in by_name[dependency].sources if s in objects and s not in members]
        if not members:
            continue
        if unit.kind == "executable":
            targets.append(LinkTarget(unit.name, "executable", str(build_dir / "bin" / unit.name), members,
                                      list(unit.link_libraries)))
        else:
            file = f"lib{unit.name.removeprefix('lib')}.so"
            targets.append(LinkTarget(file, "shared", str(build_dir / "lib" / file), members,
                                      list(unit.link_libraries)))
    return targets


def inferred_libraries(hip_tree: Path, exclude_globs: tuple[str, ...] = ()) -> list[str]:
    """``-l`` names for the ROCm libraries whose headers any translated source includes."""
    tree = scan_tree(hip_tree, exclude_globs)
    headers = [f for f in tree.files if f.endswith((".h", ".hpp", ".cuh", ".hh"))]
    return libraries_for_files(tree, [*tree.translation_units, *headers])


def libraries_for_units(tree: SourceTree, units: list[str]) -> list[str]:
    """``-l`` names for the ROCm libraries that ``units`` include, directly or through the tree's headers."""
    files = list(units)
    for unit in units:
        if unit in tree.files:
            files += tree.include_closure(unit)[0]
    return libraries_for_files(tree, files)


def libraries_for_files(tree: SourceTree, files: list[str]) -> list[str]:
    found: dict[str, None] = {}
    for relative in dict.fromkeys(files):
        for _kind, include in tree.includes(relative):
            library = library_for_include(include)
            if library is not None and library.library != "amdhip64":
                found[library.library] = None
    return list(found)


def _link_one(
    target: LinkTarget, objects: dict[str, Path], sandbox: Sandbox, settings: ProjectSettings, toolchain: Toolchain,
) -> None:
    output = Path(target.output_path)
    command = [toolchain.clang, "--hip-link", *(f"--offload-arch={arch}" for arch in settings.offload_archs)]
    if target.kind == "shared":
        command += ["-shared", "-fPIC"]
    command += [sandbox.inside(objects[unit]) for unit in target.units]
    command += ["-o", sandbox.inside(output), *(f"-l{lib}" for lib in target.libraries)]
    target.command = command
    try:
        done = sandbox.run(command, sandbox.inside(output.parent),
                           SandboxLimits(timeout_s=settings.compile_timeout_s, processes=256))
    except SandboxUnavailable as exc:
        target.output = f"migrator: {exc}\n"
        return
    target.duration_s = done.process.duration_s
    target.output = done.process.output + "".join(f"migrator: {v}\n" for v in done.violations)
    timed_out = done.process.timed_out
    written = is_file_beneath(sandbox.workspace, sandbox.inside(output).removeprefix("/workspace/"))
    target.status = "timeout" if timed_out else ("passed" if done.ok and written else "failed")
    target.problems = parse_linker_output(done.process.output, sandboxed_demangler(sandbox))
    by_object = {sandbox.inside(path): unit for unit, path in objects.items()}
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

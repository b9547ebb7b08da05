"""Checks made from CMake's model of a converted project, before and after its build.

Before: every CUDA source of every target is compiled as HIP (``unbuilt_cuda_sources``): the sources the
model lists with a ``.cu``/``.hip`` name, and the ``.cu`` files of the folders a target takes through
``aux_source_directory`` (which lists files by the enabled languages' extensions, so a model of the
converted build may not name them at all); every HIP compile names each of the run's offload targets
(``missing_offload_archs``). After: what the model says a build leaves behind (``expected_outputs``),
the GPU targets found in each output (``offload_archs_in``), and why nothing was built when a
configure made no target (``skip_reasons``).
"""
from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass
from pathlib import Path

from worker.buildmodel.cmake_model import CMakeModel, Target
from worker.scanning.cmake_sources import commands

CUDA_SUFFIXES = (".cu", ".hip")
_TARGET_COMMANDS = {"add_executable", "add_library", "target_sources"}
_BUNDLE = re.compile(r"(?:hipv4|hip|openmp)-amdgcn-amd-amdhsa-[\w.]*-(gfx\w+(?::[\w+-]+)*)")
_SKIP_LINE = re.compile(r"could not find|not found|will not be built|skipp|disabl|not building|requires|missing",
                        re.IGNORECASE)
RULE_LANGUAGE = "cmake.cu-source-language"
RULE_AUX = "cmake.aux-source-directory-cuda"


@dataclass(frozen=True)
class SourceProblem:
    target: str
    path: str
    rule: str  # the conversion rule that should have made it a HIP source
    detail: str

    @property
    def message(self) -> str:
        return f"{self.path} (target {self.target}) is CUDA but the converted build {self.detail} [{self.rule}]"


def unbuilt_cuda_sources(model: CMakeModel, tree: Path) -> list[SourceProblem]:
    """CUDA sources of the model's targets that the converted build does not compile as HIP."""
    problems = []
    for target in model.built_targets:
        languages = {source.path: source.language for source in target.sources}
        collected = aux_cuda_sources(tree, target)
        for path in sorted({s.path for s in target.sources if s.path.endswith(CUDA_SUFFIXES)}):
            if languages[path] != "HIP":
                how = f"compiles it as {languages[path]}" if languages[path] else "does not compile it"
                problems.append(SourceProblem(target.name, path, RULE_AUX if path in collected else RULE_LANGUAGE, how))
        problems += [SourceProblem(target.name, path, RULE_AUX, "leaves it out of the target")
                     for path in collected if path not in languages]
    return problems


def aux_cuda_sources(tree: Path, target: Target) -> list[str]:
    """``.cu`` files of the folders the target's CMakeLists.txt collects with ``aux_source_directory``
    into a variable that the target lists."""
    listing = tree / target.folder / "CMakeLists.txt"
    if not listing.is_file() or not listing.resolve().is_relative_to(tree.resolve()):
        return []
    found = commands(listing.read_text(errors="replace").splitlines())
    used = " ".join(" ".join(c.arguments[1:]) for c in found
                    if c.name in _TARGET_COMMANDS and c.arguments and c.arguments[0] == target.name)
    sources: list[str] = []
    for command in found:
        if command.name != "aux_source_directory" or len(command.arguments) < 2:
            continue
        folder, variable = command.arguments[0], command.arguments[1]
        for name in ("${CMAKE_CURRENT_SOURCE_DIR}", "${CMAKE_CURRENT_LIST_DIR}"):
            folder = folder.replace(name, ".", 1) if folder.startswith(name) else folder
        if f"${{{variable}}}" not in used or "$" in folder:
            continue
        base = posixpath.normpath(posixpath.join(target.folder, folder))
        directory = tree / base
        if directory.is_dir() and directory.resolve().is_relative_to(tree.resolve()):
            sources += sorted(posixpath.join(base, p.name) for p in directory.iterdir() if p.suffix == ".cu" and p.is_file())
    return sources


def missing_offload_archs(model: CMakeModel, archs: list[str]) -> dict[str, list[str]]:
    """Target -> the run's offload targets its HIP compiles do not name."""
    missing = {}
    for target in model.built_targets:
        flags = target.compile_flags.get("HIP")
        if flags is None:
            continue
        named = set(_archs_in_flags(flags))
        absent = [arch for arch in archs if arch not in named]
        if absent:
            missing[target.name] = absent
    return missing


def _archs_in_flags(fragments: list[str]) -> list[str]:
    found = []
    for fragment in fragments:
        for word in fragment.split():
            if word.startswith("--offload-arch="):
                found += word.split("=", 1)[1].split(",")
    return found


def expected_outputs(model: CMakeModel, tree: Path | None = None) -> list[tuple[Target, str]]:
    """(target, artifact) for each file a build of ``all`` leaves, relative to the build folder (targets
    excluded from ``all`` in the build files of ``tree`` are not built by it). Object libraries name their
    objects; they are checked like the rest."""
    excluded = excluded_from_all(tree, model) if tree is not None else set()
    return [(target, artifact) for target in model.built_targets if target.name not in excluded
            for artifact in target.artifacts]


def excluded_from_all(tree: Path, model: CMakeModel) -> set[str]:
    """Targets a plain build does not make: declared ``EXCLUDE_FROM_ALL``, given that property, or in a
    folder added with ``add_subdirectory(… EXCLUDE_FROM_ALL)`` (the File API does not say)."""
    folders: list[str] = []
    named: set[str] = set()
    for folder in sorted({t.folder for t in model.targets} | {""}):
        listing = tree / folder / "CMakeLists.txt"
        if not listing.is_file() or not listing.resolve().is_relative_to(tree.resolve()):
            continue
        for command in commands(listing.read_text(errors="replace").splitlines()):
            words = [a.upper() for a in command.arguments]
            if "EXCLUDE_FROM_ALL" not in words or not command.arguments:
                continue
            if command.name == "add_subdirectory":
                folders.append(posixpath.normpath(posixpath.join(folder, command.arguments[0])))
            elif command.name in ("add_executable", "add_library"):
                named.add(command.arguments[0])
            elif command.name in ("set_target_properties", "set_property"):
                at = words.index("EXCLUDE_FROM_ALL")
                if at + 1 < len(words) and words[at + 1] in ("ON", "TRUE", "1", "YES"):
                    named.update(a for a in command.arguments[:at] if a.upper() not in ("TARGET", "PROPERTIES", "PROPERTY"))
    return named | {t.name for t in model.targets
                    if any(t.folder == f or t.folder.startswith(f + "/") for f in folders)}


def needs_device_code(target: Target, artifact: str) -> bool:
    """Outputs that carry the target's own GPU code: those of targets with HIP sources (an import
    library or a debug file next to them does not)."""
    return "HIP" in target.languages and not artifact.endswith((".lib", ".pdb", ".exp"))


def offload_archs_in(objdump_output: str) -> list[str]:
    """The GPU targets of the offload bundles ``llvm-objdump --offloading`` lists."""
    return sorted({m.group(1) for m in _BUNDLE.finditer(objdump_output)})


def skip_reasons(configure_output: str, limit: int = 4) -> list[str]:
    """The configure's own status lines that say why something was left out (a package not found, a
    target skipped): shown with "nothing built"; the verdict itself comes from the model and the outputs."""
    lines = []
    for raw in configure_output.splitlines():
        line = raw.strip().removeprefix("-- ").strip()
        if line and _SKIP_LINE.search(line) and line not in lines and not line.startswith("Check for working"):
            lines.append(line)
    return lines[:limit]


def c_dialects(model: CMakeModel) -> list[str]:
    """The C dialects the model's C compiles use: per target the last ``-std=`` (the one in effect)."""
    found: set[str] = set()
    for target in model.built_targets:
        words = [word for fragment in target.compile_flags.get("C", []) for word in fragment.split()]
        named = [word.split("=", 1)[1] for word in words if word.startswith("-std=")]
        if named:
            found.add(named[-1])
    return sorted(found)

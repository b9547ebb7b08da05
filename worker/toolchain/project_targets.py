"""Per-target results of a project's own build (CMake or Make): each output by GPU target, each failing
translation unit by GPU target.

Outputs: the device code each output holds is what the build's own checks already read in the sandbox
(``cmake_build.inspect_outputs``: ``llvm-objdump --offloading`` on every output CMake's model names;
``make_build``: the offload bundles of every file make produced); here they become one row per output
with, per offload target of the run, whether its code is there.

Translation units: the compiles the build ran, with the build's own commands — CMake's
``compile_commands.json`` (``CMAKE_EXPORT_COMPILE_COMMANDS``), make's dry run (``make -pn``, read before
the build). A compile whose output the build did not leave failed; such a unit (at most
``MAX_PROBED_UNITS`` per build) is compiled again in the sandbox once per target, with the same command,
in the same folder and environment, for that target alone (``targets.single_target``; hipcc's
``HCC_AMDGPU_TARGET`` too) and its object discarded, so the matrix says which targets fail and with
what first error. A build that passed compiled every unit for every target: nothing is compiled again.
"""
from __future__ import annotations

import functools
import json
import posixpath
import shlex
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from worker.contained import read_text_beneath
from worker.payloads import ProjectOutputData, ProjectTargetsData, ProjectUnitData
from worker.toolchain.diagnostics import Diagnostic, parse_compiler_output
from worker.toolchain.linemap import TreeLineMap
from worker.toolchain.make_db import MakeDryRun
from worker.toolchain.sandbox import MOUNT, Sandbox, SandboxLimits, SandboxUnavailable
from worker.toolchain.stage_data import target_data
from worker.toolchain.targets import (
    MAX_PROBED_UNITS,
    ProbeBudget,
    ProbeOutcome,
    TargetResult,
    TargetStatus,
    probe_targets,
    project_place,
    single_target,
    target_archs,
    uniform,
)
from worker.toolchain.work import HIP_COPY

COMPILE_COMMANDS = "compile_commands.json"
DEVICE_SUFFIXES = (".cu", ".hip")
SOURCE_SUFFIXES = (".cu", ".hip", ".cpp", ".cc", ".cxx", ".c++", ".c")
MAX_UNITS = 500  # units kept in the stage data
_COMPILERS = ("hipcc", "hipcc.pl", "hipcc.bin", "clang++", "clang", "amdclang++", "amdclang")
_WITH_VALUE = {"-o", "-I", "-isystem", "-iquote", "-include", "-imacros", "-x", "-MF", "-MT", "-MQ", "-D", "-U",
               "-L", "-l", "-Xlinker", "-Xcompiler", "-Xclang", "-Xarch_device", "-Xarch_host", "--offload-arch",
               "-arch", "-target", "--target", "-isysroot", "--sysroot"}
_SHELL = {"&&", "||", ";", "|", ">", ">>", "<", "2>", "&"}
_LIMIT_JSON = 64 * 1024 * 1024


@dataclass(frozen=True)
class BuildCompile:
    """One compiler command the build ran, as it ran it."""

    argv: tuple[str, ...]
    cwd: str  # inside the sandbox
    sources: tuple[str, ...]  # as the command names them
    output: str  # inside the sandbox ("" when the command names none and compiles several sources)

    @property
    def device(self) -> bool:
        """Compiles device code: names offload targets, or is hipcc given a CUDA/HIP source."""
        return bool(target_archs(self.argv)) or (PurePosixPath(self.argv[0]).name.startswith("hipcc")
                                                 and any(s.endswith(DEVICE_SUFFIXES) for s in self.sources))


@dataclass
class ProjectTargets:
    archs: list[str]
    commands_from: str  # compile_commands.json, make's dry run
    units: list[tuple[str, str, tuple[TargetResult, ...]]] = field(default_factory=list)  # source, status, targets
    outputs: list[tuple[str, str, list[str]]] = field(default_factory=list)  # path, owner, targets whose code it holds

    def failed_targets(self) -> list[str]:
        failing = {t.arch for _, _, targets in self.units for t in targets if t.status not in ("passed", "unchecked")}
        failing |= {arch for _, _, held in self.outputs for arch in self.archs if arch not in held}
        return [arch for arch in self.archs if arch in failing]

    def to_data(self, line_map: TreeLineMap) -> ProjectTargetsData:
        units = [ProjectUnitData(path=path, original_path=line_map.original_path(path), status=status,
                                 targets=[target_data(t, line_map) for t in targets])
                 for path, status, targets in self.units[:MAX_UNITS]]
        outputs = [ProjectOutputData(path=path, owner=owner, targets=held,
                                     missing=[arch for arch in self.archs if arch not in held])
                   for path, owner, held in self.outputs[:MAX_UNITS]]
        return ProjectTargetsData(commands_from=self.commands_from, units=units, units_total=len(self.units),
                                  outputs=outputs, failed_targets=self.failed_targets())


def parse_compile(words: Sequence[str], cwd: str) -> BuildCompile | None:
    """A compiler command (``cd sub && hipcc ...`` included); None for anything else or any other shell."""
    words = list(words)
    if len(words) > 3 and words[0] == "cd" and words[2] == "&&":
        cwd, words = posixpath.normpath(posixpath.join(cwd, words[1])), words[3:]
    if not words or PurePosixPath(words[0]).name not in _COMPILERS or any(w in _SHELL for w in words):
        return None
    sources, output, skip = [], "", False
    for index, word in enumerate(words[1:], start=1):
        if skip:
            skip = False
            continue
        if word in _WITH_VALUE:
            skip = True
            output = words[index + 1] if word == "-o" and index + 1 < len(words) else output
        elif not word.startswith("-") and word.lower().endswith(SOURCE_SUFFIXES):
            sources.append(word)
    if not sources:
        return None
    if not output and "-c" in words and len(sources) == 1:
        output = PurePosixPath(sources[0]).stem + ".o"
    inside = posixpath.normpath(posixpath.join(cwd, output)) if output else ""
    return BuildCompile(tuple(words), cwd, tuple(sources), inside)


def cmake_compiles(workspace: Path, build_rel: str) -> list[BuildCompile]:
    """The compiles CMake's build ran, from its ``compile_commands.json`` (read beneath the workspace)."""
    try:
        entries = json.loads(read_text_beneath(workspace, f"{build_rel}/{COMPILE_COMMANDS}", limit=_LIMIT_JSON))
    except (OSError, ValueError):
        return []
    found = []
    for entry in entries if isinstance(entries, list) else []:
        if not isinstance(entry, Mapping):
            continue
        arguments = entry.get("arguments")
        try:
            words = [str(w) for w in arguments] if isinstance(arguments, list) else shlex.split(str(entry.get("command", "")))
        except ValueError:
            continue
        if (compile_ := parse_compile(words, str(entry.get("directory", MOUNT)))) is not None:
            found.append(compile_)
    return found


def make_compiles(dry_run: MakeDryRun) -> list[BuildCompile]:
    """The compiles make's dry run printed, each in the folder make would run it in."""
    found = []
    for command in dry_run.commands:
        try:
            words = shlex.split(command.command)
        except ValueError:
            continue
        if command.folder and (compile_ := parse_compile(words, command.folder)) is not None:
            found.append(compile_)
    return found


def probe_argv(compile_: BuildCompile, source: str, arch: str) -> list[str]:
    """``compile_`` for ``source`` alone and ``arch`` alone, compile only, object discarded."""
    words, kept, skip = list(compile_.argv), [], False
    for index, word in enumerate(words):
        if skip:
            skip = False
            continue
        if word == "-o":
            skip = True
            continue
        if index and word in compile_.sources and word != source:
            continue
        kept.append(word)
    kept = single_target(kept, arch) if target_archs(kept) else [kept[0], f"--offload-arch={arch}", *kept[1:]]
    return [*kept, *([] if "-c" in kept else ["-c"]), "-o", "/dev/null"]


def tree_relative(path: str, cwd: str) -> str:
    """A path as a compile in ``cwd`` printed it, relative to the build's copy of the tree where it is in it."""
    full = PurePosixPath(posixpath.normpath(posixpath.join(cwd, path)))
    return full.relative_to(HIP_COPY).as_posix() if full.is_relative_to(HIP_COPY) else path


def _first_error(diagnostics: Sequence[Diagnostic], cwd: str) -> tuple[str, str, int]:
    first = next((d for d in diagnostics if d.is_error), None)
    if first is None:
        return "", "", 0
    notes = []
    for note in first.notes:
        place, colon, rest = note.partition(":")
        notes.append(f"{tree_relative(place, cwd)}{colon}{rest}" if colon else note)
    return (first.message, *project_place(tree_relative(first.file, cwd) if first.file else "", first.line, notes))


class TargetProbe:
    """Compiles failing units again per target, in ``sandbox``, with ``env_for(arch)``, until ``deadline``."""

    def __init__(self, sandbox: Sandbox, env_for: Callable[[str], Mapping[str, str]], deadline: float,
                 memory_mb: int, budget: ProbeBudget | None = None) -> None:
        self.sandbox, self.env_for, self.deadline, self.memory_mb = sandbox, env_for, deadline, memory_mb
        self.budget = budget or ProbeBudget(MAX_PROBED_UNITS)

    def outcome(self, compile_: BuildCompile, source: str, arch: str) -> ProbeOutcome:
        left = self.deadline - time.monotonic()
        if left < 5:
            return ProbeOutcome("unchecked")
        try:
            done = self.sandbox.run(probe_argv(compile_, source, arch), compile_.cwd,
                                    SandboxLimits(timeout_s=min(left, 600), memory_mb=self.memory_mb),
                                    env=self.env_for(arch))
        except SandboxUnavailable:
            return ProbeOutcome("unchecked")
        process = done.process
        status: TargetStatus = ("timeout" if process.timed_out else "crashed" if process.crashed else
                                "passed" if done.ok else "failed")
        first = _first_error(parse_compiler_output(process.output), compile_.cwd) if status == "failed" else ("", "", 0)
        return ProbeOutcome(status, *first, duration_s=process.duration_s)


def unit_targets(compiles: Sequence[BuildCompile], made: Callable[[list[str]], set[str]], archs: Sequence[str],
                 probe: TargetProbe, build_ok: bool) -> list[tuple[str, str, tuple[TargetResult, ...]]]:
    """Per device-code unit of ``compiles``: passed on every target when its output was made (``made``:
    which of the given sandbox paths exist), else each target compiled alone."""
    device = [c for c in compiles if c.device]
    present = made([c.output for c in device if c.output]) if not build_ok else set()
    units = []
    for compile_ in device:
        for source in compile_.sources:
            path = tree_relative(source, compile_.cwd)
            if build_ok or (compile_.output and compile_.output in present):
                units.append((path, "passed", uniform(archs, "passed")))
                continue
            if not probe.budget.take():
                units.append((path, "failed", uniform(archs, "unchecked")))
                continue
            results = probe_targets(archs, functools.partial(probe.outcome, compile_, source))
            failing = any(t.status not in ("passed", "unchecked") for t in results)
            units.append((path, "failed" if failing else "passed", results))
    return units


def existing_in_sandbox(sandbox: Sandbox, limits: SandboxLimits) -> Callable[[list[str]], set[str]]:
    """Which sandbox paths are regular files, tested in the sandbox (the root side never looks by path)."""
    def made(paths: list[str]) -> set[str]:
        if not paths:
            return set()
        check = ["sh", "-c", 'for f; do [ -f "$f" ] && printf "%s\\n" "$f"; done; exit 0', "sh", *paths[:2000]]
        try:
            done = sandbox.run(check, str(MOUNT), limits)
        except SandboxUnavailable:
            return set()
        return set(done.process.output.splitlines()) if done.ok else set()
    return made

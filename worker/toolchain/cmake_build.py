"""The CMake side of the project's own build: CMake's model of the converted project, and what its
build must leave behind.

Before the configure step a File API query (``.cmake/api/v1/query/codemodel-v2``) is made in the build
folder by the sandbox user; after it, the reply is read through ``worker.contained`` (never by path on
the root side) into ``worker.buildmodel.cmake_model``. From the model: every CUDA source of every target
must be compiled as HIP, and every HIP compile must name the run's offload targets, else the build's
configuration fails naming file and rule; the build step keeps going past failing files (``-k`` for
make, ``-k 0`` for ninja). After the build, each output the model names must exist, and each output of a
target with HIP sources that holds device code must hold it for every offload target (``llvm-objdump
--offloading``, in the sandbox; an output without any bundle comes from HIP sources without kernels). A build that exits 0 and leaves none of them is "nothing built", with the reasons the
configure printed.
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from worker.buildmodel.cmake_checks import (
    c_dialects,
    expected_outputs,
    missing_offload_archs,
    needs_device_code,
    offload_archs_in,
    skip_reasons,
    unbuilt_cuda_sources,
)
from worker.buildmodel.cmake_model import QUERY, REPLY, CMakeModel, ModelError, read_model
from worker.contained import is_file_beneath, load_json_beneath, walk_beneath
from worker.payloads import CMakeBuildData, JsonObject
from worker.toolchain.sandbox import Sandbox, SandboxLimits, SandboxUnavailable
from worker.toolchain.work import make_dirs, step

DEFAULT_C_STD = "gnu17"  # what the compilers these projects were written for used; GCC 16 defaults to C23
_REPLY_LIMIT = 32 * 1024 * 1024
_INSPECT_LIMITS = SandboxLimits(timeout_s=120, memory_mb=2048)


@dataclass
class BuiltOutput:
    target: str
    type: str
    path: str  # relative to the build folder
    present: bool
    offload_archs: list[str] = field(default_factory=list)  # found in it; empty for host-only outputs
    missing_archs: list[str] = field(default_factory=list)


@dataclass
class CMakeOutcome:
    model: CMakeModel | None = None
    problems: list[str] = field(default_factory=list)  # the converted configuration, before building
    outputs: list[BuiltOutput] = field(default_factory=list)
    nothing_built: str = ""  # why, when nothing was built
    c_dialects: list[str] = field(default_factory=list)

    def to_data(self) -> CMakeBuildData:
        model = self.model
        targets: list[JsonObject] = [
            {"name": t.name, "type": t.type, "folder": t.folder, "declared_at": t.declared_at,
             "languages": t.languages, "sources": len(t.sources), "artifacts": t.artifacts}
            for t in (model.targets if model else [])]
        outputs: list[JsonObject] = [
            {"target": o.target, "type": o.type, "path": o.path, "present": o.present,
             "offload_archs": o.offload_archs, "missing_archs": o.missing_archs} for o in self.outputs]
        return CMakeBuildData(cmake_version=model.cmake_version if model else "",
                              generator=model.generator if model else "", targets=targets, outputs=outputs,
                              problems=self.problems, nothing_built=self.nothing_built, c_std=self.c_dialects,
                              c_std_default=DEFAULT_C_STD)


def configure_flags(archs: list[str]) -> list[str]:
    """What every configure gets beyond the compilers: the compile commands written out (the per-target
    check compiles failing units again with them), the run's offload targets and the C dialect (first in
    CMAKE_C_FLAGS, so a project's own -std or C_STANDARD comes later and wins)."""
    joined = ";".join(archs)
    return ["--no-warn-unused-cli", "-DCMAKE_EXPORT_COMPILE_COMMANDS=ON", f"-DCMAKE_HIP_ARCHITECTURES={joined}", f"-DAMDGPU_TARGETS={joined}", f"-DGPU_TARGETS={joined}",
            f"-DCMAKE_C_FLAGS_INIT=-std={DEFAULT_C_STD}"]


def keep_going(generator: str) -> list[str]:
    """Native tool options so one build reports every failing file."""
    if generator.startswith("Ninja"):
        return ["--", "-k", "0"]
    return ["--", "-k"] if "Makefiles" in generator else []


def make_query(sandbox: Sandbox, build_inside: str) -> None:
    """The File API query, made in the build folder by the sandbox user."""
    query = PurePosixPath(build_inside) / QUERY
    make_dirs(sandbox, query.parent)
    step(sandbox, ["touch", "--", str(query)], "make the CMake File API query")


def load_model(workspace: Path, build_rel: str) -> CMakeModel:
    """The model from the newest reply index under ``workspace/build_rel`` (read beneath ``workspace``)."""
    reply = f"{build_rel}/{REPLY}"
    indexes = sorted(e.relative for e in walk_beneath(workspace, reply) if e.relative.rsplit("/", 1)[-1].startswith("index-"))
    if not indexes:
        raise ModelError("CMake wrote no File API reply (is CMake older than 3.14?)")

    def load(name: str) -> dict[str, object] | None:
        return load_json_beneath(workspace, f"{reply}/{name}", limit=_REPLY_LIMIT)

    return read_model(load, indexes[-1].rsplit("/", 1)[-1])


def check_configuration(outcome: CMakeOutcome, tree: Path, archs: list[str]) -> None:
    """Configuration problems from the model (``outcome.model``): CUDA sources not built as HIP, HIP
    compiles without the run's offload targets."""
    model = outcome.model
    if model is None:
        return
    outcome.problems += [p.message for p in unbuilt_cuda_sources(model, tree)]
    outcome.problems += [f"target {name}: its HIP compiles do not name the offload target{'s' if len(absent) > 1 else ''} "
                         f"{', '.join(absent)}" for name, absent in missing_offload_archs(model, archs).items()]
    outcome.c_dialects = c_dialects(model)


def inspect_outputs(outcome: CMakeOutcome, sandbox: Sandbox, workspace: Path, build_rel: str, objdump: str,
                    archs: list[str], configure_output: str, tree: Path) -> str:
    """Check what the build left against the model (``tree``: the converted build files); the error to
    report ("" when all is there)."""
    model = outcome.model
    if model is None:
        return ""
    expected = expected_outputs(model, tree)
    if not expected:
        outcome.nothing_built = _nothing_reason(model, configure_output)
        return f"nothing built: {outcome.nothing_built}"
    for target, artifact in expected:
        present = is_file_beneath(workspace, f"{build_rel}/{artifact}")
        output = BuiltOutput(target.name, target.type, artifact, present)
        if present and needs_device_code(target, artifact):
            output.offload_archs = _device_archs(sandbox, f"{sandbox.inside(workspace / build_rel)}/{artifact}", objdump)
            # no bundle at all: HIP sources without kernels (a host program calling HIP libraries)
            output.missing_archs = [arch for arch in archs if output.offload_archs and arch not in output.offload_archs]
        outcome.outputs.append(output)
    absent = [o for o in outcome.outputs if not o.present]
    if len(absent) == len(outcome.outputs):
        outcome.nothing_built = "the build exited 0 but left none of the " + _count(len(absent), "output") + \
                                " CMake's model names (" + ", ".join(o.path for o in absent[:4]) + ")"
        return f"nothing built: {outcome.nothing_built}"
    if absent:
        return "not built: " + ", ".join(f"{o.path} (target {o.target})" for o in absent[:8])
    wrong = [o for o in outcome.outputs if o.missing_archs]
    if wrong:
        return "no device code for " + "; ".join(f"{', '.join(o.missing_archs)} in {o.path}" for o in wrong[:8])
    return ""


def _device_archs(sandbox: Sandbox, path: str, objdump: str) -> list[str]:
    """GPU targets of the offload bundles in ``path``, listed in a scratch folder of the sandbox: the
    tool extracts each bundle it lists next to the name it is given, here a link in that folder."""
    script = 'cd "$(mktemp -d)" && ln -s "$1" output && exec "$0" --offloading output'
    try:
        done = sandbox.run(["sh", "-c", script, objdump, path], limits=_INSPECT_LIMITS)
    except SandboxUnavailable:
        return []
    return offload_archs_in(done.process.output) if done.process.ok else []


def _nothing_reason(model: CMakeModel, configure_output: str) -> str:
    skipped = [t.name for t in model.targets if t.type == "UTILITY"]
    reasons = skip_reasons(configure_output)
    only = f" (only {', '.join(skipped[:4])})" if skipped else ""
    said = f"CMake configured no target that builds code{only}"
    return said + (": " + "; ".join(reasons) if reasons else "")


def _count(number: int, noun: str) -> str:
    return f"{number} {noun}{'s' if number != 1 else ''}"


def relative_build(workspace: Path, build_dir: Path) -> str:
    return Path(os.path.relpath(os.path.abspath(build_dir), os.path.abspath(workspace))).as_posix()


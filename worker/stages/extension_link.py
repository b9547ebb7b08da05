"""The link stage of a PyTorch extension project: the extension's own build, on a runner with a ROCm PyTorch.

Inputs: the compile stage's extension data (``extensions``: each extension's name, how it is built, its
folder), the translated tree, this runner's ROCm PyTorch (``worker/runner/torch_probe.py``: the toolchain
root whose ``python3`` has a ROCm torch, with pip, setuptools and torch's CMake prefix as found there).
In the run's sandbox over that root, on a fresh copy of the translated tree at ``/workspace/hip``, each
extension is built the way its project builds it: ``pip install --no-build-isolation`` of its folder into
``/workspace/site`` (``setup.py build_ext --inplace`` where the root's Python has no pip), the script of a
JIT ``load()`` project, or CMake with torch's prefix; ``PYTORCH_ROCM_ARCH`` names the run's targets.
Output: ``runner_build`` (the runner's PyTorch, each command with its exit status and time, the shared
objects built, the errors with their original file and line); the full payload in ``records/link.json``.
Passes when every command exits 0 and the package builds produced a shared object; fails on the build's
own errors. Without a ROCm PyTorch here: skipped, "needs a ROCm PyTorch runner" (never failed).
"""
from __future__ import annotations

import json
import shlex
import time
from pathlib import Path

from worker.contained import write_record
from worker.context import StageContext, StageResult
from worker.payloads import CompileData, ExtensionBuildData, LinkData, RunnerBuildData, RunnerCommandData
from worker.runner.torch_probe import TorchProbe, probe_torch
from worker.toolchain.linemap import TreeLineMap
from worker.toolchain.log_families import parse_log
from worker.toolchain.roots import ToolchainNotFound, select_root
from worker.toolchain.sandbox import MOUNT, Sandbox, SandboxLimits, SandboxUnavailable
from worker.toolchain.work import BUILD, HIP_COPY, WorkError, copy_translated, make_dirs, open_work, run_sandbox

SITE = MOUNT / "site"  # where pip installs the built packages (the smoke command's PYTHONPATH)
FAKE_LABEL = "[fake PyTorch] "  # opens every summary of a build on a MIGRATOR_FAKE_ROCM_TORCH runner
_PACKAGE_FILES = ("setup.py", "pyproject.toml")
_OUTPUT_DIRS = (HIP_COPY, SITE, BUILD, MOUNT / ".home/.cache/torch_extensions")


def build_command(extension: ExtensionBuildData, archs: tuple[str, ...], tree: Path, found: TorchProbe,
                  hip_compiler: str = "") -> str:
    """What builds ``extension`` on this runner, as its project builds it (run by ``sh -c`` in the sandbox);
    ``hip_compiler``: the root's clang, for CMake's HIP language."""
    where = str(HIP_COPY if extension["directory"] in ("", ".") else HIP_COPY / extension["directory"])
    env = f"PYTORCH_ROCM_ARCH={shlex.quote(';'.join(archs))}"
    if extension["how"] in ("load", "load_inline"):
        script = extension["declared_in"].rsplit(":", 1)[0]
        return f"cd {HIP_COPY} && {env} python3 {shlex.quote(script)}"
    folder = tree / extension["directory"]
    if any((folder / name).is_file() for name in _PACKAGE_FILES):
        if found.pip or not (folder / "setup.py").is_file():
            return f"cd {where} && {env} python3 -m pip install --no-build-isolation --no-deps --target {SITE} -v ."
        return f"cd {where} && {env} python3 setup.py build_ext --inplace"
    build = BUILD / extension["name"]
    prefix = f" -DCMAKE_PREFIX_PATH={shlex.quote(found.cmake_prefix)}" if found.cmake_prefix else ""
    compiler = f" -DCMAKE_HIP_COMPILER={shlex.quote(hip_compiler)} -DCMAKE_HIP_PLATFORM=amd" if hip_compiler else ""
    return (f"cmake -S {where} -B {build}{prefix}{compiler} -DCMAKE_HIP_ARCHITECTURES={shlex.quote(';'.join(archs))} "
            f"&& cmake --build {build}")


def needs_pytorch_runner(compiled: CompileData, found: TorchProbe | None = None) -> StageResult:
    """Not failed, not passed: linking an extension needs libtorch for ROCm, which only a runner with a ROCm
    PyTorch has (``compile.would_run`` is what it runs there)."""
    names = ", ".join(e["name"] for e in compiled.get("extensions", [])) or "the extensions"
    why = f" (none here: {found.reason})" if found is not None and found.reason else ""
    return StageResult.skipped(
        f"not run: linking {names} needs a ROCm PyTorch runner{why} (a runner built from the "
        f"{compiled.get('runner_image') or 'rocm/pytorch'} image); the kernels were {compiled.get('checked', '')}",
        **LinkData(no_pytorch_runner=True, would_run=list(compiled.get("would_run", []))))


def run_extension_link(ctx: StageContext, compiled: CompileData) -> StageResult:
    found = probe_torch()
    if not found.available:
        return needs_pytorch_runner(compiled, found)
    try:
        root = select_root(found.root)
    except ToolchainNotFound as exc:
        return needs_pytorch_runner(compiled, TorchProbe(found.root, reason=str(exc)))
    extensions = [e for e in compiled.get("extensions", []) if e["how"] != "load_inline" or e["sources"]]
    commands = list(dict.fromkeys(build_command(e, ctx.settings.offload_archs, ctx.workspace.hip, found, root.clang)
                                  for e in extensions))
    ctx.log(f"link: building {len(extensions)} extension(s) with {found.label}"
            f"{' (fake: ' + found.reason + ')' if found.fake else ''}, in the sandbox over that root\n")
    started = time.monotonic()
    with open_work(ctx.workspace, size_mb=ctx.settings.workspace_mb, log=ctx.log) as work:
        sandbox = run_sandbox(root, ctx.workspace, work)
        try:
            copy_translated(sandbox, fresh=True)  # the build's own copy; a redelivered link starts clean
            make_dirs(sandbox, BUILD, SITE)
        except (WorkError, SandboxUnavailable) as exc:
            return StageResult.failed(f"Could not prepare the extension build: {exc}")
        ran = [_run_command(ctx, sandbox, command) for command in commands]
        outputs = _shared_objects(sandbox) if all(c["ok"] for c in ran) else []
    line_map = TreeLineMap(ctx.workspace.hip, ctx.workspace.source, _renames(ctx))
    build = RunnerBuildData(torch=found.to_dict(), commands=ran, outputs=outputs,
                            problems=_problems(ran, line_map), duration_s=round(time.monotonic() - started, 2))
    payload = LinkData(runner_build=build, fake_torch=found.fake, toolchain={"name": root.name})
    write_record(ctx.workspace.records / "link.json", json.dumps(payload, indent=1))
    return _judge(extensions, build, found, payload)


def _run_command(ctx: StageContext, sandbox: Sandbox, command: str) -> RunnerCommandData:
    ctx.log(f"$ {command}\n")
    started = time.monotonic()
    limits = SandboxLimits(timeout_s=ctx.settings.build_timeout_s, memory_mb=ctx.settings.build_memory_mb)
    done = sandbox.run(["/bin/sh", "-c", command], cwd=str(MOUNT), limits=limits, on_line=ctx.log,
                       should_stop=ctx.is_cancelled, env={"MAX_JOBS": "2", "PYTHONDONTWRITEBYTECODE": "1"})
    ctx.check_cancelled()
    for violation in done.violations:
        ctx.log(f"[sandbox] {violation}\n")
    return RunnerCommandData(command=command, exit_code=done.process.returncode, ok=done.ok,
                             duration_s=round(time.monotonic() - started, 2), violations=done.violations,
                             output_tail=done.process.output[-6000:])


def _shared_objects(sandbox: Sandbox) -> list[str]:
    """The shared objects the builds left (found by ``find`` in the sandbox), as sandbox paths."""
    argv = ["find", *(str(d) for d in _OUTPUT_DIRS), "-name", "*.so", "-type", "f", "-size", "+0"]
    done = sandbox.run(argv, limits=SandboxLimits(timeout_s=60, memory_mb=1024))
    return sorted({line.strip() for line in done.process.output.splitlines() if line.startswith(str(MOUNT) + "/")})


def _renames(ctx: StageContext) -> dict[str, str]:
    renames = ctx.hipify_data().get("renames") or {}
    return {str(v): str(k) for k, v in renames.items()} if isinstance(renames, dict) else {}


def _problems(ran: list[RunnerCommandData], line_map: TreeLineMap) -> list[dict[str, object]]:
    """The errors of the failed commands, each at its original file and line where it has one."""
    found: list[dict[str, object]] = []
    prefix = f"{HIP_COPY}/"
    for command in (c for c in ran if not c["ok"]):
        for problem in parse_log(command["output_tail"]):
            relative = problem.file[len(prefix):] if problem.file.startswith(prefix) else problem.file
            original, line = line_map.map(relative, problem.line) if relative else ("", 0)
            found.append({"family": problem.family, "kind": problem.kind, "file": relative, "line": problem.line,
                          "original_file": original, "original_line": line, "message": problem.message})
    return found[:50]


def _judge(extensions: list[ExtensionBuildData], build: RunnerBuildData, found: TorchProbe,
           payload: LinkData) -> StageResult:
    label = FAKE_LABEL if found.fake else ""
    names = ", ".join(e["name"] for e in extensions) or "the extensions"
    failed = [c for c in build["commands"] if not c["ok"]]
    if failed:
        first = build["problems"][0] if build["problems"] else None
        where = (f" at {first['original_file'] or first['file']}:{first['original_line'] or first['line']}"
                 if first and (first["original_file"] or first["file"]) else "")
        why = f": {first['message']}{where}" if first else f" (exit status {failed[0]['exit_code']})"
        return StageResult.failed(f"{label}The build of {names} failed on the ROCm PyTorch runner{why}"[:400],
                                  **payload)
    packaged = any(e["how"] not in ("load", "load_inline") for e in extensions)
    if packaged and not build["outputs"]:
        return StageResult.failed(f"{label}The build of {names} exited 0 but produced no shared object.", **payload)
    return StageResult.passed(f"{label}Built {names} with {found.label}: {len(build['outputs'])} shared "
                              f"object(s) in {build['duration_s']:.1f} s.", **payload)

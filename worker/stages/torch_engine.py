"""The hipify stage's engine for PyTorch extensions: PyTorch's own hipify over the extension's
sources (the whole tree for an extension, the kernel directories of a mixed repository).

Used when the project kind calls for it and the engine setting is the default (``builtin``). It runs in
the sandbox over the toolchain root (``translator/torch_hipify.py`` says how): the engine copies the
source, read-only at ``/workspace/source``, into its own writable folder and rewrites the copy there;
the translated tree is then the source's copy with every file the engine produced taken in through
``worker/stages/engine_tree.py``. Without PyTorch in the worker's environment, or without a Python the
hipify code runs on in the toolchain root, it says so and the builtin engine runs instead; a sandbox
that cannot start or an engine that fails is a failed stage (``TorchHipifyError``).
"""
from __future__ import annotations

import json
import os
import re
from dataclasses import asdict, dataclass, field
from pathlib import Path

from translator.account import FileAccount, TreeAccount
from translator.globs import is_excluded
from translator.torch_hipify import (
    ENGINE_NAME,
    INSTALL_HINT,
    MIN_PYTHON,
    SCRIPT,
    SOURCE_SUFFIXES,
    HipifiedFile,
    TorchHipifyError,
    hipify_package,
    parse_answer,
)
from worker.contained import ContainedFileError, clean_relative, read_text_beneath
from worker.context import StageContext
from worker.scanning.extension_units import core_and_bindings, extension_units, torch_cmake_dirs
from worker.scanning.project_kind import ProjectKind
from worker.sources.treelinks import first_link_in_path
from worker.stages.applicability import project_kind
from worker.stages.engine_tree import copy_changed, copy_source, engine_sandbox
from worker.toolchain.detect import detect_toolchain
from worker.toolchain.roots import ToolchainRoot, select_root
from worker.toolchain.sandbox import MOUNT, TOOLS, Sandbox, SandboxLimits

EXTENSION_KINDS = frozenset({"pytorch-extension", "mixed"})
TOOL = "torch-hipify"  # under TOOLS: the ``hipify`` package and the driver script beside it
LIMITS = SandboxLimits(timeout_s=600, memory_mb=4096, processes=256)
ANSWER_LIMIT = 64 * 1024 * 1024
_PYTHON_NAME = re.compile(r"python(\d+)\.(\d+)$")


@dataclass(frozen=True)
class Job:
    directory: str  # relative to the source, "." for the whole tree
    files: list[str]  # relative to the source
    include_dirs: list[str] = field(default_factory=list)  # the extensions' include directories (as BuildExtension
    # gives hipify: an include of a header found there is rewritten to its hipified name)


def _extension_dirs(ctx: StageContext) -> list[str]:
    payload = ctx.scan_data().get("project_kind")
    dirs = payload.get("kernel_dirs") if isinstance(payload, dict) else None
    found = [d for d in dirs if isinstance(d, str)] if isinstance(dirs, list) and dirs else ["."]
    return [d for d in found if _clean_dir(ctx.workspace.source, d)]


def _include_dirs(ctx: StageContext) -> list[str]:
    """The include directories the extensions' builds declare (tree-relative, real folders of the source)."""
    payload = ctx.scan_data().get("project_kind")
    if not isinstance(payload, dict):
        return []
    kind = ProjectKind.from_dict(payload)
    units = extension_units(ctx.workspace.source, tuple(ctx.settings.exclude_globs), torch_cmake_dirs(kind))
    found = dict.fromkeys(d for unit in units for d in unit.include_dirs)
    return [d for d in found if d != "." and _clean_dir(ctx.workspace.source, d)]


def _clean_dir(source: Path, directory: str) -> bool:
    """A real folder of the source (no ``..``, no link on the way): the scan named it from the tree."""
    if directory in (".", "./"):
        return True
    try:
        name = clean_relative(directory)
    except ContainedFileError:
        return False
    return (source / name).is_dir() and not first_link_in_path(source, f"{name}/_")


def _sources(root: Path, directory: str, globs: tuple[str, ...]) -> list[str]:
    base = root if directory == "." else root / directory
    found = []
    for path in sorted(base.rglob("*")):
        rel = path.relative_to(root).as_posix()
        if path.is_file() and not path.is_symlink() and path.suffix.lower() in SOURCE_SUFFIXES \
                and not is_excluded(rel, globs):
            found.append(rel)
    return found


def wants_torch_engine(ctx: StageContext) -> bool:
    return ctx.settings.hipify_engine == "builtin" and project_kind(ctx) in EXTENSION_KINDS


def root_python_problem(root: ToolchainRoot) -> str:
    """Empty when the root's ``python3`` can run PyTorch's hipify code; else what is wrong."""
    python = root.host_path("/usr/bin/python3")
    if not python.is_file():
        return f"the toolchain root {root.name} has no python3"
    target = os.readlink(python) if python.is_symlink() else python.name
    found = _PYTHON_NAME.search(target)
    if found and (int(found.group(1)), int(found.group(2))) < MIN_PYTHON:
        return (f"the toolchain root {root.name} has Python {found.group(1)}.{found.group(2)}; PyTorch's hipify "
                f"needs {'.'.join(map(str, MIN_PYTHON))} or newer")
    return ""


def _unavailable(ctx: StageContext) -> tuple[ToolchainRoot | None, Path | None, str]:
    package = hipify_package()
    if package is None:
        return None, None, f"PyTorch is not installed; {INSTALL_HINT}"
    toolchain = detect_toolchain(ctx.settings.toolchain)
    if not toolchain.available:
        return None, None, toolchain.error or "no toolchain root"
    root = select_root(toolchain.name)
    return root, package, root_python_problem(root)


def torch_engine_problem(ctx: StageContext) -> str:
    """Why PyTorch's hipify cannot translate this run's extensions here ('' when it can)."""
    return _unavailable(ctx)[2]


def bindings_dirs(ctx: StageContext) -> list[str] | None:
    """The extensions' folders of a project built whole (a C/C++ core under its own build, bindings beside
    it): the core goes to the builtin engine and only these to PyTorch's hipify. None otherwise."""
    payload = ctx.scan_data().get("project_kind")
    if not isinstance(payload, dict):
        return None
    kind = ProjectKind.from_dict(payload)
    units = extension_units(ctx.workspace.source, tuple(ctx.settings.exclude_globs), torch_cmake_dirs(kind))
    found = core_and_bindings(ctx.workspace.source, [u for u in units if u.sources])
    return [d for d in found if _clean_dir(ctx.workspace.source, d)] if found else None


def run_torch_engine(ctx: StageContext, dirs: list[str] | None = None,
                     over: TreeAccount | None = None) -> TreeAccount | None:
    """The account of PyTorch's hipify, or None (logged) when it cannot run here. ``dirs``: only these
    folders; ``over``: the account of the tree already translated by another engine (the core's), whose
    entries for those folders PyTorch's hipify replaces.

    Raises ``TorchHipifyError`` when the engine fails and ``SandboxUnavailable`` when no sandbox can start."""
    root, package, reason = _unavailable(ctx)
    if reason or root is None or package is None:
        ctx.log(f"hipify: {ENGINE_NAME} not used: {reason}; falling back to the builtin engine\n")
        return None
    source, hip = ctx.workspace.source, ctx.workspace.hip
    globs = tuple(ctx.settings.exclude_globs)
    includes = _include_dirs(ctx)
    jobs = [Job(d, _sources(source, d, globs), [i for i in includes if d == "." or i == d or i.startswith(d + "/")])
            for d in (dirs or _extension_dirs(ctx))]
    for job in jobs:
        ctx.log(f"hipify: {ENGINE_NAME} over {job.directory}/ ({len(job.files)} sources), in the sandbox\n")
    with engine_sandbox(ctx, root, {f"{TOOL}/hipify": package, f"{TOOL}/torch_hipify.py": SCRIPT}) as (sandbox, output):
        answer = _hipify_in_sandbox(ctx, sandbox, output, jobs)
        if over is None:
            copy_source(source, hip)
        copy_changed(output / "tree", source, hip, ctx.log)
    account = TreeAccount(source=str(source), destination=str(hip), engine=ENGINE_NAME)
    if over is not None:
        inside = tuple(f"{d.rstrip('/')}/" for d in dirs or [])
        account.engine = f"{over.engine} (core), {ENGINE_NAME} ({', '.join(dirs or [])})"
        account.files = [f for f in over.files if not f.path.startswith(inside)]
        account.renames = {k: v for k, v in over.renames.items() if not k.startswith(inside)}
        account.warnings, account.port_header = list(over.warnings), over.port_header
    for job, items in zip(jobs, answer):
        _account(ctx, account, job.directory, items)
    ctx.progress(len(jobs), len(jobs))
    return account


def _hipify_in_sandbox(ctx: StageContext, sandbox: Sandbox, output: Path, jobs: list[Job]) -> list[list[HipifiedFile]]:
    inside = sandbox.inside(output)
    request = {"source": str(MOUNT / "source"), "tree": f"{inside}/tree", "answer": f"{inside}/answer.json",
               "directories": [asdict(job) for job in jobs]}
    done = sandbox.run(["python3", "-I", "-B", str(TOOLS / TOOL / "torch_hipify.py")], inside, LIMITS,
                       should_stop=ctx.is_cancelled, stdin=json.dumps(request).encode())
    ctx.check_cancelled()
    if not done.process.ok:  # judged by exit status and limits, not by words in the output
        lines = done.process.output.strip().splitlines() or ["no output"]
        cause = "it ran past its time limit" if done.process.timed_out else lines[-1][:300]
        raise TorchHipifyError(f"{ENGINE_NAME} failed in the sandbox: {cause}")
    try:
        text = read_text_beneath(output, "answer.json", limit=ANSWER_LIMIT)
    except ContainedFileError as exc:
        raise TorchHipifyError(f"{ENGINE_NAME} left no answer: {exc.strerror}") from exc
    return parse_answer(text, len(jobs))


def _account(ctx: StageContext, account: TreeAccount, directory: str, items: list[HipifiedFile]) -> None:
    prefix = "" if directory == "." else directory.rstrip("/") + "/"
    for item in items:
        original, output = prefix + item.path, prefix + item.hipified
        entry = FileAccount(path=original, changed=item.changed, status="translated" if item.changed else "unchanged")
        if output != original:
            entry.renamed_to = output
            account.renames[original] = output
        account.files.append(entry)
        ctx.log(f"{entry.status:<10} {original}" + (f" -> {output}" if output != original else "") + "\n")

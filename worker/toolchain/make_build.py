"""A Makefile project built as make builds it: one unit per build folder, each read, built and checked.

Per folder (``/workspace/hip/<folder>``, the build's copy of the translated tree), in the run's sandbox:

1. ``make -pn -j1 -C <folder>``: make parses the converted Makefile and the fragments it includes and prints
   its data base (``make_db.py``). A Makefile the conversion left unparsable stops here, before building.
2. ``make -k -j N -C <folder>``: the build, going on after a failing file so one run reports them all.
3. The files the data base says the default goal makes, and the files the build wrote (newer than a stamp
   made before it: a ``cd sub; make`` that ``-n`` does not follow), are looked for in the sandbox: a build
   that exited 0 and made none is "nothing built". Code objects in what was built must hold the run's
   offload targets (the root's objcopy and offload bundler read them).

Every command gets ``HCC_AMDGPU_TARGET`` (hipcc's targets where a call names none: the run's offload
targets whatever the Makefile says), ``HIPCC``/``HIPFLAGS`` defaults and the C dialect wrappers first on ``PATH`` (``cdialect/``: ``gcc``
and ``cc`` add ``-std=gnu17`` to C compiles that name no standard; the toolchain's GCC defaults to C23).
"""
from __future__ import annotations

import os
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from worker.project_settings import ProjectSettings
from worker.toolchain.make_db import MakeDryRun, parse_dry_run
from worker.toolchain.sandbox import PATH, TOOLS, Sandbox, SandboxLimits, SandboxUnavailable
from worker.toolchain.version_defines import VersionDefine
from worker.toolchain.work import BUILD, HIP_COPY

C_DIALECT_TOOLS = Path(__file__).resolve().parent / "cdialect"  # bound at /mnt/migrator/cdialect
_LISTED = 40  # files named per unit in the payload


@dataclass
class MakeUnitResult:
    folder: str  # tree-relative, "." for the root
    makefiles: list[str] = field(default_factory=list)  # every makefile make read, tree-relative
    expected: list[str] = field(default_factory=list)  # files the default goal makes, tree-relative
    built: list[str] = field(default_factory=list)  # those that exist after the build
    device_targets: dict[str, list[str]] = field(default_factory=dict)  # built file -> its code objects' targets
    returncode: int | None = None
    ok: bool = False
    error: str = ""
    cause: str = ""  # make-unreadable, make-failed, nothing-built, wrong-gpu ("" when built)
    duration_s: float = 0.0
    output: str = ""
    dry_run: MakeDryRun | None = None  # what make -pn printed: the compile commands of the build

    def to_dict(self) -> dict[str, object]:
        return {"folder": self.folder, "makefiles": self.makefiles[:_LISTED], "expected": self.expected[:_LISTED],
                "built": self.built[:_LISTED], "device_targets": dict(list(self.device_targets.items())[:_LISTED]),
                "missing": [f for f in self.expected if f not in self.built][:_LISTED],
                "returncode": self.returncode, "ok": self.ok, "error": self.error, "cause": self.cause,
                "duration_s": round(self.duration_s, 3)}


def make_environment(settings: ProjectSettings, defines: Sequence[VersionDefine] = ()) -> dict[str, str]:
    """hipcc's targets for calls that name none; ``HIPCC``/``HIPFLAGS`` as defaults a Makefile's own
    assignments override (environment, not command-line, variables); the definitions the toolchain's HIP
    version needs on every hipcc call (``HIPCC_COMPILE_FLAGS_APPEND``, which hipcc adds whatever the
    Makefile passes)."""
    flags = [*(f"--offload-arch={arch}" for arch in settings.offload_archs), *(d.flag for d in defines)]
    env = {"HCC_AMDGPU_TARGET": ",".join(settings.offload_archs), "PATH": f"{TOOLS / 'cdialect'}:{PATH}",
           "HIPCC": "hipcc", "HIPFLAGS": " ".join(flags)}
    if defines:
        env["HIPCC_COMPILE_FLAGS_APPEND"] = " ".join(d.flag for d in defines)
    return env


def single_target_environment(env: Mapping[str, str], arch: str) -> dict[str, str]:
    """``env`` (``make_environment``) giving hipcc ``arch`` alone."""
    flags = [f for f in env.get("HIPFLAGS", "").split() if not f.startswith("--offload-arch=")]
    return {**env, "HCC_AMDGPU_TARGET": arch, "HIPFLAGS": " ".join([f"--offload-arch={arch}", *flags])}


def make_commands(folder: str, jobs: int) -> tuple[list[str], list[str]]:
    """The dry run that reads make's data base, and the build (``-k``: every failing file in one run)."""
    where = str(HIP_COPY / folder) if folder not in ("", ".") else str(HIP_COPY)
    return ["make", "-pn", "-j1", "-C", where], ["make", "-k", "-j", str(jobs), "-C", where]


def build_make_units(
    sandbox: Sandbox, folders: Sequence[str], settings: ProjectSettings, on_line: Callable[[str], None] | None,
    should_stop: Callable[[], bool], deadline: float, llvm_bin: str = "", defines: Sequence[VersionDefine] = (),
) -> list[MakeUnitResult]:
    """Each folder's Makefile read, built and checked in turn, within ``deadline`` (a monotonic time);
    ``llvm_bin``: the root's LLVM tools (objcopy, offload bundler) for checking the code objects built."""
    jobs = os.cpu_count() or 1
    results = []
    for folder in folders:
        if should_stop():
            break
        results.append(_build_one(sandbox, folder, settings, on_line, should_stop, deadline, jobs, llvm_bin, defines))
    return results


def _limits(settings: ProjectSettings, deadline: float) -> SandboxLimits:
    return SandboxLimits(timeout_s=max(deadline - time.monotonic(), 1.0), memory_mb=settings.build_memory_mb)


def _build_one(
    sandbox: Sandbox, folder: str, settings: ProjectSettings, on_line: Callable[[str], None] | None,
    should_stop: Callable[[], bool], deadline: float, jobs: int, llvm_bin: str,
    defines: Sequence[VersionDefine] = (),
) -> MakeUnitResult:
    started = time.monotonic()
    unit = MakeUnitResult(folder)
    env = make_environment(settings, defines)
    dry, build = make_commands(folder, jobs)
    log = on_line or (lambda _: None)
    try:
        log(f"$ {' '.join(dry)}\n")
        parsed = sandbox.run(dry, str(HIP_COPY), _limits(settings, deadline), env=env, should_stop=should_stop)
        if not parsed.ok:
            unit.returncode = parsed.process.returncode
            tail = "\n".join(parsed.process.output.strip().splitlines()[-5:])
            unit.cause = "make-unreadable"
            unit.error = (f"make could not read the Makefile in {folder} (make -pn exit status "
                          f"{parsed.process.returncode}); not built") if not parsed.violations else (
                f"make -pn in {folder} was stopped: {parsed.violations[0]}; not built")
            log(tail + "\n")
            unit.output = parsed.process.output[-20000:]
            return _done(unit, started)
        dry_run = unit.dry_run = parse_dry_run(parsed.process.output, dry[-1])
        unit.makefiles, unit.expected = _relative(dry_run.makefiles()), _relative(dry_run.expected_files())
        log(f"[migrator] make's data base for {folder}: {len(unit.makefiles)} makefile(s) read "
            f"({', '.join(unit.makefiles[:4])}), {len(unit.expected)} file(s) to make\n")
        stamp = str(BUILD / (".make-started-" + folder.replace("/", "_")))
        sandbox.run(["touch", stamp], str(HIP_COPY), _limits(settings, deadline))
        log(f"$ {' '.join(build)}\n")
        result = sandbox.run(build, str(HIP_COPY), _limits(settings, deadline), env=env, on_line=on_line,
                             should_stop=should_stop)
    except SandboxUnavailable as exc:
        unit.error = str(exc)
        return _done(unit, started)
    unit.returncode, unit.output = result.process.returncode, result.process.output
    unit.built = _existing(sandbox, dry_run, settings, deadline)
    unit.built += [f for f in _written_since(sandbox, stamp, settings, deadline) if f not in unit.built]
    unit.device_targets = _device_targets(sandbox, unit.built, llvm_bin, settings, deadline) if llvm_bin else {}
    wrong = {f: t for f, t in unit.device_targets.items() if not set(settings.offload_archs) <= set(t)}
    unit.cause = "make-failed" if not result.ok else "nothing-built" if not unit.built else "wrong-gpu" if wrong else ""
    if not result.ok:
        unit.error = f"make failed in {folder} (exit status {result.process.returncode})" + "".join(
            f": {violation}" for violation in result.violations[:1])
    elif not unit.built and not unit.expected:
        goal = next((db.default_goal for db in dry_run.databases if db.default_goal), "")
        unit.error = (f"nothing built in {folder}: make's data base names no file for its default goal"
                      f" '{goal}' and the build wrote none" if goal else
                      f"nothing built in {folder}: the Makefile has no default goal")
    elif not unit.built:
        unit.error = (f"nothing built in {folder}: make exited 0 but none of the {len(unit.expected)} file(s) its "
                      f"data base names ({', '.join(unit.expected[:3])}) exists and the build wrote no file")
    elif wrong:
        name, targets = next(iter(wrong.items()))
        unit.error = (f"built for the wrong GPU in {folder}: {name} holds code for {', '.join(targets) or 'no GPU'}, "
                      f"not for {', '.join(settings.offload_archs)}")
    unit.ok = not unit.error
    return _done(unit, started)


def _done(unit: MakeUnitResult, started: float) -> MakeUnitResult:
    unit.duration_s = time.monotonic() - started
    return unit


def _relative(paths: list[str]) -> list[str]:
    """Sandbox paths under the build's copy as tree-relative ones; others (outside the tree) as they are."""
    found = []
    for path in paths:
        pure = PurePosixPath(path)
        found.append(pure.relative_to(HIP_COPY).as_posix() if pure.is_relative_to(HIP_COPY) else path)
    return found


def _existing(sandbox: Sandbox, dry_run: MakeDryRun, settings: ProjectSettings, deadline: float) -> list[str]:
    """Which expected files exist now, tested in the sandbox (the root side never looks into work/ by path)."""
    expected = [p for p in dry_run.expected_files() if PurePosixPath(p).is_relative_to(HIP_COPY)]
    if not expected:
        return []
    check = ["sh", "-c", 'for f; do [ -f "$f" ] && printf "%s\\n" "$f"; done; exit 0', "sh", *expected[:500]]
    result = sandbox.run(check, str(HIP_COPY), _limits(settings, deadline))
    present = set(result.process.output.splitlines()) if result.ok else set()
    return _relative([p for p in expected if p in present])


_LIST_BUNDLES = (  # per file with a .hip_fatbin section: "file<TAB>target target ..." from the offload bundler
    'bin="$1"; shift; for f; do "$bin/llvm-objcopy" --dump-section=.hip_fatbin=/tmp/fatbin "$f" /tmp/copy '
    '2>/dev/null || continue; printf "%s\\t" "$f"; "$bin/clang-offload-bundler" --list --type=o --input=/tmp/fatbin '
    '| tr "\\n" " "; echo; done; exit 0')


def _device_targets(sandbox: Sandbox, built: list[str], llvm_bin: str, settings: ProjectSettings,
                    deadline: float) -> dict[str, list[str]]:
    """The GPU targets of the code objects in each built file that has any (read in the sandbox with the
    root's objcopy and offload bundler); host-only files are left out."""
    paths = [str(HIP_COPY / f) for f in built if not f.startswith("/")][:_LISTED]
    if not paths:
        return {}
    result = sandbox.run(["sh", "-c", _LIST_BUNDLES, "sh", llvm_bin, *paths], str(HIP_COPY), _limits(settings, deadline))
    found: dict[str, list[str]] = {}
    for line in result.process.output.splitlines() if result.ok else []:
        path, _, bundles = line.partition("\t")
        targets = [b.rsplit("--", 1)[-1] for b in bundles.split() if b.startswith("hip") and "--" in b]
        if path in paths:
            found[_relative([path])[0]] = sorted(set(targets))
    return found


def _written_since(sandbox: Sandbox, stamp: str, settings: ProjectSettings, deadline: float) -> list[str]:
    """Regular files in the build's copy of the tree newer than ``stamp`` (what this build wrote)."""
    listing = ["find", str(HIP_COPY), "-type", "f", "-newer", stamp, "-not", "-name", "*.d", "-print"]
    result = sandbox.run(listing, str(HIP_COPY), _limits(settings, deadline))
    return _relative(sorted(result.process.output.splitlines())[:500]) if result.ok else []

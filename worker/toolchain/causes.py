"""Why compile and link failed, by cause: whose fault each failing file is.

Fed by the compile and link stages' stored data (``files``, ``diagnostics``, ``toolchain``,
``include_dirs``, ``project_build``; ``problems``), never by the disk, so it runs anywhere the data
is. Each failing file gets one cause, the strongest evidence among its errors, in this order:

- ``environment``: the toolchain in use lacks something (a ROCm library or header, a GPU feature);
- ``translation``: CUDA left behind (names, headers, libraries), a HIP API missing in the target, or
  code the CUDA reference build compiles that hipcc rejects;
- ``build_configuration``: flags, paths, build files (nvcc-only flags, CMake, Python extension headers);
- ``migrator``: our own handling (limits, the sandbox, include directories we guessed);
- ``project_code``: the last resort: a C++ error no other evidence explains, and one the CUDA
  reference build reports at the same line ("also fails in the CUDA reference build").

Pure: standard library only.
"""
from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from worker.toolchain import cause_rules
from worker.toolchain.cause_rules import Verdict
from worker.toolchain.link_owners import explain_undefined
from worker.toolchain.reference_evidence import ReferenceBuild, weigh
from worker.wording import counted

CauseKind = Literal["environment", "translation", "build_configuration", "project_code", "migrator"]
KIND_ORDER: tuple[CauseKind, ...] = ("environment", "translation", "build_configuration", "migrator", "project_code")
KIND_LABELS: dict[str, str] = {
    "environment": "environment", "translation": "translation", "build_configuration": "build configuration",
    "project_code": "project code", "migrator": "Migrator",
}
MAX_NAMES = 4

_NOT_FOUND = re.compile(r"'(?P<header>[^']+)' file not found|(?:fatal error: )?(?P<header2>[\w./+-]+?): No such file or directory|"
                        r"cannot open source file \"(?P<header3>[^\"]+)\"")
_UNDECLARED = re.compile(r"(?:use of undeclared identifier|unknown type name|no template named|no type named) '(?P<name>[\w:]+)'")
# Library names the translator's table does not list (its table decides for the rest: see cause_rules.cuda_name).
_CUDA_NAME = re.compile(r"^(?:nccl[A-Z]|NCCL_|nvtx[A-Z]|NVTX_|nvcuda$|cub$|CUB_|cudnn[A-Z]|CUDNN_)")
_WARP_SYNC = re.compile(r"^__(?:shfl\w*_sync|ballot_sync|any_sync|all_sync|match_\w+_sync|reduce_\w+_sync|syncwarp|activemask)$")
_CUDA_HEADER = re.compile(r"^(?:cuda\w*|cu[a-z]\w*|nvtx\w*|nvToolsExt\w*|nvml|nvrtc|NvInfer\w*|cufile|cudnn\w*|nccl|"
                          r"nvtx3/.*|cooperative_groups/.*|crt/.*|thrust/system/cuda/.*|nvsci\w*|NvMedia\w*|nvmedia\w*)\.(?:h|hpp|cuh)$",
                          re.IGNORECASE)
_PYTHON_HEADER = re.compile(r"^(?:Python\.h|pybind11/.*|ATen/.*|torch/.*|c10/.*|THC/.*|numpy/.*)$")
_WINDOWS_HEADER = re.compile(r"^(?:windows|direct|io|conio|winsock2?|tchar|shlwapi|intrin)\.h$", re.IGNORECASE)
_FLAG_ERROR = re.compile(r"unknown argument: '(?P<flag>[^']+)'|unsupported option '(?P<flag2>[^']+)'|"
                         r"unknown argument '(?P<flag3>[^']+)'|invalid value '[^']+' in '(?P<flag4>[^']+)'|"
                         r"invalid target ID '(?P<flag5>[^']+)'|unsupported (?:CUDA|HIP) gpu architecture: (?P<flag6>\w+)")
_IMAGE = re.compile(r"image instruction is not supported", re.IGNORECASE)

_LANE_MASK = re.compile(r"mask must be a 64-bit integer", re.IGNORECASE)
_CMAKE = re.compile(r"CMake Error|Cannot determine link language|No CMAKE_\w+_COMPILER could be found|"
                    r"make(?:\[\d+\])?: \*\*\*|No rule to make target|Could NOT find", re.IGNORECASE)


_GCC_QUOTES = str.maketrans({"\u2018": "'", "\u2019": "'"})


@dataclass(frozen=True)
class Cause:
    kind: CauseKind
    key: str  # files with the same key fail for the same reason
    reason: str  # one line, for people
    file: str
    message: str  # the error line that decided
    names: tuple[str, ...] = ()  # CUDA names left in this file, when that is the cause


@dataclass
class CauseGroup:
    kind: CauseKind
    key: str
    reason: str
    files: list[str] = field(default_factory=list)
    example: str = ""
    names: list[str] = field(default_factory=list)  # e.g. the CUDA names left, across files

    def to_dict(self) -> dict[str, object]:
        return {"kind": self.kind, "label": KIND_LABELS[self.kind], "key": self.key, "reason": self.reason,
                "files": self.files, "file_count": len(self.files), "example": self.example, "names": self.names}


@dataclass(frozen=True)
class _Toolchain:
    name: str
    libraries: tuple[Mapping[str, Any], ...]
    guessed_include_dirs: tuple[str, ...]


def installed_in(tc: _Toolchain) -> cause_rules.Installed:
    """Whether the toolchain has a catalogued ROCm library (None: not catalogued or not detected)."""
    def installed(name: str) -> bool | None:
        lib = next((lib for lib in tc.libraries if lib.get("name") == name), None)
        return None if lib is None else bool(lib.get("installed"))
    return installed


def _cause(verdict: Verdict, file: str, message: str) -> Cause:
    return Cause(verdict.kind, verdict.key, verdict.reason, file, message)  # type: ignore[arg-type]


def _toolchain(data: Mapping[str, Any], user_include_dirs: Sequence[str]) -> _Toolchain:
    tc = data.get("toolchain") if isinstance(data.get("toolchain"), Mapping) else {}
    assert isinstance(tc, Mapping)
    name = str(tc.get("name") or "") or (f"ROCm {tc.get('hip_version')}" if tc.get("hip_version") else "") or (
        f"hipcc {tc.get('hipcc_version')}" if tc.get("hipcc_version") else "the toolchain in use")
    libraries = tuple(lib for lib in tc.get("libraries") or () if isinstance(lib, Mapping))
    found = [str(d) for d in data.get("include_dirs") or () if isinstance(d, str)]
    guessed = tuple(d for d in found if d not in set(user_include_dirs))
    return _Toolchain(name, libraries, guessed)


def _library_for_header(header: str, tc: _Toolchain) -> Mapping[str, Any] | None:
    """The ROCm library a header belongs to: by its exact path, its directory, or its file name."""
    top = header.split("/", 1)[0] if "/" in header else header.rsplit(".", 1)[0]
    for lib in tc.libraries:
        known = str(lib.get("header") or "")
        if known and (known == header or ("/" not in header and known.split("/", 1)[0] == top)):
            return lib
    return None


def _library_by_folder(header: str, tc: _Toolchain) -> Mapping[str, Any] | None:
    """A library the toolchain lacks whose headers live in the folder of ``header`` (<hiptensor/...>)."""
    folder = header.split("/", 1)[0] if "/" in header else ""
    return next((lib for lib in tc.libraries if folder and not lib.get("installed")
                 and str(lib.get("header") or "").split("/", 1)[0] == folder), None)


def _missing_header(header: str, file: str, message: str, tc: _Toolchain) -> Cause:
    lib = _library_for_header(header, tc)
    if lib is not None and not lib.get("installed"):
        package = f" (package {lib.get('package')})" if lib.get("package") else ""
        return Cause("environment", f"missing-library:{lib.get('name')}",
                     f"{lib.get('name')} is not in toolchain {tc.name}{package}", file, message)
    if lib is not None and header != lib.get("header"):
        return Cause("translation", f"moved-header:{header}",
                     f"<{header}> is <{lib.get('header')}> in this ROCm version", file, message)
    if cause_rules.is_cuda_header(header) or _CUDA_HEADER.match(header):
        return _cause(cause_rules.cuda_header(header, installed_in(tc)), file, message)
    if (lib := _library_by_folder(header, tc)) is not None:
        return Cause("environment", f"missing-library:{lib.get('name')}",
                     f"{lib.get('name')} is not in toolchain {tc.name} (<{header}> is one of its headers)", file, message)
    if (verdict := cause_rules.translated_header(header) or cause_rules.third_party_header(header)) is not None:
        return _cause(verdict, file, message)
    if _PYTHON_HEADER.match(header):
        return Cause("build_configuration", "python-extension",
                     "Python/PyTorch extension sources need their Python build (Python.h, ATen/torch headers)", file, message)
    if _WINDOWS_HEADER.match(header):
        return Cause("project_code", f"windows-only:{header}", f"Windows-only header <{header}>", file, message)
    if tc.guessed_include_dirs:
        dirs = ", ".join(tc.guessed_include_dirs[:3])
        return Cause("migrator", f"guessed-includes:{header}",
                     f"the include directories Migrator guessed ({dirs}) do not provide <{header}>: set include_dirs",
                     file, message)
    return Cause("build_configuration", f"header-path:{header}", f"<{header}> is not on the include path", file, message)


def _undeclared(name: str, file: str, message: str) -> Cause:
    bare = name.split("::")[-1]
    if _WARP_SYNC.match(bare):
        return Cause("translation", "warp-sync", "warp-sync intrinsics (__shfl_*_sync...) are off in this HIP: "
                     "HIP_ENABLE_WARP_SYNC_BUILTINS and 64-bit masks", file, message)
    if (verdict := cause_rules.cuda_name(bare) or cause_rules.cuda_intrinsic(bare)) is not None:
        return _cause(verdict, file, message)
    if _CUDA_NAME.match(bare):
        return Cause("translation", "cuda-names", "CUDA names left untranslated", file, message)
    if bare.startswith(("hip", "roc", "HIP")):
        return Cause("translation", f"hip-missing:{bare}", f"{bare} is missing from the target HIP version", file, message)
    return Cause("project_code", "cxx-error", "C++ errors in the project's code", file, message)


def classify_message(message: str, file: str, tc: _Toolchain, kind: str = "") -> Cause | None:
    """The cause of one error message (the first error of a failing file); ``kind`` is the family's
    problem kind (``cmake:cmake_error``, see log_families). None: a consequence of another error
    (make's ``Error 1``, a wheel that failed to build)."""
    family = kind.split(":", 1)[-1]
    message = message.translate(_GCC_QUOTES)
    if family == "limit":
        return _cause(cause_rules.limit(message), file, message)
    if (verdict := cause_rules.migrator(message)) is not None:
        return _cause(verdict, file, message)
    if family.startswith("make") or family == "tool_not_found":
        verdict = cause_rules.make(family, message, file)
        return _cause(verdict, file, message) if verdict else None
    if family == "python_exception":
        return _cause(cause_rules.python(message), file, message)
    if family == "pip_resolver":
        verdict = cause_rules.pip(message)
        return _cause(verdict, file, message) if verdict else None
    if family == "cmake_error" and (verdict := cause_rules.cmake(message, file, installed_in(tc))) is not None:
        return _cause(verdict, file, message)
    if family == "multiple_definition":
        return Cause("project_code", "multiple-definition", "a symbol is defined in more than one object "
                     "(a definition in a header?)", file, message)
    if found := _NOT_FOUND.search(message):
        return _missing_header(found["header"] or found["header2"] or found["header3"], file, message, tc)
    if found := _FLAG_ERROR.search(message):
        flag = next(v for v in found.groupdict().values() if v)
        return Cause("build_configuration", f"flag:{flag}", f"flag {flag} is not understood by hipcc/clang", file, message)
    if (verdict := cause_rules.gpu_code(message)) is not None:
        return _cause(verdict, file, message)
    if _IMAGE.search(message):
        return Cause("environment", "no-image-instructions",
                     "the target GPU has no image instructions (texture sampling)", file, message)
    if _LANE_MASK.search(message):
        return Cause("translation", "lane-mask", "32-bit warp masks: AMD wavefronts need 64-bit masks", file, message)
    if (verdict := cause_rules.device_code_in_cxx(message, file)) is not None:
        return _cause(verdict, file, message)
    if found := _UNDECLARED.search(message):
        return _undeclared(found["name"], file, message)
    if (name := cause_rules.undeclared_name(message)) is not None:
        return _undeclared(name, file, message)
    if _CMAKE.search(message) and (verdict := cause_rules.cmake(message, file, installed_in(tc))) is not None:
        return _cause(verdict, file, message)
    if _CMAKE.search(message) or family == "cmake_error":
        return Cause("build_configuration", "build-files", "the project's build files fail on ROCm", file, message)
    if found := _HIP_CALL_MISMATCH.search(message):
        name = found["name"]
        return Cause("translation", f"hip-signature:{name}", f"{name} takes other arguments than its CUDA "
                     "counterpart (a HIP API difference): adapt the call", file, message)
    return Cause("project_code", "cxx-error", "C++ errors in the project's code", file, message)


# A call that translation renamed to a HIP function whose parameters differ from CUDA's (hipHostMalloc's flags,
# overloads CUDA's headers add for C++): the mismatch is the port's, not the project's.
_HIP_CALL_MISMATCH = re.compile(r"no matching (?:member )?function for call to '(?P<name>(?:hip|roc)[A-Za-z0-9_]+)'")


def _errors_by_file(data: Mapping[str, Any]) -> dict[str, list[Mapping[str, Any]]]:
    errors: dict[str, list[Mapping[str, Any]]] = {}
    for item in data.get("diagnostics") or ():
        if isinstance(item, Mapping) and item.get("severity") in ("error", "fatal"):
            key = str(item.get("tu") or item.get("file") or "")
            errors.setdefault(key, []).append(item)
    return errors


def compile_causes(data: Mapping[str, Any], user_include_dirs: Sequence[str] = (),
                   reference: ReferenceBuild | None = None) -> list[Cause]:
    """One cause per failing translation unit (or per failing project build). ``reference``: the CUDA
    reference build of the same source, weighed on what would otherwise be "project code"."""
    tc = _toolchain(data, user_include_dirs)
    errors = _errors_by_file(data)
    causes: list[Cause] = []
    for entry in data.get("files") or ():
        if not isinstance(entry, Mapping) or entry.get("status") == "passed":
            continue
        path = str(entry.get("path") or "")
        shown = str(entry.get("original_path") or path)
        file_errors = errors.get(path) or [{}]
        if entry.get("status") == "timeout" and not errors.get(path):
            causes.append(Cause("migrator", "limits", "a compile ran past Migrator's time limit (compile_timeout_s)",
                                shown, "timeout"))
            continue
        cause = _strongest(file_errors, shown, str(entry.get("status") or "failed"), tc, reference)
        if cause.key == "cuda-names":
            cause = replace(cause, names=_cuda_names(file_errors))
        causes.append(cause)
    build = data.get("project_build")
    units = [u for u in (build.get("units") or ()) if isinstance(u, Mapping)] if isinstance(build, Mapping) else []
    unit_causes = [_unit_cause(u) for u in units if not u.get("ok") and u.get("cause") in _UNIT_CAUSES]
    causes += unit_causes
    if isinstance(build, Mapping) and build.get("ok") is False and (errors or not unit_causes):
        covered = {str(f.get("original_path") or f.get("path")) for f in data.get("files") or () if isinstance(f, Mapping)}
        causes += _project_build_causes(build, [e for items in errors.values() for e in items], covered, tc, reference)
    return causes


def _strongest(errors: Sequence[Mapping[str, Any]], unit: str, status: str, tc: _Toolchain,
               reference: ReferenceBuild | None) -> Cause:
    """The cause of a failing unit: the strongest evidence among its errors (environment first, project
    code last; the first error among equals), "project code" weighed against the CUDA reference. A limit
    Migrator's sandbox recorded for the compile (``flag`` "limit", worker/toolchain/compile.py) comes first:
    what the compiler printed before it was stopped is its consequence."""
    limits = [e for e in errors if e.get("flag") == "limit"]
    if limits:
        message = str(limits[0].get("message") or status)
        return _cause(cause_rules.limit(message), unit, message)
    found: list[Cause] = []
    for error in errors:
        message = str(error.get("message") or status)
        cause = classify_message(message, unit, tc, str(error.get("flag") or "")) or Cause(
            "project_code", "cxx-error", "C++ errors in the project's code", unit, message)
        found.append(_weighed(cause, reference, unit, error))
    return min(found, key=lambda c: KIND_ORDER.index(c.kind))


def _weighed(cause: Cause, reference: ReferenceBuild | None, unit: str, error: Mapping[str, Any]) -> Cause:
    """A "project code" cause with the CUDA reference's evidence: the same error without migration keeps
    it (and says so); a CUDA build that passes makes it the port's (see ``reference_evidence``)."""
    if reference is None or cause.kind != "project_code":
        return cause
    file = str(error.get("original_file") or unit)
    line = error.get("original_line") if error.get("original_file") else error.get("line")
    evidence = weigh(reference, unit, file, line if isinstance(line, int) else 0)
    return cause if evidence is None else replace(cause, kind=evidence.kind, key=evidence.key,  # type: ignore[arg-type]
                                                  reason=evidence.reason)


def _project_build_causes(build: Mapping[str, Any], errors: Sequence[Mapping[str, Any]], covered: set[str],
                          tc: _Toolchain, reference: ReferenceBuild | None = None) -> list[Cause]:
    """A project build's causes, one per failing file (the strongest evidence among its errors:
    environment first, project code last) and one per build-level error (CMake, make, pip, Python),
    leaving out the files the compile stage already lists. When Migrator's limits killed the build,
    that alone is the cause: what followed is its consequence."""
    by_file: dict[str, list[Cause]] = {}
    for violation in build.get("violations") or ():  # what the sandbox recorded from signals and counters
        by_file.setdefault("(build)", []).append(_cause(cause_rules.limit(str(violation)), "(build)", str(violation)))
    for item in errors:
        file = str(item.get("original_file") or item.get("file") or "(build)")
        if file in covered:
            continue
        line = item.get("original_line") or item.get("line")
        where = f"{file}:{line}" if line and str(item.get("flag") or "").startswith("cmake:") else file
        cause = classify_message(str(item.get("message") or ""), where, tc, str(item.get("flag") or ""))
        if cause is not None:
            by_file.setdefault(file, []).append(_weighed(cause, reference, file, item))
    found = [min(causes, key=lambda c: KIND_ORDER.index(c.kind)) for causes in by_file.values()]
    if limits := [c for causes in by_file.values() for c in causes if c.key == "limits"]:
        return limits[:1]
    if not found and not covered:
        message = str(build.get("error") or "the project build failed")
        return [classify_message(message, "(build)", tc) or Cause("project_code", "cxx-error",
                                                                 "the project build failed", "(build)", message)]
    return found


# A Makefile unit that failed without a compiler error (make_build.py sets ``cause``): the build's own setup.
_UNIT_CAUSES = {
    "make-unreadable": "make cannot read the converted Makefile (or a file it includes)",
    "nothing-built": "the build exited 0 but made nothing",
    "wrong-gpu": "the build made code for other GPUs than the project's offload targets",
}


def _unit_cause(unit: Mapping[str, Any]) -> Cause:
    kind = str(unit.get("cause"))
    makefiles = unit.get("makefiles") or [f"{unit.get('folder')}/Makefile"]
    return Cause("build_configuration", f"make:{kind}", _UNIT_CAUSES[kind], str(makefiles[0]), str(unit.get("error")))


def _cuda_names(errors: Sequence[Mapping[str, Any]]) -> tuple[str, ...]:
    names: dict[str, None] = {}
    for item in errors:
        message = str(item.get("message") or "")
        found = _UNDECLARED.search(message)
        name = found["name"] if found else cause_rules.undeclared_name(message)
        if name and _undeclared(name, "", message).key == "cuda-names":
            names[name] = None
    return tuple(names)


def link_causes(data: Mapping[str, Any], toolchain: Mapping[str, Any] | None = None,
                compile_data: Mapping[str, Any] | None = None) -> list[Cause]:
    """One cause per link problem (a missing library, an undefined symbol: which source should
    define it, whether it was compiled and whether the build files list it)."""
    tc = _toolchain({"toolchain": toolchain or {}}, ())
    causes = []
    for problem in data.get("problems") or ():
        if not isinstance(problem, Mapping):
            continue
        where = str(problem.get("object") or "(link)")
        message = str(problem.get("message") or "")
        library, symbol = str(problem.get("library") or ""), str(problem.get("symbol") or "")
        if library:
            causes.append(_missing_library(library, where, message, problem, tc))
        elif problem.get("kind") == "multiple_definition":
            causes.append(Cause("project_code", "multiple-definition", "a symbol is defined in more than one object",
                                where, message))
        elif symbol:
            causes.append(_undefined_symbol(symbol, where, message, problem, tc, compile_data or {}))
    return causes


def _undefined_symbol(symbol: str, where: str, message: str, problem: Mapping[str, Any], tc: _Toolchain,
                      compile_data: Mapping[str, Any]) -> Cause:
    bare = symbol.split("(")[0].split("::")[-1].strip()
    defined_in = [str(f) for f in problem.get("defined_in") or () if isinstance(f, str)]
    if (verdict := explain_undefined(bare, defined_in, compile_data, installed_in(tc))) is not None:
        return _cause(verdict, where, message)
    cause = _undeclared(bare, where, message)
    if cause.key == "cuda-names":
        return replace(cause, names=(symbol,))
    if cause.kind == "project_code":
        return Cause("project_code", f"undefined:{bare}", f"{bare} is used but no source of the project defines it",
                     where, message)
    return cause


def _missing_library(library: str, where: str, message: str, problem: Mapping[str, Any], tc: _Toolchain) -> Cause:
    if _CUDA_NAME.match(library) or library in ("cudart", "cuda", "cublas", "nvToolsExt"):
        replacement = f": use {problem.get('replacement')}" if problem.get("replacement") else ""
        return Cause("translation", f"cuda-library:{library}", f"CUDA library -l{library} still linked{replacement}", where, message)
    for lib in tc.libraries:
        if str(lib.get("library") or "") == f"lib{library}.so" and not lib.get("installed"):
            return Cause("environment", f"missing-library:{lib.get('name')}",
                         f"{lib.get('name')} is not in toolchain {tc.name}", where, message)
    if (verdict := cause_rules.third_party_library(library)) is not None:
        return _cause(verdict, where, message)
    return Cause("build_configuration", f"library:{library}", f"library -l{library} is not found", where, message)


def group_causes(causes: Sequence[Cause]) -> list[CauseGroup]:
    """Causes grouped by key, kinds in a fixed order, larger groups first within a kind."""
    groups: dict[str, CauseGroup] = {}
    for cause in causes:
        group = groups.setdefault(cause.key, CauseGroup(cause.kind, cause.key, cause.reason, example=cause.message))
        if cause.file not in group.files:
            group.files.append(cause.file)
        group.names += [name for name in cause.names if name not in group.names]
    return sorted(groups.values(), key=lambda g: (KIND_ORDER.index(g.kind), -len(g.files), g.key))


def summary_line(groups: Sequence[CauseGroup]) -> str:
    """``29 files fail because hipBLAS is not in toolchain X (environment); 6 on CUDA names left ...``."""
    parts = []
    for index, group in enumerate(groups):
        names = f": {', '.join(group.names[:MAX_NAMES])}{', ...' if len(group.names) > MAX_NAMES else ''}" if group.names else ""
        count = len(group.files)
        verb = (" fails because " if count == 1 else " fail because ") if index == 0 else " on "
        parts.append(f"{counted(len(group.files), 'file')}{verb}{group.reason}{names} ({KIND_LABELS[group.kind]})")
    return "; ".join(parts)

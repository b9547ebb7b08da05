"""Build logs of every tool family parsed into problems: (file, line, message, kind).

The compilers (clang/hipcc and g++/gcc share ``file:line:col: error: message``; nvcc prints
``file(line): error: message``), the linkers (GNU ld and lld: undefined references, multiple
definitions, missing ``-l`` libraries), CMake (``CMake Error at file:line (command):`` and the
indented message under it), make (``*** No rule to make target``, ``*** [rule] Error 1``),
Python tracebacks (the innermost ``File "x", line N`` and the exception line) and pip's resolver
(``No matching distribution found for``, ``ResolutionImpossible``, conflicting pins).

Each problem also says which family printed it. ``as_diagnostics`` turns the problems the
compiler parser does not know into error diagnostics, so the stored data and the cause
classifier see every family. Pure: standard library only.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from worker.toolchain.diagnostics import Diagnostic, parse_compiler_output, parse_linker_output

Family = str  # "cc" (clang, g++), "clang" (its errors with no file), "nvcc", "ld", "lld", "cmake", "make", "python",
# "pip", "migrator" (what Migrator's sandbox appends when a limit stopped a command)

_NVCC = re.compile(r"^(?P<file>[^\s(][^(]*)\((?P<line>\d+)\): (?P<severity>error|catastrophic error|warning)"
                   r"(?: #\d+(?:-D)?)?: (?P<message>.*)$")
_NVCC_FATAL = re.compile(r"^nvcc fatal\s*: (?P<message>.*)$")
_GCC_QUOTES = str.maketrans({"\u2018": "'", "\u2019": "'"})
_CMAKE_AT = re.compile(r"^CMake Error(?: \(dev\))? at (?P<file>[^:]+):(?P<line>\d+) \((?P<command>\w+)\):\s*$")
_CMAKE_IN = re.compile(r"^CMake Error in (?P<file>[^:]+):\s*$")  # generate-time errors name no line
_LD_FAILED = re.compile(r"^\S*ld(?:\.\w+)?: (?:error: )?(?P<message>final link failed: .+|cannot open output file .+)$")
_CMAKE_PLAIN = re.compile(r"^CMake Error: (?P<message>.+)$")
_MAKE_NO_RULE = re.compile(r"^(?:g?make(?:\[\d+\])?|ninja): \*\*\* No rule to make target [`'](?P<target>[^']+)'"
                           r"(?:, needed by [`'](?P<needed>[^']+)')?")
_NINJA_MISSING = re.compile(r"^ninja: error: '(?P<target>[^']+)', needed by '(?P<needed>[^']+)', missing and no known rule")
_MAKE_ERROR = re.compile(r"^g?make(?:\[\d+\])?: \*\*\* \[(?:(?P<file>[^:\]]+):(?P<line>\d+): )?(?P<rule>[^\]]+)\] "
                         r"(?P<message>Error \d+|Killed|Segmentation fault.*|Terminated)")
_SHELL_NOT_FOUND = re.compile(r"^(?:(?:/bin/)?(?:sh|bash): (?:line )?(?:\d+: )?)?(?P<tool>[\w./+-]+): (?:command )?not found$|"
                              r"^g?make(?:\[\d+\])?: (?P<exec>(?:[\w.+-]*/)*[\w+-]+): No such file or directory$")  # make's own exec failure
_SANDBOX = re.compile(r"^bwrap: (?P<message>.+)$")
# What Migrator's sandbox appends when a limit stopped a command (worker/toolchain/sandbox.py, compile.py):
# decided from signals and counters, so it is evidence, not words the build printed.
_MIGRATOR_LIMIT = re.compile(r"^migrator: (?P<message>.+)$")
# The project build's closing line when a sandbox limit stopped a step (compile stage: ProjectBuild.error, the
# sandbox's first violation after the step's exit status).
_BUILD_STOPPED = re.compile(r"^Project build failed: .+? \(exit status -?\d+\): (?P<message>(?:the command|the job|"
                            r"workspace limit) .+?)(?: \(failing for [^)]*\))?$")
_BARE_ERROR = re.compile(r"^(?:fatal )?error: (?P<message>.+)$")  # clang's errors with no file (output files)
_PY_FILE = re.compile(r'^\s+File "(?P<file>[^"]+)", line (?P<line>\d+)')
_PY_EXCEPTION = re.compile(r"^(?P<type>(?:[\w.]+\.)?\w*(?:Error|Exception|Exit|Interrupt))(?:: (?P<message>.*))?$")
_PIP = re.compile(r"^ERROR: (?P<message>(?:Could not find a version that satisfies the requirement|No matching distribution "
                  r"found for|ResolutionImpossible|Cannot install|Could not build wheels for|Failed building wheel for|"
                  r"Failed to build) .*|ResolutionImpossible.*)$")
_PIP_CONFLICT = re.compile(r"^\s+The conflict is caused by:|^\s+(?P<who>[\w.-]+ [\w.+-]+) depends on (?P<what>.+)$")


@dataclass(frozen=True)
class Problem:
    family: Family
    kind: str  # compile_error, undefined_reference, multiple_definition, missing_library, cmake_error, make_no_rule,
    # make_error, tool_not_found, python_exception, pip_resolver, limit
    file: str
    line: int
    message: str


def _normalise(line: str) -> str:
    return line.rstrip().translate(_GCC_QUOTES)


def parse_log(text: str) -> list[Problem]:
    """Every error the log holds, in the order printed (compiler problems first per line)."""
    text = "\n".join(_normalise(line) for line in text.splitlines())
    problems = [Problem("nvcc" if d.file == "" and "nvcc" in d.message else "cc", "compile_error", d.file, d.line, d.message)
                for d in parse_compiler_output(text) if d.is_error]
    for link in parse_linker_output(text):
        kind = {"undefined_reference": "undefined_reference", "missing_library": "missing_library"}.get(link.kind, link.kind)
        family = "lld" if "ld.lld" in link.message or "lld:" in link.message else "ld"
        problems.append(Problem(family, kind, link.object, 0, link.symbol or link.library or link.message))
    problems += _multiple_definitions(text) + _other_families(text.splitlines())
    return problems


_MULTIPLE = re.compile(r"^(?:\S*ld(?:\.\w+)?: )?(?P<where>[^:]+?)(?::\(.*?\))?: multiple definition of [`'](?P<symbol>.+)';")
_DUPLICATE = re.compile(r"^\S*ld\.lld: error: duplicate symbol: (?P<symbol>.+)$")


def _multiple_definitions(text: str) -> list[Problem]:
    found: list[Problem] = []
    for line in text.splitlines():
        if match := _MULTIPLE.match(line):
            found.append(Problem("ld", "multiple_definition", match["where"], 0, f"multiple definition of '{match['symbol']}'"))
        elif match := _DUPLICATE.match(line):
            found.append(Problem("lld", "multiple_definition", "", 0, f"duplicate symbol: {match['symbol']}"))
    return found


def _other_families(lines: list[str]) -> list[Problem]:
    found: list[Problem] = []
    py_file, py_line, py_code, in_traceback = "", 0, "", False
    for index, line in enumerate(lines):
        if match := _NVCC.match(line):
            if match["severity"] != "warning":
                found.append(Problem("nvcc", "compile_error", match["file"], int(match["line"]), match["message"]))
        elif match := _NVCC_FATAL.match(line):
            found.append(Problem("nvcc", "compile_error", "", 0, f"nvcc fatal: {match['message']}"))
        elif match := _CMAKE_AT.match(line):
            file, at = _project_frame(lines, index + 1) or (match["file"], int(match["line"]))
            problem = Problem("cmake", "cmake_error", file, at, _cmake_message(lines, index + 1))
            if not _no_sources_left(problem, found):
                found.append(problem)
        elif match := _SANDBOX.match(line):
            found.append(Problem("sandbox", "sandbox_error", "", 0, f"bwrap: {match['message']}"))
        elif (match := _MIGRATOR_LIMIT.match(line)) or (match := _BUILD_STOPPED.match(line)):
            found.append(Problem("migrator", "limit", "", 0, match["message"]))
        elif match := _BARE_ERROR.match(line):
            found.append(Problem("clang", "compile_error", "", 0, match["message"]))
        elif match := _CMAKE_IN.match(line):
            found.append(Problem("cmake", "cmake_error", match["file"], 0, _cmake_message(lines, index + 1)))
        elif match := _LD_FAILED.match(line):
            found.append(Problem("ld", "link_error", "", 0, match["message"]))
        elif match := _CMAKE_PLAIN.match(line):
            found.append(Problem("cmake", "cmake_error", "", 0, match["message"]))
        elif (match := _MAKE_NO_RULE.match(line)) or (match := _NINJA_MISSING.match(line)):
            needed = f", needed by '{match['needed']}'" if match["needed"] else ""
            found.append(Problem("make", "make_no_rule", match["target"], 0, f"No rule to make target '{match['target']}'{needed}"))
        elif match := _MAKE_ERROR.match(line):
            found.append(Problem("make", "make_error", match["file"] or "", int(match["line"] or 0),
                                 f"[{match['rule']}] {match['message']}"))
        elif match := _SHELL_NOT_FOUND.match(line):
            found.append(Problem("make", "tool_not_found", "", 0, f"{match['tool'] or match['exec']}: command not found"))
        elif line.startswith("Traceback (most recent call last):"):
            in_traceback, py_file, py_line, py_code = True, "", 0, ""
        elif in_traceback and (match := _PY_FILE.match(line)):
            if _in_project(match["file"]):  # the innermost frame of the project's own code, and its line
                py_file, py_line, py_code = match["file"], int(match["line"]), _code_under(lines, index)
        elif in_traceback and (match := _PY_EXCEPTION.match(line)):
            message = f"{match['type']}: {match['message']}" if match["message"] else match["type"]
            if py_code:
                message += f" (in `{py_code}`)"
            if py_file:  # a tool's own traceback (one probing for GPUs during configure) is not the build's failure
                found.append(Problem("python", "python_exception", py_file, py_line, message))
            in_traceback = False
        elif match := _PIP.match(line):
            found.append(Problem("pip", "pip_resolver", "", 0, match["message"]))
        elif (match := _PIP_CONFLICT.match(line)) and match["who"]:
            found.append(Problem("pip", "pip_resolver", "", 0, f"{match['who']} depends on {match['what']}"))
    return found


def _code_under(lines: list[str], index: int) -> str:
    """The source line a traceback prints under ``File "x", line N`` (none for frames without source)."""
    if index + 1 < len(lines):
        code = lines[index + 1]
        if code.startswith("    ") and not _PY_FILE.match(code) and code.strip().strip("^~ "):
            return code.strip()
    return ""


def _no_sources_left(problem: Problem, found: list[Problem]) -> bool:
    """CMake's "No SOURCES given to target" right after "Cannot find source file" for the same command: the
    target lost its sources because of the missing file, which is the error to explain."""
    previous = next((p for p in reversed(found) if p.family == "cmake"), None)
    return (problem.message.startswith("No SOURCES given to target") and previous is not None
            and previous.message.startswith("Cannot find source file") and (previous.file, previous.line) ==
            (problem.file, problem.line))


def _in_project(file: str) -> bool:
    """A file of the project: relative, or under the sandbox's /workspace."""
    return not file.startswith(("/", "<")) or file.startswith("/workspace/")


_CMAKE_FRAME = re.compile(r"^\s+(?P<file>[^\s:][^:]*):(?P<line>\d+) \(\w+\)\s*$")


def _project_frame(lines: list[str], start: int) -> tuple[str, int] | None:
    """For an error raised in one of CMake's own modules (/usr/share/cmake-*/Modules/...), the project's frame
    of the call stack printed under it (the outermost one that is not CMake's): the build file to fix."""
    if not lines[start - 1].startswith("CMake Error at /"):
        return None
    frames: list[tuple[str, int]] = []
    for line in lines[start:start + 40]:
        if line.startswith("-- ") or line.startswith("CMake Error"):
            break
        if (match := _CMAKE_FRAME.match(line)) and not match["file"].startswith("/"):
            frames.append((match["file"], int(match["line"])))
    return frames[0] if frames else None


def _cmake_message(lines: list[str], start: int) -> str:
    """The indented paragraph under ``CMake Error at``: its lines joined into one."""
    parts: list[str] = []
    blank = 0
    for line in lines[start:start + 16]:
        if not line.strip():
            blank += 1
            if blank > 1 and parts:
                break
            continue
        blank = 0
        if not line.startswith(" "):
            break
        parts.append(line.strip())
    return " ".join(parts) or "CMake Error"


def as_diagnostics(problems: list[Problem], known: list[Diagnostic]) -> list[Diagnostic]:
    """The problems of families the compiler parser does not report, as error diagnostics."""
    seen = {(d.file, d.line, d.message) for d in known}
    extra: list[Diagnostic] = []
    for problem in problems:
        if problem.family == "cc" or problem.kind in ("undefined_reference", "missing_library"):
            continue
        if (problem.file, problem.line, problem.message) in seen:
            continue
        seen.add((problem.file, problem.line, problem.message))
        extra.append(Diagnostic(file=problem.file, line=problem.line, column=0, severity="error",
                                message=problem.message, flag=f"{problem.family}:{problem.kind}"))
    return extra

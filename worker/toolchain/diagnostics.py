"""Structured diagnostics from clang/hipcc and linker (GNU ld, lld) output.

Compiler: one ``Diagnostic`` per error/warning with its notes and include stack;
hipcc compiles host and every device target separately, so the same message
appears several times and is deduplicated. Linker: one ``LinkProblem`` per
undefined symbol (demangled, when given a demangler: ``worker/toolchain/demangle.py`` runs the root's
``c++filt`` in the sandbox) or missing ``-l`` library, the latter mapped to the ROCm library and package
that provide the HIP counterpart.
"""
from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field
from typing import Literal

from worker.payloads import LinkProblemData
from worker.toolchain.demangle import Demangler
from worker.toolchain.rocm_libraries import (
    library_for_link_name,
    replacement_for_cuda_library,
)

Severity = Literal["fatal", "error", "warning", "note", "remark"]

_DIAGNOSTIC = re.compile(
    r"^(?P<file>[^\s:][^:]*?):(?P<line>\d+):(?:(?P<column>\d+):)?\s*"
    r"(?P<severity>fatal error|error|warning|note|remark):\s*(?P<message>.*?)"
    r"(?:\s+\[(?P<flag>[^\]]+)\])?\s*$"
)
_DRIVER = re.compile(r"^(?:clang(?:\+\+)?(?:-\d+)?|hipcc|ld\.lld|lld): (?P<severity>fatal error|error|warning): (?P<message>.*)$")
_INCLUDED_FROM = re.compile(r"^(?:In file included from|\s+from) (?P<file>.+?):(?P<line>\d+)[:,]?\s*$")


@dataclass
class Diagnostic:
    file: str  # as the compiler printed it; empty for driver messages
    line: int
    column: int
    severity: Severity
    message: str
    flag: str = ""  # e.g. "-Wunused-variable"
    notes: list[str] = field(default_factory=list)  # "file:line:col: message"
    include_stack: list[str] = field(default_factory=list)  # outermost first: "file:line"

    @property
    def is_error(self) -> bool:
        return self.severity in ("error", "fatal")

    def key(self) -> tuple[str, int, int, str, str]:
        return (self.file, self.line, self.column, self.severity, self.message)

    def to_dict(self) -> dict[str, object]:
        return asdict(self)


def parse_compiler_output(text: str) -> list[Diagnostic]:
    """Errors, warnings and fatal errors, with notes attached to the diagnostic before them."""
    found: dict[tuple[str, int, int, str, str], Diagnostic] = {}
    current: Diagnostic | None = None
    include_stack: list[str] = []
    for raw in text.splitlines():
        line = raw.rstrip()
        if included := _INCLUDED_FROM.match(line):
            include_stack.append(f"{included['file']}:{included['line']}")
            continue
        parsed = _parse_diagnostic_line(line)
        if parsed is None:
            continue
        if parsed.severity == "note":
            if current is not None:
                note = f"{parsed.file}:{parsed.line}:{parsed.column}: {parsed.message}"
                if note not in current.notes:
                    current.notes.append(note)
            include_stack = []
            continue
        parsed.include_stack = include_stack
        include_stack = []
        current = found.setdefault(parsed.key(), parsed)
    return list(found.values())


def _parse_diagnostic_line(line: str) -> Diagnostic | None:
    if match := _DIAGNOSTIC.match(line):
        severity = "fatal" if match["severity"] == "fatal error" else match["severity"]
        return Diagnostic(
            file=match["file"],
            line=int(match["line"]),
            column=int(match["column"] or 0),
            severity=severity,  # type: ignore[arg-type]
            message=match["message"],
            flag=_warning_flag(match["flag"] or ""),
        )
    if match := _DRIVER.match(line):
        severity = "fatal" if match["severity"] == "fatal error" else match["severity"]
        return Diagnostic(file="", line=0, column=0, severity=severity, message=match["message"])  # type: ignore[arg-type]
    return None


def _warning_flag(bracket: str) -> str:
    """``-Werror,-Wunused-variable`` -> ``-Wunused-variable``."""
    parts = [p for p in bracket.split(",") if p.startswith("-W") and p != "-Werror"]
    return parts[-1] if parts else bracket


LinkProblemKind = Literal["undefined_reference", "missing_library", "other"]


@dataclass
class LinkProblem:
    kind: LinkProblemKind
    message: str
    symbol: str = ""  # demangled
    mangled: str = ""  # as printed, when it differed from ``symbol``
    object: str = ""  # object (or source) needing the symbol
    function: str = ""  # function referencing it
    library: str = ""  # missing "-l" name
    replacement: str = ""  # ROCm library providing the HIP counterpart
    replacement_link_name: str = ""  # its "-l" name
    package: str = ""  # package to install
    defined_in: list[str] = field(default_factory=list)  # sources of the project defining the symbol (link_owners)

    def to_dict(self) -> LinkProblemData:
        return LinkProblemData(
            kind=self.kind, message=self.message, symbol=self.symbol, mangled=self.mangled, object=self.object,
            function=self.function, library=self.library, replacement=self.replacement,
            replacement_link_name=self.replacement_link_name, package=self.package, defined_in=list(self.defined_in))


_LD_IN_FUNCTION = re.compile(r"^(?:\S*ld(?:\.\w+)?: )?(?P<object>[^:]+): in function [`'](?P<function>.+)':\s*$")
_LD_UNDEFINED = re.compile(r"^(?P<prefix>\S*ld(?:\.\w+)?: )?(?P<where>.+?):\(.*?\): undefined reference to [`'](?P<symbol>.+)'\s*$")
_LLD_UNDEFINED = re.compile(r"^\S*ld\.lld: error: undefined (?:hidden )?symbol: (?P<symbol>.+)$")
_LLD_REFERENCED = re.compile(r"^>>>\s+(?:referenced by )?(?P<where>.+)$")
_MISSING_LIB = re.compile(r"(?:cannot find|unable to find library) -l(?P<lib>[\w.+-]+)")


def parse_linker_output(text: str, demangle: Demangler | None = None) -> list[LinkProblem]:
    """Undefined symbols and missing libraries; ``demangle`` (None: names as printed) makes symbols readable."""
    problems: list[LinkProblem] = []
    context_object, context_function = "", ""
    pending_lld: LinkProblem | None = None
    for raw in text.splitlines():
        line = raw.rstrip()
        if match := _LD_IN_FUNCTION.match(line):
            context_object, context_function = match["object"], match["function"]
        elif match := _LD_UNDEFINED.match(line):
            if match["prefix"]:  # "ld: a.o:(.data+0x0): ..." names its own object, outside any function
                context_object, context_function = match["where"], ""
            problem = LinkProblem("undefined_reference", line, symbol=match["symbol"],
                                  object=context_object or match["where"], function=context_function)
            problems.append(problem)
        elif match := _LLD_UNDEFINED.match(line):
            pending_lld = LinkProblem("undefined_reference", line, symbol=match["symbol"])
            problems.append(pending_lld)
        elif pending_lld is not None and (match := _LLD_REFERENCED.match(line)):
            _fill_lld_reference(pending_lld, match["where"])
        elif match := _MISSING_LIB.search(line):
            problems.append(_missing_library(match["lib"], line))
    if demangle is not None:
        _demangle_all(problems, demangle)
    return _dedupe(problems)


def _fill_lld_reference(problem: LinkProblem, where: str) -> None:
    # lld prints ">>> referenced by a.hip" then ">>>   a.o:(main)".
    if obj := re.match(r"(?P<object>[^:]+):\((?P<function>.+)\)$", where.strip()):
        problem.object, problem.function = obj["object"], obj["function"]
    elif not problem.object:
        problem.object = where.strip()


def _missing_library(lib: str, line: str) -> LinkProblem:
    problem = LinkProblem("missing_library", line, library=lib)
    rocm = replacement_for_cuda_library(lib) or library_for_link_name(lib)
    if rocm is not None:
        problem.replacement = rocm.name
        problem.replacement_link_name = rocm.library
        problem.package = rocm.package
    return problem


def _dedupe(problems: list[LinkProblem]) -> list[LinkProblem]:
    seen: dict[tuple[str, str, str, str], LinkProblem] = {}
    for problem in problems:
        seen.setdefault((problem.kind, problem.symbol, problem.object, problem.library), problem)
    return list(seen.values())


def _demangle_all(problems: list[LinkProblem], demangle: Demangler) -> None:
    mangled = sorted({p.symbol for p in problems if p.symbol.startswith("_Z")})
    if not mangled:
        return
    plain = demangle(mangled)
    for problem in problems:
        readable = plain.get(problem.symbol, problem.symbol)
        if readable != problem.symbol:
            problem.mangled, problem.symbol = problem.symbol, readable

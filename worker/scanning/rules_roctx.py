"""NVTX over roctx: the targets whose sources call roctx link ``roctx64``.

NVTX 3 is header-only, so a CUDA build links nothing for ``nvtxRangePushA``; once the translation maps
NVTX to roctx (``translator/rewrites/hostapi.py``, where the toolchain root has roctx) those calls live
in ``libroctx64``, and the link fails on undefined ``roctxRangePushA`` unless the build names it. The
sources that call roctx are known from the translated tree (``ScanContext.roctx_sources``), so the rules
fire on the converted copy only, never on a CUDA tree, and never twice (a build file naming ``roctx64``
has nothing left to add):

- ``cmake.nvtx-roctx-link``: ``target_link_libraries(<target> [PRIVATE] roctx64)`` after each
  ``add_executable``/``add_library`` listing such a source (or, through a variable, in a folder holding one);
- ``make.nvtx-roctx-link``: ``-lroctx64`` at the end of each link command of a Makefile whose folder (or
  below) holds such a source: a recipe calling a compiler without ``-c``; ``LDLIBS += -lroctx64`` (make's
  built-in link rules) where the Makefile has no such recipe.
"""
from __future__ import annotations

import posixpath
import re

from worker.scanning.cmake_sources import commands
from worker.scanning.model import Finding, RuleHit, ScanContext, to_finding

ROCTX_CALL = re.compile(r"\broctx(?:RangePushA?|RangePop|MarkA?|RangeStartA?|RangeStop)\s*\(")
_LIBRARY = "roctx64"
_COMPILER = re.compile(r"(?:^|[\s/@])(?:hipcc|nvcc|clang\+\+|clang|g\+\+|gcc|c\+\+|cc)(?=\s|$)"
                       r"|\$[({](?:CC|CXX|NVCC|HIPCC|LINK\.\w+|LD|LINKER|\w*COMPILER)[)}]")
_COMPILE_ONLY = re.compile(r"(?<!\S)-c(?!\S)")
_VARIABLE = re.compile(r"^\$\{\w+\}$")
_SLUG = "hip-runtime-not-linked"
_WHY = ("NVTX calls became roctx calls; NVTX is header-only for CUDA, but roctx lives in libroctx64, "
        "which the link needs.")


def cmake_roctx_findings(lines: list[str], rel: str, ctx: ScanContext) -> list[Finding]:
    """``target_link_libraries(<target> roctx64)`` for the targets of this CMakeLists.txt that build roctx callers."""
    folder = posixpath.dirname(rel)
    if not ctx.roctx_sources or _LIBRARY in "\n".join(lines):
        return []
    found = commands(lines)
    keyword = {c.arguments[0]: bool(c.arguments[1:2]) and c.arguments[1] in ("PRIVATE", "PUBLIC", "INTERFACE")
               for c in found if c.name == "target_link_libraries" and c.arguments}
    findings = []
    for command in found:
        if command.name not in ("add_executable", "add_library") or not command.arguments:
            continue
        target, items = command.arguments[0], command.arguments[1:]
        if any(item in ("IMPORTED", "ALIAS", "INTERFACE") for item in items) or not _calls_roctx(folder, items, ctx):
            continue
        statement = f"target_link_libraries({target}{' PRIVATE' if keyword.get(target, True) else ''} {_LIBRARY})"
        hit = RuleHit("nvtx-roctx-link", "error", len(lines[command.last - 1].rstrip("\r\n")), "", _WHY,
                      replacement="\n" + statement, notebook_slug=_SLUG, suggestion=statement)
        findings.append(to_finding(hit, rel, command.last, "cmake"))
    return findings


def make_roctx_findings(rel: str, text: str, ctx: ScanContext) -> list[Finding]:
    """``-lroctx64`` on the link commands of a Makefile whose folder builds roctx callers."""
    folder, _, name = rel.rpartition("/")
    if not name.lower().startswith(("makefile", "gnumakefile")) or _LIBRARY in text or not _below(folder, ctx):
        return []
    lines = text.splitlines()
    findings = []
    for last, command in _recipes(lines):
        if _COMPILER.search(command) and not _COMPILE_ONLY.search(command):
            hit = RuleHit("nvtx-roctx-link", "error", len(lines[last - 1].rstrip()), "", _WHY,
                          replacement=f" -l{_LIBRARY}", notebook_slug=_SLUG)
            findings.append(to_finding(hit, rel, last, "make"))
    if findings or not lines or lines[-1].rstrip().endswith("\\"):
        return findings
    hit = RuleHit("nvtx-roctx-link", "error", len(lines[-1]), "", _WHY + " make's built-in link rules take LDLIBS.",
                  replacement=f"\nLDLIBS += -l{_LIBRARY}", notebook_slug=_SLUG)
    return [to_finding(hit, rel, len(lines), "make")]


def _calls_roctx(folder: str, items: list[str], ctx: ScanContext) -> bool:
    for item in items:
        if _VARIABLE.match(item) or "$" in item:
            if _below(folder, ctx):  # sources through a variable: any roctx caller in this folder or below
                return True
        elif posixpath.normpath(posixpath.join(folder, item)) in ctx.roctx_sources:
            return True
    return False


def _below(folder: str, ctx: ScanContext) -> bool:
    return any(not folder or source.startswith(folder + "/") for source in ctx.roctx_sources)


def _recipes(lines: list[str]) -> list[tuple[int, str]]:
    """(last physical line, the whole command) of each recipe line, continuations joined."""
    found: list[tuple[int, str]] = []
    index = 0
    while index < len(lines):
        if not lines[index].startswith("\t"):
            index += 1
            continue
        command = lines[index]
        while command.rstrip().endswith("\\") and index + 1 < len(lines):
            index += 1
            command = command.rstrip()[:-1] + " " + lines[index]
        if not command.strip().startswith("#"):
            found.append((index + 1, command))
        index += 1
    return found

"""``#include`` rewriting, hipify-clang style.

* A CUDA header becomes its HIP header, keeping the ``<>``/``""`` style.
* The main headers (``cuda.h``, ``cuda_runtime.h``) become ``hip/hip_runtime.h`` once;
  later includes that would repeat an already emitted HIP header are dropped, as are
  CUDA headers HIP has no counterpart for (``device_launch_parameters.h``).
* A quoted include naming a file that exists next to the includer is the project's own
  header (a local ``"cuda.h"``) and is left alone.
* Every translated file without a HIP runtime include gets ``#include <hip/hip_runtime.h>``
  (nvcc includes the CUDA runtime implicitly) where hipify-clang puts it: after ``#pragma once``
  or the include guard's ``#ifndef``, else just before the first ``#include``, else at the top.
  Before the first include matters: HIP's cooperative groups header needs the runtime first.
"""
from __future__ import annotations

import bisect
import re
from pathlib import Path

from translator.mapping import ApiMapping
from translator.rules import Target, target_name

# ROCm 6 installs library headers in their own folders only (HIPIFY's tables name the old flat paths).
ROCM6_HEADERS = {
    name: f"{name.removesuffix('.h')}/{name}"
    for name in ("hipblas.h", "hipsparse.h", "hipsolver.h", "hipblaslt.h", "rocblas.h", "rocsparse.h", "hipfft.h")
}
ROCM6_HEADERS["hiprtc.h"] = "hip/hiprtc.h"

INCLUDE = re.compile(r'^([ \t]*#[ \t]*include[ \t]*)([<"])([^>"\n]+)([>"])(.*)$', re.DOTALL)
RUNTIME_HEADER = "hip/hip_runtime.h"
RUNTIME_INCLUDE = f"#include <{RUNTIME_HEADER}>"
# Comments and literals: a directive inside one is not a directive.
SPACE_OR_COMMENTS = re.compile(r"(?:\s+|//[^\n]*|/\*.*?\*/)*", re.DOTALL)
NOT_CODE = re.compile(r"""//[^\n]*|/\*.*?\*/|"(?:\\.|[^"\\\n])*"|'(?:\\.|[^'\\\n])*'""", re.DOTALL)
DIRECTIVE = re.compile(r"^[ \t]*(#)[ \t]*(\w+)[ \t]*(\w*)", re.MULTILINE)


class IncludeState:
    __slots__ = ("includer", "target", "emitted", "converted", "unsupported", "kept_local")  # plain: start-up

    def __init__(self, includer: str, target: Target) -> None:
        self.includer = includer  # the including file's path ("" when unknown): a quoted include is looked for beside it
        self.target = target
        self.emitted: set[str] = set()
        self.converted = 0
        self.unsupported: list[str] = []
        self.kept_local: list[str] = []


def rewrite_include(line: str, headers: dict[str, ApiMapping], state: IncludeState) -> str | None:
    """The new directive text, "" to drop the line, or None to leave it as is."""
    match = INCLUDE.match(line)
    if match is None:
        return None
    lead, opener, name, closer, tail = match.groups()
    mapping = headers.get(name)
    if mapping is None:
        if name.startswith(("hip/", "hip_")):
            state.emitted.add(name)
        return None
    if opener == '"' and state.includer and (Path(state.includer).parent / name).is_file():
        state.kept_local.append(name)
        return None
    target = target_name(mapping, state.target)
    if mapping.status == "unsupported" or target is None:
        if mapping.status == "unsupported":
            state.unsupported.append(name)
            return None
        state.converted += 1
        return ""
    if state.target.header_folders:
        target = ROCM6_HEADERS.get(target, target)
    state.converted += 1
    if target in state.emitted:
        return ""
    state.emitted.add(target)
    return f"{lead}{opener}{target}{closer}{tail}"


def _directives(text: str) -> list[re.Match[str]]:
    """Directive lines of ``text`` that are code (not inside a comment)."""
    found = list(DIRECTIVE.finditer(text))
    if not found:
        return found
    spans = [m.span() for m in NOT_CODE.finditer(text)]
    starts = [start for start, _ in spans]

    def in_comment(position: int) -> bool:
        index = bisect.bisect_right(starts, position) - 1
        return index >= 0 and position < spans[index][1]

    return [m for m in found if not in_comment(m.start(1))]


def _only_comments(text: str, start: int, end: int) -> bool:
    matched = SPACE_OR_COMMENTS.match(text, start, end)
    return matched is not None and matched.end() == end


def runtime_include_position(text: str) -> int:
    """Where hipify-clang inserts the runtime include into ``text``."""
    directives = _directives(text)
    places = [m.end(3) for m in directives if m.group(2) == "pragma" and m.group(3) == "once"][:1]
    guard = _include_guard(text, directives)
    if guard is not None:
        places.append(guard)
    if places:
        return min(places)
    includes = [m.start(1) for m in directives if m.group(2) == "include"]
    return includes[0] if includes else 0


def _include_guard(text: str, directives: list[re.Match[str]]) -> int | None:
    """End of the guard name in ``#ifndef GUARD`` / ``#define GUARD`` ... ``#endif`` (nothing outside)."""
    conditionals = [m for m in directives if m.group(2) not in ("pragma", "include")]
    if len(conditionals) < 3 or not _only_comments(text, 0, conditionals[0].start()):
        return None
    first, second, last = conditionals[0], conditionals[1], conditionals[-1]
    if first.group(2) != "ifndef" or second.group(2) != "define" or first.group(3) != second.group(3):
        return None
    end_of_last = text.find("\n", last.end())
    if last.group(2) != "endif" or (end_of_last >= 0 and not _only_comments(text, end_of_last, len(text))):
        return None
    return first.end(3)


def insert_runtime_include(text: str, header: str = RUNTIME_HEADER) -> str:
    position = runtime_include_position(text)
    line = f"#include <{header}>"
    if _at_line_start(text, position):
        return text[:position] + line + "\n" + text[position:]
    return text[:position] + "\n" + line + text[position:]


def _at_line_start(text: str, position: int) -> bool:
    return not text[text.rfind("\n", 0, position) + 1:position].strip()

"""Find CUDA-looking names a project defines itself (its own copy of an enum, a compat macro).

Translating them would turn the project's definition into a clashing redefinition of
a HIP name, so they are left alone everywhere in the tree and reported as kept.
"""
from __future__ import annotations

import re
from collections.abc import Container

ENUMERATOR = re.compile(r"(?:^|,)\s*(\w+)")
# ``#define __CUDACC__`` pretends to be nvcc; it is translated (to ``__HIPCC__``), never kept.
COMPILER_MACROS = frozenset({"__CUDACC__", "__NVCC__", "__CUDA_ARCH__", "__CUDACC_RTC__"})


# Any defined name; only those in ``interesting`` are kept. (Embedding the 3,000-character candidate
# pattern here made these slower to compile, at every start, than to run.) Each pattern starts with a
# literal, so the regex engine jumps between occurrences instead of trying every position.
DEFINE = re.compile(r"#[ \t]*define[ \t]+(\w+)")  # at a line's start: checked in defines()
RECORDS = {keyword: re.compile(keyword + rf"(?<!\w{keyword})[ \t]+(\w+)\s*(?::[^{{;]*)?\{{")
           for keyword in ("struct", "class", "union")}
TYPEDEF = re.compile(r"typedef(?<!\wtypedef)\b([^;{}]*)[;{]")
TYPEDEF_TAIL = re.compile(r"\}\s*(\w+)\s*;")


ENUM = re.compile(r"enum(?<!\wenum)\s+(?:class\s+|struct\s+)?(\w*)\s*(?::[^{;]*)?\{([^}]*)\}\s*(\w*)")


def defines(text: str) -> set[str]:
    """Names of ``#define`` lines. The pattern starts with "#" so the regex engine jumps between them; a
    leading ``^`` with MULTILINE would make it try every position (10x slower on a typical file)."""
    found: set[str] = set()
    for match in DEFINE.finditer(text):
        line_start = text.rfind("\n", 0, match.start()) + 1
        if not text[line_start:match.start()].strip():
            found.add(match.group(1))
    return found


def defined_names(text: str, interesting: Container[str]) -> set[str]:
    """Names in ``interesting`` that ``text`` defines."""
    found: set[str] = defines(text)
    for keyword, record in RECORDS.items():
        if keyword in text:
            found.update(record.findall(text))
    if "typedef" in text:
        for body in TYPEDEF.findall(text):
            words = body.rsplit(None, 1)
            last = words[-1].lstrip("*&") if words else ""
            if last.isidentifier():
                found.add(last)
        found.update(TYPEDEF_TAIL.findall(text))
    if "enum" in text:
        for match in ENUM.finditer(text):
            found.update((match.group(1), match.group(3)))
            found.update(ENUMERATOR.findall(match.group(2)))
    return {name for name in found if name and name in interesting and name not in COMPILER_MACROS}

"""Wave-size fixes as guarded source edits, for builds whose translation is not ours.

A CMake or Make delivery translates the sources with our engine at build time, wave-size fixes included.
A ``setup.py`` delivery leaves that to ROCm PyTorch's ``BuildExtension`` (PyTorch's own hipify), which
renames APIs but knows nothing of 64-lane wavefronts. So the certain fixes of the engine's wavefront
scan (``translator.wavefront``: full masks made 64-bit, ballots counted in 64 bits) go into the CUDA
sources themselves, each run of changed lines as

    #if defined(__HIP_PLATFORM_AMD__)  // ...
    <the fixed lines>
    #else
    <the original lines>
    #endif

so a CUDA compile sees exactly the lines it saw before. The fixes keep every line (the scan's contract),
so the runs are found line by line. A run inside a macro continued over several lines cannot carry an
``#if``: it is left as it was, with a note.
"""
from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from translator.options import TranslateOptions
from translator.wavefront import TreeFacts, file_facts
from translator.wavefront.translation import prepare

GUARD_OPEN = "#if defined(__HIP_PLATFORM_AMD__)  // AMD wavefronts have 64 lanes (Migrator's wave-size fix)"
DEVICE_SUFFIXES = (".cu", ".cuh", ".h", ".hpp", ".hh", ".inl", ".cpp", ".cc", ".cxx")


@dataclass(frozen=True)
class GuardedFile:
    path: str
    text: str
    fixes: int  # runs of lines guarded
    notes: tuple[str, ...] = ()


def tree_facts(tree: Path, paths: Iterable[str]) -> TreeFacts:
    """The constants and device macros of ``paths`` (what the fixes of one file may depend on)."""
    return TreeFacts.of(file_facts((tree / path).read_text(encoding="utf-8", errors="replace")) for path in paths)


def guard_wave_fixes(path: str, text: str, facts: TreeFacts) -> GuardedFile | None:
    """``text`` with each run of lines the certain wave-size fixes change behind the AMD test; None
    when no fix applies (or a file already guarded: its fixes sit in the branch CUDA never reads)."""
    if GUARD_OPEN in text:
        return None
    fixed, _hazards = prepare(text, TranslateOptions(wavefront_facts=facts))
    if fixed == text:
        return None
    before, after = text.splitlines(keepends=True), fixed.splitlines(keepends=True)
    if len(before) != len(after):  # the scan's fixes never add or remove a line; anything else is not ours to guard
        return None
    out: list[str] = []
    notes: list[str] = []
    fixes = 0
    index = 0
    while index < len(before):
        if before[index] == after[index]:
            out.append(before[index])
            index += 1
            continue
        end = index
        while end < len(before) and before[end] != after[end]:
            end += 1
        if _continued(before, index, end):
            notes.append(f"{path}:{index + 1}: a wave-size fix inside a macro continued over lines was not "
                         "guarded; the AMD build needs it by hand")
            out += before[index:end]
        else:
            out += [GUARD_OPEN + "\n", *_ended(after[index:end]), "#else\n", *_ended(before[index:end]), "#endif\n"]
            fixes += 1
        index = end
    if not fixes:
        return GuardedFile(path, text, 0, tuple(notes))
    return GuardedFile(path, "".join(out), fixes, tuple(notes))


def _continued(lines: list[str], start: int, end: int) -> bool:
    """A line of the run, or the one before it, ends with a backslash (an ``#if`` cannot go there)."""
    first = max(start - 1, 0)
    return any(line.rstrip("\r\n").endswith("\\") for line in lines[first:end])


def _ended(lines: list[str]) -> list[str]:
    return [line if line.endswith("\n") else line + "\n" for line in lines]

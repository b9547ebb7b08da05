"""Delivery size: lines changed by the single-source change against the converted copy, per fixture.

Run: .venv/bin/python bench/delivery_size_bench.py [TREE ...]   (extra CUDA trees, e.g. a checkout of a public code base)

For each CUDA fixture (the delivery tests' CMake, Makefile and setup.py projects and the build-system fixtures
with a top-level CMakeLists.txt or Makefile) the tree is translated with the engine
(``translator.tree.translate_tree``, default options, as the hipify stage does), then both changes are
made side by side from the same two trees (``worker.delivery``) and measured as a unified diff against
the CUDA tree: files touched, lines added and removed, how many of the touched files are the
project's own sources (the single-source change touches none), the lines that arrive as new files
(``rocm/``: the same ~120-150 lines for every project) and the lines changed in files the team already
has. Prints one row per fixture and mode and the ratio of the last column, copy / single source.
No Django, no database.
"""
from __future__ import annotations

import difflib
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from translator.tree import translate_tree  # noqa: E402
from worker.delivery.converted import converted_copy  # noqa: E402
from worker.delivery.model import Change  # noqa: E402
from worker.delivery.singlesource import single_source  # noqa: E402

FIXTURES = [ROOT / "tests/fixtures/delivery/cmake_saxpy", ROOT / "tests/fixtures/delivery/make_histogram",
            ROOT / "tests/fixtures/delivery/setup_rowsum",
            ROOT / "tests/fixtures/buildsystems/cmake_samples", ROOT / "tests/fixtures/buildsystems/driver_tool"]
SOURCES = (".cu", ".cuh", ".cpp", ".cc", ".cxx", ".c", ".h", ".hpp", ".hip")


def measure(change: Change, tree: Path) -> tuple[int, int, int, int, int]:
    """(files, lines added, lines removed, own sources touched, lines added as new files)."""
    added = removed = sources = new = 0
    for item in change.files:
        exists = (tree / item.path).is_file()
        before = (tree / item.path).read_bytes() if exists else b""
        new += 0 if exists else len((item.data or b"").splitlines())
        after = item.data or b""
        for line in difflib.unified_diff(before.decode(errors="replace").splitlines(),
                                         after.decode(errors="replace").splitlines(), lineterm=""):
            if line.startswith("+") and not line.startswith("+++"):
                added += 1
            elif line.startswith("-") and not line.startswith("---"):
                removed += 1
        sources += item.path.endswith(SOURCES) and not item.path.startswith("rocm/")
    return len(change.files), added, removed, sources, new


def main() -> None:
    trees = FIXTURES + [Path(arg).resolve() for arg in sys.argv[1:]]
    print(f"{'fixture':<16} {'mode':<14} {'files':>5} {'+lines':>7} {'-lines':>7} {'sources':>7} "
          f"{'in new files':>12} {'existing lines changed':>22}")
    for fixture in trees:
        with tempfile.TemporaryDirectory() as scratch:
            translated = Path(scratch) / "hip"
            translate_tree(fixture, translated)
            rows = {"single-source": measure(single_source(fixture, translated), fixture),
                    "copy": measure(converted_copy(fixture, translated), fixture)}
        for mode, (files, added, removed, sources, new) in rows.items():
            print(f"{fixture.name:<16} {mode:<14} {files:>5} {added:>7} {removed:>7} {sources:>7} {new:>12} "
                  f"{added - new + removed:>22}")
        single = rows["single-source"][1] - rows["single-source"][4] + rows["single-source"][2]
        copy = rows["copy"][1] - rows["copy"][4] + rows["copy"][2]
        print(f"{'':<16} lines changed in the team's existing files, copy / single source: {copy / max(single, 1):.1f}")


if __name__ == "__main__":
    main()

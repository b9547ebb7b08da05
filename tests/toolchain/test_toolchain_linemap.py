"""Mapping translated lines back to the original CUDA files."""
from __future__ import annotations

from pathlib import Path

from worker.toolchain.linemap import LineMap, TreeLineMap

ORIGINAL = "#include <cuda_runtime.h>\nint a;\ncudaMalloc(&p, 4);\nint b;\n"
TRANSLATED = "#include <hip/hip_runtime.h>\n#include \"compat.h\"\nint a;\nhipMalloc(&p, 4);\nint b;\n"


def test_unchanged_lines_map_exactly_after_an_inserted_include() -> None:
    line_map = LineMap(ORIGINAL, TRANSLATED)
    assert [line_map.original_line(n) for n in (3, 5)] == [2, 4]
    assert line_map.is_exact(3) and not line_map.is_exact(4)


def test_rewritten_lines_map_to_the_line_they_replace() -> None:
    line_map = LineMap(ORIGINAL, TRANSLATED)
    assert line_map.original_line(4) == 3
    assert line_map.original_line(1) == 1


def test_lines_past_the_end_are_unknown() -> None:
    assert LineMap(ORIGINAL, TRANSLATED).original_line(40) == 0


def test_the_tree_map_follows_renames_and_skips_system_headers(tmp_path: Path) -> None:
    (tmp_path / "hip/src").mkdir(parents=True)
    (tmp_path / "cuda/src").mkdir(parents=True)
    (tmp_path / "hip/src/k.hip").write_text(TRANSLATED)
    (tmp_path / "cuda/src/k.cu").write_text(ORIGINAL)
    tree_map = TreeLineMap(tmp_path / "hip", tmp_path / "cuda")
    assert tree_map.map("./src/k.hip", 5) == ("src/k.cu", 4)
    assert tree_map.map(str(tmp_path / "hip/src/k.hip"), 3) == ("src/k.cu", 2)
    assert tree_map.map("/usr/include/hip/hip_runtime.h", 10) == ("", 0)


def test_the_tree_map_prefers_an_explicit_rename(tmp_path: Path) -> None:
    (tmp_path / "hip").mkdir()
    (tmp_path / "cuda").mkdir()
    (tmp_path / "hip/kernels.hip").write_text(TRANSLATED)
    (tmp_path / "cuda/old_name.cu").write_text(ORIGINAL)
    tree_map = TreeLineMap(tmp_path / "hip", tmp_path / "cuda", {"kernels.hip": "old_name.cu"})
    assert tree_map.map("kernels.hip", 4) == ("old_name.cu", 3)

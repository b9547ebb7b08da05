"""Whole trees: full copy, selection, excludes, encodings, renames, determinism."""
from __future__ import annotations

import json
from pathlib import Path

from translator import TranslateOptions, translate_tree

KERNEL = "#include <cuda_runtime.h>\n__global__ void k() {}\nvoid go() { k<<<1, 1>>>(); cudaDeviceSynchronize(); }\n"


def make_tree(root: Path) -> None:
    (root / "src").mkdir(parents=True)
    (root / "third_party" / "lib").mkdir(parents=True)
    (root / "src" / "k.cu").write_text(KERNEL)
    (root / "src" / "host.cpp").write_text("#include <cuda_runtime.h>\nvoid f() { cudaFree(0); }\n")
    (root / "src" / "plain.cpp").write_text("int main() { return 0; }\n")
    (root / "src" / "empty.cuh").write_text("")
    (root / "src" / "latin1.cu").write_bytes(b"// caf\xe9\nvoid f() { cudaDeviceReset(); }\n")
    (root / "third_party" / "lib" / "v.cu").write_text(KERNEL)
    (root / "README.md").write_text("cudaMalloc docs\n")
    (root / "data.bin").write_bytes(bytes(range(256)))
    (root / "src" / "mine.h").write_text("typedef enum cudaError_enum { cudaSuccess = 0 } cudaError_t;\n")
    (root / "src" / "use.cu").write_text('#include "mine.h"\ncudaError_t ok() { return cudaSuccess; }\n')


def test_it_writes_a_full_translated_copy(tmp_path: Path) -> None:
    make_tree(tmp_path / "in")
    tree = translate_tree(tmp_path / "in", tmp_path / "out", TranslateOptions(target_hip_version="5.2"))
    out = tmp_path / "out"
    assert (out / "src" / "k.cu").read_text() == KERNEL.replace("cuda_runtime.h", "hip/hip_runtime.h").replace(
        "cudaDeviceSynchronize", "hipDeviceSynchronize")
    assert (out / "src" / "host.cpp").read_text() == "#include <hip/hip_runtime.h>\nvoid f() { hipFree(0); }\n"
    for same in ("src/plain.cpp", "src/empty.cuh", "third_party/lib/v.cu", "README.md", "data.bin"):
        assert (out / same).read_bytes() == (tmp_path / "in" / same).read_bytes()
    statuses = {f.path: f.status for f in tree.files}
    assert statuses["third_party/lib/v.cu"] == "skipped" and statuses["README.md"] == "copied"
    assert statuses["src/plain.cpp"] == "unchanged" and statuses["src/k.cu"] == "translated"
    json.dumps(tree.to_dict())


def test_it_translates_non_utf8_files_keeping_their_bytes(tmp_path: Path) -> None:
    make_tree(tmp_path / "in")
    tree = translate_tree(tmp_path / "in", tmp_path / "out", TranslateOptions(target_hip_version="5.2"))
    data = (tmp_path / "out" / "src" / "latin1.cu").read_bytes()
    assert data == b'#include <hip/hip_runtime.h>\n// caf\xe9\nvoid f() { hipDeviceReset(); }\n'
    entry = next(f for f in tree.files if f.path == "src/latin1.cu")
    assert entry.warnings == ["not valid UTF-8: translated with the original bytes kept"]


def test_it_keeps_names_the_project_defines_in_an_included_file(tmp_path: Path) -> None:
    make_tree(tmp_path / "in")
    translate_tree(tmp_path / "in", tmp_path / "out", TranslateOptions(target_hip_version="5.2"))
    original = (tmp_path / "in" / "src" / "use.cu").read_text()
    assert (tmp_path / "out" / "src" / "use.cu").read_text() == "#include <hip/hip_runtime.h>\n" + original


def test_it_renames_cu_files_when_asked_and_records_the_map(tmp_path: Path) -> None:
    make_tree(tmp_path / "in")
    options = TranslateOptions(target_hip_version="5.2", rename_cu_to_hip=True)
    tree = translate_tree(tmp_path / "in", tmp_path / "out", options)
    assert (tmp_path / "out" / "src" / "k.hip").is_file() and not (tmp_path / "out" / "src" / "k.cu").exists()
    assert tree.renames["src/k.cu"] == "src/k.hip"
    assert "third_party/lib/v.cu" not in tree.renames


def test_it_is_deterministic_and_reports_progress(tmp_path: Path) -> None:
    make_tree(tmp_path / "in")
    seen: list[tuple[int, int]] = []
    lines: list[str] = []
    first = translate_tree(tmp_path / "in", tmp_path / "a", TranslateOptions(target_hip_version="5.2"),
                           progress=lambda done, total: seen.append((done, total)), log=lines.append)
    second = translate_tree(tmp_path / "in", tmp_path / "b", TranslateOptions(target_hip_version="5.2"))
    strip = {"source": "", "destination": ""}
    assert {**first.to_dict(), **strip} == {**second.to_dict(), **strip}
    assert seen[-1] == (10, 10) and all(line.endswith("\n") for line in lines)
    assert any("src/k.cu" in line for line in lines)
    totals = first.totals()
    assert totals["converted"] == {"header": 2, "kernel-launch": 1, "memory": 1, "device": 2}

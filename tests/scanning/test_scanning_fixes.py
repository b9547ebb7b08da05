from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from worker.scanning.findings import fix_tree, scan_build_files
from worker.scanning.fixes import apply_fixes
from worker.scanning.model import Finding

WriteTree = Callable[[dict[str, str]], Path]

TREE = {
    "CMakeLists.txt": """
        cmake_minimum_required(VERSION 3.21)
        project(demo LANGUAGES CXX CUDA)
        find_package(CUDA REQUIRED)
        set(CMAKE_CUDA_STANDARD 17)
        include_directories(/usr/local/cuda/include)
        cuda_add_executable(demo main.cu)
        target_link_libraries(demo cublas curand)
        """,
    "Makefile": """
        NVCC = /usr/local/cuda/bin/nvcc
        FLAGS = -O2 -arch=sm_75 --use_fast_math --expt-extended-lambda -rdc=true
        LIBS = -L/usr/local/cuda/lib64 -lcudart -lcublas -lcudnn
        app: app.cu
        \tnvcc $(FLAGS) -o app app.cu $(LIBS)
        k.ptx: k.cu
        \tnvcc -ptx k.cu
        """,
    "run.sh": """
        #!/bin/sh
        CUDA_VISIBLE_DEVICES=0 python train.py
        docker run --gpus=all --rm img
        """,
    "setup.py": """
        from torch.utils.cpp_extension import CUDAExtension
        ext = CUDAExtension("x", ["x.cu"], libraries=["cublas"], extra_link_args=["-lcurand"],
                            extra_compile_args={"nvcc": ["--use_fast_math"]})
        """,
}


def test_it_applies_safe_fixes_in_place(write_tree: WriteTree) -> None:
    tree = write_tree(TREE)
    applied = apply_fixes(tree, scan_build_files(tree, ()), set())
    assert applied
    cmake = (tree / "CMakeLists.txt").read_text()
    assert "project(demo LANGUAGES CXX HIP)" in cmake and "find_package(hip REQUIRED)" in cmake
    assert "add_executable(demo main.cu)" in cmake and "target_link_libraries(demo hipblas hiprand)" in cmake
    assert "set(CMAKE_HIP_STANDARD 17)" in cmake
    makefile = (tree / "Makefile").read_text().splitlines()
    assert makefile[0] == "NVCC = /opt/rocm/bin/hipcc"
    assert makefile[1] == "FLAGS = -O2 --offload-arch=gfx90a --offload-arch=gfx942 --offload-arch=gfx1100 -ffast-math  -fgpu-rdc"
    assert makefile[2] == "LIBS = -L/opt/rocm/lib -lamdhip64 -lhipblas -lMIOpen"
    assert makefile[4] == "\thipcc $(FLAGS) -o app app.cu $(LIBS)"
    script = (tree / "run.sh").read_text()
    assert "HIP_VISIBLE_DEVICES=0 python train.py" in script
    assert "docker run --device=/dev/kfd --device=/dev/dri --group-add video --rm img" in script
    setup = (tree / "setup.py").read_text()
    assert 'libraries=["hipblas"], extra_link_args=["-lhiprand"]' in setup
    assert '{"nvcc": ["-ffast-math"]}' in setup


def test_fixes_are_idempotent(write_tree: WriteTree) -> None:
    tree = write_tree(TREE)
    apply_fixes(tree, scan_build_files(tree, ()), set())
    snapshot = {path: path.read_bytes() for path in tree.rglob("*") if path.is_file()}
    rescan = scan_build_files(tree, ())
    assert [f for f in rescan if f.fixable] == []
    assert apply_fixes(tree, rescan, set()) == []
    assert {path: path.read_bytes() for path in tree.rglob("*") if path.is_file()} == snapshot
    assert any(f.rule_id == "make.nvcc-only-flag" and f.text == "-ptx" for f in rescan)  # manual steps remain listed


def test_stale_findings_change_nothing(write_tree: WriteTree) -> None:
    tree = write_tree(TREE)
    findings = scan_build_files(tree, ())
    apply_fixes(tree, findings, set())
    snapshot = (tree / "Makefile").read_text()
    assert apply_fixes(tree, findings, set()) == []
    assert (tree / "Makefile").read_text() == snapshot


def test_disabled_rules_are_left_alone(write_tree: WriteTree) -> None:
    tree = write_tree(TREE)
    applied = apply_fixes(tree, scan_build_files(tree, ()), {"make.cuda-link-library", "run-config.cuda-visible-devices"})
    assert not any(fix.rule_id in ("make.cuda-link-library", "run-config.cuda-visible-devices") for fix in applied)
    assert "-lcudart -lcublas -lcudnn" in (tree / "Makefile").read_text()
    assert "CUDA_VISIBLE_DEVICES=0" in (tree / "run.sh").read_text()


def test_applied_fix_records_the_line_before_and_after(write_tree: WriteTree) -> None:
    tree = write_tree({"build.sh": "nvcc -o a a.cu\n"})
    [fix] = apply_fixes(tree, scan_build_files(tree, ()), set())
    assert (fix.rule_id, fix.file, fix.line, fix.before, fix.after) == ("shell.nvcc", "build.sh", 1, "nvcc -o a a.cu", "hipcc -o a a.cu")


def test_fix_tree_rescans_a_translated_copy_and_fixes_it(write_tree: WriteTree) -> None:
    tree = write_tree({"Makefile": "LIBS = -lcublas\n", "third_party/Makefile": "LIBS = -lcublas\n"})
    [fix] = fix_tree(tree, ("third_party/**",), set())
    assert (fix.file, fix.after) == ("Makefile", "LIBS = -lhipblas")
    assert (tree / "third_party" / "Makefile").read_text() == "LIBS = -lcublas\n"


def test_findings_round_trip_through_their_stored_form(write_tree: WriteTree) -> None:
    tree = write_tree(TREE)
    findings = scan_build_files(tree, ())
    assert [Finding.from_dict(f.to_dict()) for f in findings] == findings


def test_it_never_writes_outside_the_tree(write_tree: WriteTree, tmp_path: Path) -> None:
    tree = write_tree({"Makefile": "LIBS = -lcublas\n"})
    outside = tmp_path / "outside.mk"
    outside.write_text("LIBS = -lcublas\n")
    [finding] = scan_build_files(tree, ())
    escaped = Finding.from_dict({**finding.to_dict(), "file": "../outside.mk"})
    assert apply_fixes(tree, [escaped], set()) == []
    assert outside.read_text() == "LIBS = -lcublas\n"

"""Toolchain detection and source-tree discovery (no compiles)."""
from __future__ import annotations

from pathlib import Path

import pytest

from worker.toolchain.detect import detect_toolchain
from worker.toolchain.link import inferred_libraries
from worker.toolchain.sources import detect_cxx_std, scan_tree

# (name, HIP, clang major, hipcc package, RCCL present): what each root's own files say
ROOTS = [("rocm-7.2", "7.2", "22", "7.2", True), ("rocm-6.4", "6.4", "21", "7.0", False)]


def test_the_default_is_the_newest_root_installed() -> None:
    assert detect_toolchain().name == "rocm-7.2"


@pytest.mark.parametrize(("name", "hip", "clang", "hipcc_package", "has_rccl"), ROOTS)
def test_it_describes_the_toolchain_root_from_its_own_files(
    name: str, hip: str, clang: str, hipcc_package: str, has_rccl: bool
) -> None:
    toolchain = detect_toolchain(name)
    data = toolchain.to_dict()
    assert data["name"] == name and data["available"] is True and data["hipcc"] == "/usr/bin/hipcc"
    assert str(data["hipcc_version"]).startswith(hip) and toolchain.hip_version == hip
    assert str(data["clang_version"]).startswith(f"{clang}.") and data["clang"] == f"/usr/lib/llvm-{clang}/bin/clang++"
    assert (data["rocm_path"], data["hip_platform"]) == ("/usr", "amd")
    assert {"gfx90a", "gfx942", "gfx1100"} <= set(toolchain.offload_targets)
    packages = dict(toolchain.packages)
    assert packages["hipcc"].startswith(hipcc_package) and packages["libamdhip64-dev"].startswith(hip)


@pytest.mark.parametrize(("name", "hip", "clang", "hipcc_package", "has_rccl"), ROOTS)
def test_it_lists_the_libraries_the_root_holds_and_those_it_lacks(
    name: str, hip: str, clang: str, hipcc_package: str, has_rccl: bool
) -> None:
    libraries = {lib.name: lib for lib in detect_toolchain(name).libraries}
    for library in ("hipBLAS", "hipBLASLt", "hipSOLVER", "hipFFT", "hipSPARSE", "hipRAND", "hipCUB", "rocThrust", "MIOpen"):
        assert libraries[library].installed, library
    assert libraries["hipBLAS"].library_found == "/usr/lib/x86_64-linux-gnu/libhipblas.so"
    assert libraries["RCCL"].installed is has_rccl and libraries["roctracer/roctx"].installed  # roctx in both
    assert libraries["RCCL"].rocm_package == "rccl-dev"
    assert not libraries["hipTensor"].installed and libraries["hipTensor"].package == "hiptensor-dev"  # in neither root


def test_an_unknown_toolchain_is_reported_not_guessed() -> None:
    toolchain = detect_toolchain("rocm-9.9")
    assert not toolchain.available and "rocm-9.9" in toolchain.error
    assert "rocm-6.4" in toolchain.error and "rocm-7.2" in toolchain.error  # the roots there are


def write(root: Path, files: dict[str, str]) -> None:
    for relative, text in files.items():
        (root / relative).parent.mkdir(parents=True, exist_ok=True)
        (root / relative).write_text(text)


def test_it_compiles_every_source_but_not_headers_or_excluded_dirs(tmp_path: Path) -> None:
    write(tmp_path, {
        "a.cu": "int x;", "b.cpp": "#include <hip/hip_runtime.h>\n", "c.cpp": "int main() { return 0; }",
        "d.cuh": "__global__ void k();", "third_party/e.cu": "", "lib/include/pkg/p.h": "",
        "src/f.hip": '#include "pkg/p.h"\n#include "local.h"\n', "src/local.h": "",
    })
    tree = scan_tree(tmp_path, exclude_globs=("third_party/**",))
    assert tree.translation_units == ["a.cu", "b.cpp", "c.cpp", "src/f.hip"]
    assert tree.include_dirs == ["lib/include"]
    assert tree.include_closure("src/f.hip") == (["lib/include/pkg/p.h", "src/local.h"], False)


def test_it_takes_the_dialect_from_nvcc_flags_else_defaults_to_cxx17(tmp_path: Path) -> None:
    assert detect_cxx_std(tmp_path) == "c++17"
    (tmp_path / "Makefile").write_text("NVCCFLAGS = -O2 -std=c++20 -arch=sm_80\n")
    assert detect_cxx_std(tmp_path) == "c++20"


def test_it_infers_rocm_libraries_from_translated_includes(tmp_path: Path) -> None:
    write(tmp_path, {"r.hip": "#include <hiprand/hiprand.h>\n#include <hipsparse/hipsparse.h>\n#include <hipcub/hipcub.hpp>\n"})
    assert inferred_libraries(tmp_path) == ["hiprand", "hipsparse"]


def test_an_unpacked_official_rocm_image_can_be_registered_as_a_toolchain(tmp_path: Path) -> None:
    import subprocess

    from worker.toolchain.roots import discover_roots

    image = tmp_path / "unpacked"
    (image / "opt/rocm/bin").mkdir(parents=True)
    (image / "opt/rocm/include/hip").mkdir(parents=True)
    (image / "etc").mkdir()
    (image / "etc/passwd").write_text("root:x:0:0::/root:/bin/sh\n")
    (image / "opt/rocm/bin/hipcc").write_text("#!/bin/sh\n")
    (image / "opt/rocm/bin/hipcc").chmod(0o755)
    (image / "opt/rocm/include/hip/hip_version.h").write_text(
        "#define HIP_VERSION_MAJOR 6\n#define HIP_VERSION_MINOR 4\n#define HIP_VERSION_PATCH 43482\n"
        "hipError_t hipMalloc(void**, size_t);\n")
    store = tmp_path / "store"
    root_dir = Path(__file__).resolve().parents[2]
    subprocess.run([str(root_dir / "scripts/toolchain-root"), "register", "rocm-6.4-image", str(image)], check=True,
                   env={"PATH": "/usr/bin:/bin", "MIGRATOR_TOOLCHAIN_DIR": str(store)}, capture_output=True)
    [root] = discover_roots(store)
    assert (root.name, root.hip_version, root.suite) == ("rocm-6.4-image", "6.4.43482", "image")
    assert root.clang == "/opt/rocm/llvm/bin/clang++" and root.rocm_path == "/opt/rocm"
    assert "hipMalloc" in root.declared_identifiers() and not image.exists()

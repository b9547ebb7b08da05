"""Per-file mode reads the build files: each target's own sources, include dirs, defines and
libraries; Windows-only sources and system-header shadows stay out."""
from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from worker.toolchain.sources import build_units, is_windows_only, scan_tree

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "buildsystems"
WriteTree = Callable[[dict[str, str]], Path]


def _by_name(root: Path) -> dict[str, tuple[list[str], list[str], list[str], list[str]]]:
    return {u.name: (u.sources, u.include_dirs, u.defines, u.link_libraries) for u in build_units(root)}


def test_cmake_targets_bring_their_own_sources_dirs_and_libraries() -> None:
    units = _by_name(FIXTURES / "cmake_samples")
    sources, include_dirs, _, libraries = units["vectorScale"]
    assert sources == ["samples/vectorScale/vectorScale.cu", "samples/vectorScale/scale_kernels.cu",
                       "samples/vectorScale/reduce.cu"]  # variable, then target_sources
    assert include_dirs == ["common"] and libraries == []  # CUDA::cudart is linked by hipcc itself
    assert units["fftFilter"][0] == ["samples/fftFilter/filter.cu", "samples/fftFilter/main.cpp"]  # file(GLOB)
    assert units["fftFilter"][3] == ["hipfft"]


def test_make_targets_link_only_what_their_own_commands_link() -> None:
    units = _by_name(FIXTURES / "trainer")
    assert units["train_cpu"] == (["train_cpu.c"], [], [], ["m"])  # no GPU library for the C trainer
    assert units["train_gpu"][0] == ["train_gpu.cu"] and units["train_gpu"][3] == ["nvidia-ml"]
    heat = _by_name(FIXTURES / "rodinia_style")["heat"]
    assert heat[0] == ["cuda/heat/main.c", "cuda/heat/heat_kernel.cu"]  # through the object rules
    assert heat[3] == ["cudart", "m"]


def test_windows_only_sources_are_left_out() -> None:
    assert _by_name(FIXTURES / "driver_tool") == {"stress": (["stress-drv.cpp"], [], [], ["cuda"])}
    assert "win/stress-win.cpp" not in scan_tree(FIXTURES / "driver_tool").translation_units
    assert is_windows_only("src/a.cpp", "#include <windows.h>\n")
    assert not is_windows_only("src/a.cpp", "#ifdef _WIN32\n#include <windows.h>\n#endif\n#include <unistd.h>\n")


def test_a_project_shim_never_shadows_a_system_header() -> None:
    tree = scan_tree(FIXTURES / "trainer")
    assert "dev" not in tree.include_dirs  # dev/unistd.h is a Windows stand-in for <unistd.h>


def test_make_conditionals_follow_linux_and_static_values(write_tree: WriteTree) -> None:
    root = write_tree({"Makefile": (
        "USE_BLAS ?= 0\n"
        "LIBS = -lm\n"
        "ifeq ($(OS), Windows_NT)\n  CC := cl\nelse\n  CC := gcc\nendif\n"
        "ifeq ($(USE_BLAS), 1)\n  LIBS += -lcublas\nendif\n"
        "ifneq ($(shell which mpicc),)\n  LIBS += -lmpi\nendif\n"
        "app: app.c\n\t$(CC) -Iinclude -DFAST $^ $(LIBS) -o $@\n"
    ), "app.c": "int main(void) { return 0; }\n", "include/app.h": ""})
    assert _by_name(root) == {"app": (["app.c"], ["include"], ["FAST"], ["m", "mpi"])}


def test_build_files_never_lead_outside_the_tree(write_tree: WriteTree, tmp_path: Path) -> None:
    (tmp_path / "secret.cu").write_text("__global__ void k() {}\n")
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "CMakeLists.txt").write_text("add_executable(stolen ../secret.cu)\n")
    root = write_tree({
        "CMakeLists.txt": "add_subdirectory(../outside)\nadd_executable(app app.cu ../secret.cu)\n",
        "app.cu": "int main() { return 0; }\n",
        "sub/Makefile": "include ../../outside/evil.mk\nall: x.cu ../../secret.cu\n\thipcc $^ -o all\n",
        "sub/x.cu": "int main() { return 0; }\n",
    })
    assert _by_name(root) == {"app": (["app.cu"], [], [], [])}
    (root / "CMakeLists.txt").unlink()
    assert _by_name(root) == {"all": (["sub/x.cu"], [], [], [])}

"""Small projects of our own built for real by the toolchain root's make in the sandbox, each failing
for a known reason: the headline cause comes from the real output, and an undefined reference names
the source that defines the symbol and the build file that does not list it."""
from __future__ import annotations

from pathlib import Path

import pytest

from tests.outcomes.real_toolchain import require_root, run_in_root
from worker.toolchain.link_owners import find_definitions
from worker.toolchain.log_causes import LogContext, causes_from_log
from worker.toolchain.sources import build_units

RUNTIME = "#include <hip/hip_runtime.h>\n"
PROJECTS: dict[str, dict[str, str]] = {
    # the converted Makefile lists main.hip only: check.hip, which defines cudaCheck, is never compiled
    "dropped": {
        "Makefile": "app: main.o\n\thipcc main.o -o app\nmain.o: main.hip\n\thipcc --offload-arch=gfx90a -c main.hip -o main.o\n",
        "main.hip": RUNTIME + "void cudaCheck(hipError_t status, const char* what);\n"
                    "int main() { cudaCheck(hipDeviceSynchronize(), \"sync\"); return 0; }\n",
        "check.hip": RUNTIME + "#include <cstdio>\nvoid cudaCheck(hipError_t status, const char* what) {\n"
                     "  if (status != hipSuccess) std::printf(\"%s\\n\", what);\n}\n",
    },
    # the Makefile still calls nvcc
    "nvcc": {
        "Makefile": "app: kernel.hip\n\tnvcc -O2 -o app kernel.hip\n",
        "kernel.hip": RUNTIME + "__global__ void k(float* x) { x[0] = 1.0f; }\nint main() { return 0; }\n",
    },
    # a header of a library the toolchain does not have
    "boost": {
        "Makefile": "app: main.hip\n\thipcc --offload-arch=gfx90a -o app main.hip\n",
        "main.hip": RUNTIME + "#include <boost/program_options.hpp>\nint main() { return 0; }\n",
    },
}


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[Path, str]]:
    require_root()
    outputs: dict[str, tuple[Path, str]] = {}
    for name, files in PROJECTS.items():
        workspace = tmp_path_factory.mktemp(name)
        for relative, text in files.items():
            (workspace / relative).write_text(text)
        code, output = run_in_root(workspace, ["make", "-k", "-C", "/workspace"])
        assert code != 0, output
        outputs[name] = (workspace, output)
    return outputs


def _headline(workspace: Path, output: str) -> tuple[str, str]:
    units = [{"name": u.name, "build_file": u.build_file, "sources": u.sources} for u in build_units(workspace)]
    definitions = find_definitions(workspace, ["cudaCheck"])
    groups = causes_from_log(output, LogContext(build_units=tuple(units), definitions=definitions))
    return groups[0].kind, groups[0].reason


def test_a_source_the_build_files_do_not_list_is_named(built: dict[str, tuple[Path, str]]) -> None:
    workspace, output = built["dropped"]
    assert "undefined reference to `cudaCheck" in output or "undefined symbol: cudaCheck" in output
    kind, reason = _headline(workspace, output)
    assert kind == "build_configuration", reason
    assert "cudaCheck is defined in check.hip, which is not compiled" in reason and "Makefile" in reason


def test_a_makefile_calling_nvcc_is_build_configuration(built: dict[str, tuple[Path, str]]) -> None:
    assert _headline(*built["nvcc"]) == ("build_configuration", "the build files still call nvcc")


def test_a_library_header_the_toolchain_lacks_is_environment(built: dict[str, tuple[Path, str]]) -> None:
    kind, reason = _headline(*built["boost"])
    assert kind == "environment" and "boost" in reason

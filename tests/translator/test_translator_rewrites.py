"""Rewrites for CUDA constructs without a one-to-one HIP counterpart (translator.rewrites).

The fixtures in ``rewrite_fixtures/`` are our own code in the style of real projects (a stress tool on the
pre-4.0 launch API, a trainer on cooperative_groups/reduce.h and __ldcs, NVTX ranges, inline PTX...). They
are translated as the hipify stage does for the ROCm 7.2 root and compiled through the compile stage's
own sandboxed path, for every default target; the rest checks what the account says about each rewrite.
"""
from __future__ import annotations

from pathlib import Path

import pytest

from translator import TranslateOptions, translate_source, translate_tree
from translator.rewrites.port import project_license
from worker.project_settings import ProjectSettings
from worker.toolchain.compile import FileResult, compile_tree
from worker.toolchain.roots import ToolchainRoot, discover_roots

FIXTURES = Path(__file__).resolve().parent / "rewrite_fixtures"
DEFAULT_TARGETS = ("gfx90a", "gfx942", "gfx1100")
UNITS = sorted(p.relative_to(FIXTURES).as_posix() for p in FIXTURES.rglob("*") if p.suffix in (".cu", ".cpp"))
EXPECTED_RULES = {
    "cache_hints.cu": {"cache-hint-streaming", "cache-hint-plain"},
    "cg_reduce.cu": {"cg-reduce", "cg-tile-wavefront"},
    "legacy_launch.cpp": {"legacy-launch"},
    "nvtx.cpp": {"nvtx-roctx"},
    "intrinsics.cu": {"grid-constant", "nanosleep", "atomic-block-scope"},
    "ptx.cu": {"ptx-special-register", "ptx-bfe", "ptx-prmt", "ptx-lop3", "ptx-ld-nc", "ptx-fence"},
    "engine_mistakes.cu": {"spaced-launch", "extern-c-include", "hiprtc-options", "collapsed-overload"},
    "cuuuid.cpp": {"project-cuuuid"},
    "deviceptr.cpp": {"deviceptr-arithmetic", "cuda12-nearest", "cuda-version-condition"},
    "versions.cu": {"cuda-version-condition", "cuda-version-toolchain"},
    "libcu.cu": {"libcxx-std"},
}


def rocm72() -> ToolchainRoot:
    root = next((r for r in discover_roots() if r.name == "rocm-7.2"), None)
    if root is None:
        pytest.skip("no rocm-7.2 toolchain root installed (scripts/toolchain-root builds it)")
    return root


def hipify_options(root: ToolchainRoot) -> TranslateOptions:
    """What the hipify stage passes for this root: its HIP version and the names its headers declare."""
    return TranslateOptions(target_hip_version=root.short_version, declared_names=root.declared_identifiers())


@pytest.fixture(scope="module")
def compiled(tmp_path_factory: pytest.TempPathFactory) -> dict[str, FileResult]:
    root = rocm72()
    work = tmp_path_factory.mktemp("rewrites")
    translate_tree(FIXTURES, work / "hip", hipify_options(root))
    settings = ProjectSettings(toolchain=root.name, offload_archs=DEFAULT_TARGETS)
    report = compile_tree(work / "hip", work / "build", settings, work / "cache", jobs=2)
    assert not report.error, report.error
    return {result.path: result for result in report.files}


@pytest.mark.parametrize("unit", UNITS)
def test_the_rewritten_fixture_compiles_in_rocm72_for_every_default_target(compiled: dict[str, FileResult],
                                                                           unit: str) -> None:
    result = compiled[unit]
    assert result.status == "passed", result.output[-3000:]


@pytest.mark.parametrize("name", sorted(EXPECTED_RULES))
def test_each_rewrite_is_in_the_account_with_its_rule_id(name: str) -> None:
    path = FIXTURES / name
    account = translate_source(path.read_text(), str(path), TranslateOptions(target_hip_version="7.2")).account
    assert EXPECTED_RULES[name] <= {note["rule"] for note in account.rewrites}
    assert account.converted["rewrite"] > 0
    assert all(note["line"] > 0 and note["message"] for note in account.rewrites)


def test_an_inline_ptx_statement_without_a_rewrite_is_inventoried_with_its_line() -> None:
    source = ('__device__ void f(unsigned* p) {\n  unsigned v;\n'
              '  asm volatile("shfl.sync.bfly.b32 %0, %1, 1, 0x1f, 0xffffffff;" : "=r"(v) : "r"(*p));\n  *p = v;\n}\n')
    account = translate_source(source, "f.cu").account
    assert [(f["name"], f["line"]) for f in account.unconverted] == [("asm", 3)]
    assert "shfl.sync.bfly.b32" in account.unconverted[0]["reason"]
    assert translate_source(source, "f.cu").text.count("asm volatile") == 1


def test_libcu_headers_without_a_hip_counterpart_are_account_entries() -> None:
    source = "#include <cuda/barrier>\n#include <cuda/pipeline>\n#include <cuda/std/atomic>\n"
    account = translate_source(source, "p.cu").account
    assert [f["name"] for f in account.unconverted] == ["cuda/barrier", "cuda/pipeline", "cuda/std/atomic"]
    assert all(f["reason"].startswith("no-hip-counterpart: ") for f in account.unconverted)


def test_a_version_test_notes_the_cuda_version_assumed_and_the_branch_kept() -> None:
    source = "#if defined(CUDA_VERSION) && CUDA_VERSION >= 13000\nint a;\n#else\nint b;\n#endif\n"
    notes = translate_source(source, "v.cu", TranslateOptions(assumed_cuda_version="12.4")).account.rewrites
    assert [n["rule"] for n in notes] == ["cuda-version-condition"]
    assert "CUDA 12.4 assumed" in notes[0]["message"] and "the #else branch is kept" in notes[0]["message"]


def test_a_branch_the_target_hip_lacks_gives_way_to_one_it_offers() -> None:
    source = ("__device__ float f(float v) {\n#if CUDART_VERSION >= 9000\n  return __shfl_down_sync(__activemask(), v, 1);\n"
              "#else\n  return __shfl_down(v, 1);\n#endif\n}\n")
    new = translate_source(source, "w.cu", TranslateOptions(target_hip_version="7.2"))
    assert new.text.splitlines()[2] == "#if 12000 >= 9000"  # HIP 7.2 declares the warp-sync builtins
    old = translate_source(source, "w.cu", TranslateOptions(target_hip_version="6.4"))
    assert old.text.splitlines()[2].startswith("#if 0  // hip_port")  # 6.4 hides them: the legacy branch
    assert old.account.rewrites[0]["rule"] == "cuda-version-toolchain"
    assert old.account.unconverted == []  # the branch left out of the build is not left to port


def test_the_port_header_is_written_once_with_the_projects_license(tmp_path: Path) -> None:
    src = tmp_path / "src"
    (src / "kernels").mkdir(parents=True)
    (src / "LICENSE").write_text(MIT)
    (src / "kernels" / "copy.cu").write_text("__global__ void k(const float* a, float* b) { b[0] = __ldcs(a); }\n")
    (src / "main.cu").write_text("#include <cooperative_groups/reduce.h>\n")
    tree = translate_tree(src, tmp_path / "hip")
    header = (tmp_path / "hip" / "hip_port" / "cuda_port.h").read_text()
    assert tree.port_header == "hip_port/cuda_port.h"
    assert header.startswith("// SPDX-License-Identifier: MIT\n")
    assert "// ---- cache-hints ----" in header and "// ---- cg-reduce ----" in header and "legacy-launch" not in header
    assert '#include "../hip_port/cuda_port.h"' in (tmp_path / "hip" / "kernels" / "copy.cu").read_text()
    assert tree.totals()["rewrites"]["cg-reduce"] == 1


def test_without_a_license_file_the_sources_spdx_lines_decide(tmp_path: Path) -> None:
    (tmp_path / "a.cu").write_text("// SPDX-License-Identifier: Apache-2.0\n__global__ void k() {}\n")
    assert project_license(tmp_path, [tmp_path / "a.cu"]) == ("Apache-2.0", "the sources' SPDX-License-Identifier lines")
    assert project_license(tmp_path / "none", []) == ("", "")


def test_a_host_header_gets_the_api_header_not_the_runtime_header() -> None:
    text = translate_source("#pragma once\nvoid sync(cudaStream_t s);\n", "api.h").text
    assert text == "#pragma once\n#include <hip/hip_runtime_api.h>\nvoid sync(hipStream_t s);\n"
    device = translate_source("#pragma once\n__device__ int f(cudaStream_t s);\n", "dev.h").text
    assert "#include <hip/hip_runtime.h>" in device


MIT = """MIT License

Copyright (c) 2024 Example Project Authors

Permission is hereby granted, free of charge, to any person obtaining a copy
of this software and associated documentation files (the "Software"), to deal
in the Software without restriction, including without limitation the rights
to use, copy, modify, merge, publish, distribute, sublicense, and/or sell
copies of the Software, and to permit persons to whom the Software is
furnished to do so, subject to the following conditions:

The above copyright notice and this permission notice shall be included in all
copies or substantial portions of the Software.

THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND, EXPRESS OR
IMPLIED, INCLUDING BUT NOT LIMITED TO THE WARRANTIES OF MERCHANTABILITY,
FITNESS FOR A PARTICULAR PURPOSE AND NONINFRINGEMENT. IN NO EVENT SHALL THE
AUTHORS OR COPYRIGHT HOLDERS BE LIABLE FOR ANY CLAIM, DAMAGES OR OTHER
LIABILITY, WHETHER IN AN ACTION OF CONTRACT, TORT OR OTHERWISE, ARISING FROM,
OUT OF OR IN CONNECTION WITH THE SOFTWARE OR THE USE OR OTHER DEALINGS IN THE
SOFTWARE.
"""


def test_a_deviceptr_cast_to_a_typed_pointer_first_is_left_as_pointer_arithmetic() -> None:
    source = "void f(CUdeviceptr c, int i) {\n  g((double *)c + i * 4, 1);\n}\n"
    assert "g((double *)c + i * 4, 1);" in translate_source(source, "f.cpp").text

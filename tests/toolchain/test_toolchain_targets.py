"""Every unit compiled for the three default GPU targets in one invocation, with per-target results.

Real CUDA reductions, translated by our translator (its 64-bit mask fix switched off where a test
says so) and compiled by the default root's clang in the sandbox: a 32-bit full mask given to
``__shfl_down_sync`` fails on ROCm 7.2 for every target with the mask message (a translation cause);
the same kernel with a 64-bit mask passes; a wave32-only builtin fails on the wave64 targets only.
"""
from __future__ import annotations

from pathlib import Path

import pytest

from translator import TranslateOptions, translate_source
from worker.project_settings import ProjectSettings
from worker.toolchain.causes import compile_causes
from worker.toolchain.compile import CompileReport, compile_tree
from worker.toolchain.detect import detect_toolchain
from worker.toolchain.linemap import TreeLineMap
from worker.toolchain.stage_data import compile_payload
from worker.toolchain.version_defines import WARP_SYNC_BUILTINS, hip_major_minor

REDUCE_CU = """#include <cuda_runtime.h>

__global__ void block_sum(const float* in, float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  float v = i < n ? in[i] : 0.0f;
  for (int offset = 16; offset > 0; offset >>= 1)
    v += __shfl_down_sync(0xffffffff, v, offset);
  if ((threadIdx.x & 31) == 0) atomicAdd(out, v);
}
"""
WAVE32_HIP = """#include <hip/hip_runtime.h>

// A hand-written RDNA path: a 32-lane ballot, which needs a wave32 target.
__global__ void count_positive(const float* x, unsigned* out) {
  unsigned votes = __builtin_amdgcn_ballot_w32(x[threadIdx.x] > 0.0f);
  if (threadIdx.x == 0) out[blockIdx.x] = __builtin_popcount(votes);
}
"""
MASK_FIX = "wavefront.full-mask-64"
DEFAULT_ARCHS = ("gfx90a", "gfx942", "gfx1100")


def build(root: Path, files: dict[str, str], disabled: frozenset[str] = frozenset(),
          fixed: frozenset[str] = frozenset()) -> tuple[CompileReport, TreeLineMap]:
    """Translate ``files`` (CUDA ones, those in ``fixed`` with every fix rule, the others without
    ``disabled``; .hip as they are) and compile them with the default settings."""
    source, hip = root / "source", root / "hip"
    for name, text in files.items():
        for tree, content in ((source, text), (hip, text)):
            (tree / name).parent.mkdir(parents=True, exist_ok=True)
            (tree / name).write_text(content)
        if name.endswith(".cu"):
            rules = frozenset() if name in fixed else disabled
            (hip / name).write_text(translate_source(text, name, TranslateOptions(disabled_rules=rules)).text)
    settings = ProjectSettings()
    assert settings.offload_archs == DEFAULT_ARCHS
    report = compile_tree(hip, root / "build", settings, root / "cache", original_tree=source, jobs=2)
    return report, TreeLineMap(hip, source, {})


@pytest.fixture(scope="module")
def mask_32(tmp_path_factory: pytest.TempPathFactory) -> tuple[CompileReport, TreeLineMap]:
    if hip_major_minor(detect_toolchain().hipcc_version) < (7, 0):
        pytest.skip("HIP 7 refuses 32-bit masks; the default root here is older")
    files = {"reduce.cu": REDUCE_CU, "count.hip": WAVE32_HIP, "fixed/reduce.cu": REDUCE_CU}
    return build(tmp_path_factory.mktemp("targets"), files, frozenset({MASK_FIX}), fixed=frozenset({"fixed/reduce.cu"}))


def test_a_32_bit_mask_fails_for_every_target_and_is_a_translation_cause(
    mask_32: tuple[CompileReport, TreeLineMap]
) -> None:
    report, line_map = mask_32
    data = compile_payload(report, line_map)
    reduce = next(f for f in data["files"] if f["path"] == "reduce.cu")
    assert reduce["status"] == "failed" and [t["arch"] for t in reduce["targets"]] == list(DEFAULT_ARCHS)
    for target in reduce["targets"]:
        assert target["status"] == "failed" and "mask must be a 64-bit integer" in target["message"], target
        assert target["wave_size"] and (target["original_file"], target["original_line"]) == ("reduce.cu", 7)
    command = next(r.command for r in report.files if r.path == "reduce.cu")
    assert [a for a in command if a.startswith("--offload-arch=")] == [f"--offload-arch={a}" for a in DEFAULT_ARCHS]
    (cause,) = [c for c in compile_causes({**data, "toolchain": detect_toolchain().to_dict()}) if c.file == "reduce.cu"]
    assert (cause.kind, cause.key) == ("translation", "lane-mask")
    assert f"-D{WARP_SYNC_BUILTINS}" not in command and data["hip_defines"] == []  # HIP 7 needs no define


def test_a_wave32_builtin_fails_on_the_wave64_targets_only(mask_32: tuple[CompileReport, TreeLineMap]) -> None:
    report, line_map = mask_32
    data = compile_payload(report, line_map)
    count = next(f for f in data["files"] if f["path"] == "count.hip")
    assert {t["arch"]: t["status"] for t in count["targets"]} == {"gfx90a": "failed", "gfx942": "failed", "gfx1100": "passed"}
    assert all(t["wave_size"] and "wavefrontsize32" in t["message"] for t in count["targets"] if t["status"] == "failed")
    assert data["failed_targets"] == list(DEFAULT_ARCHS) and data["offload_archs"] == list(DEFAULT_ARCHS)


def test_the_translated_64_bit_mask_passes_for_every_target(mask_32: tuple[CompileReport, TreeLineMap]) -> None:
    report, line_map = mask_32
    data = compile_payload(report, line_map)
    reduce = next(f for f in data["files"] if f["path"] == "fixed/reduce.cu")
    assert reduce["status"] == "passed", next(r.output for r in report.files if r.path == "fixed/reduce.cu")
    assert [(t["arch"], t["status"]) for t in reduce["targets"]] == [(a, "passed") for a in DEFAULT_ARCHS]
    assert "0xffffffffffffffffull" in (line_map.translated_root / "fixed/reduce.cu").read_text()

from __future__ import annotations

import json
import typing
from pathlib import Path

from worker.context import StageContext, Workspace
from worker.payloads import ScanData, ScanFindingData
from worker.project_settings import ProjectSettings
from worker.stages import scan

KERNEL = """#include <cuda_runtime.h>
__global__ void add(float* a) { a[threadIdx.x] += 1.0f; }
int main() { float* d; cudaMalloc(&d, 4); add<<<1, 1>>>(d); cudaDeviceSynchronize(); return 0; }
"""


def _context(root: Path, logs: list[str]) -> StageContext:
    return StageContext(run_id=1, project_id=1, workspace=Workspace(root), settings=ProjectSettings(),
                        cache_dir=root / "cache", source_spec={"kind": "archive"}, log=logs.append)


def _write_source(root: Path) -> None:
    source = Workspace(root).source
    (source / "src").mkdir(parents=True)
    (source / "src" / "add.cu").write_text(KERNEL)
    (source / "Makefile").write_text("app: src/add.cu\n\tnvcc -arch=sm_80 -o app src/add.cu -lcudart\n")
    (source / "requirements.txt").write_text("torch==2.3.0+cu121\n")
    (source / "third_party").mkdir()
    (source / "third_party" / "Makefile").write_text("all:\n\tnvcc x.cu\n")


def test_the_stage_passes_with_inventory_findings_and_readiness(tmp_path: Path) -> None:
    _write_source(tmp_path)
    logs: list[str] = []
    result = scan.run(_context(tmp_path, logs))
    assert result.outcome == "passed"
    data = json.loads(json.dumps(result.data))
    assert data["inventory"]["kernels_count"] == 1 and data["inventory"]["launch_sites_count"] == 1
    assert data["inventory"]["files_total"] == 3  # third_party is excluded by the default settings
    rules = [f["rule_id"] for f in data["findings"]]
    assert rules == ["make.nvcc", "make.nvidia-arch-flag", "make.cuda-link-library", "dependencies.cuda-local-version"]
    assert data["findings_by_severity"] == {"error": 4}
    assert data["readiness"]["translatable"] == 2 and data["readiness"]["engine_available"] is True
    assert "4 errors" in result.summary and "(3 fixable)" in result.summary
    assert all(line.endswith("\n") for line in logs)
    assert set(data) <= set(typing.get_type_hints(ScanData))  # every key it stores is typed in worker/payloads.py
    assert set(data["findings"][0]) == set(typing.get_type_hints(ScanFindingData))


def test_the_stage_writes_full_findings_to_the_artifact(tmp_path: Path) -> None:
    _write_source(tmp_path)
    result = scan.run(_context(tmp_path, []))
    artifact = json.loads((tmp_path / result.data["artifact"]).read_text())
    assert len(artifact["findings"]) == 4
    assert artifact["findings"][0]["explanation"] and artifact["findings"][0]["fixable"] is True


def test_the_stage_fails_when_the_source_tree_is_missing(tmp_path: Path) -> None:
    result = scan.run(_context(tmp_path, []))
    assert result.outcome == "failed"
    assert "missing" in result.summary


REDUCE = """#include <cuda_runtime.h>
__global__ void warp_sums(const float* x, float* out) {
  float v = x[threadIdx.x];
  for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffff, v, o);
  int warp = threadIdx.x / 32;
  if (threadIdx.x % 32 == 0) out[warp] = v;
}
"""


def _reduce_context(root: Path, **settings: object) -> StageContext:
    source = Workspace(root).source
    source.mkdir(parents=True)
    (source / "reduce.cu").write_text(REDUCE)
    return StageContext(run_id=1, project_id=1, workspace=Workspace(root), settings=ProjectSettings.from_dict(settings),
                        cache_dir=root / "cache", source_spec={"kind": "archive"}, log=lambda line: None)


def test_the_stage_lists_wavefront_hazards_and_counts_those_without_a_fix_as_hand_work(tmp_path: Path) -> None:
    result = scan.run(_reduce_context(tmp_path))
    data = json.loads(json.dumps(result.data))
    rows = [(h["file"], h["line"], h["kind"], h["applied"]) for h in data["wavefront_hazards"]]
    assert rows == [("reduce.cu", 4, "reduction-offset-16", False), ("reduce.cu", 4, "full-mask-32", True),
                    ("reduce.cu", 5, "warp-id-32", False), ("reduce.cu", 6, "lane-id-32", False)]
    assert data["wavefront_total"] == 4 and data["wavefront_by_kind"]["full-mask-32"] == 1
    readiness = data["readiness"]
    assert readiness["hand_work_by_kind"]["wavefront"] == 3 and readiness["automatic_by_kind"]["wavefront"] == 1
    assert "4 wavefront hazards (1 fixed automatically)" in result.summary
    assert f"hand work {readiness['hand_work']}" in result.summary
    artifact = json.loads((tmp_path / data["artifact"]).read_text())
    assert len(artifact["wavefront_hazards"]) == 4


def test_a_disabled_rule_or_an_external_engine_means_no_automatic_fix(tmp_path: Path) -> None:
    disabled = scan.run(_reduce_context(tmp_path / "a", disabled_fix_rules=["wavefront.full-mask-64"]))
    perl = scan.run(_reduce_context(tmp_path / "b", hipify_engine="hipify-perl"))
    for result in (disabled, perl):
        assert not any(h["applied"] for h in result.data["wavefront_hazards"])
        assert result.data["readiness"]["hand_work_by_kind"]["wavefront"] == 4

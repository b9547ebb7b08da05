"""Image and CI-version suggestions follow the chosen toolchain root, read from its own files."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from worker.context import StageContext, Workspace
from worker.project_settings import ProjectSettings
from worker.scanning.findings import scan_build_files
from worker.scanning.model import RocmRelease
from worker.stages import scan
from worker.stages.rocm_release import chosen_release
from worker.toolchain.detect import detect_toolchain

WORKFLOW = """name: ci
on: [push]
jobs:
  build:
    runs-on: ubuntu-22.04
    strategy:
      matrix:
        cuda-version: ['12.1']
    steps:
      - uses: Jimver/cuda-toolkit@v0.2.16
      - run: nvcc -o app app.cu
"""
DOCKERFILE = "FROM nvidia/cuda:12.4.1-devel-ubuntu22.04\nRUN make\n"


def _suggestions(tree: Path, rocm: RocmRelease) -> dict[str, str | None]:
    return {f.rule_id: f.suggestion for f in scan_build_files(tree, (), rocm=rocm)
            if f.rule_id in ("ci.cuda-toolkit-install", "ci.cuda-version-matrix", "container.nvidia-base-image")}


@pytest.mark.parametrize("name", ["rocm-7.2", "rocm-6.4"])
def test_suggestions_name_the_chosen_roots_release_and_image(tmp_path: Path, name: str) -> None:
    (tmp_path / ".github/workflows").mkdir(parents=True)
    (tmp_path / ".github/workflows/ci.yml").write_text(WORKFLOW)
    (tmp_path / "Dockerfile").write_text(DOCKERFILE)
    release = chosen_release(name)
    version = detect_toolchain(name).hip_version  # "7.2" / "6.4", from the root's toolchain.json
    assert release == RocmRelease(version, f"rocm/dev-ubuntu-24.04:{version}")
    assert _suggestions(tmp_path, release) == {
        "ci.cuda-toolkit-install": f"container: rocm/dev-ubuntu-24.04:{version}",
        "ci.cuda-version-matrix": f"rocm-version: ['{version}']",
        "container.nvidia-base-image": f"rocm/dev-ubuntu-24.04:{version}",
    }


def test_without_a_root_no_release_is_suggested(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "tree/.github/workflows").mkdir(parents=True)
    (tmp_path / "tree/.github/workflows/ci.yml").write_text(WORKFLOW)
    monkeypatch.setenv("MIGRATOR_TOOLCHAIN_DIR", str(tmp_path / "no-roots"))
    release = chosen_release("")
    assert release == RocmRelease()
    findings = scan_build_files(tmp_path / "tree", (), rocm=release)
    install = next(f for f in findings if f.rule_id == "ci.cuda-toolkit-install")
    assert install.suggestion is None and "rocm/dev-ubuntu image of your ROCm release" in install.explanation
    assert not any("6.4" in (f.suggestion or "") + f.explanation for f in findings)


def test_the_scan_stage_suggests_the_image_of_the_toolchain_setting(tmp_path: Path) -> None:
    source = Workspace(tmp_path).source
    (source / ".github/workflows").mkdir(parents=True)
    (source / ".github/workflows/ci.yml").write_text(WORKFLOW)
    (source / "app.cu").write_text("__global__ void k() {}\n")
    suggested = {}
    for name in ("rocm-6.4", "rocm-7.2"):
        ctx = StageContext(run_id=1, project_id=1, workspace=Workspace(tmp_path),
                           settings=ProjectSettings(toolchain=name), cache_dir=tmp_path / "cache",
                           source_spec={"kind": "archive"}, log=lambda _: None)
        assert scan.run(ctx).outcome == "passed"
        full = json.loads((Workspace(tmp_path).records / "scan.json").read_text())
        suggested[name] = [f["suggestion"] for f in full["findings"] if f["rule_id"] == "ci.cuda-toolkit-install"]
    assert suggested == {"rocm-6.4": ["container: rocm/dev-ubuntu-24.04:6.4"],
                         "rocm-7.2": ["container: rocm/dev-ubuntu-24.04:7.2"]}

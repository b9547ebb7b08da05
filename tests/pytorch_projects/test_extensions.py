"""PyTorch extensions: PyTorch's own hipify as the engine, and what compile says without ROCm PyTorch."""
from __future__ import annotations

import json
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from tests.pytorch_projects.markers import needs_torch
from translator.torch_hipify import SCRIPT, SOURCE_SUFFIXES, hipify_package
from worker.context import StageContext, Workspace
from worker.project_settings import ProjectSettings
from worker.stages import compile as compile_stage
from worker.stages import hipify, link, scan
from worker.stages.kind_gate import extension_build_kind, kind_gate, rocm_pytorch_in

# scanned(name): the workspace and the scan stage's data as stored
Scanned = Callable[[str], tuple[Path, dict[str, Any]]]


def _context(root: Path, previous: dict[str, dict[str, object]] | None = None, **settings: object) -> StageContext:
    return StageContext(run_id=1, project_id=1, workspace=Workspace(root),
                        settings=ProjectSettings.from_dict(dict(settings)), cache_dir=root / "cache",
                        source_spec={"kind": "archive"}, previous=previous or {}, log=lambda text: None)


@pytest.fixture
def scanned(project_tree: Callable[[str], Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Scanned:
    """A workspace holding one fixture project, with the scan stage's data."""
    monkeypatch.setenv("MIGRATOR_RESOLVE_DEPENDENCIES", "off")

    def run(name: str) -> tuple[Path, dict[str, Any]]:
        root = tmp_path / f"ws-{name}"
        root.mkdir()
        project_tree(name).rename(root / "source")
        result = scan.run(_context(root))
        assert result.outcome == "passed"
        return root, json.loads(json.dumps(result.data))
    return run


@needs_torch
def test_an_extension_is_translated_by_pytorchs_hipify(scanned: Scanned) -> None:
    root, scan_data = scanned("extension")
    assert scan_data["project_kind"]["kind"] == "pytorch-extension"
    result = hipify.run(_context(root, {"scan": scan_data}))
    assert result.outcome == "passed", result.summary
    assert result.data["engine"] == "torch.utils.hipify"
    assert result.data["renames"] == {"csrc/cuda/fused_gelu.cu": "csrc/hip/fused_gelu.hip"}
    hipified = (root / "hip/csrc/hip/fused_gelu.hip").read_text()
    assert "#include <ATen/hip/HIPContext.h>" in hipified and "hipLaunchKernelGGL(( fused_gelu_kernel)" in hipified
    assert "hipStream_t stream" in hipified
    assert (root / "hip/csrc/cuda/fused_gelu.cu").exists()  # BuildExtension still names it in setup.py


@needs_torch
def test_a_mixed_repository_hipifies_only_its_kernels(scanned: Scanned) -> None:
    root, scan_data = scanned("mixed")
    result = hipify.run(_context(root, {"scan": scan_data}))
    assert result.data["engine"] == "torch.utils.hipify"
    assert set(result.data["renames"]) == {"kernels/csrc/rmsnorm.cu"}
    assert "hipLaunchKernelGGL" in (root / "hip" / result.data["renames"]["kernels/csrc/rmsnorm.cu"]).read_text()
    assert (root / "hip/python/servekit/runtime.py").read_text() == (root / "source/python/servekit/runtime.py").read_text()
    assert "requirements-rocm.txt" in result.data["generated_files"]


Answer = list[list[dict[str, str]]]  # per directory: {path, hipified, status}


def hipify_on_the_host(source: Path, directories: list[tuple[str, list[str]]], scratch: Path) -> tuple[Path, Answer]:
    """What the sandbox runs, run here instead with the worker's own Python: the reference to compare with."""
    driver = scratch / "driver"
    driver.mkdir(parents=True)
    (driver / "hipify").symlink_to(hipify_package() or "", target_is_directory=True)
    shutil.copy(SCRIPT, driver / "torch_hipify.py")
    request = {"source": str(source), "tree": str(scratch / "tree"), "answer": str(scratch / "answer.json"),
               "directories": [{"directory": d, "files": files} for d, files in directories]}
    subprocess.run([sys.executable, "-I", "-B", str(driver / "torch_hipify.py")], input=json.dumps(request),
                   text=True, check=True, capture_output=True)
    answer: Answer = json.loads((scratch / "answer.json").read_text())
    return scratch / "tree", answer


@needs_torch
@pytest.mark.parametrize("name", ["extension", "mixed"])
def test_the_sandboxed_engine_translates_exactly_what_pytorchs_hipify_does_on_the_host(
    scanned: Scanned, tmp_path: Path, name: str
) -> None:
    root, scan_data = scanned(name)
    result = hipify.run(_context(root, {"scan": scan_data}))
    assert result.outcome == "passed" and result.data["engine"] == "torch.utils.hipify"
    source = root / "source"
    directories = [(d, sorted(p.relative_to(source).as_posix() for p in (source / d).rglob("*")
                              if p.is_file() and p.suffix in SOURCE_SUFFIXES))
                   for d in scan_data["project_kind"].get("kernel_dirs") or ["."]]
    reference, answer = hipify_on_the_host(source, directories, tmp_path / "reference")
    produced = {p.relative_to(reference).as_posix(): p.read_bytes() for p in reference.rglob("*")
                if p.is_file() and (not (source / p.relative_to(reference)).is_file()
                                    or (source / p.relative_to(reference)).read_bytes() != p.read_bytes())}
    assert produced  # the fixtures' kernels are translated
    assert {path: (root / "hip" / path).read_bytes() for path in produced} == produced
    renames = {f"{'' if d == '.' else d + '/'}{item['path']}": f"{'' if d == '.' else d + '/'}{item['hipified']}"
               for (d, _), items in zip(directories, answer) for item in items if item["path"] != item["hipified"]}
    assert result.data["renames"] == renames


def test_the_builtin_engine_runs_when_pytorch_is_missing(scanned: Scanned, monkeypatch: pytest.MonkeyPatch) -> None:
    root, scan_data = scanned("extension")
    monkeypatch.setattr("worker.stages.torch_engine.hipify_package", lambda: None)
    logs: list[str] = []
    ctx = _context(root, {"scan": scan_data})
    ctx.log = logs.append
    result = hipify.run(ctx)
    assert result.outcome == "passed" and result.data["engine"] == "builtin"
    assert any("torch.utils.hipify not used: PyTorch is not installed" in line for line in logs)


def test_our_engine_stays_selectable(scanned: Scanned) -> None:
    root, scan_data = scanned("extension")
    result = hipify.run(_context(root, {"scan": scan_data}, hipify_engine="hipify-perl"))
    assert result.data.get("engine") != "torch.utils.hipify"


def test_without_rocm_pytorch_compile_goes_the_extension_way(scanned: Scanned) -> None:
    root, scan_data = scanned("extension")
    assert extension_build_kind(_context(root, {"scan": scan_data})) is not None
    assert kind_gate(_context(root, {"scan": scan_data}), "compile") is None


def test_a_toolchain_with_rocm_pytorch_lets_compile_go_on(
    scanned: Scanned, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake_root = tmp_path / "root"
    version = fake_root / "usr/lib/python3.12/dist-packages/torch/version.py"
    version.parent.mkdir(parents=True)
    version.write_text("__version__ = '2.8.0+rocm6.4'\ncuda = None\nhip = '6.4.43482'\n")
    assert rocm_pytorch_in(fake_root) == "/usr/lib/python3.12/dist-packages/torch/version.py"
    monkeypatch.setattr("worker.stages.kind_gate.detect_toolchain",
                        lambda name: SimpleNamespace(root=str(fake_root), name="rocm-6.4-pytorch"))
    root, scan_data = scanned("extension")
    assert extension_build_kind(_context(root, {"scan": scan_data})) is None  # compiled as usual there


def test_compile_and_link_of_a_python_application_are_not_applicable(scanned: Scanned) -> None:
    root, scan_data = scanned("finetune")
    for stage in (compile_stage, link):
        result = stage.run(_context(root, {"scan": scan_data, "compile": {}}))
        assert result.outcome == "not_applicable" and "Python application" in result.summary

"""Project kinds from the tree, and which stages apply to each kind."""
from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from worker.context import StageContext, Workspace
from worker.project_settings import ProjectSettings
from worker.scanning.project_kind import detect_kind, not_applicable_reason
from worker.stages import scan
from worker.stages.applicability import not_applicable_result


def test_a_fine_tuning_project_is_a_python_application(project_tree: Callable[[str], Path]) -> None:
    kind = detect_kind(project_tree("finetune"), ())
    assert kind.kind == "python-app"
    assert kind.cuda_sources == 0 and kind.torch_files == 1  # train.py; gpu_info.py uses pynvml only


def test_a_cpp_extension_is_found_from_its_setup_script(project_tree: Callable[[str], Path]) -> None:
    kind = detect_kind(project_tree("extension"), ())
    assert kind.kind == "pytorch-extension"
    assert kind.extension_markers[0] == "setup.py:4 imports BuildExtension, CUDAExtension"
    assert kind.kernel_dirs == ["."]


def test_a_python_package_with_a_kernels_directory_is_mixed(project_tree: Callable[[str], Path]) -> None:
    kind = detect_kind(project_tree("mixed"), ())
    assert kind.kind == "mixed"
    assert kind.kernel_dirs == ["kernels"]
    assert "kernels/CMakeLists.txt: find_package(Torch)" in kind.extension_markers


def test_the_kernels_directory_alone_is_an_extension(project_tree: Callable[[str], Path]) -> None:
    assert detect_kind(project_tree("mixed") / "kernels", ()).kind == "pytorch-extension"


def test_cuda_sources_with_make_and_no_torch_are_cuda_cpp(tmp_path: Path) -> None:
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "add.cu").write_text("__global__ void add(float* a) { a[0] += 1; }\n")
    (tmp_path / "Makefile").write_text("all:\n\tnvcc src/add.cu\n")
    (tmp_path / "plot.py").write_text("import matplotlib\n")
    assert detect_kind(tmp_path, ()).kind == "cuda-cpp"


def test_a_file_that_does_not_parse_does_not_count_as_torch(tmp_path: Path) -> None:
    (tmp_path / "broken.py").write_text("import torch\ndef (:\n")
    assert detect_kind(tmp_path, ()).kind == "other"


@pytest.mark.parametrize(("kind", "stage", "applies"), [
    ("python-app", "compile", False), ("python-app", "link", False), ("python-app", "hipify", True),
    ("python-app", "smoke", True), ("pytorch-extension", "compile", True), ("pytorch-extension", "link", False),
    ("mixed", "compile", True), ("mixed", "link", True), ("cuda-cpp", "link", True), ("other", "compile", False),
])
def test_which_stages_apply_to_each_kind(kind: str, stage: str, applies: bool) -> None:
    assert (not_applicable_reason(kind, stage) is None) is applies  # type: ignore[arg-type]


def _context(root: Path, previous: dict[str, dict[str, object]] | None = None) -> StageContext:
    return StageContext(run_id=1, project_id=1, workspace=Workspace(root), settings=ProjectSettings(),
                        cache_dir=root / "cache", source_spec={"kind": "archive"}, previous=previous or {})


def test_the_scan_stage_records_the_kind_and_later_stages_read_it(
    project_tree: Callable[[str], Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MIGRATOR_RESOLVE_DEPENDENCIES", "off")  # resolution has its own tests, on a local index
    workspace = tmp_path / "ws"
    workspace.mkdir()
    project_tree("finetune").rename(workspace / "source")
    result = scan.run(_context(workspace))
    assert result.outcome == "passed" and result.data["project_kind"]["kind"] == "python-app"
    compile_result = not_applicable_result(_context(workspace, {"scan": result.data}), "compile")
    assert compile_result is not None and compile_result.outcome == "not_applicable"
    assert "no CUDA sources to compile" in compile_result.summary
    assert not_applicable_result(_context(workspace, {"scan": result.data}), "smoke") is None
    assert not_applicable_result(_context(workspace), "compile") is None  # scanned before kinds existed

"""Dependency declarations, pip's resolution against a local index, and ROCm counterparts."""
from __future__ import annotations

import socket
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.pytorch_projects.wheels import make_sdist, make_wheel
from worker.scanning.dep_declarations import read_declarations
from worker.scanning.dep_report import build_report, constraints_text, requirements_text, write_rocm_requirements
from worker.scanning.dep_resolve import ResolveOptions, resolve
from worker.scanning.rocm_counterparts import counterpart_for


@pytest.fixture
def index(tmp_path: Path) -> ResolveOptions:
    """A local index: a CUDA-style torch that pulls NVIDIA runtime wheels, and a few portable packages."""
    links = tmp_path / "links"
    links.mkdir()
    make_wheel(links, "torch", "2.5.1", ("nvidia-cublas-cu12==12.4.5.8", "filelock"))
    make_wheel(links, "nvidia-cublas-cu12", "12.4.5.8")
    make_wheel(links, "filelock", "3.16.1")
    make_wheel(links, "numpy", "2.1.0")
    make_wheel(links, "nvidia-ml-py", "12.560.30")
    make_sdist(links, "flash-attn", "2.6.3")
    return ResolveOptions(no_index=True, find_links=(str(links),), timeout_s=120)


def test_every_kind_of_declaration_is_read_with_its_line(project_tree: Callable[[str], Path]) -> None:
    declarations, unreadable = read_declarations(project_tree("finetune"), ())
    assert unreadable == []
    found = {(d.name, d.file, d.line, d.origin) for d in declarations}
    assert ("torch", "requirements.txt", 2, "requirements") in found
    assert ("torch", "pyproject.toml", 10, "pyproject") in found
    assert ("deepspeed", "pyproject.toml", 18, "pyproject") in found  # an extra
    assert ("flash-attn", "docker/docker-cuda/Dockerfile", 4, "dockerfile") in found  # a continued RUN line
    assert ("flash-attn", "environment.yml", 12, "conda") in found  # the pip: list of a conda file
    assert ("pytorch-cuda", "environment.yml", 8, "conda") in found
    assert not any(d.name == "python" for d in declarations)


def test_setup_py_requirements_are_read_without_running_it(project_tree: Callable[[str], Path]) -> None:
    declarations, _ = read_declarations(project_tree("extension"), ())
    assert [(d.requirement, d.line) for d in declarations if d.file == "setup.py"] == [("torch>=2.4", 27),
                                                                                      ("numpy", 27)]


def test_setup_cfg_and_direct_references(tmp_path: Path) -> None:
    (tmp_path / "setup.cfg").write_text("[options]\ninstall_requires =\n    numpy>=1.24\n    cupy-cuda12x\n")
    (tmp_path / "requirements.txt").write_text("mylib @ file:///etc/passwd\n--index-url https://example.org/simple\n"
                                               "torch==2.5.1+cu121\n")
    declarations, _ = read_declarations(tmp_path, ())
    by_name = {d.name: d for d in declarations}
    assert by_name["numpy"].origin == "setup.cfg" and by_name["cupy-cuda12x"].line == 4
    assert not by_name["mylib"].resolvable and by_name["mylib"].note == "direct URL reference"
    assert by_name["torch"].note == "index https://example.org/simple"


def test_pip_resolves_and_shows_the_cuda_wheels_torch_pulls_in(tmp_path: Path, index: ResolveOptions) -> None:
    (tmp_path / "requirements.txt").write_text("torch==2.5.1\nnumpy\n")
    report = build_report(tmp_path, (), index)
    assert report.resolution.status == "resolved", report.resolution.message
    assert {p.name: p.version for p in report.resolution.packages} == {
        "torch": "2.5.1", "nvidia-cublas-cu12": "12.4.5.8", "filelock": "3.16.1", "numpy": "2.1.0"}
    cuda = {p.name: p for p in report.cuda_packages}
    assert set(cuda) == {"torch", "nvidia-cublas-cu12"}
    assert cuda["nvidia-cublas-cu12"].pulled_by_resolution and cuda["nvidia-cublas-cu12"].counterpart.action == "remove"
    assert cuda["torch"].counterpart.pin == "torch==2.8.0+rocm6.4"
    assert "--index-url https://download.pytorch.org/whl/rocm6.4" in cuda["torch"].counterpart.install
    assert constraints_text(report).splitlines()[2:] == ["filelock==3.16.1", "numpy==2.1.0", "torch==2.8.0+rocm6.4"]


def test_a_package_with_only_sources_is_listed_and_its_setup_never_runs(tmp_path: Path, index: ResolveOptions) -> None:
    resolution = resolve(["flash-attn==2.6.3", "numpy"], index)
    assert resolution.status == "partial" and resolution.no_wheel == ["flash-attn==2.6.3"]
    assert [p.name for p in resolution.packages] == ["numpy"]


def test_an_unreachable_index_falls_back_to_the_declared_names(tmp_path: Path) -> None:
    (tmp_path / "requirements.txt").write_text("torch==2.5.1\nnvidia-ml-py\n")
    options = ResolveOptions(index_url="http://127.0.0.1:9/simple", timeout_s=60)
    report = build_report(tmp_path, (), options)
    assert report.resolution.status == "unreachable"
    assert report.resolution.message.startswith("the package index could not be reached")
    assert [p.name for p in report.cuda_packages] == ["torch", "nvidia-ml-py"]
    assert "not resolved (unreachable" in report.summary()


def test_requirements_rocm_keeps_portable_lines_and_replaces_cuda_ones(
    project_tree: Callable[[str], Path], tmp_path: Path
) -> None:
    report = build_report(project_tree("finetune"), (), None)
    text = requirements_text(report)
    lines = text.splitlines()
    assert "--extra-index-url https://download.pytorch.org/whl/rocm6.4" in lines
    assert "torch==2.8.0+rocm6.4" in lines and "torch==2.5.1" not in lines
    assert "bitsandbytes>=0.50" in lines and "deepspeed>=0.14.0" in lines and "datasets>=2.16.0" in lines
    assert "#   nvidia-ml-py: amdsmi, the AMD SMI Python library shipped with ROCm; pip install " \
           "/opt/rocm/share/amd_smi" in lines
    assert write_rocm_requirements(report, tmp_path) == ["requirements-rocm.txt", "constraints-rocm.txt"]
    assert (tmp_path / "requirements-rocm.txt").read_text() == text


@pytest.mark.parametrize(("name", "kwargs", "expected"), [
    ("torch", {"version": "2.5.1+cu121"}, "torch-cuda"),
    ("torch", {"version": "2.8.0+rocm6.4"}, None),
    ("jax", {"extras": frozenset({"cuda12"})}, "jax-cuda"),
    ("jax", {}, None),
    ("cupy-cuda11x", {}, "cupy-cuda"),
    ("nvidia-cudnn-cu12", {}, "nvidia-runtime-wheels"),
    ("Flash_Attn", {}, "flash-attn"),
    ("transformers", {}, None),
])
def test_counterparts(name: str, kwargs: dict[str, object], expected: str | None) -> None:
    match = counterpart_for(name, **kwargs)  # type: ignore[arg-type]
    assert (match.id if match else None) == expected
    if match:
        assert match.sources and match.checked


def test_no_wheel_is_suggested_for_a_rocm_version_without_a_record() -> None:
    match = counterpart_for("torch", rocm_version="5.7")
    assert match is not None and match.pin == "" and match.install == ""


def test_a_conflict_is_reported_with_its_causes(tmp_path: Path, index: ResolveOptions) -> None:
    links = Path(index.find_links[0])
    make_wheel(links, "servelib", "0.6.3", ("torch==2.4.0",))
    resolution = resolve(["torch==2.5.1", "servelib==0.6.3"], index)
    assert resolution.status == "conflict"
    assert resolution.message.startswith("conflict: The user requested torch==2.5.1")
    assert "servelib 0.6.3 depends on torch==2.4.0" in resolution.message


def test_a_cancelled_run_stops_pip(tmp_path: Path) -> None:
    with socket.socket() as silent:  # an index that accepts connections and never answers
        silent.bind(("127.0.0.1", 0))
        silent.listen(8)
        started = time.monotonic()
        options = ResolveOptions(index_url=f"http://127.0.0.1:{silent.getsockname()[1]}/simple", timeout_s=120)
        resolution = resolve(["torch==2.5.1"], options, cancel=lambda: time.monotonic() - started > 1.0)
    assert resolution.status == "cancelled" and time.monotonic() - started < 15

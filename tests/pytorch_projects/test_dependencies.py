"""Install sets read from every declaration, the ROCm side of each, and pip's resolve of it
(against local indexes served over HTTP, with this machine's own pip configuration in force)."""
from __future__ import annotations

import os
import socket
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.pytorch_projects.simple_index import SimpleIndex, serving
from tests.pytorch_projects.wheels import make_sdist, make_wheel
from worker.scanning.dep_check import check_resolution
from worker.scanning.dep_report import build_report, requirements_text
from worker.scanning.dep_resolve import ResolveOptions, ResolveRequest, resolve, resolve_request
from worker.scanning.dep_rocm import rocm_side
from worker.scanning.dep_sets import InstallSet, read_install_sets
from worker.scanning.rocm_counterparts import counterpart_for

HOST_PIP_CONF = Path("/etc/xdg/pip/pip.conf")


def _sets(tree: Path) -> dict[str, InstallSet]:
    sets, unreadable = read_install_sets(tree, ())
    assert unreadable == []
    return {s.id: s for s in sets}


def _requirements(install_set: InstallSet) -> list[str]:
    return [d.requirement for d in install_set.declarations]


def test_every_declaration_file_is_its_own_install_set(project_tree: Callable[[str], Path]) -> None:
    sets = _sets(project_tree("finetune"))
    assert set(sets) == {"pyproject.toml", "pyproject.toml [deepspeed]", "pyproject.toml [bitsandbytes]",
                         "pyproject.toml (build)", "requirements.txt", "environment.yml",
                         "docker/docker-cuda/Dockerfile:4", "docker/docker-cuda/Dockerfile:4 (2)",
                         "docker/docker-cuda/Dockerfile:7", "docker/docker-rocm/Dockerfile:4"}
    assert _requirements(sets["pyproject.toml [deepspeed]"])[-1] == "deepspeed>=0.14.0"  # base plus the extra
    assert sets["docker/docker-cuda/Dockerfile:4"].includes == ["requirements.txt"]  # -r read from the context
    assert _requirements(sets["docker/docker-cuda/Dockerfile:4 (2)"]) == ["flash-attn==2.6.3"]  # a continued RUN
    assert sets["docker/docker-cuda/Dockerfile:7"].includes == ["pyproject.toml [deepspeed]"]  # pip install -e ".[x]"
    assert sets["docker/docker-rocm/Dockerfile:4"].rocm and sets["docker/docker-rocm/Dockerfile:4"].image == \
        "rocm/pytorch:latest"
    conda = sets["environment.yml"]
    assert _requirements(conda) == ["transformers>=4.45.0", "flash-attn>=2.5.0"]
    assert [(d.name, d.line) for d in conda.conda] == [("pytorch-cuda", 8)]


def test_top_level_requirements_folder_includes_constraints_and_groups(project_tree: Callable[[str], Path]) -> None:
    """LLaMA-Factory's layout: requirements/*.txt at the top (they were never read), -r, -c, self extras."""
    sets = _sets(project_tree("tunefactory"))
    assert {"requirements/vllm.txt", "requirements/sglang.txt", "requirements/bitsandbytes.txt",
            "requirements/liger-kernel.txt", "requirements/fp8-te.txt", "requirements/cuda-tools.txt"} <= set(sets)
    assert "requirements/constraints.txt" not in sets  # only ever a -c file: not an install set
    root = sets["requirements.txt"]
    assert root.includes == ["requirements/metrics.txt"] and _requirements(root)[-2:] == ["nltk", "rouge-chinese"]
    assert root.indexes == ["https://download.pytorch.org/whl/cu121"]
    tools = sets["requirements/cuda-tools.txt"]
    assert tools.constraint_files == ["requirements/constraints.txt"]
    assert [d.requirement for d in tools.constraints] == ["nvidia-nccl-cu12==2.21.5", "nvidia-ml-py==12.560.30"]
    full = _requirements(sets["pyproject.toml [full]"])
    assert "deepspeed<=0.18.4,>=0.14.0" in full and "nltk" in full and "liger-kernel>=0.6.3" in full
    assert not any(r.startswith("tunefactory") for r in full)  # "tunefactory[deepspeed,metrics]" expanded
    assert _requirements(sets["pyproject.toml (group dev)"]) == ["pytest", "ruff"]  # {include-group = "lint"}
    rocm_docker = [s for s in sets.values() if s.file == "docker/docker-rocm/Dockerfile"]
    assert [s.includes for s in rocm_docker] == [["pyproject.toml"], ["requirements/liger-kernel.txt",
                                                                      "requirements/bitsandbytes.txt"]]
    assert rocm_docker[0].image == "rocm/pytorch:rocm7.2_ubuntu24.04_py3.12_pytorch_release_2.7.1"  # ARG substituted
    assert "docker/docker-cuda/Dockerfile:4" in sets  # "pip install --upgrade pip setuptools wheel" is no set


def test_setup_py_extras_bound_to_names_and_computed_ones(tmp_path: Path) -> None:
    (tmp_path / "setup.py").write_text(
        "from setuptools import setup\nREQUIRED = ['torch>=2.4', 'numpy']\nEXTRAS = {'triton': ['triton>=3.0']}\n"
        "setup(name='kern', install_requires=REQUIRED, extras_require=EXTRAS, setup_requires=open('b.txt').read())\n")
    sets = _sets(tmp_path)
    assert _requirements(sets["setup.py"]) == ["torch>=2.4", "numpy"]
    assert _requirements(sets["setup.py [triton]"]) == ["torch>=2.4", "numpy", "triton>=3.0"]
    assert sets["setup.py"].problems == ["setup.py:4: setup_requires is computed when setup.py runs; it is not run here"]


def test_setup_cfg_direct_references_and_includes_outside_the_tree(tmp_path: Path) -> None:
    (tmp_path / "setup.cfg").write_text("[options]\ninstall_requires =\n    numpy>=1.24\n    cupy-cuda12x\n")
    (tmp_path / "requirements.txt").write_text("mylib @ file:///etc/passwd\n-r ../../etc/requirements.txt\n"
                                               "-r missing.txt\ntorch==2.5.1+cu121\n")
    sets = _sets(tmp_path)
    assert _requirements(sets["setup.cfg"]) == ["numpy>=1.24", "cupy-cuda12x"]
    requirements = sets["requirements.txt"]
    url = requirements.declarations[0]
    assert url.name == "mylib" and not url.resolvable and url.note == "direct URL reference"
    assert requirements.problems == ["requirements.txt:2: ../../etc/requirements.txt is outside the repository; not read",
                                     "requirements.txt:3: missing.txt is not in the repository"]


def _entries(tree: Path, set_id: str, rocm: str = "7.2") -> dict[str, object]:
    report = build_report(tree, (), ResolveOptions(), rocm)
    found = next(s for s in report.sets if s.install_set.id == set_id)
    return {"side": found.rocm, **{e.name: e for e in found.rocm.entries}}


def test_the_fine_tuning_fixture_entry_by_entry(project_tree: Callable[[str], Path]) -> None:
    tree = project_tree("tunefactory")
    report = build_report(tree, (), ResolveOptions(), "7.2")
    by_id = {s.install_set.id: s.rocm for s in report.sets}
    # torch==2.3.1+cu121 with the CUDA index: no ROCm 7.2 build of 2.3.1, said so, the nearest used instead.
    root = by_id["requirements.txt"]
    torch = next(e for e in root.entries if e.name == "torch")
    assert (torch.action, torch.rocm_requirement) == ("changed", "torch==2.11.0+rocm7.2")
    assert torch.note.startswith("torch==2.3.1 has no ROCm 7.2 build (ROCm 7.2 has 2.11.0 to 2.14.1)")
    assert root.notes == ["CUDA wheel index https://download.pytorch.org/whl/cu121 replaced by "
                          "https://download.pytorch.org/whl/rocm7.2"]
    assert root.request and root.request.extra_indexes == ["https://download.pytorch.org/whl/rocm7.2"]
    # A range keeps the newest ROCm build in it, with its paired torchvision; the pins are constraints too.
    base = by_id["pyproject.toml"]
    assert base.torch and (base.torch.build, base.torch.kept) == ("2.14.1+rocm7.2", True)
    assert base.request and base.request.constraints == ["torch==2.14.1+rocm7.2", "torchvision==0.29.1+rocm7.2"]
    assert base.request.requirements[:2] == ["torch==2.14.1+rocm7.2", "torchvision==0.29.1+rocm7.2"]
    actions = {(set_id, e.name): (e.action, e.rocm_requirement) for set_id, side in by_id.items() for e in side.entries}
    assert actions[("requirements/vllm.txt", "vllm")] == ("image", "")
    assert actions[("requirements/sglang.txt", "sglang")] == ("image", "")
    assert actions[("requirements/sglang.txt", "transformers")] == ("keep", "transformers==4.51.1")
    assert actions[("requirements/bitsandbytes.txt", "bitsandbytes")] == ("upgrade", "bitsandbytes>=0.39.0,>=0.50")
    assert actions[("requirements/liger-kernel.txt", "liger-kernel")] == ("keep", "liger-kernel>=0.6.3")
    assert actions[("requirements/liger-kernel.txt", "triton")] == ("replace", "")
    assert by_id["requirements/liger-kernel.txt"].triton_spec == ">=3.5"
    assert actions[("requirements/fp8-te.txt", "transformer-engine")] == ("remove", "")
    assert actions[("requirements/cuda-tools.txt", "nvidia-ml-py")] == ("replace", "")
    assert actions[("requirements/cuda-tools.txt", "flash-attn")] == ("build", "")
    assert actions[("pyproject.toml [deepspeed]", "deepspeed")] == ("keep", "deepspeed<=0.18.4,>=0.14.0")
    te = next(e for e in by_id["requirements/fp8-te.txt"].entries if e.name == "transformer-engine")
    assert te.note.startswith("no ROCm build on PyPI: remove, or build AMD's ROCm fork of Transformer Engine")
    flash = next(e for e in by_id["requirements/cuda-tools.txt"].entries if e.name == "flash-attn")
    assert "Composable Kernel backend" in flash.note and "FLASH_ATTENTION_TRITON_AMD_ENABLE" in flash.note
    assert by_id["requirements/vllm.txt"].request is None  # nothing of it resolves on ROCm
    # No nvidia-* wheel anywhere on the ROCm side, the project's -c pins included.
    for side in by_id.values():
        if side.request:
            assert not [r for r in side.request.requirements + side.request.constraints if r.startswith("nvidia")]
    # The project's own ROCm Dockerfile: found, and its sets resolve against the image's torch (a stub).
    assert [(f.file, f.rocm_version, f.torch_version) for f in report.rocm_files] == [
        ("docker/docker-rocm/Dockerfile", "7.2", "2.7.1")]
    image = by_id["docker/docker-rocm/Dockerfile:6"]
    assert image.torch and image.torch.provided_by.startswith("rocm/pytorch:rocm7.2") and image.torch.kept
    assert image.request and [p.version for p in image.request.provided] == ["2.7.1+rocm7.2", "0.22.1+rocm7.2",
                                                                             "2.7.1+rocm7.2"]
    assert image.request.extra_indexes == []  # the image's torch, not the index's
    assert report.main_set == "pyproject.toml"
    text = requirements_text(report)
    assert "--extra-index-url https://download.pytorch.org/whl/rocm7.2\ntorch==2.14.1+rocm7.2\n" in text
    assert report.cuda_package_names() == ["bitsandbytes", "flash-attn", "nvidia-ml-py", "sglang", "torch",
                                           "torchvision", "transformer-engine", "triton", "vllm"]


def test_a_project_requirements_rocm_file_is_kept_and_its_own_set(tmp_path: Path) -> None:
    (tmp_path / "requirements.txt").write_text("torch==2.13.0\n")
    (tmp_path / "requirements-rocm.txt").write_text("torch==2.13.0+rocm7.2\nnvidia-cublas-cu12\n")
    report = build_report(tmp_path, (), ResolveOptions(), "7.2")
    own = next(s for s in report.sets if s.install_set.id == "requirements-rocm.txt")
    assert own.install_set.rocm and report.kept_files == ["requirements-rocm.txt"]
    assert requirements_text(report) == ""  # never written over the project's file
    torch = next(e for e in own.rocm.entries if e.name == "torch")
    assert (torch.action, torch.rocm_requirement) == ("pin", "torch==2.13.0+rocm7.2")
    assert [e.action for e in own.rocm.entries if e.name.startswith("nvidia")] == ["remove"]


@pytest.mark.parametrize(("declared", "rocm", "build", "kept"), [
    ("torch==2.13.0", "7.2", "2.13.0+rocm7.2", True),
    ("torch==2.8.0+cu128", "6.4", "2.8.0+rocm6.4", True),
    ("torch==2.8.0", "7.2", "2.11.0+rocm7.2", False),
    ("torch>=2.4,<2.12", "7.2", "2.11.0+rocm7.2", True),
    ("torch<2.0", "7.2", "2.14.1+rocm7.2", False),
])
def test_the_torch_version_is_kept_where_a_rocm_build_exists(declared: str, rocm: str, build: str, kept: bool,
                                                             tmp_path: Path) -> None:
    (tmp_path / "requirements.txt").write_text(declared + "\n")
    side = rocm_side(_sets(tmp_path)["requirements.txt"], rocm)
    assert side.torch and (side.torch.build, side.torch.kept) == (build, kept)
    assert side.torch.sources and side.torch.checked


def test_no_rocm_build_recorded_means_no_resolve(tmp_path: Path) -> None:
    (tmp_path / "requirements.txt").write_text("torch==2.1.0\nnumpy\n")
    side = rocm_side(_sets(tmp_path)["requirements.txt"], "5.7")
    assert side.request is None and "no ROCm 5.7 build of torch is recorded" in side.not_resolved


@pytest.mark.parametrize(("name", "kwargs", "expected"), [
    ("torch", {"version": "2.5.1+cu121"}, "torch-cuda"),
    ("torch", {"version": "2.8.0+rocm6.4"}, None),
    ("jax", {"extras": frozenset({"cuda12"})}, "jax-cuda"),
    ("jax", {}, None),
    ("sglang", {"extras": frozenset({"srt"})}, "sglang"),
    ("sglang", {}, None),
    ("cupy-cuda11x", {}, "cupy-cuda"),
    ("nvidia-cudnn-cu12", {}, "nvidia-runtime-wheels"),
    ("nvidia-nccl-cu13", {}, "nvidia-runtime-wheels"),
    ("transformer_engine", {}, "transformer-engine"),
    ("Flash_Attn", {}, "flash-attn"),
    ("transformers", {}, None),
])
def test_counterparts(name: str, kwargs: dict[str, object], expected: str | None) -> None:
    match = counterpart_for(name, **kwargs)  # type: ignore[arg-type]
    assert (match.id if match else None) == expected
    if match:
        assert match.sources and match.checked


# --- pip ---------------------------------------------------------------------------------------
@pytest.fixture
def index(tmp_path: Path) -> Iterator[SimpleIndex]:
    """Two indexes: "pypi" (CUDA torch that pulls NVIDIA wheels and triton, portable packages) and "rocm"
    (PyTorch's ROCm index: torch +rocm7.2 that pulls triton-rocm)."""
    with serving(tmp_path / "indexes") as served:
        served.add("pypi", "torch", "2.14.1", ("nvidia-cublas-cu12==12.8.4.1", "triton==3.8.0", "filelock"))
        served.add("pypi", "nvidia-cublas-cu12", "12.8.4.1")
        served.add("pypi", "triton", "3.8.0")
        served.add("pypi", "filelock", "3.16.1")
        served.add("pypi", "numpy", "2.1.0")
        served.add("pypi", "liger-kernel", "0.6.3", ("torch>=2.1.2", "triton>=2.3.1"))
        served.add("pypi", "servelib", "0.6.3", ("torch>=2.8",))
        served.add("rocm", "torch", "2.14.1+rocm7.2", ("triton-rocm==3.8.0", "filelock"))
        served.add("rocm", "torch", "2.7.1+rocm6.3", ("filelock",))
        served.add("rocm", "triton-rocm", "3.8.0")
        served.add("rocm", "filelock", "3.16.1")
        yield served


def _options(index: SimpleIndex, **kwargs: object) -> ResolveOptions:
    return ResolveOptions(index_url=index.url("pypi"), rocm_index=index.url("rocm"), timeout_s=120, **kwargs)  # type: ignore[arg-type]


def test_the_rocm_side_resolves_rocm_torch_not_the_cuda_wheels(tmp_path: Path, index: SimpleIndex) -> None:
    (tmp_path / "requirements.txt").write_text("torch==2.14.1\nnumpy\n")
    side = rocm_side(_sets(tmp_path)["requirements.txt"], "7.2")
    assert side.request is not None
    resolution = resolve_request(side.request, _options(index))
    assert resolution.status == "resolved", resolution.message
    assert {p.name: p.version for p in resolution.packages} == {
        "torch": "2.14.1+rocm7.2", "triton-rocm": "3.8.0", "filelock": "3.16.1", "numpy": "2.1.0"}
    check = check_resolution(resolution, side.request.torch_build, side.request.triton_spec, "7.2")
    assert check.problems == []
    assert check.constraints == ["filelock==3.16.1", "numpy==2.1.0", "torch==2.14.1+rocm7.2", "triton-rocm==3.8.0"]


def test_pypi_triton_beside_rocm_triton_is_a_problem_and_the_range_is_checked(tmp_path: Path,
                                                                               index: SimpleIndex) -> None:
    (tmp_path / "requirements.txt").write_text("torch==2.14.1\nliger-kernel>=0.6.3\ntriton>=3.5\n")
    side = rocm_side(_sets(tmp_path)["requirements.txt"], "7.2")
    assert side.request is not None and "triton>=3.5" not in side.request.requirements
    resolution = resolve_request(side.request, _options(index))
    check = check_resolution(resolution, side.request.torch_build, side.request.triton_spec, "7.2")
    assert check.problems == ["triton 3.8.0 from PyPI (pulled in by liger-kernel) would be installed beside "
                              "triton-rocm 3.8.0: both install the triton module; install liger-kernel with --no-deps"]
    assert check.notes == ["triton>=3.5 is provided by triton-rocm 3.8.0"]
    assert "triton==3.8.0" not in check.constraints


def test_a_package_wanting_another_torch_than_the_image_provides_is_a_conflict(index: SimpleIndex,
                                                                               tmp_path: Path) -> None:
    (tmp_path / "Dockerfile").write_text("FROM rocm/pytorch:rocm6.3_ubuntu22.04_py3.10_pytorch_release_2.7.1\n"
                                         "RUN pip install servelib==0.6.3\n")
    side = rocm_side(_sets(tmp_path)["Dockerfile:2"], "6.3", "2.7.1")
    assert side.request and side.request.provided
    resolution = resolve_request(side.request, _options(index))
    assert resolution.status == "conflict"
    assert "servelib 0.6.3 depends on torch>=2.8" in resolution.message


@pytest.mark.skipif(not HOST_PIP_CONF.is_file(), reason="this machine has no system pip.conf to ignore")
def test_the_host_pip_configuration_is_ignored(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """This machine's /etc/xdg/pip/pip.conf caps torch with a constraint file; PIP_* variables would
    add more. The resolve sees neither."""
    assert "constraint" in HOST_PIP_CONF.read_text()
    links = tmp_path / "links"
    links.mkdir()
    make_wheel(links, "torch", "2.15.0")
    bad = tmp_path / "cap.txt"
    bad.write_text("torch<2\n")
    monkeypatch.setenv("PIP_CONSTRAINT", str(bad))
    monkeypatch.setenv("PIP_INDEX_URL", "http://127.0.0.1:9/simple")
    resolution = resolve(["torch==2.15.0"], ResolveOptions(no_index=True, find_links=(str(links),), timeout_s=120))
    assert resolution.status == "resolved", resolution.message
    assert [(p.name, p.version) for p in resolution.packages] == [("torch", "2.15.0")]
    assert os.environ["PIP_CONSTRAINT"] == str(bad)  # the worker's own environment is left as it was


def test_a_package_with_only_sources_is_listed_and_its_setup_never_runs(tmp_path: Path) -> None:
    links = tmp_path / "links"
    links.mkdir()
    make_sdist(links, "flash-attn", "2.6.3")
    make_wheel(links, "numpy", "2.1.0")
    resolution = resolve(["flash-attn==2.6.3", "numpy"], ResolveOptions(no_index=True, find_links=(str(links),)))
    assert resolution.status == "partial" and resolution.no_wheel == ["flash-attn==2.6.3"]
    assert [p.name for p in resolution.packages] == ["numpy"]


def test_requirements_never_pass_for_options(tmp_path: Path) -> None:
    """Everything after "--" is a requirement: a name cannot smuggle "-r /etc/shadow" in."""
    request = ResolveRequest(["numpy"], constraints=["numpy==2.1.0"])
    from worker.scanning.dep_resolve import pip_command

    argv = pip_command(request.requirements, ResolveOptions(), request, str(tmp_path))
    assert argv[argv.index("--") + 1:] == ["numpy"] and "--isolated" in argv
    with pytest.raises(ValueError):
        resolve(["mylib @ file:///etc/passwd"], ResolveOptions())


def test_an_unreachable_index_says_so() -> None:
    resolution = resolve(["torch==2.5.1"], ResolveOptions(index_url="http://127.0.0.1:9/simple", timeout_s=60))
    assert resolution.status == "unreachable"
    assert resolution.message.startswith("the package index could not be reached")


def test_a_conflict_is_reported_with_its_causes(index: SimpleIndex) -> None:
    resolution = resolve(["torch==2.7.1+rocm6.3", "servelib==0.6.3"], _options(index),
                         request=ResolveRequest([], extra_indexes=["rocm"]))
    assert resolution.status == "conflict"
    assert resolution.message.startswith("conflict: The user requested torch==2.7.1+rocm6.3")
    assert "servelib 0.6.3 depends on torch>=2.8" in resolution.message


def test_a_cancelled_run_stops_pip() -> None:
    with socket.socket() as silent:  # an index that accepts connections and never answers
        silent.bind(("127.0.0.1", 0))
        silent.listen(8)
        started = time.monotonic()
        options = ResolveOptions(index_url=f"http://127.0.0.1:{silent.getsockname()[1]}/simple", timeout_s=120)
        resolution = resolve(["torch==2.5.1"], options, cancel=lambda: time.monotonic() - started > 1.0)
    assert resolution.status == "cancelled"


def test_pypi_triton_inside_a_rocm_image_is_a_problem_too(index: SimpleIndex, tmp_path: Path) -> None:
    """The image's torch is a stub without its Triton; the image has one all the same."""
    (tmp_path / "Dockerfile").write_text("FROM rocm/pytorch:rocm6.3_ubuntu22.04_py3.10_pytorch_release_2.7.1\n"
                                         "RUN pip install liger-kernel==0.6.3\n")
    side = rocm_side(_sets(tmp_path)["Dockerfile:2"], "6.3", "2.7.1")
    assert side.request is not None
    resolution = resolve_request(side.request, _options(index))
    check = check_resolution(resolution, side.request.torch_build, side.request.triton_spec, "6.3", side.request.image)
    assert check.problems == ["triton 3.8.0 from PyPI (pulled in by liger-kernel) would be installed beside the "
                              "Triton of rocm/pytorch:rocm6.3_ubuntu22.04_py3.10_pytorch_release_2.7.1: both install "
                              "the triton module; install liger-kernel with --no-deps"]

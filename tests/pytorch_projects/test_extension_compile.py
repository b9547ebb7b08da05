"""PyTorch extension kernels compiled here, in the sandbox, against the hipified header tree of the worker's
torch: a setup.py extension with two kernels and a binding, a JIT ``load()`` project, a seeded compile
error reported at the original file and line. One header tree and one object cache serve the module; the
projects are compiled for one offload target (the default targets are checked where no compile is needed)."""
from __future__ import annotations

import html
import json
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client

from migrator.accounts.models import Team
from migrator.projects.causes import causes_from_data
from migrator.projects.verdict import NO_ROCM_PYTORCH_RUNNER, run_verdict, unchecked_reason
from migrator.reports.build import build_report, render_markdown
from tests.pytorch_projects.conftest import FIXTURES
from tests.pytorch_projects.markers import needs_torch
from tests.stage_panels.panel_project import panel_of, run_project, stage_page
from worker.context import StageContext, Workspace
from worker.project_settings import ProjectSettings
from worker.scanning.extension_units import extension_units
from worker.stages import compile as compile_stage
from worker.stages import hipify, scan
from worker.stages.extension_compile import runner_commands
from worker.toolchain.extension_build import map_nvcc_flags
from worker.toolchain.torch_headers import CMAKE_MACROS, ensure_header_tree, header_store, torch_install, tree_key

pytestmark = needs_torch
CHECKED = "hipified; linking and running need a ROCm PyTorch runner"
ARCH = "gfx90a"
ONE_TARGET: dict[str, object] = {"offload_archs": [ARCH]}  # the compiled projects' settings (one target: faster)


@pytest.fixture(scope="module")
def shared(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """The module's object cache (the second compile of a file is a cache hit). The header tree is the
    worker's, in its store (built by the first test to need it, then kept like the toolchain roots)."""
    folder = tmp_path_factory.mktemp("extension-compile")
    patch = pytest.MonkeyPatch()
    patch.setenv("MIGRATOR_RESOLVE_DEPENDENCIES", "off")
    yield folder
    patch.undo()


def _context(root: Path, cache: Path, previous: dict[str, dict[str, Any]] | None = None,
             logs: list[str] | None = None) -> StageContext:
    return StageContext(run_id=1, project_id=1, workspace=Workspace(root),
                        settings=ProjectSettings.from_dict(ONE_TARGET),
                        cache_dir=cache, source_spec={"kind": "archive"}, previous=previous or {},
                        log=(logs.append if logs is not None else lambda text: None))


def _through_compile(shared: Path, name: str, edit: tuple[str, str, str] | None = None,
                     logs: list[str] | None = None, empty_dirs: tuple[str, ...] = ()
                     ) -> tuple[Path, dict[str, dict[str, Any]], Any]:
    """Scan, hipify (PyTorch's hipify, in the sandbox) and compile one fixture project in a fresh workspace."""
    root = shared / f"ws-{name}-{len(list(shared.glob('ws-*')))}"
    root.mkdir()
    shutil.copytree(FIXTURES / name, root / "source")
    if edit is not None:
        path, old, new = edit
        target = root / "source" / path
        target.write_text(target.read_text().replace(old, new, 1))
    for folder in empty_dirs:  # what an archive leaves of a submodule (git keeps no empty folder)
        (root / "source" / folder).mkdir(parents=True)
    previous: dict[str, dict[str, Any]] = {}
    for stage_name, stage in (("scan", scan), ("hipify", hipify)):
        result = stage.run(_context(root, shared / "cache", previous))
        assert result.outcome == "passed", result.summary
        previous[stage_name] = json.loads(json.dumps(result.data))
    return root, previous, compile_stage.run(_context(root, shared / "cache", previous, logs))


def test_the_header_tree_is_built_once_with_its_provenance(shared: Path) -> None:
    tree = ensure_header_tree()
    assert (tree.path / "include/ATen/hip/HIPContext.h").is_file()
    assert (tree.path / "include/c10/hip/HIPStream.h").is_file() and (tree.path / "python/Python.h").is_file()
    manifest = tree.manifest
    assert manifest["torch_version"] == tree.torch_version and tree.torch_version.startswith("2.")
    assert str(manifest["hipify"]).startswith("torch.utils.hipify ")
    assert manifest["generated"] == [f"include/{CMAKE_MACROS}"]
    assert isinstance(manifest["hipified"], int) and manifest["hipified"] > 100
    assert ensure_header_tree().manifest["built_at"] == manifest["built_at"]  # cached, not built again
    assert tree.path.parent == header_store() and tree.path.name == tree_key(torch_install() or pytest.fail())


def test_the_builds_are_read_without_running_them() -> None:
    (unit,) = extension_units(FIXTURES / "rowops", (), [])
    assert (unit.name, unit.how, unit.declared_in) == ("rowops._C", "setup.py", "setup.py:15")
    assert unit.sources == ["csrc/rowops.cpp", "csrc/cuda/row_softmax.cu", "csrc/cuda/row_rmsnorm.cu"]
    assert unit.include_dirs == ["csrc/include"] and unit.defines == ["ROWOPS_MAX_THREADS=256"]
    assert unit.cxx_flags == ["-O2"]
    mapped, _notes = map_nvcc_flags(unit.nvcc_flags, ("gfx90a",))
    assert mapped == ["-O3", "-ffast-math", "-fno-strict-aliasing"]
    # nvcc's compile threads, however spelled, in a list that never names nvcc (as a quantisation package has it)
    assert map_nvcc_flags(["--threads=8", "--threads", "4", "-t=2", "-O2"], ("gfx90a",))[0] == ["-O2"]
    (jit,) = extension_units(FIXTURES / "jitops", (), [])
    assert (jit.how, jit.name, jit.directory) == ("load", "jitops_kernels", "jitops")
    assert jit.sources == ["jitops/kernels/gather_scale.cu", "jitops/kernels/binding.cpp"]
    assert jit.nvcc_flags == ["-O3", "--expt-extended-lambda"]
    archs = ProjectSettings().offload_archs  # a runner builds for every target of the run
    assert runner_commands([jit], archs, FIXTURES / "jitops")[0].startswith(
        f"cd /workspace/hip && PYTORCH_ROCM_ARCH='{';'.join(archs)}' python3 jitops/ops.py")


def test_a_setup_py_extension_compiles_in_the_sandbox(shared: Path) -> None:
    _root, _previous, result = _through_compile(shared, "rowops")
    assert result.outcome == "passed", result.summary
    assert result.data["mode"] == "extension" and CHECKED in result.summary
    assert {f["original_path"]: f["status"] for f in result.data["files"]} == {
        "csrc/rowops.cpp": "passed", "csrc/cuda/row_softmax.cu": "passed", "csrc/cuda/row_rmsnorm.cu": "passed"}
    assert all(f["object_size"] > 0 for f in result.data["files"])
    hip_command = next(f["command"] for f in result.data["files"] if f["path"] == "csrc/hip/row_softmax.hip")
    assert f"--offload-arch={ARCH}" in hip_command and "-ffast-math" in hip_command
    assert "-DROWOPS_MAX_THREADS=256" in hip_command and "-DTORCH_EXTENSION_NAME=_C" in hip_command
    (extension,) = result.data["extensions"]
    assert extension["state"] == "passed" and extension["link"] == "needs a ROCm PyTorch runner"
    assert extension["checked"] == result.data["checked"]
    assert result.data["checked"].startswith(f"compiled against PyTorch {ensure_header_tree().torch_version}'s")
    assert result.data["would_run"] == [f"cd /workspace/hip && PYTORCH_ROCM_ARCH='{ARCH}' python3 -m pip install "
                                        "--no-build-isolation --no-deps --target /workspace/site -v ."]


def test_a_seeded_error_is_reported_at_the_original_file_and_line(shared: Path) -> None:
    line = "  const float scale = rsqrtf(scratch[0] / cols + eps);"
    _root, _previous, result = _through_compile(
        shared, "rowops", ("csrc/cuda/row_rmsnorm.cu", line, line.replace("eps", "epsilon")))
    assert result.outcome == "failed"
    statuses = {f["original_path"]: (f["status"], f["cached"]) for f in result.data["files"]}
    assert statuses["csrc/cuda/row_rmsnorm.cu"] == ("failed", False)
    assert statuses["csrc/rowops.cpp"] == ("passed", True)  # unchanged: the module's cache
    expected = (FIXTURES / "rowops/csrc/cuda/row_rmsnorm.cu").read_text().splitlines().index(line) + 1
    errors = [d for d in result.data["diagnostics"] if d["severity"] == "error"]
    assert errors and (errors[0]["original_file"], errors[0]["original_line"]) == ("csrc/cuda/row_rmsnorm.cu",
                                                                                    expected)
    assert "epsilon" in errors[0]["message"]
    assert result.data["extensions"][0]["state"] == "failed"


@pytest.mark.django_db
def test_a_jit_load_project_compiles_through_the_pipeline_and_needs_a_rocm_pytorch_runner(
    shared: Path, alice_client: Client, team_user: tuple[User, Team], only_stages: Callable[..., None]
) -> None:
    only_stages("fetch", "scan", "hipify", "compile", "link")
    files = {p.relative_to(FIXTURES / "jitops").as_posix(): p.read_text() for p in (FIXTURES / "jitops").rglob("*")
             if p.is_file()}
    run = run_project(team_user, files, ONE_TARGET)
    compiled, linked = run.stages.get(name="compile"), run.stages.get(name="link")
    assert compiled.state == "passed", compiled.summary
    assert {f["original_path"] for f in compiled.data["files"]} == {"jitops/kernels/gather_scale.cu",
                                                                    "jitops/kernels/binding.cpp"}
    would_run = compiled.data["would_run"]  # no setup.py: never pip install, the script builds it at run time
    assert not any("pip install" in command for command in would_run)
    assert would_run[0].startswith(f"cd /workspace/hip && PYTORCH_ROCM_ARCH='{ARCH}' python3 jitops/ops.py")
    assert linked.state == "skipped" and linked.data["no_pytorch_runner"]
    assert "needs a ROCm PyTorch runner" in linked.summary
    assert unchecked_reason(linked) == NO_ROCM_PYTORCH_RUNNER
    assert "needs a ROCm PyTorch runner" in run_verdict(run).needs
    panel = html.unescape(panel_of(stage_page(alice_client, run, "compile")))
    assert f"What was checked: {compiled.data['checked']}." in panel
    assert "<strong>jitops_kernels</strong> (load, <code>jitops/ops.py:9</code>): passed" in panel
    assert "link and run: needs a ROCm PyTorch runner" in panel and "pip install" not in panel
    report = build_report(run)
    section = report["compile"]
    assert isinstance(section, dict) and section["checked"] == compiled.data["checked"]
    assert f"**Checked:** {compiled.data['checked']}. A ROCm PyTorch runner would run:" in render_markdown(report)


def test_a_core_with_bindings_is_built_whole_each_part_with_its_own_result(shared: Path) -> None:
    logs: list[str] = []
    root, previous, result = _through_compile(shared, "voxkit", logs=logs, empty_dirs=("dependencies/cutlass",))
    assert [s["message"] for s in previous["scan"]["empty_submodules"]] == [
        "`dependencies/cutlass` is an empty submodule directory: the build will need it "
        "(https://github.com/NVIDIA/cutlass.git)",
        "`dependencies/fmt` is a submodule missing from the tree: the build will need it "
        "(https://github.com/fmtlib/fmt.git)"]
    hipified = previous["hipify"]
    assert hipified["renames"]["bindings/torch/occupancy_ops.cu"] == "bindings/torch/occupancy_ops.hip"
    assert "hip_runtime" in (root / "hip/include/voxkit/voxelize.h").read_text()  # the core: builtin engine
    assert result.outcome == "passed", "".join(logs)[-3000:]
    parts = {p["name"]: p["state"] for p in result.data["parts"]}
    assert parts == {"core": "passed", "extension voxkit_torch._C": "passed"}
    core = result.data["core"]  # built by its own CMake, the bindings' folder left to the extension build
    assert core["mode"] == "project" and core["project_build"]["ok"]
    assert "configure" in [step["name"] for step in core["project_build"]["steps"]]
    assert {f["original_path"] for f in result.data["files"]} == {"bindings/torch/voxkit_torch.cpp",
                                                                  "bindings/torch/occupancy_ops.cu"}
    assert result.data["would_run"] == [f"cd /workspace/hip/bindings/torch && PYTORCH_ROCM_ARCH='{ARCH}' python3 -m "
                                        "pip install --no-build-isolation --no-deps --target /workspace/site -v ."]


def test_computed_and_inline_sources_are_named_not_guessed(tmp_path: Path) -> None:
    (tmp_path / "kernels").mkdir()
    (tmp_path / "kernels" / "a.cu").write_text("__global__ void k() {}\n")
    (tmp_path / "kernels" / "b.cu").write_text("__global__ void k2() {}\n")
    (tmp_path / "setup.py").write_text(
        "import glob, os\n"
        "from torch.utils.cpp_extension import CUDAExtension, load_inline\n"
        "ext = CUDAExtension('pkg._C', sources=glob.glob('kernels/*.cu') + [os.environ['EXTRA']],\n"
        "                    extra_compile_args=['-O3'])\n"
        "mod = load_inline(name='inline_ops', cpp_sources='int f();', cuda_sources='__global__ void g() {}')\n")
    setup, inline = extension_units(tmp_path, (), [])
    assert setup.sources == ["kernels/a.cu", "kernels/b.cu"]
    assert setup.cxx_flags == setup.nvcc_flags == ["-O3"]  # a list goes to both compilers, as BuildExtension does
    assert any("sources is computed (os.environ['EXTRA'])" in note for note in setup.notes)
    assert inline.how == "load_inline" and not inline.sources
    assert "not compiled here" in inline.notes[0]


def test_bindings_that_list_the_cores_sources_inside_their_build_logic_are_read() -> None:
    """A neural-graphics layout: the bindings' setup.py names the core's own sources (``../../src/...``) inside
    ``if build_extensions:`` and a ``make_extension()`` helper, include folders as f-strings of the root."""
    (unit,) = extension_units(FIXTURES / "hashgrid", (), [])
    assert (unit.directory, unit.declared_in) == ("bindings/torch", "bindings/torch/setup.py:53")
    assert unit.sources == ["bindings/torch/hashgrid/bindings.cpp", "src/encoding.cu", "src/common_host.cu"]
    assert unit.include_dirs == ["include"] and unit.name == "hashgrid._{compute_capability}_C"
    assert unit.nvcc_flags[:3] == ["-std=c++17", "--extended-lambda", "--use_fast_math"]
    assert "-DHASHGRID_TORCH" in unit.cxx_flags and "-DHASHGRID_TORCH" in unit.nvcc_flags


def test_a_core_whose_bindings_compile_its_own_sources_is_built_whole(shared: Path) -> None:
    logs: list[str] = []
    _root, _previous, result = _through_compile(shared, "hashgrid", logs=logs)
    assert result.outcome == "passed", "".join(logs)[-3000:]
    parts = {p["name"]: p["state"] for p in result.data["parts"]}
    assert parts == {"core": "passed", "extension hashgrid._{compute_capability}_C": "passed"}
    core = result.data["core"]  # the core's CMake: its library and its benchmark, the bindings' folder left out
    assert core["mode"] == "project" and core["project_build"]["ok"]
    assert {f["original_path"]: f["status"] for f in result.data["files"]} == {
        "bindings/torch/hashgrid/bindings.cpp": "passed", "src/encoding.cu": "passed", "src/common_host.cu": "passed"}
    binding = next(f["command"] for f in result.data["files"] if f["original_path"] == "bindings/torch/hashgrid/bindings.cpp")
    assert "-DTORCH_EXTENSION_NAME=__compute_capability__C" in binding and "-DHASHGRID_TORCH" in binding


def test_servekit_kernels_fail_on_their_genuine_causes_at_the_original_file_and_line(shared: Path) -> None:
    """The serving runtime's kernels (a CMake find_package(Torch) extension in a mixed repository) compile and
    fail on two genuine errors: ``torch::kCUDA`` without the header that declares it, and a 32-bit full mask
    handed to ``__shfl_xor_sync`` (the error is in HIP's header; it is reported at the kernel's line)."""
    _root, _previous, result = _through_compile(shared, "mixed")
    assert result.outcome == "failed" and result.data["mode"] == "extension"
    assert {f["original_path"]: f["status"] for f in result.data["files"]} == {
        "kernels/csrc/bindings.cpp": "failed", "kernels/csrc/rmsnorm.cu": "failed"}
    sources = {name: (FIXTURES / "mixed/kernels/csrc" / name).read_text().splitlines() for name in
               ("bindings.cpp", "rmsnorm.cu")}
    kcuda = next(i for i, text in enumerate(sources["bindings.cpp"], 1) if "torch::kCUDA" in text)
    mask = next(i for i, text in enumerate(sources["rmsnorm.cu"], 1) if "__shfl_xor_sync(0xffffffff" in text)
    errors = {(d["original_file"], d["original_line"]): d["message"] for d in result.data["diagnostics"]
              if d["severity"] == "error"}
    assert "no member named 'kCUDA' in namespace 'torch'" in errors[("kernels/csrc/bindings.cpp", kcuda)]
    assert "The mask must be a 64-bit integer" in errors[("kernels/csrc/rmsnorm.cu", mask)]
    causes = {(g.kind, g.key): g.files for g in causes_from_data(result.data, {}).groups}
    assert causes == {("translation", "lane-mask"): ["kernels/csrc/rmsnorm.cu"],
                      ("project_code", "cxx-error"): ["kernels/csrc/bindings.cpp"]}
    assert [e["state"] for e in result.data["extensions"]] == ["failed"]

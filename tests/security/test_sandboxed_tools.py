"""The tools that read user content besides the compiler: PyTorch's hipify, hipify-perl and c++filt.

Each gets hostile input of the kinds an archive or a build can carry: file names built for a shell, links
planted in the tree to host files (PyTorch's hipify follows an ``#include`` into any file of the tree, reads
it, and writes its translation to a path of the tree, through a link if one is planted there), and for
c++filt a tool of the same name put first on the worker's PATH. Canaries on
the host, outside every sandbox, prove that nothing was read or written there and that each tool ran in the
sandbox over the toolchain root.
"""
from __future__ import annotations

import json
import os
import shutil
import stat
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.pytorch_projects.markers import needs_torch
from worker.context import StageContext, Workspace
from worker.project_settings import ProjectSettings
from worker.stages import hipify, scan
from worker.stages.engine_tree import OUTPUT_DIR, copy_changed, copy_into, engine_sandbox
from worker.toolchain.demangle import sandboxed_demangler
from worker.toolchain.diagnostics import parse_linker_output
from worker.toolchain.roots import ToolchainRoot, select_root
from worker.toolchain.sandbox import Sandbox

SECRET = "HOST-SECRET-7f3a"
HOSTILE = ["k$(touch PWNED-dollar).cu", "k`touch PWNED-tick`.cu", "k;touch PWNED-semi;.cu", "k|touch PWNED-pipe.cu",
           "-k-looks-like-an-option.cu"]
KERNEL = """#include <cuda_runtime.h>
__global__ void scale(float* x, int n) { int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) x[i] *= 2; }
void launch(float* x, int n, cudaStream_t stream) { scale<<<(n + 255) / 256, 256, 0, stream>>>(x, n); }
"""
SETUP_PY = """from setuptools import setup
from torch.utils.cpp_extension import BuildExtension, CUDAExtension

setup(name="attack", ext_modules=[CUDAExtension("attack._C", ["csrc/binding.cpp", "csrc/cuda/scale.cu"])],
      cmdclass={"build_ext": BuildExtension})
"""


@pytest.fixture
def canary() -> Iterator[Path]:
    """A folder on the host, outside every workspace and every sandbox (/var/tmp is the root's inside)."""
    folder = Path(tempfile.mkdtemp(prefix="canary-", dir="/var/tmp"))
    (folder / "secret.cuh").write_text(f"// {SECRET}\n__global__ void leaked(float* x) {{ *x = 1; }}\n"
                                       "inline void go(cudaStream_t s) { leaked<<<1, 1, 0, s>>>(nullptr); }\n")
    (folder / "inplace.h").write_text(f"// {SECRET}\n#include <cuda_runtime.h>\ninline void f() {{ cudaDeviceSynchronize(); }}\n")
    (folder / "victim.cuh").write_text("a host file the translation must never overwrite\n")
    yield folder
    shutil.rmtree(folder)


def host_state(folder: Path) -> dict[str, str]:
    return {p.relative_to(folder).as_posix(): p.read_text() for p in sorted(folder.rglob("*")) if p.is_file()}


def pwned(tree: Path) -> list[Path]:
    return [*tree.rglob("PWNED*"), *(p for folder in (Path("/tmp"), Path("/var/tmp"), Path.cwd())
                                     for p in folder.glob("PWNED*"))]


def regular_files_containing(tree: Path, text: str) -> list[str]:
    return [p.relative_to(tree).as_posix() for p in tree.rglob("*")
            if p.is_file() and not p.is_symlink() and text in p.read_text(errors="replace")]


def context(root: Path, previous: dict[str, dict[str, object]] | None = None, **settings: object) -> StageContext:
    logs: list[str] = []
    return StageContext(run_id=1, project_id=1, workspace=Workspace(root), settings=ProjectSettings.from_dict(settings),
                        cache_dir=root / "cache", source_spec={"kind": "archive"}, previous=previous or {},
                        log=logs.append)


def attack_extension(tmp_path: Path, canary: Path) -> Path:
    """An extension whose kernel includes planted links to host files (reads), and a header of its own whose
    translation's path, ``csrc/hip/victim.cuh``, is a planted link to a host file (a write)."""
    source = tmp_path / "run" / "source"
    (source / "csrc" / "cuda").mkdir(parents=True)
    (source / "setup.py").write_text(SETUP_PY)
    (source / "csrc" / "binding.cpp").write_text("#include <torch/extension.h>\nvoid launch(float*, int);\n")
    (source / "csrc" / "cuda" / "scale.cu").write_text(
        f'#include "secret.cuh"\n#include "../inplace.h"\n#include "victim.cuh"\n{KERNEL}')
    (source / "csrc" / "cuda" / "secret.cuh").symlink_to(canary / "secret.cuh")
    (source / "csrc" / "inplace.h").symlink_to(canary / "inplace.h")
    (source / "csrc" / "cuda" / "victim.cuh").write_text("#pragma once\ninline void v(cudaStream_t s) {}\n")
    (source / "csrc" / "hip").mkdir()
    (source / "csrc" / "hip" / "victim.cuh").symlink_to(canary / "victim.cuh")
    for index, name in enumerate(HOSTILE):
        (source / "csrc" / "cuda" / name).write_text(KERNEL.replace("scale", f"scale{index}"))
    return source.parent


def scanned(root: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, dict[str, object]]:
    monkeypatch.setenv("MIGRATOR_RESOLVE_DEPENDENCIES", "off")
    result = scan.run(context(root))
    assert result.outcome == "passed", result.summary
    return {"scan": json.loads(json.dumps(result.data))}


@needs_torch
def test_pytorchs_hipify_reads_and_writes_no_host_file_through_links_or_climbing_includes(
    tmp_path: Path, canary: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = attack_extension(tmp_path, canary)
    before = host_state(canary)
    previous = scanned(root, monkeypatch)
    assert previous["scan"]["project_kind"]["kind"] == "pytorch-extension"  # type: ignore[index]
    result = hipify.run(context(root, previous))
    assert result.outcome == "passed", result.summary
    assert result.data["engine"] == "torch.utils.hipify"
    hip = root / "hip"
    assert regular_files_containing(hip, SECRET) == []  # the host file behind the link was never read
    assert host_state(canary) == before  # nor one written through a link
    assert "hipLaunchKernelGGL" in (hip / "csrc/hip/scale.hip").read_text()
    assert result.data["renames"]["csrc/cuda/scale.cu"] == "csrc/hip/scale.hip"
    for index, name in enumerate(HOSTILE):  # translated under their own names, no shell ever saw them
        assert f"hipLaunchKernelGGL(( scale{index})" in (hip / "csrc/hip" / name.replace(".cu", ".hip")).read_text()
    assert (hip / "csrc/cuda/secret.cuh").is_symlink() and (hip / "csrc/inplace.h").is_symlink()  # links, as they were
    assert pwned(root) == []
    assert not (root / OUTPUT_DIR).exists()


@needs_torch
def test_pytorchs_hipify_runs_on_the_roots_python_or_not_at_all(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = tmp_path / "run"
    shutil.copytree(Path(__file__).parents[1] / "pytorch_projects/fixtures/extension", root / "source")
    previous = scanned(root, monkeypatch)
    real = select_root()
    bare = tmp_path / "bare-root"  # a root with no python3: the worker's own interpreter must not stand in
    (bare / "usr/bin").mkdir(parents=True)
    monkeypatch.setattr("worker.stages.torch_engine.select_root",
                        lambda name="": ToolchainRoot("bare", bare, real.hip_version, real.llvm, "", ""))
    ctx = context(root, previous)
    logs: list[str] = []
    ctx.log = logs.append
    result = hipify.run(ctx)
    assert result.outcome == "passed" and result.data["engine"] == "builtin"
    assert any("torch.utils.hipify not used: the toolchain root bare has no python3" in line for line in logs)


def test_hipify_perl_reads_no_host_file_through_a_planted_link_and_no_name_reaches_a_shell(
    tmp_path: Path, canary: Path
) -> None:
    root = tmp_path / "run"
    src = root / "source" / "src"
    src.mkdir(parents=True)
    for index, name in enumerate(HOSTILE):
        (src / name).write_text(KERNEL.replace("scale", f"scale{index}"))
    (src / "leak.cu").symlink_to(canary / "secret.cuh")
    before = host_state(canary)
    result = hipify.run(context(root, hipify_engine="hipify-perl", rename_cu_to_hip=True))
    assert result.outcome == "passed", result.summary
    hip = root / "hip" / "src"
    for name in HOSTILE:
        assert "hipStream_t stream" in (hip / name.replace(".cu", ".hip")).read_text()
        assert not (hip / name).exists()  # renamed, as asked
    assert (hip / "leak.cu").is_symlink() and regular_files_containing(root / "hip", SECRET) == []
    assert host_state(canary) == before and pwned(root) == []
    assert not (root / OUTPUT_DIR).exists()


def test_an_engines_sandbox_cannot_write_the_source_the_translation_or_the_records(tmp_path: Path) -> None:
    workspace = Workspace(tmp_path / "run")
    for folder in (workspace.source, workspace.hip, workspace.records):
        folder.mkdir(parents=True)
    ctx = context(workspace.root)
    with engine_sandbox(ctx, select_root()) as (sandbox, output):
        names = ["source/s", ".translated/h", "records/translation.json", "../records/translation.json",
                 f"{OUTPUT_DIR}/ok"]
        done = sandbox.run(["/bin/sh", "-c", 'for f; do touch "/workspace/$f" 2>/dev/null && echo "wrote $f"; done',
                            "sh", *names])
        assert done.process.output.split() == ["wrote", f"{OUTPUT_DIR}/ok"]
        assert output == workspace.work / OUTPUT_DIR and (output / "ok").is_file()
    assert not any((workspace.root / name).exists() for name in ("source/s", "hip/h", "records/translation.json"))
    assert not output.exists()  # the engine's folder goes when the block ends


def test_what_an_engine_leaves_is_taken_in_only_as_regular_files_inside_its_folder(tmp_path: Path, canary: Path) -> None:
    source, output, hip = tmp_path / "source", tmp_path / "out", tmp_path / "hip"
    for tree in (source, output, hip):
        (tree / "src").mkdir(parents=True)
    (source / "src/a.cu").write_text("cudaMalloc\n")
    (hip / "src/a.cu").write_text("cudaMalloc\n")
    (output / "src/a.cu").write_text("hipMalloc\n")  # a real translation: taken
    (output / "src/secret.cu").symlink_to(canary / "secret.cuh")  # links to the host: never followed
    (output / "escape").symlink_to(canary, target_is_directory=True)
    os.mkfifo(output / "src/blocks.cu")  # a FIFO would stall a plain open()
    (output / "linked/x.hip").parent.mkdir()
    (output / "linked/x.hip").write_text("hip\n")
    (hip / "linked").symlink_to(canary, target_is_directory=True)  # a folder of the translated tree that is a link
    logs: list[str] = []
    copied = copy_changed(output, source, hip, logs.append)
    assert copied == ["src/a.cu"] and (hip / "src/a.cu").read_text() == "hipMalloc\n"
    assert not (hip / "src/secret.cu").exists() and not (hip / "src/blocks.cu").exists() and not (hip / "escape").exists()
    assert not (canary / "x.hip").exists() and any("linked/x.hip" in line and "is a link" in line for line in logs)
    assert copy_into(output, "src/secret.cu", hip) != "" and not (hip / "src/secret.cu").exists()
    assert stat.S_ISFIFO(os.lstat(output / "src/blocks.cu").st_mode)


def test_link_errors_are_demangled_by_the_roots_cxxfilt_never_one_on_the_workers_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    planted = tmp_path / "bin"
    planted.mkdir()
    ran = tmp_path / "host-cxxfilt-ran"
    (planted / "c++filt").write_text(f"#!/bin/sh\ntouch {ran}\nsed 's/.*/HOST-{SECRET}/'\n")
    (planted / "c++filt").chmod(0o755)
    monkeypatch.setenv("PATH", f"{planted}:{os.environ['PATH']}")
    output = "ld: main.o: in function `main':\nmain.cu:(.text+0x42): undefined reference to `_ZN4blas4gemmEPKfS1_Pfi'\n"
    workspace = tmp_path / "run"
    workspace.mkdir()
    [problem] = parse_linker_output(output, sandboxed_demangler(Sandbox(select_root(), workspace)))
    assert problem.symbol == "blas::gemm(float const*, float const*, float*, int)"
    assert not ran.exists()

"""CMake builds from CMake's own model, with default settings: the CMake fixtures of tests/fixtures/cmake_model
through the hipify, compile and link stages, and (``--cuda-samples``) real CMake samples of NVIDIA's
cuda-samples through ``manage.py migrate_repo`` the way a new user runs it.

Each cuda-samples unit is the repository's own layout (its top-level CMakeLists.txt, ``cmake/``, ``Common/``
and one sample folder) with the top-level ``add_subdirectory(Samples)`` replaced by that one sample, since
the samples reach ``../../../Common``; nothing of the sample itself is changed. The repository is read
from a bare git directory (``git --git-dir=... archive``), at run time, into a scratch folder.

Prints one line per unit (compile and link state, seconds, what CMake's model says was built and for
which GPUs) and built/total.

    .venv/bin/python bench/cmake_model_bench.py [--cuda-samples GIT_DIR] [--samples a,b,c] [--no-fixtures]
"""
from __future__ import annotations

import argparse
import io
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _benchdb import ROOT, scratch_django

FIXTURES = ROOT / "tests" / "fixtures" / "cmake_model"
SAMPLES = ("0_Introduction/vectorAdd", "0_Introduction/matrixMul", "0_Introduction/asyncAPI",
           "0_Introduction/clock", "0_Introduction/simpleTemplates", "0_Introduction/simpleAtomicIntrinsics",
           "0_Introduction/fp16ScalarProduct", "0_Introduction/mergeSort", "6_Performance/cudaGraphsPerfScaling",
           "2_Concepts_and_Techniques/reduction")


def run_fixture(name: str, root: Path) -> tuple[str, str, float, list[dict[str, object]], str]:
    from worker.context import StageContext, Workspace
    from worker.project_settings import ProjectSettings
    from worker.stages import compile as compile_stage
    from worker.stages import hipify, link

    started = time.monotonic()
    workspace = Workspace(root)
    shutil.copytree(FIXTURES / name, workspace.source)
    ctx = StageContext(run_id=1, project_id=1, workspace=workspace, settings=ProjectSettings(),
                       cache_dir=root / "cache", source_spec={"kind": "archive"}, log=lambda text: None)
    ctx.previous["hipify"] = hipify.run(ctx).data
    compiled = compile_stage.run(ctx)
    ctx.previous["compile"] = compiled.data
    linked = link.run(ctx)
    outputs = list(compiled.data.get("cmake_build", {}).get("outputs", []))
    return compiled.outcome, linked.outcome, time.monotonic() - started, outputs, compiled.summary


def sample_tree(git_dir: Path, sample: str, into: Path) -> Path:
    """The repository's layout for one sample (see the module docstring)."""
    into.mkdir(parents=True)
    archive = subprocess.run(["git", "--git-dir", str(git_dir), "archive", "HEAD", "CMakeLists.txt", "cmake",
                              "Common", f"Samples/{sample}"], check=True, capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive, check=True)
    top = into / "CMakeLists.txt"
    text = top.read_text()
    if "add_subdirectory(Samples)" not in text:
        raise SystemExit("cuda-samples: the top-level CMakeLists.txt no longer adds Samples")
    top.write_text(text.replace("add_subdirectory(Samples)", f"add_subdirectory(Samples/{sample})"))
    return into


def migrate(tree: Path) -> tuple[str, str, float, list[dict[str, object]], str]:
    from django.core.management import call_command

    from migrator.projects.models import Run

    started = time.monotonic()
    try:
        call_command("migrate_repo", str(tree), "--project", tree.name, stdout=io.StringIO())
    except SystemExit:
        pass  # a partial or failed run: the stages say which
    run = Run.objects.filter(project__name=tree.name).latest("pk")
    stages = {stage.name: stage for stage in run.stages.all()}
    compiled = stages["compile"]
    data = compiled.data or {}
    outputs = list(data.get("cmake_build", {}).get("outputs", []))
    errors = [d for d in data.get("diagnostics", []) if d.get("severity") in ("error", "fatal")]
    first = f"; first error: {errors[0].get('file')}:{errors[0].get('line')}: {errors[0].get('message')}" if errors else ""
    return compiled.state, stages["link"].state, time.monotonic() - started, outputs, compiled.summary + first


def show(name: str, result: tuple[str, str, float, list[dict[str, object]], str]) -> bool:
    compiled, linked, seconds, outputs, summary = result
    built = compiled == "passed" and linked == "passed"
    made = ", ".join(f"{o['path']}[{','.join(map(str, o['offload_archs'])) or 'host'}]"  # type: ignore[call-overload]
                     for o in outputs if o.get("present"))
    print(f"{name:44} compile {compiled:7} link {linked:7} {seconds:6.1f}s  {made or '-'}")
    if not built:
        print(f"    {summary[:300]}")
    return built


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cuda-samples", type=Path, help="bare git directory of NVIDIA/cuda-samples")
    parser.add_argument("--samples", default=",".join(SAMPLES), help="Samples/ subfolders, comma-separated")
    parser.add_argument("--no-fixtures", action="store_true")
    args = parser.parse_args()
    print(f"load average at start: {Path('/proc/loadavg').read_text().split()[:3]}")
    with tempfile.TemporaryDirectory(prefix="cmake-model-bench-") as scratch, \
            scratch_django("cmake_model", broker_db=6, cache_db=5):
        from migrator.accounts.actions import create_user_and_team

        create_user_and_team("bench", "bench-password-1", "Bench")
        for label, units in (("fixtures", [] if args.no_fixtures else sorted(p.name for p in FIXTURES.iterdir())),
                             ("cuda-samples", args.samples.split(",") if args.cuda_samples else [])):
            if not units:
                continue
            started, built = time.monotonic(), 0
            for unit in units:
                folder = Path(scratch) / label / unit.replace("/", "_")
                if label == "fixtures":
                    built += show(unit, run_fixture(unit, folder))
                else:
                    built += show(unit, migrate(sample_tree(args.cuda_samples, unit, folder)))
            print(f"{label}: built {built}/{len(units)} with default settings in {time.monotonic() - started:.1f}s")
    print(f"load average at end: {Path('/proc/loadavg').read_text().split()[:3]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

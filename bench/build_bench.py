"""The projects' own builds after the pipeline: each fixture under tests/fixtures/buildsystems goes
through the hipify stage with default settings (translation plus the scan rules' safe build-file
fixes), then its own build commands run in the sandbox over the toolchain root.

Prints one line per fixture (built or not, seconds, fixes applied) and built/total with the time.
``--pipeline`` runs scan, hipify, compile and link with default settings instead (what a new user's run
does), on the Makefile fixtures of tests/fixtures/makebuild or on source trees given (public code fetched
at run time, never committed): built/total projects and build folders, seconds each.

    .venv/bin/python bench/build_bench.py [--keep DIR] [NAME ...]
    .venv/bin/python bench/build_bench.py --pipeline [TREE ...]
"""
from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from worker.context import StageContext, Workspace
from worker.project_settings import ProjectSettings
from worker.stages import hipify
from worker.toolchain.roots import default_root
from worker.toolchain.sandbox import Sandbox, SandboxLimits

FIXTURES = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "buildsystems"
RECIPES: dict[str, dict[str, object]] = json.loads((FIXTURES / "builds.json").read_text())


@dataclass
class FixtureBuild:
    name: str
    built: bool = False
    fixes: list[dict[str, object]] = field(default_factory=list)
    log: str = ""
    seconds: float = 0.0
    missing: list[str] = field(default_factory=list)


def run_fixture(name: str, workdir: Path, timeout_s: float = 600,
                settings: ProjectSettings | None = None) -> FixtureBuild:
    """Pipeline (hipify stage, default settings unless given) then the fixture's own build in the sandbox."""
    started = time.monotonic()
    recipe = RECIPES[name]
    outcome = FixtureBuild(name)
    workspace = Workspace(workdir)
    shutil.copytree(FIXTURES / name, workspace.source)
    logs: list[str] = []
    ctx = StageContext(run_id=1, project_id=1, workspace=workspace, settings=settings or ProjectSettings(),
                       cache_dir=workdir / "cache", source_spec={"kind": "archive"}, log=logs.append)
    stage = hipify.run(ctx)
    outcome.fixes = list(stage.data.get("build_fixes", []))
    if stage.outcome != "passed":
        outcome.log = stage.summary + "\n" + "".join(logs)
        return outcome
    root = default_root()
    if root is None:
        outcome.log = "no toolchain root (./dev builds it)"
        return outcome
    box = Sandbox(root, workdir)
    for step in recipe["steps"]:  # type: ignore[attr-defined]
        result = box.run(list(step), cwd=box.inside(workspace.hip),
                         limits=SandboxLimits(timeout_s=timeout_s, memory_mb=0))
        outcome.log += f"$ {' '.join(step)}\n{result.process.output}\n"
        if not result.ok:
            break
    else:
        outcome.missing = [o for o in recipe["outputs"] if not (workspace.hip / o).is_file()]  # type: ignore[attr-defined]
        outcome.built = not outcome.missing
    outcome.seconds = time.monotonic() - started
    return outcome


# Makefile projects of the make-build work (tests/fixtures/makebuild): each goes through scan, hipify, compile
# and link with default settings, as a new user's run would; "built" is compile and link passed with the
# project's own build (not file by file).
MAKE_FIXTURES_DIR = FIXTURES.parent / "makebuild"
MAKE_FIXTURES = ["suite_apps", "rodinia_app", "solver_cpp", "oldc_bench"]


@dataclass
class PipelineBuild:
    name: str
    outcomes: dict[str, str] = field(default_factory=dict)
    mode: str = ""
    reason: str = ""
    units: list[tuple[str, bool]] = field(default_factory=list)
    seconds: float = 0.0
    log: str = ""

    @property
    def built(self) -> bool:
        return self.mode == "project" and all(self.outcomes.get(s) == "passed" for s in ("compile", "link"))


def run_pipeline(source: Path, workdir: Path, settings: ProjectSettings | None = None) -> PipelineBuild:
    """scan, hipify, compile and link on a copy of ``source`` (default settings unless given)."""
    from worker.stages import compile as compile_stage
    from worker.stages import link, scan

    started = time.monotonic()
    workspace = Workspace(workdir)
    shutil.copytree(source, workspace.source, symlinks=True)
    outcome = PipelineBuild(source.name)
    logs: list[str] = []
    previous: dict[str, dict[str, object]] = {}
    for name, stage in (("scan", scan), ("hipify", hipify), ("compile", compile_stage), ("link", link)):
        ctx = StageContext(1, 1, workspace, settings or ProjectSettings(), workdir / "cache", {"kind": "archive"},
                           previous=dict(previous), log=logs.append)
        result = stage.run(ctx)
        outcome.outcomes[name] = result.outcome
        previous[name] = result.data
    compiled = previous.get("compile", {})
    outcome.mode, outcome.reason = str(compiled.get("mode", "")), str(compiled.get("mode_reason", ""))
    build = compiled.get("project_build")
    units = build.get("units", []) if isinstance(build, dict) else []
    outcome.units = [(str(u["folder"]), bool(u["ok"])) for u in units if isinstance(u, dict)]
    outcome.log = "".join(logs)
    outcome.seconds = time.monotonic() - started
    return outcome


def pipeline_report(sources: list[Path], base: Path) -> int:
    """One line per project, then built/total: what a new user gets with default settings."""
    built = 0
    units_built = units_total = 0
    for source in sources:
        outcome = run_pipeline(source, base / f"pipeline-{source.name}")
        built += outcome.built
        units_built += sum(ok for _, ok in outcome.units)
        units_total += len(outcome.units)
        stages = " ".join(f"{k}={v}" for k, v in outcome.outcomes.items() if k in ("compile", "link"))
        print(f"{source.name:24} {'built' if outcome.built else 'FAILED':7} {outcome.seconds:6.1f}s  {stages}  "
              f"units {sum(ok for _, ok in outcome.units)}/{len(outcome.units)}  {outcome.reason[:110]}")
        if not outcome.built:
            print("    " + "\n    ".join(outcome.log.strip().splitlines()[-8:]))
    print(f"pipeline: built {built}/{len(sources)} projects with their own build, build folders "
          f"{units_built}/{units_total}")
    return built


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("names", nargs="*", default=sorted(RECIPES))
    parser.add_argument("--keep", type=Path, help="keep the workspaces under this folder")
    parser.add_argument("--rename-cu-to-hip", action="store_true", help="translate with rename_cu_to_hip on")
    parser.add_argument("--pipeline", nargs="*", type=Path, metavar="TREE",
                        help="instead: scan, hipify, compile and link with default settings on the Makefile fixtures "
                             "(no TREE) or on the given source trees (fetched public code), built/total")
    args = parser.parse_args()
    if args.pipeline is not None:
        sources = args.pipeline or [MAKE_FIXTURES_DIR / name for name in MAKE_FIXTURES]
        with tempfile.TemporaryDirectory(prefix="build-bench-") as scratch:
            started = time.monotonic()
            built = pipeline_report(sources, args.keep or Path(scratch))
            print(f"in {time.monotonic() - started:.1f}s")
        return 0 if built == len(sources) else 1
    settings = ProjectSettings(rename_cu_to_hip=args.rename_cu_to_hip)
    started = time.monotonic()
    built = 0
    with tempfile.TemporaryDirectory(prefix="build-bench-") as scratch:
        base = args.keep or Path(scratch)
        for name in args.names:
            outcome = run_fixture(name, base / name, settings=settings)
            built += outcome.built
            state = "built" if outcome.built else "FAILED"
            print(f"{name:16} {state:7} {outcome.seconds:6.1f}s  {len(outcome.fixes):3} build-file fixes")
            if not outcome.built:
                print("    " + "\n    ".join(outcome.log.strip().splitlines()[-15:]))
    print(f"built {built}/{len(args.names)} in {time.monotonic() - started:.1f}s")
    return 0 if built == len(args.names) else 1


if __name__ == "__main__":
    sys.exit(main())

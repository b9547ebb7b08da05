"""The projects' own builds after the pipeline: each fixture under tests/fixtures/buildsystems goes
through the hipify stage with default settings (translation plus the scan rules' safe build-file
fixes), then its own build commands run in the sandbox over the toolchain root.

Prints one line per fixture (built or not, seconds, fixes applied) and built/total with the time.

    .venv/bin/python bench/build_bench.py [--keep DIR] [NAME ...]
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


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("names", nargs="*", default=sorted(RECIPES))
    parser.add_argument("--keep", type=Path, help="keep the workspaces under this folder")
    parser.add_argument("--rename-cu-to-hip", action="store_true", help="translate with rename_cu_to_hip on")
    args = parser.parse_args()
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

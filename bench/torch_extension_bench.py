"""PyTorch extension kernels compiled here: the header tree's build time, and compile time per source.

Builds the hipified PyTorch header tree of the installed torch in a fresh temporary store (cold, then
the cached lookup), then takes each fixture extension of ``tests/pytorch_projects/fixtures`` (rowops: a
setup.py extension with two kernels and a binding; jitops: a JIT ``load()`` project; voxkit: a CMake
core with PyTorch bindings) through scan, hipify (PyTorch's hipify, in the sandbox) and compile, with a
fresh object cache, and prints each source's compile time in the sandbox for the default target, then
the same compile again (object cache hits), side by side.

Command: ``.venv/bin/python bench/torch_extension_bench.py [--archs gfx90a]``
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from worker.context import StageContext, StageResult, Workspace  # noqa: E402
from worker.project_settings import ProjectSettings  # noqa: E402
from worker.stages import compile as compile_stage  # noqa: E402
from worker.stages import hipify, scan  # noqa: E402
from worker.toolchain.torch_headers import ensure_header_tree  # noqa: E402

FIXTURES = ROOT / "tests" / "pytorch_projects" / "fixtures"
PROJECTS = ("rowops", "jitops", "voxkit")


def _context(root: Path, cache: Path, archs: list[str], previous: dict[str, dict[str, Any]]) -> StageContext:
    return StageContext(run_id=1, project_id=1, workspace=Workspace(root),
                        settings=ProjectSettings.from_dict({"offload_archs": archs}), cache_dir=cache,
                        source_spec={"kind": "archive"}, previous=previous)


def _project(scratch: Path, name: str, archs: list[str]) -> tuple[dict[str, Any], StageResult, StageResult]:
    root = scratch / name
    root.mkdir()
    shutil.copytree(FIXTURES / name, root / "source")
    previous: dict[str, dict[str, Any]] = {}
    for stage_name, stage in (("scan", scan), ("hipify", hipify)):
        result = stage.run(_context(root, scratch / "cache", archs, previous))
        previous[stage_name] = json.loads(json.dumps(result.data))
    first = compile_stage.run(_context(root, scratch / "cache", archs, previous))
    again = compile_stage.run(_context(root, scratch / "cache", archs, previous))
    return previous, first, again


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--archs", default="gfx90a", help="comma-separated offload targets")
    archs = parser.parse_args().archs.split(",")
    print(f"load average at start: {' '.join(f'{v:.2f}' for v in os.getloadavg())}")
    with tempfile.TemporaryDirectory(prefix="torch-ext-bench-") as folder:
        scratch = Path(folder)
        os.environ["MIGRATOR_TORCH_HEADERS_DIR"] = str(scratch / "headers")
        os.environ["MIGRATOR_RESOLVE_DEPENDENCIES"] = "off"
        started = time.monotonic()
        tree = ensure_header_tree()
        cold = time.monotonic() - started
        started = time.monotonic()
        ensure_header_tree()
        warm = time.monotonic() - started
        print(f"header tree (torch {tree.torch_version}, {tree.manifest['hipified']} headers hipified): "
              f"cold {cold:.2f} s, cached lookup {warm * 1000:.1f} ms")
        print(f"{'project':<8} {'source':<44} {'state':<7} {'cold s':>7} {'cached s':>9}")
        for name in PROJECTS:
            _previous, first, again = _project(scratch, name, archs)
            cached = {f["path"]: f for f in again.data.get("files", [])}
            for entry in first.data.get("files", []):
                hit = cached.get(entry["path"], {})
                print(f"{name:<8} {entry['original_path']:<44} {entry['status']:<7} {entry['duration_s']:>7.1f} "
                      f"{hit.get('duration_s', 0.0):>9.2f}")
            core = first.data.get("core")
            if isinstance(core, dict) and isinstance(core.get("project_build"), dict):
                print(f"{name:<8} {'(core: its own CMake build)':<44} "
                      f"{'passed' if core['project_build']['ok'] else 'failed':<7} "
                      f"{core['project_build']['duration_s']:>7.1f}")
            print(f"{name:<8} stage: {first.outcome}, {first.summary[:110]}")
    print(f"load average at end: {' '.join(f'{v:.2f}' for v in os.getloadavg())}")


if __name__ == "__main__":
    main()

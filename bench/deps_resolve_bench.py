"""Dependency resolve benchmark: every install set of a tree resolved cold, then from Migrator's cache.

Run: .venv/bin/python bench/deps_resolve_bench.py [--tree PATH] [--index local|pypi]

The tree's install sets are read and mapped to ROCm as the scan does (``build_report``), then
resolved through the product's own path (``migrator.dependencies.actions.request_resolves``, the
code the deps worker runs, here inline in this process) on a scratch database:
1. cold: no resolve rows, an empty pip HTTP cache;
2. cached: the same requests again (what the next run of the project gets: rows reused, no pip);
3. pip-warm: rows deleted, pip's HTTP cache kept (a new project with the same packages).
``--index local`` serves every package of the fine-tuning fixture from a local HTTP index;
``--index pypi`` uses the real PyPI (pip's default index) for everything but PyTorch's ROCm index,
which this machine cannot reach: a local stand-in serves torch/torchvision/torchaudio +rocm7.2
with the real wheels' requirements (so their dependencies come from PyPI).
"""
from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _benchdb import ROOT, load_note, scratch_django  # noqa: E402

FIXTURE = ROOT / "tests" / "pytorch_projects" / "fixtures" / "tunefactory"
TORCH_REQUIRES = ("filelock", "typing-extensions>=4.10.0", "sympy>=1.13.3", "networkx>=2.5.1", "jinja2",
                  "fsspec>=0.8.5", "setuptools", "triton-rocm==3.8.0")


def _rocm_stand_in(index: object) -> None:
    add = index.add  # type: ignore[attr-defined]
    for torch, vision, audio in (("2.14.1", "0.29.1", ""), ("2.13.0", "0.28.0", ""), ("2.11.0", "0.26.0", "2.11.0")):
        add("rocm", "torch", f"{torch}+rocm7.2", TORCH_REQUIRES)
        add("rocm", "torchvision", f"{vision}+rocm7.2", (f"torch=={torch}", "numpy", "pillow>=5.3.0,!=8.3.*"))
        if audio:
            add("rocm", "torchaudio", f"{audio}+rocm7.2", (f"torch=={torch}",))
    add("rocm", "triton-rocm", "3.8.0")


def _pass(label: str, requests: dict[str, dict[str, object]]) -> None:
    from migrator.dependencies import actions
    from migrator.dependencies.models import DependencyResolve

    started = time.monotonic()
    actions.request_resolves(requests, inline=True)
    elapsed = time.monotonic() - started
    rows = list(DependencyResolve.objects.filter(key__in=requests))
    statuses: dict[str, int] = {}
    for row in rows:
        status = str(row.result.get("status", row.state))
        statuses[status] = statuses.get(status, 0) + 1
    pip_s = sum(float(row.result.get("duration_s") or 0) for row in rows if row.finished_at)
    print(f"{label:9s} {elapsed:8.2f} s wall for {len(requests)} resolves ({elapsed / max(1, len(requests)):.2f} s each);"
          f" statuses {dict(sorted(statuses.items()))}; pip time recorded {pip_s:.1f} s")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--tree", type=Path, default=FIXTURE)
    parser.add_argument("--index", choices=("local", "pypi"), default="local")
    args = parser.parse_args()
    print(f"at start: {load_note()}")
    with scratch_django("deps", broker_db=4, cache_db=3), tempfile.TemporaryDirectory() as scratch:
        from tests.dependencies.local_index import fill
        from tests.pytorch_projects.simple_index import serving
        from worker.scanning.dep_report import build_report
        from worker.scanning.pytorch_scan import resolve_options_from_env

        with serving(Path(scratch) / "indexes") as index:
            if args.index == "local":
                fill(index)
                os.environ["MIGRATOR_PIP_INDEX_URL"] = index.url("pypi")
            else:
                _rocm_stand_in(index)
            os.environ["MIGRATOR_ROCM_WHEEL_INDEX"] = index.url("rocm")
            os.environ["MIGRATOR_PIP_CACHE_DIR"] = str(Path(scratch) / "pip-cache")
            options = resolve_options_from_env()
            assert options is not None
            started = time.monotonic()
            report = build_report(args.tree, (), options, "7.2")
            print(f"tree {args.tree.name}: {report.summary()}; read and mapped in {time.monotonic() - started:.2f} s")
            requests = report.requests()
            _pass("cold", requests)
            _pass("cached", requests)
            from migrator.dependencies.models import DependencyResolve

            DependencyResolve.objects.all().delete()
            _pass("pip-warm", requests)
            _pass("cached", requests)
    print(f"at end: {load_note()}")


if __name__ == "__main__":
    main()

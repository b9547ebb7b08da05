"""Diff page speed: the whole view (middleware, access check, diff, first page, template) in-process.

Run: .venv/bin/python bench/diff_page_bench.py [--cold 7] [--warm 15]

Creates a scratch test database (test_migrator_<pid>, dropped at the end) with one run whose
workspace holds a synthetic CUDA file and its hipified version (bench/diff_bench.py's pair,
about 12% of lines changed) of 5,000 and 20,000 lines, then times GET requests through
Django's test client: the first request for a file (cache entry deleted before each one: read,
align, fold, annotate, highlight 200 rows, render) and cached ones (unpickle from Redis,
highlight 200 rows, render), a follow-up chunk of 500 rows, and pages already rendered once. Prints median and p95 of
wall and CPU time. Target: first chunk of a 5,000-line file under 150 ms of server time.
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "migrator.test_settings")
os.environ["MIGRATOR_WORKSPACE_ROOT"] = tempfile.mkdtemp(prefix="diff-page-bench-")

import django  # noqa: E402

django.setup()

from diff_bench import make_pair  # noqa: E402
from django.contrib.auth import get_user_model  # noqa: E402
from django.core.cache import cache  # noqa: E402
from django.db.models import prefetch_related_objects  # noqa: E402
from django.test import Client  # noqa: E402
from django.test.utils import setup_databases, teardown_databases  # noqa: E402
from django.urls import reverse  # noqa: E402
from django.utils import timezone  # noqa: E402

from migrator.projects.models import Run  # noqa: E402

if TYPE_CHECKING:
    from django.contrib.auth.models import User

SIZES = (5_000, 20_000)


def make_run() -> tuple[User, Run]:
    from migrator.accounts.actions import create_user_and_team
    from migrator.projects import actions
    from migrator.projects.workspaces import workspace_for

    user, team, _ = create_user_and_team("bench", "bench-pw-123", "Bench")
    assert isinstance(user, get_user_model())
    project = actions.create_project(team, "bench", user=user, git_url="https://example.com/bench.git")
    run = actions.create_run(project, user=user)
    run.stages.filter(name="hipify").update(state="passed", finished_at=timezone.now(), data={"renames": {}})
    workspace = workspace_for(run.pk)
    for lines in SIZES:
        old, new = make_pair(lines)
        for root, text in ((workspace.source, old), (workspace.hip, new)):
            (root / "src").mkdir(parents=True, exist_ok=True)
            (root / "src" / f"k{lines}.cu").write_text(text)
    return user, run


def timed(action: Callable[[], object], before: Callable[[], object], repeat: int) -> tuple[list[float], list[float]]:
    walls, cpus = [], []
    for _ in range(repeat):
        before()
        wall, cpu = time.perf_counter(), time.process_time()
        action()
        walls.append(time.perf_counter() - wall)
        cpus.append(time.process_time() - cpu)
    return walls, cpus


def p95(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]


def report(label: str, walls: list[float], cpus: list[float]) -> None:
    print(f"  {label:<44} median {statistics.median(walls) * 1000:6.1f} ms, p95 {p95(walls) * 1000:6.1f} ms wall"
          f"   (cpu median {statistics.median(cpus) * 1000:6.1f} ms, p95 {p95(cpus) * 1000:6.1f} ms)")


def bench_size(client: Client, run: Run, lines: int, cold: int, warm: int) -> None:
    from migrator.review.diffcache import diff_key
    from migrator.review.pages import CHUNK_ROWS, FIRST_PAGE_ROWS, page_key
    from migrator.review.tree import review_tree

    path = f"src/k{lines}.cu"
    url = reverse("review:file", args=[run.pk, path])
    chunk = reverse("review:chunk", args=[run.pk, path])
    prefetch_related_objects([run], "stages")
    tree = review_tree(run)
    diff = diff_key(run, tree, path, full=False)
    first = [page_key(run, tree, path, full=False, unified=u, start=0, limit=FIRST_PAGE_ROWS) for u in (False, True)]
    second = page_key(run, tree, path, full=False, unified=False, start=FIRST_PAGE_ROWS, limit=CHUNK_ROWS)

    def get(target: str, **params: str) -> None:
        response = client.get(target, params)
        assert response.status_code == 200, response.status_code
        assert b'class="line ' in response.content

    print(f"{lines} lines:")
    report("first request (compute diff, render 200 rows)", *timed(lambda: get(url), lambda: cache.delete_many([diff, *first]), cold))
    report("diff cached, 200 rows rendered now", *timed(lambda: get(url), lambda: cache.delete_many(first), cold))
    report("diff cached, unified 200 rows rendered now", *timed(lambda: get(url, view="unified"), lambda: cache.delete_many(first), cold))
    report("diff cached, next chunk (500 rows) rendered now", *timed(lambda: get(chunk, start=str(FIRST_PAGE_ROWS)), lambda: cache.delete(second), cold))
    report("all cached, first page (200 rows)", *timed(lambda: get(url), lambda: None, warm))
    cache.delete_many([diff, *first, second])


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--cold", type=int, default=7)
    parser.add_argument("--warm", type=int, default=15)
    args = parser.parse_args()
    # No setup_test_environment(): its template instrumentation (signals with context copies on every
    # render) would be measured too, and production has none of it. "testserver" is an allowed host.
    databases = setup_databases(verbosity=0, interactive=False)
    try:
        user, run = make_run()
        client = Client()
        client.force_login(user)
        print(f"load average before: {os.getloadavg()[0]:.2f} (2 shared cores: wall time includes waiting)")
        for lines in SIZES:
            bench_size(client, run, lines, args.cold, args.warm)
    finally:
        teardown_databases(databases, verbosity=0)


if __name__ == "__main__":
    main()

"""Run page benchmark: the run page, its live status partial and the log append endpoint.

Run: .venv/bin/python bench/run_page_bench.py [--requests 200]

Target (issue 2): with 1,000 runs and 6,000 stages in the database the live status partial
answers in under 50 ms (median and p95 server time), and no endpoint's query count grows with the
number of runs. The data is bulk-created in a scratch database (bench/_benchdb.py) in two steps:
100 runs, then 900 more; every endpoint is measured after each step, side by side, through
Django's test Client with a logged-in user (server time without the network), after a warm-up.
"""
from __future__ import annotations

import argparse
import random
import time
import warnings
from dataclasses import dataclass
from datetime import timedelta
from typing import TYPE_CHECKING

from _benchdb import load_note, percentile, scratch_django

if TYPE_CHECKING:
    from django.contrib.auth.models import User
    from django.test import Client

    from migrator.accounts.models import Team
    from migrator.projects.models import LogChunk, Project, Run, Stage

PROJECTS = 4
STAGES = ("fetch", "scan", "hipify", "compile", "link", "smoke")
FAILS_AT = 3  # a failed run fails at compile
LIVE_LOG_BYTES = 320 * 1024  # more than the 256 KiB tail the page shows
WARMUP = 20
LOG_LINE = "hipcc -O2 --offload-arch=gfx942 -c src/kernels/reduce_{n}.hip -o build/reduce_{n}.o\n"
ERROR_LINE = "src/kernels/reduce_{n}.hip:{n}:10: error: use of undeclared identifier 'cudaMemcpyAsync'\n"


@dataclass
class Endpoint:
    label: str
    url: str
    status: int


def log_text(lines: int, first: int, failed: bool = False) -> str:
    text = "".join(LOG_LINE.format(n=first + i) for i in range(lines))
    return text + (ERROR_LINE.format(n=first) * 3 if failed else "")


def stage_rows(run: Run, outcome: str, rng: random.Random) -> tuple[list[Stage], list[str]]:
    """The six Stage rows of a run and, per stage, the log text to store as chunks."""
    from migrator.projects.models import Stage

    start = run.created_at + timedelta(seconds=2)
    rows, logs = [], []
    for position, name in enumerate(STAGES):
        state, text = "passed", ""
        data: dict[str, object] = {"files": rng.randint(5, 400)}
        if outcome == "failed" and position == FAILS_AT:
            state, text = "failed", log_text(40, position, failed=True)
            data = {"diagnostics": [{"file": "src/kernels/reduce_3.hip", "line": 3, "column": 10,
                                     "severity": "error", "message": "use of undeclared identifier 'cudaMemcpyAsync'"}]}
        elif outcome == "failed" and position > FAILS_AT:
            state, data = "skipped", {}
        elif outcome == "running" and position == FAILS_AT:
            state, text, data = "running", log_text(LIVE_LOG_BYTES // len(LOG_LINE), 0), {}
        elif outcome == "running" and position > FAILS_AT:
            state, data = "queued", {}
        elif position in (0, 2):
            text = log_text(rng.randint(10, 60), position)
        begun = start + timedelta(seconds=10 * position) if state not in ("queued", "skipped") else None
        ended = begun + timedelta(seconds=9) if begun and state not in ("running", "queued") else None
        rows.append(Stage(
            run=run, name=name, position=position, state=state, started_at=begun, finished_at=ended,
            heartbeat_at=begun, summary=f"{name} {state}", data=data, log_size=len(text.encode()),
            worker="bench@host" if begun else "", progress_done=3 if begun else 0, progress_total=6 if begun else 0,
        ))
        logs.append(text)
    return rows, logs


def chunk_rows(stage: Stage, text: str) -> list[LogChunk]:
    from migrator.projects.constants import LOG_CHUNK_BYTES
    from migrator.projects.models import LogChunk

    data = text.encode()
    return [
        LogChunk(stage=stage, offset=start, text=data[start:start + LOG_CHUNK_BYTES].decode())
        for start in range(0, len(data), LOG_CHUNK_BYTES)
    ]


def add_runs(projects: list[Project], first: int, count: int, user: User, rng: random.Random) -> None:
    """Bulk-create runs ``first``..``first+count-1`` round-robin over the projects, with stages and logs.

    Run 0 is the live one (compile running), run 1 failed at compile; the rest are mostly passed.
    """
    from django.utils import timezone

    from migrator.projects.models import LogChunk, Run, Stage

    now, outcomes = timezone.now(), []
    archives = {project.pk: project.archives.first() for project in projects}
    for index in range(first, first + count):
        fixed = {0: "running", 1: "failed"}.get(index)
        outcomes.append(fixed or rng.choices(["passed", "failed"], [75, 25])[0])
    runs = Run.objects.bulk_create([
        Run(project=projects[index % PROJECTS], number=index // PROJECTS + 1, source_kind="archive",
            archive=archives[projects[index % PROJECTS].pk],
            state=outcome, created_by=user, version=40 + index % 7,
            started_at=now, finished_at=None if outcome == "running" else now + timedelta(seconds=60))
        for index, outcome in zip(range(first, first + count), outcomes)
    ])
    stages, logs = [], []
    for run, outcome in zip(runs, outcomes):
        run_stages, run_logs = stage_rows(run, outcome, rng)
        stages += run_stages
        logs += run_logs
    Stage.objects.bulk_create(stages)
    LogChunk.objects.bulk_create([c for s, t in zip(stages, logs) if t for c in chunk_rows(s, t)], batch_size=500)


def make_projects(user: User, team: Team) -> list[Project]:
    from migrator.projects.actions import create_project
    from migrator.projects.models import SourceArchive

    projects = []
    for i in range(PROJECTS):
        project = create_project(team, f"bench-{i}", user=user)
        SourceArchive.objects.create(
            project=project, original_name=f"bench-{i}.tar.gz", sha256=f"{i:064x}", size=1024, path="/nonexistent",
        )
        projects.append(project)
    return projects


def add_matches(failed_run_id: int) -> None:
    """Two notebook matches on the failed stage, as the worker would record them."""
    from migrator.notebook.actions import load_seed
    from migrator.notebook.models import Entry, StageMatch
    from migrator.projects.models import Stage

    load_seed()
    stage = Stage.objects.get(run_id=failed_run_id, state="failed")
    StageMatch.objects.bulk_create(
        StageMatch(stage=stage, entry=entry, rank=rank, signature_count=1, line_count=3, line_numbers=[41, 42, 43],
                   lines=[ERROR_LINE.format(n=3).strip()])
        for rank, entry in enumerate(Entry.objects.order_by("slug")[:2], start=1)
    )


def endpoints(live_run_id: int, failed_run_id: int) -> list[Endpoint]:
    from django.urls import reverse

    from migrator.projects.models import Run, Stage

    live = Run.objects.get(pk=live_run_id)
    compile_stage = Stage.objects.get(run=live, name="compile")
    page, status = reverse("projects:run", args=[live.pk]), reverse("projects:run-status", args=[live.pk])
    log = reverse("projects:stage-log", args=[live.pk, "compile"])
    poll = f"{status}?stage=&log=compile&v="
    return [
        Endpoint("run page (running run)", page, 200),
        Endpoint("run page (failed run)", reverse("projects:run", args=[failed_run_id]), 200),
        Endpoint("status partial, changed (renders)", f"{poll}{live.version - 1}", 200),
        Endpoint("status partial, unchanged (204)", f"{poll}{live.version}", 204),
        Endpoint("stage log append, 4 KiB new", f"{log}?offset={compile_stage.log_size - 4096}", 200),
        Endpoint("stage log append, nothing new (204)", f"{log}?offset={compile_stage.log_size}", 204),
    ]


def get(client: Client, endpoint: Endpoint) -> float:
    started = time.perf_counter()
    response = client.get(endpoint.url)
    elapsed = time.perf_counter() - started
    if response.status_code != endpoint.status:
        raise SystemExit(f"{endpoint.label}: expected {endpoint.status}, got {response.status_code}")
    return elapsed


def measure(client: Client, endpoint: Endpoint, requests: int) -> tuple[int, list[float]]:
    """Query count of one request, then ``requests`` timed requests after a warm-up."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    for _ in range(WARMUP):
        get(client, endpoint)
    with CaptureQueriesContext(connection) as queries:
        get(client, endpoint)
    return len(queries.captured_queries), [get(client, endpoint) for _ in range(requests)]


def measure_all(client: Client, targets: list[Endpoint], requests: int) -> dict[str, tuple[int, list[float]]]:
    return {endpoint.label: measure(client, endpoint, requests) for endpoint in targets}


def report(small: dict[str, tuple[int, list[float]]], large: dict[str, tuple[int, list[float]]], sizes: str) -> None:
    print(f"\n{'endpoint':38} {'queries':>13}   {'p50 ms':>15}   {'p95 ms':>15}   p50 ratio")
    print(f"{'':38} {sizes:>13}   {sizes:>15}   {sizes:>15}")
    for label, (q_small, t_small) in small.items():
        q_large, t_large = large[label]
        p50s, p50l = percentile(t_small, 0.5) * 1000, percentile(t_large, 0.5) * 1000
        p95s, p95l = percentile(t_small, 0.95) * 1000, percentile(t_large, 0.95) * 1000
        print(f"{label:38} {q_small:>6} {q_large:>6}   {p50s:7.2f} {p50l:7.2f}   {p95s:7.2f} {p95l:7.2f}   {p50l / p50s:5.2f}x")


def counts() -> str:
    from migrator.projects.models import LogChunk, Run, Stage

    return f"{Run.objects.count()} runs, {Stage.objects.count()} stages, {LogChunk.objects.count()} log chunks"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=200, help="timed requests per endpoint and size")
    args = parser.parse_args()
    # WhiteNoise warns that STATIC_ROOT does not exist (no collectstatic in a scratch setup).
    warnings.filterwarnings("ignore", message="No directory at", category=UserWarning)
    print(load_note())
    with scratch_django("runpage", broker_db=10, cache_db=9):
        from django.contrib.auth.models import User
        from django.db import connection
        from django.test import Client

        from migrator.accounts.actions import create_user_and_team
        from migrator.projects.models import Run

        created_user, team, _ = create_user_and_team("bench", "bench-password-1", "Bench")
        user = User.objects.get(pk=created_user.pk)
        projects, rng = make_projects(user, team), random.Random(2)
        add_runs(projects, 0, 100, user, rng)
        live = Run.objects.get(project=projects[0], number=1)
        failed = Run.objects.get(project=projects[1], number=1)
        add_matches(failed.pk)
        with connection.cursor() as cursor:
            cursor.execute("ANALYZE")
        client = Client()
        client.force_login(user)
        targets = endpoints(live.pk, failed.pk)
        print(f"step 1: {counts()}")
        small = measure_all(client, targets, args.requests)
        started = time.perf_counter()
        add_runs(projects, 100, 900, user, rng)
        with connection.cursor() as cursor:
            cursor.execute("ANALYZE")
        print(f"step 2: {counts()} (900 runs added in {time.perf_counter() - started:.1f} s)")
        large = measure_all(client, targets, args.requests)
        report(small, large, "100/1000")
        print(f"\n{args.requests} timed requests per cell after {WARMUP} warm-up; server time through django.test.Client;"
              " target: status partial p50 and p95 < 50 ms, query counts equal at 100 and 1000 runs.")
    print(load_note())


if __name__ == "__main__":
    main()

"""Pipeline overhead benchmark: from "start run" to the first stage running on an idle worker.

Run: .venv/bin/python bench/pipeline_overhead_bench.py [--runs 30]

Target (issue 2): median start-to-running under 0.5 s. A real Celery worker process (prefork, one
child, queue cpu, as tests/conftest.py starts it) runs on a scratch database and its own Redis
broker database (bench/_benchdb.py) with every stage but fetch switched off, so a run is: fetch a
small tar.gz, then record five "not available" skips. Each run is created with
``actions.create_run`` and started with ``migrator.pipeline.dispatch.start_run`` (outside a transaction, so
the first stage is queued at once); the fetch Stage row is polled every 5 ms. Each run finishes
before the next starts, so the worker is idle. Times come from the wall clock (timezone-aware
UTC), compared with the ``queued_at``/``started_at``/``finished_at`` the rows record.
"""
from __future__ import annotations

import argparse
import io
import os
import subprocess
import sys
import tarfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

from _benchdb import ROOT, BenchEnv, load_note, percentile, scratch_django

if TYPE_CHECKING:
    from django.contrib.auth.models import User

    from migrator.projects.models import Project

T = TypeVar("T")
DISABLED = "scan,hipify,compile,link,smoke"
POLL_S = 0.005
WARMUP_RUNS = 2
SOURCE = "#include <cuda_runtime.h>\n__global__ void k(float* x) { x[threadIdx.x] += 1.0f; }\n"


@dataclass
class Timing:
    enqueue_s: float  # t0 -> fetch stage queued_at (start_run in this process, message sent)
    pickup_s: float  # queued_at -> started_at (broker, worker, claim)
    start_to_running_s: float  # t0 -> started_at
    start_to_finished_s: float  # t0 -> run finished_at


def small_archive() -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
        for name, text in {"demo/src/k.cu": SOURCE, "demo/README.md": "# demo\n"}.items():
            data = text.encode()
            info = tarfile.TarInfo(name)
            info.size, info.mode = len(data), 0o644
            tar.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


def start_worker(bench: BenchEnv) -> tuple[subprocess.Popen[bytes], Path]:
    log_path = bench.var_dir / "bench-worker.log"
    env = {**os.environ, **bench.environ(), "MIGRATOR_DISABLED_STAGES": DISABLED, "PYTHONUNBUFFERED": "1",
           "MIGRATOR_LOG_LEVEL": "INFO"}
    with open(log_path, "wb") as log:
        proc = subprocess.Popen(
            [sys.executable, "-m", "celery", "-A", "migrator", "worker", "-Q", "cpu", "-P", "prefork", "-c", "1",
             "-l", "INFO", "-n", f"bench-worker-{os.getpid()}@%h", "--without-mingle", "--without-gossip"],
            cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT,
        )
    return proc, log_path


def wait_for_ping(proc: subprocess.Popen[bytes], log_path: Path, timeout: float = 60) -> float:
    from migrator.celery import app

    started = time.monotonic()
    while time.monotonic() - started < timeout:
        if proc.poll() is not None:
            raise SystemExit(f"celery worker exited at start:\n{log_path.read_text()[-3000:]}")
        if app.control.ping(timeout=0.5):
            return time.monotonic() - started
    raise SystemExit("celery worker did not answer a ping")


def stop_worker(proc: subprocess.Popen[bytes]) -> None:
    proc.terminate()
    try:
        proc.wait(timeout=20)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def poll(read: Callable[[], T | None], timeout: float = 60.0) -> T:
    """Call ``read`` every POLL_S until it returns something truthy."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = read()
        if value:
            return value
        time.sleep(POLL_S)
    raise SystemExit("timed out waiting for the worker (see the worker log)")


def one_run(project: Project, user: User) -> Timing:
    from django.utils import timezone

    from migrator.pipeline.dispatch import start_run
    from migrator.projects.actions import create_run
    from migrator.projects.models import Run, Stage

    run = create_run(project, user=user)
    fetch = Stage.objects.filter(run=run, name="fetch")
    t0: datetime = timezone.now()
    start_run(run)
    started_at = poll(lambda: fetch.values_list("started_at", flat=True).first())
    finished_at = poll(lambda: Run.objects.filter(pk=run.pk).values_list("finished_at", flat=True).first())
    run.refresh_from_db()
    if run.state != "passed":
        raise SystemExit(f"run #{run.number} ended {run.state}: {list(run.stages.values_list('name', 'summary'))}")
    queued_at = fetch.values_list("queued_at", flat=True).get()
    if queued_at is None:
        raise SystemExit("the fetch stage was never marked enqueued")
    return Timing(
        enqueue_s=(queued_at - t0).total_seconds(), pickup_s=(started_at - queued_at).total_seconds(),
        start_to_running_s=(started_at - t0).total_seconds(), start_to_finished_s=(finished_at - t0).total_seconds(),
    )


def line(label: str, values: list[float]) -> str:
    ms = [v * 1000 for v in values]
    return (f"{label:34} p50 {percentile(ms, 0.5):8.1f} ms   p95 {percentile(ms, 0.95):8.1f} ms   "
            f"max {max(ms):8.1f} ms")


def report(warm: list[Timing], cold: list[Timing]) -> None:
    print(f"\n{len(warm)} runs on an idle worker (after {len(cold)} warm-up runs):")
    print(line("start -> fetch queued (enqueue)", [t.enqueue_s for t in warm]))
    print(line("fetch queued -> running (pickup)", [t.pickup_s for t in warm]))
    print(line("start -> first stage running", [t.start_to_running_s for t in warm]))
    print(line("start -> run finished", [t.start_to_finished_s for t in warm]))
    for number, t in enumerate(cold, start=1):
        print(f"warm-up run {number}: start -> running {t.start_to_running_s * 1000:.1f} ms, "
              f"-> finished {t.start_to_finished_s * 1000:.1f} ms")
    median = percentile([t.start_to_running_s for t in warm], 0.5)
    print(f"target: median start -> running < 500 ms; measured {median * 1000:.1f} ms "
          f"({median / 0.5:.2f} of the target)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=30)
    args = parser.parse_args()
    os.environ["MIGRATOR_DISABLED_STAGES"] = DISABLED
    print(load_note())
    with scratch_django("pipeline", broker_db=8, cache_db=7) as bench:
        from migrator.accounts.actions import create_user_and_team
        from migrator.projects.actions import create_project, store_archive

        user, team, _ = create_user_and_team("bench", "bench-password-1", "Bench")
        project = create_project(team, "overhead", user=user)
        store_archive(project, io.BytesIO(small_archive()), "demo.tar.gz", user)
        proc, log_path = start_worker(bench)
        try:
            print(f"worker answered a ping after {wait_for_ping(proc, log_path):.1f} s")
            cold = [one_run(project, user) for _ in range(WARMUP_RUNS)]
            warm = [one_run(project, user) for _ in range(args.runs)]
        finally:
            stop_worker(proc)
        report(warm, cold)
    print(load_note())


if __name__ == "__main__":
    main()

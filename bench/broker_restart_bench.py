"""Broker restart benchmark: N runs in flight, Redis restarted without persistence mid-way.

Run: .venv/bin/python bench/broker_restart_bench.py [--runs 200] [--sweep-s 5] [--workers 2]

Target (issue 14): 0 runs stuck; every run whose message the restart lost moves on (its next stage
is back in the broker, or running) within two sweep intervals. The benchmark starts its own
redis-server on a free port (``--save '' --appendonly no``: a restart loses every message) and a
scratch PostgreSQL database (bench/_benchdb.py), and real Celery workers on them (``--workers``
processes of one child each; the first also runs beat, so the sweep runs every ``--sweep-s``).
Every stage but fetch is switched off, so a run is: unpack a small tar.gz, record five skips. All
runs are started at once; when ``--restart-at`` of them have finished, Redis is killed (SIGKILL)
and started again on the same port. From then on the queued stages whose message the broker no
longer holds are counted every 0.1 s; "moved on" is when none is left. It prints runs finished,
runs stuck (not finished ``--timeout`` seconds after the restart) and the time for the last lost
run to move on, beside the sweep interval.
"""
from __future__ import annotations

import argparse
import io
import os
import subprocess
import sys
import tarfile
import time
from pathlib import Path

from _benchdb import ROOT, load_note, scratch_django

sys.path.insert(0, str(ROOT))
from tests.brokerhost import RedisServer, start_worker, stop_worker, wait_for_worker  # noqa: E402

DISABLED = "scan,hipify,compile,link,smoke"


def small_archive() -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
        for name, text in {"demo/src/k.cu": "__global__ void k(float* x) { x[0] = 1; }\n", "demo/README.md": "#\n"}.items():
            data = text.encode()
            info = tarfile.TarInfo(name)
            info.size, info.mode = len(data), 0o644
            tar.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


def lost_stages(among: set[int] | None = None) -> set[int]:
    """Ids of queued stages that are their run's next stage and whose message the broker does not
    hold (nothing would ever deliver them); ``among`` limits the check to those stage ids."""
    from migrator.pipeline.broker import BrokerUnavailable, pending_task_ids
    from migrator.projects.constants import FINAL_RUN_STATES, FINAL_STAGE_STATES, StageState
    from migrator.projects.models import Stage

    first: dict[int, Stage] = {}
    active = Stage.objects.exclude(run__state__in=FINAL_RUN_STATES).exclude(state__in=FINAL_STAGE_STATES)
    for stage in active.order_by("run_id", "position").only("run_id", "state", "task_id", "queue"):
        first.setdefault(stage.run_id, stage)
    waiting = [s for s in first.values() if s.state == StageState.QUEUED and (among is None or s.pk in among)]
    if not waiting:
        return set()
    try:
        pending = pending_task_ids({s.queue for s in waiting})
    except BrokerUnavailable:
        return {s.pk for s in waiting}
    return {s.pk for s in waiting if s.task_id not in pending}


def finished_count(run_ids: list[int]) -> int:
    from migrator.projects.constants import FINAL_RUN_STATES
    from migrator.projects.models import Run

    return Run.objects.filter(pk__in=run_ids, state__in=FINAL_RUN_STATES).count()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=200)
    parser.add_argument("--sweep-s", type=int, default=5, help="sweep interval of the workers (production: 30)")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--restart-at", type=float, default=0.3, help="fraction of runs finished at the restart")
    parser.add_argument("--timeout", type=float, default=600)
    args = parser.parse_args()
    print(load_note())
    tmp = Path(os.environ.get("TMPDIR", "/tmp")) / f"migrator-bench-broker-{os.getpid()}"
    server = RedisServer(tmp / "redis")
    server.start()
    workers: list[subprocess.Popen[bytes]] = []
    try:
        with scratch_django("broker_restart", broker_db=0, cache_db=1, redis_url=f"redis://127.0.0.1:{server.port}") as bench:
            env = {**os.environ, **bench.environ(), "MIGRATOR_DISABLED_STAGES": DISABLED, "PYTHONUNBUFFERED": "1",
                   "MIGRATOR_SWEEP_INTERVAL_S": str(args.sweep_s), "MIGRATOR_LOG_LEVEL": "INFO"}
            for index in range(args.workers):
                name = f"bench-broker-{index}"
                workers.append(start_worker(env, bench.var_dir / f"{name}.log", name=name, beat=index == 0, queues="cpu"))
                wait_for_worker(workers[-1], name)
            measure(args, server)
    finally:
        for proc in workers:
            stop_worker(proc)
        server.kill()


def measure(args: argparse.Namespace, server: RedisServer) -> None:
    from django.core.files.uploadedfile import SimpleUploadedFile

    from migrator.accounts.actions import create_user_and_team
    from migrator.pipeline.dispatch import start_run
    from migrator.projects import actions

    user, team, _ = create_user_and_team("bench", "bench-password-1", "Bench")
    project = actions.create_project(team, "restart", user=user)
    actions.store_archive(project, SimpleUploadedFile("a.tgz", small_archive()), "a.tgz", user)
    started = time.monotonic()
    run_ids = []
    for _ in range(args.runs):
        run = actions.create_run(project, user=None)
        start_run(run)  # no transaction open: published at once
        run_ids.append(run.pk)
    print(f"started {args.runs} runs in {time.monotonic() - started:.1f} s; sweep every {args.sweep_s} s")
    while finished_count(run_ids) < args.runs * args.restart_at:
        time.sleep(0.05)
    before = finished_count(run_ids)
    server.restart()
    restarted = time.monotonic()
    lost = lost_stages()
    lost_at_restart = len(lost)
    moved_on_s = 0.0
    while time.monotonic() - restarted < args.timeout:
        if lost:
            lost = lost_stages(among=lost)  # a lost stage moves on: sent again, claimed, or settled
            moved_on_s = time.monotonic() - restarted
        if finished_count(run_ids) == args.runs:
            break
        time.sleep(0.1)
    done = finished_count(run_ids)
    print(f"restart after {before}/{args.runs} runs finished; queued stages whose message was lost: {lost_at_restart}")
    print(f"runs finished: {done}/{args.runs}; runs stuck: {args.runs - done}")
    if lost_at_restart and not lost:
        print(f"last lost run moved on {moved_on_s:.1f} s after the restart "
              f"({moved_on_s / args.sweep_s:.2f} sweep intervals; target <= 2)")
    print(f"all runs finished {time.monotonic() - restarted:.1f} s after the restart "
          f"({time.monotonic() - started:.1f} s in all)")
    print(load_note())


if __name__ == "__main__":
    main()

"""Delivery sync: time from a push webhook on the CUDA branch to the updated pull request.

Run: .venv/bin/python bench/delivery_sync_bench.py [--rounds 3] [--fixture make_histogram]

A scratch database (``_benchdb``, Redis 12/11, as webhook_bench.py: not both at once), a local bare repository holding a delivery fixture as
the team's remote (file URL, local git allowed) and a local HTTP server speaking the pull-request
endpoints (the tests' fake host). The port is delivered once (opens pull request #1, not timed); then
each round pushes a commit to ``main``, posts the signed push webhook to the endpoint and takes the
path the workers take, in this process: the hand-off creates the run, its stages run (fetch only, as
the delivery needs the fetched tree and nothing else), ``run_finished`` hands over to the port update,
which composes the next commit, builds it for ROCm in the sandbox and for CUDA with nvcc (where
installed), pushes and updates the pull request. Prints, per round and as medians: webhook answered,
run finished, ROCm build, CUDA build, pull request updated (all from the webhook POST). Broker and
queueing latencies are not in these figures (``pipeline_overhead_bench.py`` measures them: ~15 ms).
"""
from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from pathlib import Path
from unittest.mock import patch

from _benchdb import ROOT, load_note, scratch_django


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--fixture", default="make_histogram")
    args = parser.parse_args()
    print(load_note())
    with scratch_django("delivery", broker_db=12, cache_db=11):
        rows = _measure(args.rounds, ROOT / "tests" / "fixtures" / "delivery" / args.fixture)
    columns = list(rows[0])
    print("round " + " ".join(f"{c:>14}" for c in columns))
    for number, row in enumerate(rows, 1):
        print(f"{number:>5} " + " ".join(f"{row[c]:>13.2f}s" for c in columns))
    print("p50   " + " ".join(f"{statistics.median(r[c] for r in rows):>13.2f}s" for c in columns))
    print(load_note())


def _measure(rounds: int, fixture: Path) -> list[dict[str, float]]:
    from django.conf import settings
    from django.test import Client

    from migrator.accounts.actions import ensure_team
    from migrator.integrations import actions as hooks
    from migrator.integrations.models import ProjectIntegration, WebhookDelivery
    from migrator.integrations.verify import github_signature
    from migrator.pipeline import orchestrator
    from migrator.projects import actions
    from migrator.projects.constants import STAGE_NAMES
    from migrator.projects.models import Run
    from migrator.reports import delivery, tasks
    from migrator.reports.models import PortAttempt
    from tests.reports.fake_host import FakeHost
    from tests.reports.team_repo import git, team_repo

    host = FakeHost().start()
    settings.MIGRATOR_ALLOWED_HOST_API_BASES = [host.url]
    settings.MIGRATOR_HOST_API_TRUSTED_NETWORKS = ["127.0.0.0/8"]
    settings.MIGRATOR_ALLOW_LOCAL_GIT = True
    settings.MIGRATOR_DISABLED_STAGES = [name for name in STAGE_NAMES if name != "fetch"]
    settings.ALLOWED_HOSTS = ["*"]
    finished: list[float] = []

    def update(args: list[int], queue: str) -> None:
        finished.append(time.monotonic())
        delivery.redeliver(int(args[0]))

    rows = []
    # The hand-off and the port update are called here, in this process, instead of through the broker
    # (outside a transaction, on_commit runs at once).
    with tempfile.TemporaryDirectory() as scratch, patch.object(hooks, "queue_delivery", lambda pk: True), \
            patch.object(hooks, "start_run", lambda run: None), patch.object(tasks.redeliver_port, "apply_async", update):
        repo = team_repo(Path(scratch), fixture)
        team = ensure_team("bench")[0]
        project = actions.create_project(team, "bench", user=None, git_url=repo.url)
        ProjectIntegration.objects.create(project=project, webhook_secret="k", host_token="t", host_api_url=host.url,
                                          repository="team/bench")
        first = orchestrator.run_sync(actions.create_run(project, user=None, trigger="cli", ref="main"))
        delivery.deliver_run(first, "port/rocm")
        for number in range(rounds):
            (repo.clone / f"CHANGES-{number}.md").write_text(f"round {number}\n")
            sha = repo.commit_all(f"round {number}")
            git(repo.clone, "push", "-q", "origin", "main")
            body = json.dumps({"ref": "refs/heads/main", "after": sha}).encode()
            started = time.monotonic()
            answer = Client().post(f"/hooks/github/{project.pk}", body, content_type="application/json",
                                   HTTP_X_GITHUB_EVENT="push", HTTP_X_GITHUB_DELIVERY=f"bench-{number}",
                                   HTTP_X_HUB_SIGNATURE_256=github_signature("k", body))
            answered = time.monotonic()
            assert answer.status_code == 202, answer.status_code
            run = hooks.start_delivery_run(WebhookDelivery.objects.get(delivery_id=f"bench-{number}").pk)
            assert isinstance(run, Run)
            orchestrator.run_sync(run)
            orchestrator.announce_if_finished(run.pk)
            done = time.monotonic()
            attempt = PortAttempt.objects.get(run=run)
            assert attempt.state == "proposed" and attempt.delivery.pr_number == 1, (attempt.state, attempt.error)
            rocm = sum(float(step["duration_s"]) for step in attempt.rocm.get("steps", []))
            cuda = sum(float(step["duration_s"]) for step in attempt.cuda.get("steps", []))
            rows.append({"webhook 202": answered - started, "run finished": finished[-1] - started,
                         "rocm build": rocm, "cuda build": cuda, "PR updated": done - started})
    host.stop()
    return rows


if __name__ == "__main__":
    main()

"""Runners announce themselves with heartbeats; smoke stages go to a runner whose GPU matches."""
from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest
from django.conf import settings
from django.utils import timezone

from migrator.runners import presence
from migrator.runners.models import Runner
from tests.brokerhost import RedisServer, kill_worker, node_name, start_worker, worker_env
from tests.conftest import _test_db_name, wait_for

pytestmark = pytest.mark.django_db


def test_a_runner_registers_and_goes_offline_without_heartbeats() -> None:
    runner = presence.register("rocm-1@host", "rocm", ["rocm", "rocm.gfx90a"], {"gpus": []})
    assert runner.online
    Runner.objects.filter(pk=runner.pk).update(last_seen=timezone.now() - timedelta(seconds=settings.MIGRATOR_RUNNER_OFFLINE_S + 1))
    runner.refresh_from_db()
    assert not runner.online and presence.online_runners("rocm") == []
    presence.beat("rocm-1@host")
    assert [r.name for r in presence.online_runners("rocm")] == ["rocm-1@host"]


def test_smoke_goes_to_the_queue_of_an_online_runner_with_a_matching_target() -> None:
    assert presence.smoke_queue(("gfx942", "gfx90a")) == "rocm.gfx942"  # nobody online: wait on the first target
    presence.register("r@h", "rocm", ["rocm", "rocm.gfx90a"], {})
    assert presence.smoke_queue(("gfx942", "gfx90a")) == "rocm.gfx90a"
    assert presence.smoke_queue(("gfx90a:xnack+",)) == "rocm.gfx90a"


def test_gpu_queues_follow_the_reported_targets() -> None:
    info = {"gpus": [{"arch": "gfx90a"}, {"arch": "gfx942"}, {"arch": "gfx90a"}]}
    assert presence.gpu_queues(info) == ["rocm.gfx90a", "rocm.gfx942"]


@pytest.mark.django_db(transaction=True)
def test_a_rocm_worker_process_registers_its_fake_gpus_and_queues(tmp_path: Path) -> None:
    """A real Celery worker started with the rocm profile reports its GPUs and consumes rocm.<arch>.

    It gets a broker of its own: on the suite's it would take whatever an earlier test left in rocm.gfx90a.
    """
    broker = RedisServer(tmp_path / "redis")
    broker.start()
    env = worker_env(broker_url=broker.url, db_name=_test_db_name(), workspace=tmp_path / "workspaces",
                     cache=tmp_path / "cache", disabled=[],
                     extra={"MIGRATOR_RUNNER_PROFILE": "rocm", "MIGRATOR_FAKE_GPUS": "gfx90a,gfx90a"})
    proc = start_worker(env, tmp_path / "worker.log", name="rocm-test", beat=False, queues="rocm")
    try:
        runner = wait_for(lambda: Runner.objects.filter(name=node_name("rocm-test")).first(), timeout=60)
        assert runner.profile == "rocm" and "rocm.gfx90a" in runner.queues
        assert [g["arch"] for g in runner.info["gpus"]] == ["gfx90a", "gfx90a"] and runner.info["gpus_fake"]
        first_seen = runner.last_seen
        wait_for(lambda: Runner.objects.get(pk=runner.pk).last_seen > first_seen, timeout=30)
    finally:
        kill_worker(proc)  # it took no task: nothing to finish, and no warm shutdown to wait for
        broker.kill()

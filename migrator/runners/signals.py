"""Celery worker signals: register the runner and keep its heartbeat while the worker lives."""
from __future__ import annotations

import logging
from typing import Any

from celery.signals import worker_ready, worker_shutdown

from migrator.runners import presence

log = logging.getLogger(__name__)
_heartbeat: presence.HeartbeatThread | None = None


@worker_ready.connect
def on_worker_ready(sender: Any = None, **_: Any) -> None:
    global _heartbeat
    name = sender.hostname
    profile = presence.runner_profile()
    queues = sorted(q.name for q in sender.task_consumer.queues) if sender.task_consumer else []
    info = presence.describe(profile, queues)
    if profile == "rocm":
        for queue in presence.gpu_queues(info) + presence.pytorch_queues(info):
            if queue not in queues:
                sender.add_task_queue(queue)
                queues.append(queue)
    presence.register(name, profile, sorted(queues), info)
    log.info("runner %s registered as %s on %s", name, profile, ", ".join(queues))
    _heartbeat = presence.HeartbeatThread(name)
    _heartbeat.start()


@worker_shutdown.connect
def on_worker_shutdown(**_: Any) -> None:
    if _heartbeat is not None:
        _heartbeat.stop.set()

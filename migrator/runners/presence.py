"""Workers and runners announce themselves: a Runner row per Celery worker, refreshed by heartbeats.

A worker's profile comes from ``MIGRATOR_RUNNER_PROFILE`` (cpu, rocm or cuda). A ROCm runner also
consumes one queue per GPU target it owns (``rocm.gfx90a``), so a smoke stage can be routed to a
runner whose GPU matches the project's ``--offload-arch``, and, when one of its toolchain roots has a
ROCm PyTorch (probed in the sandbox: ``worker/runner/torch_probe.py``), the ``rocm.pytorch`` queue, which
takes the link (the extension's own build) and smoke of PyTorch extension projects.
"""
from __future__ import annotations

import logging
import os
import threading
from datetime import timedelta
from typing import Any

from django.conf import settings as django_settings
from django.db import close_old_connections, connection
from django.utils import timezone

from migrator.projects.constants import PYTORCH_QUEUE, ROCM_QUEUE
from migrator.projects.queues import rocm_target_queue
from migrator.runners.models import Runner
from worker.runner.heartbeat import build_heartbeat
from worker.runner.torch_probe import probe_torch
from worker.toolchain.detect import detect_toolchain
from worker.toolchain.roots import default_root
from worker.toolchain.sandbox import isolation_report, sandbox_problem

log = logging.getLogger(__name__)
HEARTBEAT_S = 5.0


def runner_profile() -> str:
    profile = os.environ.get("MIGRATOR_RUNNER_PROFILE", "cpu")
    return profile if profile in ("cpu", "rocm", "cuda") else "cpu"


def describe(profile: str, queues: list[str]) -> dict[str, Any]:
    """What the runner reports: host, toolchain, GPUs (probed), queues."""
    gpu_profile = "cuda" if profile == "cuda" else "rocm"
    info: dict[str, Any] = dict(build_heartbeat(gpu_profile, queues))  # type: ignore[arg-type]
    for gpu in info.get("gpus", []):
        gpu.setdefault("memory_bytes", gpu.get("memory_bytes"))
    if profile == "cpu":
        info["gpu_note"] = "CPU worker: fetch, scan, hipify, compile, link"
    if profile == "rocm":
        info["pytorch"] = probe_torch().to_dict()
    try:
        info["build_toolchain"] = detect_toolchain().to_dict()
        root = default_root()
        info["sandbox"] = {"ok": root is not None and not sandbox_problem(root),
                           "problem": sandbox_problem(root) if root else "no toolchain root installed"}
        info["isolation"] = isolation_report(root)
    except Exception as exc:  # detection is informative; a broken toolchain must not stop the worker
        info["build_toolchain"] = {"error": str(exc)}
    return info


def gpu_queues(info: dict[str, Any]) -> list[str]:
    """Extra queues for a ROCm runner: one per distinct GPU target."""
    archs = sorted({str(g.get("arch")) for g in info.get("gpus", []) if g.get("arch")})
    return [rocm_target_queue(arch) for arch in archs]


def pytorch_queues(info: dict[str, Any]) -> list[str]:
    """``rocm.pytorch`` for a ROCm runner whose probe found a ROCm PyTorch (or a declared fake one)."""
    found = info.get("pytorch")
    return [PYTORCH_QUEUE] if isinstance(found, dict) and found.get("available") else []


def register(name: str, profile: str, queues: list[str], info: dict[str, Any]) -> Runner:
    now = timezone.now()
    runner, _ = Runner.objects.update_or_create(
        name=name, defaults={"profile": profile, "queues": queues, "info": info, "started_at": now, "last_seen": now}
    )
    return runner


def beat(name: str) -> None:
    Runner.objects.filter(name=name).update(last_seen=timezone.now())


def online_runners(profile: str) -> list[Runner]:
    cutoff = timezone.now() - timedelta(seconds=django_settings.MIGRATOR_RUNNER_OFFLINE_S)
    return list(Runner.objects.filter(profile=profile, last_seen__gte=cutoff))


def pytorch_runner_online() -> bool:
    """A ROCm runner with a ROCm PyTorch is registered and alive (it takes ``rocm.pytorch``)."""
    return any(PYTORCH_QUEUE in runner.queues for runner in online_runners("rocm"))


def smoke_queue(offload_archs: tuple[str, ...]) -> str:
    """``rocm.<arch>`` for the first project target an online runner owns, else the first target's queue.

    With no matching runner online the stage waits in that queue ("waiting for a ROCm runner")
    until one appears or the sweep times it out.
    """
    wanted = [arch.split(":")[0] for arch in offload_archs]
    owned = {q for runner in online_runners("rocm") for q in runner.queues}
    for arch in wanted:
        if rocm_target_queue(arch) in owned:
            return rocm_target_queue(arch)
    return rocm_target_queue(wanted[0]) if wanted else ROCM_QUEUE


class HeartbeatThread(threading.Thread):
    def __init__(self, name: str) -> None:
        super().__init__(name="runner-heartbeat", daemon=True)
        self.runner_name = name
        self.stop = threading.Event()

    def run(self) -> None:
        while not self.stop.wait(HEARTBEAT_S):
            try:
                close_old_connections()
                beat(self.runner_name)
            except Exception:
                log.exception("runner heartbeat failed")
        connection.close()

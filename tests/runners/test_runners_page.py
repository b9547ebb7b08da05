"""The runners page renders what migrator.runners.presence stores: online and offline runners, the heartbeat
plus the build toolchain, and how long the detection of a dead worker takes."""
from __future__ import annotations

import os
from datetime import timedelta

import pytest
from django.test import Client
from django.urls import reverse
from django.utils import timezone
from pytest_django import Settings

from migrator.runners import presence
from migrator.runners.models import Runner
from migrator.runners.presence import describe, register
from worker.toolchain.detect import detect_toolchain

pytestmark = pytest.mark.django_db


def test_runners_page_shows_gpus_and_toolchain_as_reported(
    alice_client: Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MIGRATOR_FAKE_GPUS", "gfx90a,gfx942")
    info = describe("rocm", ["rocm"])
    register("rocm-1@host", "rocm", ["rocm", "rocm.gfx90a", "rocm.gfx942"], info)
    page = alice_client.get(reverse("runners:list")).content.decode()
    row = page[page.index('id="runner-1"'):page.index("</tr>", page.index('id="runner-1"'))]
    assert "0: fake gfx90a <code>gfx90a</code>" in row and "1: fake gfx942 <code>gfx942</code>" in row
    assert "fake GPUs" in row and "via fake" in row
    toolchain = info["build_toolchain"]
    root = detect_toolchain()  # the default root (the newest installed), read from its own files
    assert f"toolchain <strong>{root.name}</strong>: HIP <code>{toolchain['hipcc_version']}</code>" in row
    assert f"clang <code>{root.clang_version}</code>" in row
    assert "gfx90a" in row and "sandbox: bubblewrap over the toolchain root" in row
    for library in root.libraries:  # present ones ticked, absent ones named with their package
        mark = "✔" if library.installed else "✘"
        assert f"{mark} {library.name}" in row, library.name
    assert f"<code>libamdhip64-dev</code> {dict(root.packages)['libamdhip64-dev']}" in row  # the root's manifest


def test_runners_page_says_when_toolchain_detection_failed(alice_client: Client) -> None:
    register("cpu-1@host", "cpu", ["cpu"], {"host": "h", "gpus": [], "gpu_note": "CPU worker", "toolchain": {},
                                             "build_toolchain": {"error": "<b>boom</b>"}})
    page = alice_client.get(reverse("runners:list")).content.decode()
    assert "no ROCm toolchain: &lt;b&gt;boom&lt;/b&gt;" in page and "CPU worker" in page


def test_the_runners_page_shows_online_and_offline_runners(alice_client: Client) -> None:
    presence.register("gpu-box@a", "rocm", ["rocm", "rocm.gfx90a"], {
        "gpus": [{"index": 0, "name": "AMD Instinct MI210", "arch": "gfx90a", "memory_bytes": 64 * 2**30, "fake": False}],
        "toolchain": {"hipcc": "6.2.41133"},
    })
    old = presence.register("old-box@b", "cuda", ["cuda"], {})
    Runner.objects.filter(pk=old.pk).update(last_seen=timezone.now() - timedelta(hours=2))
    page = alice_client.get(reverse("runners:list")).content.decode()
    assert "gpu-box@a" in page and "MI210" in page and "gfx90a" in page
    assert page.count("online") >= 1 and "offline" in page


def test_the_runners_page_states_how_long_dead_worker_detection_takes(alice_client: Client, settings: Settings) -> None:
    settings.MIGRATOR_HEARTBEAT_STALE_S = 120
    settings.MIGRATOR_SWEEP_INTERVAL_S = 30
    page = alice_client.get("/runners/").content.decode()
    assert "detected within 120–150 s" in page
    assert "heartbeat limit 120 s + sweep every 30 s" in page


def test_runners_page_shows_the_sandbox_isolation_in_effect_and_the_workspace_disk(
    alice_client: Client, settings: Settings
) -> None:
    settings.MIGRATOR_WORK_RETENTION_H, settings.MIGRATOR_RUN_RETENTION_DAYS = 24, 30
    info = describe("cpu", ["cpu"])
    register("cpu-1@host", "cpu", ["cpu"], info)
    page = alice_client.get(reverse("runners:list")).content.decode()
    row = page[page.index('id="runner-1"'):page.index("</tr>", page.index('id="runner-1"'))]
    isolation = info["isolation"]
    assert f"limits: {isolation['cgroup']}" in row and f"work area: {isolation['work_area']}" in row
    assert f"host paths: {isolation['host_paths']}" in row and f"user: {isolation['identity']}" in row
    if os.geteuid() == 0 and "none" not in isolation["cgroup"]:  # this machine: root, cgroup v1, loop devices
        assert "a cgroup1 group per job (memory and pids)" in row or "a cgroup2 group per job" in row
    disk = page[page.index('id="workspace-disk"'):]
    assert " free</strong> on the filesystem holding the workspaces" in disk
    assert "removed after 24 h" in disk and "whole workspaces after 30 days" in disk


def test_runners_page_warns_when_a_worker_has_no_cgroup_per_job(alice_client: Client) -> None:
    register("cpu-2@host", "cpu", ["cpu"], {"host": "h", "gpus": [], "isolation": {
        "cgroup": "no cgroup per job (no writable cgroup v1 memory or pids hierarchy and no delegated cgroup v2): "
                  "per-process limits only", "cgroup_ok": False, "identity": "the worker's own user id, in a user "
                  "namespace", "identity_ok": False, "host_paths": "visible in mountinfo (hiding host paths needs a "
                  "root worker (overlay mounts))", "host_paths_ok": False,
        "work_area": "watched folders (loop-mounted work volumes need a root worker)", "work_area_ok": False}})
    page = alice_client.get(reverse("runners:list")).content.decode()
    assert '<li class="sev-warning">limits: no cgroup per job' in page
    assert '<li class="sev-warning">work area: watched folders (loop-mounted work volumes need a root worker)' in page

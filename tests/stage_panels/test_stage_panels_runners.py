"""The runners page renders what migrator.runners.presence stores: the heartbeat plus the build toolchain."""
from __future__ import annotations

import pytest
from django.urls import reverse

from migrator.runners.presence import describe, register

pytestmark = pytest.mark.django_db


def test_runners_page_shows_gpus_and_toolchain_as_reported(alice_client, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("MIGRATOR_FAKE_GPUS", "gfx90a,gfx942")
    info = describe("rocm", ["rocm"])
    register("rocm-1@host", "rocm", ["rocm", "rocm.gfx90a", "rocm.gfx942"], info)
    page = alice_client.get(reverse("runners:list")).content.decode()
    row = page[page.index('id="runner-1"'):page.index("</tr>", page.index('id="runner-1"'))]
    assert "0: fake gfx90a <code>gfx90a</code>" in row and "1: fake gfx942 <code>gfx942</code>" in row
    assert "fake GPUs" in row and "via fake" in row
    toolchain = info["build_toolchain"]
    assert f"toolchain <strong>rocm-6.4</strong>: HIP <code>{toolchain['hipcc_version']}</code>" in row
    assert "gfx90a" in row and "sandbox: bubblewrap over the toolchain root" in row
    assert "✘ RCCL <span class=\"muted\">(not in this toolchain; package librccl-dev)</span>" in row
    assert "<code>libamdhip64-dev</code> 6.4" in row  # the root's package manifest


def test_runners_page_says_when_toolchain_detection_failed(alice_client) -> None:  # type: ignore[no-untyped-def]
    register("cpu-1@host", "cpu", ["cpu"], {"host": "h", "gpus": [], "gpu_note": "CPU worker", "toolchain": {},
                                             "build_toolchain": {"error": "<b>boom</b>"}})
    page = alice_client.get(reverse("runners:list")).content.decode()
    assert "no ROCm toolchain: &lt;b&gt;boom&lt;/b&gt;" in page and "CPU worker" in page

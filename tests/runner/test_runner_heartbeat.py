import datetime
import os

import pytest

from tests.markers import requires_nvcc
from worker.runner.heartbeat import (
    build_heartbeat,
    parse_nvcc_version,
)
from worker.toolchain.detect import detect_toolchain


def test_rocm_heartbeat_names_host_queues_toolchain_and_fake_gpus(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MIGRATOR_FAKE_GPUS", "gfx90a,gfx942")
    beat = build_heartbeat("rocm", ["rocm"])
    assert beat["pid"] == os.getpid() and beat["host"] and beat["queues"] == ["rocm"]
    assert [g["arch"] for g in beat["gpus"]] == ["gfx90a", "gfx942"] and beat["gpus_fake"]
    hip = beat["toolchain"]["hip"]
    root = detect_toolchain()  # the default: the newest root installed
    assert beat["toolchain"]["toolchain"] == root.name and hip is not None and hip.startswith(root.hip_version)
    assert datetime.datetime.fromisoformat(beat["time"]).tzinfo is not None


@requires_nvcc
def test_cuda_heartbeat_reports_nvcc_and_why_there_is_no_gpu(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MIGRATOR_FAKE_GPUS", raising=False)
    beat = build_heartbeat("cuda", ["cuda"])
    assert beat["toolchain"]["nvcc"] and beat["toolchain"]["nvcc"][0].isdigit()
    assert beat["gpus"] == [] and not beat["gpus_fake"] and "nvidia-smi" in beat["gpu_reason"]


def test_version_parsers() -> None:
    assert parse_nvcc_version("Cuda compilation tools, release 13.0, V13.0.88\n") == "13.0.88"

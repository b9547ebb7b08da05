"""The chosen toolchain's ROCm release for the scan rules' suggestions (container images, CI versions).

Read from the toolchain root (``detect_toolchain``: its HIP version and the official image of that
release), so the suggestions follow the run's ``toolchain`` setting, else the default root; with no root
installed they name no release.
"""
from __future__ import annotations

from worker.scanning.model import RocmRelease
from worker.toolchain.detect import detect_toolchain


def chosen_release(toolchain_name: str) -> RocmRelease:
    toolchain = detect_toolchain(toolchain_name)
    if not toolchain.available:
        return RocmRelease()
    return RocmRelease(toolchain.hip_version, toolchain.container_image)

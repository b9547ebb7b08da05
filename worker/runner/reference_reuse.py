"""When a CUDA reference run may be reused: only for the same smoke command and the same build.

A re-run copies its parent's workspace, ``artifacts/reference.json`` included. That reference is
a fair comparison only when it ran the same command on a build made the same way, so each
reference records a key of what shaped it; a reference with another key (or none) is not used,
and the smoke stage says why. Standard library only.
"""
from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Any

from worker.project_settings import ProjectSettings

# What the CUDA reference build and run depend on (see worker/runner/reference.py).
KEY_SETTINGS = (
    "smoke_command", "smoke_expected_exit", "exclude_globs", "include_dirs", "defines", "cxx_std",
    "link_libraries", "compile_timeout_s",
)


# What the reference's compiles alone depend on: its compile results are evidence on a run's failing files
# (``worker/toolchain/reference_evidence.py``) whatever smoke command it ran.
BUILD_KEY_SETTINGS = ("exclude_globs", "include_dirs", "defines", "cxx_std")


def build_key(settings: ProjectSettings, source_pin: str = "") -> str:
    """A short hash of the settings the reference's nvcc compiles depend on and the pinned source."""
    values = settings.to_dict()
    blob = json.dumps({"settings": {name: values.get(name) for name in BUILD_KEY_SETTINGS}, "source": source_pin},
                      sort_keys=True, default=str)
    return hashlib.sha256(blob.encode()).hexdigest()[:16]


def reference_key(settings: ProjectSettings, source_pin: str = "") -> str:
    """A short hash of the smoke command, the build settings and the pinned source."""
    values = settings.to_dict()
    shaped = {name: values.get(name) for name in KEY_SETTINGS}
    blob = json.dumps({"settings": shaped, "source": source_pin}, sort_keys=True, default=str)
    return hashlib.sha256(blob.encode()).hexdigest()[:16]


@dataclass(frozen=True)
class ReuseDecision:
    usable: bool
    note: str  # what the stage log and data say; empty for a reference made by this run


def decide_reuse(reference: dict[str, Any] | None, key: str, run_id: int) -> ReuseDecision:
    if not reference:
        return ReuseDecision(False, "")
    made_by = reference.get("run_id")
    if made_by == run_id:
        return ReuseDecision(True, "")
    if reference.get("key") != key:
        return ReuseDecision(False, "no CUDA reference for this smoke command and build: the parent run's reference "
                                    "was made with another smoke command or build settings, so it is not reused")
    return ReuseDecision(True, f"reusing the CUDA reference of run id {made_by} (same smoke command and build)")

"""The run/stage state machine's vocabulary and the pipeline's fixed stage order."""
from __future__ import annotations

from django.db import models

STAGE_NAMES: tuple[str, ...] = ("fetch", "scan", "hipify", "compile", "link", "smoke")

# Smoke stages wait on "rocm" or, routed to a runner owning a matching GPU, on "rocm.<gfx target>".
ROCM_QUEUE = "rocm"
# Runners whose toolchain root has a ROCm PyTorch (detected: ``worker/runner/torch_probe.py``) also take this
# queue: the link (the extension's own build) and smoke of PyTorch extension projects.
PYTORCH_QUEUE = "rocm.pytorch"


class StageState(models.TextChoices):
    QUEUED = "queued", "Queued"
    RUNNING = "running", "Running"
    PASSED = "passed", "Passed"
    FAILED = "failed", "Failed"
    SKIPPED = "skipped", "Skipped"
    CANCELLED = "cancelled", "Cancelled"
    NOT_APPLICABLE = "not_applicable", "Not applicable"


FINAL_STAGE_STATES = frozenset({
    StageState.PASSED, StageState.FAILED, StageState.SKIPPED, StageState.CANCELLED, StageState.NOT_APPLICABLE,
})
# Stages that count as done when a later stage is re-run on their results.
REUSABLE_STAGE_STATES = frozenset({StageState.PASSED, StageState.NOT_APPLICABLE})


class RunState(models.TextChoices):
    QUEUED = "queued", "Queued"
    RUNNING = "running", "Running"
    PASSED = "passed", "Passed"
    # Nothing failed, but at least one stage that applies was not checked (see projects/verdict.py).
    PARTIAL = "partial", "Partial"
    FAILED = "failed", "Failed"
    CANCELLED = "cancelled", "Cancelled"


FINAL_RUN_STATES = frozenset({RunState.PASSED, RunState.PARTIAL, RunState.FAILED, RunState.CANCELLED})


class SourceKind(models.TextChoices):
    ARCHIVE = "archive", "Uploaded archive"
    GIT = "git", "Git repository"


class Trigger(models.TextChoices):
    WEB = "web", "Web"
    CLI = "cli", "Command line"
    RERUN = "rerun", "Re-run"
    WEBHOOK = "webhook", "Webhook"
    API = "api", "API"


NOT_AVAILABLE = "not available on this installation"
LOG_CHUNK_BYTES = 64 * 1024
MAX_LOG_BYTES = 32 * 1024 * 1024

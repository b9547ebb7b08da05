"""What a stage receives and returns. Stages never touch the database or Celery."""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, cast

from worker.payloads import CompileData, HipifyData, ScanData
from worker.project_settings import ProjectSettings

StageOutcome = Literal["passed", "failed", "skipped", "not_applicable"]


class StageCancelled(Exception):
    """Raised by a stage (via ``ctx.check_cancelled()``) when the run was cancelled."""


@dataclass
class Workspace:
    """On-disk layout of one run. ``source`` is the fetched original and is never modified."""

    root: Path

    @property
    def source(self) -> Path:
        return self.root / "source"

    @property
    def hip(self) -> Path:
        return self.root / "hip"

    @property
    def build(self) -> Path:
        return self.root / "build"

    @property
    def artifacts(self) -> Path:
        return self.root / "artifacts"

    def ensure(self) -> None:
        for path in (self.root, self.artifacts):
            path.mkdir(parents=True, exist_ok=True)


@dataclass
class StageContext:
    run_id: int
    project_id: int
    workspace: Workspace
    settings: ProjectSettings
    cache_dir: Path  # per-project cache shared by runs (compile objects, clones)
    source_spec: dict[str, Any]  # fetch input: {"kind": "archive"|"git", ...}
    previous: dict[str, dict[str, Any]] = field(default_factory=dict)  # earlier stages' data by name; read it typed below
    log: Callable[[str], None] = lambda text: None
    progress: Callable[[int, int], None] = lambda done, total: None
    is_cancelled: Callable[[], bool] = lambda: False

    def check_cancelled(self) -> None:
        if self.is_cancelled():
            raise StageCancelled()

    # Earlier stages' data as those stages wrote it (worker/payloads.py), so a reader names only keys that
    # exist; {} when the stage has not run or left nothing. The rows are JSON the pipeline read back.
    def scan_data(self) -> ScanData:
        return cast(ScanData, self.previous.get("scan") or {})

    def hipify_data(self) -> HipifyData:
        return cast(HipifyData, self.previous.get("hipify") or {})

    def compile_data(self) -> CompileData:
        return cast(CompileData, self.previous.get("compile") or {})


@dataclass
class StageResult:
    outcome: StageOutcome
    summary: str
    data: dict[str, Any] = field(default_factory=dict)  # JSON-serialisable, kept on the Stage row

    # Stages pass one of worker/payloads.py's types as ``**data``; ``summary`` is positional-only because
    # the compile stage's data has a "summary" key of its own.
    @classmethod
    def passed(cls, summary: str, /, **data: Any) -> StageResult:
        return cls("passed", summary, dict(data))

    @classmethod
    def failed(cls, summary: str, /, **data: Any) -> StageResult:
        return cls("failed", summary, dict(data))

    @classmethod
    def skipped(cls, summary: str, /, **data: Any) -> StageResult:
        return cls("skipped", summary, dict(data))

    @classmethod
    def not_applicable(cls, summary: str, /, **data: Any) -> StageResult:
        return cls("not_applicable", summary, dict(data))

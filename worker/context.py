"""What a stage receives and returns. Stages never touch the database or Celery."""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, cast

from worker.payloads import CompileData, FetchData, HipifyData, ScanData
from worker.project_settings import ProjectSettings

StageOutcome = Literal["passed", "failed", "skipped", "not_applicable"]


class StageCancelled(Exception):
    """Raised by a stage (via ``ctx.check_cancelled()``) when the run was cancelled."""


@dataclass
class Workspace:
    """On-disk layout of one run (docs/architecture.md, "The run's folders").

    - ``source/``: the fetched original, written by the fetch stage; read-only at ``/workspace/source``
      in every sandbox, never modified.
    - ``hip/``: the translated tree as translation wrote it (root side); read-only at
      ``/workspace/.translated``. Review pages, diffs, the patch and the tree download read this tree.
    - ``records/``: everything the pipeline records (stage artifacts, logs, reference results);
      never visible in any sandbox.
    - ``work/``: the sandbox's ``/workspace``, the only thing a sandboxed command may write (the build
      copy of the translated tree at ``work/hip``, ``work/build``, ``work/.home``). Hostile as soon as a
      sandbox ran there: the root side reaches into it only through ``worker.contained`` and sandboxed
      commands (``worker.toolchain.work``).
    """

    root: Path

    @property
    def source(self) -> Path:
        return self.root / "source"

    @property
    def hip(self) -> Path:
        return self.root / "hip"

    @property
    def records(self) -> Path:
        return self.root / "records"

    @property
    def artifacts(self) -> Path:
        """The records folder (the stages' artifacts live there; the older name)."""
        return self.records

    @property
    def work(self) -> Path:
        return self.root / "work"

    @property
    def build(self) -> Path:
        """``/workspace/build`` of the sandbox: never opened by path on the root side."""
        return self.work / "build"

    @property
    def hip_copy(self) -> Path:
        """``/workspace/hip``: the copy of the translated tree that builds run in (sandbox side only)."""
        return self.work / "hip"

    def ensure(self) -> None:
        for path in (self.root, self.records):
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
    def fetch_data(self) -> FetchData:
        return cast(FetchData, self.previous.get("fetch") or {})

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

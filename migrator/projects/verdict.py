"""A run's verdict: passed only when every stage that applies passed for real.

A run with no failure whose stages did not all run (no smoke command, no ROCm runner, a stage not
available on this installation, a stage not applicable to the project) or ran only on a fake GPU
is **partial**, and lists what was not checked and why. ``_settle_run`` stores the verdict's state
on the run; the report, the API, the host statuses and the command line read the same list.
"""
from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Protocol

from migrator.projects.constants import FINAL_STAGE_STATES, RunState, StageState

NO_SMOKE_COMMAND = "no smoke command set"
NO_ROCM_RUNNER = "no ROCm runner"
NOT_AVAILABLE_HERE = "not available on this installation"
NOT_APPLICABLE = "not applicable"
FAKE_GPU = "ran on a fake GPU (MIGRATOR_FAKE_GPUS), not a real device"


class StageLike(Protocol):
    name: str
    state: str
    summary: str
    data: Any


@dataclass(frozen=True)
class Unchecked:
    stage: str
    reason: str  # one of the constants above, or "skipped"
    detail: str  # the stage's own summary

    def to_dict(self) -> dict[str, str]:
        return {"stage": self.stage, "reason": self.reason, "detail": self.detail}

    def __str__(self) -> str:
        return f"{self.stage} ({self.reason})"


@dataclass(frozen=True)
class Verdict:
    state: str  # a RunState value, or "running"/"queued" while stages are not final
    unchecked: tuple[Unchecked, ...] = ()
    fake_gpu: bool = False

    @property
    def is_partial(self) -> bool:
        return self.state == RunState.PARTIAL

    def unchecked_text(self) -> str:
        """``smoke (no smoke command set), link (not applicable)``; empty when all was checked."""
        return ", ".join(str(u) for u in self.unchecked)

    def headline(self) -> str:
        if self.state == RunState.PARTIAL:
            return f"partial: not checked: {self.unchecked_text()}"
        return str(self.state)

    def to_dict(self) -> dict[str, object]:
        return {"state": self.state, "unchecked": [u.to_dict() for u in self.unchecked], "fake_gpu": self.fake_gpu,
                "headline": self.headline()}


def _data(stage: StageLike) -> dict[str, Any]:
    return stage.data if isinstance(stage.data, dict) else {}


def unchecked_reason(stage: StageLike) -> str | None:
    """Why a final, non-failed stage does not count as checked; None when it passed for real."""
    data = _data(stage)
    if stage.state == StageState.NOT_APPLICABLE:
        return NOT_APPLICABLE
    if stage.state == StageState.PASSED:
        return FAKE_GPU if data.get("fake_gpu") else None
    if stage.state != StageState.SKIPPED:
        return None
    if data.get("not_available"):
        return NOT_AVAILABLE_HERE
    if data.get("no_runner"):
        return NO_ROCM_RUNNER
    if stage.name == "smoke" and (data.get("no_smoke_command") or "no smoke command" in stage.summary):
        return NO_SMOKE_COMMAND
    return "skipped"


def verdict_of(stages: Iterable[StageLike], cancel_requested: bool = False) -> Verdict:
    rows = list(stages)
    states = {s.state for s in rows}
    fake = any(_data(s).get("fake_gpu") for s in rows)
    if any(state not in FINAL_STAGE_STATES for state in states):
        return Verdict("running" if StageState.RUNNING in states else "queued", fake_gpu=fake)
    if cancel_requested or StageState.CANCELLED in states:
        return Verdict(RunState.CANCELLED, fake_gpu=fake)
    if StageState.FAILED in states:
        return Verdict(RunState.FAILED, fake_gpu=fake)
    unchecked = tuple(
        Unchecked(s.name, reason, s.summary) for s in rows if (reason := unchecked_reason(s)) is not None
    )
    return Verdict(RunState.PARTIAL if unchecked else RunState.PASSED, unchecked, fake)


def run_verdict(run: Any) -> Verdict:
    """The verdict of a ``Run`` from its stages (one query)."""
    stages = run.stages.only("name", "state", "summary", "data", "position").order_by("position")
    return verdict_of(stages, bool(run.cancel_requested))

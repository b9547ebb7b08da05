"""A run's verdict: passed only when every stage that applies passed for real.

A run with no failure whose stages did not all run (no smoke command, no ROCm runner, a stage not
available on this installation, a stage not applicable to the project), ran only on a fake GPU or with a
fake ROCm PyTorch, or
whose requested CUDA comparison never happened (the reference run found no CUDA runner or failed) is
**partial**, and lists what was not checked and why. ``_settle_run`` stores the verdict's state on
the run; the report, the API, the host statuses and the command line read the same list.

What needs a runner this installation did not provide ("not checked here": a ROCm runner, a CUDA
runner) carries ``needs``, one phrase per kind of runner; lists show it beside the state, so a run
that could not be checked here never reads like one that failed.
"""
from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Protocol

from django.core.exceptions import ObjectDoesNotExist

from migrator.projects.constants import FINAL_STAGE_STATES, RunState, StageState

NO_SMOKE_COMMAND = "no smoke command set"
NO_ROCM_RUNNER = "no ROCm runner"
NOT_AVAILABLE_HERE = "not available on this installation"
NOT_APPLICABLE = "not applicable"
FAKE_GPU = "ran on a fake GPU (MIGRATOR_FAKE_GPUS), not a real device"
NO_CUDA_RUNNER = "no CUDA runner"
FAKE_TORCH = "built with a fake ROCm PyTorch (MIGRATOR_FAKE_ROCM_TORCH), not a real one"
NO_ROCM_PYTORCH_RUNNER = "no ROCm PyTorch runner"  # a PyTorch extension compiled here, linked and run only there
REFERENCE_FAILED = "CUDA reference failed"
NOT_RUN = "not run"
REFERENCE = "reference"  # the name of the CUDA reference run among the unchecked items
# What a reason says is missing here; other helpers add theirs (e.g. a ROCm PyTorch runner) to this table.
NEEDS: dict[str, str] = {NO_ROCM_RUNNER: "needs a ROCm runner", NO_CUDA_RUNNER: "needs a CUDA runner",
                         NO_ROCM_PYTORCH_RUNNER: "needs a ROCm PyTorch runner"}
LABELS = {REFERENCE: "CUDA comparison"}


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

    @property
    def needs(self) -> str:
        """``needs a ROCm runner`` when what was missing is a runner this installation lacked; else empty."""
        return NEEDS.get(self.reason, "")

    @property
    def label(self) -> str:
        return LABELS.get(self.stage, self.stage)

    def to_dict(self) -> dict[str, str]:
        return {"stage": self.stage, "label": self.label, "reason": self.reason, "detail": self.detail, "needs": self.needs}

    def __str__(self) -> str:
        return f"{self.label} ({self.reason})"


@dataclass(frozen=True)
class Verdict:
    state: str  # a RunState value, or "running"/"queued" while stages are not final
    unchecked: tuple[Unchecked, ...] = ()
    fake_gpu: bool = False
    failed_targets: tuple[str, ...] = ()  # GPU targets the compile failed for (its per-target results)

    @property
    def is_partial(self) -> bool:
        return self.state == RunState.PARTIAL

    @property
    def needs(self) -> tuple[str, ...]:
        """The runners this installation lacked for what was not checked (``needs a ROCm runner``), once each."""
        return tuple(dict.fromkeys(u.needs for u in self.unchecked if u.needs))

    @property
    def not_checked_here(self) -> bool:
        """Partial only because runners were missing here: nothing failed and nothing else was left out."""
        return self.is_partial and all(u.needs for u in self.unchecked)

    def unchecked_text(self) -> str:
        """``smoke (no smoke command set), link (not applicable)``; empty when all was checked."""
        return ", ".join(str(u) for u in self.unchecked)

    def headline(self) -> str:
        if self.state == RunState.PARTIAL:
            return f"partial: not checked: {self.unchecked_text()}"
        if self.state == RunState.FAILED and self.failed_targets:
            return f"failed: the compile fails for {', '.join(self.failed_targets)}"
        return str(self.state)

    def to_dict(self) -> dict[str, object]:
        return {"state": self.state, "unchecked": [u.to_dict() for u in self.unchecked], "fake_gpu": self.fake_gpu,
                "headline": self.headline(), "needs": list(self.needs), "failed_targets": list(self.failed_targets)}


def _data(stage: StageLike) -> dict[str, Any]:
    return stage.data if isinstance(stage.data, dict) else {}


def unchecked_reason(stage: StageLike) -> str | None:
    """Why a final, non-failed stage does not count as checked; None when it passed for real."""
    data = _data(stage)
    if stage.state == StageState.NOT_APPLICABLE:
        return NOT_APPLICABLE
    if stage.state == StageState.PASSED:
        return FAKE_GPU if data.get("fake_gpu") else FAKE_TORCH if data.get("fake_torch") else None
    if stage.state != StageState.SKIPPED:
        return None
    if data.get("not_available"):
        return NOT_AVAILABLE_HERE
    if data.get("no_runner"):
        return NO_ROCM_RUNNER
    if data.get("no_pytorch_runner"):
        return NO_ROCM_PYTORCH_RUNNER
    if stage.name == "smoke" and (data.get("no_smoke_command") or "no smoke command" in stage.summary):
        return NO_SMOKE_COMMAND
    return "skipped"


NOT_RUN_LABEL = "Not run"


def shown_state(row: StageLike, display: str) -> str:
    """A stage's (or the reference's) state as pages and reports word it: one that no runner took, or that
    could not run here, is "Not run" (never "skipped", never "failed"); ``display`` otherwise."""
    data = _data(row)
    if row.state == StageState.SKIPPED and (data.get("no_runner") or row.summary.startswith("not run")):
        return NOT_RUN_LABEL
    return display


def reference_unchecked(reference: StageLike | None) -> Unchecked | None:
    """The requested CUDA comparison when it never happened (the reference run was not run, or failed)."""
    if reference is None or reference.state == StageState.PASSED:
        return None
    data = _data(reference)
    reason = (NO_CUDA_RUNNER if data.get("no_runner") else REFERENCE_FAILED if reference.state == StageState.FAILED
              else NOT_RUN)
    return Unchecked(REFERENCE, reason, reference.summary)


def verdict_of(stages: Iterable[StageLike], cancel_requested: bool = False,
               reference: StageLike | None = None) -> Verdict:
    """``reference``: the run's CUDA reference row, when a comparison was asked for."""
    rows = list(stages)
    states = {s.state for s in rows}
    fake = any(_data(s).get("fake_gpu") for s in rows)
    if any(state not in FINAL_STAGE_STATES for state in states):
        return Verdict("running" if StageState.RUNNING in states else "queued", fake_gpu=fake)
    if cancel_requested or StageState.CANCELLED in states:
        return Verdict(RunState.CANCELLED, fake_gpu=fake)
    if StageState.FAILED in states:
        targets = next((tuple(str(a) for a in _data(s).get("failed_targets") or ()) for s in rows
                        if s.name == "compile" and s.state == StageState.FAILED), ())
        return Verdict(RunState.FAILED, fake_gpu=fake, failed_targets=targets)
    unchecked = tuple(
        Unchecked(s.name, reason, s.summary) for s in rows if (reason := unchecked_reason(s)) is not None
    ) + tuple(item for item in (reference_unchecked(reference),) if item is not None)
    return Verdict(RunState.PARTIAL if unchecked else RunState.PASSED, unchecked, fake)


def run_verdict(run: Any) -> Verdict:
    """The verdict of a ``Run`` from its stages and its CUDA reference row (two queries)."""
    stages = run.stages.only("name", "state", "summary", "data", "position").order_by("position")
    return verdict_of(stages, bool(run.cancel_requested), run_reference(run))


def run_reference(run: Any) -> Any:
    """The run's CUDA reference row, or None when no comparison was asked for."""
    try:
        return run.reference
    except ObjectDoesNotExist:
        return None

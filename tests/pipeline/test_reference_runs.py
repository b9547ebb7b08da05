"""The CUDA reference run is a row with a state like a stage's: created when smoke is next and a
comparison is asked for, handed to a cuda runner, swept (lost message, dead worker, no runner within the
wait limit) and cancelled with its run; smoke is handed out only once it is final, and a comparison that
never happened leaves the run partial, saying why."""
from __future__ import annotations

import json
from collections.abc import Callable
from datetime import timedelta

import pytest
from django.utils import timezone

from migrator.pipeline import orchestrator, references, stagecontext, sweep
from migrator.pipeline.redelivery import next_stages
from migrator.projects import actions, transitions
from migrator.projects.constants import RunState, StageState
from migrator.projects.models import ReferenceRun, Run, Stage
from migrator.projects.verdict import run_verdict
from migrator.projects.workspaces import workspace_for
from migrator.runners import presence
from tests.brokerhost import RedisServer
from tests.markers import requires_nvcc
from worker.project_settings import ProjectSettings
from worker.runner.reference_reuse import reference_key
from worker.stages.smoke_presets import REFERENCE_ARTIFACT

pytestmark = pytest.mark.django_db


class Handed:
    """Recording dispatchers: what the pipeline handed out, stages with their queue and references."""

    def __init__(self) -> None:
        self.stages: list[tuple[str, str]] = []
        self.references: list[int] = []

    def stage(self, stage: Stage, queue: str) -> None:
        self.stages.append((stage.name, queue))

    def reference(self, reference: ReferenceRun) -> None:
        transitions.mark_reference_enqueued(reference, f"ref-task-{reference.pk}", "cuda")
        self.references.append(reference.run_id)


@pytest.fixture
def smoke_next(fetched_run: Run, queued_smoke: Stage, only_stages: Callable[..., None]) -> Run:
    """A run whose stages before smoke are final and whose smoke stage (with a command) is next."""
    only_stages("fetch", "smoke")
    Run.objects.filter(pk=fetched_run.pk).update(state=RunState.RUNNING, finished_at=None)
    fetched_run.refresh_from_db()
    return fetched_run


def _cuda_runner_online() -> None:
    presence.register("cuda-box@h", "cuda", ["cuda"], {"gpus": [{"arch": "sm_90"}]})


def _pass_smoke(run: Run) -> None:
    smoke = run.stages.get(name="smoke")
    transitions.mark_enqueued(smoke, "smoke-task", "rocm.gfx90a")
    transitions.claim_stage(smoke.pk, "rocm-box")
    transitions.finish_stage(smoke.pk, StageState.PASSED, "exit 0 in 0.1 s, 1/1 checks passed")


def test_smoke_waits_in_its_row_until_the_reference_run_is_final(smoke_next: Run) -> None:
    _cuda_runner_online()
    handed = Handed()
    orchestrator.advance(smoke_next.pk, handed.stage, handed.reference)
    reference = ReferenceRun.objects.get(run=smoke_next)
    smoke = smoke_next.stages.get(name="smoke")
    assert handed.references == [smoke_next.pk] and handed.stages == []  # the reference first, smoke not yet
    assert reference.state == StageState.QUEUED and reference.task_id and smoke.task_id == ""
    orchestrator.advance(smoke_next.pk, handed.stage, handed.reference)  # a second advance changes nothing
    assert handed.references == [smoke_next.pk] and handed.stages == []

    assert transitions.claim_reference(smoke_next.pk, "cuda-box") is not None
    assert transitions.claim_reference(smoke_next.pk, "other") is None  # one claim wins
    orchestrator.advance(smoke_next.pk, handed.stage, handed.reference)
    assert handed.stages == []  # still running: smoke holds no runner meanwhile
    transitions.finish_reference(reference.pk, StageState.PASSED, "CUDA reference ran (ok) in 0.3 s")
    orchestrator.advance(smoke_next.pk, handed.stage, handed.reference)
    assert handed.stages == [("smoke", "rocm.gfx90a")]

    _pass_smoke(smoke_next)
    smoke_next.refresh_from_db()
    assert smoke_next.state == RunState.PARTIAL  # the other stages were not available, but the comparison counts
    assert "reference" not in [u.stage for u in run_verdict(smoke_next).unchecked]


def test_without_a_cuda_runner_the_comparison_is_recorded_as_not_run_and_the_run_is_partial(smoke_next: Run) -> None:
    Stage.objects.filter(run=smoke_next).exclude(name="smoke").update(state=StageState.PASSED)
    handed = Handed()
    orchestrator.advance(smoke_next.pk, handed.stage, handed.reference)
    reference = ReferenceRun.objects.get(run=smoke_next)
    assert reference.state == StageState.SKIPPED and reference.summary == "not run: no CUDA runner online"
    assert handed.references == [] and handed.stages == [("smoke", "rocm.gfx90a")]
    _pass_smoke(smoke_next)
    smoke_next.refresh_from_db()
    verdict = run_verdict(smoke_next)
    assert smoke_next.state == RunState.PARTIAL
    assert verdict.unchecked_text() == "CUDA comparison (no CUDA runner)"
    assert verdict.needs == ("needs a CUDA runner",) and verdict.not_checked_here


def test_no_comparison_asked_for_means_no_row_and_smoke_goes_at_once(smoke_next: Run) -> None:
    Run.objects.filter(pk=smoke_next.pk).update(settings_used={"smoke_command": "./vadd", "smoke_compare_reference": False})
    _cuda_runner_online()
    handed = Handed()
    orchestrator.advance(smoke_next.pk, handed.stage, handed.reference)
    assert handed.stages == [("smoke", "rocm.gfx90a")] and not ReferenceRun.objects.filter(run=smoke_next).exists()


def test_a_caller_that_cannot_hand_out_references_leaves_the_row_for_one_that_can(smoke_next: Run) -> None:
    _cuda_runner_online()
    handed = Handed()
    orchestrator.advance(smoke_next.pk, handed.stage)  # e.g. an old caller with only a stage dispatcher
    reference = ReferenceRun.objects.get(run=smoke_next)
    assert reference.state == StageState.QUEUED and not reference.task_id and handed.stages == []
    orchestrator.advance(smoke_next.pk, handed.stage, handed.reference)
    assert handed.references == [smoke_next.pk]


def test_the_sweep_skips_a_reference_no_cuda_runner_took_within_the_wait_limit(smoke_next: Run) -> None:
    Run.objects.filter(pk=smoke_next.pk).update(settings_used={"smoke_command": "./vadd", "smoke_wait_timeout_s": 600})
    _cuda_runner_online()
    handed = Handed()
    orchestrator.advance(smoke_next.pk, handed.stage, handed.reference)
    sweep.sweep(handed.stage, send_reference=handed.reference)
    assert ReferenceRun.objects.get(run=smoke_next).state == StageState.QUEUED  # not yet past the limit
    ReferenceRun.objects.filter(run=smoke_next).update(queued_at=timezone.now() - timedelta(seconds=601))
    sweep.sweep(handed.stage, send_reference=handed.reference)
    reference = ReferenceRun.objects.get(run=smoke_next)
    assert reference.state == StageState.SKIPPED and reference.summary == "not run: no CUDA runner within 10 min"
    assert reference.data == {"no_runner": True, "wait_limit_s": 600}
    assert handed.stages == [("smoke", "rocm.gfx90a")]  # then smoke goes on


def test_the_sweep_fails_a_reference_whose_cuda_runner_died_and_revokes_it(smoke_next: Run) -> None:
    _cuda_runner_online()
    handed = Handed()
    orchestrator.advance(smoke_next.pk, handed.stage, handed.reference)
    transitions.claim_reference(smoke_next.pk, "cuda-box")
    ReferenceRun.objects.filter(run=smoke_next).update(heartbeat_at=timezone.now() - timedelta(hours=1))
    revoked: list[list[str]] = []
    sweep.sweep(handed.stage, revoke=revoked.append, send_reference=handed.reference)
    reference = ReferenceRun.objects.get(run=smoke_next)
    assert reference.state == StageState.FAILED and reference.summary.startswith("worker lost: no heartbeat since")
    assert revoked == [[reference.task_id]] and handed.stages == [("smoke", "rocm.gfx90a")]
    _pass_smoke(smoke_next)
    assert run_verdict(Run.objects.get(pk=smoke_next.pk)).unchecked[-1].reason == "CUDA reference failed"


def test_a_live_reference_is_left_alone_and_a_late_heartbeat_beats_the_sweep(smoke_next: Run) -> None:
    _cuda_runner_online()
    handed = Handed()
    orchestrator.advance(smoke_next.pk, handed.stage, handed.reference)
    claimed = transitions.claim_reference(smoke_next.pk, "cuda-box")
    assert claimed is not None
    sweep.sweep(handed.stage, send_reference=handed.reference)
    assert ReferenceRun.objects.get(run=smoke_next).state == StageState.RUNNING
    stale = ReferenceRun.objects.get(run=smoke_next)
    transitions.touch_reference_heartbeat(stale.pk)  # beats after the sweep read the row
    assert transitions.fail_stale_reference(stale) is None


def test_the_sweep_republishes_a_reference_whose_message_is_gone(smoke_next: Run, own_broker: RedisServer) -> None:
    _cuda_runner_online()
    handed = Handed()
    orchestrator.advance(smoke_next.pk, handed.stage, handed.reference)  # recorded, never really published
    assert next_stages(timezone.now() + timedelta(hours=1), timedelta(0)) == []  # smoke is not the lost one
    republished: list[str] = []
    sweep.sweep(handed.stage, republish_reference=lambda r: republished.append(r.task_id))
    assert republished == []  # queued only a moment ago: its publish may be on its way
    ReferenceRun.objects.filter(run=smoke_next).update(queued_at=timezone.now() - timedelta(minutes=5))
    sweep.sweep(handed.stage, republish_reference=lambda r: republished.append(r.task_id))
    assert republished == [f"ref-task-{ReferenceRun.objects.get(run=smoke_next).pk}"]


def test_cancelling_the_run_cancels_a_queued_reference_and_revokes_its_task(smoke_next: Run) -> None:
    _cuda_runner_online()
    handed = Handed()
    orchestrator.advance(smoke_next.pk, handed.stage, handed.reference)
    reference = ReferenceRun.objects.get(run=smoke_next)
    revoked = transitions.request_cancel(smoke_next)
    reference.refresh_from_db()
    smoke_next.refresh_from_db()
    assert reference.state == StageState.CANCELLED and reference.task_id in revoked
    assert smoke_next.state == RunState.CANCELLED


def test_a_run_of_the_command_line_records_the_comparison_as_not_run(smoke_next: Run) -> None:
    _cuda_runner_online()
    Stage.objects.filter(run=smoke_next, name="smoke").update(state=StageState.QUEUED)
    run = orchestrator.run_sync(smoke_next)
    reference = ReferenceRun.objects.get(run=run)
    assert reference.state == StageState.SKIPPED and reference.summary.startswith("not run: a run of the command line")
    smoke = run.stages.get(name="smoke")
    assert smoke.state == StageState.FAILED and smoke.summary.startswith("nothing was built")  # ran after it, inline


def test_a_rerun_reuses_its_parents_reference_only_for_the_same_command_and_build(smoke_next: Run) -> None:
    Stage.objects.filter(run=smoke_next).exclude(name="smoke").update(state=StageState.PASSED)
    _cuda_runner_online()
    handed = Handed()
    orchestrator.advance(smoke_next.pk, handed.stage, handed.reference)
    transitions.claim_reference(smoke_next.pk, "cuda-box")
    reference = ReferenceRun.objects.get(run=smoke_next)
    key = reference_key(ProjectSettings.from_dict(smoke_next.settings_used), str(stagecontext.source_spec(smoke_next)["sha256"]))
    transitions.finish_reference(reference.pk, StageState.PASSED, "CUDA reference ran", {"ok": True, "key": key})
    _pass_smoke(smoke_next)
    smoke_next.refresh_from_db()

    same = actions.create_rerun(smoke_next, user=None, from_stage="smoke")
    orchestrator.advance(same.pk, handed.stage, handed.reference)
    reused = ReferenceRun.objects.get(run=same)
    assert reused.state == StageState.PASSED and reused.summary.startswith(f"reused the CUDA reference of run #{smoke_next.number}")
    assert handed.references == [smoke_next.pk]  # nothing new sent for it

    Run.objects.filter(pk=smoke_next.pk).update(settings_used={"smoke_command": "./vadd --big"})
    other = actions.create_rerun(Run.objects.get(pk=smoke_next.pk), user=None, from_stage="smoke")
    Run.objects.filter(pk=other.pk).update(settings_used={"smoke_command": "./vadd --big"})
    orchestrator.advance(other.pk, handed.stage, handed.reference)
    assert ReferenceRun.objects.get(run=other).state == StageState.QUEUED and handed.references[-1] == other.pk


@requires_nvcc
def test_the_reference_run_builds_with_nvcc_and_records_its_outcome_on_its_row(
    smoke_next: Run, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MIGRATOR_FAKE_GPUS", "sm_90")
    assert references.execute_reference(smoke_next.pk) is None  # no row yet: nothing to claim
    transitions.create_reference(smoke_next.pk)
    final = references.execute_reference(smoke_next.pk, worker="cuda-box")
    assert final is not None and final.worker == "cuda-box" and final.heartbeat_at is not None
    records = workspace_for(smoke_next.pk).records
    saved = json.loads((records / REFERENCE_ARTIFACT).read_text())
    assert saved["build"]["ok"] is True  # real nvcc compiled and linked the original CUDA code
    assert final.state == StageState.FAILED  # no NVIDIA driver here: the program cannot run
    assert final.data["build"]["ok"] is True and final.summary.startswith("[fake GPU] CUDA reference failed")
    assert (records / "reference.log").read_text()
    assert references.execute_reference(smoke_next.pk) is None  # a redelivery finds it final

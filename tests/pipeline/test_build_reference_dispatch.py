"""A run that ended with a failed compile gets the build half of its CUDA reference: handed once to a CUDA
runner when one is online, skipped (saying so) when none is; a passed compile or a cancelled run gets none.
When the reference finishes after the run, ``reference_finished`` is sent and reports posts the final
status again (the causes changed)."""
from __future__ import annotations

from typing import Any

import pytest

from migrator.pipeline import orchestrator, references
from migrator.projects import transitions
from migrator.projects.constants import RunState, StageState
from migrator.projects.models import ReferenceRun, Run, Stage
from migrator.projects.signals import reference_finished
from migrator.reports import receivers
from migrator.runners import presence
from tests.markers import requires_nvcc

pytestmark = pytest.mark.django_db


class Handed:
    def __init__(self) -> None:
        self.stages: list[str] = []
        self.references: list[int] = []

    def stage(self, stage: Stage, queue: str) -> None:
        self.stages.append(stage.name)

    def reference(self, reference: ReferenceRun) -> None:
        transitions.mark_reference_enqueued(reference, f"ref-task-{reference.pk}", "cuda")
        self.references.append(reference.run_id)


def _compile_ends(run: Run, state: StageState) -> Run:
    Stage.objects.filter(run=run, name="compile").update(state=state, summary=f"compile {state}")
    Run.objects.filter(pk=run.pk).update(state=RunState.FAILED if state == StageState.FAILED else RunState.PARTIAL)
    run.refresh_from_db()
    return run


def test_a_failed_compile_hands_its_reference_build_to_an_online_cuda_runner_once(fetched_run: Run) -> None:
    run = _compile_ends(fetched_run, StageState.FAILED)
    presence.register("cuda-box@h", "cuda", ["cuda"], {"gpus": []})
    handed = Handed()
    assert orchestrator.advance(run.pk, handed.stage, handed.reference) is None
    orchestrator.advance(run.pk, handed.stage, handed.reference)  # a second advance (the sweep) changes nothing
    reference = ReferenceRun.objects.get(run=run)
    assert handed.references == [run.pk] and handed.stages == []
    assert reference.state == StageState.QUEUED and reference.task_id == f"ref-task-{reference.pk}"
    run.refresh_from_db()
    assert run.state == RunState.FAILED


def test_without_a_cuda_runner_the_reference_build_is_recorded_as_not_run(fetched_run: Run) -> None:
    run = _compile_ends(fetched_run, StageState.FAILED)
    handed = Handed()
    orchestrator.advance(run.pk, handed.stage, handed.reference)
    reference = ReferenceRun.objects.get(run=run)
    assert handed.references == []
    assert reference.state == StageState.SKIPPED and reference.summary == references.NO_CUDA_RUNNER_ONLINE
    run.refresh_from_db()
    assert run.state == RunState.FAILED


def test_a_compile_that_did_not_fail_or_a_cancelled_run_gets_no_reference_build(fetched_run: Run) -> None:
    presence.register("cuda-box@h", "cuda", ["cuda"], {"gpus": []})
    handed = Handed()
    orchestrator.advance(_compile_ends(fetched_run, StageState.SKIPPED).pk, handed.stage, handed.reference)
    assert handed.references == [] and not ReferenceRun.objects.filter(run=fetched_run).exists()
    run = _compile_ends(fetched_run, StageState.FAILED)
    Run.objects.filter(pk=run.pk).update(cancel_requested=True, state=RunState.CANCELLED)
    orchestrator.advance(run.pk, handed.stage, handed.reference)
    assert handed.references == [] and not ReferenceRun.objects.filter(run=run).exists()


@requires_nvcc
def test_a_reference_build_that_finishes_after_its_run_is_announced_and_reposts_the_status(
        fetched_run: Run, monkeypatch: pytest.MonkeyPatch) -> None:
    run = _compile_ends(fetched_run, StageState.FAILED)
    presence.register("cuda-box@h", "cuda", ["cuda"], {"gpus": []})
    orchestrator.advance(run.pk, lambda stage, queue: None, Handed().reference)
    announced: list[int] = []
    posted: list[tuple[int, str]] = []

    def listen(sender: Any, reference: ReferenceRun, **_: Any) -> None:
        announced.append(reference.run_id)

    reference_finished.connect(listen, dispatch_uid="test.reference_finished")
    monkeypatch.setattr(receivers, "queue_status_post", lambda run_id, phase: posted.append((run_id, phase)))
    try:
        final = references.execute_reference(run.pk, worker="cuda-box@h")  # real nvcc, in the sandbox
    finally:
        reference_finished.disconnect(dispatch_uid="test.reference_finished")
    assert final is not None and final.state == StageState.PASSED and final.data["build_only"]
    assert [r["target"] for r in final.data["build"]["compiles"]] == ["src/vadd.cu"]
    assert "key" not in final.data  # a build only: smoke never reuses it as a comparison
    assert announced == [run.pk] and posted == [(run.pk, "final")]
    run.refresh_from_db()
    assert run.state == RunState.FAILED

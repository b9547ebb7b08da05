"""What happened to a run, for the areas that react to it (the notebook, review, reports).

The pipeline sends these and knows nothing of who listens; each feature app connects its own
receivers in ``AppConfig.ready`` (``<app>/receivers.py``). Receivers run in the worker process
that recorded the outcome, right after the database write; one that fails is logged by its own
app and never changes the recorded outcome.

- ``stage_finished(stage=Stage, inline=bool)``: a stage reached a final state through the
  pipeline. ``inline`` is True when every stage of the run executes in this one process, one after
  the other (``migrate_repo``, tests): a receiver then does its work at once instead of queueing it.
- ``run_finished(run=Run)``: the run reached a final state (sent after ``stage_finished`` of the
  stage that ended it, and when the sweep ended it).
- ``reference_finished(reference=ReferenceRun)``: a CUDA reference run reached a final state on a worker
  (for a run whose compile failed, after the run: its compile results change that run's causes).
"""
from __future__ import annotations

from django.dispatch import Signal

stage_finished = Signal()
run_finished = Signal()
reference_finished = Signal()

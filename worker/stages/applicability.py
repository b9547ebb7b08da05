"""Whether a stage applies to the run's project kind (recorded by the scan stage).

A stage calls :func:`not_applicable_result` first and returns its result when it is not None:
for example, compile and link of a Python application on PyTorch are *not applicable*, with
the reason, never failed or passed. Runs scanned before kinds existed have no kind: every
stage applies to them.
"""
from __future__ import annotations

from typing import cast

from worker.context import StageContext, StageResult
from worker.payloads import NotApplicableData
from worker.scanning.project_kind import ProjectKindName, not_applicable_reason

_KINDS = ("cuda-cpp", "pytorch-extension", "python-app", "mixed", "other")


def project_kind(ctx: StageContext) -> ProjectKindName | None:
    """The kind the scan stage found for this run, or None."""
    payload = ctx.scan_data().get("project_kind")
    kind = payload.get("kind") if isinstance(payload, dict) else None
    return cast(ProjectKindName, kind) if kind in _KINDS else None


def not_applicable_result(ctx: StageContext, stage: str) -> StageResult | None:
    kind = project_kind(ctx)
    if kind is None:
        return None
    reason = not_applicable_reason(kind, stage)
    if reason is None:
        return None
    ctx.log(f"{stage}: not applicable to a {kind} project: {reason}\n")
    return StageResult.not_applicable(f"not applicable ({kind}): {reason}",
                                      **NotApplicableData(project_kind=kind, reason=reason))

"""The notebook learns from failures no entry explains.

Every error line of a failed stage that no signature matched is fingerprinted and counted, across
runs and teams (``UnmatchedFailure`` + one ``FailureSighting`` per stage). The notebook page lists the
most frequent with "write an entry" prefilled; when an entry is written or edited, the failures its
signatures match are resolved and every past stage that showed them gets the match.
"""
from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime

from django.db import transaction
from django.db.models import Count, F, Max
from django.utils import timezone

from migrator.lib.signatures.failure_lines import is_consequence
from migrator.lib.signatures.fingerprints import fingerprint
from migrator.lib.signatures.matcher import MatchResults, SignatureSpec, compile_signatures
from migrator.notebook.models import Entry, FailureSighting, StageMatch, UnmatchedFailure
from migrator.projects.models import Stage

MAX_FINGERPRINTS_PER_STAGE = 50
MAX_COVER_PASSES = 5
BACKFILL_CANDIDATES = 5000


def uncovered_lines(lines: Sequence[str], results: MatchResults, match: object) -> list[str]:
    """The lines no entry matched. A match shows at most 20 of its lines, so lines left over are
    matched again (``match`` is the matcher's ``match`` method) until no entry claims more."""
    covered = {n - 1 for m in results for n in m.line_numbers}
    left = [line for i, line in enumerate(lines) if i not in covered]
    for _ in range(MAX_COVER_PASSES):
        if not left or not results:
            break
        results = match("\n".join(left))  # type: ignore[operator]
        claimed = {n - 1 for m in results for n in m.line_numbers}
        left = [line for i, line in enumerate(left) if i not in claimed]
    return left


def _toolchain_of(stage: Stage) -> str:
    data = stage.data if isinstance(stage.data, dict) else {}
    toolchain = data.get("toolchain") if isinstance(data.get("toolchain"), dict) else {}
    assert isinstance(toolchain, dict)
    name = toolchain.get("name") or (f"hipcc {toolchain['hipcc_version']}" if toolchain.get("hipcc_version") else "")
    return str(name)[:200]


@transaction.atomic
def record_unmatched(stage: Stage, lines: Iterable[str]) -> list[UnmatchedFailure]:
    """Count each unmatched line's fingerprint once for this stage."""
    now = timezone.now()
    run = stage.run
    recorded: list[UnmatchedFailure] = []
    seen: set[str] = set()
    for line in lines:
        if is_consequence(line):
            continue
        key, normalised = fingerprint(line)
        if key in seen or not normalised:
            continue
        seen.add(key)
        failure, _ = UnmatchedFailure.objects.get_or_create(fingerprint=key, defaults={
            "normalised": normalised, "example": line[:1000], "stage_name": stage.name,
            "toolchain": _toolchain_of(stage), "first_seen": now, "last_seen": now,
        })
        _, created = FailureSighting.objects.get_or_create(failure=failure, stage=stage, defaults={
            "project_id": run.project_id, "team_id": run.project.team_id, "line": line[:1000],
        })
        if created:
            UnmatchedFailure.objects.filter(pk=failure.pk).update(occurrences=F("occurrences") + 1, last_seen=now)
        recorded.append(failure)
        if len(seen) >= MAX_FINGERPRINTS_PER_STAGE:
            break
    return recorded


@dataclass(frozen=True)
class UnmatchedRow:
    failure: UnmatchedFailure
    projects: int
    teams: int
    last_seen: datetime
    line: str  # the raw example for a team that saw it, else the normalised form (no other team's paths)


def top_unmatched(team_ids: Iterable[int] = (), limit: int = 15) -> list[UnmatchedRow]:
    """The unresolved failures seen most often, with how many projects and teams saw them."""
    rows = list(
        UnmatchedFailure.objects.filter(resolved_by__isnull=True)
        .annotate(n_projects=Count("sightings__project", distinct=True), n_teams=Count("sightings__team", distinct=True),
                  latest=Max("sightings__created_at"))
        .order_by("-occurrences", "-last_seen")[:limit]
    )
    own = dict(FailureSighting.objects.filter(failure__in=rows, team_id__in=list(team_ids)).values_list("failure_id", "line"))
    return [UnmatchedRow(r, r.n_projects, r.n_teams, r.latest or r.last_seen, own.get(r.pk, r.normalised)) for r in rows]


def _entry_matcher(entry: Entry) -> object | None:
    specs = [SignatureSpec(entry.pk, s.pk, s.kind, s.pattern) for s in entry.signatures.all()]
    return compile_signatures(specs).match if specs else None


def _matched_failures(entry: Entry, failures: list[UnmatchedFailure]) -> list[UnmatchedFailure]:
    match = _entry_matcher(entry)
    found: list[UnmatchedFailure] = []
    left = failures
    while match is not None and left:
        results = match("\n".join(f.example for f in left))  # type: ignore[operator]
        claimed = {n - 1 for m in results for n in m.line_numbers}
        if not claimed:
            break
        found += [f for i, f in enumerate(left) if i in claimed]
        left = [f for i, f in enumerate(left) if i not in claimed]
    return found


@transaction.atomic
def apply_entry(entry: Entry) -> int:
    """Resolve the unmatched failures ``entry`` explains and add the match to every past stage that
    showed one; returns how many stages gained the match."""
    candidates = list(UnmatchedFailure.objects.filter(resolved_by__isnull=True).order_by("-occurrences")[:BACKFILL_CANDIDATES])
    failures = _matched_failures(entry, candidates)
    sightings = FailureSighting.objects.filter(failure__in=failures).select_related("stage")
    if entry.stages:
        sightings = sightings.filter(stage__name__in=entry.stages)
    runs_before = set(StageMatch.objects.filter(entry=entry).values_list("stage__run_id", flat=True))
    added = 0
    for sighting in sightings:
        stage = sighting.stage
        rank = (StageMatch.objects.filter(stage=stage).aggregate(r=Max("rank"))["r"] or 0) + 1
        _, created = StageMatch.objects.get_or_create(stage=stage, entry=entry, defaults={
            "rank": rank, "signature_count": 1, "line_count": 1, "line_numbers": [], "lines": [sighting.line],
        })
        added += int(created)
    runs_after = set(StageMatch.objects.filter(entry=entry).values_list("stage__run_id", flat=True))
    UnmatchedFailure.objects.filter(pk__in=[f.pk for f in failures]).update(resolved_by=entry, resolved_at=timezone.now())
    Entry.objects.filter(pk=entry.pk).update(matched_runs=F("matched_runs") + len(runs_after - runs_before))
    return added

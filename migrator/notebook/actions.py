"""Every change to the notebook goes through here: saves keep history and the search index current."""
from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from django.contrib.auth.models import User
from django.contrib.postgres.search import SearchVector
from django.db import IntegrityError, connection, transaction
from django.db.models import F
from django.utils.text import slugify

from migrator.lib.signatures.seed import load_seed_entries
from migrator.lib.signatures.validate import SignatureError, validate_signature
from migrator.notebook.learning import apply_entry
from migrator.notebook.matching import bump_generation
from migrator.notebook.models import Entry, EntryRevision, FixedVote, Signature
from migrator.projects.constants import STAGE_NAMES
from migrator.projects.models import Run

EXPORT_FORMAT = "migrator-notebook/1"


class NotebookError(ValueError):
    """Invalid entry data; the message is shown to the user."""


@dataclass
class EntryData:
    title: str
    symptom: str
    signatures: list[tuple[str, str]]
    cause: str = ""
    fix: str = ""
    stages: list[str] = field(default_factory=list)
    tags: list[str] = field(default_factory=list)
    links: list[str] = field(default_factory=list)
    slug: str = ""

    def validate(self) -> None:
        if not self.title.strip() or not self.symptom.strip():
            raise NotebookError("an entry needs a title and a symptom")
        if not self.signatures:
            raise NotebookError("an entry needs at least one signature")
        for number, (kind, pattern) in enumerate(self.signatures, start=1):
            try:
                validate_signature(kind, pattern)
            except SignatureError as exc:
                raise NotebookError(f"signature {number} ({pattern[:60]!r}): {exc}") from exc
        unknown = [s for s in self.stages if s not in STAGE_NAMES]
        if unknown:
            raise NotebookError(f"unknown stage(s): {', '.join(unknown)}")
        bad = [link for link in self.links if not link.startswith(("https://", "http://"))]
        if bad:
            raise NotebookError(f"links must be http(s) URLs: {bad[0]}")


def snapshot(entry: Entry) -> dict[str, Any]:
    return {
        "slug": entry.slug, "title": entry.title, "symptom": entry.symptom, "cause": entry.cause, "fix": entry.fix,
        "stages": entry.stages, "tags": entry.tags, "links": entry.links,
        "signatures": [{"kind": s.kind, "pattern": s.pattern} for s in entry.signatures.all()],
    }


def _unique_slug(base: str) -> str:
    slug = slugify(base)[:100] or "entry"
    candidate, n = slug, 2
    while Entry.objects.filter(slug=candidate).exists():
        candidate, n = f"{slug}-{n}", n + 1
    return candidate


@transaction.atomic
def save_entry(
    data: EntryData, *, user: User | None, entry: Entry | None = None,
    origin: str = Entry.Origin.USER, note: str = "",
) -> Entry:
    data.validate()
    if entry is None:
        entry = Entry(slug=data.slug or _unique_slug(data.title), origin=origin, created_by=user)
    for name in ("title", "symptom", "cause", "fix", "stages", "tags", "links"):
        setattr(entry, name, getattr(data, name))
    entry.updated_by = user
    entry.search_extra = " ".join([pattern for _, pattern in data.signatures] + data.tags + data.stages)
    entry.save()
    entry.signatures.all().delete()
    Signature.objects.bulk_create(Signature(entry=entry, kind=k, pattern=p) for k, p in data.signatures)
    refresh_search_vector(entry.pk)
    EntryRevision.objects.create(entry=entry, author=user, note=note[:200], snapshot=snapshot(entry))
    apply_entry(entry)  # past failures its signatures explain now show the match
    bump_generation()  # now for this process and tests, and again once other processes can see the rows
    transaction.on_commit(bump_generation)
    return entry


def refresh_search_vector(entry_id: int) -> None:
    if connection.vendor != "postgresql":
        return
    vector = (
        SearchVector("title", weight="A", config="english")
        + SearchVector("symptom", "search_extra", weight="B", config="english")
        + SearchVector("cause", "fix", weight="C", config="english")
    )
    Entry.objects.filter(pk=entry_id).update(search_vector=vector)


def mark_fixed(entry: Entry, user: User, run: Run | None = None) -> bool:
    """Record "this fixed it" once per user; returns False when the user had already said so."""
    try:
        with transaction.atomic():
            FixedVote.objects.create(entry=entry, user=user, run=run)
    except IntegrityError:
        return False
    Entry.objects.filter(pk=entry.pk).update(fixed_count=F("fixed_count") + 1)
    return True


def entry_data_from_dict(raw: dict[str, Any]) -> EntryData:
    try:
        signatures = [(str(s["kind"]), str(s["pattern"])) for s in raw.get("signatures", [])]
        return EntryData(
            title=str(raw["title"]), symptom=str(raw["symptom"]), signatures=signatures,
            cause=str(raw.get("cause", "")), fix=str(raw.get("fix", "")),
            stages=[str(s) for s in raw.get("stages", [])], tags=[str(t) for t in raw.get("tags", [])],
            links=[str(link) for link in raw.get("links", [])], slug=slugify(str(raw.get("slug", "")))[:100],
        )
    except (KeyError, TypeError) as exc:
        raise NotebookError(f"malformed entry: missing or bad field {exc}") from exc


def export_notebook() -> dict[str, Any]:
    entries = Entry.objects.prefetch_related("signatures").order_by("slug")
    return {"format": EXPORT_FORMAT, "entries": [snapshot(e) for e in entries]}


@transaction.atomic
def import_notebook(payload: dict[str, Any], *, user: User | None) -> dict[str, int]:
    """Create entries with new slugs, update those whose slug exists; all or nothing."""
    if not isinstance(payload, dict) or payload.get("format") != EXPORT_FORMAT:
        raise NotebookError(f"not a notebook export (expected format {EXPORT_FORMAT!r})")
    counts = {"created": 0, "updated": 0, "unchanged": 0}
    for position, raw in enumerate(payload.get("entries", []), start=1):
        if not isinstance(raw, dict):
            raise NotebookError(f"entry {position} is not an object")
        try:
            data = entry_data_from_dict(raw)
            existing = Entry.objects.filter(slug=data.slug).first() if data.slug else None
            if existing is not None and _same(existing, data):
                counts["unchanged"] += 1
                continue
            save_entry(data, user=user, entry=existing, origin=Entry.Origin.IMPORT, note="imported")
        except NotebookError as exc:
            raise NotebookError(f"entry {position}: {exc}") from exc
        counts["updated" if existing else "created"] += 1
    return counts


def _same(entry: Entry, data: EntryData) -> bool:
    current = snapshot(entry)
    wanted = asdict(data)
    wanted["signatures"] = [{"kind": k, "pattern": p} for k, p in data.signatures]
    wanted["slug"] = entry.slug
    return current == wanted


def load_seed(path: str | None = None) -> dict[str, int]:
    """Load the seed entries: create missing ones, refresh seed entries no user has edited. Idempotent."""
    counts = {"created": 0, "updated": 0, "unchanged": 0, "kept_user_edits": 0}
    for seed in load_seed_entries(path):
        data = EntryData(
            title=seed.title, symptom=seed.symptom, cause=seed.cause, fix=seed.fix, stages=list(seed.stages),
            tags=list(seed.tags), links=list(seed.links), slug=seed.slug,
            signatures=[(s.kind, s.pattern) for s in seed.signatures],
        )
        existing = Entry.objects.filter(slug=seed.slug).first()
        if existing is None:
            save_entry(data, user=None, origin=Entry.Origin.SEED, note="seed")
            counts["created"] += 1
        elif _same(existing, data):
            counts["unchanged"] += 1
        elif existing.revisions.exclude(author=None).exists():
            counts["kept_user_edits"] += 1
        else:
            save_entry(data, user=None, entry=existing, origin=Entry.Origin.SEED, note="seed update")
            counts["updated"] += 1
    return counts

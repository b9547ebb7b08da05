"""Notebook search: PostgreSQL full-text search, ranked, with highlighted snippets.

A pasted raw error line is also run through the signature matcher, so the entry whose signature
matches the line comes first even when the line is full of paths and numbers that no entry holds.
Short queries use web-search syntax (all words); long ones use any of their words, ranked.
"""
from __future__ import annotations

import html
import re
from dataclasses import dataclass

from django.contrib.postgres.search import SearchHeadline, SearchQuery, SearchRank
from django.db import connection
from django.db.models import F, Q, QuerySet, TextField, Value
from django.db.models.functions import Concat
from django.utils.safestring import SafeString, mark_safe

from migrator.notebook.matching import match_text
from migrator.notebook.models import Entry

MARK_START, MARK_STOP = "\x02", "\x03"
_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]{1,40}")
_STOPWORDS = {"the", "and", "for", "not", "was", "with", "error", "file", "from", "line", "this", "that"}


@dataclass
class SearchHit:
    entry: Entry
    rank: float
    snippet: SafeString
    by_signature: bool


def highlight(text: str) -> SafeString:
    """Escape everything, then turn our private markers into <mark> tags."""
    escaped = html.escape(text)
    return mark_safe(escaped.replace(MARK_START, "<mark>").replace(MARK_STOP, "</mark>"))  # noqa: S308


def _query(text: str) -> SearchQuery | None:
    words = [w for w in _WORD.findall(text) if w.lower() not in _STOPWORDS]
    if not words:
        return None
    if len(words) <= 4:
        return SearchQuery(" ".join(words), search_type="websearch", config="english")
    return SearchQuery(" | ".join(dict.fromkeys(words[:40])), search_type="raw", config="english")


def _filtered(stage: str = "", tag: str = "") -> QuerySet[Entry]:
    entries = Entry.objects.all()
    if stage:
        entries = entries.filter(stages__contains=[stage])
    if tag:
        entries = entries.filter(tags__contains=[tag])
    return entries


def search_entries(text: str, *, stage: str = "", tag: str = "", limit: int = 20) -> list[SearchHit]:
    text = text.strip()[:2000]
    entries = _filtered(stage, tag)
    if not text:
        return [SearchHit(e, 0.0, highlight(e.symptom[:240]), False) for e in entries.order_by("-matched_runs", "title")[:limit]]
    signature_ids = [m.entry_id for m in match_text(text)] if len(text) >= 12 else []
    hits = _signature_hits(entries, signature_ids)
    seen = {hit.entry.pk for hit in hits}
    hits += [hit for hit in _text_hits(entries, text, limit) if hit.entry.pk not in seen]
    return hits[:limit]


def _signature_hits(entries: QuerySet[Entry], ids: list[int]) -> list[SearchHit]:
    by_id = {e.pk: e for e in entries.filter(pk__in=ids)}
    return [SearchHit(by_id[i], 1.0, highlight(by_id[i].symptom[:240]), True) for i in ids if i in by_id]


def _text_hits(entries: QuerySet[Entry], text: str, limit: int) -> list[SearchHit]:
    if connection.vendor != "postgresql":
        found = entries.filter(Q(title__icontains=text) | Q(symptom__icontains=text) | Q(search_extra__icontains=text))
        return [SearchHit(e, 0.0, highlight(e.symptom[:240]), False) for e in found[:limit]]
    query = _query(text)
    if query is None:
        return []
    ranked = (
        entries.filter(search_vector=query)
        .annotate(
            rank=SearchRank(F("search_vector"), query, cover_density=True),
            snippet=SearchHeadline(
                Concat("symptom", Value(" … "), "cause", Value(" … "), "fix", output_field=TextField()), query, config="english", start_sel=MARK_START, stop_sel=MARK_STOP,
                max_words=35, min_words=12, highlight_all=False,
            ),
        )
        .order_by("-rank", "title")[:limit]
    )
    return [SearchHit(e, float(e.rank), highlight(e.snippet), False) for e in ranked]

"""Notebook search: PostgreSQL full-text search, ranked, with highlighted snippets.

A pasted raw error line is also run through the signature matcher, so the entry whose signature
matches the line comes first even when the line is full of paths and numbers that no entry holds.
Short queries use web-search syntax (all words); long ones use any of their words, ranked.
"""
from __future__ import annotations

import html
import re
import threading
from dataclasses import dataclass
from typing import Any

from django.contrib.postgres.search import SearchHeadline, SearchQuery, SearchRank
from django.db import connection
from django.db.models import F, Q, QuerySet, TextField, Value
from django.db.models.functions import Concat, Left
from django.utils.safestring import SafeString, mark_safe

from migrator.notebook.matching import generation, match_text
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


RARE_SHARE = 0.03  # a lexeme held by more than 3% of entries says little about which entry a line means
RARE_TERMS = 3
SNIPPET_SOURCE_CHARS = 1500
BROAD_SHARE = 0.2  # a short query whose every word is in more than 20% of the entries is "broad"
BROAD_MIN_ENTRIES = 1000  # below this, ranking every hit is cheap and stays the better order
_frequencies: dict[str, Any] = {"key": None, "value": ({}, 0)}
_frequencies_lock = threading.Lock()


def document_frequencies() -> tuple[dict[str, int], int]:
    """How many entries hold each lexeme, and the number of entries (cached per notebook generation)."""
    key = generation()
    with _frequencies_lock:
        if _frequencies["key"] != key:
            with connection.cursor() as cursor:
                cursor.execute("SELECT word, ndoc FROM ts_stat('SELECT search_vector FROM notebook_entry')")
                counts = dict(cursor.fetchall())
            _frequencies["value"] = (counts, Entry.objects.count())
            _frequencies["key"] = key
        return _frequencies["value"]  # type: ignore[no-any-return]


_PATHS = re.compile(r"(?:^|(?<=\s))[^\s'\"]*/[^\s'\"]*|(?:^|(?<=\s))[^\s/:'\"]+\.\w+(?::\d+)+:?")


def _without_paths(text: str) -> str:
    """A pasted line's paths and ``file.cpp:12:3:`` locations say where, not what: drop them, so
    words such as "extensions" or "cpp" from a path never pick entries. Quoted names stay."""
    return _PATHS.sub(" ", text)


def _words(text: str) -> list[str]:
    return [w for w in _WORD.findall(_without_paths(text)) if w.lower() not in _STOPWORDS]


def _family_query(words: list[str]) -> SearchQuery | None:
    """``__shfl_xor_sync`` also finds text about ``__shfl_*_sync``: the first and last parts of an
    identifier of three or more parts, without the middle."""
    families = []
    for word in words:
        parts = [p for p in word.split("_") if p]
        if len(parts) >= 3:
            families.append(f"{parts[0]} {parts[-1]}")
    if not families:
        return None
    query = SearchQuery(families[0], search_type="websearch", config="english")
    for family in families[1:]:
        query |= SearchQuery(family, search_type="websearch", config="english")
    return query


def _lexemes(text: str) -> list[str]:
    """The distinct stemmed lexemes PostgreSQL's english configuration makes of ``text``."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT DISTINCT unnest(tsvector_to_array(to_tsvector('english', %s)))", [text])
        return [row[0] for row in cursor.fetchall()]


def _rare_lexemes(text: str) -> list[str]:
    """The query's lexemes that few entries hold (at most RARE_TERMS), else its two rarest."""
    lexemes = _lexemes(text)
    counts, total = document_frequencies()
    known = sorted((lexeme for lexeme in lexemes if lexeme in counts), key=lambda lexeme: (counts[lexeme], lexeme))
    return [lexeme for lexeme in known if counts[lexeme] <= RARE_SHARE * total][:RARE_TERMS] or known[:2]


def _query(text: str) -> SearchQuery | None:
    """Short queries: all words (web-search syntax). Long ones (a pasted log line): any of their
    rare words, so the many common words of a log line do not make every entry a hit."""
    words = _words(text)
    if not words:
        return None
    if len(words) <= 4:
        exact = SearchQuery(" ".join(words), search_type="websearch", config="english")
        family = _family_query(words)
        return exact | family if family is not None else exact
    lexemes = _rare_lexemes(" ".join(words[:40]))
    if not lexemes:
        return None
    # The lexemes are stemmed already; the "simple" configuration keeps them as they are.
    quoted = " | ".join("'" + lexeme.replace("'", "''") + "'" for lexeme in lexemes)
    return SearchQuery(quoted, search_type="raw", config="simple")


def _filtered(stage: str = "", tag: str = "") -> QuerySet[Entry]:
    entries = Entry.objects.all()
    if connection.vendor != "postgresql":  # SQLite fallback: no JSON containment, match the quoted name
        if stage:
            entries = entries.filter(stages__icontains=f'"{stage}"')
        if tag:
            entries = entries.filter(tags__icontains=f'"{tag}"')
        return entries
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
    hits = _signature_hits(entries, signature_ids, limit)
    seen = {hit.entry.pk for hit in hits}
    hits += [hit for hit in _text_hits(entries, text, limit) if hit.entry.pk not in seen]
    return hits[:limit]


def _signature_hits(entries: QuerySet[Entry], ids: list[int], limit: int) -> list[SearchHit]:
    """Entries whose signatures match the pasted text, best first; only the first page is loaded."""
    wanted = ids[: limit * 2]  # a filter (stage, tag) may drop some of them
    by_id = {e.pk: e for e in entries.filter(pk__in=wanted).defer("search_vector", "search_extra")}
    hits = [SearchHit(by_id[i], 1.0, highlight(by_id[i].symptom[:240]), True) for i in wanted if i in by_id]
    return hits[:limit]


def _text_hits(entries: QuerySet[Entry], text: str, limit: int) -> list[SearchHit]:
    if connection.vendor != "postgresql":
        found = entries.filter(Q(title__icontains=text) | Q(symptom__icontains=text) | Q(search_extra__icontains=text))
        return [SearchHit(e, 0.0, highlight(e.symptom[:240]), False) for e in found[:limit]]
    query = _query(text)
    if query is None:
        return []
    # Step 1 sorts only ids and ranks (carrying whole rows, tsvectors included, through the sort of
    # thousands of hits is what made broad queries slow); step 2 loads and highlights the few shown.
    found = entries.filter(search_vector=query)
    if _is_broad(text):
        # Words that a large share of the notebook holds say nothing about relevance, and ranking
        # thousands of rows is slow: order by what helped others instead.
        top = list(found.order_by("-matched_runs", "-fixed_count", "title").values_list("pk", Value(0.0))[:limit])
    else:
        ranked = found.annotate(rank=SearchRank(F("search_vector"), query)).order_by("-rank", "title")
        top = list(ranked.values_list("pk", "rank")[:limit])
    ranks = dict(top)
    shown = Entry.objects.filter(pk__in=ranks).defer("search_vector", "search_extra").annotate(
        snippet=SearchHeadline(
            # ts_headline parses the whole text it is given: bound it, the snippet needs only the start.
            Left(Concat("symptom", Value(" … "), "cause", Value(" … "), "fix", output_field=TextField()), SNIPPET_SOURCE_CHARS),
            query,
            config="english", start_sel=MARK_START, stop_sel=MARK_STOP, max_words=35, min_words=12,
        ),
    )
    by_pk = {entry.pk: entry for entry in shown}
    return [SearchHit(by_pk[pk], float(rank), highlight(by_pk[pk].snippet), False) for pk, rank in top if pk in by_pk]


def _is_broad(text: str) -> bool:
    """A short query whose every word is held by more than BROAD_SHARE of a large notebook's entries."""
    counts, total = document_frequencies()
    if total < BROAD_MIN_ENTRIES:
        return False
    words = _words(text)
    if not words or len(words) > 4:
        return False
    lexemes = _lexemes(" ".join(words))
    return bool(lexemes) and all(counts.get(lexeme, 0) > BROAD_SHARE * total for lexeme in lexemes)

"""The labelled set of failures (tests/causes/labelled/*.yaml): each case a small log of our own
that fails for a known reason, with the cause the run page must headline and the notebook entry
that must match first (or none). Shared by the test and ``bench/causes_bench.py``.

A case: ``id``, ``log``, ``cause`` (a CauseKind), ``entry`` (a seed slug or null), optionally
``stage`` (compile or link), ``holdout`` (written last, never tuned on), and context:
``missing`` (ROCm libraries the toolchain lacks), ``files`` (per-file compile results),
``build_units`` and ``definitions`` (symbol -> sources defining it).
"""
from __future__ import annotations

import functools
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from migrator.lib.signatures.failure_lines import own_error_lines
from migrator.lib.signatures.matcher import Matcher, SignatureSpec, compile_signatures
from migrator.lib.signatures.seed import load_seed_entries
from worker.toolchain.log_causes import LogContext, causes_from_log, stage_data

LABELLED_DIR = Path(__file__).resolve().parent / "labelled"


@dataclass(frozen=True)
class Case:
    id: str
    log: str
    cause: str
    entry: str | None
    stage: str
    holdout: bool
    context: LogContext


@dataclass(frozen=True)
class Outcome:
    case: Case
    cause: str  # the headline cause's kind; "none" when nothing was found
    reason: str
    entry: str | None  # the notebook's first match

    @property
    def cause_right(self) -> bool:
        return self.cause == self.case.cause

    @property
    def entry_verdict(self) -> str:
        """right, absent (nothing matched where an entry was expected) or wrong."""
        if self.entry == self.case.entry:
            return "right"
        return "absent" if self.entry is None else "wrong"


def load_cases() -> list[Case]:
    cases: list[Case] = []
    for path in sorted(LABELLED_DIR.glob("*.yaml")):
        for raw in yaml.safe_load(path.read_text()):
            cases.append(_case(raw, path.stem))
    return cases


def _case(raw: dict[str, Any], group: str) -> Case:
    context = LogContext(missing_libraries=tuple(raw.get("missing") or ()), files=tuple(raw.get("files") or ()),
                         build_units=tuple(raw.get("build_units") or ()), definitions=raw.get("definitions") or {})
    return Case(f"{group}/{raw['id']}", raw["log"], raw["cause"], raw.get("entry"), raw.get("stage", "compile"),
                bool(raw.get("holdout")), context)


@functools.cache
def _notebook() -> tuple[Matcher, tuple[tuple[str, tuple[str, ...]], ...]]:
    entries = load_seed_entries()
    specs = [SignatureSpec(index, index * 100 + n, s.kind, s.pattern)
             for index, entry in enumerate(entries) for n, s in enumerate(entry.signatures)]
    return compile_signatures(specs), tuple((e.slug, e.stages) for e in entries)


def _error_lines(case: Case) -> list[str]:
    """The lines the notebook matches a failed stage on: its structured errors, then the log's error lines."""
    compile_data, link_data = stage_data(case.log, case.context)
    structured = [f"{d['file']}:{d['line']}: error: {d['message']}" if d["file"] else f"error: {d['message']}"
                  for d in compile_data["diagnostics"]]
    structured += [p["message"] for p in link_data["problems"]]
    return own_error_lines(case.log, structured)


def first_entry(case: Case) -> str | None:
    matcher, entries = _notebook()
    for match in matcher.match("\n".join(_error_lines(case))):
        slug, stages = entries[match.entry_id]
        if not stages or case.stage in stages:
            return slug
    return None


def evaluate(case: Case) -> Outcome:
    groups = causes_from_log(case.log, case.context)
    headline = groups[0] if groups else None
    return Outcome(case, headline.kind if headline else "none", headline.reason if headline else "", first_entry(case))

"""Fast matching of many notebook signatures against one build log.

How: `compile_signatures` gives every signature up to two prefilter requirements: literals that
every matching line must contain (text: pieces of the normalised text that survive in the raw
line; regex: literal runs found by walking the parsed pattern; see `literals`), chosen to be
long and shared by few signatures. One Aho-Corasick pass over the lowercased log gives the
candidate lines per signature (`prefilter`); only those lines are confirmed: text signatures by
a cheap piece check and then full normalisation, regexes by a search with a timeout. Regexes
without a usable literal take a slow path over the whole log, with a timeout. `time_budget_s`
bounds the regex work of one call: a regex that times out, or that is reached after the budget
is spent, is reported in `MatchResults.skipped`; a bad pattern is reported as skipped, never
raised. bench/match_bench.py measures it all.
"""

from __future__ import annotations

import time
from bisect import bisect_right
from collections.abc import Iterable
from dataclasses import dataclass, field
from itertools import accumulate
from typing import NamedTuple

import regex

from migrator.lib.signatures.literals import (
    Requirement,
    choose_requirements,
    regex_requirements,
    text_requirements,
)
from migrator.lib.signatures.normalise import (
    normalise_text,
    quick_form,
    required_pieces,
)
from migrator.lib.signatures.prefilter import MAX_REQUIREMENTS, Prefilter
from migrator.lib.signatures.validate import REGEX_FLAGS, SignatureError, compile_regex

MAX_LINES_PER_ENTRY = 20
MAX_LINE_CHARS = 1000
PER_SIGNATURE_TIMEOUT_S = 0.25


class SignatureSpec(NamedTuple):
    entry_id: int
    signature_id: int
    kind: str  # "text" | "regex"
    pattern: str


@dataclass(frozen=True)
class SkippedSignature:
    entry_id: int
    signature_id: int
    reason: str


@dataclass
class EntryMatch:
    """One notebook entry that matched; lines are 1-based, capped at MAX_LINES_PER_ENTRY."""

    entry_id: int
    signature_ids: list[int]
    specificity: int
    line_count: int
    line_numbers: list[int]
    lines: list[str]
    skipped_signature_ids: list[int] = field(default_factory=list)

    @property
    def score(self) -> tuple[int, int, int]:
        return (len(self.signature_ids), self.specificity, self.line_count)


class MatchResults(list[EntryMatch]):
    """Entry matches, best first, plus the signatures that were skipped (timeouts, bad patterns)."""

    def __init__(
        self, matches: Iterable[EntryMatch], skipped: list[SkippedSignature]
    ) -> None:
        super().__init__(matches)
        self.skipped = skipped


@dataclass
class _Compiled:
    spec: SignatureSpec
    normalised: str = ""
    pieces: list[str] = field(default_factory=list)
    pattern: regex.Pattern[str] | None = None  # compiled on first use
    options: list[Requirement] = field(default_factory=list)
    requirements: list[Requirement] = field(default_factory=list)  # chosen from options
    error: str = ""


def _compile_one(spec: SignatureSpec) -> _Compiled:
    compiled = _Compiled(spec)
    if spec.kind == "text":
        compiled.normalised = normalise_text(spec.pattern)
        compiled.pieces = sorted(
            required_pieces(compiled.normalised), key=len, reverse=True
        )
        compiled.options = text_requirements(compiled.normalised, compiled.pieces)
        if not compiled.options:
            compiled.error = "no selective word once paths and numbers are ignored"
        return compiled
    if spec.kind != "regex":
        compiled.error = f"unknown signature kind {spec.kind!r}"
        return compiled
    # Compiling is deferred to the first candidate line: most regexes never get one.
    compiled.options = regex_requirements(spec.pattern)
    return compiled


def _ensure_pattern(signature: _Compiled) -> regex.Pattern[str] | None:
    if signature.pattern is None and not signature.error:
        try:
            signature.pattern = compile_regex(signature.spec.pattern)
        except SignatureError as exc:
            signature.error = str(exc)
    return signature.pattern


def _choose_requirements(signatures: list[_Compiled]) -> None:
    shared: dict[str, int] = {}
    for signature in signatures:
        for literal in {f for option in signature.options for f in option}:
            shared[literal] = shared.get(literal, 0) + 1
    for signature in signatures:
        if not signature.error:
            signature.requirements = choose_requirements(
                signature.options, shared, MAX_REQUIREMENTS
            )


def compile_signatures(signatures: Iterable[SignatureSpec]) -> Matcher:
    """Build a reusable Matcher; invalid signatures are kept and reported as skipped."""
    return Matcher([_compile_one(SignatureSpec(*spec)) for spec in signatures])


class _Scan:
    """Per-call state: the log split into lines, lazily normalised, and the deadline."""

    def __init__(
        self, log_text: str, deadline: float, per_signature_timeout_s: float
    ) -> None:
        self.text = log_text
        self.lowered = log_text.lower()
        self.raw_lines = log_text.split("\n")
        # lower() may change lengths, so offsets into `lowered` index these lines.
        self.lowered_lines = self.lowered.split("\n")
        self.line_starts = list(
            accumulate((len(line) + 1 for line in self.lowered_lines), initial=0)
        )
        self.normalised: dict[int, str] = {}
        self.quick: dict[int, str] = {}
        self._raw_line_starts: list[int] | None = None
        self.deadline = deadline
        self.per_signature_timeout_s = per_signature_timeout_s

    def raw_line_starts(self) -> list[int]:
        # Offsets into the original text (the lowered text may differ in length).
        if self._raw_line_starts is None:
            lengths = (len(line) + 1 for line in self.raw_lines)
            self._raw_line_starts = list(accumulate(lengths, initial=0))
        return self._raw_line_starts

    def quick_lines(self, indexes: list[int]) -> list[str]:
        quick = self.quick
        missing = [i for i in indexes if i not in quick]
        lowered = self.lowered_lines
        quick.update(zip(missing, (quick_form(lowered[i]) for i in missing)))
        return [quick[i] for i in indexes]

    def text_matches(self, signature: _Compiled, indexes: list[int]) -> list[int]:
        # The cheap piece check (longest piece first) rejects almost every non-matching
        # candidate, so the full normalisation (several regex passes) runs only on lines that
        # really match.
        longest, *others = signature.pieces
        confirmed: list[int] = []
        for index, quick in zip(indexes, self.quick_lines(indexes)):
            if longest not in quick or any(piece not in quick for piece in others):
                continue
            if signature.normalised in self.normalised_line(index):
                confirmed.append(index)
        return confirmed

    def line(self, index: int) -> str:
        return self.raw_lines[index].rstrip("\r")

    def normalised_line(self, index: int) -> str:
        cached = self.normalised.get(index)
        if cached is None:
            cached = self.normalised[index] = normalise_text(self.raw_lines[index])
        return cached

    def timeout(self) -> float:
        return min(self.per_signature_timeout_s, self.deadline - time.perf_counter())


class Matcher:
    def __init__(self, compiled: list[_Compiled]) -> None:
        self._signatures = compiled
        # Errors known now; regex compile errors are found lazily and reported when met.
        self._static_skipped = [
            SkippedSignature(s.spec.entry_id, s.spec.signature_id, s.error)
            for s in compiled
            if s.error
        ]
        _choose_requirements(compiled)
        self._prefilter = Prefilter([s.requirements for s in compiled])
        self._slow = [
            i for i, s in enumerate(compiled) if not s.error and not s.requirements
        ]

    def match_lines(
        self, lines: list[str], *, time_budget_s: float = 2.0
    ) -> MatchResults:
        return self.match("\n".join(lines), time_budget_s=time_budget_s)

    def match(
        self,
        log_text: str,
        *,
        time_budget_s: float = 2.0,
        per_signature_timeout_s: float = PER_SIGNATURE_TIMEOUT_S,
    ) -> MatchResults:
        """Entries whose signatures occur in the log, best first (see EntryMatch.score).

        `time_budget_s` bounds the regex work that follows the prefilter pass; each regex call
        also gets at most `per_signature_timeout_s`. Signatures that time out, come after the
        budget is spent, or do not compile are listed in the result's `skipped`; this never
        raises for a bad signature.
        """
        scan = _Scan(log_text, float("inf"), per_signature_timeout_s)
        skipped = list(self._static_skipped)
        matched: dict[int, list[int]] = {}
        candidates = self._candidates(scan)
        # The budget covers the regex work after the linear prefilter pass.
        scan.deadline = time.perf_counter() + time_budget_s
        for index, lines in candidates.items():
            confirmed = self._confirm(index, sorted(lines), scan, skipped)
            if confirmed:
                matched[index] = confirmed
        for index in self._slow:
            confirmed = self._slow_path(index, scan, skipped)
            if confirmed:
                matched[index] = confirmed
        return MatchResults(self._rank(matched, scan, skipped), skipped)

    def _candidates(self, scan: _Scan) -> dict[int, set[int]]:
        return self._prefilter.candidates(scan.lowered, scan.line_starts)

    def _confirm(
        self, index: int, lines: list[int], scan: _Scan, skipped: list[SkippedSignature]
    ) -> list[int]:
        signature = self._signatures[index]
        if signature.spec.kind == "text":
            return scan.text_matches(signature, lines)
        if _ensure_pattern(signature) is None:
            spec = signature.spec
            skipped.append(
                SkippedSignature(spec.entry_id, spec.signature_id, signature.error)
            )
            return []
        confirmed: list[int] = []
        for line in lines:
            found = self._search(signature, scan.line(line), scan, skipped)
            if found is None:
                return confirmed  # skipped: keep what was confirmed before the timeout
            if found:
                confirmed.append(line)
        return confirmed

    def _search(
        self,
        signature: _Compiled,
        text: str,
        scan: _Scan,
        skipped: list[SkippedSignature],
    ) -> bool | None:
        """True/False, or None after recording the signature as skipped."""
        assert signature.pattern is not None
        timeout = scan.timeout()
        spec = signature.spec
        if timeout <= 0:
            skipped.append(
                SkippedSignature(
                    spec.entry_id, spec.signature_id, "time budget exhausted"
                )
            )
            return None
        try:
            return signature.pattern.search(text, timeout=timeout) is not None
        except TimeoutError:
            reason = f"regex timed out after {timeout:.2f} s"
            skipped.append(SkippedSignature(spec.entry_id, spec.signature_id, reason))
            return None

    def _slow_path(
        self, index: int, scan: _Scan, skipped: list[SkippedSignature]
    ) -> list[int]:
        """Regexes without a literal: one pass over the whole log, then a per-line check."""
        signature = self._signatures[index]
        spec = signature.spec
        if _ensure_pattern(signature) is None:
            skipped.append(
                SkippedSignature(spec.entry_id, spec.signature_id, signature.error)
            )
            return []
        timeout = scan.timeout()
        if timeout <= 0:
            skipped.append(
                SkippedSignature(
                    spec.entry_id, spec.signature_id, "time budget exhausted"
                )
            )
            return []
        whole = regex.compile(spec.pattern, REGEX_FLAGS | regex.MULTILINE)
        try:
            starts = [m.start() for m in whole.finditer(scan.text, timeout=timeout)]
        except TimeoutError:
            reason = f"regex timed out after {timeout:.2f} s"
            skipped.append(SkippedSignature(spec.entry_id, spec.signature_id, reason))
            return []
        raw_starts = scan.raw_line_starts()
        lines = sorted({bisect_right(raw_starts, start) - 1 for start in starts})
        return self._confirm(index, lines, scan, skipped)

    def _rank(
        self,
        matched: dict[int, list[int]],
        scan: _Scan,
        skipped: list[SkippedSignature],
    ) -> list[EntryMatch]:
        by_entry: dict[int, list[int]] = {}
        for index in matched:
            by_entry.setdefault(self._signatures[index].spec.entry_id, []).append(index)
        skipped_by_entry: dict[int, list[int]] = {}
        for item in skipped:
            skipped_by_entry.setdefault(item.entry_id, []).append(item.signature_id)
        results = [
            self._entry_match(
                entry_id, indexes, matched, scan, skipped_by_entry.get(entry_id, [])
            )
            for entry_id, indexes in by_entry.items()
        ]
        results.sort(key=lambda m: (tuple(-v for v in m.score), m.entry_id))
        return results

    def _entry_match(
        self,
        entry_id: int,
        indexes: list[int],
        matched: dict[int, list[int]],
        scan: _Scan,
        skipped_ids: list[int],
    ) -> EntryMatch:
        specs = [self._signatures[i].spec for i in indexes]
        all_lines = sorted({line for i in indexes for line in matched[i]})
        shown = all_lines[:MAX_LINES_PER_ENTRY]
        return EntryMatch(
            entry_id=entry_id,
            signature_ids=sorted({s.signature_id for s in specs}),
            specificity=sum(len(s.pattern) for s in specs),
            line_count=len(all_lines),
            line_numbers=[line + 1 for line in shown],
            lines=[scan.line(line)[:MAX_LINE_CHARS] for line in shown],
            skipped_signature_ids=sorted(set(skipped_ids)),
        )

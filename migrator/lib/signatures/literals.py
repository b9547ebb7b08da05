"""Required literals for the Aho-Corasick prefilter.

For a regex we walk the tree that Python's own parser (`re._parser`, formerly `sre_parse`)
builds and collect literal runs that every match must contain. A requirement is a list of
alternatives: at least one of them occurs in every match (a top-level `a|b` gives two).
Literals are lowercased because regex signatures are case-insensitive and the prefilter
scans the lowercased log.
"""

from __future__ import annotations

import math
import re
import re._constants as sre_constants
import re._parser as sre_parse
import warnings
from collections.abc import Iterable, Sequence
from typing import cast

from migrator.lib.signatures.normalise import QUOTE_CHARS

Requirement = list[str]
ParsedItem = tuple[object, object]

MIN_PREFILTER_LITERAL = 3
MIN_EXTRA_REQUIREMENT_SCORE = 10.0
# Words so frequent in build logs that a prefilter on them alone finds most lines.
COMMON_LOG_WORDS = frozenset(
    [
        "error",
        "errors",
        "warning",
        "warnings",
        "fatal",
        "note",
        "file",
        "found",
        "such",
        "directory",
        "cannot",
        "undefined",
        "reference",
        "function",
        "include",
        "included",
        "from",
        "in",
        "of",
        "the",
        "to",
        "and",
        "or",
        "not",
        "no",
        "for",
        "with",
        "is",
        "was",
        "line",
        "make",
        "build",
        "building",
        "target",
        "failed",
        "failure",
        "linking",
        "compiling",
        "generated",
    ]
)

_REPEATS = (
    sre_constants.MAX_REPEAT,
    sre_constants.MIN_REPEAT,
    sre_constants.POSSESSIVE_REPEAT,
)
_GROUPS = (sre_constants.SUBPATTERN, sre_constants.ATOMIC_GROUP)
_ZERO_WIDTH = (sre_constants.AT, sre_constants.ASSERT, sre_constants.ASSERT_NOT)


def fragment_score(fragment: str) -> float:
    """Higher is more selective: long, with punctuation (-lcublas, cuda_runtime.h), not a stop word."""
    score = float(len(fragment))
    if any(not c.isalpha() for c in fragment):
        score += 4
    if fragment.strip("-.:_ '\"`") in COMMON_LOG_WORDS:
        score -= 8
    return score


def requirement_score(requirement: Requirement) -> float:
    # An any-of requirement is as weak as its weakest alternative.
    return min(fragment_score(f) for f in requirement)


def regex_requirements(pattern: str) -> list[Requirement]:
    """Every usable requirement of a regex signature (empty: no literal, use the slow path)."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            parsed = sre_parse.parse(pattern)
    except (re.error, RecursionError, OverflowError, ValueError):
        return []
    return [r for r in _sequence_requirements(_items(parsed)) if _usable(r)]


def required_regex_literals(pattern: str) -> Requirement | None:
    """The best requirement for `pattern` on its own, or None when no usable literal exists."""
    return choose_requirement(regex_requirements(pattern), {})


def text_requirements(normalised: str, pieces: Sequence[str]) -> list[Requirement]:
    """Requirements of a normalised text signature, from its pieces (see `required_pieces`).

    A piece is cut at the first space or quote: whitespace may differ in the raw log, and a
    quote may be any of the quote characters, so a piece ending in a quote becomes one
    alternative per quote character. Everything else in a piece is verbatim in the lowercased
    raw line.
    """
    requirements: list[Requirement] = []
    for piece in pieces:
        stem, stop = _cut_piece(piece)
        if stop == "'":
            requirements.append([stem + quote for quote in QUOTE_CHARS])
        requirements.append([stem])
    return [r for r in requirements if _usable(r)]


def _cut_piece(piece: str) -> tuple[str, str]:
    for position, char in enumerate(piece):
        if char == " " or char == "'":
            return piece[:position], char
    return piece, ""


def choose_requirement(
    options: list[Requirement], shared: dict[str, int]
) -> Requirement | None:
    """The most selective option; a literal that many signatures rely on counts as common."""
    chosen = choose_requirements(options, shared, 1)
    return chosen[0] if chosen else None


def choose_requirements(
    options: list[Requirement], shared: dict[str, int], count: int
) -> list[Requirement]:
    """Up to `count` distinct requirements, most selective first.

    `shared[literal]` is how many signatures could use the literal: a literal that hundreds of
    signatures contain ("undefined reference to") is a common phrase, so it is penalised.
    """

    def adjusted(requirement: Requirement) -> float:
        most_shared = max(shared.get(f, 1) for f in requirement)
        return requirement_score(requirement) - 2 * math.log2(most_shared)

    distinct = {tuple(sorted(r)): r for r in options}
    ranked = sorted(distinct.values(), key=adjusted, reverse=True)
    # Beyond the first, only selective requirements: a weak one ("hip", "warning:") would
    # cost far more automaton hits than its intersection saves.
    extra = [r for r in ranked[1:count] if adjusted(r) >= MIN_EXTRA_REQUIREMENT_SCORE]
    return ranked[:1] + extra


def _usable(requirement: Requirement) -> bool:
    return all(len(f) >= MIN_PREFILTER_LITERAL for f in requirement)


def _items(subpattern: object) -> list[ParsedItem]:
    # The parser's tree is untyped; this is the one place that says what it holds.
    return list(cast("Iterable[ParsedItem]", subpattern))


def _sequence_requirements(items: list[ParsedItem]) -> list[Requirement]:
    """All requirements of a concatenation; literal runs continue through plain groups."""
    requirements: list[Requirement] = []
    run: list[str] = []

    def close_run() -> None:
        if run:
            requirements.append(["".join(run).lower()])
            run.clear()

    for op, arg in items:
        if op is sre_constants.LITERAL:
            run.append(chr(cast(int, arg)))
        elif op in _ZERO_WIDTH:
            continue  # anchors and lookarounds consume nothing, so the run stays contiguous
        elif op in _GROUPS:
            inner = _group_items(op, arg)
            if all(o is sre_constants.LITERAL for o, _ in inner):
                run.extend(chr(cast(int, a)) for _, a in inner)
            else:
                close_run()
                requirements.extend(_sequence_requirements(inner))
        else:
            close_run()
            requirements.extend(_nested_requirements(op, arg))
    close_run()
    return requirements


def _group_items(op: object, arg: object) -> list[ParsedItem]:
    if op is sre_constants.ATOMIC_GROUP:
        return _items(arg)
    return _items(
        cast("tuple[object, ...]", arg)[-1]
    )  # (group, add_flags, del_flags, body)


def _nested_requirements(op: object, arg: object) -> list[Requirement]:
    if op in _REPEATS:
        minimum, _maximum, inner = cast("tuple[int, int, object]", arg)
        return _sequence_requirements(_items(inner)) if minimum >= 1 else []
    if op is sre_constants.BRANCH:
        return _branch_requirement(cast("tuple[object, list[object]]", arg)[1])
    return []


def _branch_requirement(alternatives: list[object]) -> list[Requirement]:
    combined: Requirement = []
    for alternative in alternatives:
        options = _sequence_requirements(_items(alternative))
        usable = [r for r in options if _usable(r)]
        if not usable:
            return []  # one alternative without a literal: the branch guarantees nothing
        best: Requirement = max(usable, key=requirement_score)
        combined.extend(best)
    return [sorted(set(combined))]

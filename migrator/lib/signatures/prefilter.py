"""Aho-Corasick prefilter: which lines may match which signature.

Each signature brings up to MAX_REQUIREMENTS requirements (see `literals`); a requirement
is a list of literals of which at least one occurs in every matching line. One pass of the
automaton over the lowercased log records, per literal, the lines it occurs in; a signature's
candidate lines are the intersection, over its requirements, of the union of its literals'
lines. Intersecting in C (set operations) is what keeps signatures whose best literal is a
common word cheap: their second literal is usually absent from the log.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Sequence

import ahocorasick

from migrator.lib.signatures.literals import Requirement

MAX_REQUIREMENTS = 2


class Prefilter:
    def __init__(self, requirements: Sequence[Sequence[Requirement]]) -> None:
        """`requirements[i]` belongs to signature i; an empty list means no prefilter."""
        self._automaton = ahocorasick.Automaton()
        self._literal_ids: dict[str, int] = {}
        self._by_signature: list[list[list[int]]] = [
            [[self._literal_id(literal) for literal in req] for req in reqs]
            for reqs in requirements
        ]
        # Signatures reachable from each literal of their first requirement: a signature can only
        # match when one of those literals was found, so only those signatures are visited.
        self._signatures_of: dict[int, list[int]] = {}
        for index, reqs in enumerate(self._by_signature):
            for literal in dict.fromkeys(reqs[0] if reqs else []):
                self._signatures_of.setdefault(literal, []).append(index)
        if self._literal_ids:
            self._automaton.make_automaton()

    def _literal_id(self, literal: str) -> int:
        if literal not in self._literal_ids:
            self._literal_ids[literal] = len(self._literal_ids)
            self._automaton.add_word(literal, self._literal_ids[literal])
        return self._literal_ids[literal]

    def candidates(self, lowered: str, line_starts: list[int]) -> dict[int, set[int]]:
        """Signature index -> 0-based candidate lines; `line_starts` index `lowered`."""
        if not self._literal_ids:
            return {}
        lines_of: dict[int, set[int]] = {}
        for end, literal in self._automaton.iter(lowered):
            line = bisect_right(line_starts, end) - 1
            found = lines_of.get(literal)
            if found is None:
                lines_of[literal] = {line}
            else:
                found.add(line)
        reachable = sorted({i for literal in lines_of for i in self._signatures_of.get(literal, ())})
        result: dict[int, set[int]] = {}
        for index in reachable:
            lines = _intersect(self._by_signature[index], lines_of)
            if lines:
                result[index] = lines
        return result


def _intersect(
    requirements: list[list[int]], lines_of: dict[int, set[int]]
) -> set[int]:
    combined: set[int] | None = None
    for requirement in requirements:
        present = [lines_of[literal] for literal in requirement if literal in lines_of]
        if not present:
            return set()
        union = present[0] if len(present) == 1 else set().union(*present)
        combined = set(union) if combined is None else combined & union
        if not combined:
            return set()
    return combined or set()

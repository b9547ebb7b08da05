"""Apply the certain fixes of a file's hazards (those whose rule is not disabled)."""
from __future__ import annotations

from collections.abc import Collection

from translator.wavefront.model import Edit, Hazard


def apply_fixes(text: str, hazards: list[Hazard], disabled: Collection[str] = ()) -> tuple[str, list[Hazard]]:
    """``text`` with the fixes applied, and the hazards with ``applied`` set where theirs was.

    Edits are applied in text order; one that overlaps an edit already taken is dropped with its
    hazard (that hazard stays a suggestion), so two rules never rewrite the same characters.
    """
    chosen: list[Edit] = []
    taken: list[Hazard] = []
    result: list[Hazard] = []
    candidates = sorted((h for h in hazards if h.rule and h.edits and h.rule not in disabled),
                        key=lambda h: min(e.start for e in h.edits))
    claimed: list[tuple[int, int]] = []
    for hazard in candidates:
        if any(e.start < end and start < e.end for e in hazard.edits for start, end in claimed):
            continue
        chosen += hazard.edits
        claimed += [(e.start, e.end) for e in hazard.edits]
        taken.append(hazard)
    applied = {id(h) for h in taken}
    for hazard in hazards:
        result.append(Hazard(*hazard[:-1], True) if id(hazard) in applied else hazard)  # applied is the last field
    if not chosen:
        return text, result
    pieces: list[str] = []
    cursor = 0
    for edit in sorted(chosen, key=lambda e: e.start):
        pieces.append(text[cursor:edit.start])
        pieces.append(edit.text)
        cursor = edit.end
    pieces.append(text[cursor:])
    return "".join(pieces), result

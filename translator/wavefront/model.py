"""What a wavefront hazard is: its kind, where it is, why it is wrong on 64-lane wavefronts, and its fix.

A hazard with ``rule`` set has a fix whose meaning is certain (``edits``); the translation applies it
unless the rule is disabled. Every other hazard carries a suggestion for a person.
"""
from __future__ import annotations

from typing import NamedTuple, TypedDict

# Kinds, in the order reports list them: (title, why it is wrong on wave64, also wrong on wave32)
KINDS: dict[str, tuple[str, str, bool]] = {
    "full-mask-32": (
        "32-bit lane mask given to a *_sync builtin",
        "a 32-bit mask names lanes 0-31 only: on a 64-lane wavefront the upper half does not take part; "
        "HIP 7 rejects it at compile time (\"The mask must be a 64-bit integer\")", True),
    "ballot-32bit": (
        "ballot result stored in a 32-bit integer",
        "a ballot of a 64-lane wavefront has 64 bits; storing it in 32 bits drops lanes 32-63", False),
    "popc-ballot": (
        "ballot counted or searched with a 32-bit bit function",
        "__popc/__ffs take 32 bits: lanes 32-63 of a 64-lane ballot are not counted", False),
    "lane-mask-32": (
        "lane bit mask built in 32 bits",
        "1 << lane needs 64 bits when lanes go up to 63 (a 32-bit shift by 32 or more is undefined)", False),
    "lane-id-32": (
        "lane id computed for 32 lanes",
        "% 32 / & 31 give the lane only on 32-lane warps: on a 64-lane wavefront lanes 32-63 alias lanes 0-31", False),
    "warp-id-32": (
        "warp id or warp count computed for 32 lanes",
        "/ 32 / >> 5 count 32-lane warps: a 64-lane wavefront holds two of them, so per-warp work is "
        "split or doubled", False),
    "warp-array-32": (
        "per-warp array sized for 32 lanes",
        "an array of 32 entries indexed by lane overflows when lanes go up to 63", False),
    "reduction-offset-16": (
        "warp reduction or scan that stops at 32 lanes",
        "shuffle offsets 16, 8, 4, 2, 1 combine 32 lanes: on a 64-lane wavefront lanes 32-63 are never "
        "combined with lanes 0-31", False),
    "warpsize-constexpr": (
        "warpSize used as a compile-time constant",
        "warpSize is not a constant expression in HIP 7 (wave32 and wave64 targets share one source): "
        "array bounds, template arguments and constexpr values cannot use it", True),
}

# Fix rules (ids a project can list in ``disabled_fix_rules``): rule -> what it does.
FIX_RULES: dict[str, str] = {
    "wavefront.full-mask-64": "a full 32-bit lane mask given to a *_sync builtin becomes 0xffffffffffffffffull",
    "wavefront.popcll-ballot": "__popc/__ffs of a ballot become __popcll/__ffsll",
    "wavefront.widen-ballot": "a ballot stored in a 32-bit integer is stored in an unsigned long long",
}


class HazardData(TypedDict):
    """One hazard as the translation account, the stage data and the JSON report carry it."""

    kind: str
    line: int  # 1-based, in the original source
    column: int  # 0-based
    expression: str
    why: str
    wave32: bool  # also wrong (or rejected) on 32-lane targets
    rule: str  # the fix rule ("" when only a suggestion)
    fix: str  # what the fix writes, or the suggestion
    applied: bool  # the translation applied the fix


class Edit(NamedTuple):
    start: int  # offsets in the original text
    end: int
    text: str


class Hazard(NamedTuple):  # a tuple: thousands are made on large trees, and tuples are made fast
    kind: str
    start: int  # offset of the expression in the original text
    end: int
    why: str
    fix: str  # the replacement text shown, or the suggestion
    rule: str = ""
    edits: tuple[Edit, ...] = ()
    line: int = 0
    column: int = 0
    expression: str = ""
    applied: bool = False

    @property
    def wave32(self) -> bool:
        return KINDS[self.kind][2]

    def placed(self, text: str, line: int = 0) -> Hazard:
        """This hazard with its line (counted here unless given), column and expression text from ``text``."""
        line_start = text.rfind("\n", 0, self.start) + 1
        expression = " ".join(text[self.start:self.end].split())[:200]
        return Hazard(self.kind, self.start, self.end, self.why, self.fix, self.rule, self.edits,  # not _replace: slow
                      line or text.count("\n", 0, self.start) + 1, self.start - line_start, expression, self.applied)

    def to_dict(self) -> HazardData:
        return HazardData(kind=self.kind, line=self.line, column=self.column, expression=self.expression,
                          why=self.why, wave32=self.wave32, rule=self.rule, fix=self.fix, applied=self.applied)


def why(kind: str, detail: str = "") -> str:
    base = KINDS[kind][1]
    return f"{detail}: {base}" if detail else base


def log_line(path: str, hazard: HazardData) -> str:
    """One hazard as the command line and the hipify stage's log print it."""
    done = f"fixed [{hazard['rule']}] -> {hazard['fix']}" if hazard["applied"] else f"suggest: {hazard['fix']}"
    return f"  wavefront {path}:{hazard['line']}: {hazard['kind']}: {hazard['expression']}; {done}\n"

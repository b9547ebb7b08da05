"""The scan's first tier: a survey of a whole text for literal full masks and for triggers.

Literal full masks given to *_sync builtins (the commonest hazard) are found, and later fixed, from the
survey alone. A trigger is a position whose device function needs the token-level analysis because it
may hold a hazard that only data flow tells: ballots and bit counts, HIP's lane and wave-size spellings,
lane arithmetic (``% 32``, ``& 31``, ``/ 32``, ``>> 5``, ``== 31``), lane bits (``1 << ``), masks that
are not literals, an interesting constant, and in a file with shuffles the offset 16.

The survey is a handful of searches over the text, each a regex that starts with a literal (the regex
engine then jumps between occurrences; for short needles that is faster than ``str.find``), so that
most of the text is never looked at by Python code.
"""
from __future__ import annotations

import re
from typing import NamedTuple

from translator.textsearch import occurrences

_BUILTIN = re.compile(r"__(ballot|activemask|match_a|popc|ffs|clz|brev|lane_id|shfl|any_sync|all_sync|uni_sync"
                      r"|reduce_|syncwarp)")
_DEPTH_BUILTINS = frozenset({"ballot", "activemask", "match_a", "popc", "ffs", "clz", "brev", "lane_id"})
_SYNC_CALL = re.compile(r"\w*_sync\b|syncwarp\b")
_LITERAL_ARGUMENT = re.compile(r"\s*\(\s*(0[xX][fF]{8}[uU]?|~\s*0[uU]?|-\s*1)\s*[,)]")
_WIDE_LITERAL = re.compile(r"\s*\(\s*0[xX][fF]{16}")
_LEFT_SHIFT = re.compile("<<")
_RIGHT_SHIFT = re.compile(">>")
_SHIFTED_ONE = re.compile(r"(?<![\w.])[12][uU]?\s*$")
_SHIFT_FIVE = re.compile(r">>\s*\(?\s*5\b")
_THIRTY_ONE_OR_TWO = re.compile("3[12]")
_NEAR_32 = re.compile(r"[%/]\s*\(?\s*$")
_NEAR_31 = re.compile(r"(?:&\s*\(?\s*|==\s*)$")
_HEX_ONE = re.compile("0[xX]1")  # what any lane mask 0x1f starts with
_LANE_MASK_HEX = re.compile(r"0[xX]0*1[fF]\b")
_SIXTEEN = re.compile("16")
_SHUFFLE_BY_16 = re.compile(r"__shfl\w*\s*\((?:[^;()]|\([^;()]*\))*?,\s*16\s*[,)]")
_WARP_ARRAY = re.compile(r"\[3[23]\]")


class Survey(NamedTuple):
    triggers: list[int]  # positions that need the token-level analysis of their function, in order
    literal_masks: list[tuple[str, int, int]]  # (builtin, start, end) of literal full masks


def survey(text: str, names: frozenset[str], shuffle_macros: bool, warp_size: bool) -> Survey:
    """The survey of ``text``: ``names`` are the interesting constants it uses, ``shuffle_macros`` whether
    it defines macros that shuffle, ``warp_size`` whether it mentions ``warpSize``."""
    triggers, literal, shuffles = _builtins(text, shuffle_macros)
    for word in ("warpSize", *names) if warp_size else names:
        triggers += occurrences(text, word)
    triggers += [p for p in _starts(_LEFT_SHIFT, text) if text[p + 2:p + 3] != "<" and text[p - 1:p] != "<"
                 and _SHIFTED_ONE.search(text, max(0, p - 4), p)]
    triggers += [p for p in _starts(_RIGHT_SHIFT, text) if _SHIFT_FIVE.match(text, p)]
    for position in _starts(_THIRTY_ONE_OR_TWO, text):
        if word_char(text, position + 2):
            continue
        before = max(0, position - 4)
        if text[position + 1] == "2":
            if _NEAR_32.search(text, before, position):
                triggers.append(position)
        elif _NEAR_31.search(text, before, position) or shuffles and not word_char(text, position - 1):
            triggers.append(position)  # & 31, == 31, or lane 31
    if _HEX_ONE.search(text):
        triggers += _starts(_LANE_MASK_HEX, text)
    if shuffles and _SIXTEEN.search(text):  # an unrolled ladder: __shfl_xor_sync(m, v, 16)
        triggers += _starts(_SHUFFLE_BY_16, text)
    triggers += _starts(_WARP_ARRAY, text)  # a per-warp array, if a lane indexes it
    triggers.sort()
    return Survey(triggers, literal)


def _builtins(text: str, shuffle_macros: bool) -> tuple[list[int], list[tuple[str, int, int]], bool]:
    """Triggers and literal full masks among the warp builtins, and whether the text shuffles."""
    triggers: list[int] = []
    literal: list[tuple[str, int, int]] = []
    shuffles = shuffle_macros
    for match in _BUILTIN.finditer(text):
        kind, position = match.group(1), match.start()
        if position and (text[position - 1].isalnum() or text[position - 1] == "_"):
            continue  # my__popc: not the builtin
        if kind in _DEPTH_BUILTINS:
            triggers.append(position)
            continue
        shuffles = shuffles or kind == "shfl"
        if kind.endswith("_sync") or kind == "syncwarp":
            after = match.end(1)
        else:
            call = _SYNC_CALL.match(text, match.end(1))  # __shfl_down_sync, __reduce_add_sync
            if call is None:
                continue  # __shfl / __shfl_down: no mask
            after = call.end()
        argument = _LITERAL_ARGUMENT.match(text, after)
        if argument is not None:
            literal.append((text[position:after], argument.start(1), argument.end(1)))
        elif text.startswith("(", after) and _WIDE_LITERAL.match(text, after) is None \
                and not text.startswith("()", after):
            triggers.append(position)  # a mask that is not a literal: a variable, a macro, an expression
    return triggers, literal, shuffles


def _starts(pattern: re.Pattern[str], text: str) -> list[int]:
    return [match.start() for match in pattern.finditer(text)]


def word_char(text: str, position: int) -> bool:
    return 0 <= position < len(text) and (text[position].isalnum() or text[position] in "_.")

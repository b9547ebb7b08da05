"""Scan one source text for wavefront hazards (see ``translator.wavefront``)."""
from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Mapping
from typing import NamedTuple

from translator.literals import matching_paren, split_arguments
from translator.wavefront.body import LANE_NAME, WARP_COUNT_NAME, WARP_NAME, Body, is_identifier, span
from translator.wavefront.constants import (
    _DEFINE,
    DEFINE_ANY,
    INTERESTING,
    NO_FACTS,
    Constant,
    TreeFacts,
    collect,
    declarations,
    defines,
    evaluate,
)
from translator.wavefront.lanes import lane_hazards
from translator.wavefront.lexer import blank, token_texts, tokenize
from translator.wavefront.loops import loop_hazards
from translator.wavefront.masks import FULL_MASK_64, mask_hazards
from translator.wavefront.model import Edit, Hazard, why
from translator.wavefront.regions import (
    Region,
    _matching_brace,
    _not_code,
    block_comments,
    device_code_in,
    device_regions,
    qualifier_pattern,
    region_at,
)
from translator.wavefront.sizes import size_hazards

# Two tiers. Literal full masks given to *_sync builtins (the commonest hazard) are found and fixed from a
# survey of the text; the token-level analysis runs only on the device functions holding a trigger that
# needs data flow: ballots and bit counts, HIP's lane and wave-size spellings, lane arithmetic
# (``% 32``, ``& 31``, ``/ 32``, ``>> 5``, ``== 31``), lane bits (``1 << ``), masks that are not
# literals, an interesting constant, and in a file with shuffles the offset 16. The survey is a few
# substring searches and small regexes, each starting with a literal so the regex engine skips ahead.
_BUILTIN = re.compile(r"__(ballot|activemask|match_a|popc|ffs|clz|brev|lane_id|shfl|any_sync|all_sync|uni_sync"
                      r"|reduce_|syncwarp)")
_DEPTH_BUILTINS = frozenset({"ballot", "activemask", "match_a", "popc", "ffs", "clz", "brev", "lane_id"})
_SYNC_CALL = re.compile(r"\w*_sync\b|syncwarp\b")
_LITERAL_ARGUMENT = re.compile(r"\s*\(\s*(0[xX][fF]{8}[uU]?|~\s*0[uU]?|-\s*1)\s*[,)]")
_WIDE_LITERAL = re.compile(r"\s*\(\s*0[xX][fF]{16}")
_NEAR_32 = re.compile(r"[%/]\s*\(?\s*$")
_NEAR_31 = re.compile(r"(?:&\s*\(?\s*|==\s*)$")
_SHIFTED_ONE = re.compile(r"(?<![\w.])[12][uU]?\s*$")
_SHIFT_FIVE = re.compile(r">>\s*\(?\s*5\b")
_LANE_MASK_HEX = re.compile(r"0[xX]0*1[fF]\b")
_SHUFFLE_BY_16 = re.compile(r"__shfl\w*\s*\((?:[^;()]|\([^;()]*\))*?,\s*16\s*[,)]")
_LOOP = re.compile(r"for\s*\(\s*(?:[A-Za-z_][\w:]*\s+){0,3}([A-Za-z_]\w*)\s*=\s*([^;]{1,60}?)\s*;([^;]{0,80});([^;)]{1,60})\)")
_OFFSET_SHUFFLE = re.compile(r"__shfl_(?:down|up|xor)(_sync)?\s*\(")
_MASK_TRIGGER = re.compile(r"_sync\b|ballot|activemask|__popc|__ffs|__clz|__brev|<<")
_LANE_TRIGGER = re.compile(r"[%&/]|>>|==|__shfl")
_NOT_NAMES = frozenset({"__launch_bounds__", "__attribute__", "alignas", "decltype", "noexcept", "__declspec",
                        "__global__", "__device__", "__host__"})
_WARP_SIZE_TEXT = re.compile(r"\bwarpSize\b")


def scan_source(text: str, facts: TreeFacts = NO_FACTS) -> list[Hazard]:
    """Every hazard in ``text``'s device code, placed (line, column, expression), in text order.

    ``facts`` are what the rest of the tree defines (``TreeFacts.of`` the ``file_facts`` of each
    file); the file's own definitions are added to them. Comments and literals are blanked only inside
    the device functions that hold a trigger, so the cost follows the device code that needs a look.
    """
    device_macros = facts.device_macros
    if "__global__" not in text and "__device__" not in text and not (
            device_macros and device_code_in(text, device_macros)):
        return []
    own, macros = collect(text, facts.table)
    table: dict[str, Constant] = {**facts.table, **own} if facts.constants else own
    names = facts.interesting | {name for name, c in own.items() if c.value in INTERESTING or c.symbol == "warpSize"}
    names = frozenset(name for name in names if name in text)
    qualifiers = qualifier_pattern(frozenset({*macros, *device_macros}))
    macro_lines = defines(text, DEFINE_ANY) if "define" in text else []
    shufflers = frozenset(m.group(1).split("(")[0] for m in macro_lines if "(" in m.group(1) and "__shfl" in m.group(2))
    comments = block_comments(text)
    survey = _survey(text, names, bool(shufflers))
    regions = deep_regions(text, survey.triggers, qualifiers, comments)
    hazards: list[Hazard] = []
    for region in regions:
        hazards += _body_hazards(text, region, table, shufflers)
    hazards += _literal_masks(text, survey.literal_masks, regions, comments)
    if ("__shfl" in text or shufflers) and "for" in text:
        hazards += _shuffle_loops(text, table, shufflers, comments)
    hazards += _macro_hazards(macro_lines, text, table)
    hazards += _warp_count_constants(text, table)
    hazards += _file_scope_hazards(text, table, device_regions(text, qualifiers, comments) if "warpSize" in text
                                   else regions)
    return _placed(text, hazards)


class _Survey(NamedTuple):
    triggers: list[int]  # positions that need the token-level analysis of their function, in order
    literal_masks: list[tuple[str, int, int]]  # (builtin, start, end) of literal full masks


def _survey(text: str, names: frozenset[str], shuffle_macros: bool) -> _Survey:
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
    for word in ("warpSize", *names):
        triggers += _all(text, word)
    triggers += [p for p in _all(text, "<<") if text[p + 2:p + 3] != "<" and text[p - 1:p] != "<"
                 and _SHIFTED_ONE.search(text, max(0, p - 4), p)]
    triggers += [p for p in _all(text, ">>") if _SHIFT_FIVE.match(text, p)]
    triggers += [p for p in _all(text, "32") if not _word_char(text, p + 2) and _NEAR_32.search(text, max(0, p - 4), p)]
    triggers += [p for p in _all(text, "31") if not _word_char(text, p + 2) and (  # & 31, == 31, or lane 31
                 _NEAR_31.search(text, max(0, p - 4), p) or shuffles and not _word_char(text, p - 1))]
    if "0x1" in text or "0X1" in text:
        triggers += [m.start() for m in _LANE_MASK_HEX.finditer(text)]
    if shuffles and "16" in text:  # an unrolled ladder: __shfl_xor_sync(m, v, 16) (loops: _shuffle_loops)
        triggers += [m.start() for m in _SHUFFLE_BY_16.finditer(text)]
    triggers += _all(text, "[32]") + _all(text, "[33]")  # a per-warp array, if a lane indexes it
    triggers.sort()
    return _Survey(triggers, literal)


def _shuffle_loops(text: str, table: Mapping[str, Constant], shufflers: frozenset[str],
                   comments: list[tuple[int, int]]) -> list[Hazard]:
    """``for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(m, v, o)``, the commonest reduction, found
    without tokenizing its function (the token-level analysis finds the same loop, at the same offsets)."""
    found: list[Hazard] = []
    for match in _LOOP.finditer(text):
        start = match.start()
        if start and _word_char(text, start - 1):
            continue
        variable, init, condition, step = match.groups()
        if ">>" not in step and "/" not in step and "<<" not in step and "*" not in step and "+=" not in step:
            continue  # i++, i += stride: not a halving or doubling offset
        if _not_code(text, start, comments):
            continue
        fix = _loop_fix(variable, init, condition, step, table)
        if fix and _loop_shuffles_by(text, match.end(), variable, table, shufflers):
            where = (match.start(1), match.end(2))
            found.append(Hazard("reduction-offset-16", *where, why("reduction-offset-16"), fix))
    return found


def _loop_fix(variable: str, init: str, condition: str, step: str, table: Mapping[str, Constant]) -> str:
    step = "".join(step.split())
    halving = step in (f"{variable}>>=1", f"{variable}/=2", f"{variable}={variable}>>1", f"{variable}={variable}/2")
    doubling = not halving and step in (f"{variable}<<=1", f"{variable}*=2", f"{variable}+={variable}",
                                        f"{variable}={variable}<<1", f"{variable}={variable}*2")
    if not halving and not doubling:
        return ""  # decided by the step alone: the start is not evaluated (most loops end here)
    start = evaluate(token_texts(init), table)
    if start is None or start.symbol or start.value is None:
        return ""
    if start.value == 16 and halving:
        return f"start at warpSize / 2 ({variable} = warpSize / 2)"
    if start.value == 1 and doubling:
        tokens = token_texts(condition)
        limit = evaluate(tokens[2:], table) if len(tokens) > 2 and tokens[0] == variable else None
        if limit is not None and not limit.symbol and (tokens[1], limit.value) in (("<", 32), ("<=", 16)):
            return f"run while {variable} < warpSize"
    return ""


def _loop_shuffles_by(text: str, after: int, variable: str, table: Mapping[str, Constant],
                      shufflers: frozenset[str]) -> bool:
    """Whether the loop body after ``after`` shuffles by ``variable`` with no explicit width of 32 or less."""
    position = after
    while position < len(text) and text[position].isspace():
        position += 1
    end = _matching_brace(text, position) if text.startswith("{", position) else text.find(";", position)
    body = text[position:end if end >= 0 else len(text)]
    for name in shufflers:
        for call in re.finditer(rf"\b{re.escape(name)}\s*\(([^;]*)", body):
            if re.search(rf"\b{re.escape(variable)}\b", call.group(1)):
                return True
    for call in _OFFSET_SHUFFLE.finditer(body):
        close = matching_paren(body, call.end() - 1)
        if close is None:
            continue
        arguments = split_arguments(body[call.end():close])
        offset = 2 if call.group(1) else 1
        if len(arguments) <= offset or variable not in token_texts(arguments[offset]):
            continue
        if len(arguments) == offset + 1:
            return True
        width = evaluate(token_texts(arguments[offset + 1]), table)
        if width is not None and (bool(width.symbol) or (width.value or 0) > 32):
            return True
    return False


def _literal_masks(text: str, masks: list[tuple[str, int, int]], deep: list[Region],
                   comments: list[tuple[int, int]]) -> list[Hazard]:
    """``__shfl_down_sync(0xffffffff, ...)`` outside the functions analysed in depth: fixed as there."""
    found: list[Hazard] = []
    for name, start, end in masks:
        if any(r.open <= start <= r.close for r in deep) or _not_code(text, start, comments):
            continue
        found.append(Hazard("full-mask-32", start, end, why("full-mask-32", f"{name} given the full 32-lane mask"),
                            FULL_MASK_64, "wavefront.full-mask-64", (Edit(start, end, FULL_MASK_64),)))
    return found


def tokens_of(text: str, start: int, end: int) -> tuple[list[str], list[int]]:
    """Tokens of ``text[start:end]`` (comments and literals blanked), with offsets in ``text``."""
    piece = text[start:end]
    if "/" in piece or '"' in piece or "'" in piece:  # else there is no comment or literal to blank
        piece = blank(piece)
    texts, offsets = tokenize(piece)
    return texts, [offset + start for offset in offsets]


def file_facts(text: str) -> tuple[dict[str, Constant], frozenset[str]]:
    """The constants and device-qualifier macros a file defines, for the other files of its tree."""
    if "define" not in text and "const" not in text and "enum" not in text:
        return {}, frozenset()
    return collect(text)


def _word_char(text: str, position: int) -> bool:
    return 0 <= position < len(text) and (text[position].isalnum() or text[position] in "_.")


def _all(text: str, word: str) -> list[int]:
    found = []
    position = text.find(word)
    while position >= 0:
        found.append(position)
        position = text.find(word, position + len(word))
    return found


def deep_regions(text: str, triggers: list[int], qualifiers: re.Pattern[str],
                 comments: list[tuple[int, int]]) -> list[Region]:
    """The device functions holding a trigger, found from the triggers (not from every function)."""
    spans = [m.span() for m in qualifiers.finditer(text)]
    starts = [start for start, _ in spans]
    regions: list[Region] = []
    tried: dict[int, Region | None] = {}
    for position in triggers:
        if regions and regions[-1].open <= position <= regions[-1].close:
            continue
        index = bisect_right(starts, position) - 1
        while index >= 0:
            start, end = spans[index]
            if start not in tried:
                tried[start] = region_at(text, start, end, comments)
            region = tried[start]
            if region is not None and region.open <= position <= region.close:
                if not regions or regions[-1] != region:
                    regions.append(region)
                break
            if region is not None and region.close < position:
                break  # regions do not overlap: an earlier one cannot hold it either
            index -= 1
    return regions


def _body_hazards(text: str, region: Region, table: Mapping[str, Constant],
                  shufflers: frozenset[str]) -> list[Hazard]:
    head, _ = tokens_of(text, region.head, region.open)
    name, params = _signature(head)
    texts, offsets = tokens_of(text, region.open + 1, region.close)
    tile = any(head[k:k + 4] == ["thread_block_tile", "<", "32", ">"] for k in range(len(head) - 3))
    body = Body(texts, offsets, table, name, params, shufflers, tile)
    found: list[Hazard] = []
    if _MASK_TRIGGER.search(text, region.open, region.close):
        found += mask_hazards(body)
    if _LANE_TRIGGER.search(text, region.open, region.close):
        found += lane_hazards(body)
    if "__shfl" in text[region.open:region.close] or shufflers:
        found += loop_hazards(body)
    if "warpSize" in text[region.open:region.close] or any(table[t].symbol == "warpSize" for t in body.uses if t in table):
        found += size_hazards(body)
    return found


def _signature(head: list[str]) -> tuple[str, dict[str, tuple[str, ...]]]:
    """The function's name and its parameters' types, from the tokens before the body."""
    name, group = "", -1
    depth = 0
    for index, token in enumerate(head):
        if token == "(":
            if depth == 0 and index and (is_identifier(head[index - 1]) or head[index - 1] == "]"):
                before = head[index - 1]
                if before not in _NOT_NAMES:
                    name, group = before, index
                elif before in ("__device__", "__global__") and group < 0:
                    group = index  # a lambda: [=] __device__ (int i) { ... }
            depth += 1
        elif token == ")":
            depth -= 1
    params: dict[str, tuple[str, ...]] = {}
    if group < 0:
        return name, params
    depth = 0
    current: list[str] = []
    for token in head[group + 1:]:
        if token in ("(", "<", "["):
            depth += 1
        elif token in (")", ">", "]"):
            if depth == 0:
                break
            depth -= 1
        if token == "," and depth == 0:
            _add_param(params, current)
            current = []
        else:
            current.append(token)
    _add_param(params, current)
    return name, params


def _add_param(params: dict[str, tuple[str, ...]], tokens: list[str]) -> None:
    if "=" in tokens:
        tokens = tokens[:tokens.index("=")]
    if "[" in tokens:
        tokens = tokens[:tokens.index("[")]
    words = [t for t in tokens if is_identifier(t)]
    if len(words) >= 2:
        params[words[-1]] = tuple(words[:-1])


def _macro_hazards(macro_lines: list[re.Match[str]], blanked: str, table: Mapping[str, Constant]) -> list[Hazard]:
    """Masks of *_sync calls written in macro bodies (``#define SHFL(v, o) __shfl_down_sync(0xffffffff, v, o)``)."""
    found: list[Hazard] = []
    for match in macro_lines:
        value = match.group(2)
        if "_sync" in value or "popc" in value:
            texts, offsets = tokens_of(blanked, match.start(2), match.end(2))
            found += mask_hazards(Body(texts, offsets, table))
        name = match.group(1).split("(")[0]
        if (LANE_NAME.search(name) or WARP_NAME.search(name)) and ("threadIdx" in value or "thread_rank" in value):
            texts, offsets = tokens_of(blanked, match.start(2), match.end(2))  # #define LANE_ID (threadIdx.x & 31)
            body = Body([name, "=", *texts, ";"], [match.start(1)] * 2 + offsets + [match.end(2)], table)
            found += [h for h in lane_hazards(body) if h.kind in ("lane-id-32", "warp-id-32")]
    return found




def _warp_count_constants(blanked: str, table: Mapping[str, Constant]) -> list[Hazard]:
    """``#define NUM_WARPS (BLOCK / 32)``, ``constexpr int kWarps = kThreads / 32``: warps counted for 32 lanes."""
    found: list[Hazard] = []
    matches = defines(blanked) + declarations(blanked)
    for match in matches:
        name_group = 1 if match.re is _DEFINE else 2
        if not WARP_COUNT_NAME.search(match.group(name_group)):
            continue
        value_group = 2 if match.re is _DEFINE else 3
        texts, offsets = tokens_of(blanked, match.start(value_group), match.end(value_group))
        body = Body(texts, offsets, table)
        for index, token in enumerate(texts):
            value = body.right_value(index) if token in ("/", ">>") and index else None
            if value is None or value.symbol or (token, value.value) not in (("/", 32), (">>", 5)):
                continue
            left = body.left_operand(index)
            if any(table[t].symbol for t in texts[left:index] if t in table):
                continue
            found.append(Hazard("warp-id-32", *span(body, left, min(index + 2, body.n)),
                                why("warp-id-32", f"{match.group(name_group)} counts 32-lane warps"),
                                "divide by the wavefront size at run time (warpSize), or size for 64 lanes"))
            break
    return found


def _file_scope_hazards(blanked: str, table: Mapping[str, Constant], regions: list[Region]) -> list[Hazard]:
    found: list[Hazard] = []
    if "warpSize" not in blanked:
        return found
    comments = block_comments(blanked)
    for match in _WARP_SIZE_TEXT.finditer(blanked):
        position = match.start()
        if blanked[max(0, position - 2):position].rstrip().endswith((".", "->")):
            continue  # prop.warpSize: the host's device property
        if any(r.open <= position <= r.close for r in regions) or _not_code(blanked, position, comments):
            continue
        start = max(blanked.rfind(";", 0, position), blanked.rfind("}", 0, position), blanked.rfind("{", 0, position))
        end = blanked.find(";", position)
        texts, offsets = tokens_of(blanked, start + 1, len(blanked) if end < 0 else end + 1)
        found += size_hazards(Body(texts, offsets, table))
    return found


def _placed(text: str, hazards: list[Hazard]) -> list[Hazard]:
    if not hazards:
        return []
    unique: dict[tuple[str, int], Hazard] = {}
    for hazard in hazards:
        unique.setdefault((hazard.kind, hazard.start), hazard)
    placed: list[Hazard] = []
    line, counted = 1, 0
    for hazard in sorted(unique.values(), key=lambda h: (h.start, h.kind)):
        line += text.count("\n", counted, hazard.start)  # newlines counted once, in text order
        counted = hazard.start
        placed.append(hazard.placed(text, line))
    return placed

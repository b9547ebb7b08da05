"""Scan one source text for wavefront hazards (see ``translator.wavefront``)."""
from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Mapping

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
)
from translator.wavefront.lanes import lane_hazards
from translator.wavefront.lexer import blank, tokenize
from translator.wavefront.loops import loop_hazards
from translator.wavefront.masks import FULL_MASK_64, mask_hazards
from translator.wavefront.model import Edit, Hazard, why
from translator.wavefront.reductions import shuffle_loops
from translator.wavefront.regions import (
    Region,
    _not_code,
    block_comments,
    device_code_in,
    device_regions,
    qualifier_pattern,
    region_at,
)
from translator.wavefront.sizes import size_hazards
from translator.wavefront.survey import survey

_MASK_TRIGGER = re.compile(r"_sync\b|ballot|activemask|__popc|__ffs|__clz|__brev|<<")
_LANE_TRIGGER = re.compile(r"[%&/]|>>|==|__shfl")
_NOT_NAMES = frozenset({"__launch_bounds__", "__attribute__", "alignas", "decltype", "noexcept", "__declspec",
                        "__global__", "__device__", "__host__"})
_WARP_SIZE_TEXT = re.compile(r"\bwarpSize\b")


def scan_source(text: str, facts: TreeFacts = NO_FACTS) -> list[Hazard]:
    """Every hazard in ``text``'s device code, placed (line, column, expression), in text order.

    ``facts`` are what the rest of the tree defines (``TreeFacts.of`` the ``file_facts`` of each
    file); the file's own definitions are added to them. Two tiers: a survey of the text
    (``translator.wavefront.survey``) finds literal full masks and the common reduction loop
    (``translator.wavefront.reductions``) by itself, and names the device functions that need the
    token-level analysis; comments and literals are blanked only inside those, so the cost follows the
    device code that needs a look.
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
    warp_size = "warpSize" in text
    found = survey(text, names, bool(shufflers), warp_size)
    regions = deep_regions(text, found.triggers, qualifiers, comments)
    hazards: list[Hazard] = []
    for region in regions:
        hazards += _body_hazards(text, region, table, shufflers)
    hazards += _literal_masks(text, found.literal_masks, regions, comments)
    if ("__shfl" in text or shufflers) and "for" in text:
        hazards += shuffle_loops(text, table, shufflers, comments)
    hazards += _macro_hazards(macro_lines, text, table)
    hazards += _warp_count_constants(text, table)
    if warp_size:
        hazards += _file_scope_hazards(text, table, device_regions(text, qualifiers, comments), comments)
    return _placed(text, hazards)


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


def _file_scope_hazards(blanked: str, table: Mapping[str, Constant], regions: list[Region],
                        comments: list[tuple[int, int]]) -> list[Hazard]:
    """``warpSize`` used as a constant outside the device functions (``constexpr int kWarp = warpSize``)."""
    found: list[Hazard] = []
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

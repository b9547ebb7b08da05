"""Scan one source text for wavefront hazards (see ``translator.wavefront``)."""
from __future__ import annotations

import functools
import re
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
from translator.wavefront.masks import mask_hazards
from translator.wavefront.model import Hazard, why
from translator.wavefront.regions import (
    Region,
    _not_code,
    block_comments,
    device_code_in,
    device_regions,
    qualifier_pattern,
)
from translator.wavefront.sizes import size_hazards

# A body is tokenized only when it holds one of these (or a constant with an interesting value): the
# builtins, and the operator-constant pairs of lane arithmetic, so element-wise kernels cost one search.
_TRIGGER = (r"__shfl|ballot|activemask|_sync\b|__popc|__ffs|__clz|__brev|\bwarpSize\b"
            r"|[%/]\s*\(?\s*32\b|&\s*\(?\s*(?:31|0[xX]0*1[fF])\b|>>\s*\(?\s*5\b|==\s*31\b|\b[12][uU]?\s*<<"
            r"|\[\s*3[23]\s*\]|<\s*32\b|<=\s*16\b|=\s*16\b")
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
    trigger = _trigger(facts.interesting | {name for name, c in own.items()
                                            if c.value in INTERESTING or c.symbol == "warpSize"})
    regions = device_regions(text, qualifier_pattern(frozenset({*macros, *device_macros})))
    hazards: list[Hazard] = []
    macro_lines = defines(text, DEFINE_ANY) if "define" in text else []
    shufflers = frozenset(m.group(1).split("(")[0] for m in macro_lines if "(" in m.group(1) and "__shfl" in m.group(2))
    for region in regions:
        if trigger.search(text, region.open, region.close) is not None:
            hazards += _body_hazards(text, region, table, shufflers)
    hazards += _macro_hazards(macro_lines, text, table)
    hazards += _warp_count_constants(text, table)
    hazards += _file_scope_hazards(text, table, regions)
    return _placed(text, hazards)


def tokens_of(text: str, start: int, end: int) -> tuple[list[str], list[int]]:
    """Tokens of ``text[start:end]`` (comments and literals blanked), with offsets in ``text``."""
    texts, offsets = tokenize(blank(text[start:end]))
    return texts, [offset + start for offset in offsets]


def file_facts(text: str) -> tuple[dict[str, Constant], frozenset[str]]:
    """The constants and device-qualifier macros a file defines, for the other files of its tree."""
    if "define" not in text and "const" not in text and "enum" not in text:
        return {}, frozenset()
    return collect(text)


@functools.lru_cache(maxsize=64)
def _trigger(names: frozenset[str]) -> re.Pattern[str]:
    if not names:
        return re.compile(_TRIGGER)
    return re.compile(_TRIGGER + r"|\b(?:" + "|".join(map(re.escape, sorted(names))) + r")\b")


def _body_hazards(text: str, region: Region, table: Mapping[str, Constant],
                  shufflers: frozenset[str]) -> list[Hazard]:
    head, _ = tokens_of(text, region.head, region.open)
    name, params = _signature(head)
    texts, offsets = tokens_of(text, region.open + 1, region.close)
    body = Body(texts, offsets, table, name, params, shufflers)
    return mask_hazards(body) + lane_hazards(body) + loop_hazards(body) + size_hazards(body)


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
    matches = defines(blanked) if "define" in blanked else []
    if "const" in blanked:
        matches += declarations(blanked)
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
    newlines = [m.start() for m in re.finditer("\n", text)]
    unique: dict[tuple[str, int], Hazard] = {}
    for hazard in hazards:
        unique.setdefault((hazard.kind, hazard.start), hazard)
    return [h.placed(text, newlines) for h in sorted(unique.values(), key=lambda h: (h.start, h.kind))]

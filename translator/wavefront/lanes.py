"""Hazards of lane and warp arithmetic: lane ids (``% 32``, ``& 31``), warp ids and counts (``/ 32``,
``>> 5``) and per-warp arrays of 32 entries, told apart from tile and matrix arithmetic by what the
value is derived from and how it is used (a shuffle's source lane, a lane bit, a lane-0 guard)."""
from __future__ import annotations

import re

from translator.wavefront.body import (
    ANY_LANE,
    BALLOT,
    BLOCKDIM,
    LANE32,
    LANE_NAME,
    THREAD,
    THREAD_SOURCES,
    WARP32,
    WARP_COUNT_NAME,
    WARP_NAME,
    Body,
    Def,
    is_identifier,
    lane_operand,
    span,
    thread_name,
)
from translator.wavefront.constants import Constant
from translator.wavefront.lexer import int_literal
from translator.wavefront.model import Hazard, why

LANE_FIX = "__lane_id() (or threadIdx.x % warpSize)"
BLOCK_NAME = re.compile(r"(?i)block|threads|^n?tpb$|^kthreads")
_NO_VALUE = Constant(None, 32)
WARP_FIX = "threadIdx.x / warpSize"
ATOMICS = re.compile(r"^atomic[A-Z]\w*$")


RAW_WARP_BUILTINS = frozenset({"__shfl_sync", "__shfl_up_sync", "__shfl_down_sync", "__shfl_xor_sync", "__shfl",
                               "__shfl_up", "__shfl_down", "__shfl_xor", "__ballot_sync", "__ballot", "__activemask",
                               "__any_sync", "__all_sync", "__syncwarp", "__match_any_sync", "__match_all_sync"})


def tiles_of_32(body: Body) -> bool:
    """The function works on explicit 32-thread tiles (``tiled_partition<32>``, or a ``thread_block_tile<32>``
    parameter) and uses no raw warp builtin and no WMMA (whose fragments belong to a hardware wavefront): its
    ``/ 32`` and ``% 32`` are tile arithmetic, right on any wavefront (cooperative groups give 32 threads)."""
    tiles = body.tile_parameter or any(
        token in ("tiled_partition", "thread_block_tile") and body.t[index + 1:index + 4] == ["<", "32", ">"]
        for index, token in enumerate(body.t[:-3]))
    return tiles and not any(t in RAW_WARP_BUILTINS or t in body.shuffle_macros or t == "wmma" for t in body.t)


def lane_hazards(body: Body) -> list[Hazard]:
    found: list[Hazard] = []
    tiles = ("tiled_partition" in body.uses or body.tile_parameter) and tiles_of_32(body)
    for index, token in enumerate(body.t):
        if tiles:
            break
        if token in ("%", "&", "/", ">>") and index > 0 and _binary(body, index):
            hazard = _arithmetic(body, index)
            if hazard is not None:
                found.append(hazard)
        elif token in ("__shfl_sync", "__shfl") and index + 1 < body.n and body.t[index + 1] == "(":
            hazard = _last_lane_source(body, index)
            if hazard is not None:
                found.append(hazard)
        elif token == "==" and 0 < index < body.n - 1:
            hazard = _last_lane_test(body, index)
            if hazard is not None:
                found.append(hazard)
    for definition in body.defs:
        if definition.dims and definition.op == "decl":
            hazard = _per_warp_array(body, definition)
            if hazard is not None:
                found.append(hazard)
    return found


def _is_31(body: Body, start: int, end: int) -> bool:
    value = body.value(start, end)
    return value is not None and value.value == 31 and not value.symbol


def _last_lane_source(body: Body, index: int) -> Hazard | None:
    """``__shfl_sync(mask, v, 31)``: the last lane of a 32-lane warp (a wave64's last lane is 63)."""
    arguments = body.arguments(index + 1)
    position = 2 if body.t[index] == "__shfl_sync" else 1
    if len(arguments) <= position or not _is_31(body, *arguments[position]):
        return None
    width = arguments[position + 1] if len(arguments) > position + 1 else None
    if width is not None and not (body.value(*width) or _NO_VALUE).symbol:
        return None  # an explicit width: lane 31 of each segment of that width
    where = span(body, *arguments[position])
    return Hazard("lane-id-32", *where, why("lane-id-32", "lane 31 taken as the last lane"), "warpSize - 1")


def _last_lane_test(body: Body, index: int) -> Hazard | None:
    """``lane == 31`` (or ``lane == WARP_SIZE - 1``) on a lane: the last lane of a 32-lane warp."""
    left = body.left_operand(index)
    right_end = body.expression_end(index + 1)
    stop = next((k for k in range(index + 1, right_end) if body.t[k] in ("&&", "||", "?", ")")), right_end)
    if not _is_31(body, index + 1, stop) or not lane_operand(body, left, index):
        return None
    return Hazard("lane-id-32", *span(body, left, stop), why("lane-id-32", "lane 31 taken as the last lane"),
                  "lane == warpSize - 1")


def _binary(body: Body, index: int) -> bool:
    before = body.t[index - 1]
    return is_identifier(before) or before[:1].isdigit() or before in (")", "]")


def _arithmetic(body: Body, index: int) -> Hazard | None:
    flags = body.op_taint(index)
    op = body.t[index]
    end = index + 2 if index + 1 < body.n and body.t[index + 1] != "(" else body.skip(index + 1)
    start = body.left_operand(index)
    where = span(body, start, end)
    if flags & LANE32:
        if _lane_evidence(body, index, start):
            return Hazard("lane-id-32", *where, why("lane-id-32"), LANE_FIX)
        return None
    if flags & WARP32:
        if _warp_evidence(body, index, start):
            return Hazard("warp-id-32", *where, why("warp-id-32"), WARP_FIX)
        return None
    if op in ("/", ">>") and _warp_count(body, index, start):
        return Hazard("warp-id-32", *where, why("warp-id-32", "warp count for 32-lane warps"),
                      "blockDim.x / warpSize (or (blockDim.x + warpSize - 1) / warpSize)")
    return None


def destination(body: Body, index: int) -> tuple[str, Def | None]:
    """The variable the value at ``index`` is stored in (or "return" when it is returned)."""
    for definition in body.defs:
        if definition.init_start <= index < definition.init_end:
            return definition.name, definition
    start = body.statement_start(index)
    if start < body.n and body.t[start] == "return":
        return "return", None
    return "", None


def _lane_evidence(body: Body, index: int, start: int) -> bool:
    name, definition = destination(body, index)
    if name == "return":
        return bool(LANE_NAME.search(body.name))
    if definition is not None:
        if LANE_NAME.search(name):
            return True
        if _column_like(name) or _starts_after(body, definition, start) or _continues(body, index, definition.init_end):
            return False
        return any(_lane_use(body, use) for use in body.uses.get(name, []) if use != definition.at)
    if not any(t in THREAD_SOURCES or thread_name(t) or LANE_NAME.search(t) for t in body.t[start:index]
               if is_identifier(t)):
        return False  # inline, on a data index (``bit & 31``): not a lane
    return _lane_use(body, start, inline_end=_operand_end(body, index))


def _starts_after(body: Body, definition: Def, start: int) -> bool:
    """Whether the stored value begins before the operand at ``start`` (``base + tid % 32``), parentheses aside."""
    lead = definition.init_start
    while lead < start and body.t[lead] == "(":
        lead += 1
    return lead < start


def _continues(body: Body, index: int, end: int) -> bool:
    """Whether the value at ``index`` is only part of the stored expression (``base + tid % 32 * 4``)."""
    after = _operand_end(body, index)
    while after < end and body.t[after] == ")":
        after += 1
    return after < end


def _operand_end(body: Body, index: int) -> int:
    return index + 2 if index + 1 < body.n and body.t[index + 1] != "(" else body.skip(index + 1)


def _lane_use(body: Body, index: int, inline_end: int | None = None) -> bool:
    """Whether the value at ``index`` is used as a lane: a shuffle's source, a lane bit, a lane-0 guard."""
    function, argument = body.call_at(index)
    if function in ("__shfl_sync",) and argument == 2 or function == "__shfl" and argument == 1:
        return True
    before = body.t[index - 1] if index else ""
    if before == "<<" and index >= 2 and int_literal(body.t[index - 2]) is not None:
        return True
    if before == ">>" and index >= 2 and body.expression_taint(body.left_operand(index - 1), index - 1) & BALLOT:
        return True
    end = inline_end if inline_end is not None else index + 1
    while end < body.n and body.t[end] == ")":
        end += 1
    if end < body.n and body.t[end] in ("==", "!=") and \
            body.expression_taint(end + 1, body.expression_end(end + 1)) & BALLOT:
        return True  # lane == __ffs(ballot) - 1: the lane compared with a ballot's lane
    return _compared_to_zero(body, index, end) and (body.has_warp_ops or _has_atomics(body))


def _compared_to_zero(body: Body, start: int, end: int) -> bool:
    after = body.t[end:end + 2]
    before = body.t[max(0, start - 2):start]
    return after in (["==", "0"], ["==", "31"]) or before == ["0", "=="] or (start > 0 and body.t[start - 1] == "!")


def _has_atomics(body: Body) -> bool:
    return any(ATOMICS.match(token) for token in body.t)


def _column_like(name: str) -> bool:
    return re.search(r"(?i)col|column|^c$|^x$|^tx$|^j$|^k$|^bx$|^cx$|^ix$|row|^r$|^y$|^ty$|^i$|bank|offset$", name) \
        is not None and not LANE_NAME.search(name)


def _warp_evidence(body: Body, index: int, start: int) -> bool:
    name, definition = destination(body, index)
    if name == "return":
        return bool(WARP_NAME.search(body.name))
    if definition is not None:
        if LANE_NAME.search(name) or _column_like(name):
            return False
        if _continues(body, index, definition.init_end) or _starts_after(body, definition, start):
            others = body.t[definition.init_start:start] + body.t[_operand_end(body, index):definition.init_end]
            return any(WARP_COUNT_NAME.search(t) for t in others if is_identifier(t))  # block * warps + tid / 32
        if WARP_NAME.search(name):
            return True
        uses = [use for use in body.uses.get(name, []) if use != definition.at]
        return body.has_warp_ops and any(_warp_use(body, use) for use in uses)
    return body.has_warp_ops and _warp_use(body, start, _operand_end(body, index))


def _warp_use(body: Body, index: int, end: int | None = None) -> bool:
    """A warp id indexes a shared array or guards warp 0's work."""
    end = end if end is not None else index + 1
    opening = index - 1
    if opening >= 0 and body.t[opening] == "[" and body.match.get(opening, -1) == end:
        array = body.t[opening - 1] if opening else ""
        return array in body.shared_arrays
    while end < body.n and body.t[end] == ")":
        end += 1
    return _compared_to_zero(body, index, end)


def _warp_count(body: Body, index: int, start: int) -> bool:
    """``blockDim.x / 32`` (or ``(blockDim.x + 31) / 32``) as a number of warps."""
    value = body.right_value(index)
    if value is None or value.symbol or (body.t[index], value.value) not in (("/", 32), (">>", 5)):
        return False
    flags = body.expression_taint(start, index)
    block_constant = any(BLOCK_NAME.search(t) for t in body.t[start:index] if is_identifier(t))
    if not (flags & BLOCKDIM or block_constant) or flags & THREAD:
        return False
    name, definition = destination(body, index)
    if definition is not None and (WARP_COUNT_NAME.search(name) or WARP_NAME.search(name)):
        return True
    if flags & BLOCKDIM and not _column_like(name) and not re.search(r"(?i)tile|chunk|vec", name):
        return True  # blockDim.x / 32 is the number of 32-lane warps in a block
    before = body.t[start - 1] if start else ""
    if before in ("<", "<="):
        left = body.left_operand(start - 1)
        function, _ = body.call_at(index)
        in_loop = function == "for" or body.enclosing[index] > 0 and body.t[body.enclosing[index] - 1] == "for"
        return in_loop and body.has_warp_ops or bool(body.expression_taint(left, start - 1) & (THREAD | ANY_LANE)) \
            or any(body.lane_like(token) for token in body.t[left:start - 1] if is_identifier(token))
    return False


def _per_warp_array(body: Body, definition: Def) -> Hazard | None:
    """An array with a dimension of 32 indexed by lane (unguarded) in that dimension."""
    sized = [k for k, (a, b) in enumerate(definition.dims) if _lane_sized(body, a, b)]
    if not sized:
        return None
    for use in body.uses.get(definition.name, []):
        if use == definition.at:
            continue
        cursor = use + 1
        dimension = 0
        while cursor < body.n and body.t[cursor] == "[":
            close = body.match.get(cursor, cursor)
            if dimension in sized and _lane_index(body, cursor + 1, close) and not _guarded(body, use):
                where = span(body, definition.at, definition.dims[-1][1] + 1)
                return Hazard("warp-array-32", *where, why("warp-array-32", f"{definition.name} has 32 entries "
                              f"per warp and is indexed by lane"), "size it for 64 lanes (the largest wavefront)")
            dimension += 1
            cursor = close + 1
    return None


def _lane_sized(body: Body, start: int, end: int) -> bool:
    """32 entries, or 33 (32 padded by one against bank conflicts)."""
    value = body.value(start, end)
    return value is not None and value.value in (32, 33) and not value.symbol


def _lane_index(body: Body, start: int, end: int) -> bool:
    return lane_operand(body, start, end)


def _guarded(body: Body, index: int) -> bool:
    """Inside ``cond ? a[lane] : 0`` or ``if (lane < n)``: the index is bounded by the condition."""
    start = body.statement_start(index)
    statement = body.t[start:index]
    if "?" in statement and any(token in ("<", "<=") for token in statement[:statement.index("?")]):
        return True
    control = start - 1
    if control >= 0 and body.t[control] == "{":
        control -= 1
    if control >= 0 and body.t[control] == ")":
        opening = body.match.get(control, control)
        if opening > 0 and body.t[opening - 1] in ("if", "while"):
            return any(token in ("<", "<=") for token in body.t[opening:control])
    return False

"""Warp reductions and scans written for 32 lanes: shuffle loops that start at offset 16 (or stop below
32), and unrolled shuffle ladders 16, 8, 4, 2, 1 with no step at 32."""
from __future__ import annotations

from translator.wavefront.body import Body, is_identifier, span
from translator.wavefront.lexer import int_literal
from translator.wavefront.model import Hazard, why

OFFSET_SHUFFLES = {"__shfl_down_sync": 2, "__shfl_xor_sync": 2, "__shfl_up_sync": 2, "__shfl_down": 1,
                   "__shfl_xor": 1, "__shfl_up": 1}


def loop_hazards(body: Body) -> list[Hazard]:
    found: list[Hazard] = []
    for index, token in enumerate(body.t):
        if token == "for" and index + 1 < body.n and body.t[index + 1] == "(":
            hazard = _shuffle_loop(body, index + 1)
            if hazard is not None:
                found.append(hazard)
    found += _unrolled(body)
    return found


def _parts(body: Body, opening: int) -> list[tuple[int, int]]:
    close = body.match.get(opening, body.n)
    parts: list[tuple[int, int]] = []
    start = index = opening + 1
    while index < close:
        if body.t[index] == ";":
            parts.append((start, index))
            start = index + 1
            index += 1
        else:
            index = body.skip(index)
    parts.append((start, close))
    return parts


def _shuffle_loop(body: Body, opening: int) -> Hazard | None:
    parts = _parts(body, opening)
    if len(parts) != 3:
        return None
    (init_a, init_b), (cond_a, cond_b), (step_a, step_b) = parts
    definition = next((d for d in body.defs if init_a <= d.at < init_b and d.init_end > d.init_start), None)
    if definition is None:
        return None
    variable = definition.name
    start = body.value(definition.init_start, definition.init_end)
    if start is None or start.symbol or start.value is None:
        return None
    step = body.t[step_a:step_b]
    halving = step in ([variable, ">>=", "1"], [variable, "/=", "2"]) or step[:2] == [variable, "="] and step[-2:] in (
        [">>", "1"], ["/", "2"])
    doubling = step in ([variable, "<<=", "1"], [variable, "*=", "2"], [variable, "+=", variable]) \
        or step[:2] == [variable, "="] and step[-2:] in (["<<", "1"], ["*", "2"])
    if halving and start.value == 16:
        fix = f"start at warpSize / 2 ({variable} = warpSize / 2)"
    elif doubling and start.value == 1 and _stops_at_32(body, variable, cond_a, cond_b):
        fix = f"run while {variable} < warpSize"
    else:
        return None
    close = body.match.get(opening, body.n)
    loop_end = body.skip(close + 1) if close + 1 < body.n and body.t[close + 1] == "{" \
        else body.expression_end(close + 1)
    if not _shuffles_by(body, variable, close + 1, loop_end):
        return None
    where = span(body, definition.at, definition.init_end)
    return Hazard("reduction-offset-16", *where, why("reduction-offset-16"), fix)


def _stops_at_32(body: Body, variable: str, start: int, end: int) -> bool:
    condition = body.t[start:end]
    if len(condition) < 3 or condition[0] != variable:
        return False
    limit = body.value(start + 2, end)
    return limit is not None and not limit.symbol and (condition[1], limit.value) in (("<", 32), ("<=", 16))


def _shuffles_by(body: Body, variable: str, start: int, end: int) -> bool:
    """A raw shuffle in [start, end) whose offset uses ``variable`` and that has no explicit width."""
    for index in range(start, min(end, body.n - 1)):
        if body.t[index] in body.shuffle_macros and body.t[index + 1] == "(" and \
                variable in body.t[index + 2:body.match.get(index + 1, index + 1)]:
            return True  # a macro that shuffles (#define SHFL_DOWN(v, o) __shfl_down_sync(...))
        position = OFFSET_SHUFFLES.get(body.t[index])
        if position is None or body.t[index + 1] != "(":
            continue
        arguments = body.arguments(index + 1)
        if len(arguments) > position and variable in body.t[slice(*arguments[position])] \
                and _no_narrow_width(body, arguments, position):
            return True
    return False


def _no_narrow_width(body: Body, arguments: list[tuple[int, int]], position: int) -> bool:
    if len(arguments) <= position + 1:
        return True
    width = body.value(*arguments[position + 1])
    return width is not None and (bool(width.symbol) or (width.value or 0) > 32)


def _unrolled(body: Body) -> list[Hazard]:
    offsets: dict[int, list[int]] = {}
    for index in range(body.n - 1):
        position = OFFSET_SHUFFLES.get(body.t[index])
        if position is None or body.t[index + 1] != "(":
            continue
        arguments = body.arguments(index + 1)
        if len(arguments) <= position or not _no_narrow_width(body, arguments, position):
            continue
        a, b = arguments[position]
        value = body.value(a, b)
        if value is not None and value.value is not None and not value.symbol:
            offsets.setdefault(value.value, []).append(index)
        elif b - a == 1 and is_identifier(body.t[a]) and int_literal(body.t[a]) is None:
            offsets.setdefault(-1, []).append(index)  # an offset variable: the loop check decides
    if 16 not in offsets or 32 in offsets or 8 not in offsets:
        return []
    return [Hazard("reduction-offset-16", *span(body, index, body.match.get(index + 1, index + 1) + 1),
                   why("reduction-offset-16", "unrolled shuffles from offset 16"),
                   "add a step at offset 32 first when warpSize is 64 (if (warpSize > 32) ...)")
            for index in offsets[16]]

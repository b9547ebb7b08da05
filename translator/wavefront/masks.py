"""Hazards of lane masks: 32-bit masks given to *_sync builtins, ballots kept in 32 bits, ballots
counted with 32-bit bit functions, and lane bits built with 32-bit shifts."""
from __future__ import annotations

from translator.wavefront.body import BALLOT, BALLOT_CALLS, Body, Def, is_identifier, lane_operand, span
from translator.wavefront.lexer import int_literal
from translator.wavefront.model import Edit, Hazard, why

FULL_MASK_64 = "0xffffffffffffffffull"
WIDE = "unsigned long long"
SYNC_BUILTINS = frozenset({"__shfl_sync", "__shfl_up_sync", "__shfl_down_sync", "__shfl_xor_sync", "__ballot_sync",
                           "__any_sync", "__all_sync", "__uni_sync", "__match_any_sync", "__match_all_sync",
                           "__syncwarp", "__reduce_add_sync", "__reduce_min_sync", "__reduce_max_sync",
                           "__reduce_and_sync", "__reduce_or_sync", "__reduce_xor_sync"})
BIT_FUNCTIONS = {"__popc": "__popcll", "__ffs": "__ffsll"}
OTHER_BIT_FUNCTIONS = {"__clz": "__clzll (and 63 - instead of 31 -)", "__brev": "__brevll (and shift by 64)",
                       "__fns32": "__fns64", "__fns": "__fns64"}


def mask_hazards(body: Body) -> list[Hazard]:
    found: list[Hazard] = []
    for index, token in enumerate(body.t):
        call = index + 1 < body.n and body.t[index + 1] == "("
        if call and token in SYNC_BUILTINS:
            found += _sync_mask(body, index)
        elif call and (token in BIT_FUNCTIONS or token in OTHER_BIT_FUNCTIONS):
            found += _bit_function(body, index)
        elif token == "<<" and index > 0:
            found += _lane_shift(body, index)
    for definition in body.defs:
        found += _ballot_store(body, definition)
    return found


def full_mask_value(body: Body, start: int, end: int) -> tuple[int, int] | None:
    """(value, bits) of a constant mask argument, None when it is not a constant."""
    value = body.value(start, end)
    if value is None or value.value is None or value.symbol:
        return None
    return value.value & 0xFFFFFFFFFFFFFFFF, value.bits


def _sync_mask(body: Body, index: int) -> list[Hazard]:
    arguments = body.arguments(index + 1)
    if not arguments or arguments[0][0] >= arguments[0][1]:
        return []
    start, end = arguments[0]
    where = span(body, start, end)
    name = body.t[index]
    constant = full_mask_value(body, start, end)
    if constant is not None:
        value, bits = constant
        if value in (0xFFFFFFFF, 0xFFFFFFFFFFFFFFFF) and bits == 32 or value == 0xFFFFFFFF:
            return [Hazard("full-mask-32", *where, why("full-mask-32", f"{name} given the full 32-lane mask"),
                           FULL_MASK_64, "wavefront.full-mask-64", (Edit(*where, FULL_MASK_64),))]
        if bits == 32:
            return [Hazard("full-mask-32", *where, why("full-mask-32", f"{name} given a 32-bit mask"),
                           f"write it as a 64-bit value ({value:#x}ull) and check which lanes it must name "
                           "on a 64-lane wavefront")]
        return []
    if end - start == 1 and is_identifier(body.t[start]):
        return _mask_variable(body, index, start)
    return []


def _mask_variable(body: Body, call: int, argument: int) -> list[Hazard]:
    name = body.t[argument]
    if name in body.param_types and name not in body.defs_of:
        words = [w for w in body.param_types[name] if w not in ("const", "volatile")]
        if words and all(w in ("unsigned", "int", "uint32_t", "uint") for w in words):
            where = span(body, argument, argument + 1)
            return [Hazard("full-mask-32", *where, why("full-mask-32", f"mask parameter {name} is "
                                                       f"{' '.join(words)}"),
                           f"declare the parameter {name} of {body.name or 'this function'} as {WIDE}")]
        return []
    definitions = body.defs_of.get(name, [])
    if len(definitions) != 1 or definitions[0].op != "decl" or body.taint.get(name, 0) & BALLOT:
        return []
    definition = definitions[0]
    if not body.is_32bit_int(definition.type_start, definition.type_end):
        return []
    constant = full_mask_value(body, definition.init_start, definition.init_end) \
        if definition.init_end > definition.init_start else None
    if constant is None or constant[0] != 0xFFFFFFFF:
        return []
    where = span(body, argument, argument + 1)  # reported where the mask is used, fixed where it is set
    only_masks = all(_is_sync_mask_use(body, use) for use in body.uses.get(name, []) if use != definition.at)
    kind_why = why("full-mask-32", f"{name} holds the full 32-lane mask and is given to {body.t[call]}")
    type_span = _integer_type_span(body, definition)
    if only_masks and definition.alone and type_span is not None:
        edits = (Edit(*type_span, WIDE), Edit(*span(body, definition.init_start, definition.init_end), FULL_MASK_64))
        return [Hazard("full-mask-32", *where, kind_why, f"{WIDE} {name} = {FULL_MASK_64}",
                       "wavefront.full-mask-64", edits)]
    return [Hazard("full-mask-32", *where, kind_why, f"declare {name} as {WIDE} = {FULL_MASK_64}")]


def _is_sync_mask_use(body: Body, index: int) -> bool:
    function, argument = body.call_at(index)
    return function in SYNC_BUILTINS and argument == 0


def _integer_type_span(body: Body, definition: Def) -> tuple[int, int] | None:
    """Offsets of the integer type words of a declaration (qualifiers such as const stay)."""
    words = [k for k in range(definition.type_start, definition.type_end) if body.t[k] not in
             ("const", "volatile", "static", "register", "__shared__")]
    if not words or words != list(range(words[0], words[-1] + 1)):
        return None
    return span(body, words[0], words[-1] + 1)


def _ballot_store(body: Body, definition: Def) -> list[Hazard]:
    if definition.init_end <= definition.init_start or definition.op not in ("decl", "="):
        return []
    tokens = body.t[definition.init_start:definition.init_end]
    stored = [k for k in range(definition.init_start, definition.init_end) if body.t[k] in BALLOT_CALLS
              and body.enclosing[k] == body.enclosing[definition.init_start]]
    if not stored and not (body.t[definition.init_start] == "(" and any(
            body.t[k] in BALLOT_CALLS and body.enclosing[k] == definition.init_start
            for k in range(definition.init_start, definition.init_end))):
        return []  # the ballot goes through a function first (__popc(__ballot_sync(...)))
    declaration = definition if definition.op == "decl" else next(
        (d for d in body.defs_of.get(definition.name, []) if d.op == "decl"), None)
    if declaration is None or not body.is_32bit_int(declaration.type_start, declaration.type_end) or declaration.dims:
        return []
    where = span(body, definition.at, definition.init_end)
    kind_why = why("ballot-32bit", f"{definition.name} keeps a ballot in "
                   f"{' '.join(body.t[declaration.type_start:declaration.type_end])}")
    single_call = tokens[0] in BALLOT_CALLS and body.skip(definition.init_start + 1) == definition.init_end
    type_span = _integer_type_span(body, declaration)
    if definition.op == "decl" and single_call and definition.alone and type_span is not None:
        return [Hazard("ballot-32bit", *where, kind_why, f"{WIDE} {definition.name}", "wavefront.widen-ballot",
                       (Edit(*type_span, WIDE),))]
    return [Hazard("ballot-32bit", *where, kind_why, f"declare {definition.name} as {WIDE}")]


def _bit_function(body: Body, index: int) -> list[Hazard]:
    arguments = body.arguments(index + 1)
    if len(arguments) != 1:
        return []
    start, end = arguments[0]
    if not body.expression_taint(start, end) & BALLOT:
        return []
    name = body.t[index]
    where = span(body, index, body.match.get(index + 1, end) + 1)
    detail = f"{name} of a ballot"
    if name in BIT_FUNCTIONS:
        wide = BIT_FUNCTIONS[name]
        return [Hazard("popc-ballot", *where, why("popc-ballot", detail), wide, "wavefront.popcll-ballot",
                       (Edit(*span(body, index, index + 1), wide),))]
    return [Hazard("popc-ballot", *where, why("popc-ballot", detail), f"use {OTHER_BIT_FUNCTIONS[name]}")]


def _lane_shift(body: Body, index: int) -> list[Hazard]:
    """``1 << lane`` / ``1u << lane``: a lane bit in 32 bits."""
    left = body.t[index - 1]
    literal = int_literal(left)
    if literal is None or literal not in ((1, 32), (2, 32)) or index >= 2 and body.t[index - 2] in (".", "->", "::"):
        return []
    start = index + 1
    if start >= body.n:
        return []
    end = body.skip(start) if body.t[start] == "(" else start + 1
    while end < body.n and body.t[end] in (".", "->") and end + 1 < body.n:
        end += 2
    if end < body.n and body.t[end] == "(":
        end = body.skip(end)
    if not lane_operand(body, start, end):
        return []
    where = span(body, index - 1, end)
    operand = " ".join(body.t[start:end])
    return [Hazard("lane-mask-32", *where, why("lane-mask-32", f"{left} << {operand}"), f"1ull << {operand}")]

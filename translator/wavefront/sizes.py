"""``warpSize`` (or a macro or constant defined as ``warpSize``) where C++ needs a constant: array bounds,
template arguments, ``constexpr`` values, ``static_assert``, ``case`` labels, ``alignas``."""
from __future__ import annotations

from translator.wavefront.body import Body, is_identifier, span
from translator.wavefront.model import Hazard, why

CONSTANT_CONTEXTS = frozenset({"constexpr", "static_assert", "case", "alignas", "enum", "__launch_bounds__"})
FIX = ("a constant: 64 (the largest wavefront) for sizes, or a template parameter chosen per target; "
       "warpSize only at run time")


def size_hazards(body: Body) -> list[Hazard]:
    found: list[Hazard] = []
    for index, token in enumerate(body.t):
        if not _is_warp_size(body, token):
            continue
        context = _constant_context(body, index)
        if context:
            name = token if token == "warpSize" else f"{token} (defined as warpSize)"
            found.append(Hazard("warpsize-constexpr", *span(body, index, index + 1),
                                why("warpsize-constexpr", f"{name} in {context}"), FIX))
    return found


def _is_warp_size(body: Body, token: str) -> bool:
    if token == "warpSize":
        return True
    constant = body.constants.get(token)
    return constant is not None and constant.symbol == "warpSize" and is_identifier(token)


def _constant_context(body: Body, index: int) -> str:
    for definition in body.defs:
        if any(a <= index < b for a, b in definition.dims) and definition.op == "decl":
            return f"the size of {definition.name}"
    start = body.statement_start(index)
    words = set(body.t[start:index])
    function, _ = body.call_at(index)
    if function in CONSTANT_CONTEXTS:
        return function
    hit = words & CONSTANT_CONTEXTS
    if hit:
        return sorted(hit)[0]
    if _in_template_arguments(body, index, start):
        return "a template argument"
    return ""


def _in_template_arguments(body: Body, index: int, start: int) -> bool:
    """``name<..., warpSize, ...>`` followed by ``(``, ``::``, a name or ``{``."""
    opening = index - 1
    while opening >= start and body.t[opening] not in ("<", ";", "{", "}", "(", "&&", "||", "?"):
        opening -= 1
    if opening < 1 or body.t[opening] != "<" or not is_identifier(body.t[opening - 1]):
        return False
    close = index + 1
    while close < body.n and body.t[close] not in (">", ";", "{", "}", ")", "&&", "||", "?", "<"):
        close = body.skip(close) if body.t[close] == "(" else close + 1
    return close + 1 < body.n and body.t[close] == ">" and (
        body.t[close + 1] in ("(", "::", "{", ">", ",") or is_identifier(body.t[close + 1]))

"""Inline PTX: the common idioms become HIP builtins; every other ``asm`` statement is inventoried.

An ``asm("template" : outputs : inputs : clobbers)`` statement is parsed textually (its string pieces
joined, ``%%`` read as ``%``); a template matching one of ``IDIOMS`` with one ``=`` output becomes
``output = expression``, its ``%1``... replaced by the input expressions. Nothing is passed through
silently: an ``asm`` that is not rewritten is listed with its line and first instruction.
"""
from __future__ import annotations

import re
from collections.abc import Callable

from translator.literals import matching_paren, split_arguments
from translator.rewrites.code import CodeMap
from translator.rewrites.context import RewriteContext

ASM = re.compile(r"\b(?:asm|__asm__|__asm)\b(?:\s+(?:volatile|__volatile__|goto|inline))*\s*\(")
STRING = re.compile(r'"((?:\\.|[^"\\\n])*)"')
OPERAND = re.compile(r'^\s*"([^"]*)"\s*\((.*)\)\s*$', re.DOTALL)
LANE = "__lane_id()"
LINEAR_THREAD = "(threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z))"
SPECIAL = {
    "laneid": (LANE, ""),
    "warpid": (f"({LINEAR_THREAD} / warpSize)", "%warpid read as the wave's index in the block"),
    "smid": ("__smid()", "%smid read as the compute unit's id"),
    "clock": ("(unsigned int)clock64()", ""),
    "clock64": ("clock64()", ""),
    "globaltimer": ("(wall_clock64() * 10)", "nanoseconds from the 100 MHz wall clock"),
    "globaltimer_lo": ("(unsigned int)(wall_clock64() * 10)", "nanoseconds from the 100 MHz wall clock"),
    "lanemask_eq": ("(1ull << __lane_id())", "a 64-bit lane mask"),
    "lanemask_lt": ("((1ull << __lane_id()) - 1)", "a 64-bit lane mask"),
    "lanemask_le": ("((2ull << __lane_id()) - 1)", "a 64-bit lane mask"),
    "lanemask_gt": ("(~((2ull << __lane_id()) - 1))", "a 64-bit lane mask"),
    "lanemask_ge": ("(~((1ull << __lane_id()) - 1))", "a 64-bit lane mask"),
}
for axis in "xyz":
    SPECIAL[f"tid.{axis}"] = (f"threadIdx.{axis}", "")
    SPECIAL[f"ntid.{axis}"] = (f"blockDim.{axis}", "")
    SPECIAL[f"ctaid.{axis}"] = (f"blockIdx.{axis}", "")
    SPECIAL[f"nctaid.{axis}"] = (f"gridDim.{axis}", "")

Rewrite = Callable[[re.Match[str], list[str]], "tuple[str, str] | None"]


def _special(match: re.Match[str], inputs: list[str]) -> tuple[str, str] | None:
    found = SPECIAL.get(match.group(1))
    return None if found is None else found


def _bfe(match: re.Match[str], inputs: list[str]) -> tuple[str, str] | None:
    x, pos, length = inputs[:3]
    if match.group(1) == "u32":
        return f"__bitextract_u32({x}, {pos}, {length})", ""
    if match.group(1) == "u64":
        return f"__bitextract_u64({x}, {pos}, {length})", ""
    bits = "32" if match.group(1) == "s32" else "64"
    kind = "int" if bits == "32" else "long long"
    unsigned = "unsigned int" if bits == "32" else "unsigned long long"
    expression = (f"(({length}) == 0 ? ({kind})0 : ({kind})(({unsigned})({x}) << ({bits} - ({pos}) - ({length}))) "
                  f">> ({bits} - ({length})))")
    return expression, "signed field extract by shifts"


def _lop3(match: re.Match[str], inputs: list[str]) -> tuple[str, str] | None:
    table = int(match.group(1), 0) & 0xFF
    a, b, c = (f"({value})" for value in inputs[:3])
    terms = []
    for index in range(8):
        if table >> index & 1:
            terms.append(" & ".join(f"{'' if index >> bit & 1 else '~'}{name}"
                                    for bit, name in ((2, a), (1, b), (0, c))))
    if not terms:
        return "0u", "lop3 with an empty truth table"
    return "(" + " | ".join(f"({t})" for t in terms) + ")", f"lop3 truth table 0x{table:02X} as and/or/not"


IDIOMS: list[tuple[re.Pattern[str], Rewrite, str]] = [
    (re.compile(r"mov\.[ubs](?:32|64) %0, %([a-z]\w*(?:\.[xyz])?)"), _special, "ptx-special-register"),
    (re.compile(r"bfe\.([us](?:32|64)) %0, %1, %2, %3"), _bfe, "ptx-bfe"),
    (re.compile(r"prmt\.b32 %0, %1, %2, %3"), lambda m, i: (f"__byte_perm({i[0]}, {i[1]}, {i[2]})", ""), "ptx-prmt"),
    (re.compile(r"lop3\.b32 %0, %1, %2, %3, (0x[0-9a-fA-F]+|\d+)"), _lop3, "ptx-lop3"),
    (re.compile(r"ld\.global\.nc\.[ubsf](?:8|16|32|64) %0, \[%1\]"), lambda m, i: (f"__ldg({i[0]})", ""), "ptx-ld-nc"),
    (re.compile(r"brev\.b32 %0, %1"), lambda m, i: (f"__brev({i[0]})", ""), "ptx-bit"),
    (re.compile(r"popc\.b32 %0, %1"), lambda m, i: (f"__popc({i[0]})", ""), "ptx-bit"),
    (re.compile(r"clz\.b32 %0, %1"), lambda m, i: (f"__clz({i[0]})", ""), "ptx-bit"),
]
FENCES = {"membar.gl": "__threadfence()", "membar.cta": "__threadfence_block()", "membar.sys": "__threadfence_system()",
          "fence.sc.gpu": "__threadfence()", "fence.acq_rel.gpu": "__threadfence()", "bar.sync 0": "__syncthreads()",
          "barrier.sync 0": "__syncthreads()"}


def inline_asm(ctx: RewriteContext) -> None:
    code = CodeMap(ctx.text)
    for match in reversed(list(ASM.finditer(ctx.text))):
        if match.start() in code:
            continue
        close = matching_paren(ctx.text, match.end() - 1)
        if close is None:
            ctx.leave("asm", match.start(), "inline-ptx: statement not understood")
            continue
        rewritten = _rewrite(ctx.text[match.end():close])
        template = _template(ctx.text[match.end():close])
        if rewritten is None:
            first = template.split(";")[0].strip()[:60] or "(empty)"
            ctx.leave("asm", match.start(), f"inline-ptx: `{first}` has no automatic HIP rewrite")
            continue
        statement, rule, why = rewritten
        ctx.note(rule, match.start(), f"inline PTX `{template}` -> `{statement}`" + (f" ({why})" if why else ""))
        ctx.replace(match.start(), close + 1, statement)


def _template(inside: str) -> str:
    head = re.split(r"(?<=\")\s*:", inside, maxsplit=1)[0]
    text = "".join(STRING.findall(head)).replace("\\n", " ").replace("\\t", " ").replace("%%", "%")
    return " ".join(text.split()).strip().rstrip(";").strip()


def _rewrite(inside: str) -> tuple[str, str, str] | None:
    sections = _sections(inside)
    template = _template(inside)
    outputs = _operands(sections[1]) if len(sections) > 1 else []
    inputs = _operands(sections[2]) if len(sections) > 2 else []
    if outputs is None or inputs is None:
        return None
    if template in FENCES and not outputs:
        return FENCES[template], "ptx-fence", ""
    if len(outputs) != 1 or not outputs[0][0].startswith("="):
        return None
    target = outputs[0][1]
    values = [expression for _constraint, expression in inputs]
    for pattern, make, rule in IDIOMS:
        found = pattern.fullmatch(template)
        numbers = [int(n) for n in re.findall(r"%(\d+)", template)]
        if found is None or max(numbers, default=0) > len(values):
            continue
        made = make(found, values)
        if made is not None:
            return f"{target} = {made[0]}", rule, made[1]
    return None


def _sections(inside: str) -> list[str]:
    """The colon-separated parts of an asm argument list (colons inside strings or brackets do not count)."""
    parts, depth, start, index = [], 0, 0, 0
    while index < len(inside):
        char = inside[index]
        if char == '"':
            end = STRING.match(inside, index)
            index = end.end() if end else index + 1
            continue
        if char in "([":
            depth += 1
        elif char in ")]":
            depth -= 1
        elif char == ":" and depth == 0:
            parts.append(inside[start:index])
            start = index + 1
        index += 1
    parts.append(inside[start:])
    return parts


def _operands(section: str) -> list[tuple[str, str]] | None:
    found = []
    for piece in split_arguments(section):
        operand = OPERAND.match(piece)
        if operand is None:
            return None
        found.append((operand.group(1), operand.group(2).strip()))
    return found

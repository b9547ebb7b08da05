"""Arithmetic on ``CUdeviceptr``: an integer in CUDA, ``void*`` as HIP's ``hipDeviceptr_t``.

Where a variable declared ``CUdeviceptr`` is an operand of ``+ - % & | ^ * /``, it is read as an
integer (``(uintptr_t)v``); a result that becomes a device pointer again (an initialiser or assignment
of such a variable, ``v += n``, an argument of a driver call) is cast back. The rest of the engine then
spells the type ``hipDeviceptr_t``.
"""
from __future__ import annotations

import re

from translator.literals import matching_paren, split_arguments
from translator.rewrites.code import CodeMap
from translator.rewrites.context import RewriteContext

DECLARED = re.compile(r"\bCUdeviceptr\s+(\w+)")
STATEMENT = re.compile(r"[^;{}]+")
ASSIGN = re.compile(r"^(\s*(?:CUdeviceptr\s+)?)(\w+)(\s*)([-+]?=)(?!=)(.*)$", re.DOTALL)
CALL = re.compile(r"\b(?:cu|cuda|hip)\w*\s*\(")
OPERATOR_AFTER = re.compile(r"\s*(?:[-+](?![-+>=])|[%^|*/](?!=)|&(?![&=])|<<|>>)")
OPERATOR_BEFORE = re.compile(r"[\w)\]]\s*(?:[-+%^|*/]|<<|>>|(?<!&)&)\s*$")  # binary: an operand before it
CAST = re.compile(r"\(\s*CUdeviceptr\s*\)")


def deviceptr_arithmetic(ctx: RewriteContext) -> None:
    code = CodeMap(ctx.text)
    names = {m.group(1) for m in DECLARED.finditer(ctx.text) if m.start() not in code}
    if not names:
        return
    pattern = re.compile(r"(?<![\w.>])(" + "|".join(sorted(map(re.escape, names))) + r")(?!\w)")
    for statement in reversed(list(STATEMENT.finditer(ctx.text))):
        body = statement.group()
        if not any(name in body for name in names) or statement.start() in code:
            continue
        new = _statement(body, pattern, names)
        if new != body:
            ctx.note("deviceptr-arithmetic", statement.start() + len(body) - len(body.lstrip()),
                     "CUdeviceptr arithmetic: hipDeviceptr_t is void*, so the value is computed as uintptr_t "
                     "and cast back where a device pointer is wanted")
            ctx.replace(statement.start(), statement.end(), new)


def _statement(body: str, pattern: re.Pattern[str], names: set[str]) -> str:
    assigned = ASSIGN.match(body)
    if assigned is not None and assigned.group(2) in names:
        lead, name, space, operator, value = assigned.groups()
        cast_value = _integers(value, pattern)
        if operator in ("+=", "-="):
            return f"{lead}{name}{space}= (CUdeviceptr)((uintptr_t){name} {operator[0]} ({value.strip()}))"
        if cast_value != value:
            return f"{lead}{name}{space}{operator} (CUdeviceptr)({cast_value.strip()})"
        return body
    new = _integers(body, pattern)
    return _call_arguments(new) if new != body else body


def _integers(text: str, pattern: re.Pattern[str]) -> str:
    """``text`` with every dptr variable used in arithmetic read as ``(uintptr_t)``."""
    pieces, cursor = [], 0
    for match in pattern.finditer(text):
        after = OPERATOR_AFTER.match(text, match.end())
        before = OPERATOR_BEFORE.search(text, 0, match.start())
        if (after is None and before is None) or text[:match.start()].rstrip().endswith(")"):
            continue  # not arithmetic, or ``(T*)v``: converted to a pointer first, not used as an integer
        pieces.append(text[cursor:match.start()] + f"(uintptr_t){match.group()}")
        cursor = match.end()
    if not pieces:
        return text
    return CAST.sub("(uintptr_t)", "".join(pieces) + text[cursor:])


def _call_arguments(text: str) -> str:
    """Arguments of driver calls that are now integer expressions become device pointers again."""
    for call in reversed(list(CALL.finditer(text))):
        close = matching_paren(text, call.end() - 1)
        if close is None:
            continue
        arguments = split_arguments(text[call.end():close])
        changed = [a[:len(a) - len(a.lstrip())] + f"(CUdeviceptr)({a.strip()})" if "(uintptr_t)" in a and not a.strip().startswith("(CUdeviceptr)")
                   else a for a in arguments]
        if changed != arguments:
            text = text[:call.end()] + ",".join(changed) + text[close:]
    return text

"""Launches spelled through macros, for ``hipLaunchKernelGGL`` (``--launch-style ggl`` only).

hipify-clang rewrites a launch where the preprocessor puts it: a macro whose body is a launch without
its arguments (``#define CALL k<float><<<1, n>>>``, used as ``CALL(args)``) or a function-like macro
with a launch in its body (``#define LAUNCH(k, g, b, ...) k<<<g, b>>>(__VA_ARGS__)``) is expanded at
its use so the launch there can be rewritten; a kernel name that is a macro for a template-id
(``#define NAME k<float>``) is wrapped in ``HIP_KERNEL_NAME``, as the template itself would be.
"""
from __future__ import annotations

import re

from translator.literals import matching_paren, split_arguments
from translator.rewrites.code import CodeMap
from translator.rewrites.context import RewriteContext

DEFINE = re.compile(r"^[ \t]*#[ \t]*define[ \t]+(\w+)(\([^)\n]*\))?[ \t]*((?:[^\n\\]|\\.)*(?:\\\n(?:[^\n\\]|\\.)*)*)",
                    re.MULTILINE)
PARAMETER = re.compile(r"\b\w+\b|\.\.\.")


def template_name_macros(text: str) -> frozenset[str]:
    """Object-like macros whose body is a template-id (``k<float>``): kernel names to wrap."""
    if "#" not in text or "define" not in text:
        return frozenset()
    return frozenset(m.group(1) for m in DEFINE.finditer(text)
                     if m.group(2) is None and re.fullmatch(r"[\w:]+\s*<[^<>;]*>", m.group(3).strip()))


def macro_launches(ctx: RewriteContext) -> None:
    if ctx.options.launch_style != "ggl":
        return
    macros: dict[str, tuple[list[str] | None, str]] = {}
    for match in DEFINE.finditer(ctx.text):
        body = match.group(3).replace("\\\n", " ").strip()
        if "<<<" not in body or "#" in body:
            continue
        parameters = PARAMETER.findall(match.group(2)) if match.group(2) else None
        if parameters is None and not body.endswith(">>>"):
            continue  # a complete launch in an object-like macro is rewritten in the definition
        macros[match.group(1)] = (parameters, body)
    if macros:
        _expand(ctx, macros)


def _expand(ctx: RewriteContext, macros: dict[str, tuple[list[str] | None, str]]) -> None:
    code = CodeMap(ctx.text)
    defines = [m.span() for m in DEFINE.finditer(ctx.text)]
    use = re.compile(r"\b(" + "|".join(map(re.escape, sorted(macros))) + r")\s*\(")
    for match in reversed(list(use.finditer(ctx.text))):
        if match.start() in code or any(start <= match.start() < end for start, end in defines):
            continue
        close = matching_paren(ctx.text, match.end() - 1)
        if close is None:
            continue
        parameters, body = macros[match.group(1)]
        inside = ctx.text[match.end():close]
        if parameters is None:
            new = f"{body}({inside})"
        else:
            expanded = _substitute(body, parameters, [a.strip() for a in split_arguments(inside)])
            if expanded is None:
                continue
            new = expanded
        ctx.note("macro-launch", match.start(), f"{match.group(1)}(...) expanded where it is used, so the launch in "
                 "its definition becomes hipLaunchKernelGGL here (as hipify-clang does)")
        ctx.replace(match.start(), close + 1, " ".join(new.split("\n")))


def _substitute(body: str, parameters: list[str], arguments: list[str]) -> str | None:
    variadic = bool(parameters) and parameters[-1] == "..."
    named = parameters[:-1] if variadic else parameters
    if len(arguments) < len(named) or (not variadic and len(arguments) != len(named)):
        return None
    values = dict(zip(named, arguments, strict=False))
    values["__VA_ARGS__"] = ", ".join(arguments[len(named):])
    return re.sub(r"\b\w+\b", lambda m: values.get(m.group(), m.group()), body)

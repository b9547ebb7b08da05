"""The engine's own mistakes seen on real code, fixed around the one-pass scan.

Before the scan: a launch spelled with spaces (``k << < g, b >> > (...)``) becomes ``<<<...>>>``.
After it: a HIP header that landed inside ``extern "C" {`` is included before the block too (its C++
templates need C++ linkage; the include guard makes the inner one empty); ``hiprtcCompileProgram``'s
options get ``const char**``; two functions that translation made identical (``_cudaGetErrorEnum`` of
``cudaError_t`` and of ``CUresult``, both ``hipError_t`` now) keep the first.
"""
from __future__ import annotations

import re
from collections import defaultdict

from translator.literals import matching_paren, split_arguments
from translator.rewrites.code import CodeMap
from translator.rewrites.context import RewriteContext

SPACED_LAUNCH = re.compile(r"(?:<<\s+<|<\s+<<|<\s+<\s+<)(?!<)([^;<>]*?)(?:>>\s+>|>\s+>>|>\s+>\s+>)(?=\s*\()")
EXTERN_C = re.compile(r'\bextern\s+"C"\s*\{')
HIP_INCLUDE = re.compile(r'^[ \t]*#[ \t]*include[ \t]*[<"]hip/[^>"\n]+[>"][^\n]*$', re.MULTILINE)
CPLUSPLUS_LINE = re.compile(r"[ \t]*#[ \t]*if(?:def[ \t]+__cplusplus|[ \t]+defined[ \t]*\(?[ \t]*__cplusplus\)?)[^\n]*\n$")
HIPRTC_COMPILE = re.compile(r"\bhiprtcCompileProgram\s*\(")
NULL_OPTIONS = frozenset({"nullptr", "NULL", "0", "(const char**)0"})
DEFINITION = re.compile(r"^[ \t]*(?:(?:static|inline|extern)\s+)*(?:const\s+)?[A-Za-z_][\w:<>]*[\s*&]+(\w+)\s*\(([^()]*)\)\s*"
                        r"(?:const\s*)?\{", re.MULTILINE)


def spaced_launch(ctx: RewriteContext) -> None:
    code = CodeMap(ctx.text)
    for match in reversed(list(SPACED_LAUNCH.finditer(ctx.text))):
        if match.start() in code:
            continue
        ctx.note("spaced-launch", match.start(), "a launch written `<< < ... >> >` is read as `<<<...>>>`")
        ctx.replace(match.start(), match.end(), f"<<<{match.group(1).strip()}>>>")


def extern_c_include(ctx: RewriteContext) -> None:
    code = CodeMap(ctx.text)
    for block in reversed(list(EXTERN_C.finditer(ctx.text))):
        if block.start() in code:
            continue
        close = _brace_end(ctx.text, block.end() - 1)
        end = close if close is not None else len(ctx.text)
        inside = [m.group().strip() for m in HIP_INCLUDE.finditer(ctx.text, block.end(), end)]
        if not inside:
            continue
        at = _block_start(ctx.text, block.start())
        ctx.insert(at, "".join(line + "\n" for line in dict.fromkeys(inside)))
        ctx.note("extern-c-include", at, f"{inside[0]} also included before extern \"C\" {{: HIP's headers "
                 "hold C++ templates, which need C++ linkage")


def _block_start(text: str, position: int) -> int:
    """Start of the line opening the block, or of a ``#ifdef __cplusplus`` line just above it."""
    start = text.rfind("\n", 0, position) + 1
    above = text.rfind("\n", 0, max(0, start - 1)) + 1
    if start and CPLUSPLUS_LINE.fullmatch(text, above, start):
        return above
    return start


def hiprtc_options(ctx: RewriteContext) -> None:
    code = CodeMap(ctx.text)
    for match in reversed(list(HIPRTC_COMPILE.finditer(ctx.text))):
        close = matching_paren(ctx.text, match.end() - 1)
        if match.start() in code or close is None:
            continue
        arguments = split_arguments(ctx.text[match.end():close])
        if len(arguments) != 3 or arguments[2].strip() in NULL_OPTIONS or "const char" in arguments[2]:
            continue
        cast = "(const char**)" if ctx.is_c else "const_cast<const char**>"
        option = arguments[2].strip()
        arguments[2] = arguments[2].replace(option, f"{cast}({option})")
        ctx.note("hiprtc-options", match.start(), "hiprtcCompileProgram takes const char**: the options array "
                 f"({option}) is cast (nvrtc took const char* const*, which char** converts to)")
        ctx.text = ctx.text[:match.end()] + ",".join(arguments) + ctx.text[close:]


def collapsed_overloads(ctx: RewriteContext, original: str) -> None:
    """Keep the first of functions that translation made identical; the later ones go under ``#if 0``."""
    before = _signatures(original)
    after = _signatures(ctx.text)
    doubled = [(name, types, positions) for (name, types), positions in after.items()
               if len(positions) > 1 and _distinct(before, name) > _distinct(after, name)]
    edits = sorted(((position, name, types) for name, types, positions in doubled for position in positions[1:]),
                   reverse=True)
    for position, name, types in edits:
        end = _body_end(ctx.text, position)
        if end is None:
            continue
        ctx.insert(end, "\n#endif")
        ctx.insert(position, f"#if 0  // hip_port: same signature as the {name} above\n")
        ctx.note("collapsed-overload", position, f"{name}({', '.join(types)}) is defined twice after translation "
                 "(two CUDA types became one HIP type): the first definition is kept, this one is under #if 0")


KEYWORDS = frozenset({"if", "for", "while", "switch", "return", "sizeof", "catch"})


def _signatures(text: str) -> dict[tuple[str, tuple[str, ...]], list[int]]:
    code = CodeMap(text)
    found: dict[tuple[str, tuple[str, ...]], list[int]] = defaultdict(list)
    for match in DEFINITION.finditer(text):
        if match.start(1) in code or match.group(1) in KEYWORDS:
            continue
        found[(match.group(1), _types(match.group(2)))].append(match.start())
    return found


def _distinct(signatures: dict[tuple[str, tuple[str, ...]], list[int]], name: str) -> int:
    return sum(1 for key in signatures if key[0] == name)


def _types(parameters: str) -> tuple[str, ...]:
    types = []
    for parameter in parameters.split(","):
        words = re.findall(r"[\w:<>]+|[*&]", parameter.split("=")[0])
        if len(words) > 1 and re.fullmatch(r"\w+", words[-1]):
            words = words[:-1]
        types.append(" ".join(words))
    return tuple(t for t in types if t and t != "void")


BRACES = re.compile(r"""//[^\n]*|/\*.*?\*/|"(?:\\.|[^"\\\n])*"|'(?:\\.|[^'\\\n])*'|[{}]""", re.DOTALL)


def _body_end(text: str, position: int) -> int | None:
    """The end of the function body whose definition starts at ``position``."""
    return _brace_end(text, text.index("{", position))


def _brace_end(text: str, open_at: int) -> int | None:
    """The end of the ``{...}`` opening at ``open_at`` (literals and comments skipped)."""
    depth = 0
    for match in BRACES.finditer(text, open_at):
        if match.group() == "{":
            depth += 1
        elif match.group() == "}":
            depth -= 1
            if depth == 0:
                return match.end()
    return None

"""``#if`` on CUDA version macros, decided by what the target toolchain offers.

The engine evaluates version macros at the assumed CUDA version (``assumed_cuda_version``, 12.0 by
default; ``translator.guards`` writes the numbers in). That silently picks a branch, so every such
condition gets a margin note with the version assumed and the branch selected. When the selected
branch uses names the target HIP does not offer (no HIP counterpart, newer than the target, hidden by
default in the target's headers) and another branch of the same ``#if`` chain uses none, that branch is
kept instead: the chain's conditions become constants and the note says why.
"""
from __future__ import annotations

import re

from translator import conditionals, guards
from translator.options import parse_version
from translator.rewrites import tables
from translator.rewrites.code import CodeMap
from translator.rewrites.context import RewriteContext

DIRECTIVE = re.compile(r"^[ \t]*#[ \t]*(if|ifdef|ifndef|elif|else|endif)\b([^\n]*)$", re.MULTILINE)
WORD = re.compile(r"\b[A-Za-z_]\w*\b")
COMMENT = re.compile(r"//[^\n]*|/\*.*?\*/", re.DOTALL)


class Branch:
    __slots__ = ("keyword", "start", "line_end", "condition", "body_end")  # a plain class: dataclasses cost start-up

    def __init__(self, keyword: str, start: int, line_end: int, condition: str, body_end: int = 0) -> None:
        self.keyword = keyword
        self.start = start  # of the directive line
        self.line_end = line_end
        self.condition = condition
        self.body_end = body_end


def version_conditions(ctx: RewriteContext) -> None:
    versions = guards.version_macros(ctx.options.assumed_cuda_version)
    below = len(ctx.text) + 1
    while True:  # last chain first; a decided chain changes the text, so the chains are read again
        chains = [c for c in _chains(ctx.text) if c[0].start < below and _tests_version(c, versions)]
        if not chains:
            return
        chain = max(chains, key=lambda c: c[0].start)
        below = chain[0].start
        _decide(ctx, chain, versions)


def _tests_version(chain: list[Branch], versions: dict[str, str]) -> bool:
    return any(name in versions for branch in chain for name in WORD.findall(branch.condition))


def _chains(text: str) -> list[list[Branch]]:
    chains: list[list[Branch]] = []
    stack: list[list[Branch]] = []
    for match in DIRECTIVE.finditer(text):
        keyword, rest = match.group(1), COMMENT.sub("", match.group(2)).strip()
        branch = Branch(keyword, match.start(), match.end(), rest)
        if keyword in ("if", "ifdef", "ifndef"):
            stack.append([branch])
        elif stack and keyword in ("elif", "else"):
            stack[-1][-1].body_end = match.start()
            stack[-1].append(branch)
        elif stack and keyword == "endif":
            stack[-1][-1].body_end = match.start()
            chains.append(stack.pop())
    return chains


def _value(branch: Branch, macros: dict[str, str]) -> int | None:
    if branch.keyword == "else":
        return 1
    if branch.keyword in ("ifdef", "ifndef"):
        defined = branch.condition.split()[0] in macros if branch.condition else False
        return int(defined == (branch.keyword == "ifdef"))
    return conditionals.evaluate(branch.condition, macros)


def _decide(ctx: RewriteContext, chain: list[Branch], versions: dict[str, str]) -> None:
    macros = {**versions, "__CUDACC__": "1", **dict(ctx.options.defines)}
    values = [_value(branch, macros) for branch in chain]
    assumed = ctx.options.assumed_cuda_version
    if None in values[: next((i for i, v in enumerate(values) if v), len(values)) + 1]:
        ctx.note("cuda-version-condition", chain[0].start, f"CUDA {assumed} assumed; `{chain[0].condition}` "
                 "could not be evaluated here, its branches are left to the compiler")
        return
    selected = next((i for i, v in enumerate(values) if v), None)
    missing = [_missing(ctx, branch) for branch in chain]
    usable = [i for i, names in enumerate(missing) if not names]
    usable = [i for i in usable if _has_code(ctx.text, chain[i])]
    if selected is not None and missing[selected] and usable:
        chosen = usable[0]
        _force(ctx, chain, chosen)
        ctx.note("cuda-version-toolchain", chain[0].start, f"CUDA {assumed} assumed selects the "
                 f"{_label(chain, selected)}, which uses {', '.join(missing[selected][:3])}; the {_label(chain, chosen)}"
                 f" uses only what HIP {_hip(ctx)} offers and is kept")
        return
    kept = "no branch" if selected is None else f"the {_label(chain, selected)}"
    ctx.note("cuda-version-condition", chain[0].start,
             f"CUDA {assumed} assumed: `{chain[0].condition}` is {'true' if values[0] else 'false'}; {kept} is kept")


def _has_code(text: str, branch: Branch) -> bool:
    body = COMMENT.sub("", text[branch.line_end:branch.body_end])
    return bool(body.strip()) and "#error" not in body and "# error" not in body


def _label(chain: list[Branch], index: int) -> str:
    branch = chain[index]
    if branch.keyword == "else":
        return "#else branch"
    if branch.keyword == "elif":
        return f"#elif {branch.condition} branch"
    return f"#{branch.keyword} branch"


def _hip(ctx: RewriteContext) -> str:
    return ".".join(map(str, ctx.options.resolved_hip_version()[:2]))


def _missing(ctx: RewriteContext, branch: Branch) -> list[str]:
    """Names of the branch the target HIP does not offer, with the reason."""
    hidden = tables.load().hidden_until
    target = ctx.options.resolved_hip_version()
    code = CodeMap(ctx.text)
    found: dict[str, str] = {}
    for match in WORD.finditer(ctx.text, branch.line_end, branch.body_end):
        word = match.group()
        if word in found or match.start() in code:
            continue
        rule = ctx.rules.get(word)
        if word in hidden:  # HIPIFY's tables call them unsupported; HIP declares them under the same name
            if target < parse_version(hidden[word]):
                found[word] = f"declared by default from HIP {hidden[word]}"
        elif rule is not None and rule.replacement is None and word not in ctx.handled:
            found[word] = rule.reason
    return [f"{name} ({reason})" for name, reason in found.items()]


def _force(ctx: RewriteContext, chain: list[Branch], chosen: int) -> None:
    for index, branch in enumerate(chain):
        if index != chosen and branch.keyword != "endif":
            ctx.disabled.append((ctx.line(branch.line_end) + 1, ctx.line(branch.body_end) - 1))
    for index, branch in reversed(list(enumerate(chain))):
        if branch.keyword in ("else", "endif") or index > chosen:
            continue
        value = "1" if index == chosen else "0"
        keyword = "if" if branch.keyword in ("if", "ifdef", "ifndef") else "elif"
        ctx.replace(branch.start, branch.line_end, f"#{keyword} {value}  // hip_port: branch decided for the target HIP")

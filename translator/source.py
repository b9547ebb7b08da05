"""Translate one CUDA source text to HIP in a single regex pass with dict lookups.

Comments and string literals are left exactly as written (hipify-clang works on the
AST and does not touch them either); only ``#include`` names are rewritten inside quotes.
"""
from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field
from pathlib import Path

from translator import guards, launch
from translator.account import FileAccount, Finding
from translator.includes import (
    RUNTIME_HEADER,
    RUNTIME_INCLUDE_LINE,
    IncludeState,
    rewrite_include,
)
from translator.localdefs import defined_names
from translator.options import TranslateOptions
from translator.rules import CUDA_LIKE, Rule, RuleSet, build_rules

# One match = uninteresting text (possessively skipped, no Python work) + one token.
# Words are consumed whole, so a candidate never starts inside a word (mycudaMalloc stays).
# "stray" (a lone quote, an unclosed comment opener) and "end" make every search attempt succeed where
# it starts; otherwise the engine would re-run the skip from each following position (quadratic).
SKIP = r"""(?:[^/"'\#<A-Za-z_\\]++|/(?![/*])|<(?!<<)|\\.|\#(?![ \t]*(?:include|if|ifdef|ifndef|elif)\b)|(?!{candidates})[A-Za-z_]\w*+)*+"""
TOKENS = r"""(?:(?P<comment>//[^\n]*|/\*.*?\*/)|(?P<string>"(?:\\.|[^"\\\n])*")|(?P<char>'(?:\\.|[^'\\\n]){1,10}')|(?P<pp>\#[ \t]*(?:include|if|ifdef|ifndef|elif)\b(?:[^\n\\]|\\.)*)|(?P<launch><<<)|(?P<ident>{candidates})|(?P<stray>.)|(?P<end>\Z))"""
PASSIVE_TOKENS = frozenset({"comment", "string", "char", "stray", "end"})
CUB_SCOPE = re.compile(r"\s*::")
CUB_NAMESPACE = "hipcub"


@dataclass
class FileTranslation:
    text: str
    account: FileAccount


@functools.lru_cache(maxsize=16)
def token_regex(identifier_pattern: str) -> re.Pattern[str]:
    candidates = f"(?:{identifier_pattern}|cub\\b)"
    return re.compile(SKIP.replace("{candidates}", candidates) + TOKENS.replace("{candidates}", candidates), re.DOTALL)


class _Interesting:
    """Membership test for names worth protecting: known CUDA API names and CUDA-looking ones."""

    def __init__(self, rules: dict[str, Rule]) -> None:
        self.rules = rules

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and (name in self.rules or CUDA_LIKE.match(name) is not None)


@dataclass
class _Scan:
    text: str
    rules: dict[str, Rule]
    keep: frozenset[str] | set[str]
    account: FileAccount
    limit: int
    line: int = 1
    line_cursor: int = 0
    needs_runtime: bool = False
    kept: set[str] = field(default_factory=set)
    cuda_like_seen: set[str] = field(default_factory=set)

    def position(self, pos: int) -> tuple[int, int]:
        self.line += self.text.count("\n", self.line_cursor, pos)
        self.line_cursor = pos
        return self.line, pos - self.text.rfind("\n", 0, pos)

    def identifier(self, name: str, pos: int) -> str:
        rule = self.rules.get(name)
        if name in self.keep:
            if rule is not None or CUDA_LIKE.match(name):
                self.kept.add(name)
            return name
        if rule is None:
            if name not in self.cuda_like_seen and CUDA_LIKE.match(name):
                self.cuda_like_seen.add(name)
                line, column = self.position(pos)
                self.account.cuda_like.append(Finding(name=name, line=line, column=column,
                                                      reason="not-in-hipify-tables"))
            return name
        if rule.cuda_status:
            line, column = self.position(pos)
            self.account.deprecated.append(Finding(name=name, line=line, column=column,
                                                   reason=f"{rule.cuda_status} in CUDA {rule.cuda_since}".strip()))
        if rule.replacement is None:
            self.report(name, pos, rule.reason)
            return name
        if rule.replacement != name:
            self.account.converted[rule.family] += 1
            self.needs_runtime = self.needs_runtime or rule.needs_runtime
        return rule.replacement

    def report(self, name: str, pos: int, reason: str) -> None:
        if len(self.account.unconverted) < self.limit:
            line, column = self.position(pos)
            self.account.unconverted.append(Finding(name=name, line=line, column=column, reason=reason))


def translate_source(text: str, path: str = "", options: TranslateOptions | None = None) -> FileTranslation:
    """Translate ``text`` (the contents of ``path``, used to resolve local includes)."""
    options = options or TranslateOptions()
    ruleset = build_rules(options.roc_libraries, options.resolved_hip_version())
    account = FileAccount(path=path)
    keep: set[str] | frozenset[str] = options.keep_names
    if options.detect_local_definitions:
        keep = keep | defined_names(text, _Interesting(ruleset.rules), ruleset.identifier_pattern)
    scan = _Scan(text, ruleset.rules, keep, account, options.max_unconverted_listed)
    includes = IncludeState(includer_dir=Path(path).parent if path else None, roc_libraries=options.roc_libraries)
    ggl = options.launch_style == "ggl" and launch.MARK not in text
    out = _rewrite(text, ruleset, scan, includes, ggl, options)
    out = _finish(out, text, scan, includes, ggl)
    account.kept_local = sorted(scan.kept)
    account.changed = out != text
    account.status = "translated" if account.changed else "unchanged"
    return FileTranslation(text=out, account=account)


def _rewrite(text: str, ruleset: RuleSet, scan: _Scan, includes: IncludeState,
             ggl: bool, options: TranslateOptions) -> str:
    versions = guards.version_macros(options.assumed_cuda_version)
    pieces: list[str] = []
    cursor = 0
    for match in token_regex(ruleset.identifier_pattern).finditer(text):
        kind = match.lastgroup
        if kind is None or kind in PASSIVE_TOKENS:
            continue
        start, end = match.span(kind)
        token = text[start:end]
        if kind == "ident":
            if token == "cub":
                new = _cub(text, end, scan)
            else:
                new = scan.identifier(token, start)
        elif kind == "launch":
            scan.account.converted["kernel-launch"] += 1
            new = launch.MARK if ggl else token
        elif "include" in token[:12]:
            rewritten = rewrite_include(token, ruleset.headers, includes)
            new = token if rewritten is None else rewritten
            if rewritten == "" and text.startswith("\n", end):
                end += 1  # drop the whole line
        else:
            new = _condition(token, start, scan, versions)
        if new != token or end != match.end():
            pieces.append(text[cursor:start])
            pieces.append(new)
            cursor = end
    pieces.append(text[cursor:])
    return "".join(pieces)


def _cub(text: str, end: int, scan: _Scan) -> str:
    if CUB_SCOPE.match(text, end) is None:
        return "cub"
    scan.account.converted["library"] += 1
    return CUB_NAMESPACE


def _condition(token: str, start: int, scan: _Scan, versions: dict[str, str]) -> str:
    if not guards.may_need_guard_rewrite(token):
        return token
    return guards.rewrite_condition(token, versions, lambda name: scan.identifier(name, start))


def _finish(out: str, original: str, scan: _Scan, includes: IncludeState, ggl: bool) -> str:
    account = scan.account
    account.converted["header"] += includes.converted
    if not account.converted["header"]:
        del account.converted["header"]
    for name in includes.unsupported:
        account.warnings.append(f"header {name} has no HIP counterpart; left as is")
    for name in includes.kept_local:
        account.warnings.append(f'"{name}" is the project\'s own header; left as is')
    if ggl:
        out, failures = launch.convert_launches(out)
        if failures:
            account.warnings.append(f"{failures} kernel launch(es) kept as <<<...>>> (could not parse)")
    has_kernels = "<<<" in original or "__global__" in original
    if (has_kernels or scan.needs_runtime) and RUNTIME_HEADER not in includes.emitted and out:
        out = RUNTIME_INCLUDE_LINE + out
    return out

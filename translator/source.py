"""Translate one CUDA source text to HIP in a single regex pass with dict lookups.

Comments are left exactly as written. CUDA names that are whole words of a string literal are
translated as hipify-clang does (``"cudaMemcpy failed"`` -> ``"hipMemcpy failed"``) unless
``translate_strings`` is off. Calls with argument rewrites are marked during the pass and
rewritten after it (``translator.calls``).
"""
from __future__ import annotations

import functools
import re

from translator import calls, conditionals, guards, handwork, launch, rewrites
from translator.account import FileAccount, Finding
from translator.includes import RUNTIME_HEADER, IncludeState, insert_runtime_include, rewrite_include
from translator.localdefs import defined_names
from translator.mapping import load_default
from translator.options import TranslateOptions
from translator.rules import CUDA_LIKE, Rule, RuleSet, Target, build_rules
from translator.wavefront.translation import prepare as prepare_wavefront

# One match = uninteresting text (possessively skipped, no Python work) + one token.
# Words are consumed whole, so a candidate never starts inside a word (mycudaMalloc stays). A word whose
# first character starts no candidate is stepped over at once; one that does is tested only against the
# candidates with that first character ({words}); after a word character (``0x1f``) no candidate but
# ``cub`` starts, as ``\b`` says. "stray" (a lone quote, an unclosed comment opener) and "end" make every
# search attempt succeed where it starts; otherwise the engine would re-run the skip from each following
# position (quadratic).
SKIP = r"""(?:{plain}++|{words}|\B(?!cub\b)[A-Za-z_]\w*+|/(?![/*])|<(?!<<)|\\.|\#(?![ \t]*(?:include|if|ifdef|ifndef|elif)\b))*+"""
PLAIN = r"""[^/"'\#<A-Za-z_\\]"""  # characters that start no token and no word
WORD_CHARACTERS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz_")
TOKENS = r"""(?:(?P<comment>//[^\n]*|/\*.*?\*/)|(?P<string>"(?:\\.|[^"\\\n])*")|(?P<char>'(?:\\.|[^'\\\n]){1,10}')|(?P<pp>\#[ \t]*(?:include|if|ifdef|ifndef|elif)\b(?:[^\n\\]|\\.)*)|(?P<launch><<<)|(?P<ident>{candidates})|(?P<stray>.)|(?P<end>\Z))"""
PASSIVE_TOKENS = frozenset({"comment", "char", "stray", "end"})
STRING_WORD = re.compile(r"(?<![^\s\"])(?:cu|CU)[^\s\"]*")
CUB_SCOPE = re.compile(r"\s*::")
# HIP names that are typedefs of a differently named struct: after ``struct`` the tag must be used.
STRUCT_TAGS = {"hipGraphicsResource": "_hipGraphicsResource"}
STRUCT_BEFORE = re.compile(r"\bstruct\s+$")
CUB_NAMESPACE = "hipcub"
HOLD_REASON = "cublas-v1: HIP has only the v2 form (with a handle); include cublas_v2.h to translate it"
# Device code needs hip/hip_runtime.h; a host file that uses the API alone gets hip/hip_runtime_api.h.
DEVICE_CODE = re.compile(r"\b__(?:device|global|shared|constant|host)__\b|<<<")
API_HEADER = "hip/hip_runtime_api.h"
PLAIN_HEADERS = (".h", ".hpp", ".hh", ".hxx", ".inl", ".H")


class FileTranslation:
    """The translated text and its account. Plain classes here, not dataclasses: building a dataclass costs
    a fresh process milliseconds at import."""

    __slots__ = ("text", "account")

    def __init__(self, text: str, account: FileAccount) -> None:
        self.text = text
        self.account = account

    def __eq__(self, other: object) -> bool:
        return type(other) is FileTranslation and (self.text, self.account) == (other.text, other.account)

    def __repr__(self) -> str:
        return f"FileTranslation(text={self.text!r}, account={self.account!r})"


@functools.lru_cache(maxsize=16)
def token_regex(identifier_pattern: str, heads: tuple[tuple[str, str], ...]) -> re.Pattern[str]:
    candidates = f"(?:{identifier_pattern}|cub\\b)"
    skip = SKIP.replace("{plain}", PLAIN).replace("{words}", _word_steps(heads))
    return re.compile(skip + TOKENS.replace("{candidates}", candidates), re.DOTALL)


def _word_steps(heads: tuple[tuple[str, str], ...]) -> str:
    """Alternatives that consume a word that is no candidate (and the plain characters after it): one
    for the words whose first character starts no candidate, one per first character that does."""
    rests = dict(heads)
    rests["c"] = f"{rests['c']}|ub\\b" if rests.get("c") else r"ub\b"  # cub, the namespace
    others = "".join(sorted(WORD_CHARACTERS - set(rests)))
    steps = [f"[{others}]\\w*+{PLAIN}*+"] if others else []
    steps += [f"{re.escape(head)}(?!{rest})\\w*+{PLAIN}*+" for head, rest in sorted(rests.items())]
    return "|".join(steps)


class _Interesting:
    """Membership test for names worth protecting: known CUDA API names and CUDA-looking ones."""

    def __init__(self, rules: dict[str, Rule]) -> None:
        self.rules = rules

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and (name in self.rules or CUDA_LIKE.match(name) is not None)


class _Scan:
    __slots__ = ("text", "rules", "keep", "account", "limit", "target", "line", "line_cursor", "needs_runtime", "kept",
                 "cuda_like_seen", "calls", "handled", "hold")

    def __init__(self, text: str, rules: dict[str, Rule], keep: frozenset[str] | set[str], account: FileAccount,
                 limit: int, target: Target, handled: set[str] | None = None,
                 hold: frozenset[str] = frozenset()) -> None:
        self.text = text
        self.rules = rules
        self.keep = keep
        self.account = account
        self.limit = limit
        self.target = target
        self.line = 1
        self.line_cursor = 0
        self.needs_runtime = False
        self.kept: set[str] = set()
        self.cuda_like_seen: set[str] = set()
        self.calls: list[str] = []  # CUDA names of marked calls, in text order
        self.handled: set[str] = set() if handled is None else handled  # names translator.rewrites took care of
        self.hold = hold  # names left as written in this file, with ``hold_reason``

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
        if name in self.hold:
            self.report(name, pos, HOLD_REASON)
            return name
        if rule.cuda_status:
            line, column = self.position(pos)
            self.account.deprecated.append(Finding(name=name, line=line, column=column,
                                                   reason=f"{rule.cuda_status} in CUDA {rule.cuda_since}".strip()))
        if rule.replacement is None:
            if name not in self.handled:
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
    original = text
    text, hazards = prepare_wavefront(text, options)  # wave-size fixes first: they keep every line
    target, ruleset = _rules_for(options)
    account = FileAccount(path=path)
    keep: set[str] | frozenset[str] = options.keep_names
    if options.detect_local_definitions:
        keep = keep | defined_names(rewrites.without_replaced_definitions(text), _Interesting(ruleset.rules))
    port = rewrites.before(text, path, options, ruleset.rules)  # the same lines, CUDA still
    work = port.text
    scan = _Scan(work, ruleset.rules, keep, account, options.max_unconverted_listed, target, handled=port.handled,
                 hold=cublas_v1_names() if "cublas" in work and "cublas_v2.h" not in work else frozenset())
    includes = IncludeState(includer=path, target=target)
    ggl = options.launch_style == "ggl" and launch.MARK not in work
    out = _rewrite(work, ruleset, scan, includes, ggl, options)
    version = calls.hipify_hip_latest() if options.hipify_spelling else target.hip_version
    out = _finish(out, work, scan, includes, ggl, path, version)
    out = rewrites.after(out, text, port)
    _account_rewrites(account, port)
    account.kept_local = sorted(scan.kept)
    account.wavefront = hazards
    account.hand_work = handwork.left(out, original)
    account.changed = out != original
    account.status = "translated" if account.changed else "unchanged"
    return FileTranslation(text=out, account=account)


_last_rules: tuple[TranslateOptions, Target, RuleSet] | None = None


def _rules_for(options: TranslateOptions) -> tuple[Target, RuleSet]:
    """The target and rule table of ``options``. The last ones are kept: a tree or a batch translates file
    after file with the same options object, and hashing the options (tree facts included) costs more."""
    global _last_rules
    last = _last_rules
    if last is not None and last[0] is options:
        return last[1], last[2]
    target = Target.of(options)
    ruleset = build_rules(target)
    _last_rules = (options, target, ruleset)
    return target, ruleset


@functools.cache
def cublas_v1_names() -> frozenset[str]:
    """cuBLAS names HIP supports in their v2 form only (HIPIFY's ``HIP_SUPPORTED_V2_ONLY``): without
    ``cublas_v2.h`` a call is the v1 API (no handle argument) and stays, as hipify-clang leaves it."""
    return frozenset(m.cuda for m in load_default().mappings() if m.flags and "HIP_SUPPORTED_V2_ONLY" in m.flags)


def _account_rewrites(account: FileAccount, port: rewrites.RewriteContext) -> None:
    account.rewrites = port.notes
    account.port_sections = sorted(port.sections)
    account.unconverted.extend(port.unconverted)
    if port.disabled:  # names in a branch a version test no longer compiles are not left to port
        account.unconverted = [f for f in account.unconverted if not port.is_disabled(f["line"])]
    account.unconverted.sort(key=lambda finding: (finding["line"], finding["column"]))
    changed = sum(1 for note in port.notes if note["rule"] not in rewrites.NOTE_ONLY)
    if changed:
        account.converted["rewrite"] += changed


def _rewrite(text: str, ruleset: RuleSet, scan: _Scan, includes: IncludeState,
             ggl: bool, options: TranslateOptions) -> str:
    versions = guards.version_macros(options.assumed_cuda_version)
    skipped = _skipped_regions(text, versions, options)
    target = scan.target
    call_names = calls.load_tables().wanted(target.roc, target.miopen) if calls.MARK not in text else frozenset()
    plain = _plain_conversions(ruleset, call_names)
    converted: dict[str, int] = {}  # by name, for the plain conversions (families added at the end)
    keep, hold = scan.keep, scan.hold
    struct_tags = options.struct_tags and not options.hipify_spelling
    pieces: list[str] = []
    cursor = 0
    for match in token_regex(ruleset.identifier_pattern, ruleset.heads).finditer(text):
        kind = match.lastgroup
        if kind == "ident":  # most tokens: a name, and most names only rename (no bookkeeping)
            start, end = match.span("ident")
            if skipped is not None and start in skipped:
                continue
            token = text[start:end]
            new = plain[token]
            if new is not None and token not in keep and token not in hold:
                converted[token] = converted.get(token, 0) + 1
            else:
                new = _identifier(text, token, start, end, scan, call_names, struct_tags)
                if new == token:
                    continue
            pieces.append(text[cursor:start])
            pieces.append(new)
            cursor = end
            continue
        if kind is None or kind in PASSIVE_TOKENS:
            continue
        start, end = match.span(kind)
        if skipped is not None and start in skipped:
            continue
        token = text[start:end]
        if kind == "string":
            if not options.translate_strings or ("cu" not in token and "CU" not in token):
                continue
            new = STRING_WORD.sub(lambda m: _string_word(m.group(), scan), token)
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
    for name, count in converted.items():
        rule = ruleset.rules[name]
        scan.account.converted[rule.family] += count
        scan.needs_runtime = scan.needs_runtime or rule.needs_runtime
    return "".join(pieces)


class _PlainRenames(dict[str, "str | None"]):
    """CUDA name -> HIP name for the rules that only rename: nothing to report, no call to rewrite, no
    struct tag (None for any other name). Filled as names are met: building it whole from 8,000 rules cost a
    fresh process more than translating a small file."""

    def __init__(self, rules: dict[str, Rule], call_names: frozenset[str]) -> None:
        super().__init__()
        self.rules = rules
        self.call_names = call_names

    def __missing__(self, name: str) -> str | None:
        rule = self.rules.get(name)
        new = rule.replacement if rule is not None else None
        if new is None or new == name or rule is None or rule.cuda_status or name in self.call_names \
                or new in STRUCT_TAGS or name == "cub":
            new = None
        self[name] = new
        return new


_PLAIN: dict[tuple[int, frozenset[str]], _PlainRenames] = {}


def _plain_conversions(ruleset: RuleSet, call_names: frozenset[str]) -> _PlainRenames:
    """The plain renames of a rule table, kept per table (with it, so a freed table's id is never taken for
    another's)."""
    key = (id(ruleset.rules), call_names)
    found = _PLAIN.get(key)
    if found is not None and found.rules is ruleset.rules:
        return found
    if len(_PLAIN) > 32:
        _PLAIN.clear()
    found = _PLAIN[key] = _PlainRenames(ruleset.rules, call_names)
    return found


def _identifier(text: str, token: str, start: int, end: int, scan: _Scan, call_names: frozenset[str],
                struct_tags: bool) -> str:
    if token == "cub":
        return _cub(text, end, scan)
    new = scan.identifier(token, start)
    if new in STRUCT_TAGS and struct_tags and STRUCT_BEFORE.search(text, max(0, start - 40), start):
        new = STRUCT_TAGS[new]
    if token in call_names and new != token:
        scan.calls.append(token)
        new += calls.MARK
    return new


def _skipped_regions(text: str, versions: dict[str, str],
                     options: TranslateOptions) -> conditionals.InactiveRegions | None:
    if not options.skip_excluded_blocks or "#" not in text:
        return None
    predefined = {**versions, "__CUDACC__": "1", **dict(options.defines)}
    return conditionals.inactive_regions(text, predefined)


def _string_word(word: str, scan: _Scan) -> str:
    rule = scan.rules.get(word)
    if rule is None or rule.replacement is None or word in scan.keep:
        return word
    scan.account.converted["string-literal"] += 1
    return rule.replacement


def _cub(text: str, end: int, scan: _Scan) -> str:
    if CUB_SCOPE.match(text, end) is None:
        return "cub"
    scan.account.converted["library"] += 1
    return CUB_NAMESPACE


def _condition(token: str, start: int, scan: _Scan, versions: dict[str, str]) -> str:
    if not guards.may_need_guard_rewrite(token):
        return token
    return guards.rewrite_condition(token, versions, lambda name: scan.identifier(name, start))


def _finish(out: str, original: str, scan: _Scan, includes: IncludeState, ggl: bool, path: str,
            call_version: tuple[int, ...]) -> str:
    account = scan.account
    account.converted["header"] += includes.converted
    if not account.converted["header"]:
        del account.converted["header"]
    for name in includes.unsupported:
        account.warnings.append(f"header {name} has no HIP counterpart; left as is")
    for name in includes.kept_local:
        account.warnings.append(f'"{name}" is the project\'s own header; left as is')
    if scan.calls:
        out, edits = calls.rewrite_calls(out, scan.calls, scan.target.roc, scan.target.miopen, call_version)
        if edits:
            account.converted["call-arguments"] += edits
    if ggl:
        templates = launch.template_kernels(original) | rewrites.template_name_macros(original)
        out, failures = launch.convert_launches(out, templates)
        if failures:
            account.warnings.append(f"{failures} kernel launch(es) kept as <<<...>>> (could not parse)")
    cuda_file = path.endswith((".cu", ".cuh")) or "<<<" in original or "__global__" in original
    if (cuda_file or account.converted) and RUNTIME_HEADER not in includes.emitted and out:
        if cuda_file or not path.endswith(PLAIN_HEADERS) or DEVICE_CODE.search(original) is not None:
            out = insert_runtime_include(out)
        elif not includes.emitted:  # a host header a plain C++ compiler may also build: the API header is enough
            out = insert_runtime_include(out, API_HEADER)
    return out

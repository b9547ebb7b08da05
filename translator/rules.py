"""Per-options replacement table: CUDA name -> what to emit and what to report."""
from __future__ import annotations

import functools
import re
from typing import NamedTuple

from translator import rulecache
from translator.mapping import ApiMapping, MappingDB, load_default
from translator.options import TranslateOptions, parse_version

ARCH_VALUE = "(__HIP_DEVICE_COMPILE__ * 800)"  # __CUDA_ARCH__ as a number: sm_80 in the device pass, else 0

# CUDA-looking names HIPIFY does not list; a bare library word (``at::DeviceType::CUDA``) is not one.
CUDA_LIKE = re.compile(r"^(?!(?:CUDA|CUBLAS|CURAND|CUFFT|CUSPARSE|CUSOLVER|CUDNN|NVRTC)$)"
                       r"(?:cuda|cublas|curand|cufft|cusparse|cusolver|cudnn|nvrtc|CUDA|CU|CUBLAS|CURAND|CUFFT|CUSPARSE|CUSOLVER|CUDNN|NVRTC)[A-Z_]")
RUNTIME_LIBRARIES = frozenset({"runtime", "driver"})
# hipify-clang's Statistics::isToRoc: the APIs whose rocName is used under --roc / --miopen.
ROC_LIBRARIES = frozenset({"cublas", "cudnn", "cusparse", "cusolver", "runtime", "complex", "curand",
                           "device", "fp16", "bf16"})


class Target:
    """What the rules depend on (hashable, so rule tables are cached per target). A plain class: a
    dataclass costs a fresh process milliseconds to build at import."""

    __slots__ = ("roc", "miopen", "hip_version", "experimental", "declared", "header_folders", "hip_data_types")

    def __init__(self, roc: bool = False, miopen: bool = False, hip_version: tuple[int, ...] = (),
                 experimental: bool = False, declared: frozenset[str] | None = None, header_folders: bool = True,
                 hip_data_types: bool = False) -> None:
        self.roc = roc
        self.miopen = miopen
        self.hip_version = hip_version
        self.experimental = experimental
        self.declared = declared
        self.header_folders = header_folders
        self.hip_data_types = hip_data_types

    def _key(self) -> tuple[object, ...]:
        return (self.roc, self.miopen, self.hip_version, self.experimental, self.declared, self.header_folders,
                self.hip_data_types)

    def __eq__(self, other: object) -> bool:
        return type(other) is Target and self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def __repr__(self) -> str:
        return f"Target{self._key()!r}"

    @classmethod
    def of(cls, options: TranslateOptions) -> Target:
        version = options.resolved_hip_version()
        folders = False if options.hipify_spelling else options.library_header_folders
        return cls(roc=options.roc_libraries, miopen=options.miopen, hip_version=version,
                   experimental=options.experimental, declared=options.declared_names,
                   header_folders=version >= (6,) if folders is None else folders,
                   hip_data_types=options.use_hip_data_types)


class Rule(NamedTuple):  # a tuple: thousands of them are stored and loaded fast (translator.rulecache)
    replacement: str | None  # None: leave the CUDA name and report it
    family: str
    reason: str  # why not converted ("" when converted)
    cuda_status: str  # deprecated/removed in CUDA -> reported as such (even when converted)
    cuda_since: str
    needs_runtime: bool  # using it requires the HIP runtime header


class RuleSet:
    __slots__ = ("rules", "headers", "identifier_pattern", "heads")

    def __init__(self, rules: dict[str, Rule], headers: dict[str, ApiMapping], identifier_pattern: str,
                 heads: tuple[tuple[str, str], ...]) -> None:
        self.rules = rules
        self.headers = headers
        self.identifier_pattern = identifier_pattern  # regex alternative matching candidate identifiers
        self.heads = heads  # the same, by first character (``candidate_heads``)

    def __eq__(self, other: object) -> bool:
        return (type(other) is RuleSet and self.rules == other.rules and self.headers == other.headers
                and self.identifier_pattern == other.identifier_pattern and self.heads == other.heads)


def flagged(mapping: ApiMapping, flag: str) -> bool:
    return mapping.flags is not None and flag in mapping.flags.split()


def to_roc(mapping: ApiMapping, target: Target) -> bool:
    """hipify-clang's isToRoc: --miopen takes every rocName, --roc all but the MIOpen-only ones."""
    if mapping.library not in ROC_LIBRARIES:
        return False
    return target.miopen or (target.roc and not flagged(mapping, "ROC_MIOPEN_ONLY"))


def is_hip_data_type(mapping: ApiMapping) -> bool:
    return mapping.hip is not None and (mapping.hip == "hipDataType" or mapping.hip.startswith(("HIP_R_", "HIP_C_")))


def target_name(mapping: ApiMapping, target: Target) -> str | None:
    if target.hip_data_types and is_hip_data_type(mapping):
        return mapping.hip  # --use-hip-data-types: hipDataType even where --roc has rocblas_datatype
    if to_roc(mapping, target):
        return None if flagged(mapping, "ROC_UNSUPPORTED") else (mapping.roc or mapping.hip)
    return None if flagged(mapping, "HIP_UNSUPPORTED") else mapping.hip


# The identifiers a toolchain root's index holds (scripts/toolchain-root): ROCm's own prefixed names.
# Other targets (device functions such as __syncthreads, header paths) are not in it; tables decide those.
DECLARED_INDEX_FORM = re.compile(r"^(?:hip|HIP|roc|ROC|miopen|MIOPEN)\w*$")


def gate(mapping: ApiMapping, name: str, target: Target) -> str:
    """Why ``name`` may not be emitted for this target ("" when it may).

    For the names a toolchain's index covers, the names its headers declare decide when given;
    otherwise HIPIFY's tables do.
    """
    if target.declared is not None and DECLARED_INDEX_FORM.match(name):
        return "" if name in target.declared else "not-declared-by-toolchain"
    if name != mapping.hip:
        return ""
    if mapping.hip_experimental and not target.experimental:
        return f"experimental-in-hip (HIP {mapping.hip_experimental})"
    version = target.hip_version
    if mapping.hip_added and version and parse_version(mapping.hip_added) > version:
        return f"newer-than-target (HIP {mapping.hip_added})"
    if mapping.hip_removed and version and parse_version(mapping.hip_removed) <= version:
        return f"removed-in-hip (HIP {mapping.hip_removed})"
    return ""


def make_rule(mapping: ApiMapping, target: Target) -> Rule | None:
    name = target_name(mapping, target)
    cuda_status = mapping.status if mapping.status in ("deprecated", "removed") else ""
    since = (mapping.cuda_removed if cuda_status == "removed" else mapping.cuda_deprecated) or ""
    reason = ""
    if name is None:
        reason = "unsupported"
    elif name != mapping.cuda:
        reason = gate(mapping, name, target)
    if not reason and name == mapping.cuda and not cuda_status:
        return None  # same name in HIP: nothing to do or report
    return Rule(
        replacement=None if reason else name,
        family=mapping.family,
        reason=reason,
        cuda_status=cuda_status,
        cuda_since=since,
        needs_runtime=mapping.library in RUNTIME_LIBRARIES,
    )


def trie_pattern(words: list[str]) -> str:
    """A prefix-factored alternation: the regex engine rejects a non-match on its first differing char."""
    trie: dict[str, dict] = {}  # type: ignore[type-arg]
    for word in words:
        node = trie
        for char in word:
            node = node.setdefault(char, {})
        node[""] = {}
    return _trie_node(trie)


def _trie_node(node: dict[str, dict]) -> str:  # type: ignore[type-arg]
    ends = "" in node
    branches = [re.escape(char) + _trie_node(child) for char, child in sorted(node.items()) if char]
    if not branches:
        return ""
    body = branches[0] if len(branches) == 1 else "(?:" + "|".join(branches) + ")"
    return f"(?:{body})?" if ends else body


PREFIXED = ("cu", "CU", "nv", "NV", "Cu")  # names starting so are matched by their first three characters


def _prefixes_and_exact(names: list[str]) -> tuple[list[str], list[str]]:
    prefixes = sorted({n[:3] for n in names if n[:2] in PREFIXED})
    exact = sorted(n for n in names if n[:2] not in PREFIXED)
    return prefixes, exact


def candidate_pattern(names: list[str]) -> str:
    """One regex alternative that matches every rule name (plus cheap false positives)."""
    prefixes, exact = _prefixes_and_exact(names)
    prefix_part = trie_pattern(prefixes) + r"\w*"
    exact_part = trie_pattern(exact) + r"\b"
    return rf"\b(?:{prefix_part}|{exact_part})"


def candidate_heads(names: list[str]) -> tuple[tuple[str, str], ...]:
    """``candidate_pattern`` by first character: (character, pattern of what may follow it in a candidate).
    A word starting with any other character is no candidate, so a scanner can step over it without
    trying the whole alternation there."""
    prefixes, exact = _prefixes_and_exact(names)
    heads: list[tuple[str, str]] = []
    for head in sorted({word[0] for word in prefixes + exact}):
        rest = []
        after_prefix = [word[1:] for word in prefixes if word[0] == head]
        after_exact = [word[1:] for word in exact if word[0] == head]
        if after_prefix:
            rest.append(trie_pattern(after_prefix) + r"\w*")
        if after_exact:
            rest.append(trie_pattern(after_exact) + r"\b")
        heads.append((head, "|".join(rest)))
    return tuple(heads)


@functools.lru_cache(maxsize=16)
def build_rules(target: Target, db: MappingDB | None = None) -> RuleSet:
    if db is not None:
        return _build(target, db)
    key = cached_rules_key(target)
    found = _from_plain(rulecache.load(key))
    if found is not None:
        return found
    ruleset = _build(target, load_default())
    rulecache.store(key, _to_plain(ruleset))
    return ruleset


def _to_plain(ruleset: RuleSet) -> tuple[object, ...]:
    """The rule table as tuples and dicts (what ``marshal`` stores)."""
    headers = {name: tuple(getattr(mapping, f) for f in ApiMapping.__slots__) for name, mapping in ruleset.headers.items()}
    shared: dict[str, str] = {}  # one object per distinct string: marshal writes the repeats as references
    rules = {name: tuple(shared.setdefault(v, v) if isinstance(v, str) else v for v in rule)
             for name, rule in ruleset.rules.items()}
    return ("rules-2", rules, headers, ruleset.identifier_pattern, ruleset.heads)


def _from_plain(data: object) -> RuleSet | None:
    if not (isinstance(data, tuple) and len(data) == 5 and data[0] == "rules-2"):
        return None
    _, rules, headers, pattern, heads = data
    try:
        make = functools.partial(tuple.__new__, Rule)  # a Rule from its fields without Python-level calls
        return RuleSet(rules=dict(zip(rules, map(make, rules.values()), strict=True)),
                       headers={name: ApiMapping(*fields) for name, fields in headers.items()},
                       identifier_pattern=pattern, heads=heads)
    except (TypeError, AttributeError):
        return None


def cached_rules_key(target: Target) -> str:
    """The name of ``target``'s rule table in the on-disk cache."""
    parts = repr((target.roc, target.miopen, target.hip_version, target.experimental, target.header_folders,
                  target.hip_data_types))
    return rulecache.cache_key(parts, target.declared)


def _build(target: Target, db: MappingDB) -> RuleSet:
    rules: dict[str, Rule] = {}
    headers: dict[str, ApiMapping] = {}
    for mapping in db.mappings():
        if mapping.kind == "header":
            headers[mapping.cuda] = mapping
            continue
        rule = make_rule(mapping, target)
        if rule is not None:
            rules[mapping.cuda] = rule
    # __CUDA_ARCH__ in code (``#if`` lines are handled by translator.guards): the value nvcc gives it,
    # defined only in the device pass as with nvcc.
    rules["__CUDA_ARCH__"] = Rule(replacement=ARCH_VALUE, family="device", reason="", cuda_status="",
                                  cuda_since="", needs_runtime=False)
    names = sorted(rules)
    return RuleSet(rules=rules, headers=headers, identifier_pattern=candidate_pattern(names),
                   heads=candidate_heads(names))

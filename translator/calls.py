"""Argument rewrites of translated calls, as hipify-clang does them (HIPIFY's ``FuncArgCasts``).

HIP has no overload taking a kernel function pointer for ``hipFuncSetCacheConfig`` and friends, so the
argument becomes ``reinterpret_cast<const void*>(f)``; symbol APIs take ``HIP_SYMBOL(x)``;
``hipHostMalloc`` takes a flags argument; some driver, cuSPARSE (``--roc``) and cuDNN (``--miopen``)
calls gain, lose or reorder arguments. ``cudaEventCreate(&e, flags)`` with two arguments becomes
``hipEventCreateWithFlags`` (HIPIFY's ``FuncOverloads``).

The scanner leaves ``MARK`` right after each translated name that has a rewrite; ``rewrite_calls``
then parses the argument list that follows with a small bracket- and literal-aware splitter.
"""
from __future__ import annotations

import functools
import json
from collections import defaultdict
from pathlib import Path

from translator.literals import matching_paren, split_arguments
from translator.options import parse_version

MARK = "\x01"
DATA_FILE = Path(__file__).resolve().parent / "data" / "hip_call_rewrites.json"
WRAPPERS = {
    "hip_symbol": "HIP_SYMBOL", "reinterpret_cast": "reinterpret_cast<const void*>",
    "reinterpret_cast_size_t": "reinterpret_cast<size_t*>", "static_cast_uint64_t": "static_cast<uint64_t>",
    "int32_t": "int32_t", "int64_t": "int64_t",
}


class Cast:
    """One argument rewrite. Plain classes here: a dataclass costs a fresh process milliseconds to build."""

    __slots__ = ("arg", "kind", "value", "to", "count")

    def __init__(self, arg: int, kind: str, value: str = "", to: int = 0, count: int = 1) -> None:
        self.arg = arg
        self.kind = kind
        self.value = value
        self.to = to
        self.count = count

    def _key(self) -> tuple[int, str, str, int, int]:
        return (self.arg, self.kind, self.value, self.to, self.count)

    def __eq__(self, other: object) -> bool:
        return type(other) is Cast and self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def __repr__(self) -> str:
        return f"Cast{self._key()!r}"


class CallTables:
    __slots__ = ("casts", "overloads")

    def __init__(self, casts: dict[str, dict[tuple[bool, bool], tuple[Cast, ...]]],
                 overloads: dict[str, dict[int, str]]) -> None:
        self.casts = casts  # name -> (roc, miopen) -> casts
        self.overloads = overloads  # name -> number of arguments -> HIP name

    def wanted(self, roc: bool, miopen: bool) -> frozenset[str]:
        """CUDA names whose calls have a rewrite under these switches."""
        return _wanted(self, roc, miopen)


@functools.lru_cache(maxsize=8)
def _wanted(tables: CallTables, roc: bool, miopen: bool) -> frozenset[str]:
    return frozenset(name for name, variants in tables.casts.items() if (roc, miopen) in variants) | frozenset(
        tables.overloads)


@functools.cache
def hipify_hip_latest() -> tuple[int, ...]:
    """The HIP version hipify-clang writes where a call gains a version argument (HIP_LATEST)."""
    return parse_version(str(json.loads(DATA_FILE.read_text()).get("hipify_hip_latest", "")))


@functools.cache
def load_tables() -> CallTables:
    document = json.loads(DATA_FILE.read_text())
    casts: dict[str, dict[tuple[bool, bool], tuple[Cast, ...]]] = {}
    for name, variants in document["argument_casts"].items():
        casts[name] = {(v["roc"], v["miopen"]): tuple(Cast(**c) for c in v["casts"]) for v in variants}
    overloads = {name: {int(n): hip for n, hip in table.items()} for name, table in document["overloads"].items()}
    return CallTables(casts=casts, overloads=overloads)


def rewrite_calls(text: str, names: list[str], roc: bool, miopen: bool,
                  hip_version: tuple[int, ...] = ()) -> tuple[str, int]:
    """Apply the rewrites at each ``MARK`` (``names[i]`` is the CUDA name of the i-th). Returns (text, edits).

    ``hip_version`` fills the ``{hip_version}`` constant (``hipGetProcAddress``'s requested version).
    """
    tables = _with_version(load_tables(), hip_version)
    marks: list[int] = []
    position = text.find(MARK)
    while position >= 0:
        marks.append(position)
        position = text.find(MARK, position + 1)
    edits = 0
    for mark, name in reversed(list(zip(marks, names, strict=True))):
        text, changed = _one_call(text, mark, name, tables, roc, miopen)
        edits += changed
    return text, edits


@functools.lru_cache(maxsize=8)
def _with_version(tables: CallTables, hip_version: tuple[int, ...]) -> CallTables:
    number = str(hip_version[0] * 100 + hip_version[1]) if len(hip_version) >= 2 else "0"
    casts = {name: {key: tuple(Cast(c.arg, c.kind, c.value.replace("{hip_version}", number), c.to, c.count)
                               for c in variant) for key, variant in variants.items()}
             for name, variants in tables.casts.items()}
    return CallTables(casts=casts, overloads=tables.overloads)


def _one_call(text: str, mark: int, name: str, tables: CallTables, roc: bool, miopen: bool) -> tuple[str, bool]:
    open_at = mark + 1
    while open_at < len(text) and text[open_at] in " \t":
        open_at += 1
    close = matching_paren(text, open_at) if text.startswith("(", open_at) else None
    if close is None:
        return text[:mark] + text[mark + 1:], False
    arguments = split_arguments(text[open_at + 1:close])
    head = text[:mark]
    overload = tables.overloads.get(name, {}).get(len(arguments))
    renamed = overload is not None and not head.endswith(overload)
    if renamed and overload is not None:
        head = _rename_tail(head, overload)
    casts = tables.casts.get(name, {}).get((roc, miopen), ())
    if not casts:
        return head + text[mark + 1:], renamed
    body = edit_arguments(arguments, casts)
    return f"{head}{text[mark + 1:open_at]}({body}){text[close + 1:]}", True


def _rename_tail(head: str, new_name: str) -> str:
    """Replace the identifier that ends ``head`` (the HIP name just written)."""
    start = len(head)
    while start > 0 and (head[start - 1].isalnum() or head[start - 1] == "_"):
        start -= 1
    return head[:start] + new_name


def edit_arguments(arguments: list[str], casts: tuple[Cast, ...]) -> str:
    """The new argument list text; each original argument keeps its surrounding whitespace."""
    count = len(arguments)
    before: defaultdict[int, list[str]] = defaultdict(list)
    replaced: dict[int, str | None] = {}
    for cast in casts:
        index = cast.arg
        if cast.kind in WRAPPERS and index < count:
            replaced[index] = f"{WRAPPERS[cast.kind]}({arguments[index].strip()})"
        elif cast.kind == "add_const":
            before[min(index, count)].append(cast.value)
        elif cast.kind == "replace_const" and index < count:
            replaced[index] = cast.value
        elif cast.kind == "remove" and index < count:
            replaced[index] = None
        elif cast.kind == "add_var" and index < count:
            before[min(cast.to, count)].append(arguments[index].strip())
        elif cast.kind == "move" and index + cast.count <= count:
            before[min(cast.to, count)].extend(a.strip() for a in arguments[index:index + cast.count])
            replaced.update((i, None) for i in range(index, index + cast.count))
    pieces: list[str] = []
    for index, raw in enumerate(arguments):
        core = raw.strip()
        new = replaced.get(index, core)
        items = before[index] + ([new] if new is not None else [])
        if items:
            lead = raw[:len(raw) - len(raw.lstrip())]
            trail = raw[len(raw.rstrip()):]
            pieces.append(lead + ", ".join(items) + trail)
    if pieces and arguments and 0 in replaced and replaced[0] is None and not before[0]:
        first = arguments[0]  # the first argument went: the new first one takes its leading space
        pieces[0] = first[:len(first) - len(first.lstrip())] + pieces[0].lstrip()
    if before[count]:
        tail = ", ".join(before[count])
        pieces = [*pieces[:-1], pieces[-1].rstrip() + ", " + tail] if pieces else [tail]
    return ",".join(pieces)

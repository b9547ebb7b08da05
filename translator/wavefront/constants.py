"""Integer constants a file defines (``#define WARP_SIZE 32``, ``constexpr int kWarp = 32``, ``const``,
enumerators), evaluated, so ``tid % WARP_SIZE`` reads as ``tid % 32``.

Values are small integer expressions over literals and other constants. A name defined twice with
different values (``#if __HIP_PLATFORM_AMD__ / #define WARP_SIZE 64 / #else 32``) is unknown, so a
project that already chose per platform is never second-guessed. A constant whose value is the
wavefront size as HIP spells it (``warpSize``, ``__AMDGCN_WAVEFRONT_SIZE``) keeps that symbol.
Macros whose body holds ``__device__`` or ``__global__`` are collected too: they mark device code.
"""
from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import NamedTuple

from translator.wavefront.lexer import int_literal, token_texts


class Constant(NamedTuple):
    value: int | None  # None: unknown (not evaluable, or defined with different values)
    bits: int  # width of its type (32 or 64)
    symbol: str = ""  # "warpSize" (a run-time value in HIP 7) or "wavefront" (a safe compile-time spelling)


Constants = Mapping[str, Constant]
UNKNOWN = Constant(None, 32)
# HIP's own spellings of the wavefront size: a constant defined from them is right on every target.
WAVEFRONT_SYMBOLS = {"__AMDGCN_WAVEFRONT_SIZE": "wavefront", "__AMDGCN_WAVEFRONT_SIZE__": "wavefront",
                     "__builtin_amdgcn_wavefrontsize": "wavefront", "warpSize": "warpSize"}
DEVICE_QUALIFIERS = frozenset({"__global__", "__device__"})

# Both start with the literal "#" so the regex engine skips ahead fast; ``defines`` checks the line start.
_DEFINE = re.compile(r"\#[ \t]*define[ \t]+([A-Za-z_]\w*)(?![\w(])[ \t]*((?:[^\n\\]++|\\.)*+)", re.DOTALL)
DEFINE_ANY = re.compile(r"\#[ \t]*define[ \t]+([A-Za-z_]\w*(?:\([^)\n]*\))?)((?:[^\n\\]++|\\.)*+)", re.DOTALL)
# Written to start with a literal (``const``) so the regex engine skips ahead fast; the character before
# is checked in Python.
_DECLARED = re.compile(r"const(?:expr)?\b((?:\s+(?:static|constexpr|const|inline|__device__|__constant__|"
                       r"unsigned|signed|int|long|short|char|auto|size_t|(?:std::)?u?int(?:8|16|32|64)_t|uint))+)\s+"
                       r"([A-Za-z_]\w*)\s*(?:=|\{)\s*([^;,{}]+)")
_ENUM = re.compile(r"enum\b[^{;()]*\{([^{}]*)\}")
_ENUMERATOR = re.compile(r"^\s*([A-Za-z_]\w*)\s*(?:=\s*(.+?))?\s*$", re.DOTALL)
_ARITHMETIC = re.compile(r"[\w\s()+\-*/%<>&|^~']*$")  # what an integer expression may hold
_LONG_TYPE = re.compile(r"\blong\b|int64_t|size_t")
_CASTS = frozenset({"unsigned", "int", "long", "signed", "short", "uint32_t", "int32_t", "uint64_t", "int64_t",
                    "size_t", "uint"})


def collect(blanked: str, outer: Constants | None = None) -> tuple[dict[str, Constant], frozenset[str]]:
    """The constants ``blanked`` defines (evaluated with ``outer`` visible) and its device-qualifier macros."""
    found: dict[str, Constant] = {}
    device: set[str] = set()
    raw: list[tuple[str, str, int]] = []
    if "define" in blanked:
        for match in defines(blanked):
            name, body = match.group(1), match.group(2).replace("\\\n", " ")
            words = set(re.findall(r"\w+", body))
            if words & DEVICE_QUALIFIERS:
                device.add(name)
            else:
                raw.append((name, body, 32))
    if "const" in blanked:
        for match in declarations(blanked):
            raw.append((match.group(2), match.group(3), 64 if _LONG_TYPE.search(match.group(1)) else 32))
    if "enum" in blanked:
        for match in _ENUM.finditer(blanked):
            if not _word_before(blanked, match.start()):
                raw += _enumerators(match.group(1))
    local: dict[str, Constant] = {}
    seen: Mapping[str, Constant] = Layered(local, outer) if raw and outer else local
    for name, body, bits in raw:  # in text order, so later definitions see earlier ones
        value = evaluate(token_texts(body), seen) if _ARITHMETIC.match(body) else None
        constant = UNKNOWN if value is None else Constant(value.value, max(bits, value.bits), value.symbol)
        previous = found.get(name)
        if previous is not None and previous != constant:
            constant = UNKNOWN
        found[name] = local[name] = constant
    return found, frozenset(device)


@functools.lru_cache(maxsize=8)  # a scan asks several times for the same text (hashing a str is cached)
def defines(text: str, pattern: re.Pattern[str] = _DEFINE) -> list[re.Match[str]]:
    """``#define`` lines (object-like with ``_DEFINE``, any with ``DEFINE_ANY``) that start a line."""
    if "define" not in text:
        return []
    found = []
    for match in pattern.finditer(text):
        line_start = text.rfind("\n", 0, match.start()) + 1
        if not text[line_start:match.start()].strip():
            found.append(match)
    return found


@functools.lru_cache(maxsize=8)
def declarations(text: str) -> list[re.Match[str]]:
    """``const``/``constexpr`` integer declarations with a value (``constexpr int kWarp = 32``)."""
    if "const" not in text:
        return []
    return [m for m in _DECLARED.finditer(text) if not _word_before(text, m.start())]


def _word_before(text: str, position: int) -> bool:
    return position > 0 and (text[position - 1].isalnum() or text[position - 1] == "_")


def _enumerators(body: str) -> list[tuple[str, str, int]]:
    items: list[tuple[str, str, int]] = []
    following = 0
    for part in body.split(","):
        match = _ENUMERATOR.match(part)
        if match is None:
            continue
        if match.group(2):
            items.append((match.group(1), match.group(2), 32))
            literal = int_literal(match.group(2).strip())
            following = literal[0] + 1 if literal else -1
        elif following >= 0:
            items.append((match.group(1), str(following), 32))
            following += 1
    return items


class Layered(Mapping[str, Constant]):
    """``front`` over ``back`` without copying ``back`` (a tree's table is large)."""

    def __init__(self, front: Mapping[str, Constant], back: Mapping[str, Constant]) -> None:
        self.front = front
        self.back = back

    def __getitem__(self, name: str) -> Constant:
        found = self.front.get(name)
        return found if found is not None else self.back[name]

    def __contains__(self, name: object) -> bool:
        return name in self.front or name in self.back

    def __iter__(self) -> Iterator[str]:
        yield from self.front
        yield from (name for name in self.back if name not in self.front)

    def __len__(self) -> int:
        return len(self.front) + sum(1 for name in self.back if name not in self.front)


INTERESTING = frozenset({32, 31, 16, 5, 0xFFFFFFFF, -1})


class TreeFacts:
    """What the other files of a tree define: constants (merged) and device-qualifier macros. A plain class,
    not a dataclass: building a dataclass costs a fresh process milliseconds at import."""

    def __init__(self, constants: tuple[tuple[str, Constant], ...] = (),
                 device_macros: frozenset[str] = frozenset()) -> None:
        self.constants = constants
        self.device_macros = device_macros

    def __eq__(self, other: object) -> bool:
        return (type(other) is TreeFacts and self.constants == other.constants
                and self.device_macros == other.device_macros)

    def __hash__(self) -> int:  # part of TranslateOptions, which is hashed
        return hash((self.constants, self.device_macros))

    def __repr__(self) -> str:
        return f"TreeFacts(constants={self.constants!r}, device_macros={self.device_macros!r})"

    @classmethod
    def of(cls, files: Iterable[tuple[Mapping[str, Constant], frozenset[str]]]) -> TreeFacts:
        facts = list(files)
        table = merge(constants for constants, _ in facts)
        macros = frozenset().union(*(macros for _, macros in facts)) if facts else frozenset()
        return cls(tuple(sorted(table.items())), macros)

    @functools.cached_property
    def table(self) -> dict[str, Constant]:
        return dict(self.constants)

    @functools.cached_property
    def interesting(self) -> frozenset[str]:
        """Names whose value matters to the scan (32, 31, 16, 5, a full mask, warpSize)."""
        return frozenset(name for name, c in self.constants if c.value in INTERESTING or c.symbol == "warpSize")


NO_FACTS = TreeFacts()


def merge(tables: Iterable[Mapping[str, Constant]]) -> dict[str, Constant]:
    """One table for a tree: a name with different values in different files is unknown."""
    merged: dict[str, Constant] = {}
    for table in tables:
        for name, constant in table.items():
            previous = merged.get(name)
            merged[name] = constant if previous is None or previous == constant else UNKNOWN
    return merged


def evaluate(tokens: Sequence[str], constants: Constants) -> Constant | None:
    """The value of a small integer expression, or None when it is not one."""
    if not tokens:
        return None
    parser = _Parser(tokens, constants)
    try:
        result = parser.expression(0)
    except (IndexError, ValueError, ZeroDivisionError):
        return None
    return result if parser.position == len(tokens) else None


_BINARY = {"|": 1, "^": 2, "&": 3, "<<": 4, ">>": 4, "+": 5, "-": 5, "*": 6, "/": 6, "%": 6}


class _Parser:
    def __init__(self, tokens: Sequence[str], constants: Constants) -> None:
        self.tokens = tokens
        self.constants = constants
        self.position = 0

    def expression(self, level: int) -> Constant:
        left = self.unary()
        while self.position < len(self.tokens):
            op = self.tokens[self.position]
            precedence = _BINARY.get(op)
            if precedence is None or precedence <= level:
                break
            self.position += 1
            right = self.expression(precedence)
            left = _combine(op, left, right)
        return left

    def unary(self) -> Constant:
        token = self.tokens[self.position]
        self.position += 1
        if token in ("-", "~", "+"):
            inner = self.unary()
            if inner.value is None:
                return inner
            number: int = -inner.value if token == "-" else (~inner.value if token == "~" else inner.value)
            return Constant(number & ((1 << inner.bits) - 1) if token == "~" else number, inner.bits, inner.symbol)
        if token == "(":
            if self.tokens[self.position] in _CASTS:  # (unsigned)x, (unsigned long long)x
                words: list[str] = []
                while self.tokens[self.position] != ")":
                    words.append(self.tokens[self.position])
                    self.position += 1
                self.position += 1
                inner = self.unary()
                bits = 64 if "long" in words or any("64" in w or w == "size_t" for w in words) else 32
                value = None if inner.value is None else inner.value & ((1 << bits) - 1)
                return Constant(value, bits, inner.symbol)
            inner = self.expression(0)
            if self.tokens[self.position] != ")":
                raise ValueError("unbalanced")
            self.position += 1
            return inner
        if token in _CASTS and self.position < len(self.tokens) and self.tokens[self.position] == "(":
            inner = self.unary()  # uint32_t(-1): a functional cast
            bits = 64 if token in ("long", "uint64_t", "int64_t", "size_t") else 32
            return Constant(None if inner.value is None else inner.value & ((1 << bits) - 1), bits, inner.symbol)
        return self.primary(token)

    def primary(self, token: str) -> Constant:
        literal = int_literal(token)
        if literal is not None:
            return Constant(literal[0], literal[1])
        if token in WAVEFRONT_SYMBOLS:
            if self.position < len(self.tokens) and self.tokens[self.position] == "(":
                self.position += 2  # __builtin_amdgcn_wavefrontsize()
            return Constant(None, 32, WAVEFRONT_SYMBOLS[token])
        constant = self.constants.get(token)
        if constant is None:
            raise ValueError(token)
        return constant


def _combine(op: str, left: Constant, right: Constant) -> Constant:
    bits = max(left.bits, right.bits)
    symbol = left.symbol or right.symbol
    if left.value is None or right.value is None:
        return Constant(None, bits, symbol)
    a: int = left.value
    b: int = right.value
    results = {"|": lambda: a | b, "^": lambda: a ^ b, "&": lambda: a & b, "<<": lambda: a << b, ">>": lambda: a >> b,
               "+": lambda: a + b, "-": lambda: a - b, "*": lambda: a * b, "/": lambda: int(a / b),
               "%": lambda: a % b}
    return Constant(results[op]() & ((1 << 64) - 1) if op == "<<" else results[op](), bits, symbol)

"""Syntax highlighting for the diff view, built on Pygments.

Two entry points:

* `highlight_lines(text, filename)` highlights a whole file with Pygments'
  HtmlFormatter (`nowrap=True`). HtmlFormatter closes its spans at every
  newline, so splitting its output on "\\n" gives one self-contained HTML
  fragment per line.
* `WindowHighlighter` lexes only the lines a chunk of the diff shows. Pygments
  needs about 0.1-0.3 ms per C++ line on our machines, so lexing a whole
  20,000-line file (both sides) takes seconds; the first chunk must render in
  well under 150 ms. A window of visible lines starts lexing at the first of
  the `LOOKBACK` lines before it that could open a multi-line construct
  (`/*`, triple quotes, `#if 0`, a trailing backslash...), or at the window
  itself when none does. A construct opened further back shows unhighlighted
  or as code: a cosmetic cost we accept for speed. `PrerenderedSide` lexes
  whole files instead, for diffs prepared in the background.

Token HTML is produced by `render_pieces`: every text is passed through
`html.escape` and the only markup is `<span class="...">` with class names
taken from Pygments' own token table, so user content can never inject HTML.
"""

from __future__ import annotations

import html
from collections.abc import Callable, Iterable, Mapping, Sequence
from functools import lru_cache
from typing import cast

import pygments
from pygments import lex
from pygments.formatters import HtmlFormatter
from pygments.lexer import Lexer
from pygments.lexers import (
    BashLexer,
    CLexer,
    CMakeLexer,
    CppLexer,
    CudaLexer,
    DockerLexer,
    JsonLexer,
    MakefileLexer,
    PythonLexer,
    TextLexer,
    TOMLLexer,
    YamlLexer,
    get_lexer_for_filename,
)
from pygments.token import STANDARD_TYPES, _TokenType
from pygments.util import ClassNotFound

# (css class, text): one highlighted piece of a line; class "" means plain text.
Piece = tuple[str, str]

LOOKBACK = 12
# Text that may leave a lexer outside its root state at the end of a line.
_OPENERS = ("/*", '"""', "'''", "[[", 'R"', "#if 0", "`")
# Lines longer than this are shown unhighlighted: regex lexers can be very slow on
# minified or generated lines, and nobody reads them token by token.
MAX_HIGHLIGHT_LINE = 2000

_LEXERS_BY_NAME: dict[str, type[Lexer]] = {
    "cmakelists.txt": CMakeLexer,
    "makefile": MakefileLexer,
    "gnumakefile": MakefileLexer,
    "dockerfile": DockerLexer,
    "containerfile": DockerLexer,
}
_LEXERS_BY_SUFFIX: dict[str, type[Lexer]] = {
    ".cu": CudaLexer,
    ".cuh": CudaLexer,
    ".hip": CudaLexer,
    ".c": CLexer,
    ".h": CppLexer,
    ".hh": CppLexer,
    ".hpp": CppLexer,
    ".hxx": CppLexer,
    ".cc": CppLexer,
    ".cpp": CppLexer,
    ".cxx": CppLexer,
    ".inl": CppLexer,
    ".cmake": CMakeLexer,
    ".mk": MakefileLexer,
    ".mak": MakefileLexer,
    ".py": PythonLexer,
    ".pyi": PythonLexer,
    ".yml": YamlLexer,
    ".yaml": YamlLexer,
    ".toml": TOMLLexer,
    ".json": JsonLexer,
    ".sh": BashLexer,
    ".bash": BashLexer,
    ".dockerfile": DockerLexer,
}


def _lexer_class_for(filename: str) -> type[Lexer]:
    base = filename.replace("\\", "/").rsplit("/", 1)[-1]
    lower = base.lower()
    if lower in _LEXERS_BY_NAME:
        return _LEXERS_BY_NAME[lower]
    if lower.startswith(("dockerfile.", "containerfile.")):
        return cast(type[Lexer], DockerLexer)
    dot = lower.rfind(".")
    if dot > 0 and lower[dot:] in _LEXERS_BY_SUFFIX:
        return _LEXERS_BY_SUFFIX[lower[dot:]]
    try:
        return type(get_lexer_for_filename(base))
    except ClassNotFound:
        return cast(type[Lexer], TextLexer)


@lru_cache(maxsize=64)
def lexer_for_filename(filename: str) -> Lexer:
    """A Pygments lexer for `filename` that keeps every line (no newline stripping)."""
    return _lexer_class_for(filename)(stripnl=False, ensurenl=True)


def split_lines(text: str) -> list[str]:
    """Lines the way Pygments sees them: "\\r\\n" and "\\r" end lines, no terminators kept."""
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    if not text:
        return []
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()
    return lines


def highlight_lines(text: str, filename: str) -> list[str]:
    """Per-line highlighted HTML of a whole file (HtmlFormatter, spans never cross lines)."""
    lines = split_lines(text)
    if not lines:
        return []
    formatter = HtmlFormatter(nowrap=True)
    body = pygments.highlight(
        "\n".join(lines) + "\n", lexer_for_filename(filename), formatter
    )
    out = body.split("\n")
    return out[: len(lines)] if len(out) >= len(lines) else _plain_lines(lines)


def _plain_lines(lines: Sequence[str]) -> list[str]:
    return [html.escape(line) for line in lines]


def pygments_css(scope: str = ".diff-code", style: str = "default") -> str:
    """Stylesheet for token classes under `scope`, plus the changed-word markers."""
    defs = HtmlFormatter(style=style).get_style_defs(scope)
    # get_style_defs also emits unscoped rules for <pre> and line-number tables; drop them.
    rules = "\n".join(line for line in defs.splitlines() if line.startswith(scope))
    markers = (
        f"{scope} .wd {{ background-color: #ffc0c0; border-radius: 2px; }}\n"
        f"{scope} .wi {{ background-color: #a6f3a6; border-radius: 2px; }}\n"
    )
    return rules + "\n" + markers


@lru_cache(maxsize=512)
def token_class(ttype: _TokenType) -> str:
    """CSS class HtmlFormatter uses for `ttype` (nearest standard ancestor)."""
    while ttype not in STANDARD_TYPES:
        ttype = ttype.parent
    return cast(str, STANDARD_TYPES[ttype])


def render_pieces(pieces: Iterable[Piece]) -> str:
    """Escaped HTML for pieces, merging neighbours of the same class into one span."""
    out: list[str] = []
    current_class: str | None = None
    buffer: list[str] = []
    for css_class, text in pieces:
        if css_class != current_class and buffer:
            out.append(_span(current_class or "", "".join(buffer)))
            buffer = []
        current_class = css_class
        buffer.append(text)
    if buffer:
        out.append(_span(current_class or "", "".join(buffer)))
    return "".join(out)


def _span(css_class: str, text: str) -> str:
    escaped = html.escape(text)
    return f'<span class="{css_class}">{escaped}</span>' if css_class else escaped


def tokenize_window(lines: Sequence[str], lexer: Lexer) -> list[list[Piece]]:
    """Pieces per line for `lines` lexed as one text starting in the lexer's root state."""
    if any(len(line) > MAX_HIGHLIGHT_LINE for line in lines):
        return [[("", line)] for line in lines]
    result: list[list[Piece]] = [[]]
    for ttype, value in lex("\n".join(lines) + "\n", lexer):
        css_class = token_class(ttype)
        parts = value.split("\n")
        for index, part in enumerate(parts):
            if index:
                result.append([])
            if part:
                result[-1].append((css_class, part))
    if result and not result[-1]:
        result.pop()
    if len(result) != len(lines):
        return [[("", line)] for line in lines]
    return result


class WindowHighlighter:
    """Lexes only requested lines of one side, each window from a few lines earlier."""

    def __init__(self, lines: Sequence[str], filename: str) -> None:
        self._lines = lines
        self._lexer = lexer_for_filename(filename)
        self._pieces: dict[int, list[Piece]] = {}

    def pieces(self, index: int) -> list[Piece]:
        """Pieces of 0-based line `index`; `prepare` it first to lex in batches."""
        if index not in self._pieces:
            self.prepare([index])
        return self._pieces[index]

    def html(self, index: int) -> str:
        return render_pieces(self.pieces(index))

    def prepare(
        self, indices: Iterable[int], lookback_for: Callable[[int], int] | None = None
    ) -> None:
        """Lex every missing line of `indices`, merging nearby lines into one window.

        `lookback_for(first_line)` may say how many earlier lines a window needs
        (fewer than `LOOKBACK` when the caller knows the lexer state there is clean).
        """
        wanted = sorted({i for i in indices if i not in self._pieces})
        for start, stop in _windows(wanted, 2):
            if lookback_for is None:
                first = start - construct_lookback(self._lines, start)
            else:
                first = max(0, start - lookback_for(start))
            lexed = tokenize_window(self._lines[first:stop], self._lexer)
            for offset, line_pieces in enumerate(lexed[start - first :]):
                self._pieces.setdefault(start + offset, line_pieces)


def construct_lookback(lines: Sequence[str], start: int) -> int:
    """Lines before `start` to lex first: back to the earliest one that may open a construct."""
    first = max(0, start - LOOKBACK)
    for index in range(first, start):
        line = lines[index]
        if line.rstrip().endswith("\\") or any(opener in line for opener in _OPENERS):
            return start - index
    return 0


# Token classes that may continue on the next line (block comments, strings, preprocessor lines).
_OPEN_ENDED_PREFIXES = ("cm", "s", "cp", "err")


def ends_in_clean_state(pieces: Sequence[Piece]) -> bool | None:
    """Whether a lexer is (almost surely) back in its root state after this line; None if blank."""
    for css_class, text in reversed(pieces):
        if text.strip():
            return not css_class.startswith(_OPEN_ENDED_PREFIXES)
    return None


_CLASS_TABLE: tuple[str, ...] = tuple(sorted(set(STANDARD_TYPES.values())))
_CLASS_INDEX = {css_class: index for index, css_class in enumerate(_CLASS_TABLE)}


def encode_pieces(line: str, pieces: Sequence[Piece]) -> bytes:
    """Compact form of a line's pieces: (class index, 7-bit varint length) per piece.

    The texts are not stored: they are slices of `line`. About 3 bytes a token,
    against some 25 for the rendered HTML, so prerendered diffs stay small in the cache.
    """
    if "".join(text for _, text in pieces) != line:
        return b""
    out = bytearray()
    for css_class, text in pieces:
        out.append(_CLASS_INDEX.get(css_class, _CLASS_INDEX[""]))
        length = len(text)
        while length >= 0x80:
            out.append(0x80 | (length & 0x7F))
            length >>= 7
        out.append(length)
    return bytes(out)


def decode_pieces(line: str, code: bytes) -> list[Piece]:
    """Pieces from `encode_pieces`; an empty code means "unhighlighted"."""
    if not code:
        return [("", line)] if line else []
    pieces: list[Piece] = []
    position = cursor = 0
    while cursor < len(code):
        css_class = _CLASS_TABLE[code[cursor]]
        cursor += 1
        length = shift = 0
        while True:
            byte = code[cursor]
            cursor += 1
            length |= (byte & 0x7F) << shift
            shift += 7
            if byte < 0x80:
                break
        pieces.append((css_class, line[position : position + length]))
        position += length
    return pieces


class PrerenderedSide:
    """Pieces of one side's lines, lexed ahead of time over the whole file (exact state)."""

    def __init__(self, lines: Sequence[str], codes: Mapping[int, bytes]) -> None:
        self._lines = lines
        self._codes = codes

    @classmethod
    def highlight(
        cls, lines: Sequence[str], filename: str, keep: Iterable[int] | None = None
    ) -> PrerenderedSide:
        """Lex all `lines`; keep the pieces of the `keep` lines (all when None)."""
        lexed = tokenize_window(lines, lexer_for_filename(filename))
        indices = range(len(lines)) if keep is None else keep
        return cls(lines, {i: encode_pieces(lines[i], lexed[i]) for i in indices})

    def prepare(
        self, indices: Iterable[int], lookback_for: Callable[[int], int] | None = None
    ) -> None:
        """Nothing to do: kept for interface parity with `WindowHighlighter`."""

    def pieces(self, index: int) -> list[Piece]:
        return decode_pieces(self._lines[index], self._codes[index])

    def html(self, index: int) -> str:
        return render_pieces(self.pieces(index))


def _windows(sorted_indices: Sequence[int], gap: int) -> list[tuple[int, int]]:
    """Half-open ranges covering the indices; ranges closer than `gap` are merged."""
    ranges: list[tuple[int, int]] = []
    for index in sorted_indices:
        if ranges and index - ranges[-1][1] <= gap:
            ranges[-1] = (ranges[-1][0], index + 1)
        else:
            ranges.append((index, index + 1))
    return ranges

"""The commonest warp reduction, found from the text without tokenizing its function:
``for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(m, v, o)`` (or a scan whose offset doubles
while below 32). The token-level analysis (``translator.wavefront.loops``) finds the same loops, at the
same offsets, in the functions it looks at."""
from __future__ import annotations

import functools
import re
from collections.abc import Mapping

from translator.literals import matching_paren, split_arguments
from translator.wavefront.constants import Constant, evaluate
from translator.wavefront.lexer import token_texts
from translator.wavefront.model import Hazard, why
from translator.wavefront.regions import _matching_brace, _not_code
from translator.wavefront.survey import word_char

_LOOP = re.compile(r"for\s*\(\s*(?:[A-Za-z_][\w:]*\s+){0,3}([A-Za-z_]\w*)\s*=\s*([^;]{1,60}?)\s*;([^;]{0,80});([^;)]{1,60})\)")
_OFFSET_SHUFFLE = re.compile(r"__shfl_(?:down|up|xor)(_sync)?\s*\(")
HALVING = "halving"
DOUBLING = "doubling"


def shuffle_loops(text: str, table: Mapping[str, Constant], shufflers: frozenset[str],
                  comments: list[tuple[int, int]]) -> list[Hazard]:
    """The reduction loops of ``text`` that stop at 32 lanes (``shufflers``: the file's shuffle macros)."""
    found: list[Hazard] = []
    last_shuffle = max([text.rfind("__shfl_"), *(text.rfind(name) for name in shufflers)])
    for match in _LOOP.finditer(text):
        start = match.start()
        if start > last_shuffle:
            break  # a loop that starts after the last shuffle has none in its body: the rest is not searched
        if start and word_char(text, start - 1):
            continue
        variable, init, condition, step = match.groups()
        direction = step_direction(variable, step)
        if not direction or _not_code(text, start, comments):
            continue  # decided by the step alone (most loops end here): the start is not evaluated
        fix = _loop_fix(variable, init, condition, direction, table)
        if fix and _loop_shuffles_by(text, match.end(), variable, table, shufflers):
            where = (match.start(1), match.end(2))
            found.append(Hazard("reduction-offset-16", *where, why("reduction-offset-16"), fix))
    return found


@functools.lru_cache(maxsize=256)  # loops repeat their steps (o >>= 1) within a file and across a tree
def step_direction(variable: str, step: str) -> str:
    """HALVING for ``o >>= 1``, ``o /= 2``, ``o = o >> 1``..., DOUBLING for ``o <<= 1``, ``o *= 2``,
    ``o += o``..., else ""."""
    if ">>" not in step and "/" not in step and "<<" not in step and "*" not in step and "+=" not in step:
        return ""  # i++, i += stride
    step = "".join(step.split())
    if step in (f"{variable}>>=1", f"{variable}/=2", f"{variable}={variable}>>1", f"{variable}={variable}/2"):
        return HALVING
    if step in (f"{variable}<<=1", f"{variable}*=2", f"{variable}+={variable}", f"{variable}={variable}<<1",
                f"{variable}={variable}*2"):
        return DOUBLING
    return ""


@functools.lru_cache(maxsize=1024)
def tokens(expression: str) -> tuple[str, ...]:
    """``token_texts`` of a loop header's or an argument's text, kept: the same few recur everywhere."""
    return tuple(token_texts(expression))


def value(words: tuple[str, ...], table: Mapping[str, Constant]) -> Constant | None:
    """``evaluate(words, table)``, kept per expression and the constants it names: loop starts and
    shuffle widths are a few expressions (``16``, ``blockDim.x / 2``) met again and again."""
    return _value(words, tuple((word, table[word]) for word in words if word in table))


@functools.lru_cache(maxsize=1024)
def _value(words: tuple[str, ...], named: tuple[tuple[str, Constant], ...]) -> Constant | None:
    return evaluate(words, dict(named))  # the only constants evaluate reads are those the words name


def _loop_fix(variable: str, init: str, condition: str, direction: str, table: Mapping[str, Constant]) -> str:
    start = value(tokens(init), table)
    if start is None or start.symbol or start.value is None:
        return ""
    if start.value == 16 and direction == HALVING:
        return f"start at warpSize / 2 ({variable} = warpSize / 2)"
    if start.value == 1 and direction == DOUBLING:
        words = tokens(condition)
        limit = value(words[2:], table) if len(words) > 2 and words[0] == variable else None
        if limit is not None and not limit.symbol and (words[1], limit.value) in (("<", 32), ("<=", 16)):
            return f"run while {variable} < warpSize"
    return ""


def _loop_shuffles_by(text: str, after: int, variable: str, table: Mapping[str, Constant],
                      shufflers: frozenset[str]) -> bool:
    """Whether the loop body after ``after`` shuffles by ``variable`` with no explicit width of 32 or less."""
    position = after
    while position < len(text) and text[position].isspace():
        position += 1
    end = _matching_brace(text, position) if text.startswith("{", position) else text.find(";", position)
    body = text[position:end if end >= 0 else len(text)]
    for name in shufflers:
        for call in re.finditer(rf"\b{re.escape(name)}\s*\(([^;]*)", body):
            if re.search(rf"\b{re.escape(variable)}\b", call.group(1)):
                return True
    for call in _OFFSET_SHUFFLE.finditer(body):
        close = matching_paren(body, call.end() - 1)
        if close is None:
            continue
        arguments = split_arguments(body[call.end():close])
        offset = 2 if call.group(1) else 1
        if len(arguments) <= offset or variable not in tokens(arguments[offset]):
            continue
        if len(arguments) == offset + 1:
            return True
        width = value(tokens(arguments[offset + 1]), table)
        if width is not None and (bool(width.symbol) or (width.value or 0) > 32):
            return True
    return False

"""One device function seen as tokens: brackets, declarations and assignments, and what each value is
derived from (thread index, lane, ballot...), enough data flow to tell a lane from a matrix column."""
from __future__ import annotations

import re
from collections.abc import Mapping
from typing import NamedTuple

from translator.wavefront.constants import Constant, Layered, evaluate
from translator.wavefront.lexer import int_literal

# What a value is derived from (bit flags).
THREAD = 1  # the thread's index in its block (threadIdx, thread_rank())
LANE32 = 2  # a lane computed for 32 lanes (tid % 32, tid & 31)
WARP32 = 4  # a warp id computed for 32 lanes (tid / 32, tid >> 5)
LANE = 8  # a lane as HIP spells it (__lane_id(), tid % warpSize)
BALLOT = 16  # a ballot or active mask
BLOCKDIM = 32  # the block's size
ANY_LANE = LANE32 | LANE

THREAD_SOURCES = frozenset({"threadIdx", "hipThreadIdx_x", "thread_rank", "__threadIdx_x"})
BALLOT_CALLS = frozenset({"__ballot_sync", "__ballot", "__ballot64", "__activemask", "__match_any_sync",
                          "__match_all_sync"})
LANE_CALLS = frozenset({"__lane_id", "__lanemask_lt", "__lanemask_le", "__lanemask_gt", "__lanemask_ge"})
WARP_SIZE_SPELLINGS = frozenset({"warpSize", "__AMDGCN_WAVEFRONT_SIZE", "__AMDGCN_WAVEFRONT_SIZE__",
                                 "__builtin_amdgcn_wavefrontsize"})
SHUFFLES = frozenset({"__shfl_sync", "__shfl_up_sync", "__shfl_down_sync", "__shfl_xor_sync", "__shfl",
                      "__shfl_up", "__shfl_down", "__shfl_xor"})
WARP_OPS = SHUFFLES | BALLOT_CALLS | frozenset({"__any_sync", "__all_sync", "__any", "__all", "__syncwarp",
                                                "__match_any_sync", "__match_all_sync", "__reduce_add_sync",
                                                "__reduce_min_sync", "__reduce_max_sync", "__reduce_or_sync",
                                                "__reduce_and_sync", "__reduce_xor_sync", "__popc", "__ffs"})
NOT_TYPES = frozenset({"return", "else", "case", "goto", "do", "throw", "new", "delete", "sizeof", "typedef",
                       "using", "co_return", "if", "while", "for", "switch", "default", "break", "continue"})
QUALIFIERS = frozenset({"const", "volatile", "static", "register", "constexpr", "__shared__", "extern", "inline",
                        "__restrict__", "__device__", "__constant__", "__forceinline__"})
INT32_WORDS = frozenset({"unsigned", "int", "signed", "uint32_t", "int32_t", "uint", "u32", "std", "::"})
ASSIGNMENTS = frozenset({"=", "|=", "&=", "^=", "+=", "-=", "*=", "/=", "%=", "<<=", ">>="})
OPENERS = {"(": ")", "[": "]", "{": "}"}
LANE_NAME = re.compile(r"(?i)(?:^|_)(?:lane|lanes|laneid|lane_?idx|lid|wlane)(?:_?id|_?idx|_?index|_?num|_?in_?warp)?\d*$"
                       r"|^lane|lane$|_in_?warp$|inwarp$|^(?:warp_?)?tid_?in_?warp|^ltid$|^warp_?(?:t|thread)id$")
WARP_NAME = re.compile(r"(?i)warp(?!_?size|s_?per|_?thread|_?tid)|^wid$|^w_?id$|^wrp|_wid$")
WARP_COUNT_NAME = re.compile(r"(?i)(?:num|n|total|max)_?warps|warps_?(?:per|in|count|num)|^warps$|warp_?count")


class Def(NamedTuple):
    name: str
    at: int  # token index of the name
    type_start: int  # token range of the declared type ([type_start, index) for declarations)
    type_end: int
    init_start: int  # token range of the value ([init_start, init_end)); empty when none
    init_end: int
    op: str  # "decl" for a declaration, else the assignment operator
    dims: tuple[tuple[int, int], ...] = ()  # array dimensions (token ranges), declarations only
    alone: bool = True  # the only declarator of its statement


def is_identifier(token: str) -> bool:
    return token.isidentifier()


class Body:
    """Tokens of one function (``t`` texts, ``o`` offsets) and what they mean."""

    def __init__(self, texts: list[str], offsets: list[int], constants: Mapping[str, Constant],
                 name: str = "", param_types: Mapping[str, tuple[str, ...]] | None = None,
                 shuffle_macros: frozenset[str] = frozenset(), tile_parameter: bool = False) -> None:
        self.t = texts
        self.o = offsets
        self.n = len(texts)
        self.name = name
        self.param_types = dict(param_types or {})
        self.shuffle_macros = shuffle_macros
        self.tile_parameter = tile_parameter  # a thread_block_tile<32> parameter (cooperative groups)
        self.match, self.enclosing = self._brackets()
        self.defs: list[Def] = []
        self.defs_of: dict[str, list[Def]] = {}
        self.uses: dict[str, list[int]] = {}
        self._parse()
        self.shared_arrays = frozenset(d.name for d in self.defs if d.dims and
                                       "__shared__" in self.t[d.type_start:d.type_end])
        self.constants: Mapping[str, Constant] = constants
        self._local_constants()
        self.taint: dict[str, int] = {p: THREAD for p in self.param_types if thread_name(p)}
        self.has_warp_ops = any(tok in WARP_OPS for tok in texts)
        self._propagate()

    # -- structure -------------------------------------------------------------------------
    def _brackets(self) -> tuple[dict[int, int], list[int]]:
        match: dict[int, int] = {}
        enclosing = [-1] * self.n  # innermost "(" around each token
        stack: list[int] = []
        parens: list[int] = []
        for index, token in enumerate(self.t):
            enclosing[index] = parens[-1] if parens else -1
            if token in OPENERS:
                stack.append(index)
                if token == "(":
                    parens.append(index)
            elif token in (")", "]", "}") and stack:
                opening = stack.pop()
                match[opening], match[index] = index, opening
                if token == ")" and parens:
                    parens.pop()
        return match, enclosing

    def skip(self, index: int) -> int:
        """The index after the bracket group opened at ``index`` (or index + 1)."""
        return self.match.get(index, index) + 1 if self.t[index] in OPENERS else index + 1

    def expression_end(self, start: int) -> int:
        """End of the expression starting at ``start``: the first top-level ``,`` ``;`` or unmatched closer."""
        index = start
        while index < self.n:
            token = self.t[index]
            if token in (",", ";", ")", "]", "}"):
                return index
            index = self.skip(index)
        return index

    def statement_start(self, index: int) -> int:
        while index > 0:
            token = self.t[index - 1]
            if token in (";", "{", "}"):
                return index
            if token in (")", "]"):
                index = self.match.get(index - 1, index - 1)
                continue
            if token in ("(", "["):
                return index
            index -= 1
        return 0

    # -- declarations and assignments ----------------------------------------------------
    def _parse(self) -> None:
        t = self.t
        statement_types: dict[int, tuple[int, int]] = {}
        for index, token in enumerate(t):
            if not is_identifier(token):
                continue
            self.uses.setdefault(token, []).append(index)
            following = t[index + 1] if index + 1 < self.n else ""
            if following not in ASSIGNMENTS and following not in ("[", ";", ",") or token in NOT_TYPES:
                continue
            previous = t[index - 1] if index else ";"
            definition: Def | None = None
            type_start = self._type_start(index)
            if type_start < index and following in ("=", "[", ";", ","):
                start = self.statement_start(index)
                statement_types[start] = (type_start, index)
                definition = self._declaration(index, type_start, index)
            elif previous == "," and following in ("=", "[", ";", ","):
                span = statement_types.get(self.statement_start(index))
                if span is not None:
                    definition = self._declaration(index, *span)
            elif following in ASSIGNMENTS and (previous in (";", "{", "}", ")", "else", ":", "do") or
                                               previous in (".", "->") and index >= 2 and is_identifier(t[index - 2])):
                end = self.expression_end(index + 2)
                definition = Def(token, index, index, index, index + 2, end, following)
            if definition is not None:
                self.defs.append(definition)
                self.defs_of.setdefault(token, []).append(definition)

    def _type_start(self, index: int) -> int:
        """First token of the type written before the name at ``index`` (== index when there is none)."""
        start = index
        while start > 0:
            token = self.t[start - 1]
            if token in ("*", "&", "::"):
                start -= 1
            elif token == ">":
                depth, probe = 0, start - 1
                while probe >= 0:
                    depth += {">": 1, "<": -1}.get(self.t[probe], 0)
                    if depth == 0 or self.t[probe] in (";", "{", "}"):
                        break
                    probe -= 1
                if probe < 0 or self.t[probe] != "<":
                    break
                start = probe
            elif is_identifier(token) and token not in NOT_TYPES:
                start -= 1
            else:
                break
        words = [w for w in self.t[start:index] if is_identifier(w)]
        return start if words and any(w not in QUALIFIERS for w in words) else index

    def _declaration(self, index: int, type_start: int, type_end: int) -> Def:
        dims: list[tuple[int, int]] = []
        cursor = index + 1
        while cursor < self.n and self.t[cursor] == "[":
            close = self.match.get(cursor, cursor)
            dims.append((cursor + 1, close))
            cursor = close + 1
        init_start = init_end = cursor
        if cursor < self.n and self.t[cursor] == "=":
            init_start, init_end = cursor + 1, self.expression_end(cursor + 1)
        end = self.expression_end(init_end)
        statement = self.statement_start(index)
        alone = (end >= self.n or self.t[end] != ",") and (statement >= index or "," not in self.t[statement:index])
        return Def(self.t[index], index, type_start, type_end, init_start, init_end, "decl", tuple(dims), alone)

    def _local_constants(self) -> None:
        local: dict[str, Constant] = {}
        for definition in self.defs:
            words = self.t[definition.type_start:definition.type_end]
            if definition.op == "decl" and ("const" in words or "constexpr" in words) \
                    and len(self.defs_of[definition.name]) == 1 and definition.init_end > definition.init_start:
                value = evaluate(self.t[definition.init_start:definition.init_end], self.constants)
                if value is not None:
                    if not local:
                        self.constants = Layered(local, self.constants)  # local constants go in front
                    local[definition.name] = value

    # -- data flow -----------------------------------------------------------------------
    def _propagate(self) -> None:
        for _ in range(2):
            for definition in self.defs:
                if definition.init_end > definition.init_start:
                    flags = self.expression_taint(definition.init_start, definition.init_end)
                    self.taint[definition.name] = self.taint.get(definition.name, 0) | flags

    def expression_taint(self, start: int, end: int) -> int:
        flags = 0
        for index in range(start, end):
            token = self.t[index]
            if token in THREAD_SOURCES:
                flags |= THREAD
            elif token == "blockDim":
                flags |= BLOCKDIM
            elif token in BALLOT_CALLS:
                flags |= BALLOT
            elif token in LANE_CALLS:
                flags |= LANE
            elif token in ("%", "&", "/", ">>"):
                flags |= self.op_taint(index)
            else:
                flags |= self.taint.get(token, 0)
        return flags

    def op_taint(self, index: int) -> int:
        """LANE32/WARP32/LANE for ``x % 32``, ``x & 31``, ``x / 32``, ``x >> 5``, ``x % warpSize`` on a thread index."""
        value = self.right_value(index)
        if value is None:
            return 0
        left = self.left_operand(index)
        left_flags = self.expression_taint(left, index) if left < index else 0
        if not left_flags & THREAD or left_flags & (LANE32 | WARP32 | LANE):
            return 0
        op = self.t[index]
        if value.symbol:
            return LANE if op in ("%", "&") else 0
        if (op, value.value) in (("%", 32), ("&", 31)):
            return LANE32
        if (op, value.value) in (("/", 32), (">>", 5)):
            return WARP32
        return 0

    def right_value(self, index: int) -> Constant | None:
        """The constant right operand of the binary operator at ``index``."""
        start = index + 1
        if start >= self.n:
            return None
        end = self.skip(start) if self.t[start] == "(" else start + 1
        return evaluate(self.t[start:end], self.constants)

    def left_operand(self, index: int) -> int:
        """Start of the left operand of the binary operator at ``index`` (precedence-aware, best effort)."""
        level = _PRECEDENCE.get(self.t[index], 0)
        cursor = index
        while True:
            cursor = self._primary_start(cursor)
            while cursor > 0 and self.t[cursor - 1] in ("-", "!", "~", "+") \
                    and (cursor < 2 or not _ends_operand(self.t[cursor - 2])):
                cursor -= 1  # a unary prefix
            if cursor <= 0:
                return 0
            before = _PRECEDENCE.get(self.t[cursor - 1])
            if before is not None and before >= level and cursor >= 2 and _ends_operand(self.t[cursor - 2]):
                cursor -= 1  # a binary operator binding at least as tight: still the left operand
                continue
            return cursor

    def _primary_start(self, end: int) -> int:
        """Start of the postfix expression ending just before ``end`` (a.b, a[i], f(x), (e), x)."""
        cursor = end
        while cursor > 0:
            token = self.t[cursor - 1]
            if token in (")", "]"):
                cursor = self.match.get(cursor - 1, cursor - 1)
                if cursor > 0 and (is_identifier(self.t[cursor - 1]) or self.t[cursor - 1] in (")", "]")):
                    continue
                return cursor
            if is_identifier(token) or int_literal(token) is not None or token[:1].isdigit():
                cursor -= 1
                if cursor > 0 and self.t[cursor - 1] in (".", "->", "::"):
                    cursor -= 1
                    continue
                return cursor
            return cursor
        return cursor

    # -- questions the detectors ask ---------------------------------------------------------
    def call_at(self, index: int) -> tuple[str, int]:
        """The function called around token ``index`` and which argument ``index`` is in (("", -1) if none)."""
        opening = self.enclosing[index]
        while opening >= 0:
            if opening > 0 and is_identifier(self.t[opening - 1]):
                argument = sum(1 for k in range(opening + 1, index) if self.t[k] == ","
                               and self.enclosing[k] == opening)
                return self.t[opening - 1], argument
            opening = self.enclosing[opening]
        return "", -1

    def arguments(self, opening: int) -> list[tuple[int, int]]:
        """Token ranges of the arguments of the call whose "(" is at ``opening``."""
        close = self.match.get(opening, self.n)
        ranges: list[tuple[int, int]] = []
        start = opening + 1
        index = start
        while index < close:
            if self.t[index] == ",":
                ranges.append((start, index))
                start = index + 1
                index += 1
            else:
                index = self.skip(index)
        if close > opening + 1:
            ranges.append((start, close))
        return ranges

    def is_32bit_int(self, start: int, end: int) -> bool:
        words = [w for w in self.t[start:end] if w not in QUALIFIERS]
        return bool(words) and all(w in INT32_WORDS for w in words) and any(w != "::" and w != "std" for w in words)

    def lane_like(self, name: str) -> bool:
        return bool(LANE_NAME.search(name)) or bool(self.taint.get(name, 0) & ANY_LANE)

    def value(self, start: int, end: int) -> Constant | None:
        return evaluate(self.t[start:end], self.constants)


_PRECEDENCE = {"*": 13, "/": 13, "%": 13, "+": 12, "-": 12, "<<": 11, ">>": 11, "<": 9, ">": 9, "<=": 9, ">=": 9,
               "==": 8, "!=": 8, "&": 7, "^": 6, "|": 5, "&&": 4, "||": 3}


def _ends_operand(token: str) -> bool:
    return is_identifier(token) or token[:1].isdigit() or token in (")", "]")


def thread_name(name: str) -> bool:
    return re.fullmatch(r"(?i)tid|t_?id|thread_?id(?:x)?|thread_?idx|tidx|l_?tid|local_?tid|thread_?index", name) is not None


def span(body: Body, start: int, end: int) -> tuple[int, int]:
    """Offsets in the text of the tokens [start, end)."""
    last = max(start, end - 1)
    return body.o[start], body.o[last] + len(body.t[last])


def lane_operand(body: Body, start: int, end: int) -> bool:
    """Whether tokens [start, end) are a lane: a lane-named variable, HIP's lane (``__lane_id()``,
    ``tid % warpSize``), or ``% 32`` / ``& 31`` applied directly to the thread index."""
    for index in range(start, end):
        token = body.t[index]
        if token in LANE_CALLS or is_identifier(token) and (
                LANE_NAME.search(token) or body.taint.get(token, 0) & LANE):
            return True
        if token in ("%", "&") and body.op_taint(index) & ANY_LANE:
            left = body.left_operand(index)
            if any(t in THREAD_SOURCES or thread_name(t) for t in body.t[left:index]):
                return True
    return False

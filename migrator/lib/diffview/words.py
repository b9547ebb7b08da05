"""Changed-word highlighting inside a pair of replaced lines.

The word diff runs on highlighted pieces, not on HTML: each Pygments token is
split further into words, runs of spaces and single punctuation characters,
and `difflib.SequenceMatcher` (stdlib; lines are short, so its quadratic worst
case does not matter) compares the piece texts. Changed pieces are wrapped in
`<span class="wd">` (left, deleted) or `<span class="wi">` (right, inserted)
around their token spans. Every text goes through `html.escape` in
`render_pieces`, so no HTML is ever parsed or overlaid.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Sequence

from migrator.lib.diffview.highlight import Piece, render_pieces

_WORD = re.compile(r"\w+|\s+|[^\w\s]")
# Beyond this many pieces per line the word diff is skipped (generated code, data).
MAX_WORD_PIECES = 1500

DELETED_CLASS = "wd"
INSERTED_CLASS = "wi"


def split_words(pieces: Sequence[Piece]) -> list[Piece]:
    """Pieces cut at word boundaries, keeping each word's token class."""
    return [
        (css_class, word) for css_class, text in pieces for word in _WORD.findall(text)
    ]


def changed_flags(
    left: Sequence[Piece], right: Sequence[Piece]
) -> tuple[list[bool], list[bool]]:
    """For each word piece of both lines: whether it differs from the other line."""
    left_changed = [False] * len(left)
    right_changed = [False] * len(right)
    matcher = difflib.SequenceMatcher(
        None, [text for _, text in left], [text for _, text in right], autojunk=False
    )
    for kind, i1, i2, j1, j2 in matcher.get_opcodes():
        if kind == "equal":
            continue
        left_changed[i1:i2] = [True] * (i2 - i1)
        right_changed[j1:j2] = [True] * (j2 - j1)
    return left_changed, right_changed


def render_marked(
    pieces: Sequence[Piece], changed: Sequence[bool], marker_class: str
) -> str:
    """HTML of `pieces` with each run of changed pieces wrapped in one marker span."""
    out: list[str] = []
    start = 0
    while start < len(pieces):
        stop = start
        while stop < len(pieces) and changed[stop] == changed[start]:
            stop += 1
        html_run = render_pieces(pieces[start:stop])
        out.append(
            f'<span class="{marker_class}">{html_run}</span>'
            if changed[start]
            else html_run
        )
        start = stop
    return "".join(out)


def render_word_diff(left: Sequence[Piece], right: Sequence[Piece]) -> tuple[str, str]:
    """HTML for a replaced line pair, changed words marked on both sides."""
    left_words = split_words(left)
    right_words = split_words(right)
    if len(left_words) > MAX_WORD_PIECES or len(right_words) > MAX_WORD_PIECES:
        return render_pieces(left), render_pieces(right)
    left_changed, right_changed = changed_flags(left_words, right_words)
    return (
        render_marked(left_words, left_changed, DELETED_CLASS),
        render_marked(right_words, right_changed, INSERTED_CLASS),
    )

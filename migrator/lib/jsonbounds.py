"""JSON from strangers, bounded before it is parsed: size first, then how deeply it nests.

The nesting check skips string contents (brackets in a commit message do not count) and runs in
linear time even on malformed input: an unterminated string simply runs to the end of the body.
A parser reading left to right is never deeper than the running count of brackets opened and not
yet closed, so bounding the largest such count bounds the parser's recursion, balanced or not.
"""
from __future__ import annotations

import json
import re
from array import array
from itertools import accumulate

_STRING = re.compile(rb'"(?:[^"\\]++|\\.)*+(?:"|\Z)', re.DOTALL)
_NOT_BRACKETS = bytes(sorted(set(range(256)) - set(b"[]{}")))
_STEPS = bytes.maketrans(b"[{]}", b"\x01\x01\xff\xff")  # +1 for an opening bracket, -1 (signed) for a closing one


class JsonBoundsError(ValueError):
    """The body is too large, nests too deeply or is not JSON; the message says which."""


def nesting_depth(body: bytes) -> int:
    """The deepest level of arrays and objects in ``body`` (0 for a scalar), strings skipped."""
    steps = _STRING.sub(b"", body).translate(_STEPS, _NOT_BRACKETS)
    return max(0, max(accumulate(array("b", steps)), default=0))


def load_bounded(body: bytes, *, max_bytes: int, max_depth: int) -> object:
    """Parse ``body`` as JSON once it is known to be at most ``max_bytes`` and ``max_depth`` deep."""
    if len(body) > max_bytes:
        raise JsonBoundsError(f"body of {len(body)} bytes is over the limit of {max_bytes}")
    if nesting_depth(body) > max_depth:
        raise JsonBoundsError(f"JSON nests more than {max_depth} levels deep")
    try:
        return json.loads(body)
    except (ValueError, UnicodeDecodeError, RecursionError) as exc:
        raise JsonBoundsError("body is not JSON") from exc

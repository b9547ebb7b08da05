"""Exclude globs: the one matcher that decides which paths of a source tree every stage leaves alone.

Scan, hipify, the compile and link unit discovery and the CUDA reference build all ask this module,
so one setting excludes the same files everywhere. The rules are those of ``.gitignore``, which users
already know; paths are relative to the migrated tree (``source_subdir`` when it is set), with ``/``:

* A pattern with no ``/`` (a trailing one aside) matches a file or directory *name* at any depth:
  ``*.cu`` excludes ``a.cu`` and ``src/a.cu``; ``build`` excludes every directory named ``build``.
* A pattern with a ``/`` at its start or in its middle matches the whole path from the tree's root:
  ``src/*.cu`` excludes ``src/a.cu`` but not ``src/x/a.cu`` nor ``lib/src/a.cu``; a leading ``/``
  only anchors (``/Makefile`` is the top-level one).
* A trailing ``/`` matches directories only: ``build/`` leaves a file named ``build`` in.
* ``*`` matches within one path segment, ``?`` one character other than ``/``, ``[abc]``, ``[a-z]``
  and ``[!abc]`` one character of a set; ``\\`` makes the next character literal.
* ``**`` as a whole segment spans directories: ``**/x`` is ``x`` at any depth, ``x/**`` everything
  inside ``x``, ``a/**/b`` ``b`` anywhere under ``a`` (``a/b`` included).
* A directory that matches excludes everything beneath it, so a walk may skip it whole.
* Matching is case-sensitive. Unlike ``.gitignore`` there is no ``!`` to take a path back in (it is
  rejected: a list of what to leave out reads more plainly without it) and no ``#`` comment.

Standard library only: the translator and the runner modules that run on bare GPU machines use it.
"""
from __future__ import annotations

import re
from collections.abc import Iterable
from functools import lru_cache

DEFAULT_EXCLUDES = ("third_party/**", "thirdparty/**", "external/**", "vendor/**", "**/.git/**")


class GlobError(ValueError):
    """An exclude glob that cannot be used; the message names the pattern."""


class _Rule:
    __slots__ = ("regex", "anchored", "directories_only")  # a plain class: dataclasses cost start-up time

    def __init__(self, regex: re.Pattern[str], anchored: bool, directories_only: bool) -> None:
        self.regex = regex
        self.anchored = anchored  # matched against the whole relative path, else against the last segment (a name)
        self.directories_only = directories_only

    def matches(self, path: str, is_dir: bool) -> bool:
        if self.directories_only and not is_dir:
            return False
        return self.regex.fullmatch(path if self.anchored else path.rsplit("/", 1)[-1]) is not None


def check_glob(pattern: str) -> None:
    """Raise :class:`GlobError` when ``pattern`` cannot be an exclude glob."""
    _compile(pattern)


def is_excluded(relative: str, globs: Iterable[str]) -> bool:
    """True when the file at ``relative`` (posix, from the tree's root) or one of its directories matches."""
    return _excluded(relative, _rules(tuple(globs)), is_dir=False)


def is_excluded_dir(relative: str, globs: Iterable[str]) -> bool:
    """True when the directory at ``relative`` matches, or one above it: nothing beneath it is used."""
    return _excluded(relative, _rules(tuple(globs)), is_dir=True)


def _excluded(relative: str, rules: tuple[_Rule, ...], is_dir: bool) -> bool:
    parts = relative.strip("/").split("/")
    for end in range(1, len(parts) + 1):
        path, last = "/".join(parts[:end]), end == len(parts)
        if any(rule.matches(path, is_dir or not last) for rule in rules):
            return True
    return False


@lru_cache(maxsize=64)
def _rules(globs: tuple[str, ...]) -> tuple[_Rule, ...]:
    return tuple(_compile(pattern) for pattern in globs)


@lru_cache(maxsize=256)
def _compile(pattern: str) -> _Rule:
    if not pattern.strip() or any(c in pattern for c in "\0\n\r"):
        raise GlobError(f"{pattern!r} is empty or holds a control character")
    if pattern.startswith("!"):
        raise GlobError(f"{pattern!r}: '!' cannot take a path back in; list only what to leave out")
    anchored = "/" in pattern.rstrip("/")  # before ``x/**`` becomes the directory ``x``: still anchored
    body, directories_only = pattern, False
    while body.endswith("/**") and body[:-3].strip("/"):  # all inside a directory: the directory's files
        body, directories_only = body[:-3], True
    if body.endswith("/") and body.strip("/"):
        body, directories_only = body.rstrip("/"), True
    segments = body.lstrip("/").split("/")
    if segments == [""] or any(s in ("", ".", "..") for s in segments):
        raise GlobError(f"{pattern!r} is not a path relative to the tree (no empty, '.' or '..' parts)")
    return _Rule(re.compile(_path_regex(segments)), anchored, directories_only)


def _path_regex(segments: list[str]) -> str:
    out: list[str] = []
    for index, segment in enumerate(segments):
        last = index == len(segments) - 1
        if segment == "**":
            out.append(".*" if last else "(?:.*/)?")
        else:
            out.append(_segment_regex(segment) + ("" if last else "/"))
    return "".join(out)


def _segment_regex(segment: str) -> str:
    out: list[str] = []
    index = 0
    while index < len(segment):
        char = segment[index]
        index += 1
        if char == "*":
            out.append("[^/]*")
        elif char == "?":
            out.append("[^/]")
        elif char == "\\" and index < len(segment):
            out.append(re.escape(segment[index]))
            index += 1
        elif char == "[" and (closing := _class_end(segment, index)) > 0:
            out.append(_class_regex(segment[index:closing]))
            index = closing + 1
        else:
            out.append(re.escape(char))
    return "".join(out)


def _class_end(segment: str, start: int) -> int:
    """Index of the ``]`` closing a class whose body starts at ``start``; -1 when there is none."""
    index = start + 1 if segment[start:start + 1] in ("!", "^") else start
    index += 1 if segment[index:index + 1] == "]" else 0  # a leading ']' is a member
    return segment.find("]", index)


def _class_regex(body: str) -> str:
    negated = body[:1] in ("!", "^")
    members = re.sub(r"([\\\[&~|^])", r"\\\1", body[1:] if negated else body)
    return f"[^/{members}]" if negated else f"[{members}]"

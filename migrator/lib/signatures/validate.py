"""Validation of notebook signatures before they are stored or compiled.

Regex signatures are compiled with the `regex` package, case-insensitive (VERSION0 syntax, as
`re`), and searched in the raw line; every search carries a timeout, and a pattern that
backtracks catastrophically on adversarial strings is refused here, before it is stored. Text
signatures must keep a specific word once normalised (see `normalise`), or they would match
nearly every line.
"""

from __future__ import annotations

import time
from typing import Literal

import regex

from migrator.lib.signatures.literals import required_regex_literals
from migrator.lib.signatures.normalise import invariant_fragments, normalise_text

SignatureKind = Literal["text", "regex"]
SIGNATURE_KINDS: tuple[SignatureKind, ...] = ("text", "regex")

MAX_PATTERN_LENGTH = 500
MIN_TEXT_LENGTH = 6
# A text signature must keep a word this long once paths and numbers are normalised away,
# otherwise it would match nearly every line.
MIN_TEXT_FRAGMENT = 3
REGEX_FLAGS = regex.IGNORECASE | regex.VERSION0
ADVERSARIAL_LENGTH = 3000
ADVERSARIAL_BUDGET_S = 0.05  # CPU seconds a pattern may spend on one adversarial line
# The regex engine's own stop is wall time: generous, so a busy machine (other processes taking the CPU)
# never fails a good pattern; the verdict is the CPU time this thread spent.
ADVERSARIAL_STOP_S = 10 * ADVERSARIAL_BUDGET_S
MAX_ADVERSARIAL_STRINGS = 24


class SignatureError(ValueError):
    """A signature that cannot be stored; the message is meant for the user."""


def compile_regex(pattern: str) -> regex.Pattern[str]:
    """Compile a regex signature the way the matcher uses it (case-insensitive)."""
    try:
        return regex.compile(pattern, REGEX_FLAGS)
    except regex.error as exc:
        raise SignatureError(
            f"The regular expression does not compile: {exc}."
        ) from exc


def validate_signature(kind: str, pattern: str) -> None:
    """Raise SignatureError with a user-facing message when the signature is unusable."""
    if kind not in SIGNATURE_KINDS:
        raise SignatureError(f"Unknown signature kind {kind!r}; use 'text' or 'regex'.")
    if not pattern or not pattern.strip():
        raise SignatureError("The signature is empty.")
    if len(pattern) > MAX_PATTERN_LENGTH:
        raise SignatureError(
            f"The signature is {len(pattern)} characters long; the limit is {MAX_PATTERN_LENGTH}."
        )
    if "\n" in pattern or "\r" in pattern:
        raise SignatureError(
            "Signatures match within one log line; remove the line break."
        )
    if kind == "text":
        _validate_text(pattern)
    else:
        _validate_regex(pattern)


def _validate_text(pattern: str) -> None:
    if len(pattern.strip()) < MIN_TEXT_LENGTH:
        raise SignatureError(
            f"Plain-text signatures need at least {MIN_TEXT_LENGTH} characters to be specific."
        )
    fragments = invariant_fragments(normalise_text(pattern))
    if not fragments or max(len(f) for f in fragments) < MIN_TEXT_FRAGMENT:
        raise SignatureError(
            "Once paths and numbers are ignored, this text has no word of "
            f"{MIN_TEXT_FRAGMENT} or more characters left; use a regular expression instead."
        )


def _validate_regex(pattern: str) -> None:
    compiled = compile_regex(pattern)
    if compiled.search("") is not None:
        raise SignatureError(
            "The regular expression matches the empty string; it would match every line."
        )
    for sample in adversarial_strings(pattern):
        started = time.thread_time()
        try:
            found = compiled.search(sample, timeout=ADVERSARIAL_STOP_S)
        except TimeoutError as exc:
            raise SignatureError(
                "The regular expression is catastrophically slow on some inputs "
                "(nested repetition such as (a+)+ or (a|aa)*); simplify it."
            ) from exc
        if found is not None and found.end() == found.start():
            raise SignatureError(
                "The regular expression can match an empty piece of text."
            )
        if time.thread_time() - started > ADVERSARIAL_BUDGET_S:
            raise SignatureError(
                "The regular expression is too slow on long lines; simplify it."
            )


def adversarial_strings(pattern: str) -> list[str]:
    """Long lines that make backtracking patterns blow up: runs of the characters they use."""
    literals = required_regex_literals(pattern) or []
    chars: list[str] = []
    for literal in literals:
        chars.extend(literal)
    chars.extend(c for c in pattern if c.isalnum() or c in " _-.:/")
    chars.extend(["a", "x", "1", " ", "_"])
    distinct = list(dict.fromkeys(chars))[: MAX_ADVERSARIAL_STRINGS // 2]
    samples = [c * ADVERSARIAL_LENGTH + "!" for c in distinct]
    samples += [(c + " ") * (ADVERSARIAL_LENGTH // 2) + "!" for c in distinct]
    # The literals and the pattern's own letters catch zero-width patterns (a bare look-ahead).
    letters = "".join(c for c in pattern if c.isalnum() or c == " ")
    return [*literals, letters, *samples][:MAX_ADVERSARIAL_STRINGS]

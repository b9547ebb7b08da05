"""Signatures refused before they are stored, each with a message meant for the user."""

import pytest

from migrator.lib.signatures.validate import SignatureError, validate_signature


@pytest.mark.parametrize(
    ("kind", "pattern", "message"),
    [
        ("text", "", "empty"),
        ("regex", "   ", "empty"),
        ("text", "x" * 501, "limit is 500"),
        ("regex", "a" * 501, "limit is 500"),
        ("regex", "cannot find (-l", "does not compile"),
        ("regex", "(?:foo)?", "empty string"),
        ("regex", "x*", "empty string"),
        ("regex", r"(?=lcublas)", "empty"),
        ("text", "ld: x", "at least 6"),
        ("text", "12.0.1 /a/b/ 77", "no word"),
        ("glob", "cannot find -lcublas", "Unknown signature kind"),
        ("text", "cannot find\n-lcublas", "one log line"),
    ],
)
def test_it_rejects_unusable_signatures_with_a_clear_message(
    kind: str, pattern: str, message: str
) -> None:
    with pytest.raises(SignatureError, match=message):
        validate_signature(kind, pattern)


@pytest.mark.parametrize(
    "pattern", [r"(a+)+$", r"(a|aa)+$", r"(\w+\s?)+$", r"(x+x+)+y"]
)
def test_it_rejects_catastrophically_backtracking_regexes(pattern: str) -> None:
    with pytest.raises(SignatureError, match="slow"):
        validate_signature("regex", pattern)


@pytest.mark.parametrize(
    ("kind", "pattern"),
    [
        ("text", "cannot find -lcublas"),
        ("text", "fatal error: 'cuda_runtime.h' file not found"),
        ("regex", r"cannot find -l(?:cublas|cudnn)\b"),
        ("regex", r"nvcc fatal\s*: Unknown option '--offload-arch=gfx\w+'"),
        ("regex", r"^\s*\d+ errors? generated"),
    ],
)
def test_it_accepts_ordinary_signatures(kind: str, pattern: str) -> None:
    validate_signature(kind, pattern)

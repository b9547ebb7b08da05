"""Webhook authenticity: GitHub's HMAC signature and GitLab's shared token, compared in constant time."""
from __future__ import annotations

import hashlib
import hmac

SIGNATURE_PREFIX = "sha256="


def github_signature(secret: str, body: bytes) -> str:
    return SIGNATURE_PREFIX + hmac.new(secret.encode("utf-8"), body, hashlib.sha256).hexdigest()


def verify_github_signature(secret: str, body: bytes, header: str | None) -> bool:
    """True when ``X-Hub-Signature-256`` is the HMAC-SHA256 of the raw body under ``secret``."""
    if not secret or not header or not header.startswith(SIGNATURE_PREFIX):
        return False
    return hmac.compare_digest(github_signature(secret, body).encode(), header.strip().encode())


def verify_gitlab_token(expected: str, header: str | None) -> bool:
    if not expected or not header:
        return False
    return hmac.compare_digest(expected.encode("utf-8"), header.encode("utf-8"))

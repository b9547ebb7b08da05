"""The body of a download the dashboard streams (a patch, an archive), read as a browser would save it."""
from __future__ import annotations

from collections.abc import Iterator

from django.http import StreamingHttpResponse
from django.http.response import HttpResponseBase


def downloaded(response: HttpResponseBase) -> bytes:
    """Downloads are streamed (``FileResponse``) so large trees never sit in memory; join the chunks here."""
    assert isinstance(response, StreamingHttpResponse), f"not a streamed download: {type(response).__name__}"
    chunks = response.streaming_content
    assert isinstance(chunks, Iterator), "the test client reads the synchronous stream"
    return b"".join(chunks)

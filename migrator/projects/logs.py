"""Reading stage logs stored as chunks with byte offsets."""
from __future__ import annotations

from collections.abc import Iterator

from migrator.projects.models import LogChunk, Stage

MAX_APPEND_BYTES = 512 * 1024


def read_log_from(stage: Stage, offset: int, limit: int = MAX_APPEND_BYTES) -> tuple[str, int]:
    """Text from byte ``offset`` on (at most about ``limit`` bytes) and the offset after it."""
    chunks = LogChunk.objects.filter(stage=stage, offset__gte=_chunk_start(stage, offset)).order_by("offset")
    parts: list[bytes] = []
    end = offset
    for chunk in chunks.iterator():
        data = chunk.text.encode("utf-8")
        if chunk.offset + len(data) <= offset:
            continue
        piece = data[max(0, offset - chunk.offset):]
        parts.append(piece)
        end = chunk.offset + len(data)
        if sum(len(p) for p in parts) >= limit:
            break
    return b"".join(parts).decode("utf-8", "replace"), end


def _chunk_start(stage: Stage, offset: int) -> int:
    """Offset of the chunk holding byte ``offset`` (a cursor may point inside a chunk)."""
    holder = (
        LogChunk.objects.filter(stage=stage, offset__lte=offset).order_by("-offset").values_list("offset", flat=True).first()
    )
    return holder if holder is not None else 0


def log_tail(stage: Stage, max_bytes: int) -> tuple[str, int, bool]:
    """The last ``max_bytes`` of a log (whole chunks), the end offset, and whether earlier text was left out."""
    start = max(0, stage.log_size - max_bytes)
    text, end = read_log_from(stage, start, limit=max_bytes + 128 * 1024)
    return text, end, start > 0


def stream_log(stage: Stage) -> Iterator[bytes]:
    for chunk in LogChunk.objects.filter(stage=stage).order_by("offset").iterator():
        yield chunk.text.encode("utf-8")

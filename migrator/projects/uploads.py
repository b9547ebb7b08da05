"""Upload handling that stops reading an archive as soon as it passes the size limit."""
from __future__ import annotations

from django.conf import settings
from django.core.files.uploadhandler import StopUpload, TemporaryFileUploadHandler


class UploadTooLarge(Exception):
    pass


class LimitedUploadHandler(TemporaryFileUploadHandler):
    """Streams to a temporary file; aborts the request body once the limit is exceeded."""

    def new_file(self, *args: object, **kwargs: object) -> None:
        self.received = 0
        super().new_file(*args, **kwargs)  # type: ignore[arg-type]

    def receive_data_chunk(self, raw_data: bytes, start: int) -> bytes | None:
        self.received += len(raw_data)
        if self.received > settings.MIGRATOR_MAX_UPLOAD_BYTES:
            self.request.upload_too_large = True  # type: ignore[union-attr]
            raise StopUpload(connection_reset=True)
        return super().receive_data_chunk(raw_data, start)

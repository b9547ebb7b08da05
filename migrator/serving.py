"""gunicorn's threaded worker, with a deadline on reading each request (``gunicorn.conf.py`` names it).

With synchronous workers, three clients that send their headers and one byte of body hold all three
workers for the whole worker timeout. The threaded worker waits for new connections in its poller
and serves requests from a pool of threads, but a thread that reads a request from a client keeps
waiting as long as the client keeps the connection open. Here every request must arrive in time:
``MIGRATOR_WEB_READ_TIMEOUT_S`` (10 s) for the headers and the start of the body, plus one second for
each ``MIGRATOR_WEB_MIN_RATE_BPS`` (2,048) bytes received, so a large upload on a slow line goes
through while a client trickling a byte now and then is cut off once its time is up. Sending a
response waits at most ``MIGRATOR_WEB_WRITE_TIMEOUT_S`` (60 s) for the client to take more.

This bounds what slow clients can hold (a thread each, for seconds) but cannot make threads
unlimited: in production a buffering reverse proxy belongs in front (README, Deployment).
TLS is expected to end at that proxy; gunicorn's own TLS would bypass the read deadline.
"""
from __future__ import annotations

import errno
import logging
import os
import socket
import time
from typing import BinaryIO, NoReturn, Protocol

from gunicorn.workers.gthread import ThreadWorker

log = logging.getLogger("migrator.serving")


def env_seconds(name: str, default: float, minimum: float = 0.1) -> float:
    raw = os.environ.get(name, "").strip()
    try:
        value = float(raw) if raw else default
    except ValueError as exc:
        raise SystemExit(f"{name} must be a number of seconds, got {raw!r}") from exc
    if value < minimum:
        raise SystemExit(f"{name} must be at least {minimum}, got {value}")
    return value


class DeadlineSocket(socket.socket):
    """A client connection whose reads must keep up with a deadline (see the module's docstring).

    gunicorn switches a connection to blocking mode (``setblocking(True)``) each time a thread takes
    it up for a request: that is where the request's deadline starts."""

    read_timeout_s = 10.0
    min_rate_bps = 2048.0
    write_timeout_s = 60.0
    _deadline = 0.0

    @classmethod
    def adopt(cls, sock: socket.socket) -> DeadlineSocket:
        return cls(sock.family, sock.type, sock.proto, fileno=sock.detach())

    def setblocking(self, flag: bool) -> None:
        if not flag:
            super().setblocking(False)
            return
        self._deadline = time.monotonic() + self.read_timeout_s
        super().settimeout(self.read_timeout_s)

    def _before_read(self) -> None:
        remaining = self._deadline - time.monotonic()
        if remaining <= 0:
            self._too_slow()
        super().settimeout(remaining)

    def _too_slow(self) -> NoReturn:
        try:
            peer = self.getpeername()
        except OSError:
            peer = "a client"
        log.info("closed the connection from %s: its request did not arrive within the read deadline", peer)
        # Reported as a reset: gunicorn then closes quietly instead of logging a traceback per slow client.
        raise ConnectionResetError(errno.ECONNRESET, "the request did not arrive within the read deadline")

    def _after_read(self, count: int) -> None:
        self._deadline += count / self.min_rate_bps

    def recv(self, bufsize: int, flags: int = 0) -> bytes:
        self._before_read()
        try:
            data = super().recv(bufsize, flags)
        except TimeoutError:
            self._too_slow()
        self._after_read(len(data))
        return data

    def recv_into(self, buffer: memoryview | bytearray, nbytes: int = 0, flags: int = 0) -> int:  # type: ignore[override]
        self._before_read()
        try:
            count = super().recv_into(buffer, nbytes, flags)
        except TimeoutError:
            self._too_slow()
        self._after_read(count)
        return count

    def send(self, data: bytes | memoryview, flags: int = 0) -> int:  # type: ignore[override]
        super().settimeout(self.write_timeout_s)
        return super().send(data, flags)

    def sendall(self, data: bytes | memoryview, flags: int = 0) -> None:  # type: ignore[override]
        super().settimeout(self.write_timeout_s)
        super().sendall(data, flags)

    def sendfile(self, file: BinaryIO, offset: int = 0, count: int | None = None) -> int:  # type: ignore[override]
        super().settimeout(self.write_timeout_s)
        return super().sendfile(file, offset, count)


class _Connection(Protocol):  # gunicorn's TConn, as far as it is used here
    sock: socket.socket


class ReadDeadlineThreadWorker(ThreadWorker):  # type: ignore[misc]
    """gunicorn's ``gthread`` worker whose client connections are ``DeadlineSocket``s."""

    def init_process(self) -> None:
        DeadlineSocket.read_timeout_s = env_seconds("MIGRATOR_WEB_READ_TIMEOUT_S", 10.0)
        DeadlineSocket.min_rate_bps = env_seconds("MIGRATOR_WEB_MIN_RATE_BPS", 2048.0, minimum=1.0)
        DeadlineSocket.write_timeout_s = env_seconds("MIGRATOR_WEB_WRITE_TIMEOUT_S", 60.0)
        super().init_process()

    def enqueue_req(self, conn: _Connection) -> None:
        if not isinstance(conn.sock, DeadlineSocket):
            conn.sock = DeadlineSocket.adopt(conn.sock)
        super().enqueue_req(conn)

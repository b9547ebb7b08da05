"""Slow-client benchmark: the login page's latency while 50 clients hold connections open, against idle.

Run: .venv/bin/python bench/slow_clients_bench.py [--slow 50] [--phase-s 15] [--rounds 2] [--server ours|sync]

Starts gunicorn the way ./dev up does (``gunicorn -c gunicorn.conf.py``; ``--server sync`` starts the
earlier configuration instead: 3 synchronous workers, 300 s timeout) on a scratch database, then
alternates phases of the same length: idle, where one client fetches ``GET /login/`` back to back on
fresh connections, and attacked, where the same client does the same while ``--slow`` other
connections each send the headers of a sign-in POST announcing a 100 KB body and one byte of it, then
nothing (with the CSRF cookie the login page gave out, so the server reads that body; a connection the
server closes is opened again at once, so the count stays up). Order
alternates by round (idle first, then attacked first). A request that gets no answer within
``--client-timeout-s`` counts as failed, at that latency. Prints p50/p95/max per phase kind, the
ratio of the attacked p95 to the idle p95 (target: at most 2), failures, and how many slow
connections the server cut off. Nothing is asserted.
"""
from __future__ import annotations

import argparse
import http.client
import os
import selectors
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _benchdb import ROOT, load_note, percentile, scratch_django  # noqa: E402

GUNICORN = ROOT / ".venv" / "bin" / "gunicorn"
BROKER_DB, CACHE_DB = 4, 3


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def start_server(kind: str, port: int, env: dict[str, str]) -> subprocess.Popen[bytes]:
    if kind == "sync":  # what Procfile, Dockerfile and docker-compose ran before (no config file)
        args = ["-c", "/dev/null", "migrator.wsgi", "-w", "3", "--timeout", "300"]
    else:
        args = ["-c", str(ROOT / "gunicorn.conf.py")]
    server = subprocess.Popen([str(GUNICORN), *args, "-b", f"127.0.0.1:{port}", "--log-level", "warning"],
                              cwd=ROOT, env=env)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise SystemExit("gunicorn exited at start")
        try:
            if fetch_login(port, 5.0) is not None:
                return server
        except OSError:
            pass
        time.sleep(0.2)
    raise SystemExit("gunicorn did not answer")


def fetch_login(port: int, timeout: float) -> float | None:
    """Seconds for one GET /login/ on a fresh connection; None when it failed or timed out."""
    started = time.monotonic()
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        conn.request("GET", "/login/")
        response = conn.getresponse()
        response.read()
        if response.status != 200:
            return None
    except OSError:
        return None
    finally:
        conn.close()
    return time.monotonic() - started


def csrf_cookie(port: int) -> str:
    """The CSRF cookie the login page hands out: with it, the server reads a sign-in POST's body."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        conn.request("GET", "/login/")
        response = conn.getresponse()
        response.read()
        cookie = response.getheader("Set-Cookie") or ""
    finally:
        conn.close()
    return cookie.split(";", 1)[0]


class SlowClients:
    """``count`` connections that each send the headers of a sign-in POST (with the CSRF cookie, so its
    body is read) and one body byte, then nothing; reopened when the server closes them."""

    def __init__(self, port: int, count: int) -> None:
        self.port, self.count = port, count
        self.head = (f"POST /login/ HTTP/1.1\r\nHost: 127.0.0.1\r\nCookie: {csrf_cookie(port)}\r\n"
                     "Content-Type: application/x-www-form-urlencoded\r\nContent-Length: 100000\r\n\r\nu").encode()
        self.cut = 0  # connections the server closed
        self._stop = threading.Event()
        self._open = threading.Event()
        self._thread = threading.Thread(target=self._hold, daemon=True)

    def __enter__(self) -> SlowClients:
        self._thread.start()
        self._open.wait(timeout=30)
        time.sleep(1.0)  # let the server take them up
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()

    def _connect(self, selector: selectors.DefaultSelector) -> None:
        try:
            sock = socket.create_connection(("127.0.0.1", self.port), timeout=5)
            sock.sendall(self.head)
            sock.setblocking(False)
            selector.register(sock, selectors.EVENT_READ)
        except OSError:
            time.sleep(0.05)

    def _hold(self) -> None:
        selector = selectors.DefaultSelector()
        try:
            while not self._stop.is_set():
                while len(selector.get_map()) < self.count and not self._stop.is_set():
                    self._connect(selector)
                self._open.set()
                for key, _events in selector.select(timeout=0.2):
                    sock = key.fileobj
                    assert isinstance(sock, socket.socket)
                    try:
                        data = sock.recv(65536)
                    except BlockingIOError:
                        continue
                    except OSError:
                        data = b""
                    if not data or b"HTTP/1." in data:  # answered or closed: the server let it go
                        selector.unregister(sock)
                        sock.close()
                        self.cut += 1
        finally:
            for key in list(selector.get_map().values()):
                key.fileobj.close()  # type: ignore[union-attr]
            selector.close()


def phase(port: int, seconds: float, timeout: float) -> tuple[list[float], int]:
    """Latencies of back-to-back login fetches for ``seconds`` (failures counted at ``timeout``)."""
    latencies, failed = [], 0
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        took = fetch_login(port, timeout)
        if took is None:
            failed += 1
            took = timeout
        latencies.append(took)
    return latencies, failed


def summary(name: str, latencies: list[float], failed: int) -> str:
    return (f"{name:>9}: {len(latencies):5d} requests, p50 {1000 * percentile(latencies, 0.5):7.1f} ms, "
            f"p95 {1000 * percentile(latencies, 0.95):7.1f} ms, max {1000 * max(latencies):7.1f} ms, failed {failed}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--slow", type=int, default=50, help="slow connections held open during attacked phases")
    parser.add_argument("--phase-s", type=float, default=15.0, help="length of each phase")
    parser.add_argument("--rounds", type=int, default=2, help="rounds of one idle and one attacked phase")
    parser.add_argument("--client-timeout-s", type=float, default=5.0)
    parser.add_argument("--server", choices=["ours", "sync"], default="ours")
    args = parser.parse_args()
    print(load_note())
    with scratch_django("slow_clients", broker_db=BROKER_DB, cache_db=CACHE_DB) as bench:
        port = free_port()
        server = start_server(args.server, port, {**os.environ, **bench.environ()})
        try:
            results: dict[str, tuple[list[float], int]] = {"idle": ([], 0), "attacked": ([], 0)}
            cut = 0
            phase(port, 2.0, args.client_timeout_s)  # warm-up: every worker imports Django
            for number in range(args.rounds):
                for kind in (("idle", "attacked") if number % 2 == 0 else ("attacked", "idle")):
                    if kind == "idle":
                        latencies, failed = phase(port, args.phase_s, args.client_timeout_s)
                    else:
                        with SlowClients(port, args.slow) as slow:
                            latencies, failed = phase(port, args.phase_s, args.client_timeout_s)
                        cut += slow.cut
                    done, failures = results[kind]
                    results[kind] = (done + latencies, failures + failed)
        finally:
            server.terminate()
            server.wait(timeout=60)
    config = ("3 sync workers, --timeout 300" if args.server == "sync" else
              f"gunicorn.conf.py: {os.environ.get('MIGRATOR_WEB_WORKERS', '2')} workers x "
              f"{os.environ.get('MIGRATOR_WEB_THREADS', '32')} threads, read deadline "
              f"{os.environ.get('MIGRATOR_WEB_READ_TIMEOUT_S', '10')} s")
    print(f"server: {config}; {args.slow} slow connections; {args.rounds} rounds of {args.phase_s:.0f} s phases")
    for kind, (latencies, failed) in results.items():
        print(summary(kind, latencies, failed))
    idle, attacked = results["idle"][0], results["attacked"][0]
    ratio = percentile(attacked, 0.95) / percentile(idle, 0.95)
    print(f"p95 attacked / idle: {ratio:.2f} (target <= 2.00); slow connections cut off by the server: {cut}")
    print(load_note())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

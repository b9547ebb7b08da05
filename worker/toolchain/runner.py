"""Run a command with a wall-clock limit, an output limit and a stop flag, killing its whole process group.

Each command starts in a new session so that ``killpg`` also ends its children. Crashes are told
apart from ordinary failures: death by signal, or clang's "PLEASE submit a bug report" banner.
The argument list goes straight to ``execve``: no shell ever parses it.
"""
from __future__ import annotations

import os
import signal
import subprocess
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

_CRASH_MARKERS = ("PLEASE submit a bug report", "frontend command failed due to signal", "Stack dump:")
_POLL_S = 0.2


@dataclass
class ProcessResult:
    returncode: int
    output: str  # stdout and stderr interleaved
    duration_s: float
    timed_out: bool
    crashed: bool
    output_exceeded: bool = False  # printed more than the limit and was stopped
    stopped: bool = False  # the caller's stop flag (a cancelled stage) ended it

    @property
    def ok(self) -> bool:
        return self.returncode == 0 and not (self.timed_out or self.crashed or self.output_exceeded or self.stopped)


@dataclass
class _Reading:
    chunks: list[str]
    size: int = 0
    exceeded: bool = False


def run_process(
    command: list[str],
    cwd: Path,
    env: dict[str, str],
    timeout_s: float,
    on_line: Callable[[str], None] | None = None,
    output_limit: int = 20_000_000,
    should_stop: Callable[[], bool] = lambda: False,
    stdin: bytes | None = None,
) -> ProcessResult:
    """Run to completion, or until ``timeout_s``, ``output_limit`` bytes of output, or ``should_stop()``.

    ``stdin``: bytes fed to the command's standard input (then closed); None: no input at all."""
    started = time.monotonic()
    try:
        process = subprocess.Popen(
            command, cwd=cwd, env=env, stdin=subprocess.DEVNULL if stdin is None else subprocess.PIPE,
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True,
        )
    except OSError as exc:
        return ProcessResult(127, f"cannot start {command[0]}: {exc}\n", 0.0, False, False)
    if stdin is not None:  # its own thread: a command that prints before reading must not deadlock us
        threading.Thread(target=_feed, args=(process, stdin), daemon=True).start()
    reading = _Reading([])
    reader = threading.Thread(target=_read_lines, args=(process, reading, on_line, output_limit), daemon=True)
    reader.start()
    timed_out, stopped = _wait(process, started + timeout_s, reading, should_stop)
    reader.join(timeout=10)
    output = "".join(reading.chunks)
    if reading.exceeded:
        output += f"\nmigrator: output passed the limit of {output_limit} bytes; the command was stopped\n"
    crashed = not (timed_out or stopped or reading.exceeded) and (
        process.returncode < 0 or any(m in output for m in _CRASH_MARKERS))
    return ProcessResult(process.returncode, output, time.monotonic() - started, timed_out, crashed,
                         reading.exceeded, stopped)


def _feed(process: subprocess.Popen[bytes], data: bytes) -> None:
    assert process.stdin is not None
    try:
        process.stdin.write(data)
    except OSError:  # the command ended (or was killed) without reading it all
        pass
    finally:
        try:
            process.stdin.close()
        except OSError:
            pass


def _wait(
    process: subprocess.Popen[bytes], deadline: float, reading: _Reading, should_stop: Callable[[], bool]
) -> tuple[bool, bool]:
    """Wait for the process; kill its group at the deadline, on too much output or when asked to stop."""
    while True:
        try:
            process.wait(timeout=max(0.0, min(_POLL_S, deadline - time.monotonic())))
            return False, False
        except subprocess.TimeoutExpired:
            pass
        timed_out = time.monotonic() >= deadline
        stopped = not timed_out and should_stop()
        if timed_out or stopped or reading.exceeded:
            kill_group(process)
            process.wait()
            return timed_out, stopped


def _read_lines(
    process: subprocess.Popen[bytes], reading: _Reading, on_line: Callable[[str], None] | None, limit: int
) -> None:
    """Read in bounded chunks (a line with no end must not fill memory) and hand out whole lines."""
    assert process.stdout is not None
    pending = b""
    while chunk := os.read(process.stdout.fileno(), 65536):
        if reading.size >= limit:
            reading.exceeded = True
            continue  # keep draining so the killed group's last writes never block
        reading.size += len(chunk)
        *lines, pending = (pending + chunk).split(b"\n")
        if len(pending) > 65536:  # an endless line: hand it out in pieces
            lines.append(pending)
            pending = b""
        _deliver(lines, reading, on_line)
    if pending:
        _deliver([pending], reading, on_line)


def _deliver(lines: list[bytes], reading: _Reading, on_line: Callable[[str], None] | None) -> None:
    for raw in lines:
        line = raw.decode(errors="replace") + "\n"
        reading.chunks.append(line)
        if on_line is not None:
            on_line(line)


def kill_group(process: subprocess.Popen[bytes]) -> None:
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass

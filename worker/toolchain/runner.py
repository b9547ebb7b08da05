"""Run a compiler or build command with a wall-clock limit, killing its whole process group.

Each command starts in a new session so that on timeout ``killpg`` also ends the
children (clang under hipcc, make's jobs). Crashes are told apart from ordinary
failures: death by signal, or clang's "PLEASE submit a bug report" banner.
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


@dataclass
class ProcessResult:
    returncode: int
    output: str  # stdout and stderr interleaved
    duration_s: float
    timed_out: bool
    crashed: bool

    @property
    def ok(self) -> bool:
        return self.returncode == 0 and not self.timed_out and not self.crashed


def run_process(
    command: list[str],
    cwd: Path,
    env: dict[str, str],
    timeout_s: float,
    on_line: Callable[[str], None] | None = None,
    output_limit: int = 20_000_000,
) -> ProcessResult:
    """Run to completion or until ``timeout_s``; ``on_line`` gets each output line as it comes."""
    started = time.monotonic()
    try:
        process = subprocess.Popen(
            command, cwd=cwd, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT, start_new_session=True,
        )
    except OSError as exc:
        return ProcessResult(127, f"cannot start {command[0]}: {exc}\n", 0.0, False, False)
    chunks: list[str] = []
    reader = threading.Thread(target=_read_lines, args=(process, chunks, on_line, output_limit), daemon=True)
    reader.start()
    timed_out = False
    try:
        process.wait(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        timed_out = True
        _kill_group(process)
        process.wait()
    reader.join(timeout=10)
    output = "".join(chunks)
    crashed = not timed_out and (process.returncode < 0 or any(m in output for m in _CRASH_MARKERS))
    return ProcessResult(process.returncode, output, time.monotonic() - started, timed_out, crashed)


def _read_lines(
    process: subprocess.Popen[bytes], chunks: list[str], on_line: Callable[[str], None] | None, limit: int
) -> None:
    assert process.stdout is not None
    size = 0
    for raw in process.stdout:
        line = raw.decode(errors="replace")
        if size < limit:
            chunks.append(line)
            size += len(line)
        if on_line is not None:
            on_line(line if line.endswith("\n") else line + "\n")


def _kill_group(process: subprocess.Popen[bytes]) -> None:
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass

"""Run one command with a time limit, bounded output and resource peaks.

The command runs in a new session (its own process group). At the time limit the whole
group gets SIGTERM, then SIGKILL after a grace period; when the leader ends normally, any
members it left behind are killed too, so no stray child keeps the pipes (or a GPU) busy.
Output is drained by threads to the end but stored only up to the limit.
Standard library only: this module also runs on bare GPU machines.
"""
from __future__ import annotations

import io
import os
import shlex
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import cast

GpuSampler = Callable[[], int | None]  # bytes in use on the leased device, None if unknown

SAMPLE_INTERVAL_S = 0.2
GPU_SAMPLE_INTERVAL_S = 0.5
DEFAULT_KILL_GRACE_S = 5.0
_PAGE_SIZE = os.sysconf("SC_PAGE_SIZE")


def truncation_marker(limit: int) -> str:
    return f"\n[... output truncated at {limit} bytes ...]\n"


@dataclass
class Execution:
    command: str
    stdout: str
    stderr: str
    exit_code: int | None  # None when a signal ended it
    signal: str | None  # "SIGSEGV", ...
    timed_out: bool
    cancelled: bool  # stopped because ``cancel()`` said so
    duration_s: float
    stdout_bytes: int  # produced, including any part not kept
    stderr_bytes: int
    truncated: bool
    peak_host_rss_bytes: int | None
    peak_gpu_mem_bytes: int | None

    @property
    def output(self) -> str:
        return self.stdout + ("\n" if self.stdout and self.stderr else "") + self.stderr

    def to_dict(self) -> dict[str, object]:
        return asdict(self)


class _Drain(threading.Thread):
    """Reads a pipe to its end, keeping at most ``limit`` bytes."""

    def __init__(self, pipe: io.BufferedReader, limit: int) -> None:
        super().__init__(daemon=True)
        self.pipe, self.limit = pipe, limit
        self.kept = bytearray()
        self.total = 0

    def run(self) -> None:
        while chunk := self.pipe.read1(65536):
            room = self.limit - len(self.kept)
            if room > 0:
                self.kept += chunk[:room]
            self.total += len(chunk)

    @property
    def truncated(self) -> bool:
        return self.total > self.limit

    def text(self) -> str:
        body = self.kept.decode("utf-8", errors="replace")
        return body + truncation_marker(self.limit) if self.truncated else body


class _GpuPeak(threading.Thread):
    def __init__(self, sampler: GpuSampler, stop: threading.Event) -> None:
        super().__init__(daemon=True)
        self.sampler, self.stop = sampler, stop
        self.peak: int | None = None

    def run(self) -> None:
        while True:
            try:
                value = self.sampler()
            except Exception:  # noqa: BLE001 - a sampler failure must never fail the job
                value = None
            if value is not None:
                self.peak = value if self.peak is None else max(self.peak, value)
            if self.stop.wait(GPU_SAMPLE_INTERVAL_S):
                return


def group_rss_bytes(pgid: int) -> int:
    """Resident memory summed over the live members of process group ``pgid``."""
    total = 0
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            stat = Path(entry.path, "stat").read_text()
            fields = stat[stat.rindex(")") + 2 :].split()
            if int(fields[2]) == pgid:  # fields: state, ppid, pgrp, ..., rss at index 21
                total += int(fields[21]) * _PAGE_SIZE
        except (OSError, ValueError, IndexError):
            continue
    return total


def _kill_group(pgid: int, sig: signal.Signals) -> None:
    try:
        os.killpg(pgid, sig)
    except (ProcessLookupError, PermissionError):
        pass


def _leader_exited(pid: int) -> bool:
    """True once the leader has ended; it stays a zombie (pid and pgid reserved) until reaped."""
    info = os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT)
    return info is not None


def _stop_group(pid: int, grace_s: float) -> None:
    """SIGTERM to the whole group, then SIGKILL once the leader is gone or the grace ran out."""
    _kill_group(pid, signal.SIGTERM)
    grace_end = time.monotonic() + grace_s
    while not _leader_exited(pid) and time.monotonic() < grace_end:
        time.sleep(0.05)
    _kill_group(pid, signal.SIGKILL)


def _watch(
    pid: int, timeout_s: float, grace_s: float, cancel: Callable[[], bool] | None
) -> tuple[str, int]:
    """Wait for the leader, enforcing the limit on the group; ("exited"|"timed-out"|"cancelled", peak rss)."""
    deadline = time.monotonic() + timeout_s
    peak = 0
    while not _leader_exited(pid):
        peak = max(peak, group_rss_bytes(pid))
        ending = "timed-out" if time.monotonic() >= deadline else "cancelled" if cancel and cancel() else ""
        if ending:
            _stop_group(pid, grace_s)
            return ending, peak
        time.sleep(SAMPLE_INTERVAL_S)
    return "exited", peak


def _status(raw_status: int) -> tuple[int | None, str | None]:
    code = os.waitstatus_to_exitcode(raw_status)
    if code < 0:
        return None, signal.Signals(-code).name
    return code, None


def run_command(
    command: Sequence[str] | str,
    cwd: Path | str,
    env: dict[str, str] | None,
    timeout_s: float,
    output_limit_bytes: int,
    gpu_sampler: GpuSampler | None = None,
    kill_grace_s: float = DEFAULT_KILL_GRACE_S,
    cancel: Callable[[], bool] | None = None,
) -> Execution:
    """Run ``command`` (argv list, or a string for ``/bin/sh -c``) and report how it went.

    ``env`` None means this process's environment. Raises OSError only when the command
    cannot start at all (e.g. the argv's program does not exist). ``cancel`` is polled while
    the command runs; when it returns True the group is stopped as at the time limit.
    """
    started = time.monotonic()
    proc = subprocess.Popen(
        command, shell=isinstance(command, str), cwd=cwd, env=env, stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True,
    )
    # Popen gives BufferedReaders for binary pipes; read1 returns what is there without waiting for more.
    pipes = (cast(io.BufferedReader, proc.stdout), cast(io.BufferedReader, proc.stderr))
    out, err = (_Drain(pipe, output_limit_bytes) for pipe in pipes)
    stop = threading.Event()
    gpu_peak = _GpuPeak(gpu_sampler, stop) if gpu_sampler else None
    threads: list[threading.Thread] = [out, err, *([gpu_peak] if gpu_peak else [])]
    for thread in threads:
        thread.start()
    ending, sampled_rss = _watch(proc.pid, timeout_s, kill_grace_s, cancel)
    _kill_group(proc.pid, signal.SIGKILL)  # members left behind by a leader that ended
    _, raw_status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(raw_status)  # reaped here, not by Popen
    duration = time.monotonic() - started
    stop.set()
    for thread in threads:
        thread.join(timeout=5.0)
    exit_code, signal_name = _status(raw_status)
    return Execution(
        command=command if isinstance(command, str) else shlex.join(command),
        stdout=out.text(), stderr=err.text(), exit_code=exit_code, signal=signal_name,
        timed_out=ending == "timed-out", cancelled=ending == "cancelled", duration_s=round(duration, 3),
        stdout_bytes=out.total, stderr_bytes=err.total, truncated=out.truncated or err.truncated,
        peak_host_rss_bytes=max(sampled_rss, usage.ru_maxrss * 1024) or None,
        peak_gpu_mem_bytes=gpu_peak.peak if gpu_peak else None,
    )

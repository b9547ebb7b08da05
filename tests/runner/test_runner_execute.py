import os
import sys
import time
from pathlib import Path

from worker.runner.execute import run_command, truncation_marker

PY = sys.executable


def _alive(pid: int) -> bool:
    """True while ``pid`` exists and is not a zombie (init may be slow to reap it)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return False
    return state != "Z"


def test_it_captures_output_and_exit_code(tmp_path: Path) -> None:
    done = run_command([PY, "-c", "import sys; print('hi'); print('oops', file=sys.stderr); sys.exit(3)"],
                       tmp_path, None, 30, 10_000)
    assert (done.stdout, done.stderr, done.exit_code, done.signal) == ("hi\n", "oops\n", 3, None)
    assert not done.timed_out and not done.truncated
    assert done.peak_host_rss_bytes and done.peak_host_rss_bytes > 1_000_000


def test_a_shell_string_runs_in_the_given_directory_with_the_given_env(tmp_path: Path) -> None:
    done = run_command('echo "$PWD $MY_VAR"', tmp_path, {"MY_VAR": "x42", "PATH": os.environ["PATH"]}, 30, 1000)
    assert done.stdout.strip() == f"{tmp_path} x42"


def test_it_reports_the_signal_that_ended_the_command(tmp_path: Path) -> None:
    done = run_command([PY, "-c", "import os, signal; os.kill(os.getpid(), signal.SIGSEGV)"], tmp_path, None, 30, 1000)
    assert done.exit_code is None and done.signal == "SIGSEGV" and not done.timed_out


def test_time_limit_kills_the_whole_process_group_including_grandchildren(tmp_path: Path) -> None:
    pidfile = tmp_path / "grandchild.pid"
    script = f"sleep 300 & echo $! > {pidfile}; echo started; wait"
    done = run_command(["sh", "-c", script], tmp_path, None, 1.0, 1000, kill_grace_s=1.0)
    assert done.timed_out and done.signal in ("SIGTERM", "SIGKILL")
    assert done.stdout == "started\n"
    grandchild = int(pidfile.read_text())
    for _ in range(50):  # the kill is sent already; give the kernel a moment to finish it
        if not _alive(grandchild):
            break
        time.sleep(0.05)
    assert not _alive(grandchild)


def test_a_group_ignoring_sigterm_is_killed_after_the_grace_period(tmp_path: Path) -> None:
    code = "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); print('ready', flush=True); time.sleep(300)"
    done = run_command([PY, "-c", code], tmp_path, None, 1.0, 1000, kill_grace_s=0.5)
    assert done.timed_out and done.signal == "SIGKILL" and done.stdout == "ready\n"


def test_background_children_left_by_a_finished_command_are_killed(tmp_path: Path) -> None:
    pidfile = tmp_path / "bg.pid"
    done = run_command(f"sleep 300 > /dev/null 2>&1 & echo $! > {pidfile}", tmp_path, None, 30, 1000)
    assert done.exit_code == 0 and not done.timed_out
    leftover = int(pidfile.read_text())
    for _ in range(50):
        if not _alive(leftover):
            break
        time.sleep(0.05)
    assert not _alive(leftover)


def test_output_past_the_limit_is_drained_but_not_stored(tmp_path: Path) -> None:
    code = "import sys; sys.stdout.write('x' * 3_000_000); sys.stderr.write('e' * 10)"
    done = run_command([PY, "-c", code], tmp_path, None, 60, 1000)
    assert done.exit_code == 0 and done.truncated
    assert done.stdout == "x" * 1000 + truncation_marker(1000)
    assert "[... output truncated at 1000 bytes ...]" in done.stdout
    assert done.stdout_bytes == 3_000_000 and done.stderr == "e" * 10


def test_the_gpu_sampler_peak_is_reported(tmp_path: Path) -> None:
    samples = iter([100, 500, 300])
    done = run_command([PY, "-c", "import time; time.sleep(1.2)"], tmp_path, None, 30, 1000,
                       gpu_sampler=lambda: next(samples, None))
    assert done.peak_gpu_mem_bytes == 500


def test_without_a_sampler_gpu_memory_is_unknown(tmp_path: Path) -> None:
    assert run_command(["true"], tmp_path, None, 30, 1000).peak_gpu_mem_bytes is None


def test_peak_rss_counts_a_memory_hungry_child(tmp_path: Path) -> None:
    code = "import time; b = bytearray(200 * 1024 * 1024); b[::4096] = b'x' * len(b[::4096]); time.sleep(0.6)"
    done = run_command(["sh", "-c", f"{PY} -c \"{code}\"; echo done"], tmp_path, None, 60, 1000)
    assert done.stdout == "done\n"
    assert done.peak_host_rss_bytes is not None and done.peak_host_rss_bytes >= 200 * 1024 * 1024


def test_a_cancel_request_stops_the_group(tmp_path: Path) -> None:
    polls = iter([False, False, True])
    done = run_command(["sleep", "300"], tmp_path, None, 300, 1000, kill_grace_s=1.0,
                       cancel=lambda: next(polls, True))
    assert done.cancelled and not done.timed_out and done.signal == "SIGTERM"

"""Attacks on the compile, link and build stages: every one blocked, nothing read or written outside the workspace.

Each attack is user content of the kinds an archive can carry: file names built to reach a shell,
includes of host files, build commands that reach for sockets, other runs, the network, the host's
disk, thousands of processes, endless output and endless sleep; and a worker killed mid-compile.
"""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

import pytest

from worker.context import StageContext, Workspace
from worker.project_settings import ProjectSettings
from worker.stages import compile as compile_stage
from worker.toolchain.compile import compile_tree
from worker.toolchain.link import link_objects

KERNEL = "#include <hip/hip_runtime.h>\n__global__ void k(int* x) { *x = 1; }\n"
MAIN = "#include <hip/hip_runtime.h>\nint helper();\nint main() { return helper(); }\n"
HOSTILE_NAMES = ["x$(touch PWNED-dollar).hip", "y`touch PWNED-tick`.hip", "z;touch PWNED-semi;.hip",
                 'q"; touch PWNED-quote; ".hip', "n\ntouch PWNED-newline\n.hip", "-o-looks-like-an-option.hip"]


def pwned_files(*roots: Path) -> list[Path]:
    found = [p for root in roots for p in root.rglob("PWNED*")]
    return found + [p for p in Path("/tmp").glob("PWNED*")] + [p for p in Path.cwd().glob("PWNED*")]


def test_file_names_never_reach_a_shell_in_compile_or_link(tmp_path: Path) -> None:
    tree = tmp_path / "hip"
    tree.mkdir()
    for index, name in enumerate(HOSTILE_NAMES):
        body = KERNEL.replace("void k(", f"void k{index}(")
        (tree / name).write_text(body if not name.startswith("-") else "int helper() { return 0; }\n")
    (tree / "main $(touch PWNED-main).hip").write_text(MAIN)
    report = compile_tree(tree, tmp_path / "build", ProjectSettings(), tmp_path / "cache", jobs=2)
    assert report.ok, [(f.path, f.output) for f in report.files if f.status != "passed"]
    objects = {f.path: Path(f.object_path) for f in report.files}
    linked = link_objects(objects, tree, tmp_path / "build", ProjectSettings())
    assert linked.ok, [t.output for t in linked.targets]
    [target] = linked.targets
    assert Path(target.output_path).is_file() and target.name == "main $(touch PWNED-main)"
    assert pwned_files(tmp_path) == []


@pytest.mark.parametrize("target", ["/etc/shadow", "SECRET"])
def test_includes_of_host_files_are_not_found_and_print_nothing_of_them(tmp_path: Path, target: str) -> None:
    secret_dir = Path(tempfile.mkdtemp(dir="/var/tmp"))
    secret = secret_dir / "secret_key"
    secret.write_text("django-insecure-HOST-SECRET-5c1\n")
    path = str(secret) if target == "SECRET" else target
    tree = tmp_path / "hip"
    tree.mkdir()
    (tree / "leak.hip").write_text(f'#include "{path}"\nint x;\n')
    try:
        report = compile_tree(tree, tmp_path / "build", ProjectSettings(), tmp_path / "cache", jobs=1)
    finally:
        secret.unlink()
        secret_dir.rmdir()
    [result] = report.files
    # The host's file is never there: the host secret is not found; the root's own /etc/shadow (the Debian
    # root's, not the host's) is found but unreadable to the unprivileged builder.
    refused = "file not found" if target == "SECRET" else "Permission denied"
    assert result.status == "failed" and refused in result.output
    assert "HOST-SECRET" not in result.output and "root:" not in result.output


def project(tmp_path: Path, command: str, **settings: object) -> StageContext:
    workspace = Workspace(tmp_path / "run-1")
    workspace.ensure()
    workspace.source.mkdir()
    workspace.hip.mkdir()
    values = {"build_mode": "project", "build_command": command, **settings}
    return StageContext(1, 1, workspace, ProjectSettings.from_dict(values), tmp_path / "cache", {})


def test_a_build_command_cannot_reach_sockets_other_runs_the_network_or_the_host_disk(tmp_path: Path) -> None:
    other_run = tmp_path / "run-2" / "hip"
    other_run.mkdir(parents=True)
    (other_run / "kernel.cu").write_text("ANOTHER-RUN-SOURCE\n")
    outside = Path(tempfile.mkdtemp(dir="/var/tmp"))
    script = textwrap.dedent(f"""\
        import socket
        for target in (("127.0.0.1", 5432), ("127.0.0.1", 6379), ("192.0.2.1", 80)):
            try:
                socket.create_connection(target, timeout=3); print("REACHED", target)
            except OSError as exc:
                print("blocked", target, exc)
        for path in ("/var/run/postgresql/.s.PGSQL.5432", "/run/redis/redis-server.sock"):
            s = socket.socket(socket.AF_UNIX)
            try:
                s.connect(path); print("REACHED", path)
            except OSError as exc:
                print("blocked", path, exc)
        for path in ("{other_run}/kernel.cu", "../../run-2/hip/kernel.cu", "/etc/shadow"):
            try:
                print("READ", open(path).read())
            except OSError as exc:
                print("blocked", path, exc)
        for path in ("{outside}/dropped", "/usr/dropped", "/workspace/source/dropped"):
            try:
                open(path, "w").write("x"); print("WROTE", path)
            except OSError as exc:
                print("blocked", path, exc)
        """)
    (tmp_path / "run-1").mkdir(parents=True, exist_ok=True)
    ctx = project(tmp_path, "python3 attack.py")
    (ctx.workspace.hip / "attack.py").write_text(script)
    logs: list[str] = []
    ctx.log = logs.append
    result = compile_stage.run(ctx)
    output = "".join(logs)
    leftovers = list(outside.iterdir())
    outside.rmdir() if not leftovers else None
    assert "REACHED" not in output and "READ" not in output and "WROTE" not in output
    assert output.count("blocked") == 11, output
    assert leftovers == [] and not (ctx.workspace.source / "dropped").exists()
    # Every attempt was blocked and the build itself went on to exit 0: pass/fail comes from the sandbox's
    # signals, not from the "Network is unreachable" / "Read-only file system" words it printed.
    assert result.outcome == "passed"


def test_a_fork_bomb_in_a_build_is_stopped_at_the_process_limit(tmp_path: Path) -> None:
    ctx = project(tmp_path, "for i in $(seq 1 5000); do sleep 30 & done; wait", build_timeout_s=120)
    result = compile_stage.run(ctx)
    assert result.outcome == "failed" and "processes" in result.summary
    assert result.data["project_build"]["steps"][0]["duration_s"] < 60


def test_two_gigabytes_of_build_output_are_cut_at_the_limit(tmp_path: Path) -> None:
    ctx = project(tmp_path, "head -c 2000000000 /dev/zero | tr '\\\\0' 'x' | fold -w 100", build_timeout_s=300)
    result = compile_stage.run(ctx)
    assert result.outcome == "failed" and "printed more than" in result.summary


def test_a_build_sleeping_past_its_limit_is_killed(tmp_path: Path) -> None:
    ctx = project(tmp_path, "sleep 600", build_timeout_s=2)
    started = time.monotonic()
    result = compile_stage.run(ctx)
    assert result.outcome == "failed" and "time limit of 2 s" in result.summary
    assert time.monotonic() - started < 30


def test_killing_the_worker_mid_compile_leaves_no_compiler_running(tmp_path: Path) -> None:
    marker = f"killed-worker-{os.getpid()}-{time.monotonic_ns()}"
    tree = tmp_path / marker / "hip"
    tree.mkdir(parents=True)
    # A translation unit that keeps the compiler busy for minutes: a constant evaluation of 2^31 steps.
    (tree / f"{marker}.hip").write_text(textwrap.dedent("""\
        #include <hip/hip_runtime.h>
        constexpr long spin() { long s = 0; for (long i = 0; i < (1L << 40); ++i) s += i % 7; return s; }
        static_assert(spin() != 1, "");
        """))
    code = ("import sys; from pathlib import Path; from worker.project_settings import ProjectSettings; "
            "from worker.toolchain.compile import compile_tree; "
            f"compile_tree(Path({str(tree)!r}), Path({str(tree.parent / 'build')!r}), "
            f"ProjectSettings(compile_timeout_s=600, extra_flags=('-fconstexpr-steps=2147483647',)), Path({str(tmp_path / 'cache')!r}), jobs=1)")
    worker = subprocess.Popen([sys.executable, "-c", code], cwd=Path(__file__).resolve().parents[2])
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and not _processes_mentioning(marker, "clang"):
        time.sleep(0.2)
    assert _processes_mentioning(marker, "clang"), "the compiler never started"
    time.sleep(1.0)
    worker.send_signal(signal.SIGKILL)
    worker.wait()
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline and _processes_mentioning(marker):
        time.sleep(0.2)
    assert _processes_mentioning(marker) == []


def _processes_mentioning(marker: str, also: str = "") -> list[str]:
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            command = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if marker in command and also in command:
            found.append(command)
    return found

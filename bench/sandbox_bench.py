"""Per-job overhead of the sandbox's isolation: the same translation units compiled through today's
``Sandbox.run`` and through the sandbox as it was before it gave each job its own limits, in one run.

"isolated" is ``Sandbox.run`` as the compile stage calls it: the launcher (cgroup per job, rlimits,
overlay views of the toolchain root in a private mount namespace, bubblewrap options through
``--args``), a user id leased for the sandbox, and the workspace on a size-limited work volume
(``open_work``: a loop-mounted ext4 image). "before" is the command line the sandbox built before
(commit 0ab0147): ``prlimit`` around ``bwrap`` with plain binds and ``setpriv`` to the shared user,
the workspace a plain folder. Both run the same clang command line through the same runner, with
the same ``/tmp`` (bubblewrap's tmpfs) and the same toolchain root; they alternate file by file (the
order flips every file) so drift in machine load hits both alike. First a tiny job (``true``) 40
times each for the fixed cost per job, then the translation units. Prints totals, medians and the
ratio isolated/before (target at most 1.10).

    nice .venv/bin/python bench/sandbox_bench.py [--files 40]
"""
from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.compile_bench import generate_tree  # noqa: E402
from worker.context import Workspace  # noqa: E402
from worker.toolchain.detect import hip_environment  # noqa: E402
from worker.toolchain.roots import ToolchainRoot, select_root  # noqa: E402
from worker.toolchain.runner import run_process  # noqa: E402
from worker.toolchain.sandbox import PATH, Sandbox, SandboxLimits, isolation_notes  # noqa: E402
from worker.toolchain.work import open_work  # noqa: E402

FLAGS = ["-c", "-std=c++17", "-O3", "-fPIC", "--offload-arch=gfx90a", "-Iinclude", "-x", "hip"]
LIMITS = SandboxLimits(timeout_s=300, memory_mb=8192, processes=256)  # what the compile stage uses
BEFORE_UID = 64400
Job = Callable[[list[str], str], float]


def before_command(root: ToolchainRoot, workspace: Path, argv: list[str], cwd: str) -> list[str]:
    """The sandbox's command line before per-job isolation (0ab0147 ``Sandbox.command``), as it was."""
    cpu = int(LIMITS.timeout_s * (os.cpu_count() or 1)) + 60
    prlimit = ["prlimit", f"--cpu={cpu}", f"--fsize={LIMITS.file_size_mb << 20}", f"--nproc={LIMITS.processes}",
               "--core=0", f"--as={LIMITS.memory_mb << 20}", "--"]
    bwrap = ["bwrap", "--ro-bind", str(root.path), "/", "--proc", "/proc", "--dev", "/dev", "--perms", "1777",
             "--tmpfs", "/tmp", "--perms", "1777", "--tmpfs", "/dev/shm", "--bind", str(workspace), "/workspace",
             "--unshare-ipc", "--unshare-pid", "--unshare-net", "--unshare-uts", "--unshare-cgroup-try",
             "--hostname", "sandbox", "--die-with-parent", "--new-session", "--chdir", cwd, "--clearenv"]
    as_root = os.geteuid() == 0
    if not as_root:
        bwrap += ["--unshare-user", "--uid", str(BEFORE_UID), "--gid", str(BEFORE_UID)]
    env = {"PATH": PATH, "HOME": "/workspace/.home", "TMPDIR": "/tmp", "USER": "builder", "TERM": "dumb",
           **hip_environment()}
    for name, value in env.items():
        bwrap += ["--setenv", name, value]
    drop = (["/usr/bin/setpriv", f"--reuid={BEFORE_UID}", f"--regid={BEFORE_UID}", "--clear-groups",
             "--no-new-privs", "--inh-caps=-all", "--bounding-set=-all", "--"] if as_root else [])
    return [*prlimit, *bwrap, "--", *drop, *argv]


def before_job(root: ToolchainRoot, workspace: Path) -> Job:
    (workspace / ".home").mkdir(exist_ok=True)
    if os.geteuid() == 0:
        for folder, dirs, files in os.walk(workspace):
            for name in (".", *dirs, *files):
                os.chown(os.path.join(folder, name), BEFORE_UID, BEFORE_UID, follow_symlinks=False)

    def run(argv: list[str], cwd: str) -> float:
        started = time.monotonic()
        done = run_process(before_command(root, workspace, argv, cwd), workspace, {"PATH": PATH, "LANG": "C.UTF-8"},
                           LIMITS.timeout_s, None, LIMITS.output_bytes)
        assert done.ok, done.output
        return time.monotonic() - started
    return run


def isolated_job(root: ToolchainRoot, workspace: Path) -> Job:
    box = Sandbox(root, workspace)

    def run(argv: list[str], cwd: str) -> float:
        started = time.monotonic()
        done = box.run(argv, cwd, LIMITS)
        assert done.ok, (done.violations, done.process.output)
        return time.monotonic() - started
    return run


def alternate(jobs: dict[str, Job], commands: list[tuple[list[str], str]]) -> dict[str, list[float]]:
    names = list(jobs)
    times: dict[str, list[float]] = {name: [] for name in names}
    for index, (argv, cwd) in enumerate(commands):
        for name in names if index % 2 == 0 else reversed(names):
            times[name].append(jobs[name](argv, cwd))
    return times


def report(title: str, times: dict[str, list[float]], unit: str = "s") -> float:
    scale = 1000.0 if unit == "ms" else 1.0
    print(title)
    for name, values in times.items():
        print(f"  {name:9s}: total {sum(values):8.2f} s, median {statistics.median(values) * scale:8.2f} {unit} per job")
    ratio = sum(times["isolated"]) / sum(times["before"])
    per_file = statistics.median(i / b for i, b in zip(times["isolated"], times["before"], strict=True))
    print(f"  ratio isolated/before: {ratio:.3f} (median of per-job ratios {per_file:.3f})")
    return ratio


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--files", type=int, default=40)
    args = parser.parse_args()
    root = select_root()
    print(f"toolchain {root.name} (HIP {root.hip_version}); {args.files} translation units; "
          f"load average {os.getloadavg()[0]:.2f}; isolation fallbacks: {isolation_notes() or 'none'}")
    with tempfile.TemporaryDirectory(dir="/var/tmp") as scratch:
        plain = Path(scratch) / "before"
        generate_tree(plain / "hip", args.files)
        (plain / "out").mkdir()
        with open_work(Workspace(Path(scratch) / "run"), size_mb=4096, log=lambda line: print(" ", line.strip())) as work:
            shutil.copytree(plain / "hip", work / "hip")
            (work / "out").mkdir()
            jobs = {"before": before_job(root, plain), "isolated": isolated_job(root, work)}
            tiny = alternate(jobs, [(["true"], "/workspace")] * 40)
            report("fixed cost per job (true, 40 each):", tiny, unit="ms")
            overhead = statistics.median(tiny["isolated"]) - statistics.median(tiny["before"])
            print(f"  isolation adds {overhead * 1000:.1f} ms per job (medians)")
            units = sorted(p.relative_to(plain / "hip").as_posix() for p in (plain / "hip" / "src").iterdir())
            commands = [([root.clang, *FLAGS, unit, "-o", f"/workspace/out/{Path(unit).name}.o"], "/workspace/hip")
                        for unit in units]
            ratio = report(f"compile, {len(units)} translation units each:", alternate(jobs, commands))
    print(f"ratio {ratio:.3f} (target <= 1.10); load average {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()

"""The CUDA reference side of validation, run for real on an NVIDIA GPU machine (not part of the tests).

Three runs through the same code the `cuda` runner uses (worker.stages.smoke), each in the sandbox over the
host's read-only /usr and /opt with only the NVIDIA device files: (1) the vecadd-with-cuBLAS fixture built
with nvcc and run as a plain smoke command, (2) the train-steps preset on train_gpu.py, (3) the llm-serve
preset on serve_gpu.py. Prints each outcome as JSON lines. Usage: python bench/gpu_reference/run_reference.py
"""
from __future__ import annotations

import json
import shutil
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from worker.context import StageContext, Workspace  # noqa: E402
from worker.project_settings import ProjectSettings  # noqa: E402
from worker.stages.smoke import run_reference  # noqa: E402


def context(name: str, files: dict[str, Path], settings: dict[str, object]) -> StageContext:
    root = Path(tempfile.mkdtemp(prefix=f"ref-{name}-", dir="/var/tmp"))
    workspace = Workspace(root)
    workspace.ensure()
    for relative, origin in files.items():
        target = workspace.source / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copytree(origin, target) if origin.is_dir() else shutil.copy(origin, target)
    return StageContext(1, 1, workspace, ProjectSettings.from_dict(settings), root / "cache", {},
                        log=lambda text: _log(name, text))


def _log(name: str, text: str) -> None:
    sys.stderr.write(f"[{name}] {text}")


def report(name: str, ctx: StageContext) -> None:
    started = time.monotonic()
    result = run_reference(ctx)
    print(json.dumps({"run": name, "wall_s": round(time.monotonic() - started, 2), **result}, default=str)[:6000],
          flush=True)


def main() -> None:
    fixture = REPO / "tests" / "fixtures" / "vecadd_cublas"
    report("vecadd-cublas", context("vecadd", {"src": fixture / "src"},
                                    {"smoke_command": "./vecadd", "link_libraries": ["cublas"]}))
    here = Path(__file__).resolve().parent
    programs = {"train_gpu.py": here / "train_gpu.py", "serve_gpu.py": here / "serve_gpu.py",
                "openai_server.py": REPO / "tests" / "pytorch_projects" / "programs" / "openai_server.py"}
    report("train-steps", context("train", programs, {"smoke_preset": {
        "preset": "train-steps", "command": f"{sys.executable} train_gpu.py 30", "steps": 30}}))
    report("llm-serve", context("serve", programs, {"smoke_preset": {
        "preset": "llm-serve", "command": f"{sys.executable} serve_gpu.py {{port}}", "max_tokens": 32,
        "startup_timeout_s": 300}}))


if __name__ == "__main__":
    main()

"""PyTorch's own hipify (``torch.utils.hipify``) as a translation engine for PyTorch extensions.

ROCm PyTorch's ``BuildExtension`` runs exactly this at build time, so its output is what the
user's build will compile: ``csrc/cuda/x.cu`` becomes ``csrc/hip/x.hip``, ATen/c10 CUDA headers
become their HIP forms, launches become ``hipLaunchKernelGGL``. Torch is optional: it runs in a
child interpreter (``python -m translator.torch_hipify``), so the worker never imports it, and
:func:`unavailable_reason` says what to install when it is missing. The child only rewrites text.
"""
from __future__ import annotations

import contextlib
import importlib.util
import json
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

ENGINE_NAME = "torch.utils.hipify"
SOURCE_SUFFIXES = (".cu", ".cuh", ".cpp", ".cc", ".cxx", ".c", ".h", ".hpp", ".hh", ".inl")
INSTALL_HINT = ("install PyTorch into the worker's environment (the CPU wheel is enough: "
                "pip install torch --index-url https://download.pytorch.org/whl/cpu)")


class TorchHipifyError(RuntimeError):
    """The child failed or timed out; the message is meant for the user."""


@dataclass(frozen=True)
class HipifiedFile:
    path: str  # relative to the project directory given to hipify
    hipified: str  # relative path of the output (the same path when rewritten in place)
    status: str  # "ok", "skipped, no changes", "skipped, already hipified", "ignored ..."

    @property
    def changed(self) -> bool:
        return self.status == "ok"


def unavailable_reason(python: str = sys.executable) -> str:
    """Empty when ``torch.utils.hipify`` can be used with ``python``; else what is missing."""
    if python == sys.executable:
        return "" if importlib.util.find_spec("torch") is not None else f"PyTorch is not installed; {INSTALL_HINT}"
    probe = subprocess.run([python, "-c", "import importlib.util,sys; sys.exit(importlib.util.find_spec('torch') "
                                          "is None)"], capture_output=True, timeout=60, check=False)
    return "" if probe.returncode == 0 else f"PyTorch is not installed for {python}; {INSTALL_HINT}"


def hipify_extension(project: Path, files: list[Path], *, timeout_s: float = 600,
                     python: str = sys.executable) -> list[HipifiedFile]:
    """Run PyTorch's hipify over ``files`` (inside ``project``), in place, as ``BuildExtension`` does."""
    request = {"project": str(project.resolve()), "files": [str(f.resolve()) for f in files]}
    try:
        done = subprocess.run([python, "-m", "translator.torch_hipify"], input=json.dumps(request),
                              capture_output=True, text=True, timeout=timeout_s, check=False,
                              cwd=Path(__file__).resolve().parent.parent)
    except subprocess.TimeoutExpired as error:
        raise TorchHipifyError(f"{ENGINE_NAME} did not finish within {timeout_s:.0f} s") from error
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["no output"])[-1]
        raise TorchHipifyError(f"{ENGINE_NAME} failed: {last}")
    return [HipifiedFile(**item) for item in json.loads(done.stdout)]


def _relative(path: str, root: str) -> str:
    return Path(path).resolve().relative_to(Path(root)).as_posix()


def main() -> None:
    request = json.load(sys.stdin)
    root, files = request["project"], request["files"]
    from torch.utils.hipify import hipify_python  # the child only: torch stays out of the worker

    with contextlib.redirect_stdout(sys.stderr):  # hipify prints progress; stdout carries the JSON answer
        results = hipify_python.hipify(
            project_directory=root, output_directory=root, extra_files=files, includes=[f"{root}/*"],
            is_pytorch_extension=True, hipify_extra_files_only=True, show_progress=False, show_detailed=False)
    answer = []
    for path, result in sorted(results.items()):
        if not str(Path(path).resolve()).startswith(root + "/"):
            continue
        hipified = result.hipified_path or path
        answer.append({"path": _relative(path, root), "hipified": _relative(hipified, root),
                       "status": str(result.status).strip().strip("[]")})
    json.dump(answer, sys.stdout)


if __name__ == "__main__":
    main()

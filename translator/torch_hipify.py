"""PyTorch's own hipify (``torch.utils.hipify``) as a translation engine for PyTorch extensions.

ROCm PyTorch's ``BuildExtension`` runs exactly this at build time, so its output is what the
user's build will compile: ``csrc/cuda/x.cu`` becomes ``csrc/hip/x.hip``, ATen/c10 CUDA headers
become their HIP forms, launches become ``hipLaunchKernelGGL``.

It reads user files (and follows their ``#include`` lines wherever they lead), so it never runs in the
worker: ``worker/stages/torch_engine.py`` runs this file as a script with the toolchain root's
``python3`` in the sandbox, with the worker's installed ``torch/utils/hipify`` folder bound read-only
beside it. That folder is pure Python and imports only the standard library and itself, so it is
imported as the top-level package ``hipify`` without the rest of torch: no torch C extension runs, and
the root needs no torch. This file, for the same reason, imports only the standard library; the worker
side only finds the folder (:func:`hipify_package`), it never imports torch.
"""
from __future__ import annotations

import contextlib
import importlib.util
import json
import os
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

ENGINE_NAME = "torch.utils.hipify"
SOURCE_SUFFIXES = (".cu", ".cuh", ".cpp", ".cc", ".cxx", ".c", ".h", ".hpp", ".hh", ".inl")
INSTALL_HINT = ("install PyTorch into the worker's environment (the CPU wheel is enough: "
                "pip install torch --index-url https://download.pytorch.org/whl/cpu)")
MIN_PYTHON = (3, 10)  # hipify_python evaluates ``X | None`` in signatures
SCRIPT = Path(__file__).resolve()  # what the sandbox runs


class TorchHipifyError(RuntimeError):
    """The engine failed, was stopped, or gave no usable answer; the message is meant for the user."""


@dataclass(frozen=True)
class HipifiedFile:
    path: str  # relative to the project directory given to hipify
    hipified: str  # relative path of the output (the same path when rewritten in place)
    status: str  # "ok", "skipped, no changes", "skipped, already hipified", "ignored ..."

    @property
    def changed(self) -> bool:
        return self.status == "ok"


def hipify_package() -> Path | None:
    """The installed torch's ``utils/hipify`` folder, found without importing torch; None without torch."""
    spec = importlib.util.find_spec("torch")  # a top-level name: located, not imported
    if spec is None or not spec.origin:
        return None
    folder = Path(spec.origin).parent / "utils" / "hipify"
    return folder if (folder / "hipify_python.py").is_file() and (folder / "__init__.py").is_file() else None


def parse_answer(text: str, jobs: int) -> list[list[HipifiedFile]]:
    """The engine's answer (one list per directory asked for), checked field by field: it is hostile data."""
    try:
        raw = json.loads(text)
        if not isinstance(raw, list) or len(raw) != jobs:
            raise ValueError("not one list per directory")
        return [[_entry(item) for item in job] for job in raw]
    except (ValueError, TypeError, AttributeError) as exc:
        raise TorchHipifyError(f"{ENGINE_NAME} gave no usable answer ({exc})") from exc


def _entry(item: object) -> HipifiedFile:
    if not isinstance(item, dict) or not all(isinstance(item.get(k), str) for k in ("path", "hipified", "status")):
        raise ValueError("an entry is not {path, hipified, status}")
    for key in ("path", "hipified"):
        parts = Path(item[key]).parts
        if not parts or item[key].startswith("/") or ".." in parts:
            raise ValueError(f"{item[key]!r} is not inside the project")
    return HipifiedFile(item["path"], item["hipified"], item["status"][:200])


# Everything below runs inside the sandbox, under the toolchain root's python3.

def _relative(path: str, root: str) -> str:
    return os.path.relpath(os.path.realpath(path), os.path.realpath(root)).replace(os.sep, "/")


def _hipify_directory(hipify_python: ModuleType, root: str, files: list[str],
                      include_dirs: list[str]) -> list[dict[str, str]]:
    """One extension directory, in place, as ``BuildExtension`` does (a fresh result table each time)."""
    hipify_python.HIPIFY_FINAL_RESULT.clear()
    with contextlib.redirect_stdout(sys.stderr):  # hipify prints progress
        results = hipify_python.hipify(
            project_directory=root, output_directory=root, extra_files=files, includes=[f"{root}/*"],
            header_include_dirs=include_dirs,
            is_pytorch_extension=True, hipify_extra_files_only=True, show_progress=False, show_detailed=False)
    answer = []
    real_root = os.path.realpath(root)
    for path, result in sorted(results.items()):
        hipified = result.hipified_path or path
        if not all(os.path.realpath(p).startswith(real_root + "/") for p in (path, hipified)):
            continue  # a header reached outside the directory: not part of this extension's account
        answer.append({"path": _relative(path, root), "hipified": _relative(hipified, root),
                       "status": str(result.status).strip().strip("[]")})
    return answer


def main() -> None:
    """``python3 -I torch_hipify.py`` with the request as JSON on standard input:
    ``{"source", "tree", "answer", "directories": [{"directory", "files", "include_dirs"}]}`` (paths inside the sandbox).
    Copies ``source`` to ``tree``, hipifies each directory of ``tree`` in place, writes the answer file."""
    request = json.load(sys.stdin)
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # the bound ``hipify`` package lies beside
    from hipify import hipify_python  # the bound package (torch/utils/hipify), not torch

    tree = request["tree"]
    shutil.copytree(request["source"], tree, symlinks=True)
    answer = []
    for job in request["directories"]:
        root = os.path.normpath(os.path.join(tree, job["directory"]))
        files = [os.path.join(tree, name) for name in job["files"]]
        include_dirs = [os.path.join(tree, name) for name in job.get("include_dirs", [])]
        answer.append(_hipify_directory(hipify_python, root, files, include_dirs) if files else [])
    with open(request["answer"], "w", encoding="utf-8") as handle:
        json.dump(answer, handle)


if __name__ == "__main__":
    main()

"""Guarded edits of a PyTorch extension's ``setup.py``: CUDAExtension's own ROCm path, made to work.

A ROCm build of PyTorch already builds a ``CUDAExtension`` for AMD GPUs: ``BuildExtension`` hipifies its
sources at build time and compiles them with hipcc. What stops a CUDA project's ``setup.py`` there is
what it says to nvcc: NVIDIA targets (``-gencode``), nvcc-only options, and checks that stop the build
when no nvcc is installed. The edit (read with ``ast``, written as text so the team's formatting stays):
- imports ``rocm/torch_rocm.py`` after the script's own imports;
- passes each ``CUDAExtension``'s ``extra_compile_args`` through ``torch_rocm.compile_args``, which returns
  them unchanged on a CUDA PyTorch and gives hipcc's spelling of the nvcc list on a ROCm one;
- a top-level ``if`` that raises when nvcc (or ``CUDA_HOME``) is missing gains ``not torch_rocm.ROCM and``.
With a CUDA PyTorch every value the build sees is the one it saw before. Idempotent: a script that already
imports the helper is returned as it is. ``NotUnderstood`` when the script is not Python or has no
``CUDAExtension``.
"""
from __future__ import annotations

import ast
from dataclasses import dataclass, field

from worker.delivery.buildedits import NotUnderstood

SETUP_MARKER = "import torch_rocm"
HELPER_IMPORT = """\
# A ROCm PyTorch (torch.version.hip) builds these CUDAExtensions for AMD GPUs: BuildExtension hipifies the
# sources at build time and rocm/torch_rocm.py gives hipcc the nvcc flags. A CUDA PyTorch builds as before.
import os.path as _rocm_path
import sys as _rocm_sys

_rocm_sys.path.insert(0, _rocm_path.join(_rocm_path.dirname(_rocm_path.abspath(__file__)), "rocm"))
import torch_rocm  # noqa: E402
"""
WRAP = "torch_rocm.compile_args"
_CUDA_WORDS = ("nvcc", "CUDA_HOME", "cuda_home")


@dataclass
class SetupEdit:
    text: str
    wrapped: int = 0  # extra_compile_args passed through the helper
    guarded: int = 0  # nvcc checks that no longer stop a ROCm build
    notes: list[str] = field(default_factory=list)


def edit_setup_py(text: str) -> SetupEdit:
    if SETUP_MARKER in text:
        return SetupEdit(text)
    try:
        module = ast.parse(text)
    except SyntaxError as exc:
        raise NotUnderstood(f"setup.py is not Python this worker reads ({exc.msg}, line {exc.lineno})") from exc
    calls = [node for node in ast.walk(module) if isinstance(node, ast.Call) and _called(node) == "CUDAExtension"]
    if not calls:
        raise NotUnderstood("setup.py declares no CUDAExtension")
    data = text.encode()  # ast's columns count UTF-8 bytes
    offsets = [0]
    for line in data.splitlines(keepends=True):
        offsets.append(offsets[-1] + len(line))
    edits: list[tuple[int, int, bytes]] = []  # (start, end, replacement) in byte offsets
    result = SetupEdit(text)
    for call in calls:
        args = next((k.value for k in call.keywords if k.arg == "extra_compile_args"), None)
        if args is not None:
            start, end = _span(args, offsets)
            edits.append((start, end, b"%s(%s)" % (WRAP.encode(), data[start:end])))
            result.wrapped += 1
    for node in module.body:
        if isinstance(node, ast.If) and _stops_without_nvcc(node):
            start, end = _span(node.test, offsets)
            edits.append((start, end, b"not torch_rocm.ROCM and (%s)" % data[start:end]))
            result.guarded += 1
        elif not isinstance(node, (ast.FunctionDef, ast.ClassDef, ast.If)) and _runs_nvcc(node):
            result.notes.append(f"setup.py:{node.lineno} runs nvcc when the script starts; a ROCm build has "
                                "none: guard it with `if not torch_rocm.ROCM:` by hand")
    imports = [node for node in module.body if isinstance(node, (ast.Import, ast.ImportFrom))]
    at = offsets[imports[-1].end_lineno or imports[-1].lineno] if imports else 0
    edits.append((at, at, (b"" if at == 0 or data[:at].endswith(b"\n\n") else b"\n") + HELPER_IMPORT.encode()))
    out = data
    for start, end, replacement in sorted(edits, key=lambda e: (e[0], e[1]), reverse=True):
        out = out[:start] + replacement + out[end:]
    result.text = out.decode()
    return result


def _called(node: ast.Call) -> str:
    func = node.func
    return func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""


def _span(node: ast.expr, offsets: list[int]) -> tuple[int, int]:
    end_line = node.end_lineno if node.end_lineno is not None else node.lineno
    end_col = node.end_col_offset if node.end_col_offset is not None else node.col_offset
    return offsets[node.lineno - 1] + node.col_offset, offsets[end_line - 1] + end_col


def _stops_without_nvcc(node: ast.If) -> bool:
    """``if <a test naming nvcc or CUDA_HOME>: raise ...`` at the top level (no else)."""
    test = ast.unparse(node.test)
    return (any(word in test for word in _CUDA_WORDS) and not node.orelse
            and all(isinstance(statement, ast.Raise) for statement in node.body))


def _runs_nvcc(node: ast.stmt) -> bool:
    """A top-level statement that calls something with ``nvcc`` in its arguments (``nvcc -V`` at start-up)."""
    for call in (n for n in ast.walk(node) if isinstance(n, ast.Call)):
        if any(isinstance(n, ast.Constant) and isinstance(n.value, str) and "nvcc" in n.value
               for arg in call.args for n in ast.walk(arg)):
            return True
    return False

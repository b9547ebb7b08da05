"""What the compile and link stages do first for the run's project kind.

* A stage that does not apply to the kind (compile of a Python application...) is *not
  applicable*, with the reason (``applicability``).
* A PyTorch extension (or the extension kernels of a mixed repository) in a toolchain root without
  a ROCm PyTorch is compiled against the hipified header tree (``extension_build_kind``;
  ``worker/stages/extension_compile.py``); ``build_commands`` are what a ROCm PyTorch runner runs.
"""
from __future__ import annotations

from pathlib import Path

from worker.context import StageContext, StageResult
from worker.scanning.project_kind import ProjectKind
from worker.stages.applicability import not_applicable_result, project_kind
from worker.toolchain.detect import detect_toolchain

_SITE_GLOBS = ("usr/lib/python3*/*-packages/torch/version.py", "usr/local/lib/python3*/*-packages/torch/version.py",
               "opt/*/lib/python3*/site-packages/torch/version.py", "opt/conda/envs/*/lib/python3*/site-packages/"
               "torch/version.py")
RUNNER_IMAGE = "rocm/pytorch"


def rocm_pytorch_in(root: Path) -> str:
    """The torch/version.py of a ROCm PyTorch in the root ('' when there is none)."""
    for pattern in _SITE_GLOBS:
        for version in sorted(root.glob(pattern)):
            text = version.read_text(encoding="utf-8", errors="replace")
            if "hip = '" in text or 'hip = "' in text:
                return "/" + version.relative_to(root).as_posix()
    return ""


def _kind(ctx: StageContext) -> ProjectKind | None:
    payload = ctx.scan_data().get("project_kind")
    return ProjectKind.from_dict(payload) if isinstance(payload, dict) else None


def extension_build_kind(ctx: StageContext) -> ProjectKind | None:
    """The kind when compile builds PyTorch extensions against the hipified header tree: an extension (or
    mixed) project and no ROCm PyTorch in the toolchain root; None to compile as usual."""
    if project_kind(ctx) not in ("pytorch-extension", "mixed"):
        return None
    kind = _kind(ctx)
    if kind is None or not kind.extension_markers:
        return None
    toolchain = detect_toolchain(ctx.settings.toolchain)
    found = rocm_pytorch_in(Path(toolchain.root)) if toolchain.root else ""
    if found:
        ctx.log(f"compile: ROCm PyTorch found in the toolchain at {found}\n")
        return None
    return kind


def kind_gate(ctx: StageContext, stage: str) -> StageResult | None:
    """A result that ends ``stage`` at once for this kind, or None to go on as usual."""
    return not_applicable_result(ctx, stage)

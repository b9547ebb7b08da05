"""What the compile and link stages do first for the run's project kind.

* A stage that does not apply to the kind (compile of a Python application...) is *not
  applicable*, with the reason (``applicability``).
* Compiling a PyTorch extension (or the extension kernels of a mixed repository) needs a ROCm
  build of PyTorch inside the toolchain root: ROCm PyTorch's ``BuildExtension`` hipifies and
  builds it, with ``Python.h`` and the ATen headers. When the root has none the stage fails with
  an *environment* cause that says so, and lists the commands it would run.
"""
from __future__ import annotations

from pathlib import Path

from worker.context import StageContext, StageResult
from worker.payloads import CompileData
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


def extension_dirs(kind: ProjectKind) -> list[str]:
    """Directories holding an extension build (``.`` for the root): where a marker file lies."""
    dirs = []
    for marker in kind.extension_markers:
        rel = marker.split(":", 1)[0]
        parent = rel.rsplit("/", 1)[0] if "/" in rel else "."
        owner = next((d for d in kind.kernel_dirs if d != "." and (parent == d or parent.startswith(d + "/"))), parent)
        if owner not in dirs:
            dirs.append(owner)
    return dirs or ["."]


def build_commands(kind: ProjectKind, archs: tuple[str, ...]) -> list[str]:
    targets = ";".join(archs)
    return [f"cd {'/workspace/hip' if d == '.' else '/workspace/hip/' + d} && PYTORCH_ROCM_ARCH='{targets}' "
            "python3 -m pip install --no-build-isolation --no-deps -v ." for d in extension_dirs(kind)]


def kind_gate(ctx: StageContext, stage: str) -> StageResult | None:
    """A result that ends ``stage`` at once for this kind, or None to go on as usual."""
    gated = not_applicable_result(ctx, stage)
    if gated is not None or stage != "compile" or project_kind(ctx) not in ("pytorch-extension", "mixed"):
        return gated
    kind = _kind(ctx)
    if kind is None or not kind.extension_markers:
        return None
    toolchain = detect_toolchain(ctx.settings.toolchain)
    found = rocm_pytorch_in(Path(toolchain.root)) if toolchain.root else ""
    if found:
        ctx.log(f"compile: ROCm PyTorch found in the toolchain at {found}\n")
        return None
    commands = build_commands(kind, ctx.settings.offload_archs)
    where = f"the toolchain {toolchain.name}" if toolchain.name else "this machine (no toolchain root)"
    ctx.log(f"compile: {where} has no ROCm build of PyTorch; a PyTorch extension is built by ROCm PyTorch's "
            "BuildExtension. It would run:\n" + "".join(f"  $ {c}\n" for c in commands))
    return StageResult.failed(
        f"environment: {where} has no ROCm build of PyTorch, which compiling a PyTorch extension needs "
        f"(it provides Python.h, the ATen/c10 HIP headers and BuildExtension); run it on a runner built from the "
        f"{RUNNER_IMAGE} image. It would run: {'; '.join(commands)}",
        **CompileData(cause="environment", missing="ROCm build of PyTorch", toolchain=toolchain.to_dict(),
                      would_run=commands, runner_image=RUNNER_IMAGE, project_kind=kind.kind),
    )

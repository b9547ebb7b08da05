"""GPU touchpoints in Python sources, found with ``ast`` (nothing is imported or run).

Rules (ids ``python.*``): ``torch.version.cuda`` checks (None on ROCm; a truth test is fixed to
``(torch.version.cuda or torch.version.hip)``), compute-capability checks and ``sm_XX`` strings,
``torch.backends.cudnn``/TF32 flags, FP16 autocast and ``GradScaler``, ``NCCL_*`` and
``CUDA_VISIBLE_DEVICES`` set in code, the ``nccl`` process-group backend, ``nvidia-smi``/``nvcc`` run
through ``subprocess``/``os``, ``pynvml``, imports of CUDA-only packages, Triton inline PTX, CuPy raw
kernels and Numba CUDA. A finding's ``text`` is the exact source at its line and column, so the
fixer can apply the safe ones and nothing else.
"""
from __future__ import annotations

import ast
import re

from worker.scanning.model import Finding, Severity

_NOTE = {  # notebook entries (see migrator/notebook_seed/pytorch.yaml for the new ones)
    "version": "torch-version-cuda", "arch": "gpu-arch-check", "tools": "nvidia-tools-in-code",
    "ptx": "triton-inline-ptx", "fp16": "fp16-nan-use-bf16", "visible": "cuda-visible-devices",
    "nccl": "rccl-hang", "wheels": "cuda-python-wheels",
}
_CUDA_ONLY_IMPORTS = {
    "flash_attn": "flash-attn has no ROCm wheel; build it against ROCm PyTorch or use "
                  "torch.nn.functional.scaled_dot_product_attention",
    "xformers": "xformers must be built from source against ROCm PyTorch",
    "apex": "NVIDIA apex: use AMD's ROCm fork of apex, or torch.amp / torch.optim equivalents",
    "pycuda": "PyCUDA has no ROCm backend; port to torch, CuPy (HIP build) or a HIP extension",
    "flashinfer": "FlashInfer is CUDA only; SGLang on ROCm uses the aiter or triton attention backends",
    "tensorrt": "TensorRT is NVIDIA only; use MIGraphX or ONNX Runtime's ROCm/MIGraphX providers",
    "nvidia_smi": "nvidia_smi talks to NVML; use amdsmi",
}
_TOOLS = {"nvidia-smi": "amd-smi (or rocm-smi); its output format differs, prefer the amdsmi Python API",
          "nvcc": "hipcc (through ROCm PyTorch's cpp_extension where possible)"}
_SM_STRING = re.compile(r"\bsm_?[1-9]\d{1,2}a?\b|\bcompute_[1-9]\d{1,2}\b")
_PTX_HINT = re.compile(r"\b(?:mov|cvt|ld|st|add|mul|fma|ex2|lg2|rcp|shfl|bar|prmt)\.[a-z0-9_.]+|%\w+|\$\d")
_RAW_CUDA = re.compile(r"\basm\s*(?:volatile)?\s*\(|__shfl_\w+_sync\s*\(\s*0x[fF]{8}|__ballot_sync\s*\(")


Located = ast.expr | ast.stmt


def _dotted(node: ast.AST) -> str:
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
        return ".".join(reversed(parts))
    return ""


class _Visitor(ast.NodeVisitor):
    def __init__(self, rel: str, text: str) -> None:
        self.rel = rel
        self.lines = text.splitlines()
        self.findings: list[Finding] = []
        self.truth_tested: set[int] = set()  # ids of torch.version.cuda nodes used as a truth value
        self.handled: set[int] = set()  # ids of torch.version.cuda nodes or-ed/and-ed with torch.version.hip
        self.knows_hip = "torch.version.hip" in text

    # -- helpers --------------------------------------------------------------------------------
    def _column(self, node: Located) -> int:
        line = self.lines[node.lineno - 1] if 0 < node.lineno <= len(self.lines) else ""
        return len(line.encode("utf-8")[: node.col_offset].decode("utf-8", errors="replace"))

    def _segment(self, node: Located) -> str:
        if node.lineno != getattr(node, "end_lineno", node.lineno):
            return ""
        line = self.lines[node.lineno - 1].encode("utf-8")
        return line[node.col_offset: node.end_col_offset].decode("utf-8", errors="replace")

    def add(self, node: Located, name: str, severity: Severity, explanation: str, note: str | None,
            *, replacement: str | None = None, suggestion: str | None = None, text: str | None = None) -> None:
        segment = text if text is not None else self._segment(node)
        self.findings.append(Finding(
            rule_id=f"python.{name}", severity=severity, file=self.rel, line=node.lineno,
            column=self._column(node), text=segment, explanation=explanation,
            replacement=replacement if segment else None, notebook_slug=_NOTE.get(note or ""),
            family="python-build", suggestion=suggestion,
        ))

    # -- truth tests of torch.version.cuda -------------------------------------------------------
    def _mark_truth(self, node: ast.AST) -> None:
        if _dotted(node) == "torch.version.cuda":
            self.truth_tested.add(id(node))

    def visit_If(self, node: ast.If) -> None:
        self._mark_truth(node.test)
        self.generic_visit(node)

    def visit_IfExp(self, node: ast.IfExp) -> None:
        self._mark_truth(node.test)
        self.generic_visit(node)

    def visit_BoolOp(self, node: ast.BoolOp) -> None:
        with_hip = any(_dotted(value) == "torch.version.hip" for value in node.values)
        for value in node.values:
            self._mark_truth(value)
            if with_hip:
                self.handled.add(id(value))
        self.generic_visit(node)

    def visit_UnaryOp(self, node: ast.UnaryOp) -> None:
        if isinstance(node.op, ast.Not):
            self._mark_truth(node.operand)
        self.generic_visit(node)

    def visit_Compare(self, node: ast.Compare) -> None:
        nones = all(isinstance(c, ast.Constant) and c.value is None for c in node.comparators)
        if nones and all(isinstance(op, (ast.Is, ast.IsNot)) for op in node.ops):
            self._mark_truth(node.left)
        self.generic_visit(node)

    def visit_Attribute(self, node: ast.Attribute) -> None:
        dotted = _dotted(node)
        if dotted == "torch.version.cuda" and id(node) in self.handled:
            pass  # already paired with torch.version.hip
        elif dotted == "torch.version.cuda" and self.knows_hip:
            self.add(node, "torch-version-cuda", "info", "torch.version.cuda is None on ROCm PyTorch; this file "
                     "also reads torch.version.hip, check that both branches are covered.", "version")
        elif dotted == "torch.version.cuda":
            if id(node) in self.truth_tested:
                self.add(node, "torch-version-cuda", "warning", "torch.version.cuda is None on ROCm PyTorch, so "
                         "this check treats a ROCm build as having no GPU support; torch.version.hip is set "
                         "instead.", "version", replacement="(torch.version.cuda or torch.version.hip)")
            else:
                self.add(node, "torch-version-cuda", "warning", "torch.version.cuda is None on ROCm PyTorch; code "
                         "that parses or compares the CUDA version needs a ROCm branch (torch.version.hip).",
                         "version", suggestion="torch.version.hip")
        elif dotted.startswith("torch.backends.cudnn.") and dotted.count(".") == 3:
            self.add(node, "cudnn-flag", "info", f"{dotted} maps to MIOpen on ROCm: benchmark=True runs MIOpen's "
                     "kernel search (slow first iterations, cached afterwards); deterministic is honoured.", None)
        elif dotted.startswith("torch.backends.cuda.matmul.allow_tf32") or dotted == "torch.backends.cudnn.allow_tf32":
            self.add(node, "tf32-flag", "info", "TF32 is an NVIDIA Ampere+ format; on MI200 (gfx90a) the flag "
                     "has no effect and MI300 uses its own reduced-precision mode: compare accuracy, do not assume it.",
                     None)
        self.generic_visit(node)

    # -- calls -------------------------------------------------------------------------------------
    def visit_Call(self, node: ast.Call) -> None:
        name = _dotted(node.func)
        last = name.rsplit(".", 1)[-1]
        if last in ("get_device_capability", "get_device_properties") and "cuda" in name:
            self.add(node.func, "compute-capability", "warning", "Compute capability on ROCm reports the gfx "
                     "version (gfx90a gives (9, 0), gfx942 (9, 4)): tests such as major >= 8 for bf16 or flash "
                     "attention mean something else. Test the feature (torch.cuda.is_bf16_supported()) or "
                     "read torch.cuda.get_device_properties(0).gcnArchName.", "arch",
                     suggestion="torch.cuda.is_bf16_supported()")
        elif last in ("autocast",):
            self._autocast(node, name)
        elif last == "GradScaler":
            self.add(node.func, "grad-scaler", "warning", "GradScaler goes with FP16 autocast, whose overflows "
                     "turn losses into nan more easily on ROCm; with BF16 (MI200 and newer) no scaler is needed.",
                     "fp16", suggestion="autocast(dtype=torch.bfloat16) without GradScaler")
        elif last == "init_process_group":
            self._backend(node)
        elif name in ("subprocess.run", "subprocess.call", "subprocess.check_call", "subprocess.check_output",
                      "subprocess.Popen", "os.system", "os.popen") and node.args:
            self._tool_call(node, node.args[0])
        elif last == "inline_asm_elementwise":
            self._inline_asm(node)
        elif last in ("RawKernel", "RawModule", "ElementwiseKernel", "ReductionKernel") and name.split(".")[0] in (
                "cp", "cupy"):
            self._cupy_kernel(node, name)
        elif name in ("os.environ.setdefault", "os.putenv") and node.args:
            self._environment(node, node.args[0])
        elif last == "jit" and name in ("cuda.jit", "numba.cuda.jit"):
            self.add(node.func, "numba-cuda", "error", "Numba's CUDA target does not run on AMD GPUs; port the "
                     "kernel to PyTorch, Triton or a HIP extension.", "wheels")
        self.generic_visit(node)

    def _autocast(self, node: ast.Call, name: str) -> None:
        dtype = next((k.value for k in node.keywords if k.arg == "dtype"), None)
        dotted = _dotted(dtype) if dtype is not None else ""
        if dotted in ("torch.float16", "torch.half") and dtype is not None:
            self.add(dtype, "autocast-fp16", "warning", "FP16 autocast overflows more easily on ROCm and can turn "
                     "the loss into nan; MI200 and newer GPUs run BF16 at the same speed.", "fp16",
                     suggestion="torch.bfloat16")
        elif dtype is None and ("cuda.amp" in name or name == "autocast"):
            self.add(node.func, "autocast-fp16", "warning", "autocast without a dtype on CUDA means FP16; prefer "
                     "dtype=torch.bfloat16 on MI200 and newer GPUs.", "fp16", suggestion="dtype=torch.bfloat16")

    def _backend(self, node: ast.Call) -> None:
        backend = next((k.value for k in node.keywords if k.arg == "backend"), node.args[0] if node.args else None)
        if isinstance(backend, ast.Constant) and backend.value == "nccl":
            self.add(backend, "nccl-backend", "info", "The nccl backend is RCCL on ROCm PyTorch: it works, but "
                     "NCCL_* tuning variables and topology assumptions need checking (hangs usually come from "
                     "them).", "nccl")

    def _tool_call(self, node: ast.Call, first: ast.expr) -> None:
        program = ""
        if isinstance(first, ast.Constant) and isinstance(first.value, str):
            program = first.value.split()[0] if first.value.split() else ""
        elif isinstance(first, (ast.List, ast.Tuple)) and first.elts and isinstance(first.elts[0], ast.Constant):
            program = str(first.elts[0].value)
        if program in _TOOLS:
            self.add(node, "nvidia-tool", "warning", f"Runs {program}, which does not exist on a ROCm machine; use "
                     f"{_TOOLS[program]}.", "tools", suggestion=_TOOLS[program].split(" ")[0], text="")

    def _inline_asm(self, node: ast.Call) -> None:
        asm = node.args[0] if node.args else next((k.value for k in node.keywords if k.arg == "asm"), None)
        if isinstance(asm, ast.Constant) and isinstance(asm.value, str) and _PTX_HINT.search(asm.value):
            self.add(node, "triton-inline-ptx", "error", "Triton inline assembly in PTX only compiles for NVIDIA "
                     "GPUs; use tl/libdevice math (tl.math.exp2...) or AMDGPU assembly behind a backend check.",
                     "ptx", text="")

    def _cupy_kernel(self, node: ast.Call, name: str) -> None:
        source = node.args[0] if node.args else None
        raw = isinstance(source, ast.Constant) and isinstance(source.value, str) and _RAW_CUDA.search(source.value)
        severity: Severity = "error" if raw else "warning"
        detail = " Its source uses inline PTX or 32-lane warp masks, which need hand work." if raw else ""
        self.add(node.func, "cupy-raw-kernel", severity, f"{name} compiles CUDA C at run time; CuPy built for ROCm "
                 f"compiles it with hipRTC, so CUDA-only intrinsics and headers must be ported.{detail}", "ptx")

    def _environment(self, node: Located, key: ast.expr) -> None:
        if not (isinstance(key, ast.Constant) and isinstance(key.value, str)):
            return
        if key.value == "CUDA_VISIBLE_DEVICES":
            self.add(node, "cuda-visible-devices", "info", "Set in code: HIP honours CUDA_VISIBLE_DEVICES, but "
                     "HIP_VISIBLE_DEVICES (set by the ROCm runner) is applied first, so indices can shift.",
                     "visible", text="")
        elif key.value.startswith("NCCL_"):
            self.add(node, "nccl-variable", "info", f"{key.value} is set in code; RCCL reads most NCCL_* variables "
                     "but some (NVLS, CUMEM, NVLink-specific ones) have no effect on AMD GPUs.", "nccl", text="")

    def visit_Assign(self, node: ast.Assign) -> None:
        for target in node.targets:
            if isinstance(target, ast.Subscript) and _dotted(target.value) == "os.environ":
                self._environment(node, target.slice)
        self.generic_visit(node)

    def visit_Constant(self, node: ast.Constant) -> None:
        if isinstance(node.value, str) and "\n" not in node.value and _SM_STRING.search(node.value):
            self.add(node, "sm-arch-string", "info", "Names an NVIDIA architecture (sm_XX/compute_XX); AMD targets "
                     "are gfx names such as gfx90a or gfx942.", "arch", suggestion="gfx90a")

    # -- imports -----------------------------------------------------------------------------------
    def _imported(self, node: Located, module: str) -> None:
        top = module.split(".")[0]
        if top == "pynvml":
            self.add(node, "pynvml", "warning", "pynvml talks to the NVIDIA driver; on ROCm use amdsmi "
                     "(pip install /opt/rocm/share/amd_smi).", "tools", suggestion="amdsmi", text="")
        elif top in _CUDA_ONLY_IMPORTS:
            self.add(node, "cuda-only-import", "warning", f"Imports {top}: {_CUDA_ONLY_IMPORTS[top]}.", "wheels",
                     text="")
        elif module in ("numba.cuda",):
            self.add(node, "numba-cuda", "error", "Numba's CUDA target does not run on AMD GPUs.", "wheels", text="")

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            self._imported(node, alias.name)

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        if node.module == "numba" and any(a.name == "cuda" for a in node.names):
            self._imported(node, "numba.cuda")
        elif node.module and node.level == 0:
            self._imported(node, node.module)


def scan_python_source(rel: str, text: str) -> list[Finding]:
    """Findings of one Python file; a file that does not parse gives none (it is not ours to judge)."""
    try:
        tree = ast.parse(text, filename=rel)
    except (SyntaxError, ValueError, RecursionError):
        return []
    visitor = _Visitor(rel, text)
    visitor.visit(tree)
    return sorted(visitor.findings, key=lambda f: (f.line, f.column, f.rule_id))

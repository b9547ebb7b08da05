"""Makefiles, shell scripts, Dockerfiles, CI workflows and run configurations
(DeepSpeed JSON, accelerate YAML, docker compose)."""
from __future__ import annotations

import dataclasses
import json
import re

import yaml

from worker.scanning.model import Family, Finding, RocmRelease, RuleHit, ScanContext, to_finding
from worker.scanning.nvcc_flags import arch_variables, variable_arch_hits
from worker.scanning.rules_commands import (
    HIP_PLATFORM_DEFINE,
    command_line_hits,
    nvidia_image_hits,
    runtime_env_hits,
)
from worker.scanning.rules_python import parse_error
from worker.scanning.rules_renames import renamed_source_hits
from worker.scanning.rules_roctx import make_roctx_findings

_FROM_NVIDIA = re.compile(r"\b(?:nvcr\.io/)?nvidia/(?:cuda|pytorch|tensorflow|cudagl)(?::[\w.\-]+)?")
_CUDA_ACTION = re.compile(r"\b(?:Jimver/cuda-toolkit|N-Storm/cuda-toolkit|nvidia/cuda-toolkit-action)\b[@\w.\-]*")
_CI_CUDA_INSTALL = re.compile(r"\b(?:cuda-toolkit-\d[\w-]*|cuda-drivers|nvidia-driver-\d+|cuda-repo-\w+)\b")
_C_RULE_BY_NVCC = re.compile(r"^(?:\.c\.o|%\.o\s*:\s*%\.c)\s*:?[^\n]*\n\t[^\n]*(?:NVCC|nvcc|hipcc)", re.MULTILINE)
_NVCC_ASSIGNMENT = re.compile(r"^\s*NVCC\s*[:?]?=\s*\S*(?:nvcc|hipcc)(?![\w.-])")
_CUDA_MATRIX = re.compile(r"(?<![\w-])(?:cuda|cuda[-_]version|cuda[-_]ver|cuda[-_]toolkit|cuda[-_]major)(?=\s*:)"
                          r"|\$\{\{\s*matrix\.cuda[\w-]*\s*\}\}")
_WINDOWS_PATH = re.compile(r"NVIDIA GPU Computing Toolkit[\\/]+CUDA(?:[\\/]+v[\d.]+)?|CUDA[\\/]+v\d+\.\d+")
_FP16_KEY = re.compile(r"\"fp16\"\s*:")
_MIXED_FP16 = re.compile(r"\bmixed_precision\s*:\s*['\"]?fp16\b['\"]?")


def scan_commands(rel: str, text: str, family: Family, ctx: ScanContext | None = None) -> list[Finding]:
    """Line rules for files made of commands (Makefile, shell, CI); skips comments."""
    archs = (ctx or ScanContext()).offload_archs
    findings: list[Finding] = []
    c_by_nvcc = family == "make" and bool(_C_RULE_BY_NVCC.search(text))
    host_cc = family == "make" and (ctx or ScanContext()).builds_cuda_host_code(rel)
    variables = arch_variables(text) if family == "make" else None
    for number, line in enumerate(text.splitlines(), start=1):
        hits = command_line_hits(line, archs, family, host_cc) + renamed_source_hits(rel, line, ctx or ScanContext())
        hits += variable_arch_hits(line, archs, variables) if variables is not None and line.strip()[:1] != "#" else []
        hits += nvidia_image_hits(line) if family in ("shell", "make") else []
        findings += [to_finding(h, rel, number, family) for h in hits]
        if c_by_nvcc and (m := _NVCC_ASSIGNMENT.match(line)) and HIP_PLATFORM_DEFINE not in line:
            hit = RuleHit("hip-platform-define", "error", m.end(), "", "This Makefile compiles .c files with the "
                          "CUDA compiler; hipcc compiles them as plain C, where HIP's headers need "
                          "-D__HIP_PLATFORM_AMD__.", replacement=f" {HIP_PLATFORM_DEFINE}",
                          notebook_slug="cuda-header-not-found")
            findings.append(to_finding(hit, rel, number, family))
    if family == "make":
        findings += _implicit_rule_define(rel, text, ctx or ScanContext())
        findings += make_roctx_findings(rel, text, ctx or ScanContext())
    return findings


def _implicit_rule_define(rel: str, text: str, ctx: ScanContext) -> list[Finding]:
    """make's built-in rules compile .c/.cpp files with $(CC)/$(CXX) and $(CPPFLAGS); where this Makefile's
    folder has such sources including CUDA headers, CPPFLAGS gets the HIP platform definition."""
    folder, _, name = rel.rpartition("/")
    lines = text.splitlines()
    if (ctx.cuda_host_dirs is None or folder not in ctx.cuda_host_dirs or not name.lower().startswith("makefile")
            or not lines or HIP_PLATFORM_DEFINE in text or lines[-1].rstrip().endswith("\\")):
        return []
    hit = RuleHit("hip-platform-define", "error", len(lines[-1]), "", "C/C++ files here include CUDA headers "
                  "(HIP's once translated) and make's built-in rules compile them without hipcc; CPPFLAGS gets "
                  "-D__HIP_PLATFORM_AMD__.", replacement=f"\nCPPFLAGS += {HIP_PLATFORM_DEFINE}",
                  notebook_slug="cuda-header-not-found")
    return [to_finding(hit, rel, len(lines), "make")]


def scan_dockerfile(rel: str, text: str, ctx: ScanContext | None = None) -> list[Finding]:
    findings = scan_commands(rel, text, "container", ctx)
    rocm = (ctx or ScanContext()).rocm
    for number, line in enumerate(text.splitlines(), start=1):
        stripped = line.strip()
        if stripped.upper().startswith("FROM "):
            findings += _base_image_findings(rel, number, line, rocm)
    return findings


def _base_image_findings(rel: str, number: int, line: str, rocm: RocmRelease) -> list[Finding]:
    """NVIDIA images; the suggestion is the chosen toolchain's own image (none when no root is installed)."""
    findings = []
    for m in _FROM_NVIDIA.finditer(line):
        image = m.group(0)
        suggestion = "rocm/pytorch:latest" if "pytorch" in image else (rocm.image or None)
        hit = RuleHit("nvidia-base-image", "error", m.start(), image, "NVIDIA CUDA base image; ROCm images are "
                      "rocm/dev-ubuntu-* (toolchain) or rocm/pytorch (framework).", notebook_slug="nvidia-container",
                      suggestion=suggestion)
        findings.append(to_finding(hit, rel, number, "container"))
    return findings


def _yaml_or_error(rel: str, text: str, family: Family) -> tuple[object, Finding | None]:
    try:
        return yaml.safe_load(text), None
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        return None, parse_error(rel, family, error, mark.line + 1 if mark else 1)


def scan_ci(rel: str, text: str, ctx: ScanContext | None = None) -> list[Finding]:
    _, error = _yaml_or_error(rel, text, "ci")
    if error:
        return [error]
    inputs = _action_input_lines(text)
    # An action's own inputs (``sub-packages: '["nvcc"]'``) mean what the action says, not shell words:
    # they are reported, never rewritten.
    findings = [f if f.line not in inputs else dataclasses.replace(f, replacement=None)
                for f in scan_commands(rel, text, "ci", ctx)]
    rocm = (ctx or ScanContext()).rocm
    for number, line in enumerate(text.splitlines(), start=1):
        if line.lstrip().startswith("#"):
            continue
        findings += [to_finding(hit, rel, number, "ci") for hit in _ci_line_hits(line, rocm)]
        findings += _base_image_findings(rel, number, line, rocm) if "image" in line or "container" in line else []
    return findings


def _ci_line_hits(line: str, rocm: RocmRelease) -> list[RuleHit]:
    """CUDA installs and version matrices in CI; the job suggested runs in the chosen toolchain's image."""
    job = f"a job in a ROCm container (container: {rocm.image_or_generic()}) with hipcc on the PATH"
    hits = [RuleHit("cuda-toolkit-install", "error", m.start(), m.group(0), "This step installs the CUDA toolkit; "
                    f"for ROCm run {job} instead of installing CUDA.", notebook_slug="nvidia-container",
                    suggestion=f"container: {rocm.image}" if rocm.image else None) for m in _CUDA_ACTION.finditer(line)]
    hits += [RuleHit("cuda-toolkit-install", "error", m.start(), m.group(0), "Installs NVIDIA's CUDA packages; "
                     f"for ROCm use {job} (or install rocm-dev/hip-dev).", notebook_slug="nvidia-container")
             for m in _CI_CUDA_INSTALL.finditer(line)]
    hits += [RuleHit("cuda-version-matrix", "warning", m.start(), m.group(0), "A matrix over CUDA versions; ROCm "
                     f"jobs vary the ROCm release instead, as {job} per version.", notebook_slug="nvidia-container",
                     suggestion=f"rocm-version: ['{rocm.version}']" if rocm.version else None)
             for m in _CUDA_MATRIX.finditer(line)]
    hits += [RuleHit("windows-toolkit-path", "warning", m.start(), m.group(0), "Windows CUDA toolkit path; ROCm's "
                     "HIP SDK for Windows installs elsewhere (HIP_PATH), and Linux jobs use /opt/rocm.",
                     notebook_slug="cuda-header-not-found") for m in _WINDOWS_PATH.finditer(line)]
    return hits


def _action_input_lines(text: str) -> set[int]:
    """Line numbers inside a step's ``with:`` mapping (indentation-based, like the YAML it is)."""
    inside: set[int] = set()
    with_indent: int | None = None
    for number, line in enumerate(text.splitlines(), start=1):
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        indent = len(line) - len(line.lstrip(" -"))
        if with_indent is not None and indent > with_indent:
            inside.add(number)
            continue
        with_indent = indent if re.match(r"^\s*(?:-\s*)?with\s*:\s*$", line) else None
    return inside


def scan_compose(rel: str, text: str, ctx: ScanContext | None = None) -> list[Finding]:
    _, error = _yaml_or_error(rel, text, "container")
    if error:
        return [error]
    findings = scan_commands(rel, text, "container", ctx)
    for number, line in enumerate(text.splitlines(), start=1):
        m = re.search(r"\bdriver\s*:\s*nvidia\b", line)
        if m:
            findings.append(to_finding(RuleHit("nvidia-runtime", "error", m.start(), m.group(0), "GPU reservation "
                            "through the NVIDIA driver; map /dev/kfd and /dev/dri as devices for ROCm.",
                            notebook_slug="nvidia-container"), rel, number, "container"))
        findings += _base_image_findings(rel, number, line, (ctx or ScanContext()).rocm) if "image" in line else []
    return findings


def scan_deepspeed(rel: str, text: str) -> list[Finding]:
    try:
        data = json.loads(text)
    except json.JSONDecodeError as error:
        return [parse_error(rel, "run-config", error, error.lineno)]
    fp16 = data.get("fp16") if isinstance(data, dict) else None
    if not (isinstance(fp16, dict) and fp16.get("enabled") in (True, "auto")):
        return []
    lines = text.splitlines()
    number = next((n for n, line in enumerate(lines, 1) if _FP16_KEY.search(line)), 1)
    column = max(lines[number - 1].find('"fp16"'), 0) if lines else 0
    hit = RuleHit("deepspeed-fp16", "warning", column, '"fp16"', "FP16 mixed precision overflows differently on "
                  "ROCm and can turn the loss into nan; prefer BF16 on MI-series GPUs.",
                  notebook_slug="fp16-nan-use-bf16", suggestion='"fp16": {"enabled": false}, "bf16": {"enabled": true}')
    return [to_finding(hit, rel, number, "run-config")]


def scan_accelerate(rel: str, text: str) -> list[Finding]:
    data, error = _yaml_or_error(rel, text, "run-config")
    if error:
        return [error]
    if not isinstance(data, dict):
        return []
    findings: list[Finding] = []
    for number, line in enumerate(text.splitlines(), start=1):
        findings += [to_finding(h, rel, number, "run-config") for h in runtime_env_hits(line)]
        m = _MIXED_FP16.search(line)
        if m:
            hit = RuleHit("accelerate-fp16", "warning", m.start(), m.group(0), "FP16 mixed precision can produce "
                          "nan losses on ROCm; BF16 is the safer choice on MI-series GPUs.",
                          notebook_slug="fp16-nan-use-bf16", suggestion="mixed_precision: bf16")
            findings.append(to_finding(hit, rel, number, "run-config"))
    return findings

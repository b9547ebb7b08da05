"""Makefiles, shell scripts, Dockerfiles, CI workflows and run configurations
(DeepSpeed JSON, accelerate YAML, docker compose)."""
from __future__ import annotations

import json
import re

import yaml

from worker.scanning.model import Family, Finding, RuleHit, to_finding
from worker.scanning.rules_commands import command_line_hits, runtime_env_hits
from worker.scanning.rules_python import parse_error

_FROM_NVIDIA = re.compile(r"\b(?:nvcr\.io/)?nvidia/(?:cuda|pytorch|tensorflow|cudagl)(?::[\w.\-]+)?")
_CUDA_ACTION = re.compile(r"\b(?:Jimver/cuda-toolkit|N-Storm/cuda-toolkit|nvidia/cuda-toolkit-action)\b[@\w.\-]*")
_CI_CUDA_INSTALL = re.compile(r"\b(?:cuda-toolkit-\d[\w-]*|cuda-drivers|nvidia-driver-\d+|cuda-repo-\w+)\b")
_FP16_KEY = re.compile(r"\"fp16\"\s*:")
_MIXED_FP16 = re.compile(r"\bmixed_precision\s*:\s*['\"]?fp16\b['\"]?")


def scan_commands(rel: str, text: str, family: Family) -> list[Finding]:
    """Line rules for files made of commands (Makefile, shell, CI); skips comments."""
    findings: list[Finding] = []
    for number, line in enumerate(text.splitlines(), start=1):
        findings += [to_finding(h, rel, number, family) for h in command_line_hits(line)]
    return findings


def scan_dockerfile(rel: str, text: str) -> list[Finding]:
    findings = scan_commands(rel, text, "container")
    for number, line in enumerate(text.splitlines(), start=1):
        stripped = line.strip()
        if stripped.upper().startswith("FROM "):
            findings += _base_image_findings(rel, number, line)
    return findings


def _base_image_findings(rel: str, number: int, line: str) -> list[Finding]:
    findings = []
    for m in _FROM_NVIDIA.finditer(line):
        image = m.group(0)
        suggestion = "rocm/pytorch:latest" if "pytorch" in image else "rocm/dev-ubuntu-22.04:6.2"
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


def scan_ci(rel: str, text: str) -> list[Finding]:
    _, error = _yaml_or_error(rel, text, "ci")
    if error:
        return [error]
    findings = scan_commands(rel, text, "ci")
    for number, line in enumerate(text.splitlines(), start=1):
        if line.lstrip().startswith("#"):
            continue
        for m in _CUDA_ACTION.finditer(line):
            findings.append(to_finding(RuleHit("cuda-toolkit-install", "error", m.start(), m.group(0),
                            "This step installs the CUDA toolkit; ROCm CI runs in a rocm/dev-ubuntu container or "
                            "on a runner with ROCm installed.", notebook_slug="nvidia-container",
                            suggestion="container: rocm/dev-ubuntu-22.04:6.2"), rel, number, "ci"))
        for m in _CI_CUDA_INSTALL.finditer(line):
            findings.append(to_finding(RuleHit("cuda-toolkit-install", "error", m.start(), m.group(0),
                            "Installs NVIDIA's CUDA packages; install ROCm (rocm-dev, hip-dev) instead.",
                            notebook_slug="nvidia-container"), rel, number, "ci"))
        findings += _base_image_findings(rel, number, line) if "image" in line or "container" in line else []
    return findings


def scan_compose(rel: str, text: str) -> list[Finding]:
    _, error = _yaml_or_error(rel, text, "container")
    if error:
        return [error]
    findings = scan_commands(rel, text, "container")
    for number, line in enumerate(text.splitlines(), start=1):
        m = re.search(r"\bdriver\s*:\s*nvidia\b", line)
        if m:
            findings.append(to_finding(RuleHit("nvidia-runtime", "error", m.start(), m.group(0), "GPU reservation "
                            "through the NVIDIA driver; map /dev/kfd and /dev/dri as devices for ROCm.",
                            notebook_slug="nvidia-container"), rel, number, "container"))
        findings += _base_image_findings(rel, number, line) if "image" in line else []
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

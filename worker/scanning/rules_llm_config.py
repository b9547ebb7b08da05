"""Training configurations and LLM server launch commands.

``llm-config.fp16-to-bf16``: a fine-tuning YAML (LLaMA-Factory style: ``fp16: true`` next to keys such
as ``stage``, ``finetuning_type`` or ``per_device_train_batch_size``) is switched to ``bf16: true``, a
safe fix on MI200 and newer GPUs. Launch commands of SGLang and vLLM in scripts, Dockerfiles and
YAML are checked for backends with no ROCm implementation.
"""
from __future__ import annotations

import re

import yaml

from worker.scanning.model import Finding, Severity

_TRAINING_KEYS = frozenset({"stage", "finetuning_type", "model_name_or_path", "per_device_train_batch_size",
                            "gradient_accumulation_steps", "num_train_epochs", "learning_rate", "output_dir"})
_FP16_LINE = re.compile(r"^(\s*)(fp16\s*:\s*true)\b\s*(?:#.*)?$", re.IGNORECASE)
_FLASH_ATTN_LINE = re.compile(r"^\s*(flash_attn\s*:\s*fa2)\b")
_SGLANG = re.compile(r"sglang\.launch_server|\bsglang\s+serve\b")
_VLLM = re.compile(r"\bvllm\s+serve\b|vllm\.entrypoints")
_SGLANG_FLAGS: tuple[tuple[re.Pattern[str], str, str], ...] = (
    (re.compile(r"--attention-backend[ =](flashinfer|fa3|flashmla|cutlass_mla|trtllm_mha|trtllm_mla)\b"),
     "attention backend {0} has no ROCm implementation; use triton (any AMD GPU) or aiter (MI300)",
     "--attention-backend triton"),
    (re.compile(r"--sampling-backend[ =](flashinfer)\b"),
     "the flashinfer sampling backend is CUDA only", "--sampling-backend pytorch"),
)
_VLLM_BACKEND = re.compile(r"VLLM_ATTENTION_BACKEND[= ]+\"?(FLASHINFER|FLASH_ATTN|FLASHMLA|XFORMERS|FLASH_ATTN_MLA)\b")
_MEM_FRACTION = re.compile(r"--mem-fraction-static[ =](0?\.\d+)")


def _finding(rel: str, number: int, column: int, text: str, name: str, severity: Severity, explanation: str,
             slug: str, *, replacement: str | None = None, suggestion: str | None = None) -> Finding:
    return Finding(f"llm-config.{name}", severity, rel, number, column, text, explanation, replacement=replacement,
                   notebook_slug=slug, family="run-config", suggestion=suggestion)


def scan_training_yaml(rel: str, text: str) -> list[Finding]:
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError:
        return []  # the build-file rules report YAML parse errors
    if not isinstance(data, dict) or data.get("fp16") is not True and data.get("flash_attn") != "fa2":
        return []
    if not _TRAINING_KEYS & set(data):
        return []
    findings = []
    for number, line in enumerate(text.splitlines(), 1):
        fp16 = _FP16_LINE.match(line)
        if fp16 and data.get("fp16") is True and not line.startswith((" ", "\t")):
            findings.append(_finding(rel, number, len(fp16.group(1)), fp16.group(2), "fp16-to-bf16", "warning",
                                     "FP16 mixed precision can turn the loss into nan on ROCm; BF16 is as fast on "
                                     "MI200 and newer and needs no loss scaling.", "fp16-nan-use-bf16",
                                     replacement="bf16: true"))
        flash = _FLASH_ATTN_LINE.match(line)
        if flash:
            findings.append(_finding(rel, number, line.index(flash.group(1)), flash.group(1), "flash-attn-fa2", "info",
                                     "fa2 needs flash-attention built for ROCm; sdpa uses PyTorch's own kernels.",
                                     "cuda-python-wheels", suggestion="flash_attn: sdpa"))
    return findings


def scan_launch_lines(rel: str, text: str) -> list[Finding]:
    """SGLang/vLLM launch flags with no ROCm implementation, in any command-like file."""
    findings: list[Finding] = []
    joined = text.replace("\\\n", "  ")  # keep offsets per line below; continuation only widens the context
    sglang, vllm = bool(_SGLANG.search(joined)), bool(_VLLM.search(joined))
    for number, line in enumerate(text.splitlines(), 1):
        if line.lstrip().startswith("#"):
            continue
        if sglang:
            for pattern, why, fix in _SGLANG_FLAGS:
                for m in pattern.finditer(line):
                    findings.append(_finding(rel, number, m.start(), m.group(0), "sglang-backend", "error",
                                             "SGLang: " + why.format(m.group(1)) + ".", "sglang-backend",
                                             suggestion=fix))
            for m in _MEM_FRACTION.finditer(line):
                if float(m.group(1)) > 0.85:
                    findings.append(_finding(rel, number, m.start(), m.group(0), "sglang-mem-fraction", "info",
                                             "A static memory fraction this high leaves little room for ROCm's "
                                             "workspace (hipBLASLt, RCCL); start lower if start-up runs out of memory.",
                                             "sglang-memory", suggestion="--mem-fraction-static 0.8"))
        if vllm or "VLLM_ATTENTION_BACKEND" in line:
            for m in _VLLM_BACKEND.finditer(line):
                findings.append(_finding(rel, number, m.start(), m.group(0), "vllm-attention-backend", "error",
                                         f"vLLM attention backend {m.group(1)} is not available on ROCm; leave the "
                                         "variable unset and vLLM picks its ROCm backend.", "sglang-backend",
                                         suggestion="unset VLLM_ATTENTION_BACKEND"))
    return findings

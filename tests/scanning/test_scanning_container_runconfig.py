from __future__ import annotations

from collections.abc import Callable

from worker.scanning.model import Finding

Scan = Callable[[dict[str, str]], list[Finding]]

DOCKERFILE = """
FROM nvidia/cuda:12.1.0-cudnn8-devel-ubuntu22.04 AS build
ENV NVIDIA_VISIBLE_DEVICES=all
ENV CUDA_HOME=/usr/local/cuda
RUN pip install torch --index-url https://download.pytorch.org/whl/cu121
RUN nvcc -arch=sm_80 -o /app/bench /src/bench.cu -lcublas
FROM nvcr.io/nvidia/pytorch:24.01-py3
"""

WORKFLOW = """
name: build
on: [push]
jobs:
  build:
    runs-on: ubuntu-22.04
    steps:
      - uses: actions/checkout@v4
      - uses: Jimver/cuda-toolkit@v0.2.14
        with:
          cuda: '12.1.0'
      - run: sudo apt-get install -y cuda-toolkit-12-1
      - run: nvcc -o saxpy saxpy.cu
"""

DS_CONFIG = """
{
  "train_batch_size": 32,
  "fp16": {
    "enabled": true,
    "loss_scale": 0
  },
  "zero_optimization": {"stage": 2}
}
"""

ACCELERATE = """
compute_environment: LOCAL_MACHINE
distributed_type: MULTI_GPU
mixed_precision: fp16
num_processes: 8
"""

COMPOSE = """
services:
  trainer:
    image: nvidia/cuda:12.2.0-runtime-ubuntu22.04
    environment:
      - CUDA_VISIBLE_DEVICES=0
      - NCCL_IB_DISABLE=1
    deploy:
      resources:
        reservations:
          devices:
            - driver: nvidia
              capabilities: [gpu]
"""


def _rules(findings: list[Finding]) -> dict[str, list[Finding]]:
    grouped: dict[str, list[Finding]] = {}
    for finding in findings:
        grouped.setdefault(finding.rule_id, []).append(finding)
    return grouped


def test_it_suggests_rocm_base_images(scan: Scan) -> None:
    rules = _rules(scan({"docker/Dockerfile": DOCKERFILE}))
    images = [(f.line, f.text, f.suggestion) for f in rules["container.nvidia-base-image"]]
    assert images == [(1, "nvidia/cuda:12.1.0-cudnn8-devel-ubuntu22.04", None),
                      (6, "nvcr.io/nvidia/pytorch:24.01-py3", "rocm/pytorch:latest")]
    assert all(f.fixable is False and f.notebook_slug == "nvidia-container" for f in rules["container.nvidia-base-image"])


def test_it_reads_run_lines_of_a_dockerfile(scan: Scan) -> None:
    rules = _rules(scan({"Dockerfile.gpu": DOCKERFILE}))
    assert rules["container.nvidia-env"][0].line == 2
    assert rules["container.cuda-home-variable"][0].line == 3
    assert rules["dependencies.cuda-wheel-index"][0].line == 4
    assert rules["container.nvcc"][0].replacement == "hipcc"
    assert rules["container.cuda-link-library"][0].replacement == "-lhipblas"


def test_it_flags_cuda_toolkit_installs_in_github_actions(scan: Scan) -> None:
    rules = _rules(scan({".github/workflows/ci.yml": WORKFLOW}))
    installs = [(f.line, f.text) for f in rules["ci.cuda-toolkit-install"]]
    assert installs == [(8, "Jimver/cuda-toolkit@v0.2.14"), (11, "cuda-toolkit-12-1")]
    assert rules["ci.nvcc"][0].line == 12


def test_it_suggests_bf16_for_deepspeed_fp16(scan: Scan) -> None:
    [finding] = scan({"configs/ds_config_zero2.json": DS_CONFIG})
    assert (finding.rule_id, finding.line, finding.notebook_slug) == ("run-config.deepspeed-fp16", 3, "fp16-nan-use-bf16")
    assert finding.replacement is None and "bf16" in (finding.suggestion or "")


def test_it_leaves_deepspeed_bf16_configs_alone(scan: Scan) -> None:
    config = '{"bf16": {"enabled": true}, "fp16": {"enabled": false}}'
    assert scan({"ds_config.json": config}) == []


def test_it_suggests_bf16_for_accelerate_fp16(scan: Scan) -> None:
    [finding] = scan({"accelerate_config.yaml": ACCELERATE})
    assert (finding.rule_id, finding.line, finding.suggestion) == ("run-config.accelerate-fp16", 3, "mixed_precision: bf16")


def test_it_reads_docker_compose_gpu_settings(scan: Scan) -> None:
    rules = _rules(scan({"docker-compose.yml": COMPOSE}))
    assert rules["container.nvidia-base-image"][0].line == 3
    assert rules["run-config.cuda-visible-devices"][0].line == 5
    assert "keep" in rules["run-config.nccl-variable"][0].explanation
    assert rules["container.nvidia-runtime"][0].line == 11

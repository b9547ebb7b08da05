from __future__ import annotations

from collections.abc import Callable

from worker.scanning.model import Finding

Scan = Callable[[dict[str, str]], list[Finding]]

MAKEFILE = """
CUDA_PATH ?= /usr/local/cuda-12.1
NVCC := $(CUDA_PATH)/bin/nvcc
NVCCFLAGS := -O3 -arch=sm_80 -gencode arch=compute_80,code=sm_80 --use_fast_math --expt-relaxed-constexpr -Xcompiler -fPIC
INCLUDES := -I/usr/local/cuda/include
LDFLAGS := -L/usr/local/cuda/lib64 -lcudart -lcublas -lcudnn -lcurand -lcufft -lcusparse -lcusolver -lnccl -lcuda

# nvcc is used below
all: gemm

gemm: gemm.cu
\tnvcc $(NVCCFLAGS) $(INCLUDES) -o $@ $< $(LDFLAGS)
"""

SHELL_SCRIPT = """
#!/bin/bash
export CUDA_HOME=/usr/local/cuda
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$LD_LIBRARY_PATH
export CUDA_VISIBLE_DEVICES=0,1
export NCCL_DEBUG=INFO
nvcc -rdc=true -o app app.cu -lcudart
docker run --gpus all -e NVIDIA_VISIBLE_DEVICES=all myimage python train.py
"""


def _rules(findings: list[Finding]) -> dict[str, list[Finding]]:
    grouped: dict[str, list[Finding]] = {}
    for finding in findings:
        grouped.setdefault(finding.rule_id, []).append(finding)
    return grouped


def test_it_maps_every_cuda_link_library_to_rocm(scan: Scan) -> None:
    rules = _rules(scan({"Makefile": MAKEFILE}))
    mapped = [(f.text, f.replacement) for f in rules["make.cuda-link-library"]]
    assert mapped == [("-lcudart", "-lamdhip64"), ("-lcublas", "-lhipblas"), ("-lcudnn", "-lMIOpen"),
                      ("-lcurand", "-lhiprand"), ("-lcufft", "-lhipfft"), ("-lcusparse", "-lhipsparse"),
                      ("-lcusolver", "-lhipsolver"), ("-lnccl", "-lrccl"), ("-lcuda", "-lamdhip64")]
    assert all(f.notebook_slug == "cuda-link-libraries" for f in rules["make.cuda-link-library"])


def test_it_replaces_nvcc_but_not_comments_or_variable_names(scan: Scan) -> None:
    rules = _rules(scan({"Makefile": MAKEFILE}))
    assert [(f.line, f.replacement) for f in rules["make.nvcc"]] == [(2, "hipcc"), (11, "hipcc")]


def test_it_separates_safe_and_manual_nvcc_flags(scan: Scan) -> None:
    rules = _rules(scan({"Makefile": MAKEFILE}))
    arch = rules["make.nvidia-arch-flag"]
    assert [f.text for f in arch] == ["-arch=sm_80", "-gencode arch=compute_80,code=sm_80"]
    assert all(f.replacement == "--offload-arch=gfx90a --offload-arch=gfx942 --offload-arch=gfx1100" for f in arch)
    flags = {f.text: f.replacement for f in rules["make.nvcc-only-flag"]}
    assert flags == {"--use_fast_math": "-ffast-math", "--expt-relaxed-constexpr": "", "-Xcompiler -fPIC": "-fPIC"}


def test_it_rewrites_cuda_paths_and_flags_cuda_home(scan: Scan) -> None:
    rules = _rules(scan({"Makefile": MAKEFILE}))
    paths = [(f.text, f.replacement) for f in rules["make.cuda-path"]]
    assert paths == [("/usr/local/cuda-12.1", "/opt/rocm"), ("/usr/local/cuda/include", "/opt/rocm/include"),
                     ("/usr/local/cuda/lib64", "/opt/rocm/lib")]
    assert [f.line for f in rules["make.cuda-home-variable"]] == [1, 2]


def test_it_reads_shell_scripts_for_env_and_docker_flags(scan: Scan) -> None:
    rules = _rules(scan({"scripts/run.sh": SHELL_SCRIPT}))
    assert rules["shell.ld-library-path-cuda"][0].notebook_slug == "ld-library-path-cuda"
    assert rules["shell.cuda-path"][1].notebook_slug == "ld-library-path-cuda"
    assert rules["run-config.cuda-visible-devices"][0].replacement == "HIP_VISIBLE_DEVICES"
    assert rules["run-config.nccl-variable"][0].text == "NCCL_DEBUG" and rules["run-config.nccl-variable"][0].fixable is False
    assert rules["shell.nvcc-only-flag"][0].replacement == "-fgpu-rdc"
    [gpus] = rules["container.docker-gpus-flag"]
    assert (gpus.text, gpus.replacement) == ("--gpus all", "--device=/dev/kfd --device=/dev/dri --group-add video")
    assert rules["container.nvidia-env"][0].notebook_slug == "nvidia-container"

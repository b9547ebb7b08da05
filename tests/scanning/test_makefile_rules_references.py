"""Every Makefile rule fed lines with ``$(var)``, ``${var}`` and nested parentheses: the fixes keep each line's
references whole (``-maxrregcount $(maxregisters)`` once became ``)``), applying them twice changes nothing,
and make itself (in the sandbox over the toolchain root) still reads the converted Makefile."""
from __future__ import annotations

from pathlib import Path

import pytest

from worker.project_settings import ProjectSettings
from worker.scanning.findings import fix_tree
from worker.scanning.nvcc_flags import offload_flags
from worker.toolchain.make_db import parse_dry_run
from worker.toolchain.roots import default_root
from worker.toolchain.sandbox import Sandbox, SandboxLimits

# One flag (or word) for each Makefile rule the command-line rules apply.
FLAGS = [
    "-arch=sm_60", "-arch=$(ARCH)", "-arch ${ARCH}", "--gpu-architecture=compute_$(SM)",
    "-gencode arch=compute_$(SM),code=sm_$(SM)", "-gencode=arch=compute_${SM},code=[sm_${SM},compute_${SM}]",
    "-code=sm_$(SM)", "-maxrregcount $(maxregisters)", "-maxrregcount=${maxregisters}", "--maxrregcount $(call regs,$(N))",
    "-Xptxas $(PTXAS_FLAGS)", "-Xptxas -v,-O3", "--ptxas-options=$(subst $(space),$(comma),$(PTX))",
    "-ccbin $(shell which g++)", "--compiler-bindir=${HOST_CXX}", "-Xcompiler $(filter -f%,$(CFLAGS))",
    "-Xcompiler -fopenmp,-Wall", "-use_fast_math", "-rdc=true", "--expt-relaxed-constexpr", "--expt-extended-lambda",
    "-lineinfo", "-G", "-x cu", "--threads $(NTHREADS)", "-t=0", "-fatbin", "-lcublas", "-lcudart", "-lcurand",
    "-L$(CUDA_PATH)/lib64", "-I${CUDA_HOME}/include", "-I/usr/local/cuda/include", "/usr/local/cuda/bin/nvcc",
    "$(CUDA_DIR)/bin/nvcc", "nvcc", "nvc++ -stdpar=gpu -gpu=cc80", "-default-stream per-thread", "-Wno-deprecated-gpu-targets",
]
# Each flag in three kinds of context: after a reference, inside a function call, nested two deep.
CONTEXTS = [
    "NVCCFLAGS += {flag} $(EXTRA)",
    "NVCCFLAGS += $(call wrap,{flag} ${{EXTRA}})",
    "GPU_FLAGS := $(strip $(if $(DEBUG),{flag},$(patsubst %,{flag},$(filter-out x,$(ARCHS)))))",
]


def makefile_text() -> str:
    lines = ["ARCH = sm_60", "SM = 70", "maxregisters = 32", "N = 4", "EXTRA = -O2", "ARCHS = a b",
             "regs = $(1)", "wrap = $(1)", "comma := ,", "space := $(subst ,, )", "CC = nvcc", ""]
    lines += [context.format(flag=flag) for flag in FLAGS for context in CONTEXTS]
    lines += ["", "all:", "\t@echo $(CC) $(NVCCFLAGS) $(GPU_FLAGS)", ""]
    return "\n".join(lines)


def balanced(line: str) -> bool:
    return line.count("(") == line.count(")") and line.count("{") == line.count("}")


@pytest.fixture(scope="module")
def converted(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[str]]:
    tree = tmp_path_factory.mktemp("rules")
    (tree / "Makefile").write_text(makefile_text())
    (tree / "kernel.cu").write_text("__global__ void k() {}\n")
    fixes = fix_tree(tree, (), set())
    return tree, [fix.rule_id for fix in fixes]


def test_every_rule_fired_and_each_line_keeps_its_references_whole(converted: tuple[Path, list[str]]) -> None:
    tree, rules = converted
    assert {"make.nvidia-arch-flag", "make.nvcc-only-flag", "make.nvcc", "make.cuda-link-library",
            "make.cuda-path"} <= set(rules)
    original = makefile_text().splitlines()
    after = (tree / "Makefile").read_text().splitlines()
    assert len(after) == len(original)
    unbalanced = [(before, line) for before, line in zip(original, after, strict=True) if not balanced(line)]
    assert unbalanced == []
    assert not any(line.rstrip().endswith("+= )") or "$()" in line for line in after)
    targets = offload_flags(ProjectSettings().offload_archs)  # fix_tree's default: the run's targets
    assert f"NVCCFLAGS += {targets} $(EXTRA)" in after  # -arch=$(ARCH) with ARCH = sm_60
    assert "NVCCFLAGS +=  $(EXTRA)" in after  # -maxrregcount $(maxregisters), its value gone with it
    assert ("NVCCFLAGS += hipcc --hipstdpar --hipstdpar-path=/usr/include/thrust/system/hip/hipstdpar "
            f"{targets} $(EXTRA)") in after  # nvc++ -stdpar=gpu -gpu=cc80


def test_applying_the_fixes_twice_changes_nothing(converted: tuple[Path, list[str]]) -> None:
    tree, _ = converted
    before = (tree / "Makefile").read_text()
    assert fix_tree(tree, (), set()) == []
    assert (tree / "Makefile").read_text() == before


def test_make_reads_the_converted_makefile(converted: tuple[Path, list[str]]) -> None:
    tree, _ = converted
    root = default_root()
    assert root is not None, "no toolchain root (./dev builds it)"
    result = Sandbox(root, tree).run(["make", "-pn", "-j1"], "/workspace", SandboxLimits(timeout_s=60, memory_mb=0))
    assert result.ok, result.process.output[-2000:]
    [database] = parse_dry_run(result.process.output, "/workspace").databases
    assert database.variables["NVCCFLAGS"].file == "Makefile" and database.default_goal == "all"
    assert "nvcc" not in database.expanded("$(CC)") and "sm_" not in database.expanded("$(NVCCFLAGS)")

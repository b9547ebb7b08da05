"""The seed entries shipped with Migrator: loaded, validated, and each ranking first on its own failure."""

from pathlib import Path

import pytest

from migrator.lib.signatures.matcher import Matcher, SignatureSpec, compile_signatures
from migrator.lib.signatures.seed import (
    NOTEBOOK_SLUGS,
    PYTHON_PROJECT_SLUGS,
    PYTORCH_PATH,
    REAL_FAILURE_SLUGS,
    SeedEntry,
    SeedError,
    load_seed_entries,
)
from worker.toolchain.roots import default_root
from worker.toolchain.sandbox import Sandbox, SandboxLimits

FIXTURES = Path(__file__).parent / "fixtures"

# One or more realistic log lines per slug, written from real tool messages.
EXAMPLES: list[tuple[str, str]] = [
    (
        "cuda-header-not-found",
        "src/ops/gemm.hip:5:10: fatal error: 'cublas_v2.h' file not found",
    ),
    (
        "cuda-header-not-found",
        "kernel.cpp:3:10: fatal error: cuda.h: No such file or directory",
    ),
    (
        "cmake-findcuda",
        "  Could NOT find CUDA (missing: CUDA_INCLUDE_DIRS CUDA_CUDART_LIBRARY) (found",
    ),
    ("cmake-findcuda", "  No CMAKE_CUDA_COMPILER could be found."),
    (
        "cuda-link-libraries",
        "/usr/bin/ld: cannot find -lcudnn: No such file or directory",
    ),
    (
        "hip-runtime-not-linked",
        "main.cpp:(.text+0x1c4): undefined reference to `hipMalloc'",
    ),
    (
        "ld-library-path-cuda",
        (
            "./bench: error while loading shared libraries: libcublas.so.12: cannot open shared "
            "object file: No such file or directory"
        ),
    ),
    (
        "cuda-python-wheels",
        "OSError: libcudart.so.11.0: cannot open shared object file: No such file or directory",
    ),
    ("cuda-python-wheels", "torch==2.1.2+cu121"),
    (
        "cuda-python-wheels",
        "RuntimeError: Found no NVIDIA driver on your system. Please check that you have an NVIDIA GPU",
    ),
    ("hipcc-nvidia-platform", "nvcc fatal   : Unknown option '--offload-arch=gfx942'"),
    ("no-amd-gpu-visible", "hipErrorNoDevice: no ROCm-capable device is detected"),
    ("no-amd-gpu-visible", "Unable to open /dev/kfd read-write: Permission denied"),
    (
        "no-binary-for-gpu",
        '"hipErrorNoBinaryForGpu: Unable to find code object for all current devices!"',
    ),
    ("no-binary-for-gpu", "RuntimeError: HIP error: invalid device function"),
    (
        "invalid-launch-configuration",
        "RuntimeError: HIP error: invalid configuration argument",
    ),
    (
        "invalid-launch-configuration",
        "reduce launch failed: hipErrorInvalidConfiguration",
    ),
    (
        "warp-size-32",
        '  warning: DTW.cu:189: unsupported device function "__shfl_down_sync":     v = __shfl_down_sync(ALL, v, 1);',
    ),
    ("hipify-unconverted", "v.cu:2:13: error: unknown type name 'cudaGraphExec_t'"),
    (
        "hipify-unconverted",
        "attn.hip:40:5: error: use of undeclared identifier 'cudaFuncSetAttribute'",
    ),
    (
        "fp16-nan-use-bf16",
        "{'loss': nan, 'grad_norm': nan, 'learning_rate': 4.9e-05, 'epoch': 0.12}",
    ),
    (
        "fp16-nan-use-bf16",
        "Current loss scale already at minimum - cannot decrease scale anymore. Exiting run.",
    ),
    (
        "illegal-memory-access",
        "RuntimeError: CUDA error: an illegal memory access was encountered",
    ),
    (
        "illegal-memory-access",
        (
            "Memory access fault by GPU node-2 (Agent handle: 0x55d8c2c3e0a0) on address 0x7f2a3c000000. "
            "Reason: Page not present or supervisor privilege."
        ),
    ),
    (
        "rccl-hang",
        (
            "[rank1]:[E ProcessGroupNCCL.cpp:563] [Rank 1] Watchdog caught collective operation timeout: "
            "WorkNCCL(SeqNum=1, OpType=ALLREDUCE, Timeout(ms)=1800000) ran for 1800423 milliseconds"
        ),
    ),
    ("sglang-backend", "ValueError: Backend backend is not supported"),
    ("sglang-backend", "ModuleNotFoundError: No module named 'sgl_kernel'"),
    (
        "sglang-memory",
        "torch.OutOfMemoryError: HIP out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 63.98 GiB",
    ),
    (
        "sglang-memory",
        "RuntimeError: Not enough memory. Please try to increase --mem-fraction-static.",
    ),
    ("cuda-visible-devices", "RuntimeError: HIP error: invalid device ordinal"),
    (
        "cuda-visible-devices",
        "RuntimeError: Attempting to deserialize object on CUDA device 3 but torch.cuda.device_count() is 1.",
    ),
    (
        "nvidia-container",
        'docker: Error response from daemon: could not select device driver "" with capabilities: [[gpu]].',
    ),
    (
        "nvidia-container",
        "nvidia-container-cli: initialization error: nvml error: driver not loaded: unknown",
    ),
    ("port-validation", "AssertionError: Tensor-likes are not close!"),
    ("port-validation", "Mismatched elements: 12 / 4096 (0.3%)"),
]

# Real output captured on this machine (see fixtures/README.md) and the entry it must rank first.
REAL_OUTPUTS = [
    ("hipcc_cuda_runtime_header.txt", "cuda-header-not-found"),
    ("hipcc_link_lcublas.txt", "cuda-link-libraries"),
    ("hipcc_without_platform_offload_arch.txt", "hipcc-nvidia-platform"),
    ("hipcc_without_platform_hip_file.txt", "hipcc-nvidia-platform"),
    ("hip_binary_run_without_amd_gpu.txt", "no-amd-gpu-visible"),
    ("ld_hip_runtime_not_linked.txt", "hip-runtime-not-linked"),
    ("hipcc_warp_sync_intrinsics.txt", "warp-size-32"),
    ("hipcc_unconverted_cuda_type.txt", "hipify-unconverted"),
    ("cmake_find_package_cuda.txt", "cmake-findcuda"),
]


@pytest.fixture(scope="module")
def seed() -> list[SeedEntry]:
    return load_seed_entries()


@pytest.fixture(scope="module")
def matcher(seed: list[SeedEntry]) -> Matcher:
    specs = [
        SignatureSpec(entry_id, entry_id * 100 + number, sig.kind, sig.pattern)
        for entry_id, entry in enumerate(seed)
        for number, sig in enumerate(entry.signatures)
    ]
    return compile_signatures(specs)


def _ranked_slugs(matcher: Matcher, seed: list[SeedEntry], log: str) -> list[str]:
    return [seed[match.entry_id].slug for match in matcher.match(log)]


def test_seed_file_has_exactly_the_agreed_slugs(seed: list[SeedEntry]) -> None:
    assert sorted(entry.slug for entry in seed) == sorted(NOTEBOOK_SLUGS)


def test_every_seed_entry_has_a_fix_with_a_code_block_and_public_links(
    seed: list[SeedEntry],
) -> None:
    for entry in seed:
        assert "```" in entry.fix, entry.slug
        assert entry.links, entry.slug
        assert all(link.startswith("https://") for link in entry.links)


def test_every_seed_entry_has_a_realistic_example() -> None:
    # The entries for failures seen with ROCm 6.4 are tested on real toolchain output in
    # tests/outcomes/test_notebook_coverage.py.
    assert {slug for slug, _ in EXAMPLES} == set(NOTEBOOK_SLUGS) - set(REAL_FAILURE_SLUGS) - set(PYTHON_PROJECT_SLUGS)


@pytest.mark.parametrize(("slug", "line"), EXAMPLES)
def test_example_line_ranks_its_seed_entry_first(
    matcher: Matcher, seed: list[SeedEntry], slug: str, line: str
) -> None:
    log = f"[ 12%] Building HIP object src/CMakeFiles/ops.dir/a.hip.o\n{line}\nmake: *** [all] Error 2"
    ranked = _ranked_slugs(matcher, seed, log)
    assert ranked[:1] == [slug], ranked


@pytest.mark.parametrize(("fixture", "slug"), REAL_OUTPUTS)
def test_real_tool_output_ranks_the_right_entry_first(
    matcher: Matcher, seed: list[SeedEntry], fixture: str, slug: str
) -> None:
    log = (FIXTURES / fixture).read_text()
    assert _ranked_slugs(matcher, seed, log)[:1] == [slug]


def test_live_hipcc_header_error_still_matches(
    matcher: Matcher, seed: list[SeedEntry], tmp_path: Path
) -> None:
    root = default_root()
    assert root is not None, "no toolchain root: ./dev builds it (scripts/toolchain-root ensure)"
    (tmp_path / "probe.cu").write_text("#include <cuda_runtime.h>\nint main() { return 0; }\n")
    command = ["hipcc", "--offload-arch=gfx90a", "-c", "probe.cu", "-o", "probe.o"]
    completed = Sandbox(root, tmp_path).run(command, limits=SandboxLimits(timeout_s=600, memory_mb=4096))
    assert completed.process.returncode != 0
    assert _ranked_slugs(matcher, seed, completed.process.output)[:1] == ["cuda-header-not-found"]


def test_loader_names_the_entry_with_a_bad_signature(tmp_path: Path) -> None:
    bad = tmp_path / "entries.yaml"
    bad.write_text(
        "- slug: rccl-hang\n  title: t\n  symptom: s\n  cause: c\n  fix: f\n"
        "  stages: [smoke]\n  tags: []\n  links: []\n"
        "  signatures:\n    - {kind: regex, pattern: '(a+)+$'}\n"
    )
    with pytest.raises(SeedError, match=r"Entry 1 \(rccl-hang\), signature 1"):
        load_seed_entries(bad)


def test_loader_rejects_unknown_slugs_and_stages(tmp_path: Path) -> None:
    bad = tmp_path / "entries.yaml"
    entry = (
        "- slug: {slug}\n  title: t\n  symptom: s\n  cause: c\n  fix: f\n  stages: [{stage}]\n"
        "  signatures:\n    - {{kind: text, pattern: cannot find -lcublas}}\n"
    )
    bad.write_text(entry.format(slug="made-up", stage="smoke"))
    with pytest.raises(SeedError, match="unknown slug"):
        load_seed_entries(bad)
    bad.write_text(entry.format(slug="rccl-hang", stage="deploy"))
    with pytest.raises(SeedError, match="stages"):
        load_seed_entries(bad)


def test_the_python_project_entries_are_loaded_with_the_seed() -> None:
    slugs = [entry.slug for entry in load_seed_entries()]
    assert set(PYTHON_PROJECT_SLUGS) <= set(slugs)
    assert tuple(e.slug for e in load_seed_entries(PYTORCH_PATH)) == PYTHON_PROJECT_SLUGS

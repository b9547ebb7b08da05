from pathlib import Path

import pytest

from worker.runner.classify import classify_failure, classify_output
from worker.runner.execute import run_command
from worker.toolchain.roots import select_root
from worker.toolchain.sandbox import Sandbox, SandboxLimits

HIP_SOURCE = r"""
#include <hip/hip_runtime.h>
#include <cstdio>
#define CHECK(call) do { hipError_t e = (call); if (e != hipSuccess) { \
  fprintf(stderr, "HIP error %s: %s at %s:%d\n", hipGetErrorName(e), hipGetErrorString(e), __FILE__, __LINE__); \
  return 1; } } while (0)
__global__ void fill(float* x) { x[threadIdx.x] = 1.0f; }
int main() {
  float* d = nullptr;
  CHECK(hipMalloc(&d, 64 * sizeof(float)));
  fill<<<1, 64>>>(d);
  CHECK(hipDeviceSynchronize());
  printf("ok\n");
  return 0;
}
"""

@pytest.fixture(scope="module")
def hip_binary(tmp_path_factory: pytest.TempPathFactory) -> tuple[Sandbox, Path]:
    work = tmp_path_factory.mktemp("hip")
    (work / "probe.hip").write_text(HIP_SOURCE)
    box = Sandbox(select_root(), work)
    built = box.run(["hipcc", "--offload-arch=gfx90a", "probe.hip", "-o", "probe"], limits=SandboxLimits(300))
    assert built.ok, built.process.output
    return box, work / "probe"


def test_a_real_hip_binary_without_an_amd_gpu_is_classified_no_device(hip_binary: tuple[Sandbox, Path]) -> None:
    box, binary = hip_binary
    argv = box.command(["./probe"], "/workspace", SandboxLimits(60, memory_mb=0), {})
    done = run_command(argv, binary.parent, {"PATH": "/usr/bin:/bin"}, 60, 100_000)
    assert done.exit_code == 1
    assert "hipErrorInvalidDevice" in done.stderr or "hipErrorNoDevice" in done.stderr
    kind = classify_failure(done.output, done.exit_code, done.signal, done.timed_out)
    assert (kind.kind, kind.notebook_slug) == ("no-device", "no-amd-gpu-visible")
    assert "HIP error hipError" in kind.evidence


@pytest.mark.parametrize(
    ("text", "kind", "slug"),
    [
        ("hipErrorNoBinaryForGpu: Unable to find code object for all current devices!", "wrong-target", "no-binary-for-gpu"),
        ("kernel launch failed: invalid configuration argument", "launch-config", "invalid-launch-configuration"),
        ("HIP error hipErrorInvalidConfiguration", "launch-config", "invalid-launch-configuration"),
        ("CUDA error: an illegal memory access was encountered", "illegal-memory-access", "illegal-memory-access"),
        ("Memory access fault by GPU node-4 (Agent handle: 0x1) on address 0x7f. Reason: Page not present", "illegal-memory-access", "illegal-memory-access"),
        ("cudaErrorNoDevice: no CUDA-capable device is detected", "no-device", "cuda-visible-devices"),
        ("terminate called: no ROCm-capable device is detected", "no-device", "no-amd-gpu-visible"),
    ],
)
def test_known_runtime_errors_are_named(text: str, kind: str, slug: str) -> None:
    found = classify_output("some output\n" + text + "\nmore\n")
    assert found is not None and (found.kind, found.notebook_slug) == (kind, slug)
    assert found.evidence == text[:300]


def test_timeouts_signals_and_plain_failures() -> None:
    assert classify_failure("hipErrorNoDevice", None, "SIGKILL", True).kind == "timeout"
    assert classify_failure("hipErrorNoDevice", None, "SIGSEGV", False).kind == "no-device"
    crashed = classify_failure("working...", None, "SIGSEGV", False)
    assert crashed.kind == "crashed" and "SIGSEGV" in crashed.evidence
    assert classify_failure("wrong answer", 2, None, False).kind == "failed"

"""The train-steps and llm-serve presets with real processes: a PyTorch training loop on the CPU
and a small local OpenAI-compatible server."""
from __future__ import annotations

import os
import shlex
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from tests.pytorch_projects.markers import needs_torch
from worker.runner.gpus import probe
from worker.runner.preset_serve import ServeSpec, free_port, run_llm_serve
from worker.runner.preset_train import PresetError, TrainStepsResult, TrainStepsSpec, run_train_steps
from worker.runner.presets import preset_from_dict, run_preset_on_gpu
from worker.toolchain.roots import ToolchainNotFound, select_root
from worker.toolchain.sandbox import Sandbox

PROGRAMS = Path(__file__).resolve().parent / "programs"
PYTHON = shlex.quote(sys.executable)
TRAIN = f"{PYTHON} {PROGRAMS / 'train_loop.py'} {{steps}}"
SERVER = f"{PYTHON} {PROGRAMS / 'openai_server.py'} {{port}}"


def _train(spec: TrainStepsSpec, tmp_path: Path, reference: dict[str, object] | None = None) -> TrainStepsResult:
    return run_train_steps(spec, tmp_path, None, reference=reference)


@pytest.fixture(scope="module")
def baseline(tmp_path_factory: pytest.TempPathFactory) -> TrainStepsResult:
    """One 4-step run of the training loop, shared (PyTorch takes seconds to import here)."""
    return run_train_steps(TrainStepsSpec(TRAIN, steps=4), tmp_path_factory.mktemp("train"), None)


@needs_torch
def test_a_cpu_training_loop_passes_with_its_measurements(baseline: TrainStepsResult) -> None:
    result = baseline
    assert result.passed, result.reasons
    metrics = result.metrics
    assert len(metrics.losses) == 4 and metrics.losses[-1] < metrics.losses[0]
    assert metrics.step_time_s is not None and 0 < metrics.step_time_s < 5 and not metrics.step_time_estimated
    assert metrics.tokens_per_s is not None and metrics.tokens_per_s > 0
    assert metrics.peak_gpu_mem_bytes is None  # no device sampler on this machine


@needs_torch
def test_a_nan_loss_fails_and_names_the_step(tmp_path: Path) -> None:
    result = _train(TrainStepsSpec(TRAIN + " --nan-at 2", steps=4), tmp_path)
    assert not result.passed and "loss is nan at step 2" in result.reasons
    assert result.to_dict()["metrics"]["losses"][2] == "nan"  # type: ignore[index]


@needs_torch
def test_losses_are_compared_with_the_cuda_reference(baseline: TrainStepsResult, tmp_path: Path) -> None:
    reference = baseline.metrics.to_dict()
    same = _train(TrainStepsSpec(TRAIN, steps=4), tmp_path, reference)
    assert same.passed and same.comparison is not None and same.comparison.max_abs_diff == 0
    drifted = _train(TrainStepsSpec(TRAIN + " --scale 1.5", steps=4), tmp_path, reference)
    assert not drifted.passed
    assert drifted.reasons[0].startswith("loss differs from the CUDA reference at step 0")


def test_too_few_steps_or_a_bad_exit_fail(tmp_path: Path) -> None:
    short = _train(TrainStepsSpec("printf 'step 0 loss 1.5\\nstep 1 loss 1.2\\n'", steps=3), tmp_path)
    assert "2 losses printed, expected 3" in short.reasons
    crashed = _train(TrainStepsSpec("exit 7", steps=1), tmp_path)
    assert crashed.reasons[0] == "exit 7, expected 0"


@pytest.mark.parametrize(("raw", "message"), [
    ({"preset": "train-steps", "command": "x", "loss_pattern": "loss ([0-9.]+)"}, "needs a named group"),
    ({"preset": "train-steps", "command": "x", "loss_pattern": "("}, "is not a regular expression"),
    ({"preset": "train-steps", "command": ""}, "command is empty"),
    ({"preset": "llm-serve", "command": "x", "colour": "red"}, "unknown option(s) colour"),
    ({"preset": "benchmark"}, "preset must be one of"),
])
def test_bad_preset_options_are_clear_errors(raw: dict[str, object], message: str) -> None:
    with pytest.raises(PresetError, match=message.replace("(", r"\(").replace(")", r"\)")):
        preset_from_dict(raw)


def _alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat[stat.rindex(")") + 2:].split()[0] != "Z"


def test_a_local_server_is_measured_and_stopped_with_its_children(tmp_path: Path) -> None:
    pid_file = tmp_path / "helper.pid"
    spec = ServeSpec(f"{SERVER} --pid-file {pid_file}", max_tokens=8, stop_grace_s=1.0, startup_timeout_s=60)
    result = run_llm_serve(spec, tmp_path, None)
    assert result.passed, result.reasons
    assert result.startup_s is not None and result.startup_s >= 0.5  # the server's start-up delay
    first = result.prompts[0]
    assert first.text == "is France of capital The" and first.completion_tokens == 5
    assert result.ttft_s is not None and result.ttft_s > 0
    assert result.tokens_per_s is not None and result.tokens_per_s > 0
    assert result.peak_host_rss_bytes and result.server_exit == "stopped" and result.left_running == 0
    assert not _alive(int(pid_file.read_text()))  # the helper ignored SIGTERM; the group kill ended it


def test_outputs_and_speed_are_compared_with_the_reference(tmp_path: Path) -> None:
    spec = ServeSpec(SERVER, max_tokens=16, stop_grace_s=1.0, startup_timeout_s=60)
    reference = run_llm_serve(spec, tmp_path, None).to_dict()
    same = run_llm_serve(spec, tmp_path, None, reference=reference)
    assert same.passed and same.comparison is not None
    assert same.comparison["identical"] == len(spec.prompts) and same.comparison["speed_ratio"] is not None
    drifted = ServeSpec(f"{SERVER} --suffix 'on the other hand completely different words here'", max_tokens=16,
                        stop_grace_s=1.0, startup_timeout_s=60)
    different = run_llm_serve(drifted, tmp_path, None, reference=reference)
    assert not different.passed and different.reasons[0].startswith("outputs differ from the CUDA reference")


def test_a_server_that_dies_at_start_up_is_reported(tmp_path: Path) -> None:
    result = run_llm_serve(ServeSpec("echo 'CUDA error: no kernel image' >&2; exit 3", startup_timeout_s=30),
                           tmp_path, None)
    assert not result.passed and result.reasons == ["exited 3 before it was ready"]
    assert "no kernel image" in result.server_log_tail


@pytest.fixture
def sandbox(tmp_path: Path) -> Sandbox:
    """A workspace with our test server in app/, and the sandbox over the toolchain root."""
    try:
        root = select_root()
    except ToolchainNotFound as exc:
        pytest.skip(f"no toolchain root: {exc}")
    app = tmp_path / "ws" / "app"
    app.mkdir(parents=True)
    shutil.copy(PROGRAMS / "openai_server.py", app)
    return Sandbox(root, tmp_path / "ws", gpu_devices=True)


def test_both_presets_run_on_a_leased_gpu_in_the_sandbox(
    sandbox: Sandbox, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MIGRATOR_FAKE_GPUS", "gfx90a")
    app = sandbox.workspace / "app"
    steps = "for i in 0 1 2; do echo \"step $i loss 0.$((9 - i)) step_time 12 ms\"; done; echo HIP=$HIP_VISIBLE_DEVICES"
    train = preset_from_dict({"preset": "train-steps", "command": steps, "steps": 3})
    run = run_preset_on_gpu(train, app, probe("rocm"), sandbox, wait_timeout_s=10, lock_dir=tmp_path / "locks")
    assert run.passed, run.result
    assert run.env == {"HIP_VISIBLE_DEVICES": "0"} and run.gpu is not None and run.gpu.fake
    assert "HIP=0" in str(run.result["execution"]["stdout"])  # type: ignore[index]
    assert run.result["metrics"]["losses"] == [0.9, 0.8, 0.7]  # type: ignore[index]
    serve = preset_from_dict({"preset": "llm-serve", "command": "python3 openai_server.py {port}",
                              "prompts": ["a b c"], "max_tokens": 4, "stop_grace_s": 1.0, "startup_timeout_s": 60})
    served = run_preset_on_gpu(serve, app, probe("rocm"), sandbox, wait_timeout_s=10, lock_dir=tmp_path / "locks")
    assert served.passed, served.result
    assert served.result["prompts"][0]["text"] == "c b a"  # type: ignore[index]
    assert served.result["left_running"] == 0 and served.result["server_exit"] == "stopped"  # type: ignore[index]


def test_the_sandboxed_client_does_not_see_a_server_on_the_host(sandbox: Sandbox, tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MIGRATOR_FAKE_GPUS", "gfx90a")
    port = free_port()
    host = subprocess.Popen([sys.executable, str(PROGRAMS / "openai_server.py"), str(port), "--startup-delay", "0"],
                            start_new_session=True)
    try:
        serve = preset_from_dict({"preset": "llm-serve", "command": "sleep 30", "port": port, "startup_timeout_s": 3})
        run = run_preset_on_gpu(serve, sandbox.workspace / "app", probe("rocm"), sandbox, wait_timeout_s=10,
                                lock_dir=tmp_path / "locks")
    finally:
        os.killpg(host.pid, signal.SIGKILL)  # the server and its helper child
        host.wait()
    assert not run.passed and run.result["reasons"][0].startswith("not ready within 3 s")  # type: ignore[index]


def test_without_a_gpu_the_preset_does_not_run(
    sandbox: Sandbox, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("MIGRATOR_FAKE_GPUS", raising=False)
    monkeypatch.setenv("PATH", "/nonexistent")  # no rocminfo / rocm-smi: nothing to probe
    run = run_preset_on_gpu(TrainStepsSpec(TRAIN), tmp_path, probe("rocm"), sandbox, wait_timeout_s=1)
    assert not run.passed and run.classification == "no-device" and run.result is None

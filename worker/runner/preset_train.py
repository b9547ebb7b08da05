"""Smoke preset ``train-steps``: run the project's training command for N steps and judge the loss.

The command may hold ``{steps}`` (replaced by N). The loss of each step is parsed from the output
with a configurable pattern (named group ``loss``); the run passes when it exits as expected,
prints at least N losses, every one finite, and (with a CUDA reference) each within tolerance of
the reference's loss at the same step. Step time and tokens/s are parsed where printed (step time
is otherwise estimated from the wall time), peak GPU memory comes from the device sampler.
Standard library only: this module also runs on bare GPU machines.
"""
from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path

from worker.runner.execute import Execution, GpuSampler, run_command

DEFAULT_LOSS_PATTERN = r"(?i)\bloss\b\s*[:=]?\s*(?P<loss>[-+]?(?:\d+\.?\d*(?:e[-+]?\d+)?|nan|inf(?:inity)?))"
DEFAULT_STEP_TIME_PATTERN = r"(?i)\b(?:step[_ ]?time|time/step|s/it)\b\s*[:=]?\s*(?P<value>\d+\.?\d*)\s*(?P<unit>ms|s)?"
DEFAULT_TOKENS_PATTERN = r"(?i)\b(?:tokens/s|tok/s|tokens_per_second)\b\s*[:=]?\s*(?P<value>\d+\.?\d*)"


class PresetError(ValueError):
    """A preset option is malformed; the message names it."""


@dataclass(frozen=True)
class TrainStepsSpec:
    command: str
    steps: int = 20
    loss_pattern: str = DEFAULT_LOSS_PATTERN
    step_time_pattern: str = DEFAULT_STEP_TIME_PATTERN
    tokens_pattern: str = DEFAULT_TOKENS_PATTERN
    rel_tolerance: float = 0.05  # of the reference loss
    abs_tolerance: float = 1e-3
    timeout_s: float = 1800.0
    output_limit_bytes: int = 4_000_000

    def __post_init__(self) -> None:
        if not self.command.strip():
            raise PresetError("train-steps: command is empty")
        if not 1 <= self.steps <= 100_000:
            raise PresetError("train-steps: steps must be between 1 and 100000")
        for name in ("loss_pattern", "step_time_pattern", "tokens_pattern"):
            try:
                compiled = re.compile(getattr(self, name))
            except re.error as error:
                raise PresetError(f"train-steps: {name} is not a regular expression: {error}") from error
            wanted = "loss" if name == "loss_pattern" else "value"
            if wanted not in compiled.groupindex:
                raise PresetError(f"train-steps: {name} needs a named group (?P<{wanted}>...)")
        if self.rel_tolerance < 0 or self.abs_tolerance < 0:
            raise PresetError("train-steps: tolerances must not be negative")

    def resolved_command(self) -> str:
        return self.command.replace("{steps}", str(self.steps))


@dataclass
class TrainMetrics:
    losses: list[float] = field(default_factory=list)
    step_time_s: float | None = None  # median over the steps that printed it
    step_time_estimated: bool = False  # from wall time / steps when none was printed
    tokens_per_s: float | None = None  # median
    peak_gpu_mem_bytes: int | None = None
    duration_s: float = 0.0

    @property
    def all_finite(self) -> bool:
        return all(math.isfinite(loss) for loss in self.losses)

    def to_dict(self) -> dict[str, object]:
        payload = asdict(self)
        payload["losses"] = [loss if math.isfinite(loss) else str(loss) for loss in self.losses]  # JSON has no nan
        payload["all_finite"] = self.all_finite
        return payload


def _median(values: list[float]) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    middle = len(ordered) // 2
    return ordered[middle] if len(ordered) % 2 else (ordered[middle - 1] + ordered[middle]) / 2


def parse_training_output(output: str, spec: TrainStepsSpec) -> TrainMetrics:
    metrics = TrainMetrics()
    loss_re, time_re, tokens_re = (re.compile(p) for p in (spec.loss_pattern, spec.step_time_pattern,
                                                              spec.tokens_pattern))
    times, tokens = [], []
    for line in output.splitlines():
        if found := loss_re.search(line):
            metrics.losses.append(float(found["loss"]))
        if found := time_re.search(line):
            unit = found.groupdict().get("unit") or "s"
            times.append(float(found["value"]) / (1000.0 if unit == "ms" else 1.0))
        if found := tokens_re.search(line):
            tokens.append(float(found["value"]))
    metrics.step_time_s = _median(times)
    metrics.tokens_per_s = _median(tokens)
    return metrics


@dataclass
class LossComparison:
    steps_compared: int
    max_abs_diff: float
    max_rel_diff: float
    first_outside: int | None  # 0-based step index, None when all are within tolerance
    within_tolerance: bool

    def to_dict(self) -> dict[str, object]:
        return asdict(self)


def compare_losses(losses: list[float], reference: list[float], spec: TrainStepsSpec) -> LossComparison:
    steps = min(len(losses), len(reference), spec.steps)
    max_abs = max_rel = 0.0
    first: int | None = None
    for index in range(steps):
        ours, theirs = losses[index], reference[index]
        diff = abs(ours - theirs) if math.isfinite(ours) and math.isfinite(theirs) else math.inf
        max_abs = max(max_abs, diff)
        max_rel = max(max_rel, diff / abs(theirs) if theirs else diff)
        if first is None and not diff <= spec.abs_tolerance + spec.rel_tolerance * abs(theirs):
            first = index
    return LossComparison(steps, round(max_abs, 9), round(max_rel, 9), first, first is None and steps > 0)


@dataclass
class TrainStepsResult:
    execution: Execution
    metrics: TrainMetrics
    passed: bool
    reasons: list[str]  # why it did not pass
    comparison: LossComparison | None = None
    reference: dict[str, object] | None = None  # the CUDA run's metrics

    def to_dict(self) -> dict[str, object]:
        return {"preset": "train-steps", "execution": self.execution.to_dict(), "metrics": self.metrics.to_dict(),
                "passed": self.passed, "reasons": self.reasons,
                "comparison": self.comparison.to_dict() if self.comparison else None, "reference": self.reference}


def judge(execution: Execution, metrics: TrainMetrics, spec: TrainStepsSpec, expected_exit: int,
          reference: dict[str, object] | None) -> TrainStepsResult:
    reasons = []
    if execution.timed_out:
        reasons.append(f"timed out after {spec.timeout_s:.0f} s")
    elif execution.exit_code != expected_exit:
        reasons.append(f"exit {execution.exit_code if execution.signal is None else execution.signal}, "
                       f"expected {expected_exit}")
    if len(metrics.losses) < spec.steps:
        reasons.append(f"{len(metrics.losses)} losses printed, expected {spec.steps}")
    if not metrics.all_finite:
        first = next(i for i, loss in enumerate(metrics.losses) if not math.isfinite(loss))
        reasons.append(f"loss is {metrics.losses[first]} at step {first}")
    comparison = None
    if reference is not None:
        raw = reference.get("losses")
        reference_losses = [float(v) for v in raw] if isinstance(raw, list) else []
        comparison = compare_losses(metrics.losses, reference_losses, spec)
        if not comparison.within_tolerance:
            at = comparison.first_outside
            reasons.append("no reference losses to compare" if comparison.steps_compared == 0 else
                           f"loss differs from the CUDA reference at step {at} (max relative difference "
                           f"{comparison.max_rel_diff:.3g}, tolerance {spec.rel_tolerance:g})")
    return TrainStepsResult(execution, metrics, not reasons, reasons, comparison, reference)


def run_train_steps(spec: TrainStepsSpec, cwd: Path, env: dict[str, str] | None, *,
                    sampler: GpuSampler | None = None, expected_exit: int = 0,
                    reference: dict[str, object] | None = None,
                    cancel: Callable[[], bool] | None = None) -> TrainStepsResult:
    """Run the training command once and judge it (see the module docstring)."""
    execution = run_command(spec.resolved_command(), cwd, env, spec.timeout_s, spec.output_limit_bytes, sampler,
                            cancel=cancel)
    return measure(execution, spec, expected_exit, reference)


def measure(execution: Execution, spec: TrainStepsSpec, expected_exit: int = 0,
            reference: dict[str, object] | None = None) -> TrainStepsResult:
    """Metrics and verdict of a finished training run (on the host or in the sandbox)."""
    metrics = parse_training_output(execution.output, spec)
    metrics.duration_s = execution.duration_s
    metrics.peak_gpu_mem_bytes = execution.peak_gpu_mem_bytes
    if metrics.step_time_s is None and metrics.losses:
        metrics.step_time_s = round(execution.duration_s / len(metrics.losses), 6)
        metrics.step_time_estimated = True
    return judge(execution, metrics, spec, expected_exit, reference)

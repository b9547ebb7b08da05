"""Smoke preset ``llm-serve``: start an OpenAI-compatible server, measure it, stop it.

The server command (SGLang, vLLM or any OpenAI-compatible server; ``{port}`` is replaced by a free
port) starts in its own session. Once its health endpoint answers 200, a fixed prompt set goes
through ``/v1/completions`` with streaming and greedy decoding; for each prompt the time to first
token, the decode rate and the text are kept, and the device sampler gives the peak GPU memory.
Then the server's whole process group is stopped (SIGTERM, then SIGKILL), and none of it is left.
With a CUDA reference the outputs (text similarity) and speed (tokens/s ratio) are compared.

Standard library only and no imports of this project: a runner copies this file into the sandbox
and runs it there (``python3 preset_serve.py SPEC.json CWD``), so the server and the client share
the sandbox's network namespace. It prints the result as JSON on its last line.
"""
from __future__ import annotations

import difflib
import http.client
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path

GpuSampler = Callable[[], int | None]  # bytes in use on the device, None if unknown

DEFAULT_PROMPTS = (
    "The capital of France is",
    "Write a haiku about GPUs.",
    "Explain in one sentence what a compiler does.",
    "1, 1, 2, 3, 5, 8,",
)
LOG_TAIL = 8000
_PAGE_SIZE = os.sysconf("SC_PAGE_SIZE")


class ServeSpecError(ValueError):
    """An llm-serve option is malformed; the message names it."""


@dataclass(frozen=True)
class ServeSpec:
    command: str
    port: int = 0  # 0: a free port, passed as {port}
    health_path: str = "/health"
    model: str = ""  # empty: the first model /v1/models lists
    prompts: tuple[str, ...] = DEFAULT_PROMPTS
    max_tokens: int = 64
    startup_timeout_s: float = 900.0
    request_timeout_s: float = 300.0
    stop_grace_s: float = 10.0
    min_similarity: float = 0.9  # of each output to the reference's (difflib ratio)
    min_speed_ratio: float = 0.0  # tokens/s over the reference's; 0 records without judging

    def __post_init__(self) -> None:
        if not self.command.strip():
            raise ServeSpecError("llm-serve: command is empty")
        if not self.prompts or not all(isinstance(p, str) and p for p in self.prompts):
            raise ServeSpecError("llm-serve: prompts must be a non-empty list of texts")
        if not self.health_path.startswith("/"):
            raise ServeSpecError("llm-serve: health_path must start with /")
        if not 0 <= self.port <= 65535 or not 1 <= self.max_tokens <= 4096:
            raise ServeSpecError("llm-serve: port or max_tokens out of range")


@dataclass
class PromptResult:
    prompt: str
    text: str = ""
    ttft_s: float | None = None
    completion_tokens: int = 0
    decode_tokens_per_s: float | None = None
    total_s: float = 0.0
    error: str = ""


@dataclass
class ServeResult:
    passed: bool
    reasons: list[str]
    startup_s: float | None = None
    prompts: list[PromptResult] = field(default_factory=list)
    ttft_s: float | None = None  # median over the prompts
    tokens_per_s: float | None = None  # all completion tokens over all decode time
    peak_gpu_mem_bytes: int | None = None
    peak_host_rss_bytes: int | None = None
    server_exit: str = ""  # how the server ended: "stopped", "exited N before it was ready", ...
    left_running: int = 0  # processes of the server's group still alive after the stop (must be 0)
    server_log_tail: str = ""
    comparison: dict[str, object] | None = None

    def to_dict(self) -> dict[str, object]:
        payload = asdict(self)
        payload["preset"] = "llm-serve"
        return payload


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _request(port: int, method: str, path: str, body: dict[str, object] | None, timeout: float
             ) -> http.client.HTTPResponse:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    payload = json.dumps(body).encode() if body is not None else None
    connection.request(method, path, payload, {"Content-Type": "application/json"} if payload else {})
    return connection.getresponse()


def _healthy(port: int, path: str) -> bool:
    try:
        return _request(port, "GET", path, None, 5.0).status == 200
    except OSError:
        return False


def _events(response: http.client.HTTPResponse) -> Iterator[dict[str, object]]:
    """The JSON payloads of a server-sent event stream, up to ``data: [DONE]``."""
    for raw in response:
        line = raw.decode("utf-8", errors="replace").strip()
        if not line.startswith("data:"):
            continue
        data = line[5:].strip()
        if data == "[DONE]":
            return
        try:
            event = json.loads(data)
        except json.JSONDecodeError:
            continue
        if isinstance(event, dict):
            yield event


def ask(port: int, model: str, prompt: str, max_tokens: int, timeout: float) -> PromptResult:
    """One streamed, greedy completion with its timings."""
    result = PromptResult(prompt)
    body: dict[str, object] = {"model": model, "prompt": prompt, "max_tokens": max_tokens, "temperature": 0,
                               "stream": True, "stream_options": {"include_usage": True}}
    started = time.monotonic()
    chunks, pieces, usage_tokens = 0, [], None
    try:
        response = _request(port, "POST", "/v1/completions", body, timeout)
        if response.status != 200:
            result.error = f"HTTP {response.status}: {response.read(300).decode(errors='replace')}"
            return result
        for event in _events(response):
            choices = event.get("choices")
            text = choices[0].get("text", "") if isinstance(choices, list) and choices else ""
            if text:
                if result.ttft_s is None:
                    result.ttft_s = round(time.monotonic() - started, 6)
                pieces.append(str(text))
                chunks += 1
            usage = event.get("usage")
            if isinstance(usage, dict) and isinstance(usage.get("completion_tokens"), int):
                usage_tokens = usage["completion_tokens"]
    except OSError as error:
        result.error = f"request failed: {error}"
    result.total_s = round(time.monotonic() - started, 6)
    result.text = "".join(pieces)
    result.completion_tokens = usage_tokens if usage_tokens is not None else chunks
    decode = result.total_s - (result.ttft_s or 0.0)
    if result.completion_tokens > 1 and decode > 0:
        result.decode_tokens_per_s = round((result.completion_tokens - 1) / decode, 3)
    return result


def _first_model(port: int, timeout: float) -> str:
    try:
        response = _request(port, "GET", "/v1/models", None, timeout)
        data = json.loads(response.read()) if response.status == 200 else {}
    except (OSError, json.JSONDecodeError):
        return ""
    models = data.get("data") if isinstance(data, dict) else None
    return str(models[0].get("id", "")) if isinstance(models, list) and models and isinstance(models[0], dict) else ""


class _Peaks(threading.Thread):
    """Peak device memory (sampler) and host memory of the server's process group while it runs."""

    def __init__(self, pgid: int, sampler: GpuSampler | None) -> None:
        super().__init__(daemon=True)
        self.pgid, self.sampler, self.stop = pgid, sampler, threading.Event()
        self.gpu: int | None = None
        self.rss = 0

    def run(self) -> None:
        while not self.stop.wait(0.5):
            self.rss = max(self.rss, _group_stats(self.pgid)[1])
            value = self.sampler() if self.sampler else None
            if value is not None:
                self.gpu = value if self.gpu is None else max(self.gpu, value)


def _group_stats(pgid: int) -> tuple[int, int]:
    """(live members, resident bytes) of process group ``pgid``."""
    count = rss = 0
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            try:
                stat = Path(entry.path, "stat").read_text()
                fields = stat[stat.rindex(")") + 2:].split()
                if int(fields[2]) == pgid and fields[0] != "Z":
                    count += 1
                    rss += int(fields[21]) * _PAGE_SIZE
            except (OSError, ValueError, IndexError):
                continue
    return count, rss


def _group_members(pgid: int) -> int:
    return _group_stats(pgid)[0]


def stop_server(process: subprocess.Popen[bytes], grace_s: float) -> tuple[str, int]:
    """SIGTERM to the server's group, SIGKILL after the grace; (how it ended, members left)."""
    pgid = process.pid
    ended = "stopped" if process.poll() is None else f"had exited ({process.returncode})"
    for sig, wait in ((signal.SIGTERM, grace_s), (signal.SIGKILL, 5.0)):
        try:
            os.killpg(pgid, sig)
        except ProcessLookupError:
            break
        deadline = time.monotonic() + wait
        while _group_members(pgid) and time.monotonic() < deadline:
            process.poll()
            time.sleep(0.05)
    process.wait(timeout=5)
    return ended, _group_members(pgid)


def _wait_ready(process: subprocess.Popen[bytes], port: int, spec: ServeSpec,
                cancel: Callable[[], bool] | None) -> str:
    deadline = time.monotonic() + spec.startup_timeout_s
    while time.monotonic() < deadline:
        if process.poll() is not None:
            return f"exited {process.returncode} before it was ready"
        if cancel and cancel():
            return "cancelled"
        if _healthy(port, spec.health_path):
            return ""
        time.sleep(0.25)
    return f"not ready within {spec.startup_timeout_s:.0f} s ({spec.health_path} never answered 200)"


def run_llm_serve(spec: ServeSpec, cwd: Path, env: dict[str, str] | None, *, sampler: GpuSampler | None = None,
                  reference: dict[str, object] | None = None, log: Callable[[str], None] = lambda text: None,
                  cancel: Callable[[], bool] | None = None) -> ServeResult:
    port = spec.port or free_port()
    command = spec.command.replace("{port}", str(port))
    log(f"$ {command}\n")
    with tempfile.TemporaryFile() as server_log:
        process = subprocess.Popen(command, shell=True, cwd=cwd, env=env, stdin=subprocess.DEVNULL,
                                   stdout=server_log, stderr=subprocess.STDOUT, start_new_session=True)
        peaks = _Peaks(process.pid, sampler)
        peaks.start()
        started = time.monotonic()
        try:
            problem = _wait_ready(process, port, spec, cancel)
            result = ServeResult(False, [problem] if problem else [])
            if not problem:
                result.startup_s = round(time.monotonic() - started, 3)
                log(f"server ready on port {port} after {result.startup_s} s\n")
                model = spec.model or _first_model(port, spec.request_timeout_s)
                for prompt in spec.prompts:
                    result.prompts.append(ask(port, model, prompt, spec.max_tokens, spec.request_timeout_s))
        finally:
            peaks.stop.set()
            result_exit, left = stop_server(process, spec.stop_grace_s)
            peaks.join(timeout=5)
        server_log.seek(0)
        text = server_log.read().decode("utf-8", errors="replace")
    result.server_exit = result_exit if not result.reasons else result.reasons[0]
    result.left_running = left
    result.server_log_tail = text[-LOG_TAIL:]
    result.peak_gpu_mem_bytes, result.peak_host_rss_bytes = peaks.gpu, peaks.rss or None
    _summarise(result)
    if reference is not None:
        result.comparison = compare_with_reference(result, reference, spec)
    _judge(result, spec)
    return result


def _summarise(result: ServeResult) -> None:
    ttfts = sorted(p.ttft_s for p in result.prompts if p.ttft_s is not None)
    result.ttft_s = ttfts[len(ttfts) // 2] if ttfts else None
    tokens = sum(max(p.completion_tokens - 1, 0) for p in result.prompts if p.decode_tokens_per_s)
    decode = sum(p.total_s - (p.ttft_s or 0.0) for p in result.prompts if p.decode_tokens_per_s)
    result.tokens_per_s = round(tokens / decode, 3) if decode > 0 else None


def compare_with_reference(result: ServeResult, reference: dict[str, object], spec: ServeSpec) -> dict[str, object]:
    prompts = reference.get("prompts")
    theirs = {str(p.get("prompt")): str(p.get("text", "")) for p in prompts if isinstance(p, dict)} \
        if isinstance(prompts, list) else {}
    similarities = {p.prompt: round(difflib.SequenceMatcher(None, p.text, theirs[p.prompt]).ratio(), 4)
                    for p in result.prompts if p.prompt in theirs}
    speed = reference.get("tokens_per_s")
    ratio = round(result.tokens_per_s / float(speed), 3) if result.tokens_per_s and isinstance(speed, (int, float)) \
        and speed else None
    ttft = reference.get("ttft_s")
    return {"similarity": similarities, "min_similarity": min(similarities.values()) if similarities else None,
            "identical": sum(1 for p in result.prompts if theirs.get(p.prompt) == p.text),
            "speed_ratio": ratio, "reference_tokens_per_s": speed, "reference_ttft_s": ttft,
            "outputs_match": bool(similarities) and min(similarities.values()) >= spec.min_similarity}


def _judge(result: ServeResult, spec: ServeSpec) -> None:
    failed = [p for p in result.prompts if p.error or not p.text]
    if failed:
        result.reasons.append(f"{len(failed)} of {len(result.prompts)} prompts got no answer "
                              f"({failed[0].error or 'empty output'})")
    if result.left_running:
        result.reasons.append(f"{result.left_running} server processes were still running after the stop")
    comparison = result.comparison
    if comparison is not None and not comparison["outputs_match"]:
        result.reasons.append(f"outputs differ from the CUDA reference (lowest similarity "
                              f"{comparison['min_similarity']}, needed {spec.min_similarity})")
    ratio = comparison.get("speed_ratio") if comparison else None
    if spec.min_speed_ratio and isinstance(ratio, float) and ratio < spec.min_speed_ratio:
        result.reasons.append(f"tokens/s is {ratio:.2f} of the CUDA reference's (needed {spec.min_speed_ratio})")
    result.passed = not result.reasons


def spec_from_dict(raw: dict[str, object]) -> ServeSpec:
    options = {k: v for k, v in raw.items() if k != "preset"}
    if isinstance(options.get("prompts"), list):
        options["prompts"] = tuple(options["prompts"])  # type: ignore[arg-type]
    try:
        return ServeSpec(**options)  # type: ignore[arg-type]
    except TypeError as error:
        raise ServeSpecError(f"llm-serve: {error}") from error


def main(argv: list[str]) -> int:
    """``preset_serve.py SPEC.json CWD [REFERENCE.json]``: run the preset, print the result as JSON."""
    spec = spec_from_dict(json.loads(Path(argv[1]).read_text()))
    reference = json.loads(Path(argv[3]).read_text()) if len(argv) > 3 else None
    result = run_llm_serve(spec, Path(argv[2]), None, reference=reference,
                           log=lambda text: print(text, end="", file=sys.stderr, flush=True))
    print(json.dumps(result.to_dict()))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

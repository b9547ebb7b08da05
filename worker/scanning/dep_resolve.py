"""Resolve declared requirements the way pip would, with pip's own resolver in report mode.

``pip install --dry-run --ignore-installed --report - --only-binary=:all:`` installs nothing and,
being binary-only, never runs a package's setup code. Only requirement strings parsed by
``packaging`` reach pip, as separate arguments (never a user's requirements file, which could
carry options, and never a direct URL reference). pip reads the index from its own configuration
(``pip.conf``, ``PIP_INDEX_URL``) unless ``ResolveOptions`` names one. A requirement with no wheel on
the index is dropped and listed (source-only or missing), and the rest resolved again; an index
that cannot be reached, or a conflict, ends with the declared names only and says why.
"""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path

from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name

MAX_RETRIES = 8
_NO_WHEEL = re.compile(r"(?:No matching distribution found for|Could not find a version that satisfies the "
                       r"requirement)\s+([A-Za-z0-9][A-Za-z0-9._-]*)")
_UNREACHABLE = re.compile(r"NewConnectionError|Failed to establish a new connection|Connection refused|"
                          r"Network is unreachable|Name or service not known|Temporary failure in name resolution|"
                          r"ProxyError|Could not fetch URL|ConnectTimeout|timed out", re.IGNORECASE)


@dataclass(frozen=True)
class ResolveOptions:
    index_url: str = ""  # empty: pip's configured index
    find_links: tuple[str, ...] = ()
    no_index: bool = False
    timeout_s: float = 300.0
    python: str = sys.executable


@dataclass(frozen=True)
class ResolvedPackage:
    name: str  # canonical
    version: str
    url: str  # where the wheel comes from
    requested: bool  # named by a declaration (not only pulled in)

    def to_dict(self) -> dict[str, object]:
        return asdict(self)


@dataclass
class Resolution:
    status: str  # resolved | partial | unreachable | conflict | failed | skipped | cancelled
    message: str = ""
    packages: list[ResolvedPackage] = field(default_factory=list)
    no_wheel: list[str] = field(default_factory=list)  # requirements with no wheel on the index
    command: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, object]:
        return {"status": self.status, "message": self.message, "packages": [p.to_dict() for p in self.packages],
                "no_wheel": self.no_wheel, "command": self.command}


def pip_command(requirements: list[str], options: ResolveOptions, report: str = "report.json") -> list[str]:
    argv = [options.python, "-m", "pip", "install", "--dry-run", "--ignore-installed", "--report", report,
            "--only-binary=:all:", "--progress-bar", "off", "--no-input", "--disable-pip-version-check",
            "--retries", "1", "--timeout", "15"]
    if options.no_index:
        argv.append("--no-index")
    if options.index_url:
        argv += ["--index-url", options.index_url]
    for link in options.find_links:
        argv += ["--find-links", link]
    return argv + requirements


def _run_pip(requirements: list[str], options: ResolveOptions,
             cancel: Callable[[], bool] | None = None) -> tuple[int, str, str]:
    """(exit code, the JSON report, pip's log): the report goes to a file so the log can be read too.
    ``cancel`` is polled while pip runs; when it says so pip is stopped (exit code -2)."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PIP_REQUIRE_VIRTUALENV")}
    with tempfile.TemporaryDirectory(prefix="migrator-pip-") as scratch:  # no project files in pip's cwd
        report = Path(scratch) / "report.json"
        log = Path(scratch) / "pip.log"
        with log.open("w+", encoding="utf-8") as output:
            process = subprocess.Popen(pip_command(requirements, options, str(report)), stdout=output,
                                       stderr=subprocess.STDOUT, cwd=scratch, env=env, stdin=subprocess.DEVNULL,
                                       text=True)
            deadline = time.monotonic() + options.timeout_s
            while process.poll() is None:
                stopped = "cancelled" if cancel and cancel() else "timeout" if time.monotonic() > deadline else ""
                if stopped:
                    process.kill()
                    process.wait()
                    return (-2, "", "cancelled") if stopped == "cancelled" else \
                        (-1, "", f"pip did not finish within {options.timeout_s:.0f} s")
                time.sleep(0.2)
            output.seek(0)
            text_log = output.read()
        text = report.read_text(encoding="utf-8") if process.returncode == 0 and report.is_file() else ""
    return process.returncode, text, text_log


def _packages(report_text: str, requested: set[str]) -> list[ResolvedPackage]:
    report = json.loads(report_text)
    packages = []
    for item in report.get("install", []):
        metadata = item.get("metadata", {})
        name = canonicalize_name(str(metadata.get("name", "")))
        url = str(item.get("download_info", {}).get("url", ""))
        packages.append(ResolvedPackage(name, str(metadata.get("version", "")), url, name in requested))
    return sorted(packages, key=lambda p: p.name)


def _drop(requirements: list[str], name: str) -> list[str]:
    wanted = canonicalize_name(name)
    return [r for r in requirements if canonicalize_name(Requirement(r).name) != wanted]


def resolve(requirements: list[str], options: ResolveOptions,
            cancel: Callable[[], bool] | None = None) -> Resolution:
    """Resolve ``requirements`` (already parsed, no URLs); see the module docstring."""
    for text in requirements:
        Requirement(text)  # raises InvalidRequirement: callers pass parsed requirements only
        if Requirement(text).url:
            raise InvalidRequirement(f"direct references are not resolved: {text}")
    if not requirements:
        return Resolution("skipped", "no requirements to resolve")
    remaining, no_wheel = list(requirements), list[str]()
    for _attempt in range(MAX_RETRIES):
        code, out, err = _run_pip(remaining, options, cancel)
        command = pip_command(remaining, options, "-")[1:]
        if code == -2:
            return Resolution("cancelled", "cancelled", no_wheel=no_wheel, command=command)
        if code == 0:
            requested = {str(canonicalize_name(Requirement(r).name)) for r in remaining}
            status = "partial" if no_wheel else "resolved"
            message = f"{len(no_wheel)} requirement(s) have no wheel on the index" if no_wheel else ""
            return Resolution(status, message, _packages(out, requested), no_wheel, command)
        missing = _NO_WHEEL.search(err)
        if _UNREACHABLE.search(err) and (missing is None or "from versions: none" in err):
            return Resolution("unreachable", f"the package index could not be reached: {_last_line(err)}",
                              no_wheel=no_wheel, command=command)
        if missing is None:
            status = "conflict" if "ResolutionImpossible" in err or "conflict" in err else "failed"
            message = _conflict(err) or _last_line(err) or f"pip exited with {code}"
            return Resolution(status, message, no_wheel=no_wheel, command=command)
        dropped = [r for r in remaining if canonicalize_name(Requirement(r).name) == canonicalize_name(missing[1])]
        if not dropped:
            return Resolution("failed", _last_line(err), no_wheel=no_wheel, command=command)
        no_wheel += dropped
        remaining = _drop(remaining, missing[1])
        if not remaining:
            return Resolution("partial", "no requirement has a wheel on the index", no_wheel=no_wheel, command=command)
    return Resolution("failed", f"gave up after {MAX_RETRIES} attempts", no_wheel=no_wheel)


def _conflict(text: str) -> str:
    """pip's 'The conflict is caused by:' lines, joined (empty when pip gave none)."""
    lines = text.splitlines()
    start = next((i for i, line in enumerate(lines) if "The conflict is caused by" in line), None)
    if start is None:
        return ""
    causes = []
    for line in lines[start + 1:]:
        if not line.strip() or line.lstrip().startswith(("To fix", "Additionally")):
            break
        causes.append(line.strip())
    return ("conflict: " + "; ".join(causes))[:500] if causes else ""


def _last_line(text: str) -> str:
    lines = [line.strip() for line in text.splitlines() if line.strip() and not line.startswith("WARNING: Location")]
    errors = [line for line in lines if line.startswith("ERROR")]
    return (errors or lines or [""])[-1][:300]

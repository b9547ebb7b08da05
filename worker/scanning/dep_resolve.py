"""Resolve one install set's ROCm requirements the way pip would, with pip's own resolver in report mode.

``pip install --dry-run --ignore-installed --report --only-binary=:all:`` installs nothing and,
being binary-only, never runs a package's build code: pip reads wheel metadata and nothing else.
What reaches pip is Migrator's own: requirement strings parsed and re-written by ``packaging``
(after ``--``, so none can pass for an option), never a user's requirements file, never a direct
URL reference, never an index a user file names; a constraints file and stub wheels that Migrator
writes itself into an empty scratch directory.

The resolve sees only these and the product's index settings (``ResolveOptions``), never the
host's pip configuration: pip runs with ``--isolated`` (no user configuration, no ``PIP_*``
variables) and ``PIP_CONFIG_FILE=/dev/null`` (no site or global ``pip.conf`` either, whose
``constraint =`` would otherwise cap the project's torch), in an environment holding only what
it needs. Why this runs outside the sandbox: the sandbox has no network, and the resolve is
nothing but index requests and metadata parsing; no project code or file reaches it.

A requirement with no wheel on the index is dropped and listed (source-only or missing), and the
rest resolved again; an index that cannot be reached, or a conflict, ends with the reason.
"""
from __future__ import annotations

import base64
import hashlib
import json
import os
import re
import subprocess
import sys
import tempfile
import time
import zipfile
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
    """The product's index settings: the only ones a resolve sees."""

    index_url: str = ""  # empty: pip's built-in default (PyPI), never the host's pip.conf
    extra_index_urls: tuple[str, ...] = ()
    rocm_index: str = ""  # replaces the ROCm wheel index a request names (a mirror, a test index)
    find_links: tuple[str, ...] = ()
    no_index: bool = False
    timeout_s: float = 300.0
    python: str = sys.executable
    cache_dir: str = ""  # pip's HTTP cache; empty: none
    cert: str = ""
    proxy: str = ""

    def fingerprint(self) -> str:
        """What in the options can change a resolution (a cache key part): the indexes and the interpreter."""
        return json.dumps([self.index_url, list(self.extra_index_urls), self.rocm_index, list(self.find_links),
                           self.no_index, self.python], sort_keys=True)


@dataclass(frozen=True)
class ProvidedPackage:
    """A package the environment already has (a ROCm image's torch): given to pip as a stub wheel."""

    name: str
    version: str


@dataclass
class ResolveRequest:
    requirements: list[str]
    constraints: list[str] = field(default_factory=list)
    provided: list[ProvidedPackage] = field(default_factory=list)
    extra_indexes: list[str] = field(default_factory=list)  # the ROCm wheel index
    # What the finished resolution is checked against (``dep_check``).
    torch_build: str = ""  # "2.14.1+rocm7.2": the torch pip must keep
    triton_spec: str = ""  # the triton range the set declared
    rocm_version: str = ""
    image: str = ""  # the ROCm image providing torch, when the set runs in one

    def to_dict(self) -> dict[str, object]:
        return {"requirements": self.requirements, "constraints": self.constraints,
                "provided": [asdict(p) for p in self.provided], "extra_indexes": self.extra_indexes,
                "torch_build": self.torch_build, "triton_spec": self.triton_spec, "rocm_version": self.rocm_version,
                "image": self.image}

    @classmethod
    def from_dict(cls, data: dict[str, object]) -> ResolveRequest:
        def strings(key: str) -> list[str]:
            value = data.get(key, [])
            return [str(v) for v in value] if isinstance(value, list) else []

        provided = data.get("provided", [])
        return cls(strings("requirements"), strings("constraints"),
                   [ProvidedPackage(str(p["name"]), str(p["version"])) for p in provided
                    if isinstance(p, dict)] if isinstance(provided, list) else [], strings("extra_indexes"),
                   str(data.get("torch_build", "")), str(data.get("triton_spec", "")), str(data.get("rocm_version", "")),
                   str(data.get("image", "")))

    def key(self, options: ResolveOptions, data_version: str = "") -> str:
        """The cache key: the exact request, the index settings and the counterpart data it came from."""
        text = json.dumps([self.to_dict(), options.fingerprint(), data_version], sort_keys=True)
        return hashlib.sha256(text.encode()).hexdigest()


@dataclass(frozen=True)
class ResolvedPackage:
    name: str  # canonical
    version: str
    url: str  # where the wheel comes from
    requested: bool  # named by the request (not only pulled in)
    requires: tuple[str, ...] = ()  # canonical names of what it depends on (markers evaluated by pip)

    def to_dict(self) -> dict[str, object]:
        return {"name": self.name, "version": self.version, "url": self.url, "requested": self.requested,
                "requires": list(self.requires)}


@dataclass
class Resolution:
    status: str  # resolved | partial | unreachable | conflict | failed | skipped | cancelled | timeout
    message: str = ""
    packages: list[ResolvedPackage] = field(default_factory=list)
    no_wheel: list[str] = field(default_factory=list)  # requirements with no wheel on the index
    command: list[str] = field(default_factory=list)
    duration_s: float = 0.0
    python: str = ""

    def to_dict(self) -> dict[str, object]:
        return {"status": self.status, "message": self.message, "packages": [p.to_dict() for p in self.packages],
                "no_wheel": self.no_wheel, "command": self.command, "duration_s": round(self.duration_s, 2),
                "python": self.python}


def pip_environment(scratch: str) -> dict[str, str]:
    """Only what pip needs: no PIP_* variable, no user site, no host pip.conf (``PIP_CONFIG_FILE=/dev/null``
    is how pip is told to load no configuration file at all)."""
    return {"PATH": os.defpath, "HOME": scratch, "TMPDIR": scratch, "LANG": "C.UTF-8", "PIP_CONFIG_FILE": os.devnull,
            "PYTHONNOUSERSITE": "1", "PYTHONDONTWRITEBYTECODE": "1"}


def pip_command(requirements: list[str], options: ResolveOptions, request: ResolveRequest | None = None,
                scratch: str = "", report: str = "report.json") -> list[str]:
    argv = [options.python, "-m", "pip", "--isolated", "install", "--dry-run", "--ignore-installed", "--report",
            report, "--only-binary=:all:", "--progress-bar", "off", "--no-input", "--disable-pip-version-check",
            "--retries", "1", "--timeout", "15"]
    argv += ["--cache-dir", options.cache_dir] if options.cache_dir else ["--no-cache-dir"]
    if options.no_index:
        argv.append("--no-index")
    if options.index_url:
        argv += ["--index-url", options.index_url]
    extra = [options.rocm_index] if options.rocm_index and request and request.extra_indexes else \
        (request.extra_indexes if request else [])
    for index in [*options.extra_index_urls, *extra]:
        argv += ["--extra-index-url", index]
    for link in options.find_links:
        argv += ["--find-links", link]
    if options.cert:
        argv += ["--cert", options.cert]
    if options.proxy:
        argv += ["--proxy", options.proxy]
    if request and request.provided and scratch:
        argv += ["--find-links", str(Path(scratch) / "provided")]
    if request and request.constraints and scratch:
        argv += ["--constraint", str(Path(scratch) / "constraints.txt")]
    return [*argv, "--", *requirements]


def write_stub_wheel(directory: Path, name: str, version: str) -> Path:
    """A wheel holding metadata only: how a package the environment provides is shown to pip."""
    dist = f"{canonicalize_name(name).replace('-', '_')}-{version}"
    files = {f"{dist}.dist-info/METADATA": f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n",
             f"{dist}.dist-info/WHEEL": "Wheel-Version: 1.0\nGenerator: migrator\nRoot-Is-Purelib: true\n"
                                       "Tag: py3-none-any\n"}
    record = [f"{path},sha256={base64.urlsafe_b64encode(hashlib.sha256(text.encode()).digest()).rstrip(b'=').decode()},"
              f"{len(text.encode())}" for path, text in files.items()]
    files[f"{dist}.dist-info/RECORD"] = "\n".join([*record, f"{dist}.dist-info/RECORD,,"]) + "\n"
    wheel = directory / f"{dist}-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as archive:
        for path, text in files.items():
            archive.writestr(path, text)
    return wheel


def _prepare(scratch: Path, request: ResolveRequest | None) -> None:
    if request is None:
        return
    if request.constraints:
        (scratch / "constraints.txt").write_text("".join(f"{c}\n" for c in request.constraints), encoding="utf-8")
    if request.provided:
        (scratch / "provided").mkdir()
        for package in request.provided:
            write_stub_wheel(scratch / "provided", package.name, package.version)


def _run_pip(requirements: list[str], options: ResolveOptions, request: ResolveRequest | None,
             cancel: Callable[[], bool] | None = None) -> tuple[int, str, str]:
    """(exit code, the JSON report, pip's log). ``cancel`` is polled while pip runs; when it says so pip is
    stopped (exit code -2); past the time limit it is stopped too (-1)."""
    with tempfile.TemporaryDirectory(prefix="migrator-pip-") as scratch:  # no project files in pip's cwd
        _prepare(Path(scratch), request)
        report = Path(scratch) / "report.json"
        log = Path(scratch) / "pip.log"
        with log.open("w+", encoding="utf-8") as output:
            process = subprocess.Popen(pip_command(requirements, options, request, scratch, str(report)),
                                       stdout=output, stderr=subprocess.STDOUT, cwd=scratch,
                                       env=pip_environment(scratch), stdin=subprocess.DEVNULL, text=True)
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
        requires = []
        for text in metadata.get("requires_dist", []) or []:
            try:
                requirement = Requirement(str(text))
            except InvalidRequirement:
                continue
            if requirement.marker is None or requirement.marker.evaluate({"extra": ""}):
                requires.append(str(canonicalize_name(requirement.name)))
        packages.append(ResolvedPackage(name, str(metadata.get("version", "")), url, name in requested,
                                        tuple(dict.fromkeys(requires))))
    return sorted(packages, key=lambda p: p.name)


def _name(text: str) -> str:
    return str(canonicalize_name(Requirement(text).name))


def _check(requirements: list[str]) -> None:
    for text in requirements:
        if Requirement(text).url:  # raises InvalidRequirement too: callers pass parsed requirements only
            raise InvalidRequirement(f"direct references are not resolved: {text}")


def resolve(requirements: list[str], options: ResolveOptions, cancel: Callable[[], bool] | None = None,
            request: ResolveRequest | None = None) -> Resolution:
    """Resolve ``requirements`` (parsed, no URLs) with ``request``'s constraints, stubs and indexes."""
    _check([*requirements, *(request.constraints if request else [])])
    if not requirements:
        return Resolution("skipped", "no requirements to resolve")
    started = time.monotonic()
    remaining, no_wheel = list(requirements), list[str]()
    python = _python_version(options.python)
    for _attempt in range(MAX_RETRIES):
        code, out, err = _run_pip(remaining, options, request, cancel)
        command = [c for c in pip_command(remaining, options, request, "", "-")[1:]]
        elapsed = time.monotonic() - started
        if code in (-1, -2):
            status = "cancelled" if code == -2 else "timeout"
            return Resolution(status, err, no_wheel=no_wheel, command=command, duration_s=elapsed, python=python)
        if code == 0:
            requested = {_name(r) for r in remaining}
            message = f"{len(no_wheel)} requirement(s) have no wheel on the index" if no_wheel else ""
            return Resolution("partial" if no_wheel else "resolved", message, _packages(out, requested), no_wheel,
                              command, elapsed, python)
        missing = _NO_WHEEL.search(err)
        if _UNREACHABLE.search(err) and (missing is None or "from versions: none" in err):
            return Resolution("unreachable", f"the package index could not be reached: {_first_match(err)}",
                              no_wheel=no_wheel, command=command, duration_s=elapsed, python=python)
        dropped = [r for r in remaining if missing and _name(r) == canonicalize_name(missing[1])]
        if not dropped:
            status = "conflict" if "ResolutionImpossible" in err or "conflict" in err else "failed"
            message = _conflict(err) or _last_line(err) or f"pip exited with {code}"
            return Resolution(status, message, no_wheel=no_wheel, command=command, duration_s=elapsed, python=python)
        no_wheel += dropped
        remaining = [r for r in remaining if r not in dropped]
        if not remaining:
            return Resolution("partial", "no requirement has a wheel on the index", no_wheel=no_wheel,
                              command=command, duration_s=time.monotonic() - started, python=python)
    return Resolution("failed", f"gave up after {MAX_RETRIES} attempts", no_wheel=no_wheel,
                      duration_s=time.monotonic() - started, python=python)


def resolve_request(request: ResolveRequest, options: ResolveOptions,
                    cancel: Callable[[], bool] | None = None) -> Resolution:
    return resolve(request.requirements, options, cancel, request)


def _python_version(python: str) -> str:
    return ".".join(str(p) for p in sys.version_info[:2]) if python == sys.executable else python


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


def _first_match(text: str) -> str:
    """The first line saying why the index could not be reached (a refused connection, a certificate)."""
    line = next((line.strip() for line in text.splitlines() if _UNREACHABLE.search(line)), "")
    return (line or _last_line(text))[:300]


def _last_line(text: str) -> str:
    lines = [line.strip() for line in text.splitlines() if line.strip() and not line.startswith("WARNING: Location")]
    errors = [line for line in lines if line.startswith("ERROR")]
    return (errors or lines or [""])[-1][:300]

"""Payload types shared by the rule modules, the fixer and the scan stage."""
from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

from worker.payloads import FixData

DEFAULT_OFFLOAD_ARCHS = ("gfx90a", "gfx942", "gfx1100")  # MI200, MI300 (64-lane wavefronts), RDNA3 (32)

Severity = Literal["error", "warning", "info"]
Family = Literal["cmake", "make", "shell", "python-build", "dependencies", "container", "ci", "run-config"]

NOTEBOOK_SLUGS = frozenset(
    {
        "cuda-header-not-found", "cmake-findcuda", "cuda-link-libraries", "hip-runtime-not-linked",
        "ld-library-path-cuda", "cuda-python-wheels", "hipcc-nvidia-platform", "no-amd-gpu-visible",
        "no-binary-for-gpu", "invalid-launch-configuration", "warp-size-32", "hipify-unconverted",
        "fp16-nan-use-bf16", "illegal-memory-access", "rccl-hang", "sglang-backend", "sglang-memory",
        "cuda-visible-devices", "nvidia-container", "port-validation",
    }
)


@dataclass(frozen=True)
class Finding:
    """One problem in a build or configuration file.

    ``line`` is 1-based, ``column`` 0-based (offset of ``text`` in that line). ``replacement``
    is set only when substituting it for ``text`` is safe; ``suggestion`` carries advice
    that needs a human decision (a version, a GPU target) and is never applied.
    """

    rule_id: str
    severity: Severity
    file: str
    line: int
    column: int
    text: str
    explanation: str
    replacement: str | None = None
    notebook_slug: str | None = None
    family: Family = "shell"
    suggestion: str | None = None

    @property
    def fixable(self) -> bool:
        return self.replacement is not None

    def to_dict(self) -> dict[str, object]:
        payload = dataclasses.asdict(self)
        payload["fixable"] = self.fixable
        return payload

    @classmethod
    def from_dict(cls, payload: Mapping[str, object]) -> Finding:
        """Inverse of to_dict (also accepts the scan stage's compact rows, which lack explanations)."""
        names = {f.name for f in dataclasses.fields(cls)}
        values = {key: value for key, value in payload.items() if key in names}
        values.setdefault("explanation", "")
        return cls(**values)  # type: ignore[arg-type]


@dataclass(frozen=True)
class AppliedFix:
    rule_id: str
    file: str
    line: int
    before: str  # the whole line before the fix
    after: str  # the whole line after the fix

    def to_dict(self) -> FixData:
        return FixData(rule_id=self.rule_id, file=self.file, line=self.line, before=self.before, after=self.after)


@dataclass(frozen=True)
class RuleHit:
    """A rule match inside one line, before it is tied to a file."""

    name: str  # rule name without family, e.g. "nvcc"
    severity: Severity
    column: int
    text: str
    explanation: str
    replacement: str | None = None
    notebook_slug: str | None = None
    suggestion: str | None = None
    family: Family | None = None  # set when the rule belongs to a fixed family


def to_finding(hit: RuleHit, file: str, line: int, family: Family, column_offset: int = 0) -> Finding:
    """Tie a hit to its file; rules with a fixed family keep it, shared ones take the file's."""
    own_family: Family = hit.family or family
    return Finding(
        rule_id=f"{own_family}.{hit.name}",
        severity=hit.severity,
        file=file,
        line=line,
        column=hit.column + column_offset,
        text=hit.text,
        explanation=hit.explanation,
        replacement=hit.replacement,
        notebook_slug=hit.notebook_slug,
        family=own_family,
        suggestion=hit.suggestion,
    )


def make_hit(match: re.Match[str], name: str, severity: Severity, explanation: str, *,
             replacement: str | None = None, notebook_slug: str | None = None, suggestion: str | None = None,
             family: Family | None = None) -> RuleHit:
    return RuleHit(name=name, severity=severity, column=match.start(), text=match.group(0), explanation=explanation,
                   replacement=replacement, notebook_slug=notebook_slug, suggestion=suggestion, family=family)


@dataclass(frozen=True)
class RocmRelease:
    """The chosen toolchain's ROCm release, as its root says (``Toolchain.hip_version``,
    ``Toolchain.container_image``): what suggestions of images and CI versions name. Empty when no root is
    installed, and then they name none."""

    version: str = ""  # "7.2"
    image: str = ""  # "rocm/dev-ubuntu-24.04:7.2"

    def image_or_generic(self) -> str:
        return self.image or "a rocm/dev-ubuntu image of your ROCm release"


@dataclass(frozen=True)
class ScanContext:
    """What a rule may need beyond its own file: the project's GPU targets and, for CMake, the
    CUDA libraries that files at or below each directory use (so one ``find_package`` serves them)."""

    offload_archs: tuple[str, ...] = DEFAULT_OFFLOAD_ARCHS
    cmake_libraries: Mapping[str, frozenset[str]] = dataclasses.field(default_factory=dict)
    # Folders with C/C++ host sources that include CUDA or HIP headers (None: not known, assume some).
    cuda_host_dirs: frozenset[str] | None = None
    # Tree-relative .cu paths the translation renamed to .hip (rename_cu_to_hip).
    renamed_cu: frozenset[str] = frozenset()
    rocm: RocmRelease = RocmRelease()
    # Tree-relative sources calling roctx (NVTX translated over roctx): their targets link roctx64.
    roctx_sources: frozenset[str] = frozenset()

    def builds_cuda_host_code(self, build_file: str) -> bool:
        """Whether a host compiler set in this build file may compile sources that include CUDA headers:
        sources in its folder or below, or anywhere for shared fragments (make.config, *.mk)."""
        if self.cuda_host_dirs is None:
            return True
        folder = build_file.rpartition("/")[0]
        if not build_file.rpartition("/")[2].lower().startswith(("makefile", "gnumakefile")):
            return bool(self.cuda_host_dirs)
        return any(d == folder or not folder or d.startswith(folder + "/") for d in self.cuda_host_dirs)

    def cmake_libraries_below(self, directory: str) -> frozenset[str]:
        prefix = "" if directory in ("", ".") else directory.rstrip("/") + "/"
        found: set[str] = set()
        for folder, names in self.cmake_libraries.items():
            if not prefix or folder == directory or (folder + "/").startswith(prefix):
                found |= names
        return frozenset(found)

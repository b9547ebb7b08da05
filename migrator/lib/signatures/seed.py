"""The notebook's seed entries (migrator/notebook_seed/*.yaml), loaded and validated."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import yaml

from migrator.lib.signatures.validate import SignatureError, validate_signature

SEED_DIR = Path(__file__).resolve().parents[2] / "notebook_seed"
SEED_PATH = SEED_DIR / "entries.yaml"
# Entries for failures real code produced with the ROCm 6.4 toolchain (issue 15).
REAL_FAILURES_PATH = SEED_DIR / "real_failures.yaml"
# Entries for Python/PyTorch projects, linked from the scan's Python-code findings (issue 16).
PYTORCH_PATH = SEED_DIR / "pytorch.yaml"
SEED_PATHS: tuple[Path, ...] = (SEED_PATH, REAL_FAILURES_PATH, PYTORCH_PATH)
PYTHON_PROJECT_SLUGS: tuple[str, ...] = ("torch-version-cuda", "gpu-arch-check", "nvidia-tools-in-code",
                                         "triton-inline-ptx")

# The only slugs findings and diagnostics may reference.
NOTEBOOK_SLUGS: tuple[str, ...] = (
    "cuda-header-not-found",
    "cmake-findcuda",
    "cuda-link-libraries",
    "hip-runtime-not-linked",
    "ld-library-path-cuda",
    "cuda-python-wheels",
    "hipcc-nvidia-platform",
    "no-amd-gpu-visible",
    "no-binary-for-gpu",
    "invalid-launch-configuration",
    "warp-size-32",
    "hipify-unconverted",
    "fp16-nan-use-bf16",
    "illegal-memory-access",
    "rccl-hang",
    "sglang-backend",
    "sglang-memory",
    "cuda-visible-devices",
    "nvidia-container",
    "port-validation",
) + (
    "rocm-library-not-in-toolchain",
    "rocm6-moved-library-header",
    "rocm-library-not-linked",
    "cuda-gl-interop",
    "cuda-egl-interop",
    "nvtx-to-roctx",
    "nvsci-nvmedia",
    "cooperative-groups-reduce",
    "pytorch-extension-headers",
    "texture-image-unsupported",
    "cooperative-groups-header-order",
    "project-copies-cuda-types",
    "windows-only-headers",
    "nvcc-flag-fatbin",
    "nvcc-flag-threads",
    "cuda-gpu-arch-for-hip",
    "nvcc-only-flags",
    "cmake-cannot-determine-link-language",
    "no-translation-units",
    "warp-sync-mask-64bit",
    "hip-api-missing-in-target",
    "cuda-driver-api-left",
    "cuda-library-names-left",
    "thrust-cuda-backend",
    "cub-to-hipcub",
    "wmma-to-rocwmma",
    "libcudacxx-headers",
    "cutlass-no-hip",
    "inline-ptx-asm",
    "nv-bfloat16-types",
    "dynamic-parallelism",
    "requires-nvcc-guard",
    "device-intrinsics-missing",
    "makefile-calls-nvcc",
    "multiple-definition-in-header",
    "extern-device-symbol-needs-rdc",
    "shared-memory-over-limit",
    "grid-constant-attribute",
    "hip-code-in-cxx-file",
    "kernel-template-in-launch-macro",
    "rocm-cmake-package-missing",
    "hip-compiler-check-failed",
)
REAL_FAILURE_SLUGS: tuple[str, ...] = NOTEBOOK_SLUGS[20:]
NOTEBOOK_SLUGS += PYTHON_PROJECT_SLUGS
PIPELINE_STAGES: tuple[str, ...] = (
    "fetch",
    "scan",
    "hipify",
    "compile",
    "link",
    "smoke",
)
_TEXT_FIELDS = ("slug", "title", "symptom", "cause", "fix")


class SeedError(ValueError):
    """The seed file is malformed; the message names the entry and the field."""


@dataclass(frozen=True)
class SeedSignature:
    kind: str
    pattern: str


@dataclass(frozen=True)
class SeedEntry:
    slug: str
    title: str
    symptom: str
    signatures: tuple[SeedSignature, ...]
    stages: tuple[str, ...]
    cause: str  # Markdown
    fix: str  # Markdown
    tags: tuple[str, ...]
    links: tuple[str, ...]


def load_seed_entries(path: Path | str | None = None) -> list[SeedEntry]:
    """Parse the seed files (or the one ``path``) and validate every entry and signature; raise SeedError if bad."""
    raw: list[object] = []
    for source in (path,) if path else SEED_PATHS:
        with open(source, encoding="utf-8") as handle:
            loaded = yaml.safe_load(handle)
        if not isinstance(loaded, list):
            raise SeedError("The seed file must hold a YAML list of entries.")
        raw += loaded
    entries = [
        _parse_entry(item, position) for position, item in enumerate(raw, start=1)
    ]
    slugs = [entry.slug for entry in entries]
    duplicates = sorted({slug for slug in slugs if slugs.count(slug) > 1})
    if duplicates:
        raise SeedError(f"Duplicate slugs: {', '.join(duplicates)}.")
    return entries


def _parse_entry(item: object, position: int) -> SeedEntry:
    if not isinstance(item, dict):
        raise SeedError(f"Entry {position} is not a mapping.")
    label = f"Entry {position} ({item.get('slug', '?')})"
    for name in _TEXT_FIELDS:
        if not isinstance(item.get(name), str) or not item[name].strip():
            raise SeedError(f"{label}: '{name}' must be a non-empty string.")
    if item["slug"] not in NOTEBOOK_SLUGS:
        raise SeedError(f"{label}: unknown slug; use one of the agreed notebook slugs.")
    stages = _string_list(item, "stages", label)
    unknown = [s for s in stages if s not in PIPELINE_STAGES]
    if unknown or not stages:
        raise SeedError(
            f"{label}: stages must be a non-empty subset of {PIPELINE_STAGES}."
        )
    links = _string_list(item, "links", label)
    if any(not link.startswith("https://") for link in links):
        raise SeedError(f"{label}: links must be https URLs.")
    return SeedEntry(
        slug=item["slug"],
        title=item["title"].strip(),
        symptom=item["symptom"].strip(),
        signatures=_parse_signatures(item.get("signatures"), label),
        stages=tuple(stages),
        cause=item["cause"].strip(),
        fix=item["fix"].strip(),
        tags=tuple(_string_list(item, "tags", label)),
        links=tuple(links),
    )


def _string_list(item: dict[str, object], name: str, label: str) -> list[str]:
    value = item.get(name, [])
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise SeedError(f"{label}: '{name}' must be a list of strings.")
    return value


def _parse_signatures(value: object, label: str) -> tuple[SeedSignature, ...]:
    if not isinstance(value, list) or not value:
        raise SeedError(f"{label}: 'signatures' must be a non-empty list.")
    signatures: list[SeedSignature] = []
    for number, spec in enumerate(value, start=1):
        if not isinstance(spec, dict):
            raise SeedError(f"{label}, signature {number}: expected {{kind, pattern}}.")
        kind, pattern = spec.get("kind"), spec.get("pattern")
        if not isinstance(kind, str) or not isinstance(pattern, str):
            raise SeedError(
                f"{label}, signature {number}: 'kind' and 'pattern' must be strings."
            )
        try:
            validate_signature(kind, pattern)
        except SignatureError as exc:
            raise SeedError(
                f"{label}, signature {number} ({pattern!r}): {exc}"
            ) from exc
        signatures.append(SeedSignature(kind, pattern))
    return tuple(signatures)

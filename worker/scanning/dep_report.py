"""The dependency report the scan records: each install set with its ROCm side, the project's own
ROCm files, and one resolve request per set (resolved later, off the pipeline, on its own queue).

The scan never runs pip: it reads and maps, and each set's request carries the key its resolution
is cached under (the exact ROCm-side content, the index settings, the counterpart data). The
generated ``requirements-rocm.txt`` (the ROCm side of the project's main set) needs no resolve, so
the hipify stage writes it into the translated tree; a project that ships its own
``requirements-rocm.txt`` keeps it, and the report says so.
"""
from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from worker.scanning.dep_resolve import ResolveOptions
from worker.scanning.dep_rocm import RocmSide, requirements_lines, rocm_side
from worker.scanning.dep_sets import InstallSet, read_install_sets
from worker.scanning.rocm_counterparts import DEFAULT_ROCM_VERSION, data_version, rocm_key
from worker.scanning.rocm_files import RocmFile, find_rocm_files, image_versions

REQUIREMENTS_FILE = "requirements-rocm.txt"
_MAIN_FILES = ("pyproject.toml", "setup.py", "setup.cfg", "requirements.txt")


@dataclass
class SetReport:
    install_set: InstallSet
    rocm: RocmSide
    resolve_key: str = ""

    def to_dict(self) -> dict[str, object]:
        return {**self.install_set.to_dict(), "rocm": self.rocm.to_dict(), "resolve_key": self.resolve_key,
                "requirements_rocm": requirements_lines(self.rocm)}


@dataclass
class DependencyReport:
    rocm_version: str
    sets: list[SetReport] = field(default_factory=list)
    unreadable: list[str] = field(default_factory=list)
    rocm_files: list[RocmFile] = field(default_factory=list)
    main_set: str = ""
    resolve: str = "queued"  # queued | off
    kept_files: list[str] = field(default_factory=list)  # ROCm files of the project's Migrator does not overwrite

    def cuda_package_names(self) -> list[str]:
        return sorted({e.name for s in self.sets for e in s.rocm.entries if e.action not in ("keep", "conda", "url")})

    def to_dict(self) -> dict[str, object]:
        return {"rocm_version": self.rocm_version, "main_set": self.main_set, "resolve": self.resolve,
                "sets": [s.to_dict() for s in self.sets], "unreadable": self.unreadable,
                "rocm_files": [f.to_dict() for f in self.rocm_files], "kept_files": self.kept_files,
                "cuda_packages": self.cuda_package_names()}

    def summary(self) -> str:
        declared = len({d.name for s in self.sets for d in [*s.install_set.declarations, *s.install_set.conda]})
        resolving = "resolution turned off" if self.resolve == "off" else \
            f"{len({s.resolve_key for s in self.sets if s.resolve_key})} resolves queued"
        cuda = len(self.cuda_package_names())
        return f"{len(self.sets)} install sets, {declared} packages declared, {cuda} CUDA-only or CUDA-built; {resolving}"

    def requests(self) -> dict[str, dict[str, object]]:
        return {s.resolve_key: s.rocm.request.to_dict() for s in self.sets if s.resolve_key and s.rocm.request}


def _main_set(sets: list[SetReport]) -> str:
    """The set ``requirements-rocm.txt`` is written for: the root package or requirements file, else the
    shallowest package (the one declaring most, on a tie)."""
    for name in _MAIN_FILES:
        for report in sets:
            if report.install_set.file == name and report.install_set.kind in ("package", "requirements"):
                return report.install_set.id
    packages = [r.install_set for r in sets if r.install_set.kind in ("package", "requirements")]
    if not packages:
        return ""
    return min(packages, key=lambda s: (s.file.count("/"), -len(s.declarations), s.id)).id


def _set_report(install_set: InstallSet, rocm_version: str, options: ResolveOptions | None) -> SetReport:
    version, image_torch, notes = rocm_version, "", []
    if install_set.image and install_set.rocm:
        image_rocm, image_torch, provides = image_versions(install_set.image)
        version = image_rocm or rocm_version
        if provides and not image_torch:
            notes.append(f"the image {install_set.image} provides its own ROCm PyTorch, whose version its tag does "
                         "not say: resolved against the index's ROCm torch; pin a tag to check against the image's")
    side = rocm_side(install_set, version, image_torch)
    side.notes = notes + side.notes
    key = side.request.key(options, data_version()) if side.request and options is not None else ""
    return SetReport(install_set, side, key)


def build_report(tree: Path, exclude_globs: Iterable[str], options: ResolveOptions | None,
                 rocm_version: str = DEFAULT_ROCM_VERSION) -> DependencyReport:
    """Read the install sets and map each to ROCm; ``options`` None: resolution is turned off (no keys)."""
    globs = tuple(exclude_globs)
    sets, unreadable = read_install_sets(tree, globs)
    report = DependencyReport(rocm_key(rocm_version), unreadable=unreadable, rocm_files=find_rocm_files(tree, globs),
                              resolve="queued" if options is not None else "off")
    report.sets = [_set_report(s, rocm_version, options) for s in sets]
    report.main_set = _main_set(report.sets)
    report.kept_files = [f.file for f in report.rocm_files if f.file == REQUIREMENTS_FILE]
    return report


def requirements_text(report: DependencyReport) -> str:
    """``requirements-rocm.txt``: the ROCm side of the main set ("" when there is none or the project has one)."""
    main = next((s for s in report.sets if s.install_set.id == report.main_set), None)
    if main is None or report.kept_files:
        return ""
    header = [f"# Requirements of {main.install_set.id} for ROCm {main.rocm.rocm_version}, generated by Migrator.",
              "# CUDA builds are replaced by ROCm builds; packages without one are listed at the end."]
    return "\n".join(header + requirements_lines(main.rocm)) + "\n"

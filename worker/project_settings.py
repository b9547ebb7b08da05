"""Typed view of a project's settings (stored as JSON on the Project row).

Stages read these; the web form writes them. Unknown keys are rejected so a typo
in an API payload is an error, not a silently ignored option.
"""
from __future__ import annotations

import dataclasses
import functools
import re
import typing
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from translator.globs import DEFAULT_EXCLUDES, GlobError, check_glob
from worker.runner.preset_train import PresetError
from worker.runner.presets import preset_from_dict
from worker.scanning.model import DEFAULT_OFFLOAD_ARCHS

BuildMode = Literal["auto", "per_tu", "project"]
HipifyEngine = Literal["builtin", "hipify-perl", "hipify-clang"]
LaunchStyle = Literal["chevron", "ggl"]

_GFX = re.compile(r"^gfx[0-9a-f]{3,5}(:[a-z+\-:]+)?$")
_HIP_VERSION = re.compile(r"^\d+\.\d+(\.\d+)?$")
_TOOLCHAIN_NAME = re.compile(r"^[a-z0-9][a-z0-9.\-]{0,63}$")
_LIMITS = {  # name: (smallest, largest)
    "compile_timeout_s": (1, 24 * 3600), "build_timeout_s": (1, 24 * 3600), "build_memory_mb": (256, 1 << 20),
    "smoke_timeout_s": (1, 24 * 3600), "smoke_wait_timeout_s": (1, 7 * 24 * 3600),
    "smoke_output_limit_bytes": (1024, 1 << 30), "smoke_expected_exit": (0, 255), "workspace_mb": (64, 1 << 22),
}
# Limits an operator caps for every project (``MIGRATOR_MAX_<NAME>`` in the server's settings): a save
# above the cap is refused; a stored value above a cap lowered later runs at the cap.
CAPPED = ("build_memory_mb", "build_timeout_s", "compile_timeout_s", "smoke_timeout_s", "smoke_output_limit_bytes",
          "workspace_mb")
Caps = Mapping[str, int]


class SettingsError(ValueError):
    """A project setting has a bad value; the message names the key."""


@dataclass(frozen=True)
class SmokeCheck:
    """One check on the smoke run's output.

    kind: ``text`` (substring must appear), ``regex`` (must match somewhere),
    ``numeric`` (numbers on lines matching ``pattern`` must equal those of the
    reference/expected within ``rel_tol``/``abs_tol``).
    """

    kind: Literal["text", "regex", "numeric"]
    pattern: str
    expected: str = ""
    rel_tol: float = 1e-5
    abs_tol: float = 1e-8


@dataclass(frozen=True)
class ProjectSettings:
    # fetch: one directory of the repository or archive (relative, inside it); empty = the whole tree
    source_subdir: str = ""
    # hipify
    hipify_engine: HipifyEngine = "builtin"
    launch_style: LaunchStyle = "chevron"
    roc_libraries: bool = False
    rename_cu_to_hip: bool = False
    exclude_globs: tuple[str, ...] = DEFAULT_EXCLUDES  # .gitignore rules, see translator/globs.py
    target_hip_version: str = ""  # empty: the chosen toolchain's HIP version
    disabled_fix_rules: tuple[str, ...] = ()
    # compile / link
    toolchain: str = ""  # a toolchain root by name; empty: the newest installed
    build_mode: BuildMode = "auto"  # the project's own build where understood, else file by file
    build_command: str = ""  # project build: empty means detect CMake/Make
    offload_archs: tuple[str, ...] = DEFAULT_OFFLOAD_ARCHS  # wave64 data-centre (MI200, MI300) and wave32 RDNA3
    cxx_std: str = ""  # empty: detect from the CUDA build files, else c++17 (nvcc 12 default)
    include_dirs: tuple[str, ...] = ()
    defines: tuple[str, ...] = ()
    extra_flags: tuple[str, ...] = ()
    link_libraries: tuple[str, ...] = ()
    link_target: Literal["auto", "executable", "shared", "none"] = "auto"
    compile_timeout_s: int = 300
    build_timeout_s: int = 1800
    build_memory_mb: int = 8192  # the whole build's memory (every process of it together, where a cgroup can be had)
    workspace_mb: int = 10240  # the run's writable work area (a size-limited volume where loop mounts can be had)
    # smoke
    smoke_command: str = ""
    smoke_timeout_s: int = 300
    smoke_expected_exit: int = 0
    smoke_checks: tuple[SmokeCheck, ...] = ()
    smoke_compare_reference: bool = True
    smoke_wait_timeout_s: int = 1800
    smoke_output_limit_bytes: int = 1_000_000
    smoke_preset: dict[str, Any] = dataclasses.field(default_factory=dict)  # a validation preset, else the command

    @classmethod
    def from_dict(cls, raw: dict[str, Any] | None, caps: Caps | None = None) -> ProjectSettings:
        """Checked settings; with ``caps`` (the operator's maximums) a value given above its cap is refused."""
        raw = dict(raw or {})
        known = {f.name: f for f in dataclasses.fields(cls)}
        unknown = sorted(set(raw) - set(known))
        if unknown:
            raise SettingsError(f"unknown setting(s): {', '.join(unknown)}")
        values: dict[str, Any] = {}
        for name, value in raw.items():
            values[name] = _coerce(name, value, getattr(cls(), name))
        settings = cls(**values)
        settings.validate()
        check_caps(settings, caps or {}, names=raw)
        return settings

    @classmethod
    def stored_or_default(cls, raw: dict[str, Any] | None) -> ProjectSettings:
        """Settings read back for running a stage: invalid stored values (saved before a rule
        existed) fall back to the defaults instead of stopping the pipeline's bookkeeping."""
        try:
            return cls.from_dict(raw)
        except SettingsError:
            return cls()

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    def within(self, caps: Caps) -> ProjectSettings:
        """These settings with every capped limit at most its cap (for running a stage)."""
        lowered: dict[str, Any] = {name: caps[name] for name in CAPPED if name in caps and getattr(self, name) > caps[name]}
        return dataclasses.replace(self, **lowered) if lowered else self

    def validate(self) -> None:
        if self.target_hip_version and not _HIP_VERSION.match(self.target_hip_version):
            raise SettingsError(f"target_hip_version: {self.target_hip_version!r} is not a HIP version such as 6.4")
        if self.toolchain and not _TOOLCHAIN_NAME.match(self.toolchain):
            raise SettingsError(f"toolchain: {self.toolchain!r} is not a toolchain name such as rocm-6.4")
        for name, (low, high) in _LIMITS.items():
            if not low <= getattr(self, name) <= high:
                raise SettingsError(f"{name}: must be between {low} and {high}")
        for arch in self.offload_archs:
            if not _GFX.match(arch):
                raise SettingsError(f"offload_archs: {arch!r} is not an AMD GPU target such as gfx90a")
        if not self.offload_archs:
            raise SettingsError("offload_archs: name at least one AMD GPU target")
        if self.cxx_std and not re.match(r"^(c|gnu)\+\+(11|14|17|20|23)$", self.cxx_std):
            raise SettingsError(f"cxx_std: {self.cxx_std!r} is not a C++ dialect such as c++17")
        check_source_subdir(self.source_subdir)
        for glob in self.exclude_globs:
            try:
                check_glob(glob)
            except GlobError as exc:
                raise SettingsError(f"exclude_globs: {exc}") from exc
        for flag in (*self.extra_flags, *self.defines, *self.include_dirs, *self.link_libraries):
            if "\0" in flag or "\n" in flag:
                raise SettingsError(f"flags and paths may not hold NUL or newline characters: {flag!r}")


def cap_variable(name: str) -> str:
    """The server setting (environment variable) that caps ``name``."""
    return f"MIGRATOR_MAX_{name.upper()}"


def check_caps(settings: ProjectSettings, caps: Caps, names: Collection[str] = CAPPED) -> None:
    """Refuse a limit among ``names`` above the operator's cap, naming the setting and the cap."""
    for name in CAPPED:
        if name in names and name in caps and getattr(settings, name) > caps[name]:
            raise SettingsError(f"{name}: {getattr(settings, name)} is above this server's maximum of {caps[name]} "
                                f"(set by the operator as {cap_variable(name)})")


@functools.cache
def _choices() -> dict[str, tuple[str, ...]]:
    """The allowed values of every setting typed as a ``Literal``."""
    hints = typing.get_type_hints(ProjectSettings)
    return {name: typing.get_args(hint) for name, hint in hints.items() if typing.get_origin(hint) is Literal}


def check_source_subdir(value: str) -> str:
    """A relative path inside the repository: no absolute path, no ``..``, no backslashes or control characters."""
    if not value:
        return value
    if value.startswith(("/", "~")) or "\\" in value or any(ord(c) < 32 for c in value) or len(value) > 300:
        raise SettingsError(f"source_subdir: {value!r} must be a relative path inside the repository")
    parts = [p for p in value.strip("/").split("/") if p not in ("", ".")]
    if not parts or ".." in parts or parts[0].startswith("-"):
        raise SettingsError(f"source_subdir: {value!r} must name a directory inside the repository (no '..')")
    return value


def _coerce(name: str, value: Any, default: Any) -> Any:
    if name in _choices():
        allowed = _choices()[name]
        if value not in allowed:
            raise SettingsError(f"{name}: {value!r} is not one of {', '.join(allowed)}")
        return value
    if name == "smoke_preset":
        if value in (None, {}):
            return {}
        try:
            preset_from_dict(value)
        except PresetError as exc:
            raise SettingsError(f"smoke_preset: {exc}") from exc
        return dict(value)
    if name == "smoke_checks":
        if not isinstance(value, (list, tuple)):
            raise SettingsError("smoke_checks: must be a list")
        checks = []
        for item in value:
            if isinstance(item, SmokeCheck):
                checks.append(item)
                continue
            if not isinstance(item, dict) or item.get("kind") not in ("text", "regex", "numeric"):
                raise SettingsError("smoke_checks: each check needs kind text, regex or numeric")
            try:
                checks.append(SmokeCheck(**item))
            except TypeError as exc:
                raise SettingsError(f"smoke_checks: {exc}") from exc
        return tuple(checks)
    if isinstance(default, bool):
        if not isinstance(value, bool):
            raise SettingsError(f"{name}: must be true or false")
        return value
    if isinstance(default, int):
        if isinstance(value, bool) or not isinstance(value, int):
            try:
                return int(value)
            except (TypeError, ValueError) as exc:
                raise SettingsError(f"{name}: must be a whole number") from exc
        return value
    if isinstance(default, tuple):
        if isinstance(value, str):
            value = [v for v in re.split(r"[\s,]+", value) if v]
        if not isinstance(value, (list, tuple)) or not all(isinstance(v, str) for v in value):
            raise SettingsError(f"{name}: must be a list of strings")
        return tuple(value)
    if not isinstance(value, str):
        raise SettingsError(f"{name}: must be text")
    return value

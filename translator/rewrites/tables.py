"""The rewrite tables (``translator/data/rewrite_rules.json``) and the port header's sections."""
from __future__ import annotations

import functools
import json
from pathlib import Path

DATA = Path(__file__).resolve().parent.parent / "data"
RULES_FILE = DATA / "rewrite_rules.json"
SECTIONS_DIR = DATA / "hip_port"


class CacheHint:
    """Plain classes here: a dataclass costs a fresh process milliseconds to build at import."""

    __slots__ = ("rule", "form", "why")

    def __init__(self, rule: str, form: str, why: str) -> None:
        self.rule = rule
        self.form = form
        self.why = why


class RewriteTables:
    __slots__ = ("cache_hints", "legacy_launch", "nvtx_headers", "nvtx_to_roctx", "libcxx_std_headers",
                 "libcxx_without_counterpart", "nearest_hip", "hidden_until", "port_sections", "collapsing_types")

    def __init__(self, cache_hints: dict[str, CacheHint], legacy_launch: dict[str, str], nvtx_headers: frozenset[str],
                 nvtx_to_roctx: dict[str, str], libcxx_std_headers: dict[str, str],
                 libcxx_without_counterpart: dict[str, str], nearest_hip: dict[str, tuple[str, str]],
                 hidden_until: dict[str, str], port_sections: tuple[str, ...],
                 collapsing_types: tuple[tuple[str, ...], ...]) -> None:
        self.cache_hints = cache_hints
        self.legacy_launch = legacy_launch
        self.nvtx_headers = nvtx_headers
        self.nvtx_to_roctx = nvtx_to_roctx
        self.libcxx_std_headers = libcxx_std_headers
        self.libcxx_without_counterpart = libcxx_without_counterpart
        self.nearest_hip = nearest_hip  # CUDA 12 name -> (HIP name, why)
        self.hidden_until = hidden_until  # device builtins HIP declares by default only from this version
        self.port_sections = port_sections  # in the order the header lists them
        self.collapsing_types = collapsing_types  # CUDA types one HIP type stands for


@functools.cache
def load() -> RewriteTables:
    data = json.loads(RULES_FILE.read_text())
    return RewriteTables(
        cache_hints={name: CacheHint(**entry) for name, entry in data["cache_hints"].items()},
        legacy_launch=dict(data["legacy_launch"]),
        nvtx_headers=frozenset(data["nvtx_headers"]),
        nvtx_to_roctx=dict(data["nvtx_to_roctx"]),
        libcxx_std_headers=dict(data["libcxx_std_headers"]),
        libcxx_without_counterpart=dict(data["libcxx_without_counterpart"]),
        nearest_hip={name: (entry["hip"], entry["why"]) for name, entry in data["nearest_hip"].items()},
        hidden_until={name: version for version, names in data["hidden_until"].items() for name in names},
        port_sections=tuple(data["port_sections"]),
        collapsing_types=tuple(tuple(group) for group in data["collapsing_types"]),
    )


@functools.cache
def section_text(name: str) -> str:
    return (SECTIONS_DIR / f"{name}.h").read_text()

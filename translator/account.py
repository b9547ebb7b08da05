"""What a translation changed and what it left behind, per file and per run."""
from __future__ import annotations

from collections import Counter
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, TypedDict

if TYPE_CHECKING:
    from translator.handwork import HandWorkData
    from translator.wavefront.model import HazardData


class Finding(TypedDict):
    name: str
    line: int
    column: int
    reason: str  # unsupported, newer-than-target, removed-in-hip, not-in-hipify-tables / deprecated, removed


class RewriteNote(TypedDict):
    """One rewrite of ``translator.rewrites``, as the account and the review page's margin show it."""

    rule: str  # the rule id, e.g. "cache-hint-streaming"
    side: str  # "left": a line of the original file; "right": of the translated one (fixes after the scan)
    line: int
    message: str  # what changed and why


class AccountTotals(TypedDict):
    """A tree's totals, as the account JSON and the hipify stage's data carry them."""

    files: int
    by_status: dict[str, int]  # translated, unchanged, copied, skipped, failed -> files
    changed: int
    converted: dict[str, int]  # family -> references converted
    converted_total: int
    unconverted_total: int
    unconverted_names: dict[str, int]  # most frequent first
    deprecated_total: int
    cuda_like_total: int
    warnings_total: int
    rewrites: dict[str, int]  # rule id -> rewrites and notes of translator.rewrites
    wavefront_total: int  # code that assumes 32-lane warps (translator/wavefront)
    wavefront_fixed: int  # of which the translation fixed
    wavefront_by_kind: dict[str, int]
    hand_work_by_kind: dict[str, int]  # inline-ptx, tensor-cores: sites the translation left


class TreeAccountData(TypedDict):
    """``TreeAccount.to_dict()``: the account JSON, and the base of the hipify stage's data."""

    source: str
    destination: str
    engine: str
    totals: AccountTotals
    renames: dict[str, str]  # original -> translated path
    warnings: list[str]
    files: list[dict[str, object]]  # ``FileAccount.to_dict()`` entries
    port_header: str  # tree-relative path of the helper header the rewrites wrote ("" when none)


@dataclass
class FileAccount:
    path: str = ""
    changed: bool = False
    converted: Counter[str] = field(default_factory=Counter)  # family -> references converted
    unconverted: list[Finding] = field(default_factory=list)
    deprecated: list[Finding] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    kept_local: list[str] = field(default_factory=list)  # project-defined CUDA names left alone
    # CUDA-looking names HIPIFY does not list (mostly the project's own variables): first use of each
    cuda_like: list[Finding] = field(default_factory=list)
    renamed_to: str = ""
    status: str = "translated"  # translated, unchanged, copied, skipped, failed
    rewrites: list[RewriteNote] = field(default_factory=list)  # translator.rewrites: rule, line, why
    port_sections: list[str] = field(default_factory=list)  # hip_port/cuda_port.h sections the file needs
    wavefront: list[HazardData] = field(default_factory=list)  # wave-size hazards, at original lines
    hand_work: list[HandWorkData] = field(default_factory=list)  # inline PTX and WMMA the translation left

    @property
    def converted_total(self) -> int:
        return sum(self.converted.values())

    def to_dict(self, max_findings: int | None = None) -> dict[str, object]:
        data = asdict(self)
        data["converted"] = dict(sorted(self.converted.items()))
        data["converted_total"] = self.converted_total
        data["unconverted_total"] = len(self.unconverted)
        if max_findings is not None:
            data["unconverted"] = self.unconverted[:max_findings]
            data["deprecated"] = self.deprecated[:max_findings]
            data["cuda_like"] = self.cuda_like[:max_findings]
            data["wavefront"] = self.wavefront[:max_findings]
            data["hand_work"] = self.hand_work[:max_findings]
        return data


def _interesting(entry: FileAccount) -> bool:
    """Worth a row in the compact stage data: changed, skipped, failed, or with findings."""
    if entry.status in ("translated", "skipped", "failed"):
        return True
    return bool(entry.unconverted or entry.deprecated or entry.warnings or entry.rewrites or entry.wavefront
                or entry.hand_work)


@dataclass
class TreeAccount:
    source: str
    destination: str
    engine: str = "builtin"
    files: list[FileAccount] = field(default_factory=list)
    renames: dict[str, str] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    port_header: str = ""

    def totals(self) -> AccountTotals:
        converted: Counter[str] = Counter()
        statuses: Counter[str] = Counter()
        for item in self.files:
            converted.update(item.converted)
            statuses[item.status] += 1
        unconverted = Counter(f["name"] for item in self.files for f in item.unconverted)
        rewrites = Counter(note["rule"] for item in self.files for note in item.rewrites)
        hazards = [hazard for item in self.files for hazard in item.wavefront]
        return AccountTotals(
            files=len(self.files),
            by_status=dict(sorted(statuses.items())),
            changed=sum(1 for f in self.files if f.changed),
            converted=dict(sorted(converted.items())),
            converted_total=sum(converted.values()),
            unconverted_total=sum(unconverted.values()),
            unconverted_names=dict(unconverted.most_common()),
            deprecated_total=sum(len(f.deprecated) for f in self.files),
            cuda_like_total=sum(len(f.cuda_like) for f in self.files),
            warnings_total=sum(len(f.warnings) for f in self.files) + len(self.warnings),
            rewrites=dict(sorted(rewrites.items())),
            wavefront_total=len(hazards),
            wavefront_fixed=sum(1 for hazard in hazards if hazard["applied"]),
            wavefront_by_kind=dict(Counter(hazard["kind"] for hazard in hazards).most_common()),
            hand_work_by_kind=dict(Counter(site["kind"] for item in self.files for site in item.hand_work)),
        )

    def to_dict(self, max_findings: int | None = None, only_interesting: bool = False) -> TreeAccountData:
        files = [f for f in self.files if not only_interesting or _interesting(f)]
        return TreeAccountData(
            source=self.source,
            destination=self.destination,
            engine=self.engine,
            totals=self.totals(),
            renames=dict(self.renames),
            warnings=list(self.warnings),
            files=[f.to_dict(max_findings) for f in files],
            port_header=self.port_header,
        )

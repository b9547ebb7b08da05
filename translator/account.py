"""What a translation changed and what it left behind, per file and per run."""
from __future__ import annotations

from collections import Counter
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


_FILE_FIELDS = ("path", "changed", "converted", "unconverted", "deprecated", "warnings", "kept_local", "cuda_like",
                "renamed_to", "status", "rewrites", "port_sections", "wavefront", "hand_work")  # the JSON's order


class FileAccount:
    """One file's account. Plain classes here, not dataclasses: building a dataclass costs a fresh process
    milliseconds at import, and the command line's start-up is measured against hipify-perl's."""

    def __init__(self, path: str = "", changed: bool = False, converted: Counter[str] | None = None,
                 unconverted: list[Finding] | None = None, deprecated: list[Finding] | None = None,
                 warnings: list[str] | None = None, kept_local: list[str] | None = None,
                 cuda_like: list[Finding] | None = None, renamed_to: str = "", status: str = "translated",
                 rewrites: list[RewriteNote] | None = None, port_sections: list[str] | None = None,
                 wavefront: list[HazardData] | None = None, hand_work: list[HandWorkData] | None = None) -> None:
        self.path = path
        self.changed = changed
        self.converted: Counter[str] = Counter() if converted is None else converted  # family -> references
        self.unconverted: list[Finding] = [] if unconverted is None else unconverted
        self.deprecated: list[Finding] = [] if deprecated is None else deprecated
        self.warnings: list[str] = [] if warnings is None else warnings
        self.kept_local: list[str] = [] if kept_local is None else kept_local  # project-defined CUDA names left
        # CUDA-looking names HIPIFY does not list (mostly the project's own variables): first use of each
        self.cuda_like: list[Finding] = [] if cuda_like is None else cuda_like
        self.renamed_to = renamed_to
        self.status = status  # translated, unchanged, copied, skipped, failed
        self.rewrites: list[RewriteNote] = [] if rewrites is None else rewrites  # translator.rewrites notes
        self.port_sections: list[str] = [] if port_sections is None else port_sections  # cuda_port.h sections
        self.wavefront: list[HazardData] = [] if wavefront is None else wavefront  # hazards, at original lines
        self.hand_work: list[HandWorkData] = [] if hand_work is None else hand_work  # PTX and WMMA left

    def __eq__(self, other: object) -> bool:
        return type(other) is FileAccount and vars(self) == vars(other)

    def __repr__(self) -> str:
        return f"FileAccount({', '.join(f'{k}={v!r}' for k, v in vars(self).items())})"

    @property
    def converted_total(self) -> int:
        return sum(self.converted.values())

    def to_dict(self, max_findings: int | None = None) -> dict[str, object]:
        data: dict[str, object] = {name: _copied(getattr(self, name)) for name in _FILE_FIELDS}
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


def _copied(value: object) -> object:
    """A copy of lists, tuples and dicts all the way down, as ``dataclasses.asdict`` gives them."""
    if isinstance(value, dict):
        return type(value)((_copied(k), _copied(v)) for k, v in value.items())
    if isinstance(value, list):
        return [_copied(item) for item in value]
    if isinstance(value, tuple):
        return tuple(_copied(item) for item in value)
    return value


def _interesting(entry: FileAccount) -> bool:
    """Worth a row in the compact stage data: changed, skipped, failed, or with findings."""
    if entry.status in ("translated", "skipped", "failed"):
        return True
    return bool(entry.unconverted or entry.deprecated or entry.warnings or entry.rewrites or entry.wavefront
                or entry.hand_work)


class TreeAccount:
    def __init__(self, source: str, destination: str, engine: str = "builtin", files: list[FileAccount] | None = None,
                 renames: dict[str, str] | None = None, warnings: list[str] | None = None,
                 port_header: str = "") -> None:
        self.source = source
        self.destination = destination
        self.engine = engine
        self.files: list[FileAccount] = [] if files is None else files
        self.renames: dict[str, str] = {} if renames is None else renames
        self.warnings: list[str] = [] if warnings is None else warnings
        self.port_header = port_header

    def __eq__(self, other: object) -> bool:
        return type(other) is TreeAccount and vars(self) == vars(other)

    def __repr__(self) -> str:
        return f"TreeAccount({', '.join(f'{k}={v!r}' for k, v in vars(self).items())})"

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

"""The CUDA -> HIP mapping database (derived from AMD HIPIFY by scripts/gen_hip_mappings.py)."""
from __future__ import annotations

import functools
import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

DATA_FILE = Path(__file__).resolve().parent / "data" / "hip_mappings.json"


@dataclass(frozen=True, slots=True)
class ApiMapping:
    """One CUDA name and what HIPIFY says about it. ``hip``/``roc`` are None when unmapped."""

    cuda: str
    hip: str | None
    roc: str | None
    kind: str  # function, type, enum, define, header
    family: str  # memory, stream, event, device, kernel-launch, device-function, error, library, type, ...
    library: str  # runtime, driver, device, fp16, bf16, cublas, curand, cufft, cusparse, cusolver, cudnn, ...
    status: str  # supported, unsupported, deprecated, removed
    cuda_added: str | None = None
    cuda_deprecated: str | None = None
    cuda_changed: str | None = None
    cuda_removed: str | None = None
    hip_added: str | None = None
    hip_deprecated: str | None = None
    hip_changed: str | None = None
    hip_removed: str | None = None
    hip_experimental: str | None = None
    flags: str | None = None  # HIPIFY support flags: HIP_UNSUPPORTED ROC_UNSUPPORTED ROC_MIOPEN_ONLY ...


class MappingDB:
    """Name -> mapping. Rows stay raw JSON lists until looked up, so loading stays fast."""

    def __init__(self, rows: dict[str, list[str | None]], provenance: dict[str, object]) -> None:
        self._rows = rows
        self._built: dict[str, ApiMapping] = {}
        self.provenance = provenance

    def lookup(self, name: str) -> ApiMapping | None:
        mapping = self._built.get(name)
        if mapping is None:
            row = self._rows.get(name)
            if row is None:
                return None
            mapping = self._built[name] = ApiMapping(*row)  # type: ignore[arg-type]
        return mapping

    def __len__(self) -> int:
        return len(self._rows)

    def names(self) -> list[str]:
        return list(self._rows)

    def mappings(self) -> Iterator[ApiMapping]:
        for name in self._rows:
            mapping = self.lookup(name)
            if mapping is not None:
                yield mapping

    def headers(self) -> dict[str, ApiMapping]:
        return {m.cuda: m for m in self.mappings() if m.kind == "header"}


def load(path: Path) -> MappingDB:
    document = json.loads(path.read_text())
    columns: list[str] = document["columns"]
    if columns != list(ApiMapping.__dataclass_fields__):
        raise ValueError(f"{path}: columns {columns} do not match ApiMapping; regenerate the data file")
    return MappingDB({row[0]: row for row in document["rows"]}, document["provenance"])


@functools.cache
def load_default() -> MappingDB:
    return load(DATA_FILE)

"""The CUDA -> HIP mapping database (derived from AMD HIPIFY by scripts/gen_hip_mappings.py)."""
from __future__ import annotations

import functools
from collections.abc import Iterator
from pathlib import Path

DATA_FILE = Path(__file__).resolve().parent / "data" / "hip_mappings.json"


class ApiMapping:
    """One CUDA name and what HIPIFY says about it. ``hip``/``roc`` are None when unmapped.

    A plain class, not a dataclass: building a dataclass costs a fresh process milliseconds at import.
    The slots are the data file's columns, in order (``load`` checks them).
    """

    __slots__ = ("cuda", "hip", "roc", "kind", "family", "library", "status", "cuda_added", "cuda_deprecated",
                 "cuda_changed", "cuda_removed", "hip_added", "hip_deprecated", "hip_changed", "hip_removed",
                 "hip_experimental", "flags")

    def __init__(self, cuda: str, hip: str | None, roc: str | None, kind: str, family: str, library: str,
                 status: str, cuda_added: str | None = None, cuda_deprecated: str | None = None,
                 cuda_changed: str | None = None, cuda_removed: str | None = None, hip_added: str | None = None,
                 hip_deprecated: str | None = None, hip_changed: str | None = None, hip_removed: str | None = None,
                 hip_experimental: str | None = None, flags: str | None = None) -> None:
        self.cuda = cuda
        self.hip = hip
        self.roc = roc
        self.kind = kind  # function, type, enum, define, header
        self.family = family  # memory, stream, event, device, kernel-launch, device-function, error, library, ...
        self.library = library  # runtime, driver, device, fp16, bf16, cublas, curand, cufft, cusparse, cudnn, ...
        self.status = status  # supported, unsupported, deprecated, removed
        self.cuda_added = cuda_added
        self.cuda_deprecated = cuda_deprecated
        self.cuda_changed = cuda_changed
        self.cuda_removed = cuda_removed
        self.hip_added = hip_added
        self.hip_deprecated = hip_deprecated
        self.hip_changed = hip_changed
        self.hip_removed = hip_removed
        self.hip_experimental = hip_experimental
        self.flags = flags  # HIPIFY support flags: HIP_UNSUPPORTED ROC_UNSUPPORTED ROC_MIOPEN_ONLY ...

    def _key(self) -> tuple[str | None, ...]:
        return tuple(getattr(self, name) for name in self.__slots__)

    def __eq__(self, other: object) -> bool:
        return type(other) is ApiMapping and self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def __repr__(self) -> str:
        return f"ApiMapping({', '.join(f'{name}={getattr(self, name)!r}' for name in self.__slots__)})"


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
    import json  # here: the command line imports this module before it loads the stored patterns json compiles

    document = json.loads(path.read_text())
    columns: list[str] = document["columns"]
    if columns != list(ApiMapping.__slots__):
        raise ValueError(f"{path}: columns {columns} do not match ApiMapping; regenerate the data file")
    return MappingDB({row[0]: row for row in document["rows"]}, document["provenance"])


@functools.cache
def load_default() -> MappingDB:
    return load(DATA_FILE)

"""Readiness summary: how much of the CUDA use the translation engine can carry over.

Uses ``translator.mapping`` (imported lazily: the engine is a separate package). Without it
the summary says so and counts only constructs known to need hand work.
"""
from __future__ import annotations

from collections import Counter
from dataclasses import asdict, dataclass, field

from worker.scanning.inventory import Inventory
from worker.scanning.libraries import ROCM_COUNTERPART, library_of_identifier

# Mapped by HIPIFY only to the dead hipDNN: real ports go to MIOpen by hand.
_HAND_PORT_LIBRARIES = {"cudnn"}
_CONSTRUCT_NOTES = {
    "inline-ptx": "inline PTX (asm) has no HIP path; rewrite with HIP intrinsics or GCN/CDNA asm",
    "warp-size-32": "warp-synchronous code assumes 32 lanes; AMD wavefronts have 64 (use warpSize, 64-bit masks)",
    "tensor-cores": "WMMA/mma needs rocWMMA or MFMA intrinsics",
    "texture-objects": "texture/surface reads need checking against HIP's texture support",
}


@dataclass
class Readiness:
    engine_available: bool
    references_total: int = 0
    translatable: int = 0
    deprecated: int = 0  # translated, but the HIP side is deprecated
    hand_work: int = 0
    translatable_share: float = 0.0
    hand_work_apis: dict[str, int] = field(default_factory=dict)  # top names needing hand work
    by_family: dict[str, int] = field(default_factory=dict)
    by_library: dict[str, int] = field(default_factory=dict)
    constructs: dict[str, str] = field(default_factory=dict)  # construct -> "<count>: note"
    rocm_libraries_needed: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, object]:
        return asdict(self)


def _classify(inventory: Inventory, readiness: Readiness) -> None:
    try:
        from translator.mapping import load_default
        database = load_default()
    except (ImportError, SyntaxError, OSError, ValueError):  # engine absent, broken, or its data missing
        readiness.engine_available = False
        readiness.references_total = sum(inventory.api_identifiers().values())
        readiness.hand_work = readiness.references_total
        return
    hand: Counter[str] = Counter()
    families: Counter[str] = Counter()
    libraries: Counter[str] = Counter()
    for name, count in inventory.identifiers.items():
        mapping = database.lookup(name)
        if mapping is None and name in inventory.defined:
            continue  # the project's own helper (cudaCheck), not a CUDA API
        if mapping is None and library_of_identifier(name) == "NCCL":
            families["collective"] += count  # RCCL keeps NCCL's API names; only the header changes
            libraries["nccl"] += count
            readiness.translatable += count
            continue
        families[mapping.family if mapping else "unknown"] += count
        libraries[mapping.library if mapping else library_of_identifier(name)] += count
        if mapping is None or mapping.status == "removed" or not (mapping.hip or mapping.roc) \
                or mapping.library in _HAND_PORT_LIBRARIES:
            hand[name] += count
        elif mapping.status == "deprecated":
            readiness.deprecated += count
        else:
            readiness.translatable += count
    readiness.hand_work = sum(hand.values())
    readiness.references_total = readiness.translatable + readiness.deprecated + readiness.hand_work
    readiness.hand_work_apis = dict(hand.most_common(30))
    readiness.by_family = dict(families.most_common())
    readiness.by_library = dict(libraries.most_common())


def summarize(inventory: Inventory) -> Readiness:
    readiness = Readiness(engine_available=True)
    _classify(inventory, readiness)
    if readiness.references_total:
        share = (readiness.translatable + readiness.deprecated) / readiness.references_total
        readiness.translatable_share = round(share, 4)
    readiness.constructs = {name: f"{count}: {_CONSTRUCT_NOTES.get(name, 'needs hand work')}"
                            for name, count in inventory.constructs.items()}
    used = set(inventory.api_by_library())
    readiness.rocm_libraries_needed = sorted({ROCM_COUNTERPART[lib] for lib in used if lib in ROCM_COUNTERPART})
    return readiness

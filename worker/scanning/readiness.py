"""Readiness summary: how much of the CUDA use the pipeline carries over by itself, and what is left.

Both figures come from one list of items: every CUDA API reference of the inventory, every inline-PTX
and tensor-core (WMMA) site, and every wavefront hazard (code that assumes 32-lane warps). An item is
hand work when the translation leaves it: an API name the translation account lists as unconverted (no
HIP counterpart for the target), or not in HIPIFY's tables, or of a library ported by hand (cuDNN);
an inline-PTX or WMMA site still in the translated text (the account's ``hand_work``); a hazard whose
fix is only a suggestion (the account's ``wavefront`` entries not ``applied``). The share translatable
is the rest over all items, and the constructs with no automatic path are the hand-work constructs of
the same list, so the two always agree. The account comes from translating the tree in memory
(``translator.tree.account_tree``), so every rewrite the engine learns shrinks the list by itself.

Uses ``translator.mapping`` (imported lazily). Without the engine the summary says so and counts
every reference as hand work.
"""
from __future__ import annotations

from collections import Counter
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING

from worker.scanning.inventory import Inventory
from worker.scanning.libraries import ROCM_COUNTERPART, library_of_identifier

if TYPE_CHECKING:
    from translator.account import TreeAccount

# Mapped by HIPIFY only to the dead hipDNN: real ports go to MIOpen by hand.
_HAND_PORT_LIBRARIES = {"cudnn"}
CONSTRUCT_KINDS = ("inline-ptx", "tensor-cores", "wavefront")
_CONSTRUCT_NOTES = {
    "inline-ptx": "inline PTX (asm) the translation leaves: rewrite with HIP builtins or AMDGCN assembly",
    "tensor-cores": "WMMA/mma needs rocWMMA or MFMA builtins",
    "wavefront": "code that assumes 32-lane warps, with no automatic fix (see the wavefront hazards)",
}
SITES_LISTED = 200


@dataclass
class Readiness:
    engine_available: bool
    references_total: int = 0  # CUDA API references
    translatable: int = 0  # items the pipeline ports by itself
    deprecated: int = 0  # translated, but the HIP side is deprecated
    hand_work: int = 0  # items left for a person
    translatable_share: float = 0.0  # (translatable + deprecated) / items_total
    items_total: int = 0  # references + inline-PTX and WMMA sites + wavefront hazards
    hand_work_by_kind: dict[str, int] = field(default_factory=dict)  # api, inline-ptx, tensor-cores, wavefront
    automatic_by_kind: dict[str, int] = field(default_factory=dict)  # the same kinds, ported by the pipeline
    hand_work_apis: dict[str, int] = field(default_factory=dict)  # top names needing hand work
    hand_work_sites: list[dict[str, object]] = field(default_factory=list)  # constructs: kind, file, line, detail
    by_family: dict[str, int] = field(default_factory=dict)
    by_library: dict[str, int] = field(default_factory=dict)
    constructs: dict[str, str] = field(default_factory=dict)  # hand-work construct -> "<count>: note"
    constructs_left: int = 0  # hand-work construct sites (the sum of those counts)
    rocm_libraries_needed: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, object]:
        return asdict(self)


def _left_names(account: TreeAccount | None) -> tuple[set[str], set[str]]:
    """Names the translation left unconverted, and the CUDA-looking names it does not know."""
    if account is None:
        return set(), set()
    unconverted = {f["name"] for entry in account.files for f in entry.unconverted}
    unknown = {f["name"] for entry in account.files for f in entry.cuda_like}
    return unconverted, unknown


def _unlisted(inventory: Inventory, account: TreeAccount | None) -> Counter[str]:
    """References the translation left unconverted to names the inventory does not count."""
    found: Counter[str] = Counter()
    for entry in account.files if account is not None else []:
        found.update(f["name"] for f in entry.unconverted if f["name"] not in inventory.identifiers)
    return found


def _classify(inventory: Inventory, readiness: Readiness, account: TreeAccount | None) -> None:
    try:
        from translator.mapping import load_default
        database = load_default()
    except (ImportError, SyntaxError, OSError, ValueError):  # engine absent, broken, or its data missing
        readiness.engine_available = False
        readiness.references_total = sum(inventory.api_identifiers().values())
        readiness.hand_work = readiness.references_total
        readiness.hand_work_by_kind = {"api": readiness.hand_work} if readiness.hand_work else {}
        return
    unconverted, _ = _left_names(account)
    hand: Counter[str] = Counter()
    families: Counter[str] = Counter()
    libraries: Counter[str] = Counter()
    translatable = deprecated = 0
    for name, count in inventory.identifiers.items():
        mapping = database.lookup(name)
        if mapping is None and name in inventory.defined:
            continue  # the project's own helper (cudaCheck), not a CUDA API
        if mapping is None and library_of_identifier(name) == "NCCL":
            families["collective"] += count  # RCCL keeps NCCL's API names; only the header changes
            libraries["nccl"] += count
            translatable += count
            continue
        families[mapping.family if mapping else "unknown"] += count
        libraries[mapping.library if mapping else library_of_identifier(name)] += count
        left = name in unconverted if account is not None else (
            mapping is not None and (mapping.status == "removed" or not (mapping.hip or mapping.roc)))
        if mapping is None or left or mapping.library in _HAND_PORT_LIBRARIES:
            hand[name] += count
        elif mapping.status == "deprecated":
            deprecated += count
        else:
            translatable += count
    for name, count in _unlisted(inventory, account).items():
        hand[name] += count  # left by the translation, but not a name the inventory counts (__shfl_xor_sync)
        families["device-function" if name.startswith("__") else "unknown"] += count
    readiness.references_total = translatable + deprecated + sum(hand.values())
    readiness.translatable, readiness.deprecated = translatable, deprecated
    readiness.hand_work = sum(hand.values())
    readiness.hand_work_by_kind = {"api": readiness.hand_work} if hand else {}
    readiness.automatic_by_kind = {"api": translatable + deprecated} if translatable + deprecated else {}
    readiness.hand_work_apis = dict(hand.most_common(30))
    readiness.by_family = dict(families.most_common())
    readiness.by_library = dict(libraries.most_common())


def _constructs(inventory: Inventory, readiness: Readiness, account: TreeAccount | None,
                fixes_apply: bool) -> None:
    """Inline PTX, WMMA and wavefront hazards: found in the source, and what the translation leaves."""
    left: Counter[str] = Counter()
    found: Counter[str] = Counter({kind: inventory.constructs.get(kind, 0) for kind in CONSTRUCT_KINDS[:2]})
    sites: list[dict[str, object]] = []
    for entry in account.files if account is not None else []:
        for site in entry.hand_work:
            left[site["kind"]] += 1
            sites.append({"kind": site["kind"], "file": entry.path, "line": site["line"], "detail": site["text"]})
        for hazard in entry.wavefront:
            found["wavefront"] += 1
            if not (fixes_apply and hazard["applied"]):
                left["wavefront"] += 1
                sites.append({"kind": "wavefront", "file": entry.path, "line": hazard["line"],
                              "detail": f"{hazard['kind']}: {hazard['expression']}"})
    if account is None:
        left.update({kind: found[kind] for kind in CONSTRUCT_KINDS[:2]})  # nothing known to port them
    for kind in CONSTRUCT_KINDS:
        remaining = min(left[kind], found[kind]) if kind != "wavefront" else left[kind]
        found[kind] = max(found[kind], remaining)
        if remaining:
            readiness.hand_work_by_kind[kind] = remaining
            readiness.constructs[kind] = f"{remaining}: {_CONSTRUCT_NOTES[kind]}"
        if found[kind] > remaining:
            readiness.automatic_by_kind[kind] = found[kind] - remaining
        readiness.hand_work += remaining
        readiness.constructs_left += remaining
        readiness.translatable += found[kind] - remaining
    readiness.items_total = readiness.references_total + sum(found[kind] for kind in CONSTRUCT_KINDS)
    readiness.hand_work_sites = sorted(sites, key=lambda s: (str(s["file"]), int(str(s["line"]))))[:SITES_LISTED]


def summarize(inventory: Inventory, account: TreeAccount | None = None, fixes_apply: bool = True) -> Readiness:
    """The readiness of the inventoried tree; ``account`` is its translation (``account_tree``) when known,
    ``fixes_apply`` whether the hipify stage will apply the wavefront fixes (the builtin engine runs)."""
    readiness = Readiness(engine_available=True)
    _classify(inventory, readiness, account)
    if readiness.engine_available:
        _constructs(inventory, readiness, account, fixes_apply)
    else:
        readiness.items_total = readiness.references_total
    if readiness.items_total:
        share = (readiness.translatable + readiness.deprecated) / readiness.items_total
        readiness.translatable_share = round(share, 4)
    used = set(inventory.api_by_library())
    readiness.rocm_libraries_needed = sorted({ROCM_COUNTERPART[lib] for lib in used if lib in ROCM_COUNTERPART})
    return readiness

"""The ROCm side of one install set: what each declared package becomes on ROCm, and what pip resolves.

One rule above all: the ROCm build of torch is never replaced by pip. The set's torch (and
torchvision, torchaudio) is pinned to a ``+rocmX.Y`` build from PyTorch's ROCm index for the
toolchain's ROCm version, both as a requirement (when declared) and as a constraint (so a package
that only pulls torch in gets the same build). The declared version is kept where a ROCm build
of it exists; where none does, the report says so and names the build used instead. A set run
in a ROCm image that provides PyTorch resolves against that PyTorch (given to pip as a stub, so
a package wanting another torch shows as a conflict instead of a silent CUDA wheel).

CUDA-only packages are listed as "no ROCm build: remove, or use X" and left out; packages with
ROCm support through a build flag, a fork or an image say how and are left out of the resolve
(a binary-only resolve would only find their CUDA wheels); ``nvidia-*`` wheels never reach the
ROCm requirements or constraints; the triton requirement is checked against ROCm torch's own
Triton once resolved.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, field

from packaging.requirements import Requirement
from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import Version

from worker.scanning.dep_declarations import CONDA_CUDA, Declaration
from worker.scanning.dep_resolve import ProvidedPackage, ResolveRequest
from worker.scanning.dep_sets import InstallSet
from worker.scanning.rocm_counterparts import (
    TORCH_FAMILY,
    Counterpart,
    TorchBuilds,
    counterpart_for,
    paired_versions,
    rocm_key,
    rocm_versions_with,
    torch_builds,
)


@dataclass
class RocmEntry:
    name: str
    declared: list[str]  # the requirements as declared
    where: list[str]  # "file:line"
    action: str  # keep | pin | changed | upgrade | remove | replace | build | image | blocked | url | conda
    rocm_requirement: str  # what the ROCm resolve gets; "" when left out
    note: str
    counterpart: Counterpart | None = None

    def to_dict(self) -> dict[str, object]:
        return {"name": self.name, "declared": self.declared, "where": self.where, "action": self.action,
                "rocm_requirement": self.rocm_requirement, "note": self.note,
                "counterpart": self.counterpart.to_dict() if self.counterpart else None}


@dataclass
class TorchPlan:
    declared: str  # the combined specifier as declared ("" when the set does not name torch)
    version: str  # the torch version the ROCm side uses
    build: str  # "2.14.1+rocm7.2"
    kept: bool  # the declared version or range has this ROCm build
    provided_by: str  # the image that provides it, else ""
    note: str
    pins: dict[str, str] = field(default_factory=dict)  # torch/torchvision/torchaudio -> "name==v+rocmX.Y"
    index: str = ""
    sources: list[str] = field(default_factory=list)
    checked: str = ""

    def to_dict(self) -> dict[str, object]:
        return asdict(self)


@dataclass
class RocmSide:
    rocm_version: str
    entries: list[RocmEntry] = field(default_factory=list)
    torch: TorchPlan | None = None
    triton_spec: str = ""  # the triton range the set declared, checked against ROCm torch's Triton
    notes: list[str] = field(default_factory=list)
    request: ResolveRequest | None = None
    not_resolved: str = ""  # why there is no request

    def to_dict(self) -> dict[str, object]:
        return {"rocm_version": self.rocm_version, "entries": [e.to_dict() for e in self.entries],
                "torch": self.torch.to_dict() if self.torch else None, "triton_spec": self.triton_spec,
                "notes": self.notes, "request": self.request.to_dict() if self.request else None,
                "not_resolved": self.not_resolved}


def _specifier(declarations: list[Declaration]) -> SpecifierSet:
    """The declared ranges combined, a ``+cuXXX`` local part dropped (it names the CUDA build, not the version)."""
    combined = SpecifierSet()
    for declaration in declarations:
        for spec in Requirement(declaration.requirement).specifier:
            text = str(spec).split("+", 1)[0] if spec.operator in ("==", "===") else str(spec)
            try:
                combined &= SpecifierSet(text.replace("===", "=="))
            except InvalidSpecifier:
                continue
    return combined


def _nearest(builds: TorchBuilds, spec: SpecifierSet) -> Version:
    available = builds.versions()
    floors = [Version(s.version.split("+")[0].rstrip(".*")) for s in spec if s.operator in ("==", ">=", "~=", ">")
              and s.version[0].isdigit()]
    if floors:
        above = [v for v in available if v >= max(floors)]
        if above:
            return above[0]
    return available[-1]


def _pair_fits(builds: TorchBuilds, version: Version, name: str, declared: list[Declaration]) -> bool:
    wanted = [d for d in declared if d.name == name]
    if not wanted:
        return True
    paired = builds.builds.get(str(version), {}).get(name)
    return paired is not None and _specifier(wanted).contains(Version(paired), prereleases=True)


def _torch_plan(declared: list[Declaration], rocm: str, image_torch: str, image: str) -> TorchPlan | None:
    spec = _specifier([d for d in declared if d.name == "torch"])
    builds = torch_builds(rocm)
    where = ", ".join(sorted({f"{d.file}:{d.line}" for d in declared if d.name == "torch"}))
    text = str(spec) or ("any" if where else "")
    if image_torch:
        version = Version(image_torch)
        kept = spec.contains(version, prereleases=True)
        note = f"provided by the image {image}: torch {image_torch}, kept" if kept else (
            f"the image {image} provides torch {image_torch}, but torch{spec} is declared ({where}): pip would "
            "replace the image's ROCm torch with a CUDA wheel from PyPI; pin a version the image has")
        plan = TorchPlan(text, image_torch, f"{image_torch}+rocm{rocm}", kept, image, note)
        plan.pins = {"torch": f"torch=={plan.build}"}
        for name, paired in paired_versions(image_torch).items():
            plan.pins[name] = f"{name}=={paired}+rocm{rocm}"
        return plan
    if builds is None:
        return None
    matching = [v for v in builds.versions() if spec.contains(v, prereleases=True)]
    # Prefer a torch whose paired torchvision/torchaudio builds exist and fit what the set declares of them.
    with_family = [v for v in matching if all(_pair_fits(builds, v, name, declared) for name in TORCH_FAMILY[1:])]
    exact = [s for s in spec if s.operator == "=="]
    version = max(with_family or matching) if matching else _nearest(builds, spec)
    kept = bool(matching)
    if kept:
        note = (f"torch {version} has a ROCm {builds.rocm_version} build: kept" if exact else
                f"torch{spec or ''} on ROCm {builds.rocm_version}: {version}, the newest ROCm build in range")
    else:
        elsewhere = rocm_versions_with(exact[0].version.split("+")[0]) if exact else []
        built_for = f"; it was built for ROCm {', '.join(elsewhere)}" if elsewhere else ""
        note = (f"torch{spec} has no ROCm {builds.rocm_version} build (ROCm {builds.rocm_version} has "
                f"{builds.versions()[0]} to {builds.versions()[-1]}){built_for}: resolved with {version} instead; "
                "change the pin, or use a toolchain of a ROCm version that has it")
    plan = TorchPlan(text, str(version), f"{version}+rocm{builds.rocm_version}", kept, "", note, index=builds.index,
                     sources=list(builds.sources), checked=builds.checked)
    plan.pins = {"torch": f"torch=={plan.build}"}
    for name, paired in builds.builds.get(str(version), {}).items():
        plan.pins[name] = f"{name}=={paired}+rocm{builds.rocm_version}"
    return plan


def _family_entry(name: str, declarations: list[Declaration], plan: TorchPlan | None, rocm: str) -> RocmEntry:
    declared = [d.requirement for d in declarations]
    where = [f"{d.file}:{d.line}" for d in declarations]
    counterpart = counterpart_for(name, rocm_version=rocm)
    if plan is None:
        return RocmEntry(name, declared, where, "blocked", "", f"no ROCm {rocm} build of {name} is recorded: "
                         "the set is not resolved", counterpart)
    pin = plan.pins.get(name, "")
    if name == "torch":
        return RocmEntry(name, declared, where, "pin" if plan.kept else "changed", pin, plan.note, counterpart)
    if not pin and plan.provided_by:
        return RocmEntry(name, declared, where, "keep", declarations[0].requirement,
                         f"from the image {plan.provided_by} if it has it", counterpart)
    if not pin:
        return RocmEntry(name, declared, where, "blocked", "", f"no {name} build for torch {plan.version} is recorded "
                         f"on ROCm {rocm}: remove it from this set or pin a torch that has one", counterpart)
    spec = _specifier(declarations)
    paired = Version(pin.split("==", 1)[1])
    kept = spec.contains(paired, prereleases=True)
    note = f"the ROCm build paired with torch {plan.version}" + ("" if kept else f" (declared {name}{spec})")
    return RocmEntry(name, declared, where, "pin", pin, note, counterpart)


def _upgraded(declarations: list[Declaration], counterpart: Counterpart) -> tuple[str, str]:
    wanted = SpecifierSet(str(Requirement(counterpart.requirement).specifier))
    declared = _specifier(declarations)
    requirement = Requirement(declarations[0].requirement)
    requirement.specifier = declared & wanted
    probe = [Version(s.version) for s in wanted if s.operator in (">=", "==")]
    if probe and not declared.contains(probe[0], prereleases=True) and any(s.operator in ("<", "<=", "==")
                                                                           for s in declared):
        return "", f"declared {requirement.name}{declared}, but ROCm needs {counterpart.requirement}: widen the range"
    return str(requirement), f"{counterpart.counterpart}: {counterpart.requirement}"


def _entry(name: str, declarations: list[Declaration], rocm: str) -> RocmEntry:
    declared = [d.requirement for d in declarations]
    where = [f"{d.file}:{d.line}" for d in declarations]
    if not any(d.resolvable for d in declarations):
        first = declarations[0]
        if first.origin == "conda":
            cuda = name in CONDA_CUDA or counterpart_for(name, rocm_version=rocm) is not None
            return RocmEntry(name, declared, where, "remove" if cuda else "conda", "",
                             "CUDA conda package: no ROCm build, remove it" if cuda
                             else "conda package: installed by conda, not resolved with pip",
                             counterpart_for(name, rocm_version=rocm))
        return RocmEntry(name, declared, where, "url", "", "direct reference: never resolved here (it may point "
                         "anywhere); check it by hand")
    extras = frozenset(e for d in declarations for e in Requirement(d.requirement).extras)
    counterpart = counterpart_for(name, extras=extras, rocm_version=rocm)
    if counterpart is None:
        return RocmEntry(name, declared, where, "keep", _joined(declarations), "portable")
    install = f"; {counterpart.install}" if counterpart.install else ""
    if counterpart.action == "upgrade" and counterpart.requirement:
        requirement, note = _upgraded(declarations, counterpart)
        return RocmEntry(name, declared, where, "upgrade" if requirement else "blocked", requirement, note, counterpart)
    if counterpart.action == "keep":
        return RocmEntry(name, declared, where, "keep", _joined(declarations), counterpart.counterpart, counterpart)
    if counterpart.action == "remove":
        text = counterpart.counterpart if counterpart.counterpart.startswith("no ROCm build") else \
            f"no ROCm build: remove, or use {counterpart.counterpart}"
        return RocmEntry(name, declared, where, "remove", "", text + install, counterpart)
    return RocmEntry(name, declared, where, counterpart.action, "", counterpart.counterpart + install, counterpart)


def _joined(declarations: list[Declaration]) -> str:
    """One requirement with every declared range of the name (pip would apply them all)."""
    requirement = Requirement(declarations[0].requirement)
    requirement.specifier = _specifier(declarations) if len(declarations) > 1 else requirement.specifier
    return str(requirement)


def _index_notes(install_set: InstallSet, plan: TorchPlan | None) -> list[str]:
    notes = []
    for index in dict.fromkeys(install_set.indexes):
        if "download.pytorch.org" in index and "/cu" in index:
            replacement = plan.index if plan and plan.index else "PyTorch's ROCm index"
            notes.append(f"CUDA wheel index {index} replaced by {replacement}")
        else:
            notes.append(f"index {index} named by the set is not used: the resolve uses only Migrator's index settings")
    return notes


def rocm_side(install_set: InstallSet, rocm_version: str, image_torch: str = "") -> RocmSide:
    """The ROCm side of ``install_set`` for ``rocm_version``; ``image_torch``: the PyTorch its image provides."""
    rocm = rocm_key(rocm_version)
    side = RocmSide(rocm)
    by_name: dict[str, list[Declaration]] = {}
    for declaration in [*install_set.declarations, *install_set.conda]:
        by_name.setdefault(declaration.name, []).append(declaration)
    family = [d for name in TORCH_FAMILY for d in by_name.get(name, []) if d.resolvable]
    side.torch = _torch_plan(family, rocm, image_torch, install_set.image)
    for name, declarations in by_name.items():
        if name in TORCH_FAMILY and any(d.resolvable for d in declarations):
            side.entries.append(_family_entry(name, declarations, side.torch, rocm))
        else:
            entry = _entry(name, declarations, rocm)
            side.entries.append(entry)
            if entry.counterpart and entry.counterpart.id == "triton":
                side.triton_spec = str(_specifier([d for d in declarations if d.resolvable]))
    side.notes = _index_notes(install_set, side.torch) + [f"{url}: direct reference, not resolved"
                                                          for url in install_set.urls]
    side.request, side.not_resolved = _request(install_set, side)
    return side


def _request(install_set: InstallSet, side: RocmSide) -> tuple[ResolveRequest | None, str]:
    if side.torch is None:
        return None, f"no ROCm {side.rocm_version} build of torch is recorded: resolving would let pip pick a CUDA " \
                     "build of torch, so the set is not resolved"
    requirements = list(dict.fromkeys(e.rocm_requirement for e in side.entries if e.rocm_requirement))
    if not requirements:
        return None, "nothing in this set is resolved on ROCm (every package is replaced or left out)"
    provided = [ProvidedPackage(name, pin.split("==", 1)[1]) for name, pin in side.torch.pins.items()] \
        if side.torch.provided_by else []
    constraints = sorted(side.torch.pins.values())
    constraints += [str(Requirement(d.requirement)) for d in install_set.constraints if d.resolvable
                    and d.name not in TORCH_FAMILY and counterpart_for(d.name, rocm_version=side.rocm_version) is None]
    indexes = [side.torch.index] if side.torch.index and not side.torch.provided_by else []
    return ResolveRequest(requirements, constraints, provided, indexes, side.torch.build, side.triton_spec,
                          side.rocm_version, side.torch.provided_by), ""


def requirements_lines(side: RocmSide) -> list[str]:
    """The set's ROCm requirements as a requirements file: ROCm pins, portable lines, the rest as comments."""
    lines = [f"--extra-index-url {side.torch.index}"] if side.torch and side.torch.index else []
    lines += [e.rocm_requirement for e in side.entries if e.rocm_requirement]
    left = [e for e in side.entries if not e.rocm_requirement and e.action not in ("conda",)]
    if left:
        lines += ["", "# Left out on ROCm:"]
        lines += [f"#   {e.name}: {e.note}" for e in left]
    return lines

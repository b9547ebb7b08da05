"""What a finished resolve means for ROCm: the checks run on pip's report, and the constraints file.

- torch in the resolution must be the ROCm build asked for; anything else means pip would replace it;
- ``nvidia-*`` wheels are listed with the package that pulls them in, and never written as constraints;
- PyPI's ``triton`` beside ROCm torch's own Triton is a clash (both install the ``triton`` module);
- a declared triton range is checked against the Triton ROCm torch brings.
"""
from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field

from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import InvalidVersion, Version

from worker.scanning.dep_resolve import Resolution, ResolvedPackage
from worker.scanning.rocm_counterparts import counterpart_for, is_rocm_build, triton_packages

_NVIDIA = re.compile(r"^nvidia-")


@dataclass
class ResolutionCheck:
    problems: list[str] = field(default_factory=list)  # the ROCm side would not work as resolved
    notes: list[str] = field(default_factory=list)
    constraints: list[str] = field(default_factory=list)  # constraints-rocm.txt lines

    def to_dict(self) -> dict[str, object]:
        return asdict(self)


def _pulled_by(packages: list[ResolvedPackage], name: str) -> list[str]:
    return [p.name for p in packages if name in p.requires]


def check_resolution(resolution: Resolution, torch_build: str = "", triton_spec: str = "",
                     rocm_version: str = "", image: str = "") -> ResolutionCheck:
    """``image``: the ROCm image that provides torch (and with it ROCm's Triton), when the set runs in one."""
    check = ResolutionCheck()
    if resolution.status not in ("resolved", "partial"):
        return check
    packages = resolution.packages
    by_name = {p.name: p for p in packages}
    torch = by_name.get("torch")
    if torch and torch_build and torch.version != torch_build:
        check.problems.append(f"pip chose torch {torch.version}, not the ROCm build {torch_build}: it would replace "
                              "ROCm torch")
    for package in packages:
        if _NVIDIA.match(package.name):
            who = ", ".join(_pulled_by(packages, package.name)) or "the set"
            check.problems.append(f"{package.name} {package.version} (pulled in by {who}) is a CUDA library wheel: "
                                  "no ROCm build; install that package without it")
    rocm_triton = next((by_name[n] for n in triton_packages() if n in by_name), None)
    beside = f"{rocm_triton.name} {rocm_triton.version}" if rocm_triton else f"the Triton of {image}" if image else ""
    if "triton" in by_name and beside:
        who = ", ".join(p for p in _pulled_by(packages, "triton") if p != "torch") or "the set"
        check.problems.append(f"triton {by_name['triton'].version} from PyPI (pulled in by {who}) would be installed "
                              f"beside {beside}: both install the triton module; install {who} with --no-deps")
    if triton_spec and rocm_triton:
        try:
            fits = SpecifierSet(triton_spec).contains(Version(rocm_triton.version.split("+")[0]), prereleases=True)
        except (InvalidSpecifier, InvalidVersion):
            fits = True
        check.notes.append(f"triton{triton_spec} is provided by {rocm_triton.name} {rocm_triton.version}" if fits else
                           f"triton{triton_spec} is declared, but ROCm torch brings {rocm_triton.name} "
                           f"{rocm_triton.version}: choose a torch whose Triton satisfies it")
        if not fits:
            check.problems.append(check.notes[-1])
    for package in packages:
        counterpart = counterpart_for(package.name, version=package.version, rocm_version=rocm_version or "7.2") \
            if not is_rocm_build(package.version) else None
        if _NVIDIA.match(package.name) or package.name == "triton" and beside:
            continue
        if counterpart is not None and counterpart.action in ("remove", "build", "image") and not package.requested:
            check.notes.append(f"{package.name} {package.version} is pulled in: {counterpart.counterpart}")
            continue
        check.constraints.append(f"{package.name}=={package.version}")
    return check

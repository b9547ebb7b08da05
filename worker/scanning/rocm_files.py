"""The ROCm files a project already ships: found, reported, and used instead of being overwritten.

- a Dockerfile built ``FROM`` a ROCm image (``rocm/pytorch:rocm7.2_..._pytorch_release_2.7.1``):
  its ROCm and PyTorch versions, read from the tag; the PyTorch it provides is the one its
  ``pip install`` sets resolve against (pip must never replace it);
- ``requirements-rocm*.txt`` (or any requirements file named for ROCm): the project's own ROCm
  install set, resolved as written; Migrator writes no ``requirements-rocm.txt`` over it;
- ``setup_rocm.py``: the project's ROCm build script;
- ``USE_ROCM``, ``torch.version.hip``, ``IS_HIP_EXTENSION`` or ``ROCM_HOME`` in build files: a ROCm
  path the build already has.
"""
from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import asdict, dataclass
from pathlib import Path

from worker.scanning.dep_sets import is_rocm_image, split_image
from worker.scanning.dockerfiles import dockerfile_bases
from worker.scanning.files import MAX_FILE_BYTES, build_kind, read_text, walk_tree

_ROCM_PATH = re.compile(r"\bUSE_ROCM\b|torch\.version\.hip\b|\bIS_HIP_EXTENSION\b|\bROCM_HOME\b|\bBUILD_FOR_ROCM\b")
_TORCH_IMAGES = re.compile(r"^rocm/(pytorch|vllm|sgl|megatron|primus)")
MAX_PATH_MENTIONS = 20


@dataclass(frozen=True)
class RocmFile:
    file: str
    line: int
    kind: str  # dockerfile | requirements | setup-rocm | rocm-path
    detail: str
    image: str = ""
    rocm_version: str = ""  # from the image tag
    torch_version: str = ""  # the PyTorch the image provides, from its tag ("" when the tag does not say)

    def to_dict(self) -> dict[str, object]:
        return asdict(self)


def image_versions(image: str) -> tuple[str, str, bool]:
    """(ROCm version, PyTorch version, provides a ROCm PyTorch) read from a ROCm image reference."""
    repository, tag = split_image(image)
    rocm = re.search(r"rocm[-_]?(\d+\.\d+(?:\.\d+)?)", tag)
    torch = re.search(r"pytorch(?:[-_]release)?[-_]v?(\d+\.\d+(?:\.\d+)?)", tag)
    provides = bool(_TORCH_IMAGES.match(repository))
    return (rocm[1] if rocm else ""), (torch[1] if torch and provides else ""), provides


def _dockerfile(rel: str, text: str) -> list[RocmFile]:
    found = []
    for line, image in dockerfile_bases(text):
        if not is_rocm_image(image):
            continue
        rocm, torch, provides = image_versions(image)
        versions = ", ".join(filter(None, [f"ROCm {rocm}" if rocm else "", f"PyTorch {torch}" if torch else
                                           ("a ROCm PyTorch (version not in the tag)" if provides else "")]))
        found.append(RocmFile(rel, line, "dockerfile", f"FROM {image}" + (f" ({versions})" if versions else ""),
                              image, rocm, torch))
    return found


def _mentions(rel: str, text: str) -> list[RocmFile]:
    for number, line in enumerate(text.splitlines(), 1):
        match = _ROCM_PATH.search(line)
        if match and not line.lstrip().startswith("#"):
            return [RocmFile(rel, number, "rocm-path", f"{match[0]} in {line.strip()[:120]}")]
    return []


def find_rocm_files(tree: Path, exclude_globs: Iterable[str]) -> list[RocmFile]:
    found: list[RocmFile] = []
    mentions = 0
    for tree_file in walk_tree(tree, exclude_globs):
        if tree_file.size > MAX_FILE_BYTES:
            continue
        kind = build_kind(tree_file.rel)
        name = tree_file.name
        if name == "setup_rocm.py":
            found.append(RocmFile(tree_file.rel, 1, "setup-rocm", "the project's ROCm build script "
                                  f"(python {name} install)"))
            continue
        if kind == "requirements" and "rocm" in name.lower():
            found.append(RocmFile(tree_file.rel, 1, "requirements", "the project's own ROCm requirements"))
            continue
        if kind not in ("dockerfile", "setup-py", "cmake", "pyproject", "shell"):
            continue
        text = read_text(tree_file)
        if text is None:
            continue
        if kind == "dockerfile":
            found += _dockerfile(tree_file.rel, text)
        elif mentions < MAX_PATH_MENTIONS and (hits := _mentions(tree_file.rel, text)):
            found += hits
            mentions += 1
    return found

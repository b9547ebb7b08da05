"""Dockerfiles: their ``pip install`` commands (shlex, pip's own option set) and the images they build from."""
from __future__ import annotations

import re
import shlex
from dataclasses import dataclass

from worker.scanning.dep_declarations import PipEntry, logical_lines, pip_arguments

_PIP_INSTALL = re.compile(r"(?:^|[\s;&|(])(?:\S*/)?(?:pip3?(?:\.\d+)?|python3?(?:\.\d+)?\s+-m\s+pip|uv\s+pip)"
                          r"\s+install\b")


@dataclass(frozen=True)
class DockerInstall:
    line: int
    entries: tuple[PipEntry, ...]


def dockerfile_installs(rel: str, text: str) -> list[DockerInstall]:
    """Each ``pip install`` command of the Dockerfile's ``RUN`` lines, with its entries."""
    installs = []
    for number, command in logical_lines(text):
        for segment in re.split(r"&&|;|\|\|", command):
            match = _PIP_INSTALL.search(segment)
            if not match:
                continue
            try:
                words = shlex.split(segment[match.end():])
            except ValueError:
                continue
            installs.append(DockerInstall(number, tuple(pip_arguments(words, rel, number, "dockerfile"))))
    return installs


def dockerfile_args(text: str) -> dict[str, str]:
    """``ARG NAME=default`` values, to read ``FROM ${NAME}``."""
    found = {}
    for match in re.finditer(r"^\s*ARG\s+([A-Za-z_][A-Za-z0-9_]*)=(\S+)", text, re.MULTILINE):
        found[match[1]] = match[2].strip("\"'")
    return found


def dockerfile_bases(text: str) -> list[tuple[int, str]]:
    """The images the Dockerfile builds ``FROM`` (ARG defaults substituted), with their lines."""
    args = dockerfile_args(text)
    bases = []
    for number, line in enumerate(text.splitlines(), 1):
        match = re.match(r"^\s*FROM\s+(?:--platform=\S+\s+)?(\S+)", line, re.IGNORECASE)
        if match:
            image = re.sub(r"\$\{?([A-Za-z_][A-Za-z0-9_]*)\}?", lambda m: args.get(m[1], m[0]), match[1])
            bases.append((number, image))
    return bases

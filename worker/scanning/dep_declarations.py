"""Every Python dependency a tree declares, read with real parsers.

Sources: ``requirements*.txt``/``requirements/*.txt`` (packaging), ``pyproject.toml`` (tomllib:
``[project]`` dependencies and extras, ``[build-system] requires``), ``setup.py`` (``ast``: literal
``install_requires``/``extras_require``/``setup_requires``, nothing is run), ``setup.cfg``
(configparser), conda ``environment*.yml`` (PyYAML; its ``pip:`` list as requirements, conda
packages as conda names) and Dockerfiles' ``pip install`` arguments (shlex).
"""
from __future__ import annotations

import ast
import configparser
import re
import shlex
import tomllib
from collections.abc import Iterable, Iterator
from dataclasses import asdict, dataclass
from pathlib import Path

import yaml
from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name

from worker.scanning.files import MAX_FILE_BYTES, TreeFile, build_kind, read_text, walk_tree

# conda package names that are pip packages under another name
_CONDA_TO_PIP = {"pytorch": "torch", "pytorch-cuda": "", "cudatoolkit": "", "cuda-toolkit": "", "python": "",
                 "pip": "", "cuda": ""}
_CONDA_CUDA = {"pytorch-cuda", "cudatoolkit", "cuda-toolkit", "cuda", "cudnn", "nccl"}


@dataclass(frozen=True)
class Declaration:
    name: str  # canonical name ("flash-attn"); for conda-only packages the conda name
    requirement: str  # normalised requirement text ("torch==2.5.1"), empty for conda-only packages
    file: str
    line: int
    origin: str  # requirements | pyproject | setup.py | setup.cfg | conda | dockerfile
    resolvable: bool  # pip can resolve it from an index (no URL, path or conda-only package)
    note: str = ""  # why it is not resolvable, or the index option it came with

    def to_dict(self) -> dict[str, object]:
        return asdict(self)


def _parse(text: str, file: str, line: int, origin: str, note: str = "") -> Declaration | None:
    text = text.split(" #", 1)[0].strip()
    if not text:
        return None
    try:
        req = Requirement(text)
    except InvalidRequirement:
        return None
    name = canonicalize_name(req.name)
    if req.url:  # a direct reference may point anywhere, even at the host's disk: never handed to pip
        return Declaration(name, str(req), file, line, origin, False, "direct URL reference")
    return Declaration(name, str(req), file, line, origin, True, note)


def _line_of(lines: list[str], needle: str) -> int:
    return next((n for n, line in enumerate(lines, 1) if needle in line), 1)


def _requirements(rel: str, text: str) -> Iterator[Declaration]:
    index = ""
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if line.startswith(("--index-url", "-i ", "--extra-index-url")):
            parts = line.replace("=", " ", 1).split()
            index = parts[1] if len(parts) > 1 else ""
            continue
        if not line or line.startswith(("#", "-")):
            continue
        declaration = _parse(line, rel, number, "requirements", f"index {index}" if index else "")
        if declaration:
            yield declaration


def _pyproject(rel: str, text: str) -> Iterator[Declaration]:
    data = tomllib.loads(text)
    lines = text.splitlines()
    project = data["project"] if isinstance(data.get("project"), dict) else {}
    groups: list[object] = [project.get("dependencies", []), data.get("build-system", {}).get("requires", [])]
    extras = project.get("optional-dependencies", {})
    groups += list(extras.values()) if isinstance(extras, dict) else []
    for group in groups:
        for item in group if isinstance(group, list) else []:
            if isinstance(item, str) and (declaration := _parse(item, rel, _line_of(lines, item), "pyproject")):
                yield declaration


def _literal_strings(node: ast.expr) -> list[str]:
    try:
        value = ast.literal_eval(node)
    except (ValueError, SyntaxError, TypeError):
        return []
    if isinstance(value, str):
        return [value]
    if isinstance(value, (list, tuple)):
        return [v for v in value if isinstance(v, str)]
    if isinstance(value, dict):
        return [v for group in value.values() for v in (group if isinstance(group, (list, tuple)) else [group])
                if isinstance(v, str)]
    return []


def _setup_py(rel: str, text: str) -> Iterator[Declaration]:
    tree = ast.parse(text, filename=rel)
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        for keyword in node.keywords:
            if keyword.arg in ("install_requires", "extras_require", "setup_requires"):
                for item in _literal_strings(keyword.value):
                    if declaration := _parse(item, rel, keyword.value.lineno, "setup.py"):
                        yield declaration


def _setup_cfg(rel: str, text: str) -> Iterator[Declaration]:
    parser = configparser.ConfigParser(interpolation=None)
    parser.read_string(text)
    lines = text.splitlines()
    values = [parser.get("options", "install_requires", fallback="")]
    if parser.has_section("options.extras_require"):
        values += [value for _key, value in parser.items("options.extras_require")]
    for value in values:
        for item in value.splitlines():
            if item.strip() and (declaration := _parse(item, rel, _line_of(lines, item.strip()), "setup.cfg")):
                yield declaration


def _conda(rel: str, text: str) -> Iterator[Declaration]:
    data = yaml.safe_load(text)
    lines = text.splitlines()
    for item in data.get("dependencies", []) if isinstance(data, dict) else []:
        if isinstance(item, dict):
            for pip_item in item.get("pip", []) or []:
                if isinstance(pip_item, str) and (d := _parse(pip_item, rel, _line_of(lines, pip_item), "conda")):
                    yield d
        elif isinstance(item, str):
            conda_name = re.split(r"[=<>!\s]", item.strip(), maxsplit=1)[0].split("::")[-1]
            pip_name = _CONDA_TO_PIP.get(conda_name, conda_name)
            if not pip_name and conda_name not in _CONDA_CUDA:
                continue  # python, pip: the environment itself
            note = "CUDA conda package" if conda_name in _CONDA_CUDA else "conda package"
            yield Declaration(canonicalize_name(pip_name or conda_name), "", rel, _line_of(lines, item), "conda",
                              False, note)


_PIP_INSTALL = re.compile(r"\bpip3?\s+install\b|\bpython3?\s+-m\s+pip\s+install\b")
_TAKES_VALUE = {"-r", "--requirement", "-c", "--constraint", "-e", "--editable", "-i", "--index-url",
                "--extra-index-url", "-f", "--find-links", "--target", "-t", "--prefix", "--root", "--platform",
                "--python-version", "--implementation", "--abi", "--trusted-host", "--cache-dir", "--src",
                "--progress-bar", "--timeout", "--retries", "--config-settings", "-C"}


def _dockerfile_commands(text: str) -> Iterator[tuple[int, str]]:
    """Logical lines (continuations joined) with the number of their first physical line."""
    start, buffer = 0, list[str]()
    for number, line in enumerate(text.splitlines(), 1):
        if not buffer:
            start = number
        buffer.append(line.rstrip().removesuffix("\\"))
        if not line.rstrip().endswith("\\"):
            yield start, " ".join(buffer)
            buffer = []
    if buffer:
        yield start, " ".join(buffer)


def _dockerfile(rel: str, text: str) -> Iterator[Declaration]:
    for number, command in _dockerfile_commands(text):
        for segment in re.split(r"&&|;|\|\|", command):
            match = _PIP_INSTALL.search(segment)
            if not match:
                continue
            try:
                words = shlex.split(segment[match.end():])
            except ValueError:
                continue
            yield from _pip_arguments(words, rel, number)


def _pip_arguments(words: list[str], rel: str, number: int) -> Iterator[Declaration]:
    indexes = [words[i + 1] for i, w in enumerate(words[:-1]) if w in ("--index-url", "-i", "--extra-index-url")]
    index, skip = " ".join(indexes), False
    for word in words:
        if skip:
            skip = False
            continue
        if word in _TAKES_VALUE:
            skip = True
            continue
        if word.startswith("-") or word in (".",) or "/" in word.split("@")[0]:
            continue
        if declaration := _parse(word, rel, number, "dockerfile", f"index {index}" if index else ""):
            yield declaration


_READERS = {"requirements": _requirements, "pyproject": _pyproject, "setup-py": _setup_py, "conda": _conda,
            "dockerfile": _dockerfile}


def _reader_kind(tree_file: TreeFile) -> str | None:
    if tree_file.name == "setup.cfg":
        return "setup-cfg"
    kind = build_kind(tree_file.rel)
    return kind if kind in _READERS else None


def read_declarations(tree: Path, exclude_globs: Iterable[str]) -> tuple[list[Declaration], list[str]]:
    """All declarations in the tree, and the files that could not be parsed (with the reason)."""
    declarations: list[Declaration] = []
    unreadable: list[str] = []
    for tree_file in walk_tree(tree, exclude_globs):
        kind = _reader_kind(tree_file)
        if kind is None or tree_file.size > MAX_FILE_BYTES:
            continue
        text = read_text(tree_file)
        if text is None:
            continue
        reader = _setup_cfg if kind == "setup-cfg" else _READERS[kind]
        try:
            declarations += list(reader(tree_file.rel, text))
        except (SyntaxError, ValueError, configparser.Error, yaml.YAMLError, AttributeError, TypeError) as error:
            unreadable.append(f"{tree_file.rel}: {str(error).splitlines()[0] if str(error) else type(error).__name__}")
    return declarations, unreadable

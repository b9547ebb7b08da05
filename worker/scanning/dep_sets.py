"""The install sets of a tree: what a user would install in one go, each resolved on its own.

One set per requirements file (``requirements*.txt`` anywhere, any ``requirements/`` folder) with
the files it includes (``-r``) and its constraints (``-c``); per Python package (a directory
with ``pyproject.toml``, ``setup.py`` or ``setup.cfg``) its base dependencies, each extra (base
plus the extra, as ``pip install .[extra]`` installs it), each PEP 735 dependency group and its
build requirements; per conda environment file its ``pip:`` list; per Dockerfile ``pip install``
command what that command installs (``-r`` files and ``.`` read from the build context, the
repository root, else the Dockerfile's folder). Nothing is merged across sets: two files that
pin different versions are two resolves, not one certain conflict.
"""
from __future__ import annotations

import configparser
import posixpath
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

import yaml
from packaging.utils import canonicalize_name

from worker.scanning.dep_declarations import (
    Declaration,
    PackageDecls,
    PipEntry,
    conda_environment,
    pyproject,
    requirements_file,
    setup_cfg,
    setup_py,
)
from worker.scanning.dockerfiles import dockerfile_bases, dockerfile_installs
from worker.scanning.files import MAX_FILE_BYTES, TreeFile, build_kind, read_text, walk_tree

MAX_SETS = 80
MAX_INCLUDE_DEPTH = 10
_TOOLING = frozenset({"pip", "setuptools", "wheel", "packaging", "editables", "hatchling", "ninja", "build",
                      "setuptools-scm", "pybind11", "cmake", "scikit-build-core", "flit-core", "poetry-core"})
_PARSE_ERRORS = (SyntaxError, ValueError, configparser.Error, yaml.YAMLError, AttributeError, TypeError)


@dataclass
class InstallSet:
    id: str  # "requirements/vllm.txt", "pyproject.toml [deepspeed]", "docker/docker-rocm/Dockerfile:36"
    kind: str  # package | extra | group | build | requirements | conda | dockerfile
    file: str
    line: int
    declarations: list[Declaration] = field(default_factory=list)
    constraints: list[Declaration] = field(default_factory=list)  # from -c files
    conda: list[Declaration] = field(default_factory=list)  # conda packages (listed, not resolved with pip)
    indexes: list[str] = field(default_factory=list)  # index options the set names (reported, never given to pip)
    includes: list[str] = field(default_factory=list)  # files and packages it pulls in
    constraint_files: list[str] = field(default_factory=list)  # the -c files it reads
    urls: list[str] = field(default_factory=list)  # direct URL or VCS installs (never resolved)
    image: str = ""  # Dockerfile: the image the command runs in
    rocm: bool = False  # one of the project's own ROCm files
    problems: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, object]:
        return {"id": self.id, "kind": self.kind, "file": self.file, "line": self.line,
                "declarations": [d.to_dict() for d in self.declarations],
                "constraints": [d.to_dict() for d in self.constraints],
                "conda": [d.to_dict() for d in self.conda], "indexes": self.indexes, "includes": self.includes,
                "constraint_files": self.constraint_files, "urls": self.urls, "image": self.image, "rocm": self.rocm, "problems": self.problems}


@dataclass
class _Tree:
    files: dict[str, TreeFile]
    packages: dict[str, PackageDecls]  # directory ("" for the root) -> its metadata
    unreadable: list[str] = field(default_factory=list)
    _texts: dict[str, str | None] = field(default_factory=dict)

    def text(self, rel: str) -> str | None:
        if rel not in self._texts:
            file = self.files.get(rel)
            self._texts[rel] = read_text(file) if file and file.size <= MAX_FILE_BYTES else None
        return self._texts[rel]


def _is_rocm_name(rel: str) -> bool:
    return "rocm" in rel.rsplit("/", 1)[-1].lower()


def _package_at(tree: _Tree, directory: str) -> PackageDecls | None:
    return tree.packages.get(directory.strip("/") if directory not in (".", "./") else "")


def _read_packages(tree: _Tree) -> None:
    """Each directory's package metadata: pyproject's [project] first, setup.py/setup.cfg for what it leaves."""
    readers = {"pyproject.toml": pyproject, "setup.py": setup_py, "setup.cfg": setup_cfg}
    found: dict[str, dict[str, PackageDecls]] = {}
    for rel in tree.files:
        directory, _, name = rel.rpartition("/")
        if name not in readers or (text := tree.text(rel)) is None:
            continue
        try:
            found.setdefault(directory, {})[name] = readers[name](rel, text)
        except _PARSE_ERRORS as error:
            tree.unreadable.append(f"{rel}: {str(error).splitlines()[0] if str(error) else type(error).__name__}")
    for directory, by_name in found.items():
        chosen = by_name.get("pyproject.toml")
        for fallback in ("setup.py", "setup.cfg"):
            other = by_name.get(fallback)
            if other is None:
                continue
            if chosen is None:
                chosen = other
                continue
            if "dependencies" in chosen.dynamic and not chosen.base:
                chosen.base, chosen.file = other.base, other.file
            chosen.extras = chosen.extras or other.extras
            chosen.build += [d for d in other.build if d.name not in {b.name for b in chosen.build}]
            chosen.problems += other.problems
            chosen.name = chosen.name or other.name
        if chosen is not None:
            tree.packages[directory] = chosen


def _expand_extras(package: PackageDecls, extras: Iterable[str], seen: set[str] | None = None) -> list[Declaration]:
    """The declarations of ``extras``, with "project[other]" self-references expanded."""
    seen = seen if seen is not None else set()
    own = canonicalize_name(package.name) if package.name else ""
    found: list[Declaration] = []
    for extra in extras:
        if extra in seen or extra not in package.extras:
            continue
        seen.add(extra)
        for declaration in package.extras[extra]:
            if own and declaration.name == own:
                found += _expand_extras(package, _extras_of(declaration), seen)
            else:
                found.append(declaration)
    return found


def _extras_of(declaration: Declaration) -> list[str]:
    from packaging.requirements import Requirement

    return sorted(Requirement(declaration.requirement).extras)


def _package_sets(directory: str, package: PackageDecls) -> list[InstallSet]:
    sets = []
    if package.base or not package.extras:
        sets.append(InstallSet(package.file, "package", package.file, 1, list(package.base),
                               problems=list(package.problems)))
    for extra in package.extras:
        sets.append(InstallSet(f"{package.file} [{extra}]", "extra", package.file, 1,
                               [*package.base, *_expand_extras(package, [extra])]))
    for group in package.groups:
        sets.append(InstallSet(f"{package.file} (group {group})", "group", package.file, 1,
                               _group(package, group, set())))
    if package.build:
        sets.append(InstallSet(f"{package.file} (build)", "build", package.file, 1, list(package.build)))
    return [s for s in sets if s.declarations or s.kind == "package" and package.base]


def _group(package: PackageDecls, group: str, seen: set[str]) -> list[Declaration]:
    if group in seen:
        return []
    seen.add(group)
    found: list[Declaration] = []
    for member in package.groups.get(group, []):
        found += _group(package, member, seen) if isinstance(member, str) else [member]
    return found


def _join(base_dir: str, path: str) -> str | None:
    """``path`` relative to ``base_dir`` inside the tree, or None when it leaves the tree."""
    if path.startswith(("/", "~")):
        return None
    joined = posixpath.normpath(posixpath.join(base_dir, path))
    return None if joined == ".." or joined.startswith("../") else ("" if joined == "." else joined)


def _apply(tree: _Tree, target: InstallSet, entries: Iterable[PipEntry], base_dir: str, depth: int,
           seen: set[str]) -> None:
    """Add ``entries`` (paths relative to ``base_dir``) to ``target``, following -r, -c and packages."""
    for entry in entries:
        if entry.kind == "requirement" and entry.declaration:
            target.declarations.append(entry.declaration)
        elif entry.kind == "index":
            target.indexes.append(entry.value)
        elif entry.kind == "url":
            target.urls.append(entry.value)
        elif entry.kind in ("include", "constraint"):
            _include(tree, target, entry, base_dir, depth, seen)
        elif entry.kind == "package":
            _install_package(tree, target, entry, base_dir)


def _include(tree: _Tree, target: InstallSet, entry: PipEntry, base_dir: str, depth: int, seen: set[str]) -> None:
    rel = _join(base_dir, entry.value)
    where = f"{target.file}:{entry.line}"
    if rel is None:
        target.problems.append(f"{where}: {entry.value} is outside the repository; not read")
        return
    if rel in seen or depth >= MAX_INCLUDE_DEPTH:
        return
    text = tree.text(rel)
    if text is None:
        target.problems.append(f"{where}: {entry.value} is not in the repository")
        return
    seen.add(rel)
    entries = requirements_file(rel, text)
    if entry.kind == "constraint":
        target.constraint_files.append(rel)
        target.constraints += [e.declaration for e in entries if e.kind == "requirement" and e.declaration]
        return
    target.includes.append(rel)
    _apply(tree, target, entries, posixpath.dirname(rel), depth + 1, seen)


def _install_package(tree: _Tree, target: InstallSet, entry: PipEntry, base_dir: str) -> None:
    rel = _join(base_dir, entry.value)
    package = _package_at(tree, rel) if rel is not None else None
    if package is None:
        target.problems.append(f"{target.file}:{entry.line}: installs {entry.value}, whose dependencies are not "
                               "declared in the repository")
        return
    target.includes.append(package.file + (f" [{','.join(entry.extras)}]" if entry.extras else ""))
    target.declarations += [*package.base, *_expand_extras(package, entry.extras)]


def _requirements_set(tree: _Tree, rel: str) -> InstallSet:
    target = InstallSet(rel, "requirements", rel, 1, rocm=_is_rocm_name(rel))
    _apply(tree, target, requirements_file(rel, tree.text(rel) or ""), posixpath.dirname(rel), 0, {rel})
    return target


def _conda_set(tree: _Tree, rel: str) -> InstallSet | None:
    try:
        decls = conda_environment(rel, tree.text(rel) or "")
    except _PARSE_ERRORS as error:
        tree.unreadable.append(f"{rel}: {str(error).splitlines()[0] if str(error) else type(error).__name__}")
        return None
    target = InstallSet(rel, "conda", rel, 1, conda=decls.conda, rocm=_is_rocm_name(rel))
    _apply(tree, target, decls.pip, posixpath.dirname(rel), 0, {rel})
    return target if target.declarations or target.conda else None


def _docker_sets(tree: _Tree, rel: str) -> list[InstallSet]:
    text = tree.text(rel) or ""
    bases = dockerfile_bases(text)
    sets = []
    for install in dockerfile_installs(rel, text):
        image = next((image for line, image in reversed(bases) if line <= install.line), "")
        target = InstallSet(f"{rel}:{install.line}", "dockerfile", rel, install.line, image=image,
                            rocm=is_rocm_image(image))
        # The build context is usually the repository root (COPY . /app); a folder of its own otherwise.
        context = "" if all(_resolvable_from(tree, e, "") for e in install.entries) else posixpath.dirname(rel)
        _apply(tree, target, install.entries, context, 0, set())
        names = {d.name for d in target.declarations}
        if names <= _TOOLING and not target.includes and not target.urls:
            continue  # upgrading pip and its build tools: nothing of the project's
        sets.append(target)
    return sets


def _resolvable_from(tree: _Tree, entry: PipEntry, base_dir: str) -> bool:
    if entry.kind in ("include", "constraint"):
        rel = _join(base_dir, entry.value)
        return rel is not None and rel in tree.files
    if entry.kind == "package":
        rel = _join(base_dir, entry.value)
        return rel is not None and _package_at(tree, rel) is not None
    return True


def split_image(image: str) -> tuple[str, str]:
    """("rocm/pytorch", "rocm7.2_ubuntu24.04_py3.12_pytorch_release_2.7.1") from an image reference."""
    reference = image.split("@", 1)[0]
    last = reference.rsplit("/", 1)[-1]
    if ":" in last:
        repository, tag = reference.rsplit(":", 1)
        return repository.lower(), tag
    return reference.lower(), ""


def is_rocm_image(image: str) -> bool:
    repository, tag = split_image(image)
    return repository.startswith("rocm/") or "rocm" in tag.lower()


def read_install_sets(tree_root: Path, exclude_globs: Iterable[str]) -> tuple[list[InstallSet], list[str]]:
    """Every install set of the tree (at most ``MAX_SETS``), and the files that could not be parsed."""
    files = {f.rel: f for f in walk_tree(tree_root, exclude_globs)}
    tree = _Tree(files, {})
    _read_packages(tree)
    sets: list[InstallSet] = []
    for directory in sorted(tree.packages):
        sets += _package_sets(directory, tree.packages[directory])
    for rel, file in files.items():
        kind = build_kind(rel)
        if file.size > MAX_FILE_BYTES or kind not in ("requirements", "conda", "dockerfile"):
            continue
        if kind == "requirements":
            sets.append(_requirements_set(tree, rel))
        elif kind == "conda" and (conda := _conda_set(tree, rel)):
            sets.append(conda)
        elif kind == "dockerfile":
            sets += _docker_sets(tree, rel)
    only_constraints = {f for s in sets for f in s.constraint_files} - {f for s in sets for f in s.includes}
    sets = [s for s in sets if (s.declarations or s.conda or s.urls or s.problems)
            and not (s.kind == "requirements" and s.file in only_constraints)]
    seen: dict[str, int] = {}
    for install_set in sets:  # two pip commands on one Dockerfile line: "Dockerfile:36", "Dockerfile:36 (2)"
        seen[install_set.id] = seen.get(install_set.id, 0) + 1
        if seen[install_set.id] > 1:
            install_set.id = f"{install_set.id} ({seen[install_set.id]})"
    if len(sets) > MAX_SETS:
        tree.unreadable.append(f"{len(sets)} install sets; the first {MAX_SETS} are reported")
    return sets[:MAX_SETS], tree.unreadable

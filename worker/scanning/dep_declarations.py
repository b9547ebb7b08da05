"""Every Python dependency a tree declares, read file by file with real parsers (nothing is run).

Each reader turns one file into ``PipEntry`` rows, the same vocabulary pip's own command line
and requirements files use: a requirement (``packaging``), an included requirements file
(``-r``), a constraints file (``-c``), the project itself (``.``, ``-e .[extra]``), an index
option. ``dep_sets`` composes these into the install sets a user would install from.

Sources: ``requirements*.txt`` anywhere and any ``requirements/`` folder (pip's line format,
options split with shlex), ``pyproject.toml`` (tomllib: ``[project]`` dependencies and extras,
PEP 735 ``[dependency-groups]``, ``[build-system] requires``), ``setup.py`` (``ast``: literal
``install_requires``/``extras_require``/``setup_requires``, or names bound to literals at module
level), ``setup.cfg`` (configparser), conda ``environment*.yml`` (PyYAML: its ``pip:`` list, and
conda packages by name); Dockerfiles' ``pip install`` commands are read by ``dockerfiles``.
"""
from __future__ import annotations

import ast
import configparser
import re
import shlex
import tomllib
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field

import yaml
from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name

# conda package names that are pip packages under another name ("" = not a package of the project)
_CONDA_TO_PIP = {"pytorch": "torch", "python": "", "pip": ""}
CONDA_CUDA = frozenset({"pytorch-cuda", "cudatoolkit", "cuda-toolkit", "cuda", "cudnn", "nccl", "cuda-nvcc",
                        "cuda-runtime"})


@dataclass(frozen=True)
class Declaration:
    name: str  # canonical name ("flash-attn"); for conda-only packages the conda name
    requirement: str  # normalised requirement text ("torch==2.5.1"), empty for conda-only packages
    file: str
    line: int
    origin: str  # requirements | pyproject | setup.py | setup.cfg | conda | dockerfile
    resolvable: bool  # pip can resolve it from an index (no URL, path or conda-only package)
    note: str = ""  # why it is not resolvable

    def to_dict(self) -> dict[str, object]:
        return asdict(self)


@dataclass(frozen=True)
class PipEntry:
    """One item of a pip command line or requirements file."""

    kind: str  # requirement | include | constraint | package | url | index
    line: int
    value: str = ""  # include/constraint/package: the path as written ("." is the project); url, index: the URL
    extras: tuple[str, ...] = ()  # package: the extras asked for (".[deepspeed]")
    declaration: Declaration | None = None


@dataclass
class PackageDecls:
    """What a Python package's own metadata declares (pyproject.toml, setup.py or setup.cfg)."""

    file: str
    base: list[Declaration] = field(default_factory=list)
    extras: dict[str, list[Declaration]] = field(default_factory=dict)
    groups: dict[str, list[Declaration | str]] = field(default_factory=dict)  # str: an included group
    build: list[Declaration] = field(default_factory=list)
    name: str = ""  # the project's own name, to expand "name[extra]" self-references
    dynamic: list[str] = field(default_factory=list)  # what the file leaves to another reader or to code
    problems: list[str] = field(default_factory=list)


def parse_requirement(text: str, file: str, line: int, origin: str) -> Declaration | None:
    text = text.strip()
    if not text:
        return None
    try:
        req = Requirement(text)
    except InvalidRequirement:
        return None
    name = canonicalize_name(req.name)
    if req.url:  # a direct reference may point anywhere, even at the host's disk: never handed to pip
        return Declaration(name, str(req), file, line, origin, False, "direct URL reference")
    return Declaration(name, str(req), file, line, origin, True)


def _line_of(lines: list[str], needle: str) -> int:
    return next((n for n, line in enumerate(lines, 1) if needle in line), 1)


# --- pip's command line and requirements files ------------------------------------------------
_FILE_OPTIONS = {"-r": "include", "--requirement": "include", "-c": "constraint", "--constraint": "constraint"}
_INDEX_OPTIONS = {"-i", "--index-url", "--extra-index-url", "-f", "--find-links"}
_TAKES_VALUE = {"-e", "--editable", "--target", "-t", "--prefix", "--root", "--platform", "--python-version",
                "--implementation", "--abi", "--trusted-host", "--cache-dir", "--src", "--progress-bar", "--timeout",
                "--retries", "--config-settings", "-C", "--hash", "--global-option", "--no-binary", "--only-binary",
                "--upgrade-strategy", "--report", "--log", "--proxy", "--cert", "--client-cert", "--exists-action",
                "--root-user-action", "--python", "--install-option", "--keyring-provider"}


def _split_option(word: str) -> tuple[str, str | None]:
    """``--requirement=x`` -> (--requirement, x); ``-rx`` -> (-r, x); others unchanged."""
    if word.startswith("--") and "=" in word:
        name, value = word.split("=", 1)
        return name, value
    if len(word) > 2 and word[:2] in ("-r", "-c", "-e", "-i", "-f") and not word.startswith("--"):
        return word[:2], word[2:]
    return word, None


def _extras(text: str) -> tuple[str, ...]:
    return tuple(e.strip() for e in text.strip("[]").split(",") if e.strip())


def _positional(word: str, file: str, line: int, origin: str, editable: bool) -> PipEntry | None:
    """A positional argument: a requirement, a local package directory ("." is the project), or a URL."""
    path, bracket, rest = word.partition("[")
    if path in (".", "./"):
        return PipEntry("package", line, ".", _extras(rest) if bracket else ())
    if "@" in word and not word.startswith(("git+", "/", ".")):
        declaration = parse_requirement(word, file, line, origin)
        if declaration:
            return PipEntry("requirement", line, declaration=declaration)
    if "://" in word or word.startswith("git+"):
        return PipEntry("url", line, word)
    if editable or path.startswith((".", "/", "~")) or "/" in path or path.endswith((".whl", ".tar.gz", ".zip")):
        return PipEntry("package", line, path.rstrip("/") or ".", _extras(rest) if bracket else ())
    declaration = parse_requirement(word, file, line, origin)
    return PipEntry("requirement", line, declaration=declaration) if declaration else None


def pip_arguments(words: list[str], file: str, line: int, origin: str) -> Iterator[PipEntry]:
    """The entries of ``pip install WORDS`` (or of one requirements-file line split into words)."""
    pending: str | None = None
    for word in words:
        if pending is not None:
            option, pending = pending, None
            yield from _option_value(option, word, file, line, origin)
            continue
        if word == "--":
            continue
        if word.startswith("-"):
            option, value = _split_option(word)
            if option in _FILE_OPTIONS or option in _INDEX_OPTIONS or option in _TAKES_VALUE or option in ("-e",):
                if value is None:
                    pending = option
                else:
                    yield from _option_value(option, value, file, line, origin)
            continue
        entry = _positional(word, file, line, origin, editable=False)
        if entry:
            yield entry


def _option_value(option: str, value: str, file: str, line: int, origin: str) -> Iterator[PipEntry]:
    if option in _FILE_OPTIONS:
        yield PipEntry(_FILE_OPTIONS[option], line, value)
    elif option in _INDEX_OPTIONS:
        yield PipEntry("index", line, value)
    elif option in ("-e", "--editable"):
        entry = _positional(value, file, line, origin, editable=True)
        if entry:
            yield entry


def logical_lines(text: str) -> Iterator[tuple[int, str]]:
    """Lines with backslash continuations joined, numbered by their first physical line."""
    start, buffer = 0, list[str]()
    for number, raw in enumerate(text.splitlines(), 1):
        if not buffer:
            start = number
        stripped = raw.rstrip()
        if stripped.endswith("\\"):
            buffer.append(stripped[:-1])
            continue
        buffer.append(stripped)
        yield start, " ".join(buffer)
        buffer = []
    if buffer:
        yield start, " ".join(buffer)


def _strip_comment(line: str) -> str:
    if line.lstrip().startswith("#"):
        return ""
    return re.split(r"\s#", line, maxsplit=1)[0].strip()


def requirements_file(rel: str, text: str) -> list[PipEntry]:
    """pip's requirements-file format: options start with "-", anything else is one requirement
    (markers and all), with per-requirement options such as ``--hash`` after it."""
    entries: list[PipEntry] = []
    for number, raw in logical_lines(text):
        line = _strip_comment(raw)
        if not line:
            continue
        if line.startswith("-"):
            try:
                words = shlex.split(line)
            except ValueError:
                continue
            entries += pip_arguments(words, rel, number, "requirements")
            continue
        requirement = re.split(r"\s--?[a-z]", line, maxsplit=1)[0].strip()
        if " " in requirement:  # markers or "name @ url": one requirement
            declaration = parse_requirement(requirement, rel, number, "requirements")
            entry = PipEntry("requirement", number, declaration=declaration) if declaration else None
        else:
            entry = _positional(requirement, rel, number, "requirements", editable=False)
        if entry:
            entries.append(entry)
    return entries


# --- package metadata ----------------------------------------------------------------------------
def _declared(items: object, rel: str, lines: list[str], origin: str) -> list[Declaration]:
    found = []
    for item in items if isinstance(items, list) else []:
        if isinstance(item, str) and (declaration := parse_requirement(item, rel, _line_of(lines, item), origin)):
            found.append(declaration)
    return found


def pyproject(rel: str, text: str) -> PackageDecls:
    data = tomllib.loads(text)
    lines = text.splitlines()
    project = data["project"] if isinstance(data.get("project"), dict) else {}
    decls = PackageDecls(rel, name=str(project.get("name", "")))
    decls.base = _declared(project.get("dependencies", []), rel, lines, "pyproject")
    extras = project.get("optional-dependencies", {})
    for extra, items in (extras.items() if isinstance(extras, dict) else []):
        decls.extras[str(extra)] = _declared(items, rel, lines, "pyproject")
    groups = data.get("dependency-groups", {})
    for group, items in (groups.items() if isinstance(groups, dict) else []):
        members: list[Declaration | str] = []
        for item in items if isinstance(items, list) else []:
            if isinstance(item, dict) and isinstance(item.get("include-group"), str):
                members.append(str(item["include-group"]))
            elif isinstance(item, str) and (d := parse_requirement(item, rel, _line_of(lines, item), "pyproject")):
                members.append(d)
        decls.groups[str(group)] = members
    build = data.get("build-system", {})
    decls.build = _declared(build.get("requires", []) if isinstance(build, dict) else [], rel, lines, "pyproject")
    dynamic = project.get("dynamic", [])
    decls.dynamic = [str(d) for d in dynamic if d in ("dependencies", "optional-dependencies")] \
        if isinstance(dynamic, list) else []
    if not project and not decls.build and not decls.groups:
        decls.dynamic.append("dependencies")
    return decls


def _module_literals(tree: ast.Module) -> dict[str, ast.expr]:
    """Module-level ``NAME = <expression>`` bindings (the last one wins, as when the file runs)."""
    bound: dict[str, ast.expr] = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            bound[node.targets[0].id] = node.value
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.value is not None:
            bound[node.target.id] = node.value
    return bound


def _literal(node: ast.expr, bound: dict[str, ast.expr]) -> object:
    if isinstance(node, ast.Name) and node.id in bound:
        node = bound[node.id]
    try:
        return ast.literal_eval(node)
    except (ValueError, SyntaxError, TypeError):
        return None


def _strings(value: object) -> list[str] | None:
    if isinstance(value, str):
        return [line for line in value.splitlines() if line.strip()]
    if isinstance(value, (list, tuple)) and all(isinstance(v, str) for v in value):
        return [str(v) for v in value]
    return None


def setup_py(rel: str, text: str) -> PackageDecls:
    tree = ast.parse(text, filename=rel)
    bound = _module_literals(tree)
    decls = PackageDecls(rel)
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call) or not any(k.arg in ("install_requires", "extras_require", "setup_requires")
                                                     for k in node.keywords):
            continue
        for keyword in node.keywords:
            if keyword.arg == "name" and isinstance(value := _literal(keyword.value, bound), str):
                decls.name = value
            if keyword.arg not in ("install_requires", "extras_require", "setup_requires"):
                continue
            value = _literal(keyword.value, bound)
            line = keyword.value.lineno
            if keyword.arg == "extras_require" and isinstance(value, dict):
                for extra, items in value.items():
                    decls.extras[str(extra)] = [d for s in _strings(items) or []
                                                if (d := parse_requirement(s, rel, line, "setup.py"))]
                continue
            strings = _strings(value)
            if strings is None:
                decls.dynamic.append(keyword.arg)
                decls.problems.append(f"{rel}:{line}: {keyword.arg} is computed when setup.py runs; it is not run here")
                continue
            target = decls.base if keyword.arg == "install_requires" else decls.build
            target += [d for s in strings if (d := parse_requirement(s, rel, line, "setup.py"))]
    return decls


def setup_cfg(rel: str, text: str) -> PackageDecls:
    parser = configparser.ConfigParser(interpolation=None)
    parser.read_string(text)
    lines = text.splitlines()
    decls = PackageDecls(rel, name=parser.get("metadata", "name", fallback=""))

    def read(value: str) -> list[Declaration]:
        return [d for item in value.splitlines() if item.strip()
                and (d := parse_requirement(item, rel, _line_of(lines, item.strip()), "setup.cfg"))]

    decls.base = read(parser.get("options", "install_requires", fallback=""))
    decls.build = read(parser.get("options", "setup_requires", fallback=""))
    if parser.has_section("options.extras_require"):
        decls.extras = {key: read(value) for key, value in parser.items("options.extras_require")}
    return decls


@dataclass
class CondaDecls:
    file: str
    pip: list[PipEntry] = field(default_factory=list)
    conda: list[Declaration] = field(default_factory=list)  # conda packages: listed, never resolved with pip


def conda_environment(rel: str, text: str) -> CondaDecls:
    data = yaml.safe_load(text)
    lines = text.splitlines()
    decls = CondaDecls(rel)
    for item in data.get("dependencies", []) if isinstance(data, dict) else []:
        if isinstance(item, dict):
            for pip_item in item.get("pip", []) or []:
                if not isinstance(pip_item, str):
                    continue
                number = _line_of(lines, pip_item)
                decls.pip += requirements_file(rel, pip_item) if pip_item.startswith("-") else [
                    PipEntry("requirement", number, declaration=d)
                    for d in [parse_requirement(pip_item, rel, number, "conda")] if d]
        elif isinstance(item, str):
            conda_name = re.split(r"[=<>!\s]", item.strip(), maxsplit=1)[0].split("::")[-1]
            pip_name = _CONDA_TO_PIP.get(conda_name, conda_name)
            if not pip_name and conda_name not in CONDA_CUDA:
                continue  # python, pip: the environment itself
            note = "CUDA conda package" if conda_name in CONDA_CUDA else "conda package"
            decls.conda.append(Declaration(canonicalize_name(pip_name or conda_name), "", rel, _line_of(lines, item),
                                           "conda", False, note))
    return decls

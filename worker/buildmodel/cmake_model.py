"""CMake's own model of a configured project, from its File API reply (``codemodel-v2``).

A configure run with the query ``.cmake/api/v1/query/codemodel-v2`` in its build folder leaves
``.cmake/api/v1/reply/index-*.json``, which names the codemodel file, which names one file per target.
This module turns those JSON objects into typed data; it reads nothing itself (``load`` gives the parsed
object of a reply file by name, or None), so callers decide how the reply is reached.

Paths: a target's sources and include directories are tree-relative POSIX paths where they lie in the
source tree (``source_root`` as CMake saw it), else as CMake printed them; artifacts are relative to
the top build folder.
"""
from __future__ import annotations

import posixpath
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

JsonLoader = Callable[[str], Mapping[str, object] | None]
QUERY = ".cmake/api/v1/query/codemodel-v2"
REPLY = ".cmake/api/v1/reply"


class ModelError(ValueError):
    """The reply is missing or not what the File API documents."""


@dataclass(frozen=True)
class Source:
    path: str
    language: str  # "" when the target does not compile it (headers, files of no enabled language)
    generated: bool = False


@dataclass
class Target:
    name: str
    type: str  # EXECUTABLE, STATIC_LIBRARY, SHARED_LIBRARY, MODULE_LIBRARY, OBJECT_LIBRARY, UTILITY, ...
    folder: str  # the source folder of the CMakeLists.txt that declares it, tree-relative ("" at the top)
    declared_at: str  # "CMakeLists.txt:12"
    artifacts: list[str] = field(default_factory=list)
    sources: list[Source] = field(default_factory=list)
    include_dirs: list[str] = field(default_factory=list)
    defines: list[str] = field(default_factory=list)
    compile_flags: dict[str, list[str]] = field(default_factory=dict)  # language -> fragments
    link_libraries: list[str] = field(default_factory=list)  # link fragments of role "libraries"
    dependencies: list[str] = field(default_factory=list)  # names of the project's targets it depends on

    @property
    def languages(self) -> list[str]:
        return sorted({source.language for source in self.sources if source.language})

    @property
    def builds_code(self) -> bool:
        return self.type in BUILT_TYPES and bool(self.artifacts)


@dataclass
class CMakeModel:
    cmake_version: str
    generator: str  # "Unix Makefiles", "Ninja", ...
    source_root: str  # as CMake saw it (a path in the sandbox)
    build_root: str
    targets: list[Target] = field(default_factory=list)

    def target(self, name: str) -> Target | None:
        return next((target for target in self.targets if target.name == name), None)

    @property
    def built_targets(self) -> list[Target]:
        return [target for target in self.targets if target.builds_code]


BUILT_TYPES = frozenset({"EXECUTABLE", "STATIC_LIBRARY", "SHARED_LIBRARY", "MODULE_LIBRARY", "OBJECT_LIBRARY"})


def read_model(load: JsonLoader, index_name: str) -> CMakeModel:
    """The model from the reply whose index file is ``index_name`` (reply-relative)."""
    index = _require(load, index_name)
    cmake = _object(index.get("cmake"))
    version = str(_object(cmake.get("version")).get("string", ""))
    generator = str(_object(cmake.get("generator")).get("name", ""))
    reply = _object(index.get("reply"))
    entry = _object(reply.get("codemodel-v2"))
    if not entry.get("jsonFile"):
        raise ModelError("the File API reply has no codemodel (the query was not answered)")
    codemodel = _require(load, str(entry["jsonFile"]))
    paths = _object(codemodel.get("paths"))
    model = CMakeModel(version, generator, str(paths.get("source", "")), str(paths.get("build", "")))
    configurations = _list(codemodel.get("configurations"))
    if not configurations:
        return model
    configuration = _object(configurations[0])
    directories = [_object(d) for d in _list(configuration.get("directories"))]
    entries = [_object(t) for t in _list(configuration.get("targets"))]
    names = {str(t.get("id", "")): str(t.get("name", "")) for t in entries}
    for item in entries:
        folder = _folder(directories, item.get("directoryIndex"))
        model.targets.append(_target(_require(load, str(item.get("jsonFile", ""))), folder, model.source_root, names))
    return model


def _target(data: Mapping[str, object], folder: str, source_root: str, names: Mapping[str, str]) -> Target:
    groups = [_object(group) for group in _list(data.get("compileGroups"))]
    target = Target(str(data.get("name", "")), str(data.get("type", "")), folder, _declared_at(data))
    target.artifacts = [str(_object(a).get("path", "")) for a in _list(data.get("artifacts"))]
    for raw in _list(data.get("sources")):
        source = _object(raw)
        index = source.get("compileGroupIndex")
        language = str(groups[index].get("language", "")) if isinstance(index, int) and index < len(groups) else ""
        target.sources.append(Source(_relative(str(source.get("path", "")), source_root), language,
                                     bool(source.get("isGenerated", False))))
    for group in groups:
        language = str(group.get("language", ""))
        for include in _list(group.get("includes")):
            path = _relative(str(_object(include).get("path", "")), source_root)
            if path not in target.include_dirs:
                target.include_dirs.append(path)
        for define in _list(group.get("defines")):
            text = str(_object(define).get("define", ""))
            if text and text not in target.defines:
                target.defines.append(text)
        fragments = [str(_object(f).get("fragment", "")) for f in _list(group.get("compileCommandFragments"))]
        known = target.compile_flags.setdefault(language, [])
        known += [f for f in fragments if f and f not in known]
    link = _object(data.get("link"))
    target.link_libraries = [str(_object(f).get("fragment", "")) for f in _list(link.get("commandFragments"))
                             if _object(f).get("role") == "libraries"]
    target.dependencies = [names.get(str(_object(d).get("id", "")), str(_object(d).get("id", "")))
                           for d in _list(data.get("dependencies"))]
    return target


def _declared_at(data: Mapping[str, object]) -> str:
    """File and line of the command that declared the target, from its backtrace."""
    graph = _object(data.get("backtraceGraph"))
    nodes, files = _list(graph.get("nodes")), _list(graph.get("files"))
    index = data.get("backtrace")
    if not isinstance(index, int) or index >= len(nodes):
        return ""
    node = _object(nodes[index])
    file_index = node.get("file")
    name = str(files[file_index]) if isinstance(file_index, int) and file_index < len(files) else ""
    return f"{name}:{node['line']}" if "line" in node else name


def _folder(directories: list[Mapping[str, object]], index: object) -> str:
    if not isinstance(index, int) or index >= len(directories):
        return ""
    source = str(directories[index].get("source", "."))
    return "" if source == "." else source


def _relative(path: str, source_root: str) -> str:
    """Tree-relative where ``path`` lies in the source tree (CMake prints those relative already)."""
    if not posixpath.isabs(path):
        return posixpath.normpath(path)
    root = source_root.rstrip("/")
    if root and (path == root or path.startswith(root + "/")):
        return posixpath.relpath(path, root)
    return path


def _require(load: JsonLoader, name: str) -> Mapping[str, object]:
    if not name or "/" in name or name.startswith("."):
        raise ModelError(f"the File API reply names an unexpected file: {name!r}")
    data = load(name)
    if data is None:
        raise ModelError(f"the File API reply file {name} is missing or not JSON")
    return data


def _object(value: object) -> Mapping[str, object]:
    return value if isinstance(value, Mapping) else {}


def _list(value: object) -> list[object]:
    return value if isinstance(value, list) else []

"""What a PyTorch extension's build would compile, read without evaluating anything.

* ``CUDAExtension``/``CppExtension`` calls in a ``setup.py`` (or any Python file of the tree):
  ``sources``, ``extra_compile_args`` (a list, or ``{"cxx": [...], "nvcc": [...]}``), ``include_dirs`` and
  ``define_macros``; paths relative to the setup script's folder, as setuptools reads them.
* ``torch.utils.cpp_extension.load(...)`` at run time: ``sources``, ``extra_cflags``, ``extra_cuda_cflags``,
  ``extra_include_paths``; paths relative to the script (``os.path.join(os.path.dirname(__file__), ...)``
  and ``Path(__file__).parent / ...`` are read as such). ``load_inline`` sources are code in strings: named,
  not compiled here.
* A CMake project with ``find_package(Torch)``: its targets' sources, include directories and definitions
  (``worker/scanning/build_units.py``).

Python is read with ``ast``: literals, names bound at module level (else every value a function or block
binds them to, and what ``+=`` adds), ``+`` of lists, f-strings of known values, ``os.path.join``,
``glob.glob`` over the tree. Anything else is named in ``notes`` as computed.
"""
from __future__ import annotations

import ast
import fnmatch
import posixpath
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Literal, cast

from worker.scanning.build_units import cmake_units
from worker.scanning.files import walk_tree
from worker.scanning.project_kind import ProjectKind

How = Literal["setup.py", "load", "load_inline", "cmake"]
_SETUP_CALLS = frozenset({"CUDAExtension", "CppExtension"})
_LOAD_CALLS = frozenset({"load", "load_inline"})
_COMPILED = (".cu", ".cpp", ".cc", ".cxx", ".c", ".hip")
_TREE = "\0tree\0"  # marks a path already relative to the tree's top: __file__ is _TREE + "/" + its path


@dataclass
class ExtensionUnit:
    name: str
    how: How
    declared_in: str  # "setup.py:9"
    directory: str  # the folder its build runs in, tree-relative ("." for the root)
    sources: list[str] = field(default_factory=list)  # tree-relative, as in the original tree
    cxx_flags: list[str] = field(default_factory=list)
    nvcc_flags: list[str] = field(default_factory=list)
    include_dirs: list[str] = field(default_factory=list)  # tree-relative
    defines: list[str] = field(default_factory=list)  # NAME or NAME=VALUE
    notes: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, object]:
        return asdict(self)


def extension_units(tree: Path, exclude_globs: tuple[str, ...], cmake_dirs: list[str]) -> list[ExtensionUnit]:
    """Every extension the tree's builds declare; ``cmake_dirs``: folders whose CMake finds Torch."""
    units: list[ExtensionUnit] = []
    for tree_file in walk_tree(tree, exclude_globs):
        if tree_file.name.endswith(".py"):
            try:
                text = (tree / tree_file.rel).read_text(encoding="utf-8", errors="replace")
                module = ast.parse(text, filename=tree_file.rel)
            except (OSError, SyntaxError, ValueError, RecursionError):
                continue
            units += _python_units(tree, tree_file.rel, module, exclude_globs)
    for directory in cmake_dirs:
        units += _cmake_units(tree, directory)
    return units


CORE_BUILD_FILES = ("CMakeLists.txt", "Makefile", "makefile", "GNUmakefile")


def core_and_bindings(tree: Path, units: list[ExtensionUnit]) -> list[str] | None:
    """The extensions' folders when the tree also has a C/C++ core under its own build at the top (a
    ``CMakeLists.txt`` or Makefile that does not find Torch, no extension built from the top); else None."""
    build_file = next((tree / name for name in CORE_BUILD_FILES if (tree / name).is_file()), None)
    if build_file is None or not units or any(u.directory == "." for u in units):
        return None
    if "find_package(Torch" in build_file.read_text(encoding="utf-8", errors="replace").replace(" ", ""):
        return None
    return sorted({u.directory for u in units})


def torch_cmake_dirs(kind: ProjectKind) -> list[str]:
    """Folders whose CMakeLists.txt finds Torch (from the scan's markers)."""
    found = []
    for marker in kind.extension_markers:
        if marker.endswith(": find_package(Torch)"):
            rel = marker.split(":", 1)[0]
            found.append(rel.rsplit("/", 1)[0] if "/" in rel else ".")
    return found


class _Reader:
    """Values of one module's expressions, as far as they are literal."""

    def __init__(self, tree: Path, rel: str, module: ast.Module, globs: tuple[str, ...]) -> None:
        self.tree, self.rel, self.globs = tree, rel, globs
        self.folder = posixpath.dirname(rel) or "."
        self.bindings: dict[str, ast.expr] = {}  # module level: the last assignment
        self.nested: dict[str, list[ast.expr]] = {}  # in functions and blocks: every assignment
        self.extended: dict[str, list[ast.expr]] = {}  # ``name += [...]`` anywhere
        for node in module.body:
            if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
                self.bindings[node.targets[0].id] = node.value
        for inner in ast.walk(module):
            if isinstance(inner, ast.Assign) and len(inner.targets) == 1 and isinstance(inner.targets[0], ast.Name):
                self.nested.setdefault(inner.targets[0].id, []).append(inner.value)
            elif isinstance(inner, ast.AugAssign) and isinstance(inner.op, ast.Add) and isinstance(inner.target, ast.Name):
                self.extended.setdefault(inner.target.id, []).append(inner.value)
        self._resolving: set[str] = set()
        self.notes: list[str] = []

    def binding(self, name: str) -> list[ast.expr]:
        """What ``name`` is bound to: its module-level value, else every value a function or block gives it
        (a build that lists its sources inside ``if build_extensions:`` or a ``make_extension()`` helper, as
        neural-graphics packages do: every configuration's sources are compiled)."""
        found = self.bindings.get(name)
        return [found] if found is not None else self.nested.get(name, [])

    def _name(self, node: ast.Name, what: str, depth: int) -> list[str]:
        values = self.binding(node.id)
        if not values or node.id in self._resolving:
            return self._computed(node, what)
        self._resolving.add(node.id)
        try:
            found = [s for value in values + self.extended.get(node.id, []) for s in self.strings(value, what, depth + 1)]
        finally:
            self._resolving.discard(node.id)
        return list(dict.fromkeys(found)) if len(values) > 1 or node.id in self.extended else found

    def strings(self, node: ast.expr | None, what: str, depth: int = 0) -> list[str]:
        if node is None:
            return []
        if depth > 24:
            return self._computed(node, what)
        if isinstance(node, (ast.List, ast.Tuple)):
            return [s for item in node.elts for s in self.strings(item, what, depth + 1)]
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
            left, right = self.strings(node.left, what, depth + 1), self.strings(node.right, what, depth + 1)
            if isinstance(node.left, ast.Constant) and len(left) == 1 and len(right) == 1:
                return [left[0] + right[0]]
            return left + right
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div):  # Path(__file__).parent / "csrc" / "x.cu"
            left, right = self.strings(node.left, what, depth + 1), self.strings(node.right, what, depth + 1)
            return [posixpath.join(left[0], right[0])] if len(left) == 1 and len(right) == 1 else []
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            return [node.value]
        if isinstance(node, ast.Name):
            if node.id == "__file__":
                return [f"{_TREE}/{self.rel}"]
            return self._name(node, what, depth)
        if isinstance(node, ast.JoinedStr):  # f"{root_dir}/include": each placeholder one known string
            return self._joined(node, what, depth)
        if isinstance(node, ast.Call):
            return self._call(node, what, depth)
        if isinstance(node, ast.Attribute) and node.attr == "parent":
            return [posixpath.dirname(v) for v in self.strings(node.value, what, depth + 1)]
        return self._computed(node, what)

    def _joined(self, node: ast.JoinedStr, what: str, depth: int) -> list[str]:
        noted = len(self.notes)
        parts = [[v.value] if isinstance(v, ast.Constant) and isinstance(v.value, str) else
                 self.strings(v.value, what, depth + 1) if isinstance(v, ast.FormattedValue) and
                 v.format_spec is None and v.conversion == -1 else [] for v in node.values]
        if all(len(part) == 1 for part in parts):
            return ["".join(part[0] for part in parts)]
        del self.notes[noted:]  # one note for the whole f-string
        return self._computed(node, what)

    def _call(self, node: ast.Call, what: str, depth: int) -> list[str]:
        name = _dotted(node.func)
        args = [self.strings(arg, what, depth + 1) for arg in node.args]
        if name in ("os.path.join", "posixpath.join", "path.join") and all(len(a) == 1 for a in args) and args:
            return [posixpath.join(*(a[0] for a in args))]
        if name in ("os.path.dirname", "path.dirname") and len(args) == 1 and len(args[0]) == 1:
            return [posixpath.dirname(args[0][0])]
        if name in ("os.path.abspath", "os.path.realpath", "path.abspath", "str", "Path", "pathlib.Path") \
                and len(args) == 1 and len(args[0]) == 1:
            return args[0]
        if isinstance(node.func, ast.Attribute) and node.func.attr in ("resolve", "absolute"):
            return self.strings(node.func.value, what, depth + 1)
        if name in ("glob.glob", "glob") and len(args) == 1 and len(args[0]) == 1:
            return self._glob(args[0][0])
        return self._computed(node, what)

    def _glob(self, pattern: str) -> list[str]:
        base = self.folder
        relative = self.path(pattern)
        if relative is None:
            return []
        found = []
        for tree_file in walk_tree(self.tree, self.globs):
            if fnmatch.fnmatch(tree_file.rel, relative):
                found.append(posixpath.relpath(tree_file.rel, base) if base != "." else tree_file.rel)
        return sorted(found)

    def path(self, value: str) -> str | None:
        """A path the module names, tree-relative; None when it leaves the tree."""
        if value.startswith(_TREE):
            joined = posixpath.normpath(value[len(_TREE):].lstrip("/") or ".")
        elif value.startswith("/"):
            return None
        else:
            joined = posixpath.normpath(posixpath.join(self.folder, value))
        return None if joined == ".." or joined.startswith("../") else joined

    def _computed(self, node: ast.expr, what: str) -> list[str]:
        self.notes.append(f"{self.rel}:{getattr(node, 'lineno', 0)}: {what} is computed ({ast.unparse(node)[:80]}); "
                          "not read")
        return []


def _dotted(node: ast.expr) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return f"{_dotted(node.value)}.{node.attr}"
    return ""


def _cpp_extension_names(module: ast.Module) -> dict[str, str]:
    """Local name -> cpp_extension name for ``from torch.utils.cpp_extension import load as jit_load``."""
    names = {}
    for node in ast.walk(module):
        if isinstance(node, ast.ImportFrom) and node.module == "torch.utils.cpp_extension":
            for alias in node.names:
                names[alias.asname or alias.name] = alias.name
    return names


def _python_units(tree: Path, rel: str, module: ast.Module, globs: tuple[str, ...]) -> list[ExtensionUnit]:
    imported = _cpp_extension_names(module)
    reader = _Reader(tree, rel, module, globs)
    units = []
    for node in ast.walk(module):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        if isinstance(func, ast.Name) and func.id in imported:
            called = imported[func.id]
        elif isinstance(func, ast.Attribute) and _dotted(func.value).endswith("cpp_extension"):
            called = func.attr
        else:
            continue
        if called in _SETUP_CALLS or called in _LOAD_CALLS:
            units.append(_unit(reader, node, called))
    return units


def _keyword(node: ast.Call, name: str, position: int | None = None) -> ast.expr | None:
    for keyword in node.keywords:
        if keyword.arg == name:
            return keyword.value
    return node.args[position] if position is not None and len(node.args) > position else None


def _unit(reader: _Reader, node: ast.Call, called: str) -> ExtensionUnit:
    how: How = "setup.py" if called in _SETUP_CALLS else cast(How, called)
    name_node = _keyword(node, "name", 0)
    names = reader.strings(name_node, "the extension's name") or _template(name_node)
    unit = ExtensionUnit(names[0] if names else "extension", how, f"{reader.rel}:{node.lineno}", reader.folder)
    if called == "load_inline":
        unit.notes.append(f"{unit.declared_in}: load_inline compiles sources held in strings at run time; they are "
                          "not compiled here")
        return unit
    for source in reader.strings(_keyword(node, "sources", 1), "sources"):
        path = reader.path(source)
        if path is None:
            unit.notes.append(f"{unit.declared_in}: source {source!r} lies outside the tree")
        elif path.endswith(_COMPILED) and path not in unit.sources:
            unit.sources.append(path)
    if how == "setup.py":
        _setup_flags(reader, node, unit)
    else:
        unit.cxx_flags = reader.strings(_keyword(node, "extra_cflags"), "extra_cflags")
        unit.nvcc_flags = reader.strings(_keyword(node, "extra_cuda_cflags"), "extra_cuda_cflags")
        unit.include_dirs = _dirs(reader, _keyword(node, "extra_include_paths"))
    unit.notes += reader.notes
    reader.notes = []
    return unit


def _template(node: ast.expr | None) -> list[str]:
    """An f-string name with what it leaves to run time in braces (``hashgrid._{compute_capability}_C``)."""
    if not isinstance(node, ast.JoinedStr):
        return []
    return ["".join(str(v.value) if isinstance(v, ast.Constant) else "{" + ast.unparse(v.value) + "}"
                    for v in node.values if isinstance(v, (ast.Constant, ast.FormattedValue)))]


def _setup_flags(reader: _Reader, node: ast.Call, unit: ExtensionUnit) -> None:
    args = _keyword(node, "extra_compile_args")
    if isinstance(args, ast.Call) and _dotted(args.func) == "torch_rocm.compile_args" and len(args.args) == 1:
        args = args.args[0]  # a delivered single-source setup.py: the CUDA build's own value, unchanged there
    if isinstance(args, ast.Name) and len(reader.binding(args.id)) == 1:
        args = reader.binding(args.id)[0]
    if isinstance(args, ast.Dict):
        for key, value in zip(args.keys, args.values):
            target = reader.strings(key, "a compile-args key") if key is not None else []
            if target == ["cxx"]:
                unit.cxx_flags = reader.strings(value, "extra_compile_args['cxx']")
            elif target == ["nvcc"]:
                unit.nvcc_flags = reader.strings(value, "extra_compile_args['nvcc']")
    elif args is not None:  # a list goes to both compilers, as BuildExtension passes it
        unit.cxx_flags = reader.strings(args, "extra_compile_args")
        unit.nvcc_flags = list(unit.cxx_flags)
    unit.include_dirs = _dirs(reader, _keyword(node, "include_dirs"))
    macros = _keyword(node, "define_macros")
    if isinstance(macros, (ast.List, ast.Tuple)):
        for item in macros.elts:
            pair = reader.strings(item, "define_macros") if isinstance(item, ast.Tuple) else []
            if pair:
                unit.defines.append(pair[0] if len(pair) == 1 else f"{pair[0]}={pair[1]}")


def _dirs(reader: _Reader, node: ast.expr | None) -> list[str]:
    return [p for p in (reader.path(d) for d in reader.strings(node, "include directories")) if p is not None]


def _cmake_units(tree: Path, directory: str) -> list[ExtensionUnit]:
    base = tree if directory == "." else tree / directory
    prefix = "" if directory == "." else directory + "/"
    units = []
    for target in cmake_units(base):
        sources = [prefix + s for s in target.sources if s.endswith(_COMPILED)]
        if sources:
            units.append(ExtensionUnit(target.name, "cmake", f"{prefix}{target.build_file or 'CMakeLists.txt'}",
                                       directory, sources, include_dirs=[prefix + d if d != "." else directory
                                                                         for d in target.include_dirs],
                                       defines=list(target.defines)))
    return units

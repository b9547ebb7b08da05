"""Targets of Makefiles read statically: variables (``include`` followed), explicit and pattern rules,
and the flags of the commands that build each target and its objects."""
from __future__ import annotations

import posixpath
import re
import shlex
from dataclasses import dataclass, field
from pathlib import Path

from worker.scanning.build_units import SOURCE_SUFFIXES, BuildUnit, UnitKind, inside_tree

MAKEFILE_NAMES = ("GNUmakefile", "makefile", "Makefile")
_ASSIGN = re.compile(r"^(?:override\s+|export\s+)*([A-Za-z_][\w.-]*)\s*(\+=|:=|::=|\?=|=)\s*(.*)$")
_RULE = re.compile(r"^([^\s:=#][^:=#]*?)\s*::?\s*(?!=)(.*)$")
_INCLUDE = re.compile(r"^-?s?include\s+(.+)$")
_REFERENCE = re.compile(r"\$(?:\(([^()$]*(?:\$[({][^(){}]*[)}][^()$]*)*)\)|\{([^{}$]*)\}|([A-Za-z@<^?*]))")
_COMPILER = re.compile(r"(?:^|[\s/])(?:hipcc|nvcc|clang\+\+|clang|g\+\+|gcc|cc|c\+\+|icpx|icc)(?:-\d+)?(?=\s|$)")
_CONDITIONAL = re.compile(r"^(ifeq|ifneq|ifdef|ifndef|else|endif)\b")
_SPECIAL = {".PHONY", ".SUFFIXES", ".DEFAULT", ".PRECIOUS", ".INTERMEDIATE", ".SECONDARY", ".DELETE_ON_ERROR"}
_DEFAULTS = {"CC": "cc", "CXX": "g++", "RM": "rm -f", "MAKE": "make"}


@dataclass
class _Rule:
    targets: list[str]
    prerequisites: str
    recipe: list[str] = field(default_factory=list)


@dataclass
class _Makefile:
    root: Path
    folder: str
    variables: dict[str, str] = field(default_factory=lambda: dict(_DEFAULTS))
    rules: list[_Rule] = field(default_factory=list)


def make_units(tree: Path, makefile: str) -> list[BuildUnit]:
    """Units of one Makefile (tree-relative path)."""
    parsed = _Makefile(tree, posixpath.dirname(makefile))
    _read(tree, makefile, parsed, depth=0)
    units = []
    wanted = _default_goal_closure(parsed)
    for rule in parsed.rules:
        for target in rule.targets:
            if target not in wanted or target.endswith((".o", ".obj")):
                continue
            unit = _unit(tree, parsed, rule, target, makefile)
            if unit is not None:
                units.append(unit)
    return units


def _default_goal_closure(parsed: _Makefile) -> set[str]:
    """The default goal (first ordinary target) and every target it needs, as make would build them."""
    rules = {t: r for r in parsed.rules for t in r.targets}
    goal = next((t for r in parsed.rules for t in r.targets if not t.startswith(".") and "%" not in t), None)
    pending, seen = [goal] if goal else [], set()
    while pending:
        target = pending.pop()
        if target in seen:
            continue
        seen.add(target)
        if target in rules:
            pending += _expand(rules[target].prerequisites, parsed, {}).split()
    return seen


def _logical_lines(text: str) -> list[str]:
    return text.replace("\\\r\n", " ").replace("\\\n", " ").splitlines()


def _read(tree: Path, rel: str, parsed: _Makefile, depth: int) -> None:
    path = tree / rel
    if depth > 8 or rel.startswith("..") or not inside_tree(tree, path) or not path.is_file():
        return
    current: _Rule | None = None
    branches: list[tuple[bool, bool]] = []
    for line in _logical_lines(path.read_text(errors="replace")):
        if line.startswith("\t") and not _CONDITIONAL.match(line.strip()):
            if current is not None and all(read for read, _ in branches):
                current.recipe.append(line.strip())
            continue
        code = line.split("#", 1)[0].strip()
        if not code or _track_conditional(code, branches, parsed) or not all(read for read, _ in branches):
            continue
        current = None
        if include := _INCLUDE.match(code):
            for name in _expand(include.group(1), parsed, {}).split():
                _read(tree, posixpath.normpath(posixpath.join(parsed.folder, name)), parsed, depth + 1)
        elif assign := _ASSIGN.match(code):
            _assign(parsed, *assign.groups())
        elif (rule := _RULE.match(code)) and not code.startswith(("ifeq", "ifneq", "ifdef", "ifndef", "else", "endif")):
            targets = [t for t in _expand(rule.group(1), parsed, {}).split() if t not in _SPECIAL]
            prerequisites, _, inline = rule.group(2).partition(";")
            current = _Rule(targets, prerequisites, [inline.strip()] if inline.strip() else [])
            parsed.rules.append(current)


def _track_conditional(code: str, branches: list[tuple[bool, bool]], parsed: _Makefile) -> bool:
    """Follow ifeq/ifdef/else/endif with (read, decided) per level. Conditions about Windows are false
    (we build on Linux), those on variables with static values are evaluated as a plain ``make`` would;
    both branches of any other condition (``$(shell ...)``) are read. Returns whether the line was a
    conditional."""
    match = _CONDITIONAL.match(code)
    if not match:
        return False
    keyword = match.group(1)
    if keyword == "endif":
        if branches:
            branches.pop()
    elif keyword == "else":
        if branches:
            read, decided = branches[-1]
            rest = _evaluate(code[4:].strip(), parsed)
            read = (not read if decided else True) if rest is None else (not read and rest)
            branches[-1] = (read, decided or rest is not None)
    else:
        value = _evaluate(code, parsed)
        branches.append((True if value is None else value, value is not None))
    return True


def _evaluate(code: str, parsed: _Makefile) -> bool | None:
    """A condition's value, or None when it cannot be known without running the build."""
    windows = _windows_condition(code)
    if windows is not None or not code:
        return windows
    keyword, _, argument = code.partition(" ")
    if any(word in argument for word in ("$(shell", "$(call", "${shell", "$(wildcard /", "$(origin")):
        return None
    if keyword in ("ifdef", "ifndef"):
        defined = bool(_expand(parsed.variables.get(argument.strip(), ""), parsed, {}).strip())
        return defined if keyword == "ifdef" else not defined
    if keyword in ("ifeq", "ifneq"):
        pair = re.match(r"^\((.*),(.*)\)$", argument.strip()) or re.match(r"^[\"'](.*)[\"']\s+[\"'](.*)[\"']$", argument.strip())
        if not pair:
            return None
        left, right = (_expand(side, parsed, {}).strip() for side in pair.groups())
        return (left == right) if keyword == "ifeq" else (left != right)
    return None


def _windows_condition(code: str) -> bool | None:
    """Whether a condition that tests for Windows holds here (ifeq ($(OS),Windows_NT) does not)."""
    if not code or not any(word in code for word in ("Windows_NT", "MINGW", "CYGWIN", "MSYS")):
        return None
    return code.startswith(("ifneq", "ifndef"))


def _assign(parsed: _Makefile, name: str, operator: str, value: str) -> None:
    if operator == "?=" and name in parsed.variables and name not in _DEFAULTS:
        return
    if operator == "+=":
        parsed.variables[name] = (parsed.variables.get(name, "") + " " + value).strip()
    elif operator in (":=", "::="):
        parsed.variables[name] = _expand(value, parsed, {})
    else:
        parsed.variables[name] = value


def _expand(text: str, parsed: _Makefile, automatic: dict[str, str], depth: int = 0) -> str:
    if depth > 16 or "$" not in text:
        return text

    def replace(match: re.Match[str]) -> str:
        inner = match.group(1) or match.group(2) or match.group(3) or ""
        if inner in automatic:
            return automatic[inner]
        function, _, argument = inner.partition(" ")
        if function == "wildcard":
            base, pattern = parsed.root / parsed.folder, argument.strip()
            if not pattern or pattern.startswith("/") or ".." in pattern:
                return ""  # outside the tree: unknown here
            return " ".join(sorted(p.relative_to(base).as_posix() for p in base.glob(pattern)))
        if function == "shell" and (which := re.match(r"\s*(?:which|command -v)\s+([\w.+-]+)", argument)):
            return which.group(1)
        if function == "subst" and argument.count(",") >= 2:
            old, new, value = argument.split(",", 2)
            return _expand(value, parsed, automatic, depth + 1).replace(old, new)
        if " " in inner or ":" in inner:
            return ""  # shell, patsubst and friends: unknown statically
        return _expand(parsed.variables.get(inner, ""), parsed, automatic, depth + 1)

    return _REFERENCE.sub(replace, text.replace("$$", "\0")).replace("\0", "$")


def _tokens(command: str) -> list[str]:
    try:
        return shlex.split(command, comments=False)
    except ValueError:
        return command.split()


def _unit(tree: Path, parsed: _Makefile, rule: _Rule, target: str, makefile: str) -> BuildUnit | None:
    if "%" in target or not rule.recipe:
        return None
    prerequisites = _expand(rule.prerequisites, parsed, {}).split()
    automatic = {"@": target, "<": prerequisites[0] if prerequisites else "", "^": " ".join(prerequisites), "?": ""}
    commands = [_expand(line, parsed, automatic) for line in rule.recipe]
    building = [c.lstrip("@-+ ") for c in commands if _COMPILER.search(c)]
    if not building:
        return None
    kind: UnitKind = "code-object" if any(re.search(r"--genco|-fatbin|--cuda-device-only", c) for c in building) else (
        "library" if target.endswith((".a", ".so")) else "executable")
    unit = BuildUnit(target, kind, makefile)
    for item in prerequisites + [t for c in building for t in _tokens(c)]:
        if item.endswith(SOURCE_SUFFIXES):
            _add_source(tree, parsed.folder, item, unit)
        elif item.endswith(".o"):
            _add_object(tree, parsed, item, unit)
    for command in building:
        _add_flags(parsed.folder, tree, command, unit)
    return unit if unit.sources else None


def _add_source(tree: Path, folder: str, item: str, unit: BuildUnit) -> None:
    rel = posixpath.normpath(posixpath.join(folder, item))
    if not rel.startswith("..") and inside_tree(tree, tree / rel) and (tree / rel).is_file() and rel not in unit.sources:
        unit.sources.append(rel)


def _add_object(tree: Path, parsed: _Makefile, item: str, unit: BuildUnit) -> None:
    """An object's source and flags: its explicit rule, else a pattern rule, else a same-stem source."""
    stem = item[:-2]
    for rule in parsed.rules:
        if item in rule.targets or any(t.startswith("%") and item.endswith(t[1:]) for t in rule.targets):
            explicit = item in rule.targets
            pattern_target = next((t for t in rule.targets if t.startswith("%")), "%")
            prefix = item[: len(item) - len(pattern_target) + 1]
            prereqs = [p.replace("%", prefix) for p in _expand(rule.prerequisites, parsed, {}).split()]
            sources = [p for p in prereqs if p.endswith(SOURCE_SUFFIXES)]
            if not sources or not (explicit or (tree / parsed.folder / sources[0]).is_file()):
                continue
            automatic = {"@": item, "<": sources[0], "^": " ".join(prereqs), "*": prefix, "?": ""}
            for source in sources[:1]:
                _add_source(tree, parsed.folder, source, unit)
            for line in rule.recipe:
                _add_flags(parsed.folder, tree, _expand(line, parsed, automatic), unit)
            return
    for suffix in SOURCE_SUFFIXES:
        if (tree / parsed.folder / (stem + suffix)).is_file():
            _add_source(tree, parsed.folder, stem + suffix, unit)
            for variable in ("CFLAGS", "CXXFLAGS", "CPPFLAGS"):
                _add_flags(parsed.folder, tree, _expand(f"$({variable})", parsed, {}), unit)
            return


def _add_flags(folder: str, tree: Path, command: str, unit: BuildUnit) -> None:
    tokens = _tokens(command)
    for index, token in enumerate(tokens):
        value = token[2:] or (tokens[index + 1] if index + 1 < len(tokens) else "")
        if token.startswith("-I") and value:
            rel = posixpath.normpath(posixpath.join(folder, value)) if not value.startswith("/") else ""
            if rel and not rel.startswith("..") and (tree / rel).is_dir() and rel not in unit.include_dirs:
                unit.include_dirs.append(rel)
        elif token.startswith("-D") and value and value not in unit.defines:
            unit.defines.append(value)
        elif token.startswith("-l") and token[2:] and token[2:] not in unit.link_libraries:
            unit.link_libraries.append(token[2:])

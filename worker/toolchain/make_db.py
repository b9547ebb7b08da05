"""make's own view of a Makefile: the data base ``make -pn`` prints, read into a typed model.

``make -pn -j1`` (run in the sandbox over the toolchain root, ``make_build.py``) parses the Makefile and
everything it includes (``../common/make.config``), runs nothing but the recursive ``$(MAKE)`` lines (which
print their own data bases) and prints, per make process, its variables with their origin (file and line)
and its targets with their prerequisites and recipes. Reading that instead of the Makefile's text means
conditionals, includes, ``+=`` and target-specific settings are decided by make itself.
"""
from __future__ import annotations

import posixpath
import re
import shlex
from dataclasses import dataclass, field

_BEGIN = "# Make data base, printed on "
_END = "# Finished Make data base on "
_ORIGIN = re.compile(r"^# (default|environment(?: under -e)?|makefile|command line|override|automatic|'override' "
                     r"directive)(?: \(from '(.+)', line (\d+)\))?$")
_VARIABLE = re.compile(r"^([^\s:#=]+)\s*(:{1,3}=|\?=|\+=|!=|=)\s?(.*)$")
_TARGET = re.compile(r"^([^\s#][^:]*?)::?(?:\s(.*))?$")
_REFERENCE = re.compile(r"\$(?:\(([\w.-]+)\)|\{([\w.-]+)\}|([A-Za-z]))")
_DIRECTORY = re.compile(r"^(?:# )?make(?:\[\d+\])?: (Entering|Leaving) directory '(.+)'$")
_RECURSIVE = re.compile(r"(?:^[@+\-\s]*|[;&|]\s*)(?:\$\(MAKE\)|\$\{MAKE\}|make)(?:\s|;|$)")  # cd sub; make


@dataclass(frozen=True)
class MakeVariable:
    name: str
    value: str  # as make stores it: recursive variables unexpanded, simple ones expanded
    origin: str  # default, environment, makefile, command line, override, automatic
    file: str = ""  # the makefile that set it (relative to the folder make ran in), "" unless origin is makefile
    line: int = 0
    simple: bool = False  # := (expanded when set)


@dataclass
class MakeTarget:
    name: str
    prerequisites: list[str] = field(default_factory=list)  # normal and order-only
    recipe: list[str] = field(default_factory=list)  # unexpanded lines, as the data base prints them
    recipe_origin: str = ""  # "Makefile:12", "built-in", ""
    phony: bool = False
    is_target: bool = True  # False for make's "Not a target" entries (files it only knows of)


@dataclass
class MakeDatabase:
    """One make process's data base: the folder it ran in (``CURDIR``), variables and targets."""

    folder: str
    variables: dict[str, MakeVariable] = field(default_factory=dict)
    targets: dict[str, MakeTarget] = field(default_factory=dict)

    @property
    def default_goal(self) -> str:
        goal = self.variables.get(".DEFAULT_GOAL")
        return goal.value.strip() if goal else ""

    @property
    def makefiles(self) -> list[str]:
        """Every makefile read, in order: the Makefile itself and the fragments it includes."""
        listed = self.variables.get("MAKEFILE_LIST")
        return listed.value.split() if listed else []

    def expanded(self, text: str, depth: int = 0) -> str:
        """``text`` with plain variable references replaced by their values (functions left as they are)."""
        if depth > 16 or "$" not in text:
            return text

        def replace(match: re.Match[str]) -> str:
            name = match.group(1) or match.group(2) or match.group(3) or ""
            variable = self.variables.get(name)
            return self.expanded(variable.value, depth + 1) if variable is not None else match.group(0)

        return _REFERENCE.sub(replace, text)

    def goal_closure(self) -> list[str]:
        """The default goal and every target it needs, in the order make would consider them."""
        pending, seen = [self.default_goal] if self.default_goal else [], []
        while pending:
            name = pending.pop(0)
            if name in seen or name not in self.targets:
                continue
            seen.append(name)
            pending += [p for p in self.targets[name].prerequisites if p not in seen]
        return seen

    def expected_files(self) -> list[str]:
        """Files the default goal makes: its targets with a recipe of their own that are neither phony nor
        only a recursive ``$(MAKE)`` (those sub-makes print data bases of their own). Paths as make sees them
        (absolute, under ``folder``)."""
        files = []
        for name in self.goal_closure():
            target = self.targets[name]
            if target.phony or name.startswith(".") or not target.recipe or target.recipe_origin == "built-in" \
                    and not target.is_target:
                continue
            if all(_RECURSIVE.search(line) for line in target.recipe):
                continue
            files.append(posixpath.normpath(posixpath.join(self.folder, name)))
        return files


@dataclass(frozen=True)
class DryRunCommand:
    folder: str  # where make would run it ("" when make did not say)
    command: str


@dataclass
class MakeDryRun:
    """What ``make -pn`` printed: the commands a build would run and one data base per make process."""

    commands: list[DryRunCommand] = field(default_factory=list)
    databases: list[MakeDatabase] = field(default_factory=list)

    def expected_files(self) -> list[str]:
        """The default goals' files (``MakeDatabase.expected_files``) and what the commands name with ``-o``:
        a ``release:`` target whose recipe writes ``-o hotspot`` makes ``hotspot``, not ``release``."""
        outputs = [posixpath.normpath(posixpath.join(c.folder, word)) for c in self.commands if c.folder
                   for word in _outputs(c.command)]
        return list(dict.fromkeys([*(f for db in self.databases for f in db.expected_files()), *outputs]))

    def makefiles(self) -> list[str]:
        """Every makefile any of the make processes read, as absolute paths."""
        return list(dict.fromkeys(posixpath.normpath(posixpath.join(db.folder, name))
                                  for db in self.databases for name in db.makefiles))


def parse_dry_run(output: str, folder: str = "") -> MakeDryRun:
    """``folder``: where the top make runs (its ``-C``); sub-makes say where they run as they enter."""
    result = MakeDryRun()
    block: list[str] | None = None
    folders = [folder]
    for line in output.splitlines():
        if entering := _DIRECTORY.match(line):
            if entering.group(1) == "Entering":
                folders.append(entering.group(2))
            elif len(folders) > 1:
                folders.pop()
        elif line.startswith(_BEGIN):
            block = []
        elif line.startswith(_END) and block is not None:
            result.databases.append(parse_database(block))
            block = None
        elif block is not None:
            block.append(line)
        elif line and not line.startswith(("#", "make: ", "make[")):
            result.commands.append(DryRunCommand(folders[-1], line))
    return result


def _outputs(command: str) -> list[str]:
    try:
        words = shlex.split(command)
    except ValueError:
        words = command.split()
    return [words[i + 1] for i, word in enumerate(words[:-1]) if word == "-o" and not words[i + 1].startswith("-")]


def parse_database(lines: list[str]) -> MakeDatabase:
    database = MakeDatabase("")
    section = ""
    origin: tuple[str, str, int] = ("", "", 0)
    entry: list[str] = []
    in_define = False
    for line in lines:
        if line.startswith("# ") and line[2:] in ("Variables", "Files", "Directories", "Implicit Rules",
                                                  "Pattern-specific Variable Values", "VPATH Search Paths"):
            _end_entry(database, entry)
            section, entry = line[2:], []
            continue
        if section == "Variables":
            if in_define:
                in_define = line != "endef"
            elif match := _ORIGIN.match(line):
                origin = (match.group(1), match.group(2) or "", int(match.group(3) or 0))
            elif line.startswith("define "):
                in_define = True
            elif (match := _VARIABLE.match(line)) and origin[0]:
                name, operator, value = match.groups()
                database.variables[name] = MakeVariable(name, value, origin[0], origin[1], origin[2],
                                                        simple=operator.startswith(":"))
                origin = ("", "", 0)
        elif section == "Files":
            if line == "":
                _end_entry(database, entry)
                entry = []
            else:
                entry.append(line)
    _end_entry(database, entry)
    curdir = database.variables.get("CURDIR")
    database.folder = curdir.value.strip() if curdir else ""
    return database


def _end_entry(database: MakeDatabase, entry: list[str]) -> None:
    """One entry of the Files section: comments, ``target: prerequisites``, more comments, the recipe."""
    is_target = "# Not a target:" not in entry
    for index, line in enumerate(entry):
        if line.startswith(("#", "\t")) or not (match := _TARGET.match(line)) or _VARIABLE.match(line):
            continue
        target = MakeTarget(match.group(1).strip(), is_target=is_target)
        target.prerequisites = [p for p in (match.group(2) or "").split() if p != "|"]
        for rest in entry[index + 1:]:
            if rest.startswith("\t"):
                target.recipe.append(rest[1:])
            elif "Phony target" in rest:
                target.phony = True
            elif rest.startswith("#  recipe to execute"):
                found = re.search(r"from '(.+)', line (\d+)", rest)
                target.recipe_origin = f"{found.group(1)}:{found.group(2)}" if found else "built-in"
        database.targets[target.name] = target
        return

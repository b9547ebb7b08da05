"""CMake structure the CUDA→HIP conversion needs: command spans, ``.cu`` sources of each target
(literal, in variables, in ``target_sources``), the CUDA libraries a file uses, and the lines to
insert so ``.cu`` files build with CMake's HIP language.

CMake has no maintained Python parser, so this reads lines and tracks which command a line
belongs to (commands may span lines) by counting parentheses outside quotes and comments.
"""
from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

from worker.scanning.libraries import CMAKE_LIBRARIES

_COMMAND = re.compile(r"^\s*([A-Za-z_]\w*)\s*\(")
_CU_ITEM = re.compile(r"^[\w./${}*+-]*\.cu$")
_VARIABLE = re.compile(r"^\$\{(\w+)\}$")
_GENEX_CU = re.compile(r"[:,]([\w./${}+-]+\.cu)(?=[>,])")
_DECLARING = {"add_executable", "add_library", "cuda_add_executable", "cuda_add_library"}
_TARGET_COMMANDS = {"add_executable", "add_library", "target_sources", "cuda_add_executable", "cuda_add_library"}
_NOT_SOURCES = {"PRIVATE", "PUBLIC", "INTERFACE", "STATIC", "SHARED", "MODULE", "OBJECT", "WIN32", "MACOSX_BUNDLE",
                "EXCLUDE_FROM_ALL", "IMPORTED", "ALIAS", "GLOBAL", "FILE_SET", "TYPE", "BASE_DIRS", "FILES", "OPTIONS"}
_MARKED = re.compile(r"set_source_files_properties\s*\(([^)]*)\bPROPERTIES\b[^)]*\bLANGUAGE\s+HIP\b", re.IGNORECASE | re.DOTALL)
_CUDA_TARGET = re.compile(r"\bCUDA::(\w+)")
_FINDCUDA_LIB = re.compile(r"\bCUDA_(CUBLAS|CUFFT|cublas|cufft|curand|cusparse|cusolver|nvrtc|nvml|cudnn)_LIBRAR(?:IES|Y)\b")
_ADD_TO_TARGET = re.compile(r"\bcuda_add_(cublas|cufft)_to_target\b", re.IGNORECASE)
_LINK_NAME = re.compile(r"(?<![\w:${}/.-])-?l?(cublasLt|cublas|cufft|curand|cusparse|cusolver|nvrtc|nvidia-ml|cudnn)(?![\w:.-])")


@dataclass(frozen=True)
class Command:
    name: str  # lower case
    first: int  # 1-based line numbers
    last: int
    arguments: list[str]


def strip_comment(line: str) -> str:
    in_quote = False
    for index, char in enumerate(line):
        if char == '"':
            in_quote = not in_quote
        elif char == "#" and not in_quote:
            return line[:index]
    return line


def commands_by_line(lines: list[str]) -> Iterator[tuple[str, str]]:
    """(command name in lower case or "", code without comments) for each line."""
    depth, command = 0, ""
    for raw in lines:
        code = strip_comment(raw)
        if depth <= 0:
            match = _COMMAND.match(code)
            command, depth = (match.group(1).lower() if match else ""), 0
        yield command, code
        depth += code.count("(") - code.count(")")


def commands(lines: list[str]) -> list[Command]:
    found: list[Command] = []
    depth, current, first, body = 0, "", 0, ""
    for number, raw in enumerate(lines, start=1):
        code = strip_comment(raw)
        if depth <= 0:
            match = _COMMAND.match(code)
            if not match:
                continue
            current, first, body, depth = match.group(1).lower(), number, code[match.end():], 0
            depth = 1 + body.count("(") - body.count(")")
        else:
            body += " " + code
            depth += code.count("(") - code.count(")")
        if depth <= 0:
            found.append(Command(current, first, number, _arguments(body)))
    return found


def _arguments(body: str) -> list[str]:
    inner = body[: body.rfind(")")] if ")" in body else body
    return [item.strip('"') for item in re.findall(r'"[^"]*"|[^\s()]+', inner)]


def _cu_variables(found: list[Command]) -> dict[str, list[str]]:
    """Variables that hold .cu sources: name -> their literal .cu items, or ["${NAME}"] when not literal."""
    holders: dict[str, list[str]] = {}
    for command in found:
        args = command.arguments
        if command.name == "set" and args:
            items = args[1:]
        elif command.name == "list" and len(args) > 2 and args[0].upper() in ("APPEND", "PREPEND"):
            items = args[2:]
            args = args[1:]
        elif command.name == "file" and len(args) > 2 and args[0].upper().startswith("GLOB"):
            if any(a.endswith(".cu") for a in args[2:]):
                holders[args[1]] = [f"${{{args[1]}}}"]
            continue
        else:
            continue
        cu = [item for item in items if _CU_ITEM.match(item) and "$<" not in item]
        cu += [s for item in items if (v := _VARIABLE.match(item)) for s in holders.get(v.group(1), [])]
        if cu:
            holders.setdefault(args[0], [])
            holders[args[0]] += [c for c in cu if c not in holders[args[0]]]
    return holders


def marked_hip_sources(text: str) -> set[str]:
    return {item.strip('"') for m in _MARKED.finditer(text) for item in m.group(1).split()}


def language_insertions(lines: list[str]) -> list[tuple[int, list[str], str]]:
    """(line after which to insert, .cu items, the target when it is declared in another folder) for each
    target command whose .cu sources are not yet marked LANGUAGE HIP."""
    found = commands(lines)
    holders = _cu_variables(found)
    declared = {c.arguments[0] for c in found if c.name in _DECLARING and c.arguments}
    marked = marked_hip_sources("\n".join(strip_comment(line) for line in lines))
    insertions: list[tuple[int, list[str], str]] = []
    for command in found:
        if command.name not in _TARGET_COMMANDS:
            continue
        items: list[str] = []
        for item in command.arguments[1:]:
            if item.upper() in _NOT_SOURCES:
                continue
            if "$<" in item:  # $<$<BOOL:${FAST}>:fast.cu>: the file, whichever way the condition goes
                items += _GENEX_CU.findall(item)
            elif _CU_ITEM.match(item):
                items.append(item)
            elif v := _VARIABLE.match(item):
                items += holders.get(v.group(1), [])
        items = [i for i in dict.fromkeys(items) if i not in marked]
        if items:
            # sources added to a target of another folder take their properties from that folder
            elsewhere = command.name == "target_sources" and command.arguments[0] not in declared
            insertions.append((command.last, items, command.arguments[0] if elsewhere else ""))
            marked.update(items)
    return insertions


def aux_source_insertions(lines: list[str]) -> list[tuple[int, str, str]]:
    """(line after which to insert, folder, variable) for each ``aux_source_directory(folder VAR)`` whose
    ``.cu`` files are not yet added: it lists files by the enabled languages' extensions, and the HIP
    language's is ``.hip`` only, so after the switch it drops every ``.cu`` file."""
    found = commands(lines)
    text = "\n".join(strip_comment(line) for line in lines)
    insertions = []
    for command in found:
        if command.name == "aux_source_directory" and len(command.arguments) >= 2:
            folder, variable = command.arguments[0], command.arguments[1]
            if not re.search(rf"\bfile\s*\(\s*GLOB\s+{re.escape(variable)}_CUDA_SOURCES\b", text, re.IGNORECASE):
                insertions.append((command.last, folder, variable))
    return insertions


def libraries_used(text: str) -> frozenset[str]:
    """The CMake packages (beyond hip) a file's CUDA library uses call for."""
    code = "\n".join(strip_comment(line) for line in text.splitlines())
    names = {m.group(1) for m in _CUDA_TARGET.finditer(code)}
    names |= {m.group(1).lower() for m in _FINDCUDA_LIB.finditer(code)}
    names |= {m.group(1).lower() for m in _ADD_TO_TARGET.finditer(code)}
    names |= {m.group(1) if m.group(1) != "nvidia-ml" else "nvml" for m in _LINK_NAME.finditer(code)
              if "target_link_libraries" in code or "link_libraries" in code}
    packages = {CMAKE_LIBRARIES[n][0] for n in names if n in CMAKE_LIBRARIES}
    return frozenset(packages - {"hip"})



_HOST_SOURCE = re.compile(r"\.(?:c|cc|cpp|cxx|c\+\+)$")
_RUNTIME_LINKS = {"hip::host", "hip::device", "hip::amdhip64", "CUDA::cudart", "CUDA::cudart_static",
                  "CUDA::cuda_driver", "${CUDA_LIBRARIES}"}


def host_link_insertions(lines: list[str]) -> list[tuple[int, str, bool]]:
    """(line after which to insert, target, keyword signature) for targets with C/C++ host sources
    that link no HIP/CUDA runtime target: they need hip::host for its platform definition."""
    found = commands(lines)
    links: dict[str, list[list[str]]] = {}
    for command in found:
        if command.name == "target_link_libraries" and command.arguments:
            links.setdefault(command.arguments[0], []).append(command.arguments[1:])
    insertions = []
    for command in found:
        if command.name not in ("add_executable", "add_library") or not command.arguments:
            continue
        target, items = command.arguments[0], command.arguments[1:]
        if any(item in ("IMPORTED", "ALIAS", "INTERFACE") for item in items):
            continue
        if not any(_HOST_SOURCE.search(item) or _VARIABLE.match(item) for item in items):
            continue
        calls = links.get(target, [])
        if any(item in _RUNTIME_LINKS for call in calls for item in call):
            continue
        keyword = not calls or any(call and call[0] in ("PRIVATE", "PUBLIC", "INTERFACE") for call in calls)
        insertions.append((command.last, target, keyword))
    return insertions

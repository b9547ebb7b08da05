"""``k<<<grid, block, shmem, stream>>>(args)`` -> ``hipLaunchKernelGGL(...)`` (hipify-clang's shape).

hipify-clang writes ``hipLaunchKernelGGL(k, dim3(grid), dim3(block), shmem, stream, args)``,
wraps every template kernel as ``HIP_KERNEL_NAME(...)`` (``k<T>``, and ``k`` alone when the file
declares ``k`` as a template and the arguments deduce it), fills missing shmem/stream with 0
and does not re-wrap an argument that already is ``dim3(...)``.
"""
from __future__ import annotations

import re

MARK = "\x00"  # the scanner puts it where code (not a comment/string) had "<<<"
NAME_CHARS = re.compile(r"[\w:.]")
OPEN, CLOSE = "([{<", ")]}>"


TEMPLATE = re.compile(r"\btemplate\s*<")
DECLARATOR_END = re.compile(r"[({;]")
LAST_NAME = re.compile(r"(\w+)\s*$")


def template_kernels(text: str) -> frozenset[str]:
    """Names of ``__global__`` function templates declared in ``text``."""
    if "__global__" not in text:
        return frozenset()
    names: set[str] = set()
    for match in TEMPLATE.finditer(text):
        close = _template_close(text, match.end())
        if close is None:
            continue
        end = DECLARATOR_END.search(text, close)
        if end is None or end.group() != "(":
            continue
        declarator = text[close:end.start()]
        name = LAST_NAME.search(declarator)
        if "__global__" in declarator and name is not None:
            names.add(name.group(1))
    return frozenset(names)


def _template_close(text: str, start: int) -> int | None:
    depth = 1
    for index in range(start, min(len(text), start + 2000)):
        char = text[index]
        if char == "<":
            depth += 1
        elif char == ">":
            depth -= 1
            if depth == 0:
                return index + 1
        elif char in ";{}":
            return None
    return None


def convert_launches(text: str, templates: frozenset[str] = frozenset()) -> tuple[str, int]:
    """Replace every marked launch; unparseable ones get their ``<<<`` back. Returns (text, failures).

    ``templates``: kernel names declared as templates (wrapped in ``HIP_KERNEL_NAME`` even when deduced).
    """
    pieces: list[str] = []
    cursor = 0
    failures = 0
    while (mark := text.find(MARK, cursor)) >= 0:
        launch = _parse(text, mark, templates)
        if launch is None:
            pieces.append(text[cursor:mark] + "<<<")
            cursor = mark + 1
            failures += 1
            continue
        name_start, end, replacement = launch
        pieces.append(text[cursor:name_start] + replacement)
        cursor = end
    pieces.append(text[cursor:])
    return "".join(pieces), failures


def _parse(text: str, mark: int, templates: frozenset[str]) -> tuple[int, int, str] | None:
    name_start = _kernel_name_start(text, mark)
    config_end = text.find(">>>", mark)
    if name_start is None or config_end < 0:
        return None
    config = _split_top_level(text[mark + 1:config_end])
    paren = config_end + 3
    while paren < len(text) and text[paren] in " \t\r\n":
        paren += 1
    if paren >= len(text) or text[paren] != "(" or not 2 <= len(config) <= 4:
        return None
    close = _matching_close(text, paren)
    if close is None:
        return None
    name = text[name_start:mark].strip()
    templated = "<" in name or name.rsplit("::", 1)[-1].rsplit(".", 1)[-1] in templates
    kernel = f"HIP_KERNEL_NAME({name})" if templated else name
    grid, block = (_dim3(arg) for arg in config[:2])
    rest = (config[2:] + ["0", "0"])[:2]
    args = text[paren + 1:close].strip()
    parts = [kernel, grid, block, *rest] + ([args] if args else [])
    return name_start, close + 1, "hipLaunchKernelGGL(" + ", ".join(parts) + ")"


def _dim3(arg: str) -> str:
    return arg if re.fullmatch(r"dim3\s*\(.*\)", arg, re.DOTALL) else f"dim3({arg})"


def _kernel_name_start(text: str, mark: int) -> int | None:
    pos = mark
    while pos > 0 and text[pos - 1] in " \t":
        pos -= 1
    depth = 0
    while pos > 0:
        ch = text[pos - 1]
        if ch == ">":
            depth += 1
        elif ch == "<" and depth:
            depth -= 1
        elif not depth and not NAME_CHARS.match(ch):
            break
        elif depth and ch in ";{}":
            return None
        pos -= 1
    return pos if pos < mark and not depth else None


def _split_top_level(config: str) -> list[str]:
    parts, depth, start = [], 0, 0
    for index, ch in enumerate(config):
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        elif ch == "," and depth == 0:
            parts.append(config[start:index].strip())
            start = index + 1
    parts.append(config[start:].strip())
    return [p for p in parts if p]


def _matching_close(text: str, open_at: int) -> int | None:
    depth = 0
    for index in range(open_at, len(text)):
        ch = text[index]
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
            if depth == 0:
                return index
    return None

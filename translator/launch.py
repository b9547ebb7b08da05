"""``k<<<grid, block, shmem, stream>>>(args)`` -> ``hipLaunchKernelGGL(...)`` (hipify-clang's shape).

hipify-clang writes ``hipLaunchKernelGGL(k, dim3(grid), dim3(block), shmem, stream, args)``,
wraps templated kernels as ``HIP_KERNEL_NAME(k<T>)``, fills missing shmem/stream with 0
and does not re-wrap an argument that already is ``dim3(...)``.
"""
from __future__ import annotations

import re

MARK = "\x00"  # the scanner puts it where code (not a comment/string) had "<<<"
NAME_CHARS = re.compile(r"[\w:.]")
OPEN, CLOSE = "([{<", ")]}>"


def convert_launches(text: str) -> tuple[str, int]:
    """Replace every marked launch; unparseable ones get their ``<<<`` back. Returns (text, failures)."""
    pieces: list[str] = []
    cursor = 0
    failures = 0
    while (mark := text.find(MARK, cursor)) >= 0:
        launch = _parse(text, mark)
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


def _parse(text: str, mark: int) -> tuple[int, int, str] | None:
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
    kernel = f"HIP_KERNEL_NAME({name})" if "<" in name else name
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

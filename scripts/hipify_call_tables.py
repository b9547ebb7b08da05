"""Read hipify-clang's call-rewrite tables (``FuncArgCasts``, ``FuncOverloads``) from HipifyAction.cpp.

They are data in HIPIFY's source: per CUDA function, which argument gets a cast, ``HIP_SYMBOL``,
an added constant, a move or a removal (``--roc``/``--miopen`` variants apart), and which HIP
function a call becomes by its number of arguments. Only these facts are extracted.
"""
from __future__ import annotations

import re
from typing import TypeAlias

Tree: TypeAlias = "str | list[Tree]"
TOKEN = re.compile(r'"(?:\\.|[^"\\])*"|[{},]|[^{},"\s][^{},"]*')
STRING_CONST = re.compile(r'(?:const\s+)?std::string\s+(s\w+)\s*=\s*"([^"]*)"\s*;')
CAST_NAMES = {
    "e_HIP_SYMBOL": "hip_symbol", "e_reinterpret_cast": "reinterpret_cast",
    "e_reinterpret_cast_size_t": "reinterpret_cast_size_t", "e_static_cast_uint64_t": "static_cast_uint64_t",
    "e_int32_t": "int32_t", "e_int64_t": "int64_t", "e_remove_argument": "remove",
    "e_add_const_argument": "add_const", "e_add_var_argument": "add_var", "e_move_argument": "move",
    "e_replace_argument_with_const": "replace_const",
}


def parse_braces(text: str) -> list[Tree]:
    """``{a, {b, c}}`` -> nested lists of raw items (strings keep their quotes)."""
    stack: list[list[Tree]] = [[]]
    current = ""
    for token in TOKEN.findall(text):
        if token == "{":
            stack.append([])
        elif token == "}":
            if current.strip():
                stack[-1].append(current.strip())
            current = ""
            done = stack.pop()
            stack[-1].append(done)
        elif token == ",":
            if current.strip():
                stack[-1].append(current.strip())
            current = ""
        else:
            current += token
    return stack[0]


def block(source: str, opener: str) -> str:
    start = source.index(opener) + len(opener) - 1
    depth = 0
    for index in range(start, len(source)):
        depth += {"{": 1, "}": -1}.get(source[index], 0)
        if depth == 0:
            return source[start:index + 1]
    raise ValueError(f"unbalanced block after {opener!r}")


def unquote(item: Tree) -> str | None:
    if isinstance(item, str) and item.startswith('"'):
        return bytes(item[1:-1], "utf-8").decode("unicode_escape")
    return None


def cast_entry(index: Tree, info: Tree) -> dict[str, object] | None:
    if not isinstance(index, str) or not isinstance(info, list) or not info:
        return None
    kind = CAST_NAMES.get(str(info[0]))
    if kind is None:
        return None
    value = unquote(info[2]) if len(info) > 2 else ""
    if value is None and "HIP_LATEST" in str(info[2]):
        value = "{hip_version}"  # the HIP version hipify-clang targets, as major * 100 + minor
    if value is None:
        return None  # computed in C++: not a fact we can copy
    entry: dict[str, object] = {"arg": int(index), "kind": kind}
    if value:
        entry["value"] = value
    if len(info) > 3:
        entry["to"] = int(str(info[3]))
    if len(info) > 4:
        entry["count"] = int(str(info[4]))
    return entry


def argument_casts(source: str) -> dict[str, list[dict[str, object]]]:
    """cuda function -> [{"roc": bool, "miopen": bool, "casts": [...]}, ...]."""
    names = dict(STRING_CONST.findall(source))
    tree = parse_braces(block(source, "FuncArgCasts {"))[0]
    assert isinstance(tree, list)
    table: dict[str, list[dict[str, object]]] = {}
    for function in tree:
        if not isinstance(function, list) or len(function) != 2 or not isinstance(function[1], list):
            continue
        name = names.get(str(function[0]))
        variants = []
        for variant in function[1]:
            if not isinstance(variant, list) or not variant or not isinstance(variant[0], list):
                continue
            casts = [cast_entry(pair[0], pair[1]) for pair in variant[0] if isinstance(pair, list) and len(pair) == 2]
            flags = [str(v) == "true" for v in variant[1:3]] + [False, False]
            if casts and all(c is not None for c in casts):
                variants.append({"roc": flags[0], "miopen": flags[1], "casts": casts})
        if name and variants:
            table[name] = variants
    return table


def overloads(source: str) -> dict[str, dict[str, str]]:
    """cuda function -> {number of arguments: hip function}."""
    names = dict(STRING_CONST.findall(source))
    tree = parse_braces(block(source, "FuncOverloads {"))[0]
    assert isinstance(tree, list)
    table: dict[str, dict[str, str]] = {}
    for function in tree:
        if not isinstance(function, list) or len(function) != 2:
            continue
        name = names.get(str(function[0]))
        by_count: dict[str, str] = {}
        for entries in function[1] if isinstance(function[1], list) else []:
            for pair in entries if isinstance(entries, list) else []:
                if isinstance(pair, list) and len(pair) == 2 and isinstance(pair[1], list):
                    counter = pair[1][0]
                    hip = unquote(counter[0]) if isinstance(counter, list) and counter else None
                    if hip:
                        by_count[str(pair[0])] = hip
        if name and by_count:
            table[name] = by_count
    return table

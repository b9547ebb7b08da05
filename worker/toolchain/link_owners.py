"""Undefined references explained: which source should define the symbol, whether it was
compiled, and whether the build files list it.

``find_definitions`` searches a translated tree (``runs/<id>/hip``, readable on the root side) for
function definitions of the undefined names; the link stage stores them as ``defined_in`` on each
problem. ``explain_undefined`` turns that and the compile stage's data (its ``files`` and the
``build_units`` the build files declare) into a verdict. A name no source defines, that is a HIP
or ROCm library name, is a library missing from the link line or from the toolchain.
"""
from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from worker.toolchain.cause_rules import Installed, Verdict
from worker.toolchain.diagnostics import LinkProblem

SOURCE_SUFFIXES = (".c", ".cc", ".cpp", ".cxx", ".cu", ".hip", ".cuh", ".h", ".hpp", ".inl")
MAX_FILES = 4000
MAX_BYTES = 2_000_000
# ROCm library prefixes of function names -> catalogue name and "-l" name.
_LIBRARY_PREFIXES: tuple[tuple[str, str, str], ...] = (
    ("hipblasLt", "hipBLASLt", "hipblaslt"), ("hipblas", "hipBLAS", "hipblas"), ("rocblas_", "rocBLAS", "rocblas"),
    ("hipfft", "hipFFT", "hipfft"), ("rocfft_", "rocFFT", "rocfft"), ("hiprand", "hipRAND", "hiprand"),
    ("rocrand_", "rocRAND", "rocrand"), ("hipsparse", "hipSPARSE", "hipsparse"), ("rocsparse_", "rocSPARSE", "rocsparse"),
    ("hipsolver", "hipSOLVER", "hipsolver"), ("rocsolver_", "rocSOLVER", "rocsolver"), ("miopen", "MIOpen", "MIOpen"),
    ("nccl", "RCCL", "rccl"), ("rccl", "RCCL", "rccl"), ("roctx", "roctracer/roctx", "roctx64"),
    ("hip", "HIP runtime", "amdhip64"),
)


def _definition(name: str) -> re.Pattern[str]:
    # A line that starts a definition: no "(", "=", ";" or brace before the name, a parameter list, then "{".
    return re.compile(rf"(?m)^[^\n;{{}}()=]*?\b{re.escape(name)}\s*\([^;{{}}]*\)\s*(?:const\s*|noexcept\s*|override\s*)*\{{")


def find_definitions(root: Path, names: Iterable[str]) -> dict[str, list[str]]:
    """Files under ``root`` (relative paths) that define each name; names no file defines are absent."""
    wanted = sorted({n for n in names if re.fullmatch(r"[A-Za-z_]\w*", n)})[:200]
    if not wanted:
        return {}
    patterns = {name: _definition(name) for name in wanted}
    found: dict[str, list[str]] = {}
    for count, path in enumerate(_sources(root)):
        if count >= MAX_FILES:
            break
        if path.is_symlink() or not path.is_file() or path.stat().st_size > MAX_BYTES:
            continue
        text = path.read_text(errors="replace")
        for name, pattern in patterns.items():
            if name in text and pattern.search(text):
                found.setdefault(name, []).append(path.relative_to(root).as_posix())
    return found


def _sources(root: Path) -> list[Path]:
    """Source files under ``root``, symbolic links to folders not followed."""
    found: list[Path] = []
    for folder, dirs, files in os.walk(root):
        dirs.sort()
        found += [Path(folder) / name for name in sorted(files) if Path(name).suffix in SOURCE_SUFFIXES]
    return found


def bare_name(symbol: str) -> str:
    """``ns::cudaCheck(int, char const*)`` -> ``cudaCheck``."""
    return symbol.split("(")[0].split("::")[-1].strip()


def _compiled(file: str, compile_data: Mapping[str, Any]) -> str | None:
    """The compile status of ``file`` (by its translated or original path), None when not compiled at all."""
    for entry in compile_data.get("files") or ():
        if isinstance(entry, Mapping) and file in (entry.get("path"), entry.get("original_path")):
            return str(entry.get("status") or "")
    return None


def _listing(file: str, compile_data: Mapping[str, Any]) -> tuple[bool, str]:
    """Whether a build unit lists ``file``, and the build file (and target) to name."""
    units = [u for u in compile_data.get("build_units") or () if isinstance(u, Mapping)]
    stem = file.rsplit(".", 1)[0]
    for unit in units:
        if any(str(s).rsplit(".", 1)[0] == stem for s in unit.get("sources") or ()):
            return True, f"{unit.get('build_file')} (target {unit.get('name')})"
    names = sorted({f"{u.get('build_file')} (target {u.get('name')})" for u in units})
    return False, ", ".join(names[:2])


def explain_undefined(name: str, defined_in: list[str], compile_data: Mapping[str, Any],
                      installed: Installed) -> Verdict | None:
    """The cause of an undefined reference, or None to fall back to the name's own kind."""
    sources = [f for f in defined_in if not f.endswith((".h", ".hpp", ".cuh", ".inl"))] or defined_in
    if sources:
        file = sources[0]
        status = _compiled(file, compile_data)
        listed, build_file = _listing(file, compile_data)
        if status is None and not listed:
            listing = f"{build_file} does not list it" if build_file else "no build file lists it"
            return Verdict("build_configuration", f"unlisted-source:{file}", f"{name} is defined in {file}, which is not "
                           f"compiled: {listing}")
        if status is None:
            return Verdict("build_configuration", f"uncompiled-source:{file}", f"{name} is defined in {file}, listed in "
                           f"{build_file} but not compiled")
        if status == "passed":
            return Verdict("build_configuration", f"unlinked-object:{file}", f"{name} is defined in {file}, compiled, "
                           "but its object is not linked into the target")
        return None  # the file failed to compile: its compile cause is the cause
    plain = name.lstrip("_")  # __hipRegisterFatBinary, __hipPushCallConfiguration: the HIP runtime's
    for prefix, library, link_name in _LIBRARY_PREFIXES:
        if plain.startswith(prefix) and (len(plain) == len(prefix) or not plain[len(prefix)].islower() or prefix.endswith("_")):
            if installed(library) is False:
                return Verdict("environment", f"missing-library:{library}", f"{library} is not in the toolchain "
                               f"({name} is undefined)")
            return Verdict("build_configuration", f"not-linked:{link_name}", f"{name} is in {library}: the link line "
                           f"lacks -l{link_name}")
    return None


def locate_definitions(problems: list[LinkProblem], tree: Path) -> None:
    """Fill ``defined_in`` of each undefined reference from the sources under ``tree`` (root side)."""
    undefined = [p for p in problems if p.kind == "undefined_reference" and p.symbol]
    if not undefined or not tree.is_dir():
        return
    found = find_definitions(tree, (bare_name(p.symbol) for p in undefined))
    for problem in undefined:
        problem.defined_in = found.get(bare_name(problem.symbol), [])[:5]

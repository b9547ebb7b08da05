"""``#include`` rewriting, hipify-clang style.

* A CUDA header becomes its HIP header, keeping the ``<>``/``""`` style.
* The main headers (``cuda.h``, ``cuda_runtime.h``) become ``hip/hip_runtime.h`` once;
  later includes that would repeat an already emitted HIP header are dropped, as are
  CUDA headers HIP has no counterpart for (``device_launch_parameters.h``).
* A quoted include naming a file that exists next to the includer is the project's own
  header (a local ``"cuda.h"``) and is left alone.
* A translation unit with kernels or runtime API calls and no HIP runtime include gets
  ``#include "hip/hip_runtime.h"`` as its first line (nvcc includes it implicitly).
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from translator.mapping import ApiMapping

INCLUDE = re.compile(r'^([ \t]*#[ \t]*include[ \t]*)([<"])([^>"\n]+)([>"])(.*)$', re.DOTALL)
RUNTIME_HEADER = "hip/hip_runtime.h"
RUNTIME_INCLUDE_LINE = f'#include "{RUNTIME_HEADER}"\n'


@dataclass
class IncludeState:
    includer_dir: Path | None
    roc_libraries: bool
    emitted: set[str] = field(default_factory=set)
    converted: int = 0
    unsupported: list[str] = field(default_factory=list)
    kept_local: list[str] = field(default_factory=list)


def rewrite_include(line: str, headers: dict[str, ApiMapping], state: IncludeState) -> str | None:
    """The new directive text, "" to drop the line, or None to leave it as is."""
    match = INCLUDE.match(line)
    if match is None:
        return None
    lead, opener, name, closer, tail = match.groups()
    mapping = headers.get(name)
    if mapping is None:
        if name.startswith(("hip/", "hip_")):
            state.emitted.add(name)
        return None
    if opener == '"' and state.includer_dir is not None and (state.includer_dir / name).is_file():
        state.kept_local.append(name)
        return None
    target = (mapping.roc if state.roc_libraries and mapping.roc else None) or mapping.hip
    if mapping.status == "unsupported" or target is None:
        if mapping.status == "unsupported":
            state.unsupported.append(name)
            return None
        state.converted += 1
        return ""
    state.converted += 1
    if target in state.emitted:
        return ""
    state.emitted.add(target)
    return f"{lead}{opener}{target}{closer}{tail}"

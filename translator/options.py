"""Options of a translation run and the installed HIP version."""
from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

from translator.globs import DEFAULT_EXCLUDES

if TYPE_CHECKING:
    from translator.wavefront.constants import TreeFacts

DEFAULT_HIP_VERSION = "6.4"  # the toolchain root's HIP; a run passes its own


@dataclass(frozen=True)
class TranslateOptions:
    """How to translate.

    launch_style: ``chevron`` keeps ``k<<<g, b>>>(...)``; ``ggl`` emits ``hipLaunchKernelGGL``.
    roc_libraries: use rocBLAS/rocSOLVER/rocRAND/... names and headers where HIPIFY gives them (``--roc``).
    miopen: use MIOpen names for cuDNN (``--miopen``).
    use_hip_data_types: ``cudaDataType`` becomes ``hipDataType`` even where a library has its own type.
    experimental: translate names HIPIFY marks experimental in HIP (hipify-clang's ``--experimental``).
    target_hip_version: APIs added to HIP after it are reported, not emitted ("" = the default target).
    declared_names: HIP names the target toolchain's headers declare; when given, they decide instead
        of the version table: a declared counterpart is emitted, an undeclared one is reported.
    assumed_cuda_version: the CUDA version that ``#if CUDART_VERSION >= ...`` tests are evaluated against.
    translate_strings: rewrite CUDA API names inside string literals, as hipify-clang does.
    library_header_folders: ``<hipblas/hipblas.h>`` rather than ``<hipblas.h>`` (None: when the target is >= 6.0,
        where ROCm ships only the former).
    struct_tags: after ``struct``, write the struct tag where HIP's name is a typedef
        (``struct _hipGraphicsResource``; ``struct hipGraphicsResource``, as hipify-clang writes it, does not compile).
    skip_excluded_blocks: leave ``#if`` branches that are not taken untouched (``defines`` are set).
    keep_names: CUDA names the project defines itself; they are left alone in this file.
    exclude_globs: files copied untouched, with ``.gitignore`` rules (``translator/globs.py``).
    hipify_spelling: write what hipify-clang writes where our default is the one ROCm 6+ builds: flat library
        headers (``<hipblas.h>``), ``struct hipGraphicsResource``, and HIPIFY's own latest HIP in the version
        arguments it adds (``hipGetProcAddress(..., 603, ...)`` at the recorded HIPIFY commit).
    port_header: the include path of ``hip_port/cuda_port.h`` from this file (``translate_tree`` sets it).
    wavefront_scan: look for code that assumes 32-lane warps (``translator/wavefront``), report it in the
        account and apply its certain fixes, except those whose rule is in ``disabled_rules``.
    wavefront_facts: the constants and device macros of the rest of the tree (``translate_tree`` sets it).
    """

    launch_style: Literal["chevron", "ggl"] = "chevron"
    roc_libraries: bool = False
    rename_cu_to_hip: bool = False
    exclude_globs: tuple[str, ...] = DEFAULT_EXCLUDES
    target_hip_version: str = ""
    assumed_cuda_version: str = "12.0"
    miopen: bool = False
    use_hip_data_types: bool = False
    experimental: bool = False
    declared_names: frozenset[str] | None = None
    translate_strings: bool = True
    skip_excluded_blocks: bool = False
    library_header_folders: bool | None = None
    struct_tags: bool = True
    defines: tuple[tuple[str, str], ...] = ()
    keep_names: frozenset[str] = field(default_factory=frozenset)
    detect_local_definitions: bool = True  # translate_tree turns it off: its pre-pass follows the include graph
    max_unconverted_listed: int = 1000
    port_header: str = "hip_port/cuda_port.h"  # how this file includes the rewrites' helper header
    hipify_spelling: bool = False  # --header-layout hipify: spell what is written as hipify-clang does
    wavefront_scan: bool = True
    disabled_rules: frozenset[str] = field(default_factory=frozenset)  # fix rule ids not to apply
    wavefront_facts: TreeFacts | None = None

    def resolved_hip_version(self) -> tuple[int, ...]:
        return parse_version(self.target_hip_version or DEFAULT_HIP_VERSION)


@functools.lru_cache(maxsize=64)
def _cached_parse(text: str) -> tuple[int, ...]:
    return tuple(int(part) for part in re.findall(r"\d+", text.split("-")[0])[:3])


def parse_version(text: str) -> tuple[int, ...]:
    """'5.2.21153-0amd' -> (5, 2, 21153); '' -> ()."""
    return _cached_parse(text)

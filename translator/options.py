"""Options of a translation run and the installed HIP version."""
from __future__ import annotations

import functools
import re
from typing import TYPE_CHECKING, Literal

from translator.globs import DEFAULT_EXCLUDES

if TYPE_CHECKING:
    from translator.wavefront.constants import TreeFacts

DEFAULT_HIP_VERSION = "6.4"  # the toolchain root's HIP; a run passes its own


class TranslateOptions:
    """How to translate. A plain class, not a dataclass: importing ``dataclasses`` (and the ``inspect`` module it
    imports) cost the command line a seventh of its start-up; ``replace`` gives what ``dataclasses.replace`` did.

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

    launch_style: Literal["chevron", "ggl"]
    roc_libraries: bool
    rename_cu_to_hip: bool
    exclude_globs: tuple[str, ...]
    target_hip_version: str
    assumed_cuda_version: str
    miopen: bool
    use_hip_data_types: bool
    experimental: bool
    declared_names: frozenset[str] | None
    translate_strings: bool
    skip_excluded_blocks: bool
    library_header_folders: bool | None
    struct_tags: bool
    defines: tuple[tuple[str, str], ...]
    keep_names: frozenset[str]
    detect_local_definitions: bool  # translate_tree turns it off: its pre-pass follows the include graph
    max_unconverted_listed: int
    port_header: str  # how this file includes the rewrites' helper header
    hipify_spelling: bool  # --header-layout hipify: spell what is written as hipify-clang does
    wavefront_scan: bool
    disabled_rules: frozenset[str]  # fix rule ids not to apply
    wavefront_facts: TreeFacts | None

    __slots__ = ("launch_style", "roc_libraries", "rename_cu_to_hip", "exclude_globs", "target_hip_version",
                 "assumed_cuda_version", "miopen", "use_hip_data_types", "experimental", "declared_names",
                 "translate_strings", "skip_excluded_blocks", "library_header_folders", "struct_tags", "defines",
                 "keep_names", "detect_local_definitions", "max_unconverted_listed", "port_header",
                 "hipify_spelling", "wavefront_scan", "disabled_rules", "wavefront_facts")

    def __init__(self, launch_style: Literal["chevron", "ggl"] = "chevron", roc_libraries: bool = False,
                 rename_cu_to_hip: bool = False, exclude_globs: tuple[str, ...] = DEFAULT_EXCLUDES,
                 target_hip_version: str = "", assumed_cuda_version: str = "12.0", miopen: bool = False,
                 use_hip_data_types: bool = False, experimental: bool = False,
                 declared_names: frozenset[str] | None = None, translate_strings: bool = True,
                 skip_excluded_blocks: bool = False, library_header_folders: bool | None = None,
                 struct_tags: bool = True, defines: tuple[tuple[str, str], ...] = (),
                 keep_names: frozenset[str] = frozenset(), detect_local_definitions: bool = True,
                 max_unconverted_listed: int = 1000, port_header: str = "hip_port/cuda_port.h",
                 hipify_spelling: bool = False, wavefront_scan: bool = True,
                 disabled_rules: frozenset[str] = frozenset(), wavefront_facts: TreeFacts | None = None) -> None:
        setattr_ = object.__setattr__  # frozen: instances are hashed (rule tables are kept per options)
        setattr_(self, "launch_style", launch_style)
        setattr_(self, "roc_libraries", roc_libraries)
        setattr_(self, "rename_cu_to_hip", rename_cu_to_hip)
        setattr_(self, "exclude_globs", exclude_globs)
        setattr_(self, "target_hip_version", target_hip_version)
        setattr_(self, "assumed_cuda_version", assumed_cuda_version)
        setattr_(self, "miopen", miopen)
        setattr_(self, "use_hip_data_types", use_hip_data_types)
        setattr_(self, "experimental", experimental)
        setattr_(self, "declared_names", declared_names)
        setattr_(self, "translate_strings", translate_strings)
        setattr_(self, "skip_excluded_blocks", skip_excluded_blocks)
        setattr_(self, "library_header_folders", library_header_folders)
        setattr_(self, "struct_tags", struct_tags)
        setattr_(self, "defines", defines)
        setattr_(self, "keep_names", keep_names)
        setattr_(self, "detect_local_definitions", detect_local_definitions)
        setattr_(self, "max_unconverted_listed", max_unconverted_listed)
        setattr_(self, "port_header", port_header)
        setattr_(self, "hipify_spelling", hipify_spelling)
        setattr_(self, "wavefront_scan", wavefront_scan)
        setattr_(self, "disabled_rules", disabled_rules)
        setattr_(self, "wavefront_facts", wavefront_facts)

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"TranslateOptions is frozen: use replace({name}=...)")

    def replace(self, **changes: object) -> TranslateOptions:
        """A copy with ``changes`` (field names) applied, as ``dataclasses.replace`` made it."""
        unknown = sorted(set(changes) - set(self.__slots__))
        if unknown:
            raise TypeError(f"TranslateOptions has no field {', '.join(unknown)}")
        new = object.__new__(TranslateOptions)
        for name in self.__slots__:
            object.__setattr__(new, name, changes[name] if name in changes else getattr(self, name))
        return new

    def _key(self) -> tuple[object, ...]:
        return tuple(getattr(self, name) for name in self.__slots__)

    def __eq__(self, other: object) -> bool:
        return type(other) is TranslateOptions and self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def __repr__(self) -> str:
        return f"TranslateOptions({', '.join(f'{name}={getattr(self, name)!r}' for name in self.__slots__)})"

    def resolved_hip_version(self) -> tuple[int, ...]:
        return parse_version(self.target_hip_version or DEFAULT_HIP_VERSION)


@functools.lru_cache(maxsize=64)
def _cached_parse(text: str) -> tuple[int, ...]:
    return tuple(int(part) for part in re.findall(r"\d+", text.split("-")[0])[:3])


def parse_version(text: str) -> tuple[int, ...]:
    """'5.2.21153-0amd' -> (5, 2, 21153); '' -> ()."""
    return _cached_parse(text)

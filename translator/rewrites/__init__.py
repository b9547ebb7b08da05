"""Rewrites for CUDA constructs without a one-to-one HIP counterpart, around the engine's one-pass scan.

``before`` runs on the CUDA text ahead of the scan, ``after`` on the scan's HIP text. Each pass runs
only when one of its needles is in the file (a substring test on the text before any regex work), so a
file without these constructs costs a few ``in`` tests. Every rewrite leaves a note (rule id, line,
what changed and why) in the file's account; helper code goes into one header, ``hip_port/cuda_port.h``,
written once into the translated tree (``translator.rewrites.port``) and included by the files that use
it.
"""
from __future__ import annotations

import functools
from collections.abc import Callable

from translator.includes import RUNTIME_HEADER, runtime_include_position
from translator.options import TranslateOptions
from translator.rewrites import devicecode, deviceptr, fixups, hostapi, inlineasm, macrolaunch, tables, versions
from translator.rewrites.context import RewriteContext, RewriteNote
from translator.rules import Rule
from translator.textsearch import occurrences, occurs_at_any

__all__ = ["NOTE_ONLY", "RewriteContext", "RewriteNote", "after", "before", "template_name_macros",
           "without_replaced_definitions"]
# Rules that only note (a tile size to check, the branch a version test selected); they change no text.
NOTE_ONLY = frozenset({"cg-tile-wavefront", "cuda-version-condition"})

Pass = Callable[[RewriteContext], None]
BEFORE: tuple[tuple[tuple[str, ...], Pass], ...] = (
    (("<< ", "< <"), fixups.spaced_launch),
    (("<<<",), macrolaunch.macro_launches),
    (("__grid_constant__",), devicecode.grid_constant),
    (("__ld", "__st"), devicecode.cache_hints),
    (("reduce", "thread_block_tile", "tiled_partition"), devicecode.cg_reduce),
    (("cuParamSet", "cuLaunch", "cuFuncSet"), hostapi.legacy_launch),
    (("nvtx", "nvToolsExt"), hostapi.nvtx),
    (("cuda/",), hostapi.libcxx),
    (("asm",), inlineasm.inline_asm),
    (("__nanosleep",), devicecode.nanosleep),
    (("_block",), devicecode.block_atomics),
    (("CUuuid_st",), hostapi.cuuuid_copy),
    (("CUdeviceptr",), deviceptr.deviceptr_arithmetic),
    (("_MANAGEMENT_SUPPORTED",), hostapi.nearest_hip),
    (("CUDART_VERSION", "CUDA_VERSION", "__CUDACC_VER", "__CUDA_API_VERSION"), versions.version_conditions),
)
AFTER: tuple[tuple[tuple[str, ...], Pass], ...] = (
    (('extern "C"',), fixups.extern_c_include),
    (("hiprtcCompileProgram",), fixups.hiprtc_options),
)
without_replaced_definitions = hostapi.without_replaced_definitions
template_name_macros = macrolaunch.template_name_macros


def before(text: str, path: str, options: TranslateOptions, rules: dict[str, Rule]) -> RewriteContext:
    ctx = RewriteContext(text=text, path=path, options=options, rules=rules)
    for needles, run in BEFORE:
        for needle in needles:  # a plain loop: a generator per pass cost more than most passes
            if needle in ctx.text:
                run(ctx)
                break
    return ctx


def after(text: str, original: str, ctx: RewriteContext) -> str:
    """The scan's output with the post-scan fixes and the port header's include."""
    ctx.text = text
    ctx.side = "right"
    for needles, run in AFTER:
        for needle in needles:
            if needle in text:
                run(ctx)
                break
    if _may_collapse(original):
        fixups.collapsed_overloads(ctx, original)
    if ctx.sections:
        _include_port(ctx)
    return ctx.text


def _may_collapse(original: str) -> bool:
    """Whether every type of one collapsing group occurs in ``original`` (before the signatures are
    compared). Each group pairs a runtime type with a driver one (``CUresult``); where ``CU`` occurs
    a few times only, as in runtime-API code, the driver names are looked for there alone."""
    if "CU" not in original or "cuda" not in original:
        return False
    driver_at = occurrences(original, "CU")
    few = len(driver_at) <= FEW_DRIVER_NAMES
    for group in _collapsing_groups():  # plain loops: generators cost more than the tests
        for name in group:
            if not (occurs_at_any(original, name, driver_at) if few and name.startswith("CU") else name in original):
                break
        else:
            return True
    return False


FEW_DRIVER_NAMES = 32


@functools.cache
def _collapsing_groups() -> tuple[tuple[str, ...], ...]:
    """The collapsing groups, driver names (``CU...``) first: they are the rarer, and the cheaper to rule out."""
    return tuple(tuple(sorted(group, key=lambda name: not name.startswith("CU")))
                 for group in tables.load().collapsing_types)


def _include_port(ctx: RewriteContext) -> None:
    line = f'#include "{ctx.options.port_header}"  // hip_port: stand-ins for CUDA constructs HIP lacks\n'
    text = ctx.text
    runtime = text.find(f"<{RUNTIME_HEADER}>")
    if runtime >= 0:
        end = text.find("\n", runtime)
        ctx.insert(len(text) if end < 0 else end + 1, line if end >= 0 else "\n" + line)
        return
    at = runtime_include_position(text)
    ctx.insert(at, "\n" + line.rstrip("\n") if at and text[at - 1] != "\n" else line)

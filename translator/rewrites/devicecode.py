"""Device-code constructs HIP lacks: cache-hinted loads/stores, ``cooperative_groups/reduce.h``,
``__grid_constant__``, ``__nanosleep``, and cooperative-groups tile sizes that meet the wavefront."""
from __future__ import annotations

import re

from translator.rewrites import tables
from translator.rewrites.code import CodeMap, line_of
from translator.rewrites.context import RewriteContext

HINTED = re.compile(r"\b(__ld(?:cs|cg|ca|lu|cv)|__st(?:cs|cg|wb|wt))\s*\(")
DECLARED_BEFORE = re.compile(r"\b(\w+)[\s*&]+$")
NOT_TYPES = frozenset({"return", "else", "case", "do", "co_return", "throw"})
REDUCE_INCLUDE = re.compile(r'^[ \t]*#[ \t]*include[ \t]*[<"]cooperative_groups/reduce\.h[>"][^\n]*', re.MULTILINE)
REDUCE_CALL = re.compile(r"\b(reduce|reduce_store_async|reduce_update_async)\s*\(")
TILE = re.compile(r"\b(thread_block_tile|tiled_partition)\s*<\s*(\d+)\s*[,>]")
GRID_CONSTANT = re.compile(r"\b__grid_constant__\b[ \t]*")
NANOSLEEP = re.compile(r"\b__nanosleep\s*\(")


def cache_hints(ctx: RewriteContext) -> None:
    hints = tables.load().cache_hints
    code = CodeMap(ctx.text)
    for match in HINTED.finditer(ctx.text):
        name = match.group(1)
        if match.start() in code:
            continue
        ctx.sections.add("cache-hints")
        ctx.handled.add(name)
        start, _ = line_of(ctx.text, match.start())
        declared = DECLARED_BEFORE.search(ctx.text, start, match.start())
        if declared is not None and declared.group(1) not in NOT_TYPES:
            continue  # the project's own overload (llm.c's __ldcs for bf16): it stays and wins overload resolution
        hint = hints[name]
        ctx.note(hint.rule, match.start(), f"{name}: {hint.form} ({hint.why}); hip_port/cuda_port.h defines it")


def cg_reduce(ctx: RewriteContext) -> None:
    included = REDUCE_INCLUDE.search(ctx.text)
    if included is None and "reduce" not in ctx.text:
        return
    if included is not None:
        ctx.note("cg-reduce", included.start(), "cooperative_groups/reduce.h has no HIP counterpart: "
                 "cg::reduce and its operators come from hip_port/cuda_port.h, over the tile's shuffles")
        ctx.replace(included.start(), included.end(), "")
        ctx.sections.add("cg-reduce")
    code = CodeMap(ctx.text)
    uses_cg = included is not None or "cooperative_groups" in ctx.text
    for match in REDUCE_CALL.finditer(ctx.text) if uses_cg else ():
        if match.start() in code or not _cg_call(ctx.text, match.start()):
            continue
        if match.group(1) == "reduce_update_async":
            ctx.leave("reduce_update_async", match.start(), "no-hip-counterpart: reduce_update_async updates a "
                      "cuda::atomic_ref, which HIP lacks; reduce the value with cg::reduce and update with atomicAdd")
            continue
        ctx.sections.add("cg-reduce")
        ctx.note("cg-reduce", match.start(), f"cg::{match.group(1)}: a shuffle reduction from hip_port/cuda_port.h")
    for match in TILE.finditer(ctx.text) if uses_cg else ():
        if match.start() not in code:
            _tile_size(ctx, match.start(), int(match.group(2)))


def _cg_call(text: str, position: int) -> bool:
    before = text[max(0, position - 24):position].rstrip()
    return before.endswith(("cg::", "cooperative_groups::")) or "using namespace cooperative_groups" in text


def _tile_size(ctx: RewriteContext, position: int, size: int) -> None:
    if size > 64:
        ctx.leave(f"thread_block_tile<{size}>", position, "tile-exceeds-wavefront: HIP tiles are at most one "
                  "wavefront (64 lanes on gfx9, 32 on gfx10/gfx11); split the work over several tiles")
    elif size == 64:
        ctx.note("cg-tile-wavefront", position, "a 64-lane tile is a whole wavefront on gfx90a/gfx942 but exceeds "
                 "the 32-lane wavefront of gfx10/gfx11 (gfx1100), where HIP refuses it at compile time")
    elif size == 32:
        ctx.note("cg-tile-wavefront", position, "a 32-lane tile is NVIDIA's whole warp but half a 64-lane wavefront "
                 "on gfx90a/gfx942: tile operations stay right; code that takes it for the hardware warp "
                 "(ballot masks, __activemask, warp-synchronous shared memory) must be checked")


def grid_constant(ctx: RewriteContext) -> None:
    code = CodeMap(ctx.text)
    for match in reversed(list(GRID_CONSTANT.finditer(ctx.text))):
        if match.start() in code:
            continue
        ctx.note("grid-constant", match.start(), "__grid_constant__ dropped: HIP has no such qualifier; AMD passes "
                 "kernel arguments in a read-only kernel-argument segment, so the parameter is not copied either way")
        ctx.replace(match.start(), match.end(), "")


def nanosleep(ctx: RewriteContext) -> None:
    code = CodeMap(ctx.text)
    for match in NANOSLEEP.finditer(ctx.text):
        if match.start() in code:
            continue
        ctx.sections.add("nanosleep")
        ctx.handled.add("__nanosleep")
        ctx.note("nanosleep", match.start(), "__nanosleep: a wait on the wall clock with s_sleep "
                 "(hip_port/cuda_port.h); HIP declares no __nanosleep")


BLOCK_ATOMIC = re.compile(r"\b(atomic(?:Add|Sub|Exch|Min|Max|Inc|Dec|CAS|And|Or|Xor))_block\b(?=\s*\()")


def block_atomics(ctx: RewriteContext) -> None:
    code = CodeMap(ctx.text)
    for match in reversed(list(BLOCK_ATOMIC.finditer(ctx.text))):
        if match.start() in code:
            continue
        ctx.note("atomic-block-scope", match.start(), f"{match.group()} -> {match.group(1)}: HIP has no block-scoped "
                 "form; the device-scoped atomic is at least as strong (it may cost a little more)")
        ctx.replace(match.start(), match.end(), match.group(1))

"""Host-side constructs without a one-to-one HIP name: the pre-4.0 driver launch API, NVTX, libcu++
headers, CUDA 12 names with a nearest HIP one, and a project's own copy of ``CUuuid``."""
from __future__ import annotations

import re

from translator.rewrites import tables
from translator.rewrites.code import CodeMap
from translator.rewrites.context import RewriteContext

LEGACY_CALL = re.compile(r"\b(cuParamSet[vfi]|cuParamSetSize|cuFuncSetBlockShape|cuFuncSetSharedSize|cuLaunchGridAsync"
                         r"|cuLaunchGrid|cuLaunch|cuFuncSetCacheConfig)\b(?=\s*\()")
INCLUDE = re.compile(r'^[ \t]*#[ \t]*include[ \t]*([<"])([^>"\n]+)[>"][^\n]*', re.MULTILINE)
NVTX_NAME = re.compile(r"\bnvtx(?:RangePushA?|RangePop|MarkA?|RangeStartA?|RangeEnd)\b(?=\s*\()")
CUUUID_COPY = re.compile(r"typedef\s+struct\s+CUuuid_st\s*\{\s*(?:unsigned\s+)?char\s+bytes\s*\[\s*16\s*\]\s*;\s*\}"
                         r"\s*CUuuid\s*;")
LIBCXX_NAMESPACE = re.compile(r"\bcuda::std::")
NEAREST = re.compile(r"\bCU_DEVICE_ATTRIBUTE_VIRTUAL_(?:ADDRESS|MEMORY)_MANAGEMENT_SUPPORTED\b")


def legacy_launch(ctx: RewriteContext) -> None:
    names = tables.load().legacy_launch
    code = CodeMap(ctx.text)
    for match in reversed(list(LEGACY_CALL.finditer(ctx.text))):
        name = match.group(1)
        if match.start() in code:
            continue
        if ctx.is_c:
            ctx.leave(name, match.start(), "legacy-launch-in-c: the stand-in keeps per-function state in C++; "
                      "compile this file as C++ or launch with hipModuleLaunchKernel")
            continue
        ctx.handled.add(name)
        ctx.sections.add("legacy-launch")
        why = ("AMD has no L1/shared split to choose: a documented no-op" if name == "cuFuncSetCacheConfig"
               else "the pre-4.0 launch API: its state is kept per function and the launch goes through "
                    "hipModuleLaunchKernel with the parameters packed at the offsets given")
        ctx.note("legacy-launch", match.start(), f"{name} -> {names[name]} ({why})")
        ctx.replace(match.start(), match.end(), names[name])


def nvtx(ctx: RewriteContext) -> None:
    data = tables.load()
    with_roctx = _has_roctx(ctx)
    found = False
    for match in reversed(list(INCLUDE.finditer(ctx.text))):
        if match.group(2) in data.nvtx_headers:
            found = True
            ctx.note("nvtx-roctx" if with_roctx else "nvtx-noop", match.start(),
                     f"{match.group(2)} -> hip_port/cuda_port.h: NVTX over roctx (link -lroctx64)" if with_roctx
                     else f"{match.group(2)} -> hip_port/cuda_port.h: the toolchain has no roctx, NVTX calls do nothing")
            ctx.replace(match.start(), match.end(), "")
        elif match.group(2).startswith("nvtx3/nvtx3.hpp"):
            ctx.leave(match.group(2), match.start(), "no-hip-counterpart: NVTX's C++ API (nvtx3::scoped_range) has no "
                      "roctx form; use nvtxRangePushA/nvtxRangePop")
    code = CodeMap(ctx.text)
    calls = [m for m in NVTX_NAME.finditer(ctx.text) if m.start() not in code]
    if not found and not calls:
        return
    ctx.sections.add("nvtx-roctx" if with_roctx else "nvtx-noop")
    if not with_roctx:
        return
    for match in reversed(calls):
        new = data.nvtx_to_roctx[match.group()]
        ctx.note("nvtx-roctx", match.start(), f"{match.group()} -> {new}")
        ctx.replace(match.start(), match.end(), new)


def _has_roctx(ctx: RewriteContext) -> bool:
    declared = ctx.options.declared_names
    return declared is None or "roctxRangePushA" in declared


def libcxx(ctx: RewriteContext) -> None:
    data = tables.load()
    replaced = False
    for match in reversed(list(INCLUDE.finditer(ctx.text))):
        header = match.group(2)
        if header in data.libcxx_std_headers:
            new = data.libcxx_std_headers[header]
            ctx.note("libcxx-std", match.start(), f"<{header}> -> <{new}>: HIP compiles the C++ standard header in "
                     "device code; cuda::std:: becomes std::")
            ctx.replace(match.start(), match.end(), f"#include <{new}>")
            replaced = True
        elif header in data.libcxx_without_counterpart:
            ctx.leave(header, match.start(), "no-hip-counterpart: " + data.libcxx_without_counterpart[header])
    if replaced:
        code = CodeMap(ctx.text)
        for match in reversed(list(LIBCXX_NAMESPACE.finditer(ctx.text))):
            if match.start() not in code:
                ctx.replace(match.start(), match.end(), "std::")


def nearest_hip(ctx: RewriteContext) -> None:
    nearest = tables.load().nearest_hip
    code = CodeMap(ctx.text)
    for match in reversed(list(NEAREST.finditer(ctx.text))):
        if match.start() in code:
            continue
        new, why = nearest[match.group()]
        ctx.note("cuda12-nearest", match.start(), f"{match.group()} -> {new} ({why})")
        ctx.replace(match.start(), match.end(), new)


def cuuuid_copy(ctx: RewriteContext) -> None:
    match = CUUUID_COPY.search(ctx.text)
    if match is None:
        return
    ctx.note("project-cuuuid", match.start(), "the project's copy of CUuuid is dropped: HIP's hipUUID has the same "
             "layout (char bytes[16]) and is what hipDeviceGetUuid takes")
    ctx.replace(match.start(), match.end(), "/* CUuuid: HIP's hipUUID is used */")


def without_replaced_definitions(text: str) -> str:
    """``text`` without the project definitions a rewrite replaces by HIP's (so they are not kept as local)."""
    return CUUUID_COPY.sub("", text) if "CUuuid_st" in text else text

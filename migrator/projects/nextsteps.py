"""What to do next, one line per cause: the run page's answer to "what now?".

Built on the cause groups of ``worker/toolchain/causes.py`` (their kinds and keys: ``missing-library:hipBLAS``,
``moved-header:hipblas.h``, ``flag:-Xcompiler``...), the stage data they came from, the smoke stage's
classification and the verdict's unchecked items. Each step names what to change (a toolchain with X, a
build file and its rule, a construct and its rewrite, a notebook entry) and links to where to look: the
line in the diff view (``/runs/<id>/files/<path>#o<line>``), the compile panel's cause group, or a log.
A key this module does not know still gets its kind's step, so new causes never go without one.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from django.urls import reverse

from migrator.projects.constants import StageState
from migrator.projects.models import Run, Stage
from migrator.projects.stage_panels import review_url
from migrator.projects.verdict import (
    FAKE_GPU,
    NO_CUDA_RUNNER,
    NO_ROCM_RUNNER,
    NO_SMOKE_COMMAND,
    NOT_AVAILABLE_HERE,
    REFERENCE_FAILED,
    Verdict,
)
from worker.toolchain.causes import CauseGroup

MAX_STEPS = 6


@dataclass(frozen=True)
class NextStep:
    kind: str  # a cause kind (environment, translation, ...), "smoke", "unchecked" or "notebook"
    text: str  # one line: what to do
    href: str = ""  # where to look
    link_text: str = ""

    def to_dict(self) -> dict[str, str]:
        return {"kind": self.kind, "text": self.text, "href": self.href, "link_text": self.link_text}


@dataclass(frozen=True)
class Place:
    """Where a cause shows: the first error of its first file, in the original source."""

    file: str
    line: int
    href: str

    @property
    def where(self) -> str:
        return f"{self.file}:{self.line}" if self.line else self.file


def _first_error(run_id: int, file: str, data: Mapping[str, Any], fallback: str) -> Place:
    for item in data.get("diagnostics") or ():
        if not isinstance(item, Mapping) or item.get("severity") not in ("error", "fatal"):
            continue
        if file in (item.get("original_file"), item.get("tu"), item.get("file")):
            original = str(item.get("original_file") or "")
            line = item.get("original_line") if isinstance(item.get("original_line"), int) else 0
            href = review_url(run_id, original, int(line or 0)) if original else ""
            return Place(original or file, int(line or 0), href or fallback)
    return Place(file, 0, fallback)


def _library(compile_data: Mapping[str, Any], name: str) -> Mapping[str, Any]:
    toolchain = compile_data.get("toolchain")
    for lib in (toolchain.get("libraries") or ()) if isinstance(toolchain, Mapping) else ():
        if isinstance(lib, Mapping) and lib.get("name") == name:
            return lib
    return {}


def _toolchain_name(compile_data: Mapping[str, Any]) -> str:
    toolchain = compile_data.get("toolchain")
    return str(toolchain.get("name") or "the toolchain in use") if isinstance(toolchain, Mapping) else "the toolchain in use"


def cause_step(group: CauseGroup, place: Place, compile_data: Mapping[str, Any]) -> str:
    """The one line for a cause group, from its key (its kind's line for a key not known here)."""
    key, _, detail = group.key.partition(":")
    more = f" (and {len(group.files) - 1} more file{'s' if len(group.files) > 2 else ''})" if len(group.files) > 1 else ""
    where = f"{place.where}{more}"
    names = ", ".join(group.names[:4]) + (", ..." if len(group.names) > 4 else "")
    if key == "missing-library":
        lib = _library(compile_data, detail)
        package = f" (Debian package {lib['package']})" if lib.get("package") else ""
        return (f"Install {detail}{package} in toolchain {_toolchain_name(compile_data)}, or choose a toolchain "
                f"that has it (setting toolchain); needed by {where}")
    texts = {
        "moved-header": f"{where}: {group.reason}: include the new path",
        "cuda-header": f"{where}: remove or replace <{detail}>, a CUDA header with no HIP counterpart in this toolchain",
        "python-extension": f"{where}: build this source as a PyTorch extension (its setup.py), not as a plain HIP file",
        "windows-only": f"{where}: guard the Windows-only <{detail}> with #ifdef _WIN32 or leave the file out (exclude_globs)",
        "guessed-includes": f"{where}: {group.reason}",
        "header-path": f"{where}: add the folder that holds <{detail}> to include_dirs, or fix the include",
        "warp-sync": (f"{where}: define HIP_ENABLE_WARP_SYNC_BUILTINS (setting defines) and pass 64-bit masks "
                      "to __shfl_*_sync, __ballot_sync and friends"),
        "lane-mask": f"{where}: make warp masks 64-bit (unsigned long long, ~0ull): AMD wavefronts have 64 lanes",
        "cuda-names": f"{where}: translate the CUDA names left ({names}) or add them to the mapping",
        "hip-missing": f"{where}: {detail} is not in this HIP: choose a newer toolchain or avoid the call",
        "no-image-instructions": f"{where}: the GPU target has no image instructions: rewrite texture sampling as plain loads",
        "flag": f"{where}: remove {detail} from the build file or extra_flags: hipcc/clang does not take it",
        "build-files": f"{where}: fix the build file at the first error shown: {group.example[:160]}",
        "cuda-library": f"{where}: {group.reason} (the build file or link_libraries)",
        "library": f"{where}: provide -l{detail} (its ROCm package in the toolchain) or drop it from link_libraries",
        "cxx-error": f"{where}: fix the project's code at the first error (no other cause was found for it)",
        "also-fails-cuda": f"{where}: fix the project's code at the first error: the CUDA build fails the same way, "
                           "so translation did not cause it",
        "cuda-build-passes": (f"{where}: compare the translated code at the first error with the original, which "
                              "the CUDA build compiles" if detail == "translated" else
                              f"{where}: the CUDA build compiles this code unchanged: rewrite what hipcc (clang) "
                              "rejects at the first error"),
        "no-hip-counterpart": f"{where}: {group.reason}",
        "unlisted-source": f"add {detail} to the target's sources in the build file ({group.reason})",
        "not-linked": f"{where}: add -l{detail} to the target's link libraries (setting link_libraries or the build file)",
        "makefile-nvcc": f"{where}: call hipcc instead of nvcc in the build files (and drop nvcc-only flags)",
        "cmake-cuda": f"{where}: {group.reason}: enable HIP instead (project(... HIP), find_package(hip))",
        "hip-in-cxx": f"{where}: compile this source with hipcc (LANGUAGE HIP, or rename it .hip)",
        "not-hip": f"{where}: compile this source as HIP (hipcc -x hip, LANGUAGE HIP, or rename it .hip)",
        "target-feature": f"{where}: {group.reason} (setting offload_archs)",
        "inline-asm": f"{where}: rewrite the inline PTX with HIP intrinsics (__lane_id(), __builtin_amdgcn_*) or a HIP fallback",
        "cuda-env": f"{where}: {group.reason}",
        "limits": f"{where}: {group.reason}: raise build_memory_mb, build_timeout_s, compile_timeout_s or workspace_mb (settings)",
    }
    if key in texts:
        return texts[key]
    return {
        "environment": f"{where}: {group.reason}: install it in the toolchain root or choose a toolchain that has it",
        "translation": f"{where}: {group.reason}: fix the translated code (or the mapping) at that line",
        "build_configuration": f"{where}: {group.reason}: fix the build file or the build settings",
        "migrator": f"{where}: {group.reason}: Migrator's own handling; report it with the log",
        "project_code": f"{where}: {group.reason}: fix the project's code there",
    }.get(group.kind, f"{where}: {group.reason}")


def cause_steps(run_id: int, groups: Sequence[CauseGroup], compile_data: Mapping[str, Any],
                link_data: Mapping[str, Any]) -> list[NextStep]:
    steps = []
    base = reverse("projects:run", args=[run_id])
    for index, group in enumerate(groups, start=1):
        in_link = not any(_in_compile(group, compile_data))
        fallback = f"{base}?stage=link#stage-panel" if in_link else f"{base}?stage=compile#cause-{index}"
        place = _first_error(run_id, group.files[0] if group.files else "", compile_data, fallback)
        label = "diff" if place.href != fallback else ("link problems" if in_link else "compile causes")
        steps.append(NextStep(group.kind, cause_step(group, place, compile_data), place.href, label))
    return steps


def _in_compile(group: CauseGroup, compile_data: Mapping[str, Any]) -> list[bool]:
    names = {str(f.get("original_path") or f.get("path")) for f in compile_data.get("files") or () if isinstance(f, Mapping)}
    build = compile_data.get("project_build")
    return [file in names or (isinstance(build, Mapping) and build.get("ok") is False) for file in group.files]


def smoke_step(run_id: int, smoke_data: Mapping[str, Any]) -> NextStep | None:
    found = smoke_data.get("classification")
    if not isinstance(found, Mapping) or not found.get("kind"):
        return None
    log = f"{reverse('projects:run', args=[run_id])}?stage=smoke#log-section"
    text = f"Smoke {found.get('kind')}: {str(found.get('evidence') or '')[:200]}"
    if found.get("notebook_slug"):
        return NextStep("smoke", text, reverse("notebook:entry", args=[found["notebook_slug"]]), "notebook entry")
    return NextStep("smoke", text, log, "smoke log")


def unchecked_steps(run: Run, verdict: Verdict) -> list[NextStep]:
    """What to do so the parts not checked get checked."""
    run_id, settings = run.pk, reverse("projects:settings", args=[run.project_id])
    runners = reverse("runners:list")
    texts = {
        NO_SMOKE_COMMAND: ("Set smoke_command so the built program runs on an AMD GPU", settings, "settings"),
        NO_ROCM_RUNNER: ("Start a ROCm runner (MIGRATOR_RUNNER_PROFILE=rocm, a GPU of the project's target), then re-run from smoke",
                         runners, "runners"),
        NO_CUDA_RUNNER: ("Start a CUDA runner for the comparison, or set smoke_compare_reference to false", runners, "runners"),
        REFERENCE_FAILED: ("The CUDA side itself failed: see the reference log; the port's output was not compared",
                           reverse("projects:reference-log-raw", args=[run_id]), "reference log"),
        NOT_AVAILABLE_HERE: ("This installation lacks the stage (MIGRATOR_DISABLED_STAGES or a missing module)", "", ""),
        FAKE_GPU: ("Run it again on a runner with a real AMD GPU", runners, "runners"),
    }
    by_reason: dict[str, list[str]] = {}
    for item in verdict.unchecked:  # one line per reason, naming every part it holds back
        by_reason.setdefault(item.reason, []).append(item.label)
    steps = []
    for reason, labels in by_reason.items():
        text, href, label = texts.get(reason, ("", "", ""))
        if text:
            steps.append(NextStep("unchecked", f"{', '.join(labels)}: {text}", href, label))
    return steps


def notebook_step(title: str, url: str) -> NextStep:
    return NextStep("notebook", f"The error notebook knows this failure: {title}", url, "notebook entry")


def next_steps(run: Run, groups: Sequence[CauseGroup], failed_data: Mapping[str, Mapping[str, Any]],
               verdict: Verdict, notebook: tuple[str, str] | None = None) -> list[NextStep]:
    """At most MAX_STEPS lines: the causes' steps first (in the headline's order), then a smoke failure's,
    the notebook's best entry (title, url) for the failing stage, and what would check the parts not checked.
    ``failed_data``: the data of the failed stages, by stage name."""
    steps = cause_steps(run.pk, groups, failed_data.get("compile", {}), failed_data.get("link", {}))
    smoke = smoke_step(run.pk, failed_data.get("smoke", {}))
    steps += [smoke] if smoke is not None else []
    steps += [notebook_step(*notebook)] if notebook else []
    steps += unchecked_steps(run, verdict)
    return steps[:MAX_STEPS]


def run_next_steps(run: Run, stages: Sequence[Stage], groups: Sequence[CauseGroup], verdict: Verdict) -> list[NextStep]:
    """The next steps of a finished run from its stages (the notebook's best entry for the first failed stage)."""
    failed = [s for s in stages if s.state == StageState.FAILED]
    match = failed[0].notebook_matches.select_related("entry").first() if failed else None
    notebook = (match.entry.title, match.entry.get_absolute_url()) if match is not None else None
    data = {s.name: s.data for s in failed if isinstance(s.data, dict)}
    return next_steps(run, groups, data, verdict, notebook)

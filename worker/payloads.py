"""What each stage stores as its data (``StageResult.data``, kept on the Stage row), one TypedDict per stage.

The stage modules build their data through these types, so mypy checks every key they write, and
readers (the later stages through ``StageContext``, the run page, the report, the notebook) look keys
up here instead of guessing. Every stage type is ``total=False``: a stage that fails early, is skipped
or is not applicable stores only some keys (or none), and rows written by older versions may lack
newer keys, so readers use ``.get``. The pipeline itself may store ``{"not_available": True}`` (no
module for the stage here) or ``{"no_runner": True}`` (no runner came) instead of a stage's data.

Nested values that no reader looks into key by key (the inventory, the toolchain, dependency
reports, GPU probes) stay JSON objects; the ones readers do look into have their own types.
It imports only ``typing`` and the translator's account types, so any worker module may import it.
"""
from __future__ import annotations

from typing import Literal, NotRequired, TypedDict

from translator.account import AccountTotals, TreeAccountData

__all__ = [
    "AccountTotals", "BuildUnitData", "CheckData", "ClassificationData", "CompileData", "DiagnosticData",
    "FetchData", "FileData", "FixData", "HipifyData", "JsonObject", "LinkData", "LinkProblemData",
    "LinkTargetData", "NotApplicableData", "ProjectBuildData", "ProjectOutputData", "ProjectTargetsData",
    "ProjectUnitData", "ProjectKindData", "PythonScanData",
    "ReferenceData", "ScanData", "ScanFindingData", "SmokeData", "WavefrontHazardData",
]

JsonObject = dict[str, object]


class NotApplicableData(TypedDict, total=False):
    """What any stage stores when it does not apply to the project kind (``stages/applicability.py``)."""

    project_kind: str
    reason: str


class FetchData(TypedDict, total=False):
    kind: Literal["archive", "git"]
    sha256: str  # archive
    url: str  # git
    ref: str  # git: the ref resolved
    commit: str  # git: the commit id it resolved to
    removed_links: list[str]  # git: links pointing outside the checkout, removed
    files: int
    bytes: int
    source_subdir: str  # the directory kept, when the setting names one
    project_dir: str  # where source_subdir lies in the tree kept ("" when it is the tree): the build runs there
    kept_beside: list[str]  # paths kept from beside source_subdir, each with the build file and word naming it


class ScanFindingData(TypedDict):
    """One finding as the stage row keeps it (compact; ``artifacts/scan.json`` keeps them whole)."""

    rule_id: str
    severity: str
    file: str
    line: int
    column: int
    text: str  # at most 200 characters
    replacement: str | None
    notebook_slug: str | None
    fixable: bool


class WavefrontHazardData(TypedDict):
    """Code that assumes 32-lane warps (``translator/wavefront``), at the original file and line.

    ``rule`` names the fix rule when the fix is certain ("" for a suggestion); ``fix`` is what it writes
    or what to do. In the scan's data ``applied`` says the translation will apply it with the run's
    settings (the builtin engine, the rule not in ``disabled_fix_rules``); in the hipify stage's, that
    it did. ``wave32``: also wrong (or rejected by HIP 7) on 32-lane targets such as gfx1100.
    """

    file: str
    line: int
    column: int
    kind: str
    expression: str
    why: str
    wave32: bool
    rule: str
    fix: str
    applied: bool


class ProjectKindData(TypedDict):
    kind: str  # cuda-cpp, pytorch-extension, python-app, mixed, other
    reason: str
    cuda_sources: int
    torch_files: int
    extension_markers: list[str]  # "file:line what"
    kernel_dirs: list[str]
    python_packages: list[str]


class PythonScanData(TypedDict, total=False):
    """The scan's part for PyTorch projects (``scanning/pytorch_scan.py``); absent for other kinds."""

    python_findings: list[JsonObject]
    python_findings_total: int
    python_readiness: JsonObject
    python_summary: str
    dependencies: JsonObject  # ``DependencyReport.to_dict()``: sets (each with its ROCm side and resolve_key), ...
    dependencies_summary: str
    generated_files: dict[str, str]  # requirements-rocm.txt -> text, for hipify to write
    dependency_requests: dict[str, JsonObject]  # resolve key -> ``ResolveRequest.to_dict()``, for the deps queue


class ScanData(PythonScanData, total=False):
    inventory: JsonObject  # ``Inventory.to_dict()``: files_total, cuda_files, kernels_count, ...
    findings: list[ScanFindingData]
    findings_total: int
    findings_truncated: bool
    findings_by_severity: dict[str, int]
    findings_by_rule: dict[str, int]
    readiness: JsonObject  # ``Readiness.to_dict()``: translatable_share, hand_work, rocm_libraries_needed, ...
    project_kind: ProjectKindData
    wavefront_hazards: list[WavefrontHazardData]  # every hazard (up to WAVEFRONT_IN_DATA)
    wavefront_total: int
    wavefront_by_kind: dict[str, int]
    artifact: str  # workspace-relative path of the full scan.json
    empty_submodules: list[dict[str, object]]  # ``EmptySubmodule.to_dict()``: named in .gitmodules, empty here


class FixData(TypedDict):
    """A fix applied to the translated tree (``AppliedFix.to_dict()``), with translated paths and lines."""

    rule_id: str
    file: str
    line: int
    before: str
    after: str


class HipifyData(TreeAccountData, total=False):
    """The compact tree account (only files worth a row, at most 20 findings each) plus the fixes."""

    account_artifact: str  # artifacts-relative path of the full translation.json
    notebook_slugs: list[str]
    build_fixes: list[FixData]  # build-file fixes and, for PyTorch projects, the Python/config fixes
    generated_files: list[str]  # names of the files written from the scan's generated_files
    wavefront_hazards: list[WavefrontHazardData]  # every hazard the translation found, ``applied`` when fixed


class DiagnosticData(TypedDict):
    tu: str  # the translation unit whose compile reported it ("" for project builds)
    file: str
    line: int
    column: int
    original_file: str
    original_line: int
    severity: str
    flag: str
    message: str
    notes: list[str]
    include_stack: list[str]


class FileData(TypedDict):
    path: str
    original_path: str
    status: str
    duration_s: float
    object_size: int
    object_path: str
    cached: bool
    errors: int
    warnings: int
    command: list[str]  # the exact compiler command, include directories included
    targets: list[TargetData]  # per GPU target of offload_archs, in that order


class TargetData(TypedDict):
    """One translation unit on one GPU target (``worker/toolchain/targets.py``)."""

    arch: str
    status: str  # passed, failed, timeout, crashed, cancelled, unchecked (a failing unit not compiled again)
    message: str  # the first error
    original_file: str  # where it is in the original tree ("" when in no file of it)
    original_line: int
    wave_size: bool  # the error is about wave size (lane masks, wavefrontsize32/64, warpSize)


class LinkProblemData(TypedDict):
    """``LinkProblem.to_dict()``: an undefined reference, a missing library, or another linker error."""

    kind: str  # undefined_reference, missing_library, other
    message: str
    symbol: str
    mangled: str
    object: str
    function: str
    library: str
    replacement: str
    replacement_link_name: str
    package: str
    defined_in: NotRequired[list[str]]  # project sources defining the undefined symbol (worker/toolchain/link_owners.py)


class ProjectBuildData(TypedDict):
    system: str  # cmake, make, command
    steps: list[JsonObject]  # name, command, cwd, returncode, duration_s
    ok: bool
    error: str
    violations: list[str]
    sandbox: str
    link_problems: list[LinkProblemData]  # the project's own link step: the link stage reports these
    duration_s: float
    run_dir: str  # build or hip: where the smoke command runs
    units: NotRequired[list[JsonObject]]  # make: per build folder: folder, makefiles, expected, built, missing, ok, error
    c_std: NotRequired[str]  # the C dialect C sources get where the build names none (gnu17)


class CMakeBuildData(TypedDict):
    """CMake's own model of the converted build (its File API) and what the build left against it."""
    cmake_version: str
    generator: str
    targets: list[JsonObject]  # name, type, folder, declared_at, languages, sources (count), artifacts
    outputs: list[JsonObject]  # target, type, path, present, offload_archs, missing_archs
    problems: list[str]  # the configuration: CUDA sources not built as HIP, offload targets not named
    nothing_built: str  # why, when the build left nothing
    c_std: list[str]  # the -std= of the C compiles
    c_std_default: str  # what a C source without a -std of its project gets


class ProjectUnitData(TypedDict):
    """One translation unit of a project's own build on each GPU target (``toolchain/project_targets.py``)."""

    path: str  # tree-relative
    original_path: str
    status: str  # passed (the build made its output), failed (some target fails)
    targets: list[TargetData]  # per offload target, in offload_archs order


class ProjectOutputData(TypedDict):
    """One output of a project's own build and the GPU targets its device code is for."""

    path: str  # CMake: relative to the build folder; make: tree-relative
    owner: str  # the CMake target or the make build folder
    targets: list[str]  # offload targets whose code it holds
    missing: list[str]  # the run's offload targets it lacks


class ProjectTargetsData(TypedDict):
    """The per-target matrix of a project's own build: its outputs, and its failing units compiled per target."""

    commands_from: str  # compile_commands.json, make's dry run
    units: list[ProjectUnitData]  # every device-code unit the build compiled (at most MAX_UNITS)
    units_total: int
    outputs: list[ProjectOutputData]  # outputs holding device code
    failed_targets: list[str]


class BuildUnitData(TypedDict):
    name: str
    kind: str
    build_file: str
    sources: list[str]  # at most 200
    include_dirs: list[str]
    defines: list[str]
    link_libraries: list[str]


class CacheData(TypedDict):
    hits: int
    misses: int


class ExtensionBuildData(TypedDict):
    """One PyTorch extension's own result (``worker/stages/extension_compile.py``)."""
    name: str
    how: str  # setup.py, load, load_inline, cmake
    declared_in: str  # setup.py:9
    directory: str
    state: str  # passed, failed, not_compiled
    sources: list[str]  # original paths
    translated: list[str]
    errors: int
    checked: str  # what a pass means: compiled against PyTorch X's headers, hipified; ...
    link: str  # needs a ROCm PyTorch runner
    notes: list[str]


class CompilePartData(TypedDict):
    """One part of a project built whole (a CMake core, the bindings as an extension), with its own result."""
    name: str
    kind: str  # core, extension
    state: str  # passed, failed
    summary: str


class CompileData(NotApplicableData, total=False):
    toolchain: JsonObject  # ``Toolchain.to_dict()``
    mode: Literal["per_tu", "project", "extension"]
    mode_reason: str
    files: list[FileData]
    diagnostics: list[DiagnosticData]  # at most MAX_STORED_DIAGNOSTICS
    diagnostics_truncated: int  # how many there were when cut
    summary: dict[str, dict[str, int]]  # file -> errors, warnings
    cache: CacheData
    cxx_std: str
    c_std: str  # the C dialect of C sources whose build names none
    include_dirs: list[str]
    duration_s: float
    build_units: list[BuildUnitData]
    project_build: ProjectBuildData
    cmake_build: CMakeBuildData
    project_targets: ProjectTargetsData  # project builds: outputs and failing units by GPU target
    offload_archs: list[str]  # the GPU targets every unit was compiled for, in one invocation each
    failed_targets: list[str]  # those at least one unit failed for, or (project builds) an output lacks
    hip_defines: list[JsonObject]  # definitions this HIP version needed: name, reason (version_defines.py)
    # the kind gate: a PyTorch extension without ROCm PyTorch in the toolchain
    cause: str
    missing: str
    would_run: list[str]
    runner_image: str
    # PyTorch extensions compiled against the hipified header tree (no ROCm PyTorch here)
    extensions: list[ExtensionBuildData]
    checked: str
    notes: list[str]
    torch_headers: dict[str, object]
    parts: list[CompilePartData]
    core: dict[str, object]  # the core's own compile data, where a project has a core and bindings


class LinkTargetData(TypedDict):
    name: str
    kind: str  # executable, shared
    output_path: str
    units: list[str]
    status: str
    duration_s: float
    command: list[str]


class RunnerCommandData(TypedDict):
    """One command of an extension's own build on a ROCm PyTorch runner."""
    command: str
    exit_code: int | None
    ok: bool
    duration_s: float
    violations: list[str]
    output_tail: str


class RunnerBuildData(TypedDict):
    """An extension project's own build on a runner with a ROCm PyTorch (``worker/stages/extension_link.py``)."""
    torch: dict[str, object]  # ``TorchProbe.to_dict()``: the root, versions, pip/setuptools, fake or not
    commands: list[RunnerCommandData]
    outputs: list[str]  # the shared objects built, as sandbox paths
    problems: list[dict[str, object]]  # errors with file, line, original_file, original_line, message
    duration_s: float


class LinkData(NotApplicableData, total=False):
    no_pytorch_runner: bool  # an extension compiled against the hipified headers: linking needs ROCm PyTorch
    runner_build: RunnerBuildData  # the extension's own build, where a ROCm PyTorch runner took the stage
    fake_torch: bool  # that runner's ROCm PyTorch was faked with MIGRATOR_FAKE_ROCM_TORCH
    would_run: list[str]
    toolchain: JsonObject
    mode: Literal["project"]  # the project's own build linked
    targets: list[LinkTargetData]
    libraries: list[str]
    inferred_libraries: list[str]
    problems: list[LinkProblemData]
    error: str


class ClassificationData(TypedDict):
    kind: str  # no-device, gpu-busy, wrong-target, ..., checks-failed, output-differs, preset-failed
    notebook_slug: str | None
    evidence: str


class CheckData(TypedDict):
    name: str
    passed: bool
    detail: str
    skipped: bool


class ReferenceData(TypedDict, total=False):
    """The smoke run's view of the CUDA reference run (``stages/smoke.py``'s ``_compare``)."""

    available: bool
    comparison: JsonObject | None  # ``Comparison.to_dict()``: status, detail, differences, difference_count
    ok: bool | None
    summary: str | None
    gpu: JsonObject | None
    fake_gpu: bool
    reuse_note: str
    not_reused: bool


class SmokeData(TypedDict, total=False):
    no_smoke_command: bool  # skipped
    no_pytorch_runner: bool  # skipped: a PyTorch extension runs only where a ROCm PyTorch built it
    fake_torch: bool  # run with a ROCm PyTorch faked by MIGRATOR_FAKE_ROCM_TORCH
    # a plain smoke command (``GpuRun.to_dict()`` with the outputs cut to their tails, and the judgement)
    probe: JsonObject
    gpu: JsonObject | None
    env: dict[str, str] | None
    execution: JsonObject | None  # ``Execution.to_dict()``: exit_code, signal, timed_out, duration_s, stdout, ...
    error: str
    checks: list[CheckData]
    classification: ClassificationData | None  # None when it passed
    reference: ReferenceData | None
    fake_gpu: bool
    # a validation preset (``stages/smoke_presets.py``)
    preset: str
    run: JsonObject
    measurements: JsonObject

"""Python build and dependency rules: setup.py (libcst), requirements files
(packaging.requirements), pyproject.toml (tomllib) and conda environment files (PyYAML)."""
from __future__ import annotations

import dataclasses
import re
import tomllib

import libcst as cst
import yaml
from libcst.metadata import CodeRange, MetadataWrapper, PositionProvider
from packaging.requirements import InvalidRequirement, Requirement

from worker.scanning.model import Family, Finding, RuleHit, ScanContext, to_finding
from worker.scanning.nvcc_flags import offload_flags, split_gencode_value
from worker.scanning.rules_commands import compiler_hits, dependency_hits, library_hits

_CUDA_LIBRARY_NAMES = {"cudart": "amdhip64", "cuda": "amdhip64", "cublas": "hipblas", "cublasLt": "hipblaslt",
                       "cudnn": "MIOpen", "curand": "hiprand", "cufft": "hipfft", "cusparse": "hipsparse",
                       "cusolver": "hipsolver", "nccl": "rccl", "nvrtc": "hiprtc"}


def parse_error(rel: str, family: Family, error: Exception, line: int = 1) -> Finding:
    message = str(error).splitlines()[0] if str(error) else type(error).__name__
    return Finding(rule_id="parse.error", severity="warning", file=rel, line=max(line, 1), column=0, text="",
                   explanation=f"Could not parse this file ({message}); its build rules were not checked.",
                   family=family)


# A setup.py that already builds for ROCm: its CUDA branch is left exactly as it is.
_HIP_BRANCH = re.compile(r"torch\.version\.hip|\bHIP_BUILD\b|\bIS_ROCM\b|\bIS_HIP\w*\b|\bis_rocm\w*\b|\bROCM_HOME\b"
                         r"|\bUSE_ROCM\b|\bBUILD_FOR_ROCM\b")
_PROBE_NOTE = ("On ROCm there is no nvcc: the probe returns None or raises (FileNotFoundError, TypeError on "
               "None), so the build stops before compiling. Guard it with torch.version.hip or use hipcc/ROCM_HOME.")


class _SetupVisitor(cst.CSTVisitor):
    METADATA_DEPENDENCIES = (PositionProvider,)

    def __init__(self, rel: str, archs: tuple[str, ...]) -> None:
        self.rel = rel
        self.archs = archs
        self.findings: list[Finding] = []
        self._in_libraries = 0
        self._previous_string = ""

    def _start(self, node: cst.CSTNode) -> CodeRange:
        return self.get_metadata(PositionProvider, node)

    def _add(self, hits: list[RuleHit], node: cst.CSTNode) -> None:
        position = self._start(node).start
        self.findings += [to_finding(h, self.rel, position.line, "python-build", position.column) for h in hits]

    def visit_Call(self, node: cst.Call) -> None:
        name = node.func.attr.value if isinstance(node.func, cst.Attribute) else getattr(node.func, "value", "")
        if name == "which" and any(isinstance(a.value, cst.SimpleString) and a.value.evaluated_value == "nvcc"
                                   for a in node.args):
            self._add([RuleHit("nvcc-probe", "error", 0, "which", _PROBE_NOTE, notebook_slug="hipcc-nvidia-platform",
                               suggestion='shutil.which("hipcc")')], node.func)
        if name in ("get_cuda_bare_metal_version", "_get_cuda_bare_metal_version"):
            self._add([RuleHit("cuda-version-probe", "error", 0, name, "Runs nvcc -V to read the CUDA version. "
                               + _PROBE_NOTE, notebook_slug="hipcc-nvidia-platform")], node.func)

    def visit_Arg(self, node: cst.Arg) -> None:
        if node.keyword is not None and node.keyword.value == "libraries":
            self._in_libraries += 1

    def leave_Arg(self, original_node: cst.Arg) -> None:
        if original_node.keyword is not None and original_node.keyword.value == "libraries":
            self._in_libraries -= 1

    def visit_Attribute(self, node: cst.Attribute) -> None:
        if node.attr.value == "cuda" and isinstance(node.value, cst.Attribute) and node.value.attr.value == "version":
            self._add([RuleHit("cuda-version-probe", "error", 0, "torch.version.cuda", "torch.version.cuda is None on "
                               "ROCm PyTorch; version parsing or comparisons on it raise. Branch on "
                               "torch.version.hip first.", notebook_slug="cuda-python-wheels")], node)

    def visit_Name(self, node: cst.Name) -> None:
        if node.value == "CUDAExtension":
            self._add([RuleHit("cuda-extension", "info", 0, "CUDAExtension", "CUDAExtension builds on ROCm only "
                               "with a ROCm build of PyTorch, which hipifies the sources at build time; check "
                               "hand-written CUDA libraries in its arguments, and that the choice between it and "
                               "CppExtension does not hang on CUDA_HOME (None on ROCm).",
                               notebook_slug="cuda-python-wheels")], node)
        if node.value == "bare_metal_version":
            self._add([RuleHit("cuda-version-probe", "warning", 0, "bare_metal_version", "The CUDA version read from "
                               "nvcc -V; on ROCm it does not exist, so the checks that use it must be skipped.",
                               notebook_slug="hipcc-nvidia-platform")], node)
        if node.value == "CUDA_HOME":
            self._add([RuleHit("cuda-home", "warning", 0, "CUDA_HOME", "CUDA_HOME is None under ROCm PyTorch; "
                               "use torch.utils.cpp_extension.ROCM_HOME (or ROCM_PATH).",
                               notebook_slug="cuda-header-not-found", suggestion="ROCM_HOME")], node)

    def visit_SimpleString(self, node: cst.SimpleString) -> None:
        token = node.value
        if "\n" in token:
            return
        value = node.evaluated_value
        pins = dependency_hits(token)
        if isinstance(value, str) and " " in value.strip():  # a sentence (an error message), not a pin
            pins = [dataclasses.replace(h, severity="info") for h in pins]
        hits = compiler_hits(token, self.archs, "python-build") + library_hits(token) + pins
        hits = [h for h in hits if h.name != "nvcc"]  # the 'nvcc' key of extra_compile_args stays
        hits += self._split_flag_hits(token, value)
        if value in ("-V", "--version") and "nvcc" in self._previous_string:
            hits.append(RuleHit("nvcc-probe", "error", 0, token, "nvcc -V reads the CUDA version. " + _PROBE_NOTE,
                                notebook_slug="hipcc-nvidia-platform"))
        self._previous_string = value if isinstance(value, str) else ""
        if self._in_libraries and isinstance(value, str) and value in _CUDA_LIBRARY_NAMES:
            quote = token[-1]
            hits.append(RuleHit("cuda-link-library", "error", token.index(quote) + 1, value, f"Links the CUDA "
                                f"library {value}; its ROCm counterpart is {_CUDA_LIBRARY_NAMES[value]}.",
                                replacement=_CUDA_LIBRARY_NAMES[value], notebook_slug="cuda-link-libraries"))
        if value == "nvcc":
            hits.append(RuleHit("nvcc-compile-args", "info", 0, token, "On ROCm PyTorch the 'nvcc' flags are "
                                "passed to hipcc; keep only flags hipcc understands."))
        self._add(hits, node)


    def _split_flag_hits(self, token: str, value: object) -> list[RuleHit]:
        """``'-gencode', 'arch=compute_80,code=sm_80'`` as two list items: both become offload flags
        (a repeated --offload-arch is harmless, an empty argument is not)."""
        if not isinstance(value, str) or token[-1:] * 3 == token[-3:] and len(token) > 5:
            return []
        replacement = offload_flags(self.archs[:1]) if value in ("-gencode", "--generate-code") else (
            split_gencode_value(value, self.archs))
        if replacement is None:
            return []
        return [RuleHit("nvidia-arch-flag", "error", token.index(token[-1]) + 1, value, "nvcc architecture list "
                        "item; ROCm builds pick targets with --offload-arch (PyTorch adds PYTORCH_ROCM_ARCH's).",
                        replacement=replacement, notebook_slug="no-binary-for-gpu")]

    def visit_FormattedStringText(self, node: cst.FormattedStringText) -> None:
        hits = compiler_hits(node.value, self.archs, "python-build") + library_hits(node.value)
        self._add([h for h in hits if h.name != "nvcc"], node)


def scan_setup_py(rel: str, text: str, ctx: ScanContext | None = None) -> list[Finding]:
    try:
        module = cst.parse_module(text)
    except cst.ParserSyntaxError as error:
        return [parse_error(rel, "python-build", error, error.raw_line)]
    visitor = _SetupVisitor(rel, (ctx or ScanContext()).offload_archs)
    MetadataWrapper(module).visit(visitor)
    if _HIP_BRANCH.search(text):
        note = " This file already has a ROCm branch, so its CUDA branch is left as it is."
        return [dataclasses.replace(f, replacement=None, explanation=f.explanation + note) for f in visitor.findings]
    return visitor.findings


def _text_findings(rel: str, lines: list[str], family: Family, wanted: set[int] | None = None) -> list[Finding]:
    findings: list[Finding] = []
    for number, line in enumerate(lines, start=1):
        if wanted is not None and number not in wanted or line.lstrip().startswith("#"):
            continue
        findings += [to_finding(h, rel, number, family) for h in dependency_hits(line)]
    return findings


def scan_requirements(rel: str, text: str) -> list[Finding]:
    lines = text.splitlines()
    findings: list[Finding] = []
    for number, line in enumerate(lines, start=1):
        body = line.split(" #", 1)[0].strip()
        if not body or body.startswith(("#", "-", "git+", "http:", "https:", "file:", ".")) or "://" in body:
            continue
        try:
            Requirement(body)
        except InvalidRequirement as error:
            findings.append(parse_error(rel, "dependencies", error, number))
    return findings + _text_findings(rel, lines, "dependencies")


def _lines_mentioning(lines: list[str], values: list[str]) -> set[int]:
    return {n for n, line in enumerate(lines, start=1) if any(v and v in line for v in values)}


def scan_pyproject(rel: str, text: str) -> list[Finding]:
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        match = re.search(r"line (\d+)", str(error))
        return [parse_error(rel, "dependencies", error, int(match.group(1)) if match else 1)]
    strings = list(_strings_in(data))
    lines = text.splitlines()
    return _text_findings(rel, lines, "dependencies", _lines_mentioning(lines, strings))


def _strings_in(value: object) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for key, item in value.items() for s in _strings_in(key) + _strings_in(item)]
    if isinstance(value, list):
        return [s for item in value for s in _strings_in(item)]
    return []


def scan_conda(rel: str, text: str) -> list[Finding]:
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        return [parse_error(rel, "dependencies", error, mark.line + 1 if mark else 1)]
    lines = text.splitlines()
    findings = _text_findings(rel, lines, "dependencies", _lines_mentioning(lines, _strings_in(data)))
    channels = data.get("channels", []) if isinstance(data, dict) else []
    if isinstance(channels, list) and "nvidia" in channels:
        number = next((n for n, line in enumerate(lines, 1) if re.search(r"-\s*nvidia\s*$", line)), 1)
        findings.append(Finding("dependencies.nvidia-channel", "warning", rel, number, lines[number - 1].find("nvidia"),
                                "nvidia", "The nvidia conda channel serves CUDA builds only; drop it for ROCm.",
                                notebook_slug="cuda-python-wheels", family="dependencies"))
    return findings

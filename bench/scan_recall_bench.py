"""Scan recall on real trees: the share of CUDA references in build, dependency and CI files that a
finding covers, comments aside.

A reference is an occurrence of a CUDA word (nvcc, CUDA_*, CUDA::, cuda_add_*, cublas…, /usr/local/cuda,
-lcudart, sm_XX/compute_XX, -gencode, +cuXXX, nvidia-smi, …) outside comments. Names that merely contain
the word (a target ``simpleCUFFT``, a file ``kernel_cuda.o``, an option ``ENABLE_CUDA_DEBUG``) are not
references. "line" counts a reference as found when a finding is on its line; "span" when a finding's
text overlaps it. Words inside a quoted sentence of setup.py (an error message) are prose, not
references. Also prints findings on lines without any reference (candidate false positives).

    .venv/bin/python bench/scan_recall_bench.py TREE [TREE ...]
"""
from __future__ import annotations

import re
import sys
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from worker.scanning.files import build_kind, read_text, walk_tree
from worker.scanning.findings import scan_build_files

# What a port has to touch, by kind (user-chosen names such as NVCC_FLAGS, CUDA_BIN_DIR or a target
# "CUDA:" and prose inside messages are not references).
REFERENCE = re.compile(
    r"(?<![\w.$(-])nvcc(?![\w.-])"                                                     # the compiler
    r"|(?:/usr/local|/opt)/cuda[\w./-]*|NVIDIA GPU Computing Toolkit\S*"                # toolkit paths
    r"|\b(?:CUDA_HOME|CUDA_PATH|CUDA_ROOT|CUDA_TOOLKIT_ROOT_DIR|CUDA_DIR|CUDAPATH|CUDA_INSTALL_PATH"
    r"|CUDA_TOOLKIT_PATH|CUDACXX)\b"                                                    # toolkit variables
    r"|\bfind_package\s*\(\s*CUDA(?:Toolkit)?\b|\b(?:enable|check)_language\s*\(\s*CUDA\b"
    r"|\bLANGUAGES\b[^)#]*\bCUDA\b|\bCUDA::\w+|\bcuda_add_\w+|\bcuda_(?:compile|wrap_srcs|include_directories)\w*"
    r"|\bCUDA_(?:NVCC_FLAGS|INCLUDE_DIRS|LIBRARIES|CUBLAS_LIBRARIES|CUFFT_LIBRARIES|\w+_LIBRARY|SEPARABLE_COMPILATION"
    r"|ARCHITECTURES|STANDARD|RESOLVE_DEVICE_SYMBOLS)\b|\bCUDAToolkit_\w+|\bCMAKE_CUDA_\w+|\bcuda_std_\d+"
    r"|COMPILE_LANG\w*:CUDA\b"                                                            # CMake
    r"|(?<![\w-])-l(?:cudart\w*|cuda|cublas\w*|cufft\w*|curand|cusparse|cusolver|cudnn|nccl|nvrtc|nvToolsExt"
    r"|nvidia-ml)\b"                                                                    # libraries
    r"|(?<![\w-])(?:-arch[= ]\s*|--gpu-architecture[= ]|--cuda-gpu-arch=)(?:sm|compute)_\w+|(?<![\w-])-gencode\b"
    r"|--generate-code\b|(?<![\w-])-code=\w+|--?use_fast_math|--expt-[\w-]+|--extended-lambda|-Xptxas|-Xcompiler"
    r"|--compiler-options|-rdc=\w+|--relocatable-device-code=\w+|-lineinfo|(?<![\w-])-t=\d+|--threads[= ]\d+"
    r"|(?<![\w-])-(?:fatbin|cubin|ptx)\b|-Wno-deprecated-gpu-targets|-ccbin\b|-maxrregcount\S*"  # nvcc flags
    r"|\+cu\d+|whl/cu\d+|nvidia-[a-z-]+-cu1\d|cupy-cuda\w*|\bcudatoolkit\b|pytorch-cuda|TORCH_CUDA_ARCH_LIST"
    r"|torch\.version\.cuda|\bCUDAExtension\b"                                            # Python builds
    r"|\bCUDA_VISIBLE_DEVICES\b|\bNVIDIA_VISIBLE_DEVICES\b|\bNCCL_[A-Z_]+\b|nvidia-smi|--gpus\b|nvidia/cuda\S*"
    r"|nvcr\.io\S*|cuda-toolkit\S*|\bmatrix\.cuda\w*"                                       # run and CI
)
_COMMENT = re.compile(r"^\s*(?:#|//)")


_PROSE = re.compile(r"\"[^\"]*\s\S+\s[^\"]*\"|'[^']*\s\S+\s[^']*'")  # a quoted sentence, e.g. an error message


def _code(line: str, kind: str) -> str:
    if _COMMENT.match(line):
        return ""
    if kind == "setup-py":
        line = _PROSE.sub('""', line)
    if kind in ("cmake", "make", "shell", "setup-py", "requirements", "conda", "ci", "pyproject", "dockerfile"):
        quoted = False
        for index, char in enumerate(line):
            if char in "\"'":
                quoted = not quoted
            elif char == "#" and not quoted and (index == 0 or line[index - 1] in " \t"):
                return line[:index]
    return line


def measure(tree: Path) -> tuple[Counter[str], list[str], list[str]]:
    findings = scan_build_files(tree, ())
    by_line: dict[tuple[str, int], list[tuple[int, int]]] = {}
    for f in findings:
        by_line.setdefault((f.file, f.line), []).append((f.column, f.column + max(len(f.text), 1)))
    counts: Counter[str] = Counter()
    missed: list[str] = []
    lines_with_refs: set[tuple[str, int]] = set()
    for tree_file in walk_tree(tree, ()):
        kind = build_kind(tree_file.rel)
        text = read_text(tree_file) if kind else None
        if not kind or text is None:
            continue
        for number, line in enumerate(text.splitlines(), start=1):
            spans = by_line.get((tree_file.rel, number), [])
            for m in REFERENCE.finditer(_code(line, kind)):
                lines_with_refs.add((tree_file.rel, number))
                counts["references"] += 1
                counts["line"] += bool(spans)
                hit = any(a < m.end() and m.start() < b for a, b in spans)
                counts["span"] += hit
                if not spans:
                    missed.append(f"{tree_file.rel}:{number}: {m.group(0)}  | {line.strip()[:100]}")
    extra = [f"{f.file}:{f.line}: {f.rule_id} {f.text!r}" for f in findings
             if (f.file, f.line) not in lines_with_refs and f.rule_id != "parse.error"]
    counts["findings"] = len(findings)
    return counts, missed, extra


def main() -> int:
    total: Counter[str] = Counter()
    for argument in sys.argv[1:]:
        started = time.monotonic()
        counts, missed, extra = measure(Path(argument))
        total.update(counts)
        refs = max(counts["references"], 1)
        print(f"{argument}: {counts['references']} references, line recall {counts['line'] / refs:.1%}, "
              f"span recall {counts['span'] / refs:.1%}, {counts['findings']} findings, "
              f"{len(extra)} on lines without a reference ({time.monotonic() - started:.1f}s)")
        for row in missed[:15]:
            print("   missed", row)
        for row in extra[:8]:
            print("   extra ", row)
    refs = max(total["references"], 1)
    print(f"all: {total['references']} references, line recall {total['line'] / refs:.1%}, "
          f"span recall {total['span'] / refs:.1%}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

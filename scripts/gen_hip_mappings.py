"""Derive translator/data/hip_mappings.json from a checkout of AMD HIPIFY.

Usage:
    .venv/bin/python scripts/gen_hip_mappings.py HIPIFY_GIT_DIR [--include-dir ROOT/usr/include]
        [--declared-in 5.2=HIP52/usr/include]

HIPIFY_GIT_DIR is a git directory (a bare clone works: we read with ``git show``).
Facts come from two published parts of HIPIFY:

* ``docs/tables/*.md``: names, the CUDA/HIP/ROC versions in which each API was
  added, deprecated, changed, removed, and whether HIP supports it at all;
* the name maps in ``src/CUDA2HIP*.cpp``: what kind of entity each name is
  (type, enumerator, define, function), its API family, and the header map.

Only names, versions and categories are extracted; no code is copied. Header
targets are checked against ``--include-dir``: where HIPIFY names ``x.h`` but the
installed HIP only ships ``hip/x.h``, the installed path wins (recorded per row).
"""
from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from hipify_call_tables import argument_casts, overloads  # noqa: E402

OUTPUT = Path(__file__).resolve().parent.parent / "translator" / "data" / "hip_mappings.json"
CALLS_OUTPUT = OUTPUT.with_name("hip_call_rewrites.json")
COLUMNS = (
    "cuda", "hip", "roc", "kind", "family", "library", "status",
    "cuda_added", "cuda_deprecated", "cuda_changed", "cuda_removed",
    "hip_added", "hip_deprecated", "hip_changed", "hip_removed", "hip_experimental", "flags",
)
# Support flags of HIPIFY's maps that change what is emitted (hipify-clang's Statistics::is*).
KEPT_FLAGS = ("HIP_UNSUPPORTED", "ROC_UNSUPPORTED", "HIP_EXPERIMENTAL", "ROC_MIOPEN_ONLY", "HIP_SUPPORTED_V2_ONLY")
TABLE_LIBRARY = {
    "CUDA_Runtime_API": "runtime", "CUDA_Driver_API": "driver", "CUDA_Device_API": "device",
    "CUDA_RTC_API": "nvrtc", "CUBLAS_API": "cublas", "CURAND_API": "curand", "CUFFT_API": "cufft",
    "CUSPARSE_API": "cusparse", "CUSOLVER_API": "cusolver", "CUDNN_API": "cudnn", "CUB_API": "cub",
    "cuComplex_API": "complex",
}
API_LIBRARY = {
    "API_RUNTIME": "runtime", "API_DRIVER": "driver", "API_COMPLEX": "complex", "API_BLAS": "cublas",
    "API_RAND": "curand", "API_DNN": "cudnn", "API_FFT": "cufft", "API_SPARSE": "cusparse",
    "API_SOLVER": "cusolver", "API_CUB": "cub", "API_RTC": "nvrtc", "API_CAFFE2": "caffe2",
}
KIND_BY_CONV = {"CONV_TYPE": "type", "CONV_NUMERIC_LITERAL": "enum", "CONV_DEFINE": "define"}
FAMILY_BY_CONV = {
    "CONV_MEMORY": "memory", "CONV_ORDERED_MEMORY": "memory", "CONV_UNIFIED": "memory",
    "CONV_VIRTUAL_MEMORY": "memory", "CONV_STREAM_MEMORY": "memory", "CONV_PEER": "memory",
    "CONV_EXECUTION": "kernel-launch", "CONV_KERNEL_LAUNCH": "kernel-launch", "CONV_OCCUPANCY": "kernel-launch",
    "CONV_DEVICE_FUNC": "device-function", "CONV_DEVICE_TYPE": "device-function",
    "CONV_LIB_FUNC": "library", "CONV_LIB_DEVICE_FUNC": "library", "CONV_NUMERIC_LITERAL": "type",
    "CONV_DEFINE": "type", "CONV_TYPE": "type", "CONV_THREAD": "device",
}
# Not in HIPIFY's header map at the recorded commit. RCCL keeps NCCL's API names and ships
# rccl/rccl.h; HIPIFY maps __nv_bfloat16 to hip_bfloat16, which hip/hip_bfloat16.h declares.
SUPPLEMENT = [
    {"cuda": "nccl.h", "hip": "rccl/rccl.h", "roc": None, "kind": "header", "family": "header",
     "library": "nccl", "status": "supported"},
    {"cuda": "cuda_bf16.h", "hip": "hip/hip_bfloat16.h", "roc": None, "kind": "header", "family": "header",
     "library": "bf16", "status": "supported"},
    # Parts of the CUDA runtime headers that hip/hip_runtime.h provides as a whole (vector types and
    # make_* functions, built-in variables): dropped like device_launch_parameters.h.
    *({"cuda": name, "hip": None, "roc": None, "kind": "header", "family": "header", "library": "runtime",
       "status": "supported"} for name in ("builtin_types.h", "vector_functions.h", "vector_functions.hpp",
                                           "host_defines.h", "device_types.h")),
]
ROW = re.compile(r"^\|`([^`]+)`\|([^|]*)\|([^|]*)\|([^|]*)\|([^|]*)\|\s*(?:`([^`]*)`)?\s*\|([^|]*)\|([^|]*)\|([^|]*)\|([^|]*)\|([^|]*)\|(?:\s*(?:`([^`]*)`)?\s*\|)?")
MAP_ENTRY = re.compile(r'\{"([^"]+)",\s*\{"([^"]*)",\s*"([^"]*)",\s*(CONV_\w+),\s*(API_\w+)(?:,\s*[\w:]+)?(?:,\s*([A-Z0-9_| ]+))?\}\}')


def git_show(git_dir: Path, path: str) -> str:
    return subprocess.run(["git", "--git-dir", str(git_dir), "show", f"HEAD:{path}"],
                          check=True, capture_output=True, text=True).stdout


def git_ls(git_dir: Path, folder: str) -> list[str]:
    out = subprocess.run(["git", "--git-dir", str(git_dir), "ls-tree", "--name-only", f"HEAD:{folder}"],
                         check=True, capture_output=True, text=True).stdout
    return sorted(out.split())


def table_files(git_dir: Path) -> list[tuple[str, str]]:
    """Pick per library the richest table (with ROC/MIOpen column when published)."""
    names = git_ls(git_dir, "docs/tables")
    chosen: list[tuple[str, str]] = []
    for prefix, library in TABLE_LIBRARY.items():
        mine = [n for n in names if n.startswith(prefix)]
        rich = [n for n in mine if "_and_" in n]
        plain = [n for n in mine if n.endswith("_HIP.md") or "functions_supported_by_HIP" in n]
        if rich or plain:
            chosen.append(((rich or plain)[0], library))
    return chosen


def clean(cell: str | None) -> str | None:
    value = (cell or "").strip()
    return value or None


def parse_table(text: str, library: str) -> list[dict[str, str | None]]:
    rows: list[dict[str, str | None]] = []
    section = ""
    for line in text.splitlines():
        if line.startswith("## "):
            section = line.strip("#* ").lower()
            continue
        match = ROW.match(line)
        if not match:
            continue
        g = [clean(x) for x in match.groups()]
        rows.append({
            "cuda": g[0], "cuda_added": g[1], "cuda_deprecated": g[2], "cuda_changed": g[3],
            "cuda_removed": g[4], "hip": g[5], "hip_added": g[6], "hip_deprecated": g[7],
            "hip_changed": g[8], "hip_removed": g[9], "hip_experimental": g[10], "roc": g[11],
            "library": library, "section": section,
        })
    return rows


def parse_source_maps(git_dir: Path) -> dict[str, tuple[str, str, str, str, str]]:
    """cuda name -> (hip, roc, conv, api, flags) from HIPIFY's name maps."""
    facts: dict[str, tuple[str, str, str, str, str]] = {}
    for name in git_ls(git_dir, "src"):
        if name.startswith("CUDA2HIP") and name.endswith(".cpp"):
            for m in MAP_ENTRY.finditer(git_show(git_dir, f"src/{name}")):
                facts.setdefault(m.group(1), (m.group(2), m.group(3), m.group(4), m.group(5), m.group(6) or ""))
    return facts


def refine_library(name: str, library: str) -> str:
    if library == "device":
        low = name.lower()
        if "bfloat16" in low or "bf16" in low or "bf162" in low:
            return "bf16"
        if "half" in low or re.match(r"^__h", name):
            return "fp16"
    return library


def kept_flags(flags: str) -> str | None:
    kept = [flag for flag in (part.strip() for part in flags.split("|")) if flag in KEPT_FLAGS]
    return " ".join(kept) or None


def finish_row(row: dict[str, str | None], facts: dict[str, tuple[str, str, str, str, str]]) -> dict[str, str | None]:
    name = row["cuda"] or ""
    _hip, source_roc, conv, _api, flags = facts.get(name, ("", "", "", "", ""))
    # The docs tables carry a ROC column only for some libraries; the maps give every rocName.
    row["roc"] = row["roc"] or source_roc or None
    row["flags"] = kept_flags(flags)
    section = row.pop("section") or ""
    kind = KIND_BY_CONV.get(conv) or ("type" if ("type" in section and not conv) else "function")
    library = refine_library(name, row["library"] or "")
    if library not in ("runtime", "driver", "device", "fp16", "bf16"):
        family = "library"
    else:
        family = FAMILY_BY_CONV.get(conv) or conv.removeprefix("CONV_").lower().replace("_", "-") or "other"
    if row["hip"] is None:
        status = "unsupported"
    elif row["cuda_removed"]:
        status = "removed"
    elif row["cuda_deprecated"]:
        status = "deprecated"
    else:
        status = "supported"
    row.update(kind=kind, family=family, library=library, status=status)
    return row


def header_rows(git_dir: Path, include_dirs: list[Path]) -> list[dict[str, str | None]]:
    text = git_show(git_dir, "src/CUDA2HIP.cpp")
    block = text[text.index("CUDA_INCLUDE_MAP"):]
    block = block[: block.index("};")]
    rows: list[dict[str, str | None]] = []
    for m in MAP_ENTRY.finditer(block):
        cuda, hip, roc, _conv, api, flags = m.groups()
        if api == "API_CAFFE2":
            continue
        rows.append({"cuda": cuda, "hip": installed_header(hip, include_dirs) or None, "roc": roc or None,
                     "kind": "header", "family": "header", "library": API_LIBRARY.get(api, api.lower()),
                     "status": "unsupported" if "UNSUPPORTED" in (flags or "") else "supported",
                     "flags": kept_flags(flags or "")})
    return rows


def installed_header(name: str, include_dirs: list[Path]) -> str:
    """Prefer the path the installed HIP actually ships (HIPIFY says hiprtc.h, HIP installs hip/hiprtc.h)."""
    if not name or any((d / name).exists() for d in include_dirs):
        return name
    for d in include_dirs:
        if (d / "hip" / name).exists():
            return f"hip/{name}"
    return name


def hip_version_of(include_dirs: list[Path]) -> str:
    """'HIP 6.4' from hip/hip_version.h, so the data file names no machine path."""
    for folder in include_dirs:
        header = folder / "hip" / "hip_version.h"
        if header.is_file():
            text = header.read_text()
            major = re.search(r"HIP_VERSION_MAJOR\s+(\d+)", text)
            minor = re.search(r"HIP_VERSION_MINOR\s+(\d+)", text)
            if major and minor:
                return f"HIP {major.group(1)}.{minor.group(1)} headers"
    return "no HIP headers found"


COMMENT = re.compile(r"//[^\n]*|/\*.*?\*/", re.DOTALL)
IDENTIFIER = re.compile(r"\b[A-Za-z_]\w*\b")


def declared_identifiers(include_dir: Path) -> set[str]:
    """Every identifier in the AMD-platform headers under ``include_dir`` (comments removed)."""
    names: set[str] = set()
    for header in include_dir.rglob("*.h"):
        if "nvidia_detail" in header.parts:
            continue
        names.update(IDENTIFIER.findall(COMMENT.sub(" ", header.read_text(errors="replace"))))
    return names


def correct_hip_added(rows: dict[str, dict[str, str | None]], version: str, include_dir: Path) -> int:
    """HIPIFY's tables give some names a later HIP version than the headers that already declare them
    (hipDataType, HIP_R_*: tables say 5.7, HIP 5.2 declares them); the headers win."""
    declared = declared_identifiers(include_dir)
    fixed = 0
    for row in rows.values():
        added = row.get("hip_added")
        if row.get("hip") in declared and added and _version(added) > _version(version):
            row["hip_added"] = version
            fixed += 1
    return fixed


def _version(text: str) -> tuple[int, ...]:
    return tuple(int(part) for part in re.findall(r"\d+", text)[:3])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("hipify_git_dir", type=Path)
    parser.add_argument("--include-dir", type=Path, action="append", default=None)
    parser.add_argument("-o", "--output", type=Path, default=OUTPUT)
    parser.add_argument("--declared-in", action="append", default=[], metavar="VERSION=INCLUDE_DIR",
                        help="HIP headers of that version: names they declare get hip_added <= VERSION")
    args = parser.parse_args()
    include_dirs = args.include_dir or [Path("/usr/include")]
    git_dir: Path = args.hipify_git_dir
    facts = parse_source_maps(git_dir)
    rows: dict[str, dict[str, str | None]] = {}
    for filename, library in table_files(git_dir):
        for row in parse_table(git_show(git_dir, f"docs/tables/{filename}"), library):
            rows.setdefault(row["cuda"] or "", finish_row(row, facts))
    for row in header_rows(git_dir, include_dirs) + SUPPLEMENT:
        rows.setdefault(row["cuda"] or "", row)
    corrections: dict[str, int] = {}
    for spec in args.declared_in:
        version, _, folder = spec.partition("=")
        corrections[f"HIP {version} headers"] = correct_hip_added(rows, version, Path(folder))
    commit = subprocess.run(["git", "--git-dir", str(git_dir), "rev-parse", "HEAD"],
                            check=True, capture_output=True, text=True).stdout.strip()
    document = {
        "provenance": {
            "source": "https://github.com/ROCm/HIPIFY (docs/tables/*.md and name maps in src/CUDA2HIP*.cpp)",
            "commit": commit,
            "headers_checked_against": hip_version_of(include_dirs),
            "hip_added_lowered_by_declarations_in": corrections,
            "regenerate": "python scripts/gen_hip_mappings.py <HIPIFY git dir> --include-dir <ROCm 6.4 root>/usr/include"
                          " --declared-in 5.2=<libamdhip64-dev 5.2 unpacked>/usr/include",
        },
        "columns": list(COLUMNS),
        "rows": [[rows[name].get(col) for col in COLUMNS] for name in sorted(rows)],
    }
    args.output.write_text(json.dumps(document, separators=(",", ":")) + "\n")
    print(f"wrote {len(rows)} mappings from HIPIFY {commit[:12]} to {args.output}")
    write_call_tables(git_dir, commit, args.output.with_name(CALLS_OUTPUT.name))


def write_call_tables(git_dir: Path, commit: str, output: Path) -> None:
    """hipify-clang's argument rewrites and overloads (HipifyAction.cpp) as data."""
    source = git_show(git_dir, "src/HipifyAction.cpp")
    latest = re.search(r"HIP_LATEST\s*=\s*HIP_(\d)(\d)(\d)0", git_show(git_dir, "src/Statistics.h"))
    document = {
        "provenance": {"source": "https://github.com/ROCm/HIPIFY (FuncArgCasts, FuncOverloads in src/HipifyAction.cpp)",
                       "commit": commit},
        # the HIP version hipify-clang writes for {hip_version} (HIP_LATEST in src/Statistics.h)
        "hipify_hip_latest": f"{latest.group(1)}.{int(latest.group(2) + latest.group(3))}" if latest else "",
        "argument_casts": argument_casts(source),
        "overloads": overloads(source),
    }
    output.write_text(json.dumps(document, indent=0, sort_keys=True) + "\n")
    print(f"wrote {len(document['argument_casts'])} call rewrites to {output}")


if __name__ == "__main__":
    main()

from __future__ import annotations

import json

from tests.translator.toolchain import include_dir
from translator.includes import ROCM6_HEADERS
from translator.mapping import DATA_FILE, load_default


def test_it_looks_up_runtime_functions_with_family_and_versions() -> None:
    mapping = load_default().lookup("cudaMalloc")
    assert mapping is not None
    assert (mapping.hip, mapping.kind, mapping.family, mapping.library, mapping.status) == (
        "hipMalloc", "function", "memory", "runtime", "supported")
    assert mapping.hip_added == "1.5.0"


def test_it_knows_kinds_statuses_and_roc_names() -> None:
    db = load_default()
    assert db.lookup("cudaMemcpyHostToDevice").kind == "enum"  # type: ignore[union-attr]
    assert db.lookup("cudaStream_t").kind == "type"  # type: ignore[union-attr]
    assert db.lookup("__CUDACC__").kind == "define"  # type: ignore[union-attr]
    assert db.lookup("cudaThreadSynchronize").status == "deprecated"  # type: ignore[union-attr]
    assert db.lookup("cudaDeviceFlushGPUDirectRDMAWrites").status == "unsupported"  # type: ignore[union-attr]
    assert db.lookup("cublasSgemm").roc == "rocblas_sgemm"  # type: ignore[union-attr]
    assert db.lookup("cudnnCreate").roc == "miopenCreate"  # type: ignore[union-attr]
    assert db.lookup("notACudaName") is None


def test_it_records_provenance_and_a_regeneration_command() -> None:
    provenance = json.loads(DATA_FILE.read_text())["provenance"]
    assert len(provenance["commit"]) == 40
    assert "HIPIFY" in provenance["source"]
    assert "gen_hip_mappings.py" in provenance["regenerate"]


def test_runtime_header_targets_exist_in_the_toolchain_root() -> None:
    include = include_dir()
    headers = load_default().headers()
    hip_headers = {m.hip for m in headers.values() if m.hip and m.hip.startswith("hip/")}
    assert {"hip/hip_runtime.h", "hip/hiprtc.h", "hip/hip_fp16.h", "hip/hip_complex.h"} <= hip_headers
    assert sorted(h for h in hip_headers if not (include / h).is_file()) == []
    assert headers["nvrtc.h"].hip == "hip/hiprtc.h"


def test_rocm6_header_folders_exist_in_the_toolchain_root() -> None:
    include = include_dir()
    installed = {"hipblas", "hipsparse", "hipsolver", "hipblaslt", "rocblas", "hipfft"}
    for folder in ROCM6_HEADERS.values():
        if folder.split("/")[0] in installed or folder.startswith("hip/"):
            assert (include / folder).is_file(), folder


def test_it_loads_cached() -> None:
    assert load_default() is load_default()

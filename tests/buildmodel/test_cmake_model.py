"""CMake's File API reply read into a typed model, and the checks made from it (no toolchain: a reply of
our own in the shape CMake 4 writes, trimmed to what the model reads)."""
from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path

import pytest

from worker.buildmodel.cmake_checks import (
    RULE_AUX,
    RULE_LANGUAGE,
    c_dialects,
    expected_outputs,
    missing_offload_archs,
    offload_archs_in,
    skip_reasons,
    unbuilt_cuda_sources,
)
from worker.buildmodel.cmake_model import CMakeModel, ModelError, read_model
from worker.scanning.findings import scan_build_files
from worker.scanning.fixes import apply_fixes
from worker.toolchain.cmake_build import configure_flags, keep_going

ROOT = "/workspace/hip"


def _target(name: str, kind: str, sources: list[tuple[str, int | None]], groups: list[dict[str, object]],
            **extra: object) -> dict[str, object]:
    return {
        "name": name, "type": kind, "id": f"{name}::@1",
        "artifacts": [{"path": f"lib{name}.a" if kind == "STATIC_LIBRARY" else name}],
        "backtrace": 1, "backtraceGraph": {"files": ["CMakeLists.txt"], "nodes": [{"file": 0}, {"file": 0, "line": 7}]},
        "sources": [{"path": p, **({"compileGroupIndex": g} if g is not None else {})} for p, g in sources],
        "compileGroups": groups, **extra,
    }


REPLY: dict[str, dict[str, object]] = {
    "index-1.json": {"cmake": {"version": {"string": "4.3.4"}, "generator": {"name": "Unix Makefiles"}},
                     "reply": {"codemodel-v2": {"jsonFile": "codemodel-v2-1.json"}}},
    "codemodel-v2-1.json": {
        "paths": {"source": ROOT, "build": "/workspace/build"},
        "configurations": [{
            "directories": [{"source": "."}, {"source": "tools"}],
            "targets": [{"name": "kernels", "id": "kernels::@1", "directoryIndex": 0, "jsonFile": "target-kernels.json"},
                        {"name": "demo", "id": "demo::@1", "directoryIndex": 0, "jsonFile": "target-demo.json"},
                        {"name": "timer", "id": "timer::@2", "directoryIndex": 1, "jsonFile": "target-timer.json"},
                        {"name": "docs", "id": "docs::@1", "directoryIndex": 0, "jsonFile": "target-docs.json"}],
        }],
    },
    "target-kernels.json": _target(
        "kernels", "STATIC_LIBRARY", [("src/blur.cu", 0), (f"{ROOT}/src/sharpen.cu", None), ("src/blur.h", None)],
        [{"language": "HIP", "compileCommandFragments": [{"fragment": "-std=gnu++17 --offload-arch=gfx90a"}],
          "includes": [{"path": f"{ROOT}/include"}, {"path": "/opt/rocm/include"}],
          "defines": [{"define": "TILE=16"}]}]),
    "target-demo.json": _target(
        "demo", "EXECUTABLE", [("main.cpp", 0)], [{"language": "CXX", "compileCommandFragments": [{"fragment": "-O2"}]}],
        link={"commandFragments": [{"fragment": "-O2", "role": "flags"}, {"fragment": "libkernels.a", "role": "libraries"},
                                   {"fragment": "-lhipblas", "role": "libraries"}]},
        dependencies=[{"id": "kernels::@1"}]),
    "target-timer.json": _target(
        "timer", "STATIC_LIBRARY", [("tools/timer.c", 0)],
        [{"language": "C", "compileCommandFragments": [{"fragment": "-std=gnu17"}]}]),
    "target-docs.json": {"name": "docs", "type": "UTILITY", "sources": []},
}


def load(reply: Mapping[str, dict[str, object]]) -> CMakeModel:
    return read_model(lambda name: json.loads(json.dumps(reply[name])) if name in reply else None, "index-1.json")


def test_the_reply_becomes_targets_with_sources_languages_flags_and_links() -> None:
    model = load(REPLY)
    assert (model.cmake_version, model.generator) == ("4.3.4", "Unix Makefiles")
    kernels, demo, timer = model.target("kernels"), model.target("demo"), model.target("timer")
    assert kernels is not None and demo is not None and timer is not None
    assert [(s.path, s.language) for s in kernels.sources] == [("src/blur.cu", "HIP"), ("src/sharpen.cu", ""), ("src/blur.h", "")]
    assert kernels.include_dirs == ["include", "/opt/rocm/include"] and kernels.defines == ["TILE=16"]
    assert kernels.compile_flags == {"HIP": ["-std=gnu++17 --offload-arch=gfx90a"]} and kernels.languages == ["HIP"]
    assert demo.link_libraries == ["libkernels.a", "-lhipblas"] and demo.dependencies == ["kernels"]
    assert timer.folder == "tools" and kernels.declared_at == "CMakeLists.txt:7"
    assert [t.name for t in model.built_targets] == ["kernels", "demo", "timer"]  # a utility target builds nothing
    assert [(t.name, a) for t, a in expected_outputs(model)] == [("kernels", "libkernels.a"), ("demo", "demo"), ("timer", "libtimer.a")]
    assert c_dialects(model) == ["gnu17"]


def test_a_reply_without_a_codemodel_or_with_a_missing_file_is_an_error() -> None:
    with pytest.raises(ModelError, match="no codemodel"):
        load({**REPLY, "index-1.json": {"reply": {}}})
    with pytest.raises(ModelError, match="target-demo.json is missing"):
        load({k: v for k, v in REPLY.items() if k != "target-demo.json"})
    with pytest.raises(ModelError, match="unexpected file"):
        load({**REPLY, "index-1.json": {"reply": {"codemodel-v2": {"jsonFile": "../../etc/passwd"}}}})


def test_cuda_sources_not_compiled_as_hip_are_named_with_their_rule(tmp_path: Path) -> None:
    (tmp_path / "src").mkdir()
    (tmp_path / "kernels").mkdir()
    (tmp_path / "kernels" / "scan.cu").write_text("__global__ void k() {}\n")
    (tmp_path / "CMakeLists.txt").write_text("aux_source_directory(${CMAKE_CURRENT_SOURCE_DIR}/kernels KERNELS)\n"
                                             "add_library(kernels STATIC src/blur.cu ${KERNELS})\n")
    problems = unbuilt_cuda_sources(load(REPLY), tmp_path)
    assert [(p.target, p.path, p.rule) for p in problems] == [
        ("kernels", "src/sharpen.cu", RULE_LANGUAGE), ("kernels", "kernels/scan.cu", RULE_AUX)]
    assert problems[0].message == ("src/sharpen.cu (target kernels) is CUDA but the converted build does not compile "
                                   "it [cmake.cu-source-language]")


def test_every_hip_compile_must_name_the_runs_offload_targets() -> None:
    model = load(REPLY)
    assert missing_offload_archs(model, ["gfx90a"]) == {}
    assert missing_offload_archs(model, ["gfx90a", "gfx942"]) == {"kernels": ["gfx942"]}
    assert configure_flags(["gfx90a", "gfx942"])[2:4] == ["-DCMAKE_HIP_ARCHITECTURES=gfx90a;gfx942",
                                                           "-DAMDGPU_TARGETS=gfx90a;gfx942"]
    assert configure_flags(["gfx90a"])[-1] == "-DCMAKE_C_FLAGS_INIT=-std=gnu17"


def test_offload_bundles_skip_reasons_and_keep_going() -> None:
    listing = ("libk.a(blur.cu.o):\tfile format elf64-x86-64\n"
               "Extracting offload bundle: blur.cu.o.0.host-x86_64-unknown-linux-gnu-\n"
               "Extracting offload bundle: blur.cu.o.0.hipv4-amdgcn-amd-amdhsa--gfx90a\n"
               "Extracting offload bundle: blur.cu.o.0.hipv4-amdgcn-amd-amdhsa--gfx942:sramecc+:xnack-\n")
    assert offload_archs_in(listing) == ["gfx90a", "gfx942:sramecc+:xnack-"]
    configure = ("-- Detecting HIP compile features - done\n"
                 "-- Could NOT find Vulkan (missing: Vulkan_LIBRARY Vulkan_INCLUDE_DIR)\n"
                 "-- Vulkan SDK not found: viewer will not be built\n-- Configuring done (7.1s)\n")
    assert skip_reasons(configure) == ["Could NOT find Vulkan (missing: Vulkan_LIBRARY Vulkan_INCLUDE_DIR)",
                                       "Vulkan SDK not found: viewer will not be built"]
    assert keep_going("Unix Makefiles") == ["--", "-k"] and keep_going("Ninja") == ["--", "-k", "0"]


CONVERTED = {
    "CMakeLists.txt": ("cmake_minimum_required(VERSION 3.18)\nproject(demo LANGUAGES CXX CUDA)\n"
                       "aux_source_directory(src SRC)\nadd_executable(demo main.cpp ${SRC})\n"
                       "target_sources(demo PRIVATE $<$<BOOL:${FAST}>:fast.cu> $<$<CONFIG:Debug>:check.cu,other.cu>)\n"
                       "add_subdirectory(extra)\n"),
    "extra/CMakeLists.txt": "target_sources(demo PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/edge.cu)\n",
}


def test_the_conversion_keeps_aux_generator_expression_and_other_folder_sources(tmp_path: Path) -> None:
    for name, text in CONVERTED.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    applied = apply_fixes(tmp_path, scan_build_files(tmp_path, ()), set())
    top, extra = (tmp_path / "CMakeLists.txt").read_text(), (tmp_path / "extra/CMakeLists.txt").read_text()
    assert ('aux_source_directory(src SRC)\nfile(GLOB SRC_CUDA_SOURCES CONFIGURE_DEPENDS "src/*.cu")\n'
            "set_source_files_properties(${SRC_CUDA_SOURCES} PROPERTIES LANGUAGE HIP)\n"
            "list(APPEND SRC ${SRC_CUDA_SOURCES})\n") in top
    assert "set_source_files_properties(fast.cu check.cu other.cu PROPERTIES LANGUAGE HIP)" in top
    assert ("set_source_files_properties(${CMAKE_CURRENT_SOURCE_DIR}/edge.cu TARGET_DIRECTORY demo "
            "PROPERTIES LANGUAGE HIP)") in extra
    assert "cmake.aux-source-directory-cuda" in {fix.rule_id for fix in applied}
    assert apply_fixes(tmp_path, scan_build_files(tmp_path, ()), set()) == []  # twice changes nothing


def test_targets_excluded_from_all_are_not_expected_after_a_build(tmp_path: Path) -> None:
    (tmp_path / "tools").mkdir()
    (tmp_path / "CMakeLists.txt").write_text("add_library(kernels STATIC EXCLUDE_FROM_ALL src/blur.cu)\n"
                                             "add_subdirectory(tools EXCLUDE_FROM_ALL)\n")
    (tmp_path / "tools" / "CMakeLists.txt").write_text("add_library(timer STATIC timer.c)\n")
    assert [t.name for t, _ in expected_outputs(load(REPLY), tmp_path)] == ["demo"]
    (tmp_path / "CMakeLists.txt").write_text("add_library(kernels STATIC src/blur.cu)\n"
                                             "set_target_properties(kernels PROPERTIES EXCLUDE_FROM_ALL ON)\n")
    assert [t.name for t, _ in expected_outputs(load(REPLY), tmp_path)] == ["demo", "timer"]

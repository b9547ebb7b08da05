"""Parsing clang/hipcc and linker output into structured diagnostics (captured real output)."""
from __future__ import annotations

from pathlib import Path

from worker.toolchain.demangle import sandboxed_demangler
from worker.toolchain.diagnostics import parse_compiler_output, parse_linker_output
from worker.toolchain.roots import select_root
from worker.toolchain.sandbox import Sandbox

HIPCC_OUTPUT = """\
In file included from src/main.hip:1:
In file included from ./include/util.h:3:
./include/detail.h:7:12: error: use of undeclared identifier 'cudaStream_t'
    return cudaStream_t{};
           ^
./include/detail.h:2:6: note: candidate function not viable
src/main.hip:4:7: warning: unused variable 'spare' [-Wunused-variable]
  int spare;
      ^
src/main.hip:9:3: error: no matching function for call to 'launch' [-Werror,-Wfoo-bar]
src/main.hip:2:10: fatal error: 'cuda_runtime.h' file not found
#include <cuda_runtime.h>
         ^~~~~~~~~~~~~~~~
4 errors generated when compiling for gfx90a.
In file included from src/main.hip:1:
In file included from ./include/util.h:3:
./include/detail.h:7:12: error: use of undeclared identifier 'cudaStream_t'
src/main.hip:4:7: warning: unused variable 'spare' [-Wunused-variable]
clang: error: unsupported option '--cuda-gpu-arch=sm_80'
"""


def test_it_deduplicates_messages_printed_for_host_and_each_device_target() -> None:
    keys = [(d.file, d.line, d.severity) for d in parse_compiler_output(HIPCC_OUTPUT)]
    assert keys == [("./include/detail.h", 7, "error"), ("src/main.hip", 4, "warning"),
                    ("src/main.hip", 9, "error"), ("src/main.hip", 2, "fatal"), ("", 0, "error")]


def test_it_keeps_the_include_stack_and_attaches_notes() -> None:
    first = parse_compiler_output(HIPCC_OUTPUT)[0]
    assert first.include_stack == ["src/main.hip:1", "./include/util.h:3"]
    assert first.notes == ["./include/detail.h:2:6: candidate function not viable"]
    assert first.column == 12 and first.message == "use of undeclared identifier 'cudaStream_t'"


def test_it_extracts_the_warning_flag_even_when_promoted_to_error() -> None:
    flags = {d.line: d.flag for d in parse_compiler_output(HIPCC_OUTPUT) if d.file == "src/main.hip"}
    assert flags == {4: "-Wunused-variable", 9: "-Wfoo-bar", 2: ""}


def test_it_reports_driver_errors_without_a_file() -> None:
    driver = parse_compiler_output(HIPCC_OUTPUT)[-1]
    assert driver.message == "unsupported option '--cuda-gpu-arch=sm_80'" and driver.is_error


GNU_LD_OUTPUT = """\
/usr/bin/ld: build/obj/app/main.cu.o: in function `main':
main.cu:(.text+0x42): undefined reference to `_ZN4blas4gemmEPKfS1_Pfi'
main.cu:(.text+0x99): undefined reference to `_ZN4blas4gemmEPKfS1_Pfi'
/usr/bin/ld: build/obj/src/a.hip.o:(.data.rel+0x0): undefined reference to `table'
/usr/bin/ld: cannot find -lcudnn: No such file or directory
/usr/bin/ld: cannot find -lfoo: No such file or directory
clang: error: linker command failed with exit code 1 (use -v to see invocation)
"""
LLD_OUTPUT = """\
ld.lld: error: undefined symbol: launch(float*, int)
>>> referenced by main.hip
>>>               main.o:(main)
ld.lld: error: unable to find library -lcurand
"""


def test_it_demangles_undefined_references_once_per_symbol_and_object(tmp_path: Path) -> None:
    demangle = sandboxed_demangler(Sandbox(select_root(), tmp_path))
    undefined = [p for p in parse_linker_output(GNU_LD_OUTPUT, demangle) if p.kind == "undefined_reference"]
    assert [(p.symbol, p.object, p.function) for p in undefined] == [
        ("blas::gemm(float const*, float const*, float*, int)", "build/obj/app/main.cu.o", "main"),
        ("table", "build/obj/src/a.hip.o", ""),
    ]
    assert undefined[0].mangled == "_ZN4blas4gemmEPKfS1_Pfi"


def test_without_a_demangler_symbols_stay_as_the_linker_printed_them() -> None:
    undefined = [p for p in parse_linker_output(GNU_LD_OUTPUT) if p.kind == "undefined_reference"]
    assert [(p.symbol, p.mangled) for p in undefined] == [("_ZN4blas4gemmEPKfS1_Pfi", ""), ("table", "")]


def test_it_maps_missing_cuda_libraries_to_rocm_packages() -> None:
    missing = {p.library: (p.replacement, p.package) for p in parse_linker_output(GNU_LD_OUTPUT + LLD_OUTPUT)
               if p.kind == "missing_library"}
    assert missing == {"cudnn": ("MIOpen", "miopen-hip-dev"), "foo": ("", ""),
                       "curand": ("hipRAND", "libhiprand-dev")}


def test_it_reads_lld_undefined_symbols_with_their_object_and_function() -> None:
    [problem] = [p for p in parse_linker_output(LLD_OUTPUT) if p.kind == "undefined_reference"]
    assert (problem.symbol, problem.object, problem.function) == ("launch(float*, int)", "main.o", "main")

"""Every family's messages parse into (file, line, message, kind)."""
from __future__ import annotations

from worker.toolchain.log_families import parse_log

LOG = """\
src/a.cu(12): error: identifier "cudaFoo" is undefined
src/b.cpp:3:10: fatal error: cuda_runtime.h: No such file or directory
src/c.hip:4:2: error: use of undeclared identifier 'x'
/usr/bin/ld: m.o: in function `main':
m.hip:(.text+0x1): undefined reference to `helper(int)'
/usr/bin/ld: b.o:(.bss+0x0): multiple definition of `g_count'; a.o:(.bss+0x0): first defined here
ld.lld: error: unable to find library -lhipblas
CMake Error at CMakeLists.txt:7 (find_package):
  Could NOT find Boost (missing: Boost_INCLUDE_DIR)

make: *** No rule to make target 'k.cu', needed by 'k.o'.  Stop.
make[1]: *** [Makefile:9: k.o] Error 1
Traceback (most recent call last):
  File "setup.py", line 4, in <module>
    import torch
ModuleNotFoundError: No module named 'torch'
ERROR: No matching distribution found for cupy-cuda12x
"""


def test_each_family() -> None:
    found = {(p.family, p.kind, p.file, p.line, p.message) for p in parse_log(LOG)}
    assert ("nvcc", "compile_error", "src/a.cu", 12, 'identifier "cudaFoo" is undefined') in found
    assert ("cc", "compile_error", "src/b.cpp", 3, "cuda_runtime.h: No such file or directory") in found
    assert ("cc", "compile_error", "src/c.hip", 4, "use of undeclared identifier 'x'") in found
    assert ("ld", "undefined_reference", "m.o", 0, "helper(int)") in found
    assert ("ld", "multiple_definition", "b.o", 0, "multiple definition of 'g_count'") in found
    assert ("lld", "missing_library", "", 0, "hipblas") in found
    assert ("cmake", "cmake_error", "CMakeLists.txt", 7, "Could NOT find Boost (missing: Boost_INCLUDE_DIR)") in found
    assert ("make", "make_no_rule", "k.cu", 0, "No rule to make target 'k.cu', needed by 'k.o'") in found
    assert ("make", "make_error", "Makefile", 9, "[k.o] Error 1") in found
    assert ("python", "python_exception", "setup.py", 4, "ModuleNotFoundError: No module named 'torch' (in `import torch`)") in found
    assert ("pip", "pip_resolver", "", 0, "No matching distribution found for cupy-cuda12x") in found


def test_gxx_quotes_are_plain() -> None:
    [problem] = parse_log("x.cpp:1:1: error: \u2018cudaFree\u2019 was not declared in this scope\n")
    assert problem.message == "'cudaFree' was not declared in this scope"


def test_a_tools_own_traceback_is_not_the_builds_failure() -> None:
    probe = ('Traceback (most recent call last):\n  File "/opt/rocm/bin/rocm_agent_enumerator", line 282, in <module>\n'
             "    main()\nFileNotFoundError: [Errno 2] No such file or directory: '/sys/class/kfd/kfd/topology/nodes'\n")
    assert parse_log(probe) == []
    deep = ('Traceback (most recent call last):\n  File "/workspace/hip/setup.py", line 9, in <module>\n    setup()\n'
            '  File "/usr/lib/python3/dist-packages/setuptools/__init__.py", line 104, in setup\n'
            "RuntimeError: Error compiling objects for extension\n")
    [problem] = parse_log(deep)
    assert (problem.file, problem.line) == ("/workspace/hip/setup.py", 9)


def test_migrators_own_limit_records_and_clangs_fileless_errors_are_problems() -> None:
    log = ("error: unable to open output file 'build/cg_table.o': 'No space left on device'\n"
           "1 error generated when compiling for host.\n"
           "migrator: workspace limit reached (2 MB)\n")
    found = [(p.family, p.kind, p.message) for p in parse_log(log)]
    assert found == [("clang", "compile_error", "unable to open output file 'build/cg_table.o': 'No space left on device'"),
                     ("migrator", "limit", "workspace limit reached (2 MB)")]


def test_a_cmake_error_in_cmakes_own_module_is_placed_at_the_projects_call() -> None:
    log = """CMake Error at /usr/share/cmake-4.3/Modules/FindPkgConfig.cmake:1093 (message):
  The following required packages were not found:

   - fftw3f

Call Stack (most recent call first):
  /usr/share/cmake-4.3/Modules/FindPkgConfig.cmake:1166 (_pkg_check_modules_internal)
  cmake/deps.cmake:12 (pkg_check_modules)
  CMakeLists.txt:4 (include)


-- Configuring incomplete, errors occurred!
"""
    [problem] = parse_log(log)
    assert (problem.file, problem.line) == ("cmake/deps.cmake", 12)
    assert problem.message == "The following required packages were not found: - fftw3f"


def test_a_python_exception_keeps_the_projects_line_that_raised_it() -> None:
    log = ('Traceback (most recent call last):\n  File "/workspace/setup.py", line 5, in <module>\n'
           '    major = int(torch.version.cuda.split(".")[0])\n                ^^^^^^^^^^^^^^^^^^^^^^^^\n'
           "AttributeError: 'NoneType' object has no attribute 'split'\n")
    [problem] = parse_log(log)
    assert problem.message == ("AttributeError: 'NoneType' object has no attribute 'split' "
                               "(in `major = int(torch.version.cuda.split(\".\")[0])`)")


def test_a_target_left_without_sources_by_a_missing_file_is_that_files_consequence() -> None:
    log = ("CMake Error at CMakeLists.txt:3 (add_executable):\n  Cannot find source file:\n\n    src/mian.cpp\n\n\n"
           "CMake Error at CMakeLists.txt:3 (add_executable):\n  No SOURCES given to target: raytrace\n\n\n"
           "CMake Error at CMakeLists.txt:9 (add_library):\n  No SOURCES given to target: kernels\n")
    found = [(p.line, p.message) for p in parse_log(log)]
    assert found == [(3, "Cannot find source file: src/mian.cpp"), (9, "No SOURCES given to target: kernels")]


def test_the_project_builds_closing_line_names_the_limit_that_stopped_it() -> None:
    log = ("make: *** [Makefile:13: src/radix.o] Error 1\n"
           "Project build failed: make failed in . (exit status -9): the command ran past its time limit of 10 s "
           "and was killed (failing for gfx90a)\n"
           "Project build failed: build step failed (exit status 2) (failing for gfx90a)\n")
    assert [(p.family, p.kind, p.message) for p in parse_log(log) if p.family == "migrator"] == [
        ("migrator", "limit", "the command ran past its time limit of 10 s and was killed")]

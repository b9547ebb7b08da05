"""The lines that state a stage's failure: errors, not the noise of a build log."""

from migrator.lib.signatures.failure_lines import is_consequence, own_error_lines

LINK_FAILED = "clang: error: linker command failed with exit code 1 (use -v to see invocation)"
BUILD_LOG = f"""-- Configuring
[ 10%] Building HIP object k.o
Traceback (most recent call last):
  File "rocm_agent_enumerator", line 1
RuntimeError: hipErrorNoDevice
warning: unused variable 'v'
a.cu:3:1: error: use of undeclared identifier 'cudaFoo'
CMake Error at CMakeLists.txt:3 (find_package):
  Could not find CUDA

-- Generating done
a.cu:3:1: error: use of undeclared identifier 'cudaFoo'
[migrator] error: the build failed
{LINK_FAILED}
"""


def test_it_keeps_error_lines_once_with_structured_diagnostics_first() -> None:
    assert own_error_lines(BUILD_LOG, ["k.hip:1:1: error: from the diagnostics"]) == [
        "k.hip:1:1: error: from the diagnostics",
        "a.cu:3:1: error: use of undeclared identifier 'cudaFoo'",
        "CMake Error at CMakeLists.txt:3 (find_package):",
        "Could not find CUDA",
        LINK_FAILED,
    ]


def test_a_tool_traceback_is_dropped_from_a_build_log_but_kept_for_the_smoke_stage() -> None:
    assert "RuntimeError: hipErrorNoDevice" not in own_error_lines(BUILD_LOG)
    assert "RuntimeError: hipErrorNoDevice" in own_error_lines(BUILD_LOG, keep_tracebacks=True)


def test_lines_that_only_report_a_failure_are_consequences() -> None:
    assert is_consequence(LINK_FAILED)
    assert is_consequence("make[2]: *** [CMakeFiles/app.dir/build.make:76: app] Error 1")
    assert not is_consequence("a.cu:3:1: error: use of undeclared identifier 'cudaFoo'")

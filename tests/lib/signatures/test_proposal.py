"""Signatures proposed from a failing log line, valid and matching the same failure elsewhere."""

import pytest

from migrator.lib.signatures.matcher import SignatureSpec, compile_signatures
from migrator.lib.signatures.proposal import signature_from_log_line, specific_signature
from migrator.lib.signatures.validate import validate_signature


@pytest.mark.parametrize(
    ("line", "proposal"),
    [
        (
            "/x/y/a.cu:3:10: fatal error: 'cuda_runtime.h' file not found",
            "fatal error: 'cuda_runtime.h' file not found",
        ),
        (
            "/usr/bin/ld: cannot find -lcublas: No such file or directory",
            "ld: cannot find -lcublas: No such file or directory",
        ),
        (
            "u.cpp:(.text+0x51): undefined reference to `hipLaunchKernel'",
            "undefined reference to `hipLaunchKernel'",
        ),
        (
            "nvcc fatal   : Unknown option '--offload-arch=gfx90a'",
            "nvcc fatal : Unknown option '--offload-arch=gfx90a'",
        ),
        (
            '\x1b[1m\x1b[31m[ 42%] kernel.hip(12): error: identifier "warpSize32" is undefined\x1b[0m',
            'error: identifier "warpSize32" is undefined',
        ),
        (
            "2024-05-01T10:00:00Z RuntimeError: HIP error: invalid device function",
            "RuntimeError: HIP error: invalid device function",
        ),
    ],
)
def test_it_proposes_the_message_without_location_prefixes(
    line: str, proposal: str
) -> None:
    assert signature_from_log_line(line) == proposal


def test_a_proposal_is_a_valid_signature_that_matches_its_own_line_elsewhere() -> None:
    line = "/home/ci/repo/src/attn.hip:88:4: error: use of undeclared identifier 'cudaFuncSetAttribute'"
    proposal = signature_from_log_line(line)
    validate_signature("text", proposal)
    other_machine = "build/src/attn.hip:91:4: error: use of undeclared identifier 'cudaFuncSetAttribute'"
    matches = compile_signatures([SignatureSpec(1, 1, "text", proposal)]).match(
        other_machine
    )
    assert [m.entry_id for m in matches] == [1]


def test_proposal_is_capped_at_the_signature_length_limit() -> None:
    assert len(signature_from_log_line("error: " + "x" * 2000)) == 500


def test_gxx_guesses_and_warning_flags_are_not_part_of_the_proposal() -> None:
    line = "src/a.cpp:21:5: error: 'cudaSetDevice' was not declared in this scope; did you mean 'hipSetDevice'?"
    assert signature_from_log_line(line) == "error: 'cudaSetDevice' was not declared in this scope"


LOG = """\
CMake Error at CMakeLists.txt:22 (find_package):
  Could not find a package configuration file provided by "rccl" with any of
  the following names:
/usr/bin/ld: main.o: in function `main':
main.hip:(.text+0x2e): undefined reference to `normalize_rows(float*, int)'
clang++: error: linker command failed with exit code 1 (use -v to see invocation)
make[2]: *** [CMakeFiles/app.dir/build.make:98: app] Error 1
"""


@pytest.mark.parametrize(
    ("line", "proposal"),
    [
        ("CMake Error at CMakeLists.txt:22 (find_package):",
         'Could not find a package configuration file provided by "rccl" with any of'),
        ("clang++: error: linker command failed with exit code 1 (use -v to see invocation)",
         "undefined reference to `normalize_rows(float*, int)'"),
        ("make[2]: *** [CMakeFiles/app.dir/build.make:98: app] Error 1",
         "undefined reference to `normalize_rows(float*, int)'"),
        ("main.hip:(.text+0x2e): undefined reference to `normalize_rows(float*, int)'",
         "undefined reference to `normalize_rows(float*, int)'"),
    ],
)
def test_a_line_that_only_reports_a_failure_proposes_the_line_that_states_it(line: str, proposal: str) -> None:
    assert specific_signature(line, LOG.splitlines()) == proposal

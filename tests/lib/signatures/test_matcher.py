"""Matching many signatures against a log: text and regex semantics, ranking, caps, timeouts."""

from migrator.lib.signatures.literals import required_regex_literals
from migrator.lib.signatures.matcher import SignatureSpec, compile_signatures

LINK_LOG = (
    "[ 98%] Linking HIP executable app\n"
    "/usr/bin/ld: cannot find -lcublas: No such file or directory\n"
    "clang: error: linker command failed with exit code 1 (use -v to see invocation)"
)


def _matched_entries(specs: list[SignatureSpec], log: str) -> list[int]:
    return [match.entry_id for match in compile_signatures(specs).match(log)]


def test_text_signature_ignores_the_linker_path_prefix() -> None:
    specs = [SignatureSpec(1, 1, "text", "cannot find -lcublas")]
    assert _matched_entries(specs, LINK_LOG) == [1]


def test_text_signature_ignores_source_paths_line_numbers_and_quote_style() -> None:
    spec = SignatureSpec(
        1, 1, "text", "a.cu:1:10: fatal error: 'cuda_runtime.h' file not found"
    )
    log = 'build\n/home/ci/src/a/b/a.cu:3:2: fatal error: "cuda_runtime.h" file not found\n'
    result = compile_signatures([spec]).match(log)
    assert [m.line_numbers for m in result] == [[2]]


def test_text_signature_matches_other_library_versions() -> None:
    spec = SignatureSpec(
        4, 9, "text", "libcudart.so.11.0: cannot open shared object file"
    )
    log = "ImportError: libcudart.so.12: cannot open shared object file: No such file or directory"
    assert _matched_entries([spec], log) == [4]


def test_text_signature_is_case_and_whitespace_insensitive() -> None:
    spec = SignatureSpec(1, 1, "text", "Unknown   option '--offload-arch")
    assert _matched_entries(
        [spec], "nvcc fatal   : UNKNOWN OPTION `--offload-arch=gfx90a`"
    ) == [1]


def test_text_signature_does_not_match_a_different_library() -> None:
    specs = [SignatureSpec(1, 1, "text", "cannot find -lcublas")]
    assert _matched_entries(specs, "/usr/bin/ld: cannot find -lcudnn") == []


def test_regex_signature_is_case_insensitive_and_reports_line_numbers() -> None:
    spec = SignatureSpec(2, 5, "regex", r"undefined reference to .hip[A-Z]\w*")
    log = "ok\nok\nu.cpp:(.text+0x51): undefined reference to `hipLaunchKernel'\nUNDEFINED REFERENCE TO 'HIPMALLOC'"
    [match] = compile_signatures([spec]).match(log)
    assert match.line_numbers == [3, 4]
    assert (
        match.lines[0] == "u.cpp:(.text+0x51): undefined reference to `hipLaunchKernel'"
    )


def test_regex_without_literal_goes_through_the_slow_path_and_still_matches() -> None:
    spec = SignatureSpec(3, 3, "regex", r"^\d+ \w+$")
    assert required_regex_literals(spec.pattern) is None
    [match] = compile_signatures([spec]).match("nothing here\n2 errors\n")
    assert match.line_numbers == [2]


def test_it_ranks_entries_by_distinct_signatures_then_specificity_then_lines() -> None:
    specs = [
        SignatureSpec(10, 1, "text", "cannot find -lcublas"),
        SignatureSpec(20, 2, "regex", r"cannot find -l\w+"),
        SignatureSpec(20, 3, "text", "No such file or directory"),
        SignatureSpec(30, 4, "text", "linker command failed"),
        SignatureSpec(40, 5, "text", "command failed with exit code"),
    ]
    result = compile_signatures(specs).match(LINK_LOG)
    assert [m.entry_id for m in result] == [20, 40, 30, 10]
    assert result[0].signature_ids == [2, 3]
    assert result[0].score[0] == 2


def test_matching_lines_are_capped_per_entry_but_counted() -> None:
    spec = SignatureSpec(1, 1, "text", "warning: unused variable")
    log = "\n".join(f"f.cu:{n}:1: warning: unused variable 'v{n}'" for n in range(50))
    [match] = compile_signatures([spec]).match(log)
    assert match.line_count == 50
    assert match.line_numbers == list(range(1, 21))


def test_catastrophic_regex_times_out_and_is_reported_skipped() -> None:
    specs = [
        SignatureSpec(1, 1, "regex", r"(a+)+$"),
        SignatureSpec(2, 2, "regex", r"(x+x+)+y\b"),
        SignatureSpec(3, 3, "text", "cannot find -lcublas"),
        # Has a literal, so it is tried on a candidate line rather than on the whole log.
        SignatureSpec(4, 4, "regex", r"fatal: (a+)+$"),
    ]
    adversarial = [
        "a" * 40_000 + "!",
        "x" * 40_000 + "z",
        "fatal: " + "a" * 40_000 + "!",
    ]
    log = "\n".join([LINK_LOG, *adversarial])
    result = compile_signatures(specs).match(
        log, time_budget_s=10.0, per_signature_timeout_s=0.2
    )
    assert [m.entry_id for m in result] == [3]
    assert {(s.entry_id, s.signature_id) for s in result.skipped} == {
        (1, 1),
        (2, 2),
        (4, 4),
    }
    assert all("timed out" in s.reason for s in result.skipped)


def test_an_invalid_stored_regex_is_skipped_not_raised() -> None:
    specs = [
        SignatureSpec(1, 1, "regex", "cannot find (-l"),
        SignatureSpec(2, 2, "text", "cannot find -lcublas"),
    ]
    matcher = compile_signatures(specs)
    for _ in range(2):  # reported once per call, also after the lazy compile has failed
        result = matcher.match(LINK_LOG)
        assert [m.entry_id for m in result] == [2]
        assert [s.signature_id for s in result.skipped] == [1]


def test_match_lines_matches_a_list_of_lines() -> None:
    matcher = compile_signatures([SignatureSpec(1, 1, "text", "cannot find -lcublas")])
    [match] = matcher.match_lines(LINK_LOG.split("\n"))
    assert match.line_numbers == [2]

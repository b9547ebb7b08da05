from collections.abc import Iterable

from worker.project_settings import SmokeCheck
from worker.runner.checks import CheckResult, compare_outputs, numbers_in, run_checks

OUT = "vector add of 1024 elements\nsum = 42.000001\nmax err 0\nPASSED\n"


def _by_name(results: Iterable[CheckResult]) -> dict[str, CheckResult]:
    return {r.name: r for r in results}


def test_exit_code_is_checked_first() -> None:
    results = run_checks(OUT, 1, None, 0, ())
    assert [(r.name, r.passed) for r in results] == [("exit code", False)]
    assert "exited 1, expected 0" in results[0].detail
    assert not run_checks(OUT, None, "SIGSEGV", 0, ())[0].passed


def test_text_and_regex_checks_pass_and_fail() -> None:
    checks = (
        SmokeCheck("text", "PASSED"),
        SmokeCheck("text", "FAILED"),
        SmokeCheck("regex", r"^max err 0$"),
        SmokeCheck("regex", r"^error"),
        SmokeCheck("regex", r"("),
    )
    results = run_checks(OUT, 0, None, 0, checks)
    assert [r.passed for r in results] == [True, True, False, True, False, False]
    assert "bad regular expression" in results[-1].detail


def test_numeric_check_against_expected_text_uses_the_tolerance() -> None:
    close = SmokeCheck("numeric", r"^sum", expected="42.0", rel_tol=1e-5)
    strict = SmokeCheck("numeric", r"^sum", expected="42.0", rel_tol=1e-9, abs_tol=0)
    ok, bad = run_checks(OUT, 0, None, 0, (close, strict))[1:]
    assert ok.passed and not bad.passed
    assert "got 42.000001, expected 42.0" in bad.detail


def test_numeric_check_compares_with_the_reference_lines() -> None:
    check = SmokeCheck("numeric", r"^sum|^max err")
    same = run_checks(OUT, 0, None, 0, (check,), reference_stdout="sum = 42.0000012\nmax err 0\n")[1]
    other = run_checks(OUT, 0, None, 0, (check,), reference_stdout="sum = 41.9\nmax err 0\n")[1]
    assert same.passed and not other.passed and "CUDA reference" in other.detail


def test_numeric_check_without_expected_or_reference_is_skipped_not_failed() -> None:
    result = run_checks(OUT, 0, None, 0, (SmokeCheck("numeric", r"^sum"),))[1]
    assert result.skipped and not result.passed


def test_numeric_check_fails_when_no_line_matches() -> None:
    result = run_checks(OUT, 0, None, 0, (SmokeCheck("numeric", r"^total", expected="1"),))[1]
    assert not result.passed and "no output line" in result.detail


def test_numbers_include_exponents_and_nan() -> None:
    assert numbers_in("a=1.5e-3 b=-2 c=.5 d=nan") [:3] == [1.5e-3, -2.0, 0.5]


def test_identical_outputs_are_equal() -> None:
    assert compare_outputs(OUT, OUT, 1e-5, 1e-8).status == "equal"


def test_numbers_within_tolerance_are_reported_as_such() -> None:
    cuda = OUT.replace("42.000001", "42.000002")
    result = compare_outputs(OUT, cuda, 1e-5, 1e-8)
    assert result.status == "within-tolerance" and result.differences == []


def test_different_outputs_name_the_first_differing_lines() -> None:
    cuda = "vector add of 1024 elements\nsum = 43.5\nmax err 0\nextra line\nPASSED\n"
    result = compare_outputs(OUT, cuda, 1e-5, 1e-8)
    assert result.status == "different" and result.difference_count == 2
    first = result.differences[0]
    assert (first.rocm_line, first.cuda_line, first.rocm_text, first.cuda_text) == (2, 2, "sum = 42.000001", "sum = 43.5")
    assert result.differences[1].rocm_line is None and result.differences[1].cuda_text == "extra line"


def test_ignored_lines_do_not_count() -> None:
    cuda = OUT + "kernel time 3.2 ms\n"
    assert compare_outputs(OUT + "kernel time 9.9 ms\n", cuda, 1e-5, 1e-8, ignore=[r"\bms\b"]).status == "equal"

"""Run AMD HIPIFY's own unit-test suite (tests/unit_tests, lit + FileCheck) against our engine.

    HIPIFY_DIR=/path/to/HIPIFY .venv/bin/python bench/hipify_suite.py [--verbose] [--only NAME]
    .venv/bin/python bench/hipify_suite.py /path/to/HIPIFY [--perl /path/to/hipify-perl]

HIPIFY_DIR is a checkout (or ``git archive HEAD tests | tar -x``) of the ROCm/HIPIFY repository; its
files are read, never copied here. Each test is run as HIPIFY's ``run_test.sh`` does: the file is
translated by our command line (``python -m translator``'s ``main``, in this process) given the test's
own hipify-clang options, ``--header-layout hipify`` (hipify-clang's spelling) and ``--cuda-version``
(the CUDA a test named ``x_11030_12000.cu`` is run with), every ``//`` comment is cut to ``// ``
(``sed -E 's|//.+|// |g'``) so CHECK lines cannot match themselves, and FileCheck checks the result
against the original file. FileCheck is LLVM's when one is on PATH (or $FILECHECK), else the
``filecheck`` package. With ``--perl`` the same is done with hipify-perl's output, side by side.
Prints passed/total, failures per category and regressions against hipify-perl.
"""
from __future__ import annotations

import argparse
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from translator.__main__ import main as translator_cli  # noqa: E402

SUFFIXES = (".cu", ".cuh", ".cpp", ".c", ".hpp", ".h")
EXCLUDED = frozenset({"cmdparser.hpp", "spatial_batch_norm_op.h", "common_cudnn.h", "inc.h"})  # lit.cfg's
RUN_LINE = re.compile(r"^\s*//\s*RUN:\s*(.*)$", re.MULTILINE)
COMMENT = re.compile(r"//.+")
Translate = Callable[["SuiteTest"], str]


@dataclass(frozen=True)
class SuiteTest:
    path: Path
    name: str  # relative to tests/unit_tests
    category: str
    arguments: tuple[str, ...]  # hipify-clang options
    clang_arguments: tuple[str, ...] = ()  # after ``%clang_args``: given after ``--``, as run_test.sh does


@dataclass(frozen=True)
class Outcome:
    test: SuiteTest
    passed: bool
    detail: str


def unit_tests_dir(hipify_dir: Path) -> Path:
    folder = hipify_dir / "tests" / "unit_tests"
    if not folder.is_dir():
        raise SystemExit(f"{hipify_dir}: no tests/unit_tests folder; give a HIPIFY checkout")
    return folder


def run_arguments(text: str) -> tuple[tuple[str, ...], tuple[str, ...]] | None:
    """The options of the RUN line: (those after ``%hipify_args``, count dropped; those after ``%clang_args``)."""
    match = RUN_LINE.search(text)
    if match is None:
        return None
    words = shlex.split(match.group(1))
    if "%hipify_args" not in words:
        return None
    after = words[words.index("%hipify_args") + 1:]
    if after and after[0].isdigit():
        after = after[1:]
    if "%clang_args" not in after:
        return tuple(after), ()
    split = after.index("%clang_args")
    return tuple(after[:split]), tuple(after[split + 1:])


def category(name: str) -> str:
    parts = name.split("/")
    if parts[0] in ("libraries", "samples") and len(parts) > 2:
        return "/".join(parts[:2])
    if parts[0] == "synthetic" and parts[1] == "libraries":
        return "synthetic/libraries"
    return parts[0]


def discover(hipify_dir: Path) -> list[SuiteTest]:
    folder = unit_tests_dir(hipify_dir)
    tests: list[SuiteTest] = []
    for path in sorted(folder.rglob("*")):
        if path.suffix not in SUFFIXES or path.name in EXCLUDED or not path.is_file():
            continue
        arguments = run_arguments(path.read_text(errors="surrogateescape"))
        if arguments is not None:
            name = path.relative_to(folder).as_posix()
            tests.append(SuiteTest(path=path, name=name, category=category(name), arguments=arguments[0],
                                   clang_arguments=arguments[1]))
    return tests


DEFAULT_CUDA = "12.0"  # what the command line assumes without --cuda-version


VERSIONED_NAME = re.compile(r"_(before_)?(\d{4,5})(?:_\d{4,5})?(?:_[A-Za-z]\w*)?\.\w+$")


def cuda_version_for(name: str) -> str:
    """A CUDA version the test is meant for: lit.cfg runs ``x_11030_12000.cu`` only on CUDA 11.3 up to 12
    and ``x_before_11000.cu`` only below 11; the rest run on the CUDA 12 we assume by default."""
    match = VERSIONED_NAME.search(name)
    if match is None:
        return DEFAULT_CUDA
    number = int(match.group(2)) - (10 if match.group(1) else 0)
    return f"{number // 1000}.{number % 1000 // 10}"


def cli_arguments(test: SuiteTest) -> list[str]:
    """What a user types after ``python -m translator FILE -o OUT`` to run this test as HIPIFY does."""
    return [*test.arguments, "--header-layout", "hipify", "--cuda-version", cuda_version_for(test.name),
            "--", *test.clang_arguments]


def translate_ours(test: SuiteTest) -> str:
    with tempfile.TemporaryDirectory() as folder:
        output = Path(folder) / test.path.name
        status = translator_cli([str(test.path), "-o", str(output), "--no-cache", *cli_arguments(test)])
        if status != 0:
            raise RuntimeError(f"python -m translator exited with {status}")
        return output.read_text(errors="surrogateescape")


def perl_translator(perl_script: Path) -> Translate:
    def translate(test: SuiteTest) -> str:
        completed = subprocess.run(["perl", str(perl_script), "-quiet-warnings", str(test.path)],
                                   capture_output=True, text=True, errors="surrogateescape", check=False)
        return completed.stdout
    return translate


def filecheck_command() -> list[str]:
    explicit = os.environ.get("FILECHECK")
    if explicit:
        return [explicit]
    for name in ["FileCheck", *(f"FileCheck-{v}" for v in range(30, 10, -1)), "filecheck"]:
        found = shutil.which(name) or (shutil.which(name, path=str(Path(sys.executable).parent)))
        if found:
            return [found]
    raise SystemExit("no FileCheck: install LLVM's or `pip install filecheck` (requirements.txt pins it)")


def check(test: SuiteTest, output: str, filecheck: list[str]) -> Outcome:
    cut = COMMENT.sub("// ", output)
    with tempfile.TemporaryDirectory() as folder:
        check_file = _readable_check_file(test.path, Path(folder))
        if check_file != test.path:  # the output carries the same bytes: make it the same UTF-8
            cut = cut.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
        completed = subprocess.run([*filecheck, str(check_file)], input=cut, capture_output=True, text=True,
                                   errors="surrogateescape", check=False)
    detail = "\n".join((completed.stderr or completed.stdout).splitlines()[:12])
    return Outcome(test=test, passed=completed.returncode == 0, detail=detail)


def _readable_check_file(path: Path, folder: Path) -> Path:
    """The test file itself, or, when it is not UTF-8 (one is Latin-1), a UTF-8 copy: the ``filecheck``
    package cannot read other encodings (LLVM's FileCheck reads bytes and gets the original)."""
    data = path.read_bytes()
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        copy = folder / path.name
        copy.write_text(data.decode("utf-8", "replace"))
        return copy
    return path


def run_suite(tests: list[SuiteTest], translate: Translate, filecheck: list[str]) -> list[Outcome]:
    outcomes = []
    for test in tests:
        try:
            output = translate(test)
        except Exception as error:  # a crash is a failed test, reported with its message
            outcomes.append(Outcome(test=test, passed=False, detail=f"translator raised {error!r}"))
            continue
        outcomes.append(check(test, output, filecheck))
    return outcomes


def summary(label: str, outcomes: list[Outcome]) -> str:
    passed = sum(o.passed for o in outcomes)
    failed = Counter(o.test.category for o in outcomes if not o.passed)
    lines = [f"{label}: {passed}/{len(outcomes)} passed"]
    lines += [f"  {name:<24} {count} failed" for name, count in sorted(failed.items())]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("hipify_dir", nargs="?", type=Path, default=os.environ.get("HIPIFY_DIR"))
    parser.add_argument("--perl", type=Path, default=os.environ.get("HIPIFY_PERL"), help="hipify-perl to compare")
    parser.add_argument("--only", default="", help="run tests whose name contains this")
    parser.add_argument("--verbose", action="store_true", help="print FileCheck's message for each failure")
    args = parser.parse_args(argv)
    if args.hipify_dir is None:
        parser.error("give a HIPIFY checkout (argument or HIPIFY_DIR)")
    tests = [t for t in discover(Path(args.hipify_dir)) if args.only in t.name]
    filecheck = filecheck_command()
    print(f"{len(tests)} tests, FileCheck: {filecheck[0]}")
    ours = run_suite(tests, translate_ours, filecheck)
    for outcome in ours:
        if not outcome.passed:
            print(f"FAIL {outcome.test.name}")
            if args.verbose:
                print("    " + outcome.detail.replace("\n", "\n    "))
    print(summary("builtin engine", ours))
    if args.perl is not None:
        perl = run_suite(tests, perl_translator(args.perl), filecheck)
        print(summary("hipify-perl", perl))
        regressions = [o.test.name for o, p in zip(ours, perl, strict=True) if p.passed and not o.passed]
        print(f"regressions against hipify-perl: {len(regressions)}" + "".join(f"\n  {n}" for n in regressions))
    return 0


if __name__ == "__main__":
    sys.exit(main())

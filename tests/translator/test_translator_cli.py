"""The command line takes hipify-clang's option names, and the options map onto ours."""
from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from translator.__main__ import main
from translator.hipify_compat import normalize_argv, parse_flags, to_options

ROOT = Path(__file__).resolve().parents[2]
SOURCE = """#include <cuda_runtime.h>
#include <cublas_v2.h>
__global__ void k(float* x) {}
int main() {
  float* x; cudaMalloc(&x, 4);
  k<<<1, 1>>>(x);
  cublasHandle_t h;
  printf("cudaMalloc failed\\n");
}
"""


def test_hipify_clang_flags_map_onto_our_options() -> None:
    flags = parse_flags(["--hip-kernel-execution-syntax", "-roc", "--miopen", "--experimental",
                         "--skip-excluded-preprocessor-conditional-blocks", "--use-hip-data-types",
                         "-DWITH_GPU=2", "-ferror-limit=500"])
    options = to_options(flags)
    assert options.launch_style == "ggl" and options.roc_libraries and options.miopen and options.experimental
    assert options.skip_excluded_blocks and options.use_hip_data_types
    assert options.defines == (("WITH_GPU", "2"),)
    assert to_options(parse_flags(["--amap", "--default-preprocessor"])).skip_excluded_blocks is False
    assert to_options(parse_flags(["--cuda-kernel-execution-syntax"])).launch_style == "chevron"


def test_one_dash_long_names_and_equals_forms_are_accepted() -> None:
    ours, clang = normalize_argv(["a.cu", "-roc", "-o=out.hip", "--o-dir=out", "-print-stats",
                                  "--cuda-path=/opt/cuda", "-I", "include", "-DX=1", "-D", "Z", "--", "-std=c++17",
                                  "-DY"])
    assert ours == ["a.cu", "--roc", "-o", "out.hip", "--o-dir", "out", "--print-stats"]
    assert clang == ["-Iinclude", "-DX=1", "-DZ", "-std=c++17", "-DY"]


def test_a_script_written_for_hipify_clang_runs_unchanged(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    source = tmp_path / "app.cu"
    source.write_text(SOURCE)
    out = tmp_path / "app.hip"
    code = main([str(source), f"-o={out}", "--hip-kernel-execution-syntax", "--roc", "--print-stats",
                 "--", "-DNDEBUG"])
    assert code == 0
    text = out.read_text()
    assert "hipLaunchKernelGGL(k, dim3(1), dim3(1), 0, 0, x);" in text
    assert "rocblas_handle h;" in text and '"hipMalloc failed\\n"' in text
    stats = json.loads(capsys.readouterr().err)
    assert stats["files"][0]["converted"]["kernel-launch"] == 1


def test_several_files_go_to_the_output_directory(tmp_path: Path) -> None:
    for name in ("a.cu", "b.cu"):
        (tmp_path / name).write_text(SOURCE)
    assert main([str(tmp_path / "a.cu"), str(tmp_path / "b.cu"), "--o-dir", str(tmp_path / "out"),
                 "--keep-strings"]) == 0
    assert '"cudaMalloc failed\\n"' in (tmp_path / "out" / "b.cu").read_text()
    assert main([str(tmp_path / "a.cu"), str(tmp_path / "b.cu")]) == 2


def test_a_tree_is_translated_with_declared_names(tmp_path: Path) -> None:
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "a.cu").write_text(SOURCE.replace("int main() {", "int main() {\n  cudaDeviceSynchronize();"))
    declared = tmp_path / "identifiers.txt"
    declared.write_text("hipMalloc\nhipblasHandle_t\n")
    account = tmp_path / "account.json"
    assert main([str(tmp_path / "src"), "-o", str(tmp_path / "out"), "--declared-names", str(declared),
                 "--account", str(account)]) == 0
    entry = json.loads(account.read_text())["files"][0]
    assert [(f["name"], f["reason"]) for f in entry["unconverted"]] == [
        ("cudaDeviceSynchronize", "not-declared-by-toolchain")]
    text = (tmp_path / "out" / "a.cu").read_text()
    assert "hipMalloc(&x, 4);" in text and "hipblasHandle_t h;" in text


def test_exclude_globs_follow_gitignore_rules_and_a_bad_one_is_refused(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "src" / "gen").mkdir(parents=True)
    (tmp_path / "src" / "a.cu").write_text(SOURCE)
    (tmp_path / "src" / "gen" / "b.cu").write_text(SOURCE)
    assert main([str(tmp_path / "src"), "-o", str(tmp_path / "out"), "--exclude", "gen/"]) == 0
    assert "hipMalloc" in (tmp_path / "out" / "a.cu").read_text()
    assert (tmp_path / "out" / "gen" / "b.cu").read_text() == SOURCE
    with pytest.raises(SystemExit):
        main([str(tmp_path / "src"), "-o", str(tmp_path / "out2"), "--exclude", "!gen/b.cu"])
    assert "cannot take a path back in" in capsys.readouterr().err


def test_the_command_line_keeps_rule_tables_on_disk(tmp_path: Path) -> None:
    import marshal

    from translator import rulecache
    from translator.mapping import load_default
    from translator.options import TranslateOptions
    from translator.rules import Target, _build, _from_plain, cached_rules_key

    (tmp_path / "a.cu").write_text(SOURCE)
    # a target no other test builds, so this process has not cached its table in memory yet
    assert main([str(tmp_path / "a.cu"), "-o", str(tmp_path / "a.hip"), "-miopen", "--target-hip-version", "6.1"]) == 0
    stored = [p for p in rulecache.default_directory().glob("*.marshal") if not p.name.startswith("patterns-")]
    assert len(stored) == 1
    target = Target.of(TranslateOptions(miopen=True, target_hip_version="6.1"))
    assert _from_plain(rulecache.load(cached_rules_key(target))) == _build(target, load_default())
    stored[0].write_bytes(b"not marshal data")
    assert rulecache.load(cached_rules_key(target)) is None  # rebuilt by the caller, never trusted
    stored[0].write_bytes(marshal.dumps(("rules-0", {}, {}, "")))
    assert _from_plain(rulecache.load(cached_rules_key(target))) is None  # another layout: rebuilt too
    assert rulecache.load(cached_rules_key(Target.of(TranslateOptions(roc_libraries=True)))) is None


def test_the_command_line_keeps_compiled_patterns_and_reuses_them(tmp_path: Path) -> None:
    import re
    import subprocess
    import sys

    from translator import rulecache

    (tmp_path / "a.cu").write_text(SOURCE)
    command = [sys.executable, "-m", "translator", str(tmp_path / "a.cu")]
    env = {"XDG_CACHE_HOME": str(tmp_path / "cache"), "PATH": "/usr/bin:/bin"}
    first = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, check=True).stdout
    [patterns] = (tmp_path / "cache" / "migrator" / "translator").glob("patterns-*.marshal")
    second = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, check=True).stdout
    assert first == second and "hipMalloc" in first
    rulecache.enable(patterns.parent)
    saved = dict(re._cache)  # type: ignore[attr-defined]
    try:
        re._cache.clear()  # type: ignore[attr-defined]
        assert rulecache.load_patterns() > 10
        entry = next(key for key in re._cache if key[0] is str)  # type: ignore[attr-defined]
        assert re.compile(entry[1], entry[2]) is re._cache[entry]  # type: ignore[attr-defined]
        patterns.write_bytes(b"garbage")
        assert rulecache.load_patterns() == 0  # unreadable: nothing loaded, nothing raised
    finally:
        re._cache.clear()  # type: ignore[attr-defined]
        re._cache.update(saved)  # type: ignore[attr-defined]


@pytest.mark.parametrize(("argv", "may"), [
    (["a.cu"], False), (["a.cu", "--no-wavefront-scan", "--no-backup"], False), (["no-cache.cu"], False),
    (["a.cu", "--", "--no-cache"], False),  # after "--": a clang argument
    (["a.cu", "--no-cache"], True), (["a.cu", "-no-cache"], True), (["a.cu", "--no-c"], True),
])
def test_the_cache_is_known_to_be_on_before_the_arguments_are_parsed(argv: list[str], may: bool) -> None:
    from translator.__main__ import may_turn_off_cache
    from translator.cli import parse_args

    assert may_turn_off_cache(argv) is may
    assert parse_args(argv)[0].no_cache is False or may  # never on when argparse would turn it off


def test_a_second_start_compiles_no_pattern_the_first_stored(tmp_path: Path) -> None:
    """The stored patterns load before argparse, json and the engine compile theirs."""
    import subprocess
    import sys

    (tmp_path / "a.cu").write_text(SOURCE)
    code = ("import runpy, sys\nfrom re import _compiler\nimport translator.rulecache\nseen = []\n"
            "real = _compiler.compile\n_compiler.compile = lambda p, f=0: seen.append(p) or real(p, f)\n"
            "sys.argv = ['translator', *sys.argv[1:]]\n"
            "try:\n    runpy.run_module('translator', run_name='__main__')\nexcept SystemExit:\n    pass\n"
            "print(sum(isinstance(p, str) for p in seen))\n")
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "cache")}
    counts = [int(subprocess.run([sys.executable, "-c", code, str(tmp_path / "a.cu"), "-o", str(tmp_path / "a.hip")],
                                 cwd=ROOT, env=env, capture_output=True, text=True, check=True).stdout)
              for _ in range(2)]
    assert counts[0] > 0 and counts[1] == 0

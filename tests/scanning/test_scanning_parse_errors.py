from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from worker.scanning.files import MAX_FILE_BYTES
from worker.scanning.findings import scan_build_files
from worker.scanning.model import Finding

Scan = Callable[[dict[str, str]], list[Finding]]


def test_it_reports_unparseable_files_without_crashing(scan: Scan) -> None:
    files = {
        "setup.py": "from setuptools import setup\nsetup(name='x',\n",
        "pyproject.toml": "[project\nname = 'x'\n",
        "environment.yml": "name: x\ndependencies:\n  - [unclosed\n",
        ".github/workflows/ci.yml": "jobs:\n  build: {runs-on: ubuntu\n",
        "ds_config.json": '{"fp16": {"enabled": true,}',
        "requirements.txt": "torch==2.1\nnot a valid requirement ===\n",
    }
    findings = scan(files)
    errors = {f.file: f for f in findings if f.rule_id == "parse.error"}
    assert set(errors) == set(files)
    assert all(f.severity == "warning" for f in errors.values())
    assert errors["requirements.txt"].line == 2


def test_it_skips_files_over_the_size_cap(tmp_path: Path) -> None:
    (tmp_path / "Makefile").write_text("LIBS = -lcublas\n" + "#" * (MAX_FILE_BYTES + 10) + "\n")
    [finding] = scan_build_files(tmp_path, ())
    assert finding.rule_id == "scan.file-too-large"


def test_it_skips_excluded_directories(tmp_path: Path) -> None:
    (tmp_path / "third_party" / "cutlass").mkdir(parents=True)
    (tmp_path / "third_party" / "cutlass" / "CMakeLists.txt").write_text("find_package(CUDA REQUIRED)\n")
    (tmp_path / "CMakeLists.txt").write_text("enable_language(CUDA)\n")
    findings = scan_build_files(tmp_path, ("third_party/**",))
    assert [f.file for f in findings] == ["CMakeLists.txt"]

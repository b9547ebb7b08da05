from __future__ import annotations

import textwrap
from collections.abc import Callable
from pathlib import Path

import pytest

from worker.scanning.findings import RULE_IDS, scan_build_files
from worker.scanning.model import NOTEBOOK_SLUGS, Finding

WriteTree = Callable[[dict[str, str]], Path]


@pytest.fixture
def write_tree(tmp_path: Path) -> WriteTree:
    def write(files: dict[str, str]) -> Path:
        root = tmp_path / "tree"
        for rel, text in files.items():
            path = root / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(textwrap.dedent(text).lstrip("\n"))
        return root
    return write


@pytest.fixture
def scan(write_tree: WriteTree) -> Callable[[dict[str, str]], list[Finding]]:
    def run(files: dict[str, str]) -> list[Finding]:
        findings = scan_build_files(write_tree(files), ())
        assert {f.rule_id for f in findings} <= set(RULE_IDS)  # the opt-out list names every rule
        assert {f.notebook_slug for f in findings} <= NOTEBOOK_SLUGS | {None}
        return findings
    return run

"""worker/contained.py: reads that never leave their tree, records written atomically."""
from __future__ import annotations

import os
from pathlib import Path

import pytest

from worker import contained
from worker.contained import ContainedFileError


@pytest.fixture()
def tree(tmp_path: Path) -> Path:
    root = tmp_path / "tree"
    (root / "src").mkdir(parents=True)
    (root / "src" / "a.cu").write_text("kernel\n")
    (tmp_path / "secret.txt").write_text("host secret\n")
    return root


def test_it_reads_a_regular_file_inside_the_tree(tree: Path) -> None:
    assert contained.read_text_beneath(tree, "src/a.cu", limit=100) == "kernel\n"


def test_it_follows_a_link_that_stays_inside(tree: Path) -> None:
    (tree / "alias.cu").symlink_to("src/a.cu")
    assert contained.read_text_beneath(tree, "alias.cu", limit=100) == "kernel\n"


@pytest.mark.parametrize("target", ["../secret.txt", "/etc/passwd", "src/../../secret.txt"])
def test_it_refuses_a_link_that_leaves_the_tree(tree: Path, target: str) -> None:
    (tree / "planted.json").symlink_to(target)
    with pytest.raises(ContainedFileError):
        contained.read_beneath(tree, "planted.json", limit=10_000)


def test_it_refuses_a_folder_swapped_for_a_link(tree: Path, tmp_path: Path) -> None:
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "a.cu").write_text("outside\n")
    (tree / "src" / "a.cu").unlink()
    (tree / "src").rmdir()
    (tree / "src").symlink_to(tmp_path / "outside")
    with pytest.raises(ContainedFileError):
        contained.read_beneath(tree, "src/a.cu", limit=100)


@pytest.mark.parametrize("name", ["../secret.txt", "/etc/passwd", "", "src/../../secret.txt"])
def test_it_refuses_names_that_climb_out(tree: Path, name: str) -> None:
    with pytest.raises(ContainedFileError):
        contained.read_beneath(tree, name, limit=100)


def test_a_fifo_is_refused_without_blocking(tree: Path) -> None:
    os.mkfifo(tree / "pipe")
    with pytest.raises(ContainedFileError):
        contained.read_beneath(tree, "pipe", limit=100)


def test_a_file_over_the_limit_is_refused(tree: Path) -> None:
    (tree / "big").write_bytes(b"x" * 101)
    with pytest.raises(ContainedFileError):
        contained.read_beneath(tree, "big", limit=100)


def test_the_walk_lists_regular_files_only_and_never_enters_links(tree: Path, tmp_path: Path) -> None:
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "leak.txt").write_text("no\n")
    (tree / "out").symlink_to(tmp_path / "outside")
    (tree / "link.cu").symlink_to("src/a.cu")
    os.mkfifo(tree / "pipe")
    assert [e.relative for e in contained.walk_beneath(tree)] == ["src/a.cu"]


def test_copy_out_copies_the_file_and_refuses_links(tree: Path, tmp_path: Path) -> None:
    destination = tmp_path / "records" / "a.cu"
    assert contained.copy_out(tree, "src/a.cu", destination, limit=100) == 7
    assert destination.read_text() == "kernel\n"
    (tree / "planted").symlink_to(tmp_path / "secret.txt")
    with pytest.raises(ContainedFileError):
        contained.copy_out(tree, "planted", tmp_path / "records" / "b", limit=100)


def test_write_record_replaces_a_planted_link_instead_of_writing_through_it(tmp_path: Path) -> None:
    canary = tmp_path / "canary"
    canary.write_text("untouched\n")
    records = tmp_path / "records"
    records.mkdir()
    (records / "compile.json").symlink_to(canary)
    contained.write_record(records / "compile.json", "{}")
    assert canary.read_text() == "untouched\n"
    assert not (records / "compile.json").is_symlink()
    assert (records / "compile.json").read_text() == "{}"


def test_append_record_refuses_a_link(tmp_path: Path) -> None:
    canary = tmp_path / "canary"
    canary.write_text("untouched\n")
    (tmp_path / "reference.log").symlink_to(canary)
    with pytest.raises(OSError):
        contained.append_record(tmp_path / "reference.log", "line\n")
    assert canary.read_text() == "untouched\n"


def test_this_kernel_offers_openat2() -> None:
    # The walking fallback refuses in-tree links; the product's pages expect them followed here.
    assert contained.OPENAT2


def test_without_openat2_the_walk_refuses_every_link(tree: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(contained, "OPENAT2", False)
    assert contained.read_text_beneath(tree, "src/a.cu", limit=100) == "kernel\n"
    (tree / "alias.cu").symlink_to("src/a.cu")
    (tree / "planted").symlink_to("../secret.txt")
    for name in ("alias.cu", "planted"):
        with pytest.raises(ContainedFileError):
            contained.read_beneath(tree, name, limit=100)


def test_without_following_links_even_a_link_inside_is_refused(tree: Path) -> None:
    (tree / "alias.cu").symlink_to("src/a.cu")
    (tree / "srclink").symlink_to("src")
    assert contained.read_beneath(tree, "src/a.cu", limit=100, follow_links=False) == b"kernel\n"
    for name in ("alias.cu", "srclink/a.cu"):
        assert not contained.is_file_beneath(tree, name, follow_links=False)
        assert contained.is_file_beneath(tree, name)


def test_folders_and_sizes_are_seen_only_inside_the_tree(tree: Path, tmp_path: Path) -> None:
    (tmp_path / "outside").mkdir()
    (tree / "out").symlink_to(tmp_path / "outside")
    assert contained.is_dir_beneath(tree, "src") and not contained.is_dir_beneath(tree, "out")
    assert not contained.is_dir_beneath(tree, "src/a.cu")
    assert contained.stat_beneath(tree, "src/a.cu").st_size == 7
    (tree / "size").symlink_to(tmp_path / "secret.txt")
    with pytest.raises(ContainedFileError):
        contained.stat_beneath(tree, "size")


def test_json_records_are_read_once_per_version_and_never_through_a_link(tree: Path, tmp_path: Path) -> None:
    (tree / "a.json").write_text('{"n": 1}')
    first = contained.load_json_beneath(tree, "a.json", limit=100)
    assert first == {"n": 1} and contained.load_json_beneath(tree, "a.json", limit=100) is first
    contained.write_record(tree / "a.json", '{"n": 2, "longer": true}')
    assert contained.load_json_beneath(tree, "a.json", limit=100) == {"n": 2, "longer": True}
    (tmp_path / "other.json").write_text('{"secret": 1}')
    (tree / "b.json").symlink_to(tmp_path / "other.json")
    (tree / "list.json").write_text("[1, 2]")
    (tree / "big.json").write_text('{"x": "' + "y" * 200 + '"}')
    for name in ("b.json", "list.json", "big.json", "missing.json"):
        assert contained.load_json_beneath(tree, name, limit=100) is None


def test_a_tree_comes_out_of_a_hostile_folder_as_regular_files_only(tree: Path, tmp_path: Path) -> None:
    (tree / "src" / "run.sh").write_text("#!/bin/sh\n")
    (tree / "src" / "run.sh").chmod(0o755)
    (tree / "src" / "leak").symlink_to(tmp_path / "secret.txt")
    os.mkfifo(tree / "src" / "pipe")
    out = tmp_path / "out"
    copied = contained.copy_tree_out(tree, "src", out, max_files=10, max_bytes=1000)
    assert sorted(e.relative for e in copied) == ["a.cu", "run.sh"]
    assert (out / "a.cu").read_text() == "kernel\n" and os.access(out / "run.sh", os.X_OK)
    assert sorted(p.name for p in out.iterdir()) == ["a.cu", "run.sh"]
    with pytest.raises(ContainedFileError):
        contained.copy_tree_out(tree, "src", tmp_path / "small", max_files=1, max_bytes=1000)
    with pytest.raises(ContainedFileError):
        contained.copy_tree_out(tree, "src", tmp_path / "tiny", max_files=10, max_bytes=8)
    (tree / "swapped").symlink_to(tmp_path)
    with pytest.raises(ContainedFileError):
        contained.copy_tree_out(tree, "swapped", tmp_path / "none", max_files=10, max_bytes=1000)

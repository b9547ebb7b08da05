"""Archive safety: nothing is ever written outside the destination, limits hold, errors are clear."""
from __future__ import annotations

import io
import os
import tarfile
import zipfile
from pathlib import Path

import pytest

from tests.conftest import make_tar_gz
from worker.sources.archives import ArchiveError, Limits, detect_archive_format, unpack_archive


def _write(tmp_path: Path, name: str, data: bytes) -> Path:
    path = tmp_path / name
    path.write_bytes(data)
    return path


def _tar_with(tmp_path: Path, *members: tarfile.TarInfo, payload: bytes = b"x") -> Path:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        for info in members:
            tar.addfile(info, io.BytesIO(payload) if info.isreg() else None)
    return _write(tmp_path, "a.tar", buffer.getvalue())


def _zip_with(tmp_path: Path, entries: dict[str, bytes]) -> Path:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, data in entries.items():
            zf.writestr(name, data)
    return _write(tmp_path, "a.zip", buffer.getvalue())


def _reg(name: str, size: int = 1) -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.size = size
    return info


def test_it_unpacks_a_tar_gz_and_strips_the_single_top_folder(tmp_path: Path) -> None:
    archive = _write(tmp_path, "p.tgz", make_tar_gz({"src/a.cu": "x", "CMakeLists.txt": "y"}, top="proj-main"))
    report = unpack_archive(archive, tmp_path / "out")
    assert report.files == 2 and report.stripped_prefix == "proj-main"
    assert (tmp_path / "out/src/a.cu").read_text() == "x"


def test_it_unpacks_a_zip(tmp_path: Path) -> None:
    archive = _zip_with(tmp_path, {"a.cu": b"k", "dir/b.h": b"h"})
    report = unpack_archive(archive, tmp_path / "out")
    assert report.files == 2 and (tmp_path / "out/dir/b.h").read_bytes() == b"h"


@pytest.mark.parametrize("name", ["../evil.txt", "a/../../evil.txt", "/etc/evil.txt", "C:/evil.txt"])
def test_it_rejects_paths_that_escape(tmp_path: Path, name: str) -> None:
    archive = _zip_with(tmp_path, {"ok.txt": b"1", name: b"2"})
    with pytest.raises(ArchiveError, match="escapes|absolute"):
        unpack_archive(archive, tmp_path / "out")
    assert not (tmp_path / "out").exists()
    assert not (tmp_path / "evil.txt").exists()


def test_it_rejects_a_symlink_pointing_outside(tmp_path: Path) -> None:
    link = tarfile.TarInfo("proj/link")
    link.type = tarfile.SYMTYPE
    link.linkname = "../../etc/passwd"
    with pytest.raises(ArchiveError, match="points outside"):
        unpack_archive(_tar_with(tmp_path, _reg("proj/a.txt"), link), tmp_path / "out")


def test_it_rejects_an_absolute_symlink(tmp_path: Path) -> None:
    link = tarfile.TarInfo("link")
    link.type = tarfile.SYMTYPE
    link.linkname = "/etc"
    with pytest.raises(ArchiveError, match="points outside"):
        unpack_archive(_tar_with(tmp_path, link), tmp_path / "out")


def test_it_refuses_to_write_through_an_archive_symlink(tmp_path: Path) -> None:
    link = tarfile.TarInfo("dir")
    link.type = tarfile.SYMTYPE
    link.linkname = "."
    with pytest.raises(ArchiveError, match="through a symbolic link"):
        unpack_archive(_tar_with(tmp_path, link, _reg("dir/x.txt")), tmp_path / "out")


def test_it_keeps_symlinks_inside_the_tree(tmp_path: Path) -> None:
    link = tarfile.TarInfo("p/inc/alias.h")
    link.type = tarfile.SYMTYPE
    link.linkname = "../real.h"
    unpack_archive(_tar_with(tmp_path, _reg("p/real.h"), link), tmp_path / "out")
    assert os.readlink(tmp_path / "out/inc/alias.h") == "../real.h"


@pytest.mark.parametrize("kind", [tarfile.CHRTYPE, tarfile.FIFOTYPE, tarfile.LNKTYPE])
def test_it_rejects_devices_fifos_and_hard_links(tmp_path: Path, kind: bytes) -> None:
    special = tarfile.TarInfo("dev")
    special.type = kind
    special.linkname = "a.txt"
    with pytest.raises(ArchiveError, match="special file|hard link"):
        unpack_archive(_tar_with(tmp_path, _reg("a.txt"), special), tmp_path / "out")


def test_it_stops_a_zip_bomb_at_the_unpacked_size_limit(tmp_path: Path) -> None:
    archive = _zip_with(tmp_path, {"zeros.bin": b"\0" * (5 * 1024 * 1024)})
    assert archive.stat().st_size < 50_000
    with pytest.raises(ArchiveError, match="zip bomb"):
        unpack_archive(archive, tmp_path / "out", Limits(max_total_bytes=1024 * 1024, max_file_bytes=10**9))
    assert not (tmp_path / "out").exists()


def test_it_enforces_the_per_file_limit(tmp_path: Path) -> None:
    archive = _zip_with(tmp_path, {"big.bin": b"a" * 4096})
    with pytest.raises(ArchiveError, match="per-file limit"):
        unpack_archive(archive, tmp_path / "out", Limits(max_file_bytes=1000))


def test_it_enforces_the_file_count_limit(tmp_path: Path) -> None:
    archive = _zip_with(tmp_path, {f"f{i}.txt": b"1" for i in range(20)})
    with pytest.raises(ArchiveError, match="over the limit of 10"):
        unpack_archive(archive, tmp_path / "out", Limits(max_files=10))


def test_it_reports_a_corrupt_zip(tmp_path: Path) -> None:
    good = _zip_with(tmp_path, {"a.txt": b"hello world" * 100}).read_bytes()
    broken = _write(tmp_path, "b.zip", good[:40] + b"\xff" * 30 + good[70:])
    with pytest.raises(ArchiveError, match="corrupt"):
        unpack_archive(broken, tmp_path / "out")


def test_it_reports_a_truncated_tar_gz(tmp_path: Path) -> None:
    data = make_tar_gz({"a.txt": "x" * 100_000})
    with pytest.raises(ArchiveError, match="corrupt"):
        unpack_archive(_write(tmp_path, "t.tgz", data[: len(data) // 2]), tmp_path / "out")


def test_it_rejects_what_is_not_an_archive(tmp_path: Path) -> None:
    with pytest.raises(ArchiveError, match="not a zip, tar or tar.gz"):
        detect_archive_format(_write(tmp_path, "x.zip", b"just text, named like a zip"))


def test_it_rejects_an_entry_present_twice(tmp_path: Path) -> None:
    with pytest.raises(ArchiveError, match="twice"):
        unpack_archive(_tar_with(tmp_path, _reg("a.txt"), _reg("a.txt")), tmp_path / "out")

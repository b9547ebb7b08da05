"""The exclude-glob rules (.gitignore's): names at any depth, anchored paths, directories, ``**``."""
from __future__ import annotations

import pytest

from translator.globs import DEFAULT_EXCLUDES, GlobError, check_glob, is_excluded, is_excluded_dir


@pytest.mark.parametrize(("path", "glob"), [
    ("a.cu", "*.cu"), ("src/a.cu", "*.cu"), ("src/deep/er/a.cu", "*.cu"),
    ("src/build/gen.cpp", "build"), ("build/gen.cpp", "build/"), ("x/build/y/gen.cpp", "build/"),
    ("src/a.cu", "src/*.cu"), ("Makefile", "/Makefile"),
    ("a/b", "a/**/b"), ("a/x/y/b", "a/**/b"), ("a/x/b/c.cpp", "a/**/b"),
    ("k1.cu", "k[0-9].cu"), ("ka.cu", "k[!0-9].cu"), ("k?.cu", r"k\?.cu"), ("anything/at/all", "**"),
])
def test_it_excludes_the_path_the_glob_names(path: str, glob: str) -> None:
    assert is_excluded(path, [glob])


@pytest.mark.parametrize(("path", "glob"), [
    ("src/a.cuh", "*.cu"), ("src/x/a.cu", "src/*.cu"), ("lib/src/a.cu", "src/*.cu"), ("sub/Makefile", "/Makefile"),
    ("build", "build/"), ("src/build.cpp", "build/"), ("k1.cu", "k[!0-9].cu"), ("kx.cu", r"k\?.cu"),
    ("SRC/a.cu", "src/*.cu"), ("a/c", "a/**/b"),
])
def test_it_keeps_a_path_the_glob_does_not_name(path: str, glob: str) -> None:
    assert not is_excluded(path, [glob])


def test_the_defaults_exclude_vendored_trees_at_the_top_and_git_folders_anywhere() -> None:
    assert is_excluded("third_party/eigen/Core.h", DEFAULT_EXCLUDES)
    assert is_excluded("vendor/lib.cpp", DEFAULT_EXCLUDES)
    assert is_excluded("sub/module/.git/config", DEFAULT_EXCLUDES)
    assert not is_excluded("src/third_party/own.cpp", DEFAULT_EXCLUDES)  # a slash in the middle anchors at the root
    assert not is_excluded("src/vendor.cu", DEFAULT_EXCLUDES)


def test_a_walk_may_skip_a_directory_exactly_when_everything_beneath_it_is_excluded() -> None:
    globs = ("third_party/**", "**/.git/**", "build/", "*.cu")
    assert is_excluded_dir("third_party", globs) and is_excluded("third_party/x/y.cpp", globs)
    assert is_excluded_dir("src/.git", globs) and is_excluded_dir("src/build/obj", globs)
    assert not is_excluded_dir("src", globs) and not is_excluded_dir("lib/third_party", globs)
    assert is_excluded_dir("odd.cu", globs)  # a folder named like an excluded file goes too, as in .gitignore


@pytest.mark.parametrize("glob", ["", "  ", "!third_party/keep.cu", "./vendor/**", "src/../x", "a//b", "/", "a\nb"])
def test_it_rejects_a_glob_that_would_silently_match_nothing_or_re_include(glob: str) -> None:
    with pytest.raises(GlobError):
        check_glob(glob)

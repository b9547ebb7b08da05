"""Lexer choice by file name, per-line highlighting and the scoped stylesheet of the diff view."""

from __future__ import annotations

from migrator.lib.diffview.highlight import highlight_lines, lexer_for_filename, pygments_css
from migrator.lib.diffview.sidebyside import diff_file

HOSTILE = '</td><script>alert(1)</script> "><img src=x onerror=alert(2)>'


def test_a_hostile_file_name_selects_a_plain_lexer_and_changes_no_markup() -> None:
    assert lexer_for_filename(HOSTILE).name == "Text only"
    assert diff_file(b"a\n", b"b\n", old_name=HOSTILE).diff is not None


def test_it_picks_lexers_by_file_name() -> None:
    names = {
        n: lexer_for_filename(n).name
        for n in [
            "a.cu",
            "b.cuh",
            "c.hip",
            "CMakeLists.txt",
            "x.cmake",
            "Makefile",
            "Dockerfile",
            "ci.yml",
            "pyproject.toml",
            "s.py",
            "k.cpp",
        ]
    }
    assert names == {
        "a.cu": "CUDA",
        "b.cuh": "CUDA",
        "c.hip": "CUDA",
        "CMakeLists.txt": "CMake",
        "x.cmake": "CMake",
        "Makefile": "Makefile",
        "Dockerfile": "Docker",
        "ci.yml": "YAML",
        "pyproject.toml": "TOML",
        "s.py": "Python",
        "k.cpp": "C++",
    }


def test_highlight_lines_keeps_spans_within_each_line() -> None:
    text = "/* start\n   middle\n   end */\nint x = 1;\n"
    lines = highlight_lines(text, "a.cu")
    assert len(lines) == 4
    for line in lines:
        assert line.count("<span") == line.count("</span>")
    assert 'class="cm"' in lines[1]


def test_pygments_css_is_scoped_and_styles_the_word_markers() -> None:
    css = pygments_css(".diff-code")
    assert (
        ".diff-code .k " in css and ".diff-code .wd" in css and ".diff-code .wi" in css
    )
    assert all(line.startswith(".diff-code") for line in css.strip().splitlines())

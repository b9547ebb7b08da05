"""Alignment, folding, word marks, annotations, escaping, chunking and notices of the diff view."""

from __future__ import annotations

import pickle
import re

import pytest

from migrator.lib.diffview.highlight import highlight_lines
from migrator.lib.diffview.sidebyside import compute_side_by_side, diff_file, render_unified

HOSTILE = '</td><script>alert(1)</script> "><img src=x onerror=alert(2)>'


def _numbered(count: int, prefix: str = "line") -> str:
    return "".join(f"{prefix} {n}\n" for n in range(1, count + 1))


def _text_of(fragment: str) -> str:
    return (
        re.sub(r"<[^>]+>", "", fragment)
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", '"')
        .replace("&#x27;", "'")
        .replace("&amp;", "&")
    )


def test_it_aligns_equal_replace_delete_and_insert_rows_with_line_numbers() -> None:
    old = "a\nb\nc\nd\n"
    new = "a\nB\nc\nnew\nd\n"
    rows = compute_side_by_side(old, new, context=None).chunk(0).rows
    assert [(r.kind, r.left_no, r.right_no) for r in rows] == [
        ("equal", 1, 1),
        ("replace", 2, 2),
        ("equal", 3, 3),
        ("insert", None, 4),
        ("equal", 4, 5),
    ]
    deleted = compute_side_by_side("a\nx\ny\nb\n", "a\nb\n", context=None).chunk(0).rows
    assert [(r.kind, r.left_no, r.right_no) for r in deleted] == [
        ("equal", 1, 1),
        ("delete", 2, None),
        ("delete", 3, None),
        ("equal", 4, 2),
    ]


def test_it_pairs_uneven_replacements_and_leaves_extra_lines_one_sided() -> None:
    rows = (
        compute_side_by_side("k\nold1\nold2\nz\n", "k\nnew1\nz\n", context=None)
        .chunk(0)
        .rows
    )
    assert [(r.kind, r.left_no, r.right_no) for r in rows] == [
        ("equal", 1, 1),
        ("replace", 2, 2),
        ("delete", 3, None),
        ("equal", 4, 3),
    ]


def test_it_folds_long_unchanged_stretches_keeping_three_lines_of_context() -> None:
    old = _numbered(40)
    new = old.replace("line 20\n", "LINE 20\n")
    diff = compute_side_by_side(old, new)
    rows = diff.chunk(0).rows
    assert [(r.kind, r.left_no) for r in rows] == [
        ("fold", None),
        ("equal", 17),
        ("equal", 18),
        ("equal", 19),
        ("replace", 20),
        ("equal", 21),
        ("equal", 22),
        ("equal", 23),
        ("fold", None),
    ]
    first, last = rows[0].fold, rows[-1].fold
    assert first is not None and (
        first.left_start,
        first.left_end,
        first.right_start,
        first.right_end,
    ) == (1, 16, 1, 16)
    assert last is not None and (last.left_start, last.left_end, last.count) == (
        24,
        40,
        17,
    )
    expanded = diff.expand(last.fold_id, start=2, limit=3)
    assert [(r.kind, r.left_no, r.right_no) for r in expanded] == [
        ("equal", 26, 26),
        ("equal", 27, 27),
        ("equal", 28, 28),
    ]
    assert expanded[0].left_html == expanded[0].right_html == "line 26"


def test_it_shows_short_gaps_between_changes_instead_of_folding_them() -> None:
    old = _numbered(12)
    new = old.replace("line 2\n", "X\n").replace("line 9\n", "Y\n")
    kinds = [r.kind for r in compute_side_by_side(old, new).chunk(0).rows]
    assert "fold" not in kinds and len(kinds) == 12


def test_fold_ids_of_other_rows_are_rejected() -> None:
    diff = compute_side_by_side(_numbered(3), "changed\n")
    with pytest.raises(KeyError):
        diff.expand(0)


def test_it_marks_changed_words_inside_replaced_lines_only() -> None:
    old = "cudaMalloc(&ptr, size);\n"
    new = "hipMalloc(&ptr, size);\n"
    row = (
        compute_side_by_side(old, new, old_name="k.cu", new_name="k.hip")
        .chunk(0)
        .rows[0]
    )
    assert re.findall(r'<span class="wd">(.*?)</span></span>', row.left_html) == [
        '<span class="n">cudaMalloc'
    ]
    assert re.findall(r'<span class="wi">(.*?)</span></span>', row.right_html) == [
        '<span class="n">hipMalloc'
    ]
    assert "ptr" not in "".join(
        re.findall(r'class="w[di]">.*?</span></span>', row.right_html)
    )
    assert _text_of(row.left_html) == old.rstrip("\n") and _text_of(
        row.right_html
    ) == new.rstrip("\n")


def test_the_unified_view_lists_deletions_before_insertions_with_word_marks() -> None:
    diff = compute_side_by_side(
        "a\ncudaFree(p);\ncudaFree(q);\nz\n",
        "a\nhipFree(p);\nhipFree(q);\nz\n",
        old_name="x.cu",
    )
    rows = render_unified(diff).rows
    assert [(r.kind, r.old_no, r.new_no) for r in rows] == [
        ("equal", 1, 1),
        ("delete", 2, None),
        ("delete", 3, None),
        ("insert", None, 2),
        ("insert", None, 3),
        ("equal", 4, 4),
    ]
    assert 'class="wd"' in rows[1].html and 'class="wi"' in rows[3].html


def test_it_attaches_annotations_to_their_side_and_keeps_annotated_lines_visible() -> (
    None
):
    old = _numbered(60)
    new = old.replace("line 5\n", "LINE 5\n")
    notes = [
        {
            "side": "right",
            "line": 40,
            "kind": "unconverted",
            "severity": "warning",
            "message": "cuBLAS call left",
        },
        {
            "side": "left",
            "line": 5,
            "kind": "diagnostic",
            "severity": "error",
            "message": "m",
        },
        {
            "side": "right",
            "line": 999,
            "kind": "fix",
            "severity": "info",
            "message": "out of range",
        },
    ]
    diff = compute_side_by_side(old, new, annotations=notes)
    rows = diff.chunk(0).rows
    by_right = {r.right_no: r for r in rows}
    assert [n.message for n in by_right[40].right_annotations] == ["cuBLAS call left"]
    assert by_right[40].left_annotations == []
    assert [
        r.right_no for r in rows if r.kind == "equal" and r.right_no and r.right_no > 30
    ] == [37, 38, 39, 40, 41, 42, 43]
    assert [n.kind for n in by_right[5].left_annotations] == ["diagnostic"]
    assert [n.line for n in diff.unplaced_annotations] == [999]


def test_annotations_with_an_unknown_side_are_refused() -> None:
    with pytest.raises(ValueError):
        compute_side_by_side("a\n", "b\n", annotations=[{"side": "middle", "line": 1}])


@pytest.mark.parametrize(
    "name", ["k.cu", "CMakeLists.txt", "Makefile", "run.py", "x.unknownext", HOSTILE]
)
def test_it_escapes_hostile_code_in_every_view(name: str) -> None:
    old = f"int x; // {HOSTILE}\nkeep\n"
    new = f'const char* s = "{HOSTILE}";\nkeep\n'
    diff = compute_side_by_side(
        old,
        new,
        old_name=name,
        annotations=[{"side": "left", "line": 1, "kind": "fix"}],
    )
    fragments = [r.left_html + r.right_html for r in diff.chunk(0).rows] + [
        r.html for r in render_unified(diff).rows
    ]
    fragments += highlight_lines(new, name)
    for fragment in fragments:
        assert (
            "<script" not in fragment
            and "<img" not in fragment
            and "</td>" not in fragment
        )
        assert set(re.findall(r"<(/?\w+)", fragment)) <= {"span", "/span"}
    assert _text_of(diff.chunk(0).rows[0].right_html) == new.splitlines()[0]


def test_a_multiline_comment_inside_a_chunk_is_highlighted_as_comment() -> None:
    old = "int a;\n/* one\n   two\n*/\nint b;\n"
    rows = (
        compute_side_by_side(
            old, old.replace("int b", "long b"), old_name="a.cu", context=None
        )
        .chunk(0)
        .rows
    )
    assert (
        rows[2].left_html.startswith('<span class="cm">')
        and rows[2].right_html == rows[2].left_html
    )


def test_a_large_file_is_chunked_exactly() -> None:
    old = _numbered(20_000)
    new = old.replace("line 7\n", "seven\n")
    diff = compute_side_by_side(old, new, context=None)
    first = diff.chunk(0)
    assert len(first.rows) == 500 and first.has_more and first.chunk_count == 40
    last = diff.chunk(39)
    assert (
        len(last.rows) == 500 and not last.has_more and last.rows[-1].left_no == 20_000
    )
    assert [r.left_no for r in diff.chunk(1).rows[:2]] == [501, 502]
    with pytest.raises(IndexError):
        diff.chunk(40)
    restored = pickle.loads(pickle.dumps(diff))
    assert [r.right_html for r in restored.chunk(39).rows] == [
        r.right_html for r in last.rows
    ]


def test_a_chunk_size_that_does_not_divide_the_rows_ends_with_a_short_chunk() -> None:
    diff = compute_side_by_side(_numbered(1234), _numbered(1234, "other"), context=None)
    assert (
        diff.chunk_count() == 3
        and len(diff.chunk(2).rows) == 234
        and not diff.chunk(2).has_more
    )
    assert (diff.added, diff.removed) == (1234, 1234)


def test_added_and_removed_files_show_one_sided_rows() -> None:
    added = diff_file(None, b"a\nb\n", old_name=None, new_name="new.hip")
    assert added.diff is not None and [
        (r.kind, r.right_no) for r in added.diff.chunk(0).rows
    ] == [("insert", 1), ("insert", 2)]
    removed = diff_file(b"a\n", None, old_name="gone.cu")
    assert removed.diff is not None and [
        (r.kind, r.left_no) for r in removed.diff.chunk(0).rows
    ] == [("delete", 1)]


def test_binary_and_non_utf8_files_get_a_notice_instead_of_rows() -> None:
    binary = diff_file(b"ELF\x00\x01", b"ELF\x00\x02", old_name="a.o")
    assert (
        binary.diff is None
        and binary.notice_kind == "binary"
        and "binary" in (binary.notice or "")
    )
    latin = diff_file(b"caf\xe9\n", b"cafe\n", old_name="a.cu")
    assert (
        latin.diff is None
        and latin.notice_kind == "encoding"
        and "UTF-8" in (latin.notice or "")
    )
    late_nul = diff_file(b"a" * 9000 + b"\x00", b"b\n", old_name="a.txt")
    assert late_nul.diff is not None


def test_crlf_and_missing_final_newline_do_not_add_rows() -> None:
    rows = (
        compute_side_by_side("a\r\nb\r\nc", "a\r\nB\r\nc", context=None).chunk(0).rows
    )
    assert [(r.kind, r.left_no) for r in rows] == [
        ("equal", 1),
        ("replace", 2),
        ("equal", 3),
    ]


def test_a_changed_line_inside_a_block_comment_stays_a_comment_on_both_sides() -> None:
    old = "int a;\n/* notes\n   uses cudaMalloc\n*/\nint b;\n"
    row = (
        compute_side_by_side(
            old, old.replace("cudaMalloc", "hipMalloc"), old_name="k.cu"
        )
        .chunk(0)
        .rows[2]
    )
    assert row.kind == "replace"
    assert row.left_html.startswith('<span class="cm">') and row.right_html.startswith(
        '<span class="cm">'
    )


def test_a_prerendered_diff_renders_the_same_rows_as_the_lazy_one() -> None:
    old = "".join(
        f"int v{n} = cudaGet({n});\n" if n % 7 == 0 else f"float w{n};\n"
        for n in range(300)
    )
    new = old.replace("cudaGet", "hipGet")
    lazy = compute_side_by_side(old, new, old_name="k.cu", new_name="k.hip")
    ready = pickle.loads(
        pickle.dumps(
            compute_side_by_side(
                old, new, old_name="k.cu", new_name="k.hip", prerender=True
            )
        )
    )
    assert ready.prerendered is not None
    assert ready.chunk(0, size=100) == lazy.chunk(0, size=100)
    assert ready.unified_chunk(1, size=100) == lazy.unified_chunk(1, size=100)
    fold = next(r.fold for r in lazy.chunk(0).rows if r.fold)
    assert ready.expand(fold.fold_id) == lazy.expand(fold.fold_id)


def test_a_change_after_a_fold_inside_a_block_comment_is_highlighted_as_comment() -> (
    None
):
    old = (
        "".join(f"int v{n};\n" for n in range(30))
        + "/*\n * notes\n * more\n * cudaMalloc\n */\n"
    )
    diff = compute_side_by_side(
        old, old.replace("cudaMalloc", "hipMalloc"), old_name="k.cu"
    )
    rows = diff.chunk(0).rows
    assert rows[0].kind == "fold"
    changed = next(r for r in rows if r.kind == "replace")
    assert changed.left_html.startswith('<span class="cm">')
    assert changed.right_html.startswith('<span class="cm">')
    assert rows[1].left_html.startswith('<span class="cm">')


def test_pages_continue_where_the_previous_page_stopped() -> None:
    diff = compute_side_by_side(_numbered(1000), _numbered(1000, "new"), context=None)
    first = diff.page(0, 200)
    second = diff.page(first.stop, 500)
    assert (first.start, first.stop, len(first.rows)) == (0, 200, 200)
    assert [r.left_no for r in second.rows[:1]] == [201] and second.stop == 700
    last = diff.page(second.stop, 500)
    assert last.stop == 1000 and not last.has_more and last.rows[-1].left_no == 1000
    assert diff.unified_page(1990, 500).rows[-1].new_no == 1000
    with pytest.raises(IndexError):
        diff.page(1000)

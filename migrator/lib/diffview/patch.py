"""The download of a run's whole translation as a git-format patch that `git apply` accepts.

`build_patch` writes what `git diff` would: `diff --git` headers, full blob ids
on `index` lines (git apply needs them for binary patches), `/dev/null` for
added and deleted files, `rename from/to` for renames, 3 lines of context,
"\\ No newline at end of file" markers, and `GIT binary patch` literals for
binary files. Lines end only at "\\n", as in git, so CRLF files keep their "\\r"
inside the lines and apply byte for byte. Line alignment comes from
migrator/lib/diffview/align.py (anchored diff; difflib alone is too slow on large,
repetitive files). Which files changed, and the pairs to patch, come from
migrator/lib/diffview/tree.py.
"""

from __future__ import annotations

import base64
import hashlib
import zlib
from collections.abc import Iterable, Sequence

from migrator.lib.diffview.align import Opcode, align_lines
from migrator.lib.diffview.tree import split_patch_lines

# (path, old bytes or None if added, new bytes or None if deleted, new path if renamed else None)
PatchPair = tuple[str, bytes | None, bytes | None, str | None]

CONTEXT = 3
NULL_ID = "0" * 40
_NO_NEWLINE = b"\\ No newline at end of file\n"
_SPECIAL = {
    7: "a",
    8: "b",
    9: "t",
    10: "n",
    11: "v",
    12: "f",
    13: "r",
    34: '"',
    92: "\\",
}


def build_patch(pairs: Iterable[PatchPair]) -> str:
    """The patch as text; non-UTF-8 bytes are kept as surrogates (encode with "surrogateescape")."""
    return build_patch_bytes(pairs).decode("utf-8", "surrogateescape")


def build_patch_bytes(pairs: Iterable[PatchPair]) -> bytes:
    """A git-format patch turning every old file into its new version; unchanged pairs are skipped."""
    return b"".join(
        _file_patch(path, old, new, new_path) for path, old, new, new_path in pairs
    )


def blob_id(data: bytes) -> str:
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def _file_patch(
    path: str, old: bytes | None, new: bytes | None, new_path: str | None
) -> bytes:
    target = new_path or path
    renamed = (
        new_path is not None
        and new_path != path
        and old is not None
        and new is not None
    )
    if old == new and not renamed:
        return b""
    header = [f"diff --git {_quote('a/' + path)} {_quote('b/' + target)}"]
    if old is None:
        header.append("new file mode 100644")
    elif new is None:
        header.append("deleted file mode 100644")
    elif renamed:
        header += [f"rename from {_quote(path)}", f"rename to {_quote(target)}"]
    if old == new:
        return _lines(header)
    old_id = blob_id(old) if old is not None else NULL_ID
    new_id = blob_id(new) if new is not None else NULL_ID
    header.append(f"index {old_id}..{new_id}")
    if _is_binary(old) or _is_binary(new):
        header.append("GIT binary patch")
        return (
            _lines(header) + _binary_literal(new or b"") + _binary_literal(old or b"")
        )
    body = _text_hunks(old or b"", new or b"")
    if not body:
        return _lines(header)
    old_name = _name_line("a/" + path) if old is not None else "/dev/null"
    new_name = _name_line("b/" + target) if new is not None else "/dev/null"
    return _lines(header + [f"--- {old_name}", f"+++ {new_name}"]) + body


def _lines(lines: Sequence[str]) -> bytes:
    return "".join(line + "\n" for line in lines).encode("utf-8", "surrogateescape")


def _is_binary(data: bytes | None) -> bool:
    return data is not None and b"\0" in data[:8192]


def _quote(name: str) -> str:
    """Git's C-style quoting for names with control, quote, backslash or non-ASCII bytes."""
    raw = name.encode("utf-8", "surrogateescape")
    if not any(byte < 32 or byte >= 127 or byte in (34, 92) for byte in raw):
        return name
    parts = []
    for byte in raw:
        if byte in _SPECIAL:
            parts.append("\\" + _SPECIAL[byte])
        elif byte < 32 or byte >= 127:
            parts.append(f"\\{byte:03o}")
        else:
            parts.append(chr(byte))
    return '"' + "".join(parts) + '"'


def _name_line(name: str) -> str:
    quoted = _quote(name)
    # git ends ---/+++ names containing a space with a tab so that patch(1) reads them whole.
    return quoted + "\t" if " " in quoted and not quoted.startswith('"') else quoted


def _text_hunks(old: bytes, new: bytes) -> bytes:
    a = split_patch_lines(old)
    b = split_patch_lines(new)
    out: list[bytes] = []
    for group in _grouped(align_lines(a, b), len(a), len(b)):
        first, last = group[0], group[-1]
        out.append(
            b"@@ -%s +%s @@\n" % (_range(first.i1, last.i2), _range(first.j1, last.j2))
        )
        for op in group:
            if op.kind == "equal":
                out += [_patch_line(b" ", line) for line in a[op.i1 : op.i2]]
                continue
            out += [_patch_line(b"-", line) for line in a[op.i1 : op.i2]]
            out += [_patch_line(b"+", line) for line in b[op.j1 : op.j2]]
    return b"".join(out)


def _patch_line(prefix: bytes, line: bytes) -> bytes:
    return (
        prefix + line if line.endswith(b"\n") else prefix + line + b"\n" + _NO_NEWLINE
    )


def _range(start: int, stop: int) -> bytes:
    length = stop - start
    if length == 1:
        return b"%d" % (start + 1)
    return b"%d,%d" % (start + 1 if length else start, length)


def _grouped(opcodes: list[Opcode], len_a: int, len_b: int) -> list[list[Opcode]]:
    """Hunks: changes with CONTEXT equal lines around them, like SequenceMatcher.get_grouped_opcodes."""
    if not any(op.kind != "equal" for op in opcodes):
        return []
    ops = list(opcodes)
    if ops[0].kind == "equal":
        op = ops[0]
        ops[0] = Opcode(
            "equal",
            max(op.i1, op.i2 - CONTEXT),
            op.i2,
            max(op.j1, op.j2 - CONTEXT),
            op.j2,
        )
    if ops[-1].kind == "equal":
        op = ops[-1]
        ops[-1] = Opcode(
            "equal",
            op.i1,
            min(op.i2, op.i1 + CONTEXT),
            op.j1,
            min(op.j2, op.j1 + CONTEXT),
        )
    groups: list[list[Opcode]] = []
    group: list[Opcode] = []
    for op in ops:
        if op.kind == "equal" and op.i2 - op.i1 > 2 * CONTEXT:
            group.append(
                Opcode("equal", op.i1, op.i1 + CONTEXT, op.j1, op.j1 + CONTEXT)
            )
            groups.append(group)
            group = [Opcode("equal", op.i2 - CONTEXT, op.i2, op.j2 - CONTEXT, op.j2)]
        else:
            group.append(op)
    if group and not (len(group) == 1 and group[0].kind == "equal"):
        groups.append(group)
    return groups


def _binary_literal(data: bytes) -> bytes:
    """One `literal` section of a GIT binary patch: zlib data in base85 lines of 52 bytes."""
    compressed = zlib.compress(data, 9)
    out = [b"literal %d\n" % len(data)]
    for start in range(0, len(compressed), 52):
        piece = compressed[start : start + 52]
        length_char = b"%c" % (
            ord("A") + len(piece) - 1
            if len(piece) <= 26
            else ord("a") + len(piece) - 27
        )
        out.append(length_char + base64.b85encode(piece, pad=True) + b"\n")
    out.append(b"\n")
    return b"".join(out)

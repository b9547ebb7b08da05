"""An on-disk copy of what a fresh command-line process would otherwise rebuild: the rule tables and the
compiled regular expressions, so that it starts faster than hipify-perl.

Building the table for a target reads 9,000 mappings, and compiling the engine's patterns (the candidate
trie above all) took about half of a cold start; both load from here in a few milliseconds. Entries are
``marshal`` data (plain tuples, dicts, lists: faster to load than pickle), keyed by the data files'
identity, the target and, for patterns, the exact Python and regex-engine version; they are written
atomically, and any unreadable or mismatched entry is simply rebuilt. Only the command line turns it on
(``enable``); library callers keep the engine free of file writes. The caller (``translator.rules``) names
rule entries (``cache_key``) and checks what it gets back, so this module knows nothing of rules.

Compiled patterns: CPython keeps compiled patterns in ``re._cache`` and builds them with
``_sre.compile`` from a program the compiler computes; ``load_patterns`` puts the stored programs back
into that cache before the engine's modules compile their patterns, so each ``re.compile`` finds its
pattern ready. These are interpreter internals: the entry is tied to ``sys.version`` and ``_sre.MAGIC``,
and on any surprise nothing is loaded (the patterns then compile as usual).
"""
from __future__ import annotations

import marshal
import os
import re
import sys
import zlib
from pathlib import Path

from translator.mapping import DATA_FILE

_directory: Path | None = None
_loaded_patterns: set[tuple[str, int]] = set()


def enable(directory: Path) -> None:
    global _directory
    _directory = directory


def default_directory() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "migrator" / "translator"


def cache_key(parts: str, declared: frozenset[str] | None) -> str:
    """An entry's name: the mapping data's identity, the target's ``parts`` and its declared names."""
    stat = DATA_FILE.stat()
    text = f"{stat.st_size}:{stat.st_mtime_ns}:{DATA_FILE}\n{parts}\n"
    text += "\n".join(sorted(declared)) if declared is not None else "-"
    data = text.encode()
    return f"{zlib.crc32(data):08x}{zlib.adler32(data):08x}{len(data):x}"


def load(key: str) -> object | None:
    if _directory is None:
        return None
    try:
        found: object = marshal.loads((_directory / f"{key}.marshal").read_bytes())
    except (OSError, ValueError, EOFError, TypeError):
        return None
    return found


def store(key: str, value: object) -> None:
    """Store ``value``: tuples, lists, dicts, strings, numbers (what marshal takes; anything else: skipped)."""
    if _directory is None:
        return
    try:
        _write(_directory / f"{key}.marshal", marshal.dumps(value))  # type: ignore[arg-type]
    except (OSError, ValueError):
        return  # a read-only home only costs speed


def _write(path: Path, data: bytes) -> None:
    import tempfile  # only when writing: its import costs a fresh process several milliseconds

    path.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.NamedTemporaryFile(dir=path.parent, delete=False, suffix=".tmp") as handle:
        handle.write(data)
    os.replace(handle.name, path)


def _patterns_file() -> Path | None:
    if _directory is None:
        return None
    try:
        import _sre
        magic = _sre.MAGIC
    except (ImportError, AttributeError):
        return None
    version = zlib.crc32(sys.version.encode())
    return _directory / f"patterns-{version:08x}-{magic}.marshal"


def load_patterns() -> int:
    """Put the stored compiled patterns into ``re``'s cache; the number loaded (0 when none or unusable)."""
    path = _patterns_file()
    cache = getattr(re, "_cache", None)
    if path is None or not isinstance(cache, dict) or sys.version_info < (3, 11):
        return 0
    try:
        import _sre
        entries = marshal.loads(path.read_bytes())
        compiled = {(str, pattern, flags): _sre.compile(pattern, final_flags, code, groups, groupindex, indexgroup)
                    for pattern, flags, final_flags, code, groups, groupindex, indexgroup in entries}
    except (OSError, ValueError, EOFError, TypeError, RuntimeError):
        return 0
    cache.update(compiled)
    _loaded_patterns.update((pattern, flags) for _, pattern, flags in compiled)
    return len(compiled)


def store_patterns() -> None:
    """Store the programs of the patterns this process compiled that the file did not have."""
    path = _patterns_file()
    cache = getattr(re, "_cache", None)
    if path is None or not isinstance(cache, dict) or sys.version_info < (3, 11):
        return
    keys = [key for key in list(cache) if isinstance(key, tuple) and len(key) == 3 and key[0] is str]
    if all((pattern, flags) in _loaded_patterns for _, pattern, flags in keys):
        return
    try:
        from re import _compiler, _parser  # type: ignore[attr-defined]

        entries = []
        for _, pattern, flags in keys:
            compiled = cache[(str, pattern, flags)]
            code = [int(op) for op in _compiler._code(_parser.parse(pattern, flags), flags)]  # named int constants
            indexgroup = [None] * (compiled.groups + 1)
            for name, index in compiled.groupindex.items():
                indexgroup[index] = name
            entries.append((pattern, flags, compiled.flags, code, compiled.groups, dict(compiled.groupindex),
                            tuple(indexgroup)))
        _write(path, marshal.dumps(entries))
    except (OSError, ValueError, TypeError, AttributeError, re.error):
        return

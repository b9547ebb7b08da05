"""Translate a whole tree: a full, deterministic copy of ``src`` in ``dst``.

C/C++/CUDA sources are translated; everything else, and everything under the exclude
globs, is copied byte for byte. Files that are not UTF-8 are translated on their
``surrogateescape`` decoding, so bytes outside the rewritten identifiers are kept exactly.
"""
from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from pathlib import Path

from translator.account import FileAccount, TreeAccount
from translator.globs import is_excluded
from translator.includegraph import IncludeGraph, included_names
from translator.localdefs import defined_names
from translator.options import TranslateOptions
from translator.rewrites import without_replaced_definitions
from translator.rewrites.port import PORT_HEADER, project_license, render
from translator.rules import Target, build_rules
from translator.source import _Interesting, translate_source
from translator.wavefront.constants import TreeFacts
from translator.wavefront.model import log_line as wavefront_line
from translator.wavefront.scan import file_facts

CUDA_SUFFIXES = frozenset({".cu", ".cuh"})
CXX_SUFFIXES = frozenset({".c", ".cc", ".cpp", ".cxx", ".c++", ".h", ".hh", ".hpp", ".hxx", ".inl", ".inc", ".tpp"})
TEXTS_KEPT_BYTES = 256 << 20  # source texts kept from the pre-pass for the translation (beyond: read again)
Progress = Callable[[int, int], None]
Log = Callable[[str], None]


def walk(src: Path) -> list[Path]:
    """Every file under ``src`` in a stable order (symlinked dirs are not followed)."""
    found: list[Path] = []
    for root, dirs, files in os.walk(src):
        dirs.sort()
        found.extend(Path(root) / name for name in sorted(files))
    return found


def read_text(path: Path) -> tuple[str, bool]:
    data = path.read_bytes()
    try:
        return data.decode("utf-8"), True
    except UnicodeDecodeError:
        return data.decode("utf-8", "surrogateescape"), False


class Prepass:
    """What the whole tree tells each file: the project's own definitions it sees (by relative path),
    the constants and device macros of the tree (for the wavefront scan), and the source texts read."""

    __slots__ = ("keep", "facts", "texts")

    def __init__(self, keep: dict[str, frozenset[str]], facts: TreeFacts,
                 texts: dict[str, tuple[str, bool]] | None = None) -> None:
        self.keep = keep
        self.facts = facts
        self.texts: dict[str, tuple[str, bool]] = {} if texts is None else texts

def project_definitions(files: list[Path], src: Path, options: TranslateOptions) -> dict[str, frozenset[str]]:
    """Per source file (relative path): the CUDA names defined by it or by the project files it includes."""
    return prepass(files, src, options).keep


def prepass(files: list[Path], src: Path, options: TranslateOptions) -> Prepass:
    """Read every source file once: includes, the project's definitions, the wavefront facts."""
    ruleset = build_rules(Target.of(options))
    interesting = _Interesting(ruleset.rules)
    defined: dict[str, set[str]] = {}
    includes: dict[str, list[str]] = {}
    texts: dict[str, tuple[str, bool]] = {}
    facts = []
    kept_bytes = 0
    for path in files:
        relative = path.relative_to(src).as_posix()
        if path.suffix.lower() in CUDA_SUFFIXES | CXX_SUFFIXES and not path.is_symlink():
            text, utf8 = read_text(path)
            includes[relative] = included_names(text)
            if not is_excluded(relative, options.exclude_globs):
                defined[relative] = defined_names(without_replaced_definitions(text), interesting)
                if options.wavefront_scan:
                    facts.append(file_facts(text))
                if kept_bytes < TEXTS_KEPT_BYTES:  # the translation reads it from here, not from disk again
                    texts[relative] = (text, utf8)
                    kept_bytes += len(text)
    graph = IncludeGraph(includes)
    visible: dict[str, frozenset[str]] = {}
    for relative in includes:
        names = set(options.keep_names)
        for seen in graph.visible(relative):
            names |= defined.get(seen, set())
        visible[relative] = frozenset(names)
    return Prepass(visible, TreeFacts.of(facts), texts)


def translate_tree(src: Path, dst: Path, options: TranslateOptions | None = None, progress: Progress | None = None,
                   log: Log | None = None, is_cancelled: Callable[[], bool] | None = None) -> TreeAccount:
    """Write the translated copy of ``src`` into ``dst`` (replaced if it exists)."""
    options = options or TranslateOptions()
    src, dst = Path(src), Path(dst)
    if dst.exists():
        shutil.rmtree(dst)
    dst.mkdir(parents=True)
    files = walk(src)
    seen = prepass(files, src, options)
    base = options.replace(detect_local_definitions=False, wavefront_facts=seen.facts)
    tree = TreeAccount(source=str(src), destination=str(dst))
    made: set[Path] = {dst}
    per_names: dict[tuple[frozenset[str], str], TranslateOptions] = {}
    for index, path in enumerate(files, start=1):
        if is_cancelled is not None and is_cancelled():
            break
        relative = path.relative_to(src).as_posix()
        names = seen.keep.get(relative, options.keep_names)
        port = os.path.relpath(PORT_HEADER, os.path.dirname(relative) or ".")
        file_options = per_names.get((names, port))
        if file_options is None:
            file_options = per_names[(names, port)] = base.replace(keep_names=names, port_header=port)
        folder = (dst / relative).parent
        if folder not in made:  # one mkdir per folder, not per file
            folder.mkdir(parents=True, exist_ok=True)
            made.add(folder)
        entry = _one_file(path, src, dst, file_options, tree, seen.texts.pop(relative, None))
        tree.files.append(entry)
        if log is not None and entry.status != "copied":
            log(_log_line(entry))
        if progress is not None:
            progress(index, len(files))
    write_port_header(src, dst, files, tree)
    return tree


def write_port_header(src: Path, dst: Path, files: list[Path], tree: TreeAccount) -> None:
    """Write ``hip_port/cuda_port.h`` with the sections the translated files asked for (none: no file)."""
    sections = {name for entry in tree.files for name in entry.port_sections}
    if not sections:
        return
    target = dst / PORT_HEADER
    if target.exists() or target.is_symlink():
        tree.warnings.append(f"{PORT_HEADER} of the project was replaced by the rewrites' helper header")
        target.unlink()
    license_id, origin = project_license(src, [p for p in files if p.suffix.lower() in CUDA_SUFFIXES | CXX_SUFFIXES])
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(render(sections, license_id, origin))
    tree.port_header = PORT_HEADER


def account_tree(src: Path, options: TranslateOptions | None = None,
                 is_cancelled: Callable[[], bool] | None = None) -> TreeAccount:
    """The account ``translate_tree`` would give, translating in memory and writing nothing (what the
    scan needs to know what a translation leaves behind)."""
    options = options or TranslateOptions()
    src = Path(src)
    files = walk(src)
    seen = prepass(files, src, options)
    base = options.replace(detect_local_definitions=False, wavefront_facts=seen.facts)
    tree = TreeAccount(source=str(src), destination="")
    for path in files:
        if is_cancelled is not None and is_cancelled():
            break
        relative = path.relative_to(src).as_posix()
        if path.is_symlink() or path.suffix.lower() not in CUDA_SUFFIXES | CXX_SUFFIXES \
                or is_excluded(relative, options.exclude_globs):
            continue
        kept = seen.texts.pop(relative, None)
        text = kept[0] if kept is not None else read_text(path)[0]
        names = seen.keep.get(relative, options.keep_names)
        entry = translate_source(text, str(path), base.replace(keep_names=names)).account
        entry.path = relative
        tree.files.append(entry)
    return tree


def _one_file(path: Path, src: Path, dst: Path, options: TranslateOptions, tree: TreeAccount,
              read: tuple[str, bool] | None = None) -> FileAccount:
    relative = path.relative_to(src).as_posix()
    suffix = path.suffix.lower()
    target = dst / relative  # its folder exists (translate_tree makes it)
    if path.is_symlink() and not link_stays_inside(path, src):
        return FileAccount(path=relative, status="skipped",
                           warnings=[f"symbolic link to {os.readlink(path)!r} leaves the tree: not copied"])
    if path.is_symlink() or suffix not in CUDA_SUFFIXES | CXX_SUFFIXES:
        _copy(path, target)
        return FileAccount(path=relative, status="copied")
    if is_excluded(relative, options.exclude_globs):
        _copy(path, target)
        return FileAccount(path=relative, status="skipped")
    text, utf8 = read if read is not None else read_text(path)
    result = translate_source(text, str(path), options)
    entry = result.account
    entry.path = relative
    if not utf8:
        entry.warnings.append("not valid UTF-8: translated with the original bytes kept")
    if options.rename_cu_to_hip and suffix == ".cu":
        target = target.with_suffix(".hip")
        entry.renamed_to = target.relative_to(dst).as_posix()
        tree.renames[relative] = entry.renamed_to
    if entry.changed:
        target.write_bytes(result.text.encode("utf-8", "surrogateescape"))
        shutil.copymode(path, target)
    else:
        _copy(path, target)
    return entry


def link_stays_inside(link: Path, root: Path) -> bool:
    """True when ``link``'s text stays below ``root`` and so does the path reached by following it."""
    text = os.readlink(link)
    relative = link.parent.relative_to(root).as_posix()
    joined = os.path.normpath(os.path.join(relative, text))
    real_root = os.path.realpath(root)
    real = os.path.realpath(link)
    inside = real == real_root or real.startswith(real_root + os.sep)
    return inside and not text.startswith("/") and joined != ".." and not joined.startswith("../")


def _copy(path: Path, target: Path) -> None:
    if path.is_symlink():
        target.symlink_to(os.readlink(path))
    else:
        shutil.copy2(path, target)


def _log_line(entry: FileAccount) -> str:
    if entry.status == "skipped":
        return f"skip  {entry.path} ({entry.warnings[0] if entry.warnings else 'excluded'})\n"
    unconverted = f", {len(entry.unconverted)} unconverted" if entry.unconverted else ""
    name = f" -> {entry.renamed_to}" if entry.renamed_to else ""
    line = f"{entry.status:<10} {entry.path}{name}: {entry.converted_total} converted{unconverted}\n"
    return line + "".join(wavefront_line(entry.path, hazard) for hazard in entry.wavefront)


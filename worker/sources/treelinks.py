"""Symbolic links in an unpacked or cloned tree: where they really lead, and which ones leave the tree.

A link is inside the tree only when both readings agree: its text, joined to the folder it sits in
and normalised, never climbs above the root (so the link still points inside after the tree is
copied elsewhere), and the path the file system reaches by following it, and every link on the way,
is the root or below it (so a chain of links that each look harmless cannot climb out).
"""
from __future__ import annotations

import os
import posixpath
from pathlib import Path

NAME_MAX = 255  # bytes in one path component (Linux file systems)
PATH_MAX = 4095  # bytes in a whole path


def within(root: Path, path: Path) -> bool:
    """True when ``path``, with every symbolic link followed, is ``root`` or lies below it."""
    real_root = os.path.realpath(root)
    real = os.path.realpath(path)
    return real == real_root or real.startswith(real_root.rstrip(os.sep) + os.sep)


def text_leaves(relative: str, target: str) -> bool:
    """True when the link text ``target`` of the link at ``relative`` climbs out of the tree as written."""
    if not target or target.startswith("/") or "\x00" in target:
        return True
    joined = posixpath.normpath(posixpath.join(posixpath.dirname(relative), target))
    return joined == ".." or joined.startswith("../")


def link_leaves(root: Path, link: Path) -> bool:
    """True when the symbolic link ``link`` (somewhere under ``root``) points outside ``root``."""
    relative = link.relative_to(root).as_posix()
    return text_leaves(relative, os.readlink(link)) or not within(root, link)


def first_link_in_path(root: Path, relative: str) -> str:
    """The first folder of ``relative`` (itself excluded) that is a symbolic link, or ""."""
    current = root
    parts = Path(relative).parts
    for index, part in enumerate(parts[:-1]):
        current = current / part
        if current.is_symlink():
            return "/".join(parts[: index + 1])
    return ""


def links_leaving(root: Path) -> list[tuple[str, str]]:
    """(path, link text) of every symbolic link under ``root`` that points outside it, sorted."""
    found: list[tuple[str, str]] = []
    for dirpath, dirnames, filenames in os.walk(root):  # links to folders are listed, never entered
        for name in (*dirnames, *filenames):
            path = Path(dirpath) / name
            if path.is_symlink() and link_leaves(root, path):
                found.append((path.relative_to(root).as_posix(), os.readlink(path)))
    return sorted(found)


def overlong_component(path: str) -> str:
    """The first component of ``path`` longer than the file system allows, or ""."""
    for part in path.split("/"):
        if len(part.encode("utf-8", "surrogateescape")) > NAME_MAX:
            return part
    return ""

"""Which project files each file can see through its ``#include`` lines.

A project's own definition of a CUDA name (a private copy of ``CUresult`` in one sample's header)
must only stop translation in the files that include that header, directly or not, never tree-wide.
Includes are resolved next to the includer first, then against any project file whose path ends
with the included path (projects add their folders with ``-I``).
"""
from __future__ import annotations

import posixpath
import re
from collections import defaultdict
from collections.abc import Mapping

INCLUDE_NAME = re.compile(r'^[ \t]*#[ \t]*include[ \t]*[<"]([^>"\n]+)[>"]', re.MULTILINE)


def included_names(text: str) -> list[str]:
    return INCLUDE_NAME.findall(text) if "include" in text else []


class IncludeGraph:
    """Files by path relative to the tree root (posix), each with the names it includes."""

    def __init__(self, includes: Mapping[str, list[str]]) -> None:
        self.includes = includes
        self.by_basename: defaultdict[str, list[str]] = defaultdict(list)
        for path in includes:
            self.by_basename[posixpath.basename(path)].append(path)

    def resolve(self, includer: str, name: str) -> list[str]:
        beside = posixpath.normpath(posixpath.join(posixpath.dirname(includer), name))
        if beside in self.includes:
            return [beside]
        name = posixpath.normpath(name)
        return [p for p in self.by_basename.get(posixpath.basename(name), []) if p == name or p.endswith("/" + name)]

    def visible(self, path: str) -> set[str]:
        """``path`` and every project file it includes, transitively."""
        seen = {path}
        stack = [path]
        while stack:
            current = stack.pop()
            for name in self.includes.get(current, []):
                for found in self.resolve(current, name):
                    if found not in seen:
                        seen.add(found)
                        stack.append(found)
        return seen

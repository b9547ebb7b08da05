"""``hip_port/cuda_port.h``: the one helper header the rewrites need, written into the translated tree.

It holds only the sections the tree's files asked for, in a fixed order, each opening with a comment
naming the CUDA construct it stands in for. It is licensed as the project is: the SPDX identifier of
the license file at the top of the source tree (``LICENSE``, ``COPYING``..., recognised by ``identify``,
the library pre-commit uses, which compares the text with the SPDX license texts), else the
``SPDX-License-Identifier`` most of the project's sources carry, else no identifier and a line saying
the header follows the project's terms.
"""
from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable
from pathlib import Path

from translator.rewrites import tables

PORT_HEADER = "hip_port/cuda_port.h"
LICENSE_NAMES = re.compile(r"^(?:LICEN[CS]E|COPYING|COPYRIGHT)(?:[.-]\w+)?$", re.IGNORECASE)
SPDX = re.compile(r"SPDX-License-Identifier:\s*([\w.+-]+(?:\s+(?:OR|AND|WITH)\s+[\w.+-]+)*)")
MAX_LICENSE_BYTES = 256 * 1024


def render(sections: Iterable[str], license_id: str, origin: str) -> str:
    wanted = set(sections)
    if "nvtx-roctx" in wanted:
        wanted.discard("nvtx-noop")
    order = [name for name in tables.load().port_sections if name in wanted]
    spdx = f"// SPDX-License-Identifier: {license_id}\n" if license_id else ""
    terms = (f"// Licensed as the project that includes it ({license_id}, from {origin})." if license_id
             else "// No license was found at the top of the project: this file follows the project's own terms.")
    head = (f"{spdx}// hip_port/cuda_port.h: written by Migrator's translator for this project's HIP port.\n{terms}\n"
            "// Stand-ins for CUDA constructs that HIP has no one-to-one counterpart for; each section names\n"
            "// what it replaces. The translated files that need it include it.\n#pragma once\n"
            "#if defined(__HIPCC__)\n#include <hip/hip_runtime.h>\n#else\n#include <hip/hip_runtime_api.h>\n#endif\n")
    return head + "".join(f"\n// ---- {name} ----\n{tables.section_text(name)}" for name in order)


def project_license(src: Path, files: Iterable[Path] = ()) -> tuple[str, str]:
    """(SPDX identifier, where it came from) for the tree at ``src``; ("", "") when none is found."""
    for path in sorted(src.iterdir()) if src.is_dir() else []:
        if LICENSE_NAMES.match(path.name) and path.is_file() and not path.is_symlink():
            found = _license_file(path)
            if found:
                return found, path.name
    tags: Counter[str] = Counter()
    for path in files:
        if path.is_file() and not path.is_symlink():
            with path.open("rb") as handle:
                head = handle.read(2048).decode("utf-8", "replace")
            tags.update(SPDX.findall(head))
    if tags:
        return tags.most_common(1)[0][0], "the sources' SPDX-License-Identifier lines"
    return "", ""


def _license_file(path: Path) -> str:
    if path.stat().st_size > MAX_LICENSE_BYTES:
        return ""
    text = path.read_text(errors="replace")
    tagged = SPDX.search(text)
    if tagged is not None:
        return tagged.group(1)
    from identify import identify  # loaded only when a tree needs the header: the command line starts without it

    return identify.license_id(str(path)) or ""

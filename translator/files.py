"""Translate single files (the command line's file mode, as hipify-clang is used)."""
from __future__ import annotations

import sys
from pathlib import Path

from translator.options import TranslateOptions
from translator.rewrites.port import PORT_HEADER, project_license, render
from translator.source import translate_source
from translator.wavefront.model import log_line as wavefront_line


def translate_files(paths: list[Path], options: TranslateOptions, output: Path | None = None,
                    out_dir: Path | None = None) -> list[dict[str, object]]:
    """Write each translation to ``output`` (one file), into ``out_dir``, or to stdout; return the accounts.

    A file the rewrites need ``hip_port/cuda_port.h`` for gets it written next to its output."""
    accounts: list[dict[str, object]] = []
    sections: set[str] = set()
    for path in paths:
        result = translate_source(path.read_text(errors="surrogateescape"), str(path), options)
        if out_dir is not None:
            out_dir.mkdir(parents=True, exist_ok=True)
            (out_dir / path.name).write_text(result.text, errors="surrogateescape")
        elif output is not None:
            output.write_text(result.text, errors="surrogateescape")
        else:
            sys.stdout.write(result.text)
        for hazard in result.account.wavefront:  # stdout may carry the translation: hazards go to stderr
            sys.stderr.write(wavefront_line(str(path), hazard))
        accounts.append(result.account.to_dict())
        sections.update(result.account.port_sections)
    folder = out_dir or (output.parent if output is not None else None)
    if sections and folder is not None:
        (folder / PORT_HEADER).parent.mkdir(parents=True, exist_ok=True)
        (folder / PORT_HEADER).write_text(render(sections, *project_license(paths[0].parent, paths)))
    return accounts

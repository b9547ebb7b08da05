"""AMD's hipify-perl / hipify-clang as the engine instead of the builtin one: their command line and statistics.

They read user files, so they run only in the sandbox over the toolchain root (``worker/stages/hipify.py``),
never from the host's PATH; this module only builds the command and reads what it printed. Never
``-inplace``: hipify-perl then copies the file with ``system("cp $fileName ...")``, a shell over the name.

Both print, per file, ``[HIPIFY] info: file 'F' statistics:`` followed by counts, a ``CONVERTED refs by
type:`` (clang) or ``CONVERTED refs by names:`` (perl) block, and warnings ``F:LINE: warning: unsupported
HIP identifier: NAME`` (perl) or clang diagnostics ``F:LINE:COL: warning: ... 'NAME' is unsupported``.
They become the builtin account shape.
"""
from __future__ import annotations

import re
from pathlib import Path

from translator.account import FileAccount, Finding
from translator.mapping import load_default

ENGINES = ("hipify-perl", "hipify-clang")
SECTION = re.compile(r"\b(UNCONVERTED|CONVERTED) refs by (type|API|names):")
BY_TYPE = re.compile(r"^\s+([\w\-. ]+?):\s+(\d+)\s*$")
BY_NAME = re.compile(r"^\s+(\S+) => (\S*): (\d+)\s*$")
UNSUPPORTED = re.compile(r"^\s*(?P<file>[^:\n]+):#?(?P<line>\d+)(?::(?P<col>\d+))?:? ?:? ?warning: (?P<msg>.*)$")
LEFTOVER = re.compile(r"^\s*warning: (?P<file>[^:\n]+):#(?P<line>\d+) : (?P<msg>.*)$")  # perl: CUDA-like text left
NAME_IN_MSG = re.compile(r"['\"](\w+)['\"]|identifier: (\w+)")


def engine_command(engine: Path, source: Path, output: Path) -> list[str]:
    if engine.name.startswith("hipify-clang"):
        return [str(engine), str(source), f"-o={output}", "--print-stats", "--", "-x", "cuda",
                "--cuda-host-only", "-nocudalib", "-nocudainc"]
    return [str(engine), "-quiet-warnings", "-print-stats", f"-o={output}", str(source)]


CLANG_FAMILY = {"device_function": "device-function", "execution": "kernel-launch", "occupancy": "kernel-launch",
                "numeric_literal": "type", "define": "type", "include": "header", "include_cuda_main_header": "header",
                "include_cuda_main_header_v2": "header", "virtual_memory": "memory", "ordered_memory": "memory",
                "unified": "memory", "stream_memory": "memory", "peer": "memory", "device_library": "library"}


def parse_statistics(text: str, relative: str) -> FileAccount:
    """hipify-perl/-clang ``--print-stats`` output for one file -> the builtin account shape."""
    account = FileAccount(path=relative)
    section = ("", "")
    by_type_seen = False
    for line in text.splitlines():
        header = SECTION.search(line)
        if header:
            section = (header.group(1), header.group(2))
            by_type_seen = by_type_seen or section == ("CONVERTED", "type")
            continue
        if line.startswith("[HIPIFY]") or not line.startswith(" "):
            section = ("", "")
        if (leftover := LEFTOVER.match(line)) is not None:
            account.warnings.append(f"{leftover.group('line')} : {leftover.group('msg')}")
        elif (warning := UNSUPPORTED.match(line)) is not None:
            _add_warning(account, warning)
        elif section[0]:
            _add_count(account, section, line, by_type_seen)
    account.changed = account.converted_total > 0
    account.status = "translated" if account.changed else "unchanged"
    return account


def _add_count(account: FileAccount, section: tuple[str, str], line: str, by_type_seen: bool) -> None:
    renamed = BY_NAME.match(line)
    plain = BY_TYPE.match(line)
    if section == ("CONVERTED", "type") and plain:
        name = plain.group(1).strip()
        account.converted[CLANG_FAMILY.get(name, name.replace("_", "-"))] += int(plain.group(2))
    elif section == ("CONVERTED", "names") and not by_type_seen and (renamed or plain):
        name, count = (renamed.group(1), renamed.group(3)) if renamed else (plain.group(1), plain.group(2))  # type: ignore[union-attr]
        mapping = load_default().lookup(name)
        account.converted[mapping.family if mapping else "other"] += int(count)
    elif section == ("UNCONVERTED", "names") and plain:
        name = plain.group(1).strip()
        if not any(f["name"] == name for f in account.unconverted):
            account.unconverted.append(Finding(name=name, line=0, column=0, reason="unsupported"))


def _add_warning(account: FileAccount, warning: re.Match[str]) -> None:
    message = warning.group("msg").strip()
    name_match = NAME_IN_MSG.search(message)
    name = next((g for g in name_match.groups() if g), "") if name_match else ""
    line, column = int(warning.group("line")), int(warning.group("col") or 0)
    if name and ("unsupported" in message):
        account.unconverted.append(Finding(name=name, line=line, column=column, reason="unsupported"))
    elif name and ("deprecated" in message or "removed" in message):
        reason = "removed" if "removed" in message else "deprecated"
        account.deprecated.append(Finding(name=name, line=line, column=column, reason=reason))
    else:
        account.warnings.append(f"{line}: {message}")

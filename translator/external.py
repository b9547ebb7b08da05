"""Run AMD's hipify-perl / hipify-clang instead of the builtin engine and parse its statistics.

Both print, per file, ``[HIPIFY] info: file 'F' statistics:`` followed by counts, a
``CONVERTED refs by type:`` (clang) or ``CONVERTED refs by names:`` (perl) block, and
warnings ``F:LINE: warning: unsupported HIP identifier: NAME`` (perl) or clang diagnostics
``F:LINE:COL: warning: ... 'NAME' is unsupported``. They become the builtin account shape.
"""
from __future__ import annotations

import os
import re
import shutil
import subprocess
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


def find_engine(name: str) -> Path | None:
    """The engine on PATH or under $ROCM_PATH/bin (default /opt/rocm/bin)."""
    found = shutil.which(name)
    if found:
        return Path(found)
    candidate = Path(os.environ.get("ROCM_PATH", "/opt/rocm")) / "bin" / name
    return candidate if candidate.is_file() and os.access(candidate, os.X_OK) else None


def engine_command(engine: Path, source: Path, output: Path) -> list[str]:
    if engine.name.startswith("hipify-clang"):
        return [str(engine), str(source), f"-o={output}", "--print-stats", "--", "-x", "cuda",
                "--cuda-host-only", "-nocudalib", "-nocudainc"]
    return [str(engine), "-quiet-warnings", "-print-stats", f"-o={output}", str(source)]


def run_engine(engine: Path, source: Path, output: Path, relative: str, timeout_s: int = 300) -> FileAccount:
    """Translate one file with the external engine; a failure is reported in the account."""
    try:
        done = subprocess.run(engine_command(engine, source, output), capture_output=True, text=True,
                              timeout=timeout_s, check=False)
    except (OSError, subprocess.SubprocessError) as exc:
        return FileAccount(path=relative, status="failed", warnings=[f"{engine.name} failed: {exc}"])
    account = parse_statistics(done.stdout + "\n" + done.stderr, relative)
    if done.returncode != 0 or not output.exists():
        account.status = "failed"
        account.warnings.append(f"{engine.name} exited with {done.returncode}")
    return account


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

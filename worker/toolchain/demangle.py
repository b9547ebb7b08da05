"""Itanium C++ names from a link's output made readable, by the toolchain root's ``c++filt`` in the sandbox.

The names come from the user's own link output, so they are hostile data: a name of a few hundred bytes
can demand gigabytes of output through substitutions (GNU c++filt spent 237 s on one such name here; the
Rust and libstdc++ demanglers that PyPI packages wrap grow without bound in process too), or nest deeply
enough to exhaust a recursive demangler's stack. So it never runs in the worker: one ``c++filt`` per batch
reads the names on standard input inside the sandbox, under a time, memory and output limit, and a batch
that goes wrong in any way leaves every name as the linker printed it. Names are capped in length and
number before they go in; a demangled name longer than ``MAX_DEMANGLED`` is not used.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence

from worker.toolchain.sandbox import Sandbox, SandboxLimits, SandboxUnavailable

Demangler = Callable[[list[str]], dict[str, str]]

CXXFILT = "c++filt"  # GNU binutils', on the root's PATH (Debian's binutils; ROCm images carry it too)
MAX_NAME = 16_384  # bytes; real template-heavy names (Eigen, CUTLASS, Thrust) stay well below
MAX_NAMES = 4_096  # per batch; the rest are kept as printed
MAX_DEMANGLED = 65_536  # characters: longer is no help to a reader
LIMITS = SandboxLimits(timeout_s=30, memory_mb=1024, cpu_seconds=30, file_size_mb=1, processes=256,
                       output_bytes=8_000_000)


def is_mangled(name: str) -> bool:
    """An Itanium name c++filt can take on one line: ``_Z`` and printable ASCII without spaces, capped."""
    return name.startswith("_Z") and len(name) <= MAX_NAME and name.isascii() and name.isprintable() \
        and not any(char.isspace() for char in name)


def demangle(names: Sequence[str], sandbox: Sandbox, limits: SandboxLimits = LIMITS) -> dict[str, str]:
    """Readable forms of ``names`` (each name maps to itself where it could not be demangled)."""
    plain = {name: name for name in names}
    batch = sorted({name for name in names if is_mangled(name)})[:MAX_NAMES]
    if not batch:
        return plain
    try:
        done = sandbox.run([CXXFILT], limits=limits, stdin=("\n".join(batch) + "\n").encode("ascii"))
    except SandboxUnavailable:
        return plain
    # Judged by the process alone (exit status, limits): a readable name may well contain "out of memory".
    lines = done.process.output.splitlines()
    if not done.process.ok or len(lines) != len(batch):
        return plain
    for name, readable in zip(batch, lines):
        if readable and len(readable) <= MAX_DEMANGLED:
            plain[name] = readable
    return plain


def sandboxed_demangler(sandbox: Sandbox, limits: SandboxLimits = LIMITS) -> Demangler:
    """``demangle`` bound to one sandbox, as ``parse_linker_output`` takes it."""
    return lambda names: demangle(names, sandbox, limits)

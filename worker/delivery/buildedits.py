"""Guarded edits of a CUDA project's own build files: a HIP path beside the CUDA one.

CMake: ``CUDA`` leaves the top-level ``project()`` languages and is enabled right after it unless
``GPU_PLATFORM`` is ``amd`` (or ``USE_HIP`` is on), in which case ``rocm/MigratorHIP.cmake`` is read
instead; a ``project()`` naming CUDA in a CMakeLists.txt further down enables it under the same test; ``find_package(CUDAToolkit)``/``enable_language(CUDA)`` lines are guarded so an AMD configure
does not need a CUDA toolkit. Make: the whole Makefile sits in the ``else`` of a
``GPU_PLATFORM=amd`` test whose other side includes ``rocm/hip.mk``. With ``GPU_PLATFORM`` unset
both files do exactly what they did. Each edit is idempotent: a file that already has it is returned
as it is.
"""
from __future__ import annotations

import re

CMAKE_MARKER = "rocm/MigratorHIP.cmake"
MAKE_MARKER = "rocm/hip.mk"
_PROJECT = re.compile(r"^(?P<indent>[ \t]*)project\s*\((?P<args>[^)]*)\)[^\n]*$", re.IGNORECASE | re.MULTILINE)
_CUDA_ONLY_LINE = re.compile(
    r"^(?P<indent>[ \t]*)(?:find_package\s*\(\s*(?:CUDAToolkit|CUDA)\b[^)\n]*\)|enable_language\s*\(\s*CUDA\s*\))[^\n]*$",
    re.IGNORECASE | re.MULTILINE)

CMAKE_SWITCH = """\
# GPU_PLATFORM=amd (or USE_HIP=ON) builds for AMD GPUs through HIP: rocm/MigratorHIP.cmake translates
# the CUDA sources at configure time. The default builds with CUDA exactly as before.
set(GPU_PLATFORM "cuda" CACHE STRING "GPU platform to build for: cuda (the default) or amd")
option(USE_HIP "Build for AMD GPUs through HIP (same as -DGPU_PLATFORM=amd)" OFF)
if(USE_HIP OR GPU_PLATFORM STREQUAL "amd")
  include("${CMAKE_CURRENT_SOURCE_DIR}/rocm/MigratorHIP.cmake")
else()
  enable_language(CUDA)
endif()
"""
MAKE_HEAD = """\
# make GPU_PLATFORM=amd builds for AMD GPUs through HIP (rocm/hip.mk); plain make builds with CUDA as before.
ifeq ($(GPU_PLATFORM)$(MIGRATOR_HIPIFIED),amd)
include rocm/hip.mk
else
"""
MAKE_TAIL = "\nendif  # GPU_PLATFORM=amd: rocm/hip.mk\n"


class NotUnderstood(ValueError):
    """The build file has no shape this module knows how to give a HIP path; the message says why."""


def edit_cmake(text: str) -> str:
    """The top-level CMakeLists.txt with the HIP path; ``NotUnderstood`` when it enables no CUDA."""
    if CMAKE_MARKER in text:
        return text
    project = _PROJECT.search(text)
    if project is None:
        raise NotUnderstood("CMakeLists.txt has no project() call on one line")
    words = project["args"].split()
    has_cuda = any(word.upper() == "CUDA" for word in words[1:])
    if not has_cuda and not _CUDA_ONLY_LINE.search(text):
        raise NotUnderstood("CMakeLists.txt enables no CUDA language")
    kept = [words[0], *(word for word in words[1:] if word.upper() != "CUDA")]
    if kept[-1].upper() == "LANGUAGES":
        kept.append("CXX")
    body = _guard_cuda_lines(text[project.end():])
    line = f"{project['indent']}project({' '.join(kept)})"
    return f"{text[:project.start()]}{line}\n{CMAKE_SWITCH}{body.removeprefix(chr(10))}"


NESTED_GUARD = "if(NOT MIGRATOR_HIP)"


def edit_nested_cmake(text: str) -> str:
    """A CMakeLists.txt below the top: a ``project()`` that names CUDA leaves it out and enables CUDA only
    when the AMD build is off; CUDA-toolkit lines are guarded. Unchanged when it has neither (or has them
    guarded already)."""
    if NESTED_GUARD in text:
        return text
    project = _PROJECT.search(text)
    words = project["args"].split() if project else []
    if project is None or not any(word.upper() == "CUDA" for word in words[1:]):
        return _guard_cuda_lines(text)
    kept = [words[0], *(word for word in words[1:] if word.upper() != "CUDA")]
    if kept[-1].upper() == "LANGUAGES":
        kept.append("CXX")
    indent = project["indent"]
    line = (f"{indent}project({' '.join(kept)})\n{indent}{NESTED_GUARD}  # GPU_PLATFORM=amd builds it through HIP\n"
            f"{indent}  enable_language(CUDA)\n{indent}endif()")
    return f"{text[:project.start()]}{line}{_guard_cuda_lines(text[project.end():])}"


def _guard_cuda_lines(text: str) -> str:
    def guarded(match: re.Match[str]) -> str:
        indent = match["indent"]
        return f"{indent}if(NOT MIGRATOR_HIP)  # the AMD build needs no CUDA toolkit\n{indent}  {match[0].strip()}\n{indent}endif()"
    return _CUDA_ONLY_LINE.sub(guarded, text)


def edit_makefile(text: str) -> str:
    """The top-level Makefile inside the ``else`` of the ``GPU_PLATFORM=amd`` test."""
    if MAKE_MARKER in text:
        return text
    if "nvcc" not in text.lower():
        raise NotUnderstood("the Makefile never calls nvcc")
    return MAKE_HEAD + text + ("" if text.endswith("\n") else "\n") + MAKE_TAIL.lstrip("\n")

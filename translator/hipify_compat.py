"""hipify-clang's command-line options, mapped onto ``TranslateOptions``.

Used by ``python -m translator`` (so scripts written for hipify-clang keep working) and by the
harness that runs HIPIFY's own lit test suite (``bench/hipify_suite.py``).
"""
from __future__ import annotations

from translator.options import TranslateOptions


class HipifyClangFlags:
    """The hipify-clang switches that change what is written (the rest only change logging). A plain class:
    a dataclass costs a fresh process milliseconds to build at import."""

    __slots__ = ("hip_kernel_execution_syntax", "cuda_kernel_execution_syntax", "roc", "miopen",
                 "skip_excluded_preprocessor_conditional_blocks", "default_preprocessor", "amap", "use_hip_data_types",
                 "experimental", "defines", "unknown")

    def __init__(self, hip_kernel_execution_syntax: bool = False, cuda_kernel_execution_syntax: bool = False,
                 roc: bool = False, miopen: bool = False, skip_excluded_preprocessor_conditional_blocks: bool = False,
                 default_preprocessor: bool = False, amap: bool = False, use_hip_data_types: bool = False,
                 experimental: bool = False, defines: tuple[tuple[str, str], ...] = (),
                 unknown: tuple[str, ...] = ()) -> None:
        self.hip_kernel_execution_syntax = hip_kernel_execution_syntax
        self.cuda_kernel_execution_syntax = cuda_kernel_execution_syntax
        self.roc = roc
        self.miopen = miopen
        self.skip_excluded_preprocessor_conditional_blocks = skip_excluded_preprocessor_conditional_blocks
        self.default_preprocessor = default_preprocessor
        self.amap = amap
        self.use_hip_data_types = use_hip_data_types
        self.experimental = experimental
        self.defines = defines
        self.unknown = unknown


FLAG_NAMES = {
    "hip-kernel-execution-syntax": "hip_kernel_execution_syntax",
    "cuda-kernel-execution-syntax": "cuda_kernel_execution_syntax",
    "roc": "roc",
    "miopen": "miopen",
    "skip-excluded-preprocessor-conditional-blocks": "skip_excluded_preprocessor_conditional_blocks",
    "default-preprocessor": "default_preprocessor",
    "amap": "amap",
    "use-hip-data-types": "use_hip_data_types",
    "experimental": "experimental",
}
# Accepted and ignored: they only change logging or need a compiler we do not run.
IGNORED_PREFIXES = ("-ferror-limit", "-Xclang", "-fcuda-allow-variadic-functions", "-v", "--cuda-gpu-arch",
                    "-I", "-isystem", "--cuda-path", "-x", "-std")


def parse_flags(arguments: list[str]) -> HipifyClangFlags:
    """hipify-clang (and clang) arguments -> flags; ``-DNAME[=VALUE]`` are kept as defines."""
    values: dict[str, bool] = {}
    defines: list[tuple[str, str]] = []
    unknown: list[str] = []
    for argument in arguments:
        name = argument.lstrip("-")
        if argument.startswith("-") and name in FLAG_NAMES:
            values[FLAG_NAMES[name]] = True
        elif argument.startswith("-D") and len(argument) > 2:
            key, _, value = argument[2:].partition("=")
            defines.append((key, value or "1"))
        elif not argument.startswith(IGNORED_PREFIXES):
            unknown.append(argument)
    return HipifyClangFlags(**values, defines=tuple(defines), unknown=tuple(unknown))


def to_options(flags: HipifyClangFlags, base: TranslateOptions | None = None) -> TranslateOptions:
    """What hipify-clang would do with these flags, as our options (``base`` gives the rest)."""
    base = base or TranslateOptions()
    skip = (flags.skip_excluded_preprocessor_conditional_blocks or flags.default_preprocessor) and not flags.amap
    return base.replace(
        launch_style="ggl" if flags.hip_kernel_execution_syntax else "chevron",
        roc_libraries=flags.roc,
        miopen=flags.miopen,
        use_hip_data_types=flags.use_hip_data_types,
        experimental=flags.experimental,
        skip_excluded_blocks=skip,
        defines=tuple(sorted({**dict(base.defines), **dict(flags.defines)}.items())),
    )


# Our long options and hipify-clang's, which hipify-clang (LLVM's parser) also accepts with one dash.
LONG_OPTIONS = frozenset({*FLAG_NAMES, "print-stats", "o-dir", "output", "launch-style", "roc-libraries",
                          "rename-cu-to-hip", "exclude", "target-hip-version", "declared-names", "keep-strings",
                          "account", "no-cache", "header-layout", "cuda-version"})
# hipify-clang options that only concern its own clang run or its logging: accepted, ignored.
IGNORED_OPTIONS = frozenset({"cuda-path", "clang-resource-directory", "temp-dir", "save-temps", "v",
                             "no-backup", "cuda-gpu-arch", "p", "no-undocumented-features",
                             "no-warnings-on-undocumented-features", "print-stats-csv", "o-stats"})


def normalize_argv(argv: list[str]) -> tuple[list[str], list[str]]:
    """(our arguments, clang arguments): one-dash long names get two, ``-o=X`` is split, and
    ``-D``/``-I`` (joined or with their value next) before ``--`` go with the clang arguments,
    as hipify-clang takes them."""
    ours: list[str] = []
    clang: list[str] = []
    rest = iter(argv)
    for argument in rest:
        if argument == "--":
            clang.extend(rest)
            break
        name, equals, value = argument.lstrip("-").partition("=")
        if argument in ("-D", "-I"):
            clang.append(argument + next(rest, ""))
        elif argument.startswith(("-D", "-I")):
            clang.append(argument)
        elif argument.startswith("-") and name in IGNORED_OPTIONS:
            continue
        elif argument.startswith("-") and (name in LONG_OPTIONS or name == "o"):
            ours.append("-o" if name == "o" else f"--{name}")
            if equals:
                ours.append(value)
        else:
            ours.append(argument)
    return ours, clang

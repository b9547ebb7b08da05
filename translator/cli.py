"""The command line (``python -m translator``, started by ``translator/__main__.py``).

Translates a tree (SRC a folder, ``-o`` the destination tree) or files. hipify-clang's option names
are accepted with one or two dashes (``-roc``, ``--hip-kernel-execution-syntax``, ``-o=out.hip``), so
scripts written for it keep working; ``-DNAME=VALUE`` after ``--`` feeds ``#if`` evaluation.
"""
from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Mapping
from pathlib import Path

from translator import rulecache
from translator.globs import DEFAULT_EXCLUDES, GlobError, check_glob
from translator.hipify_compat import FLAG_NAMES, normalize_argv, parse_flags, to_options
from translator.options import TranslateOptions


def parse_args(argv: list[str]) -> tuple[argparse.Namespace, list[str]]:
    ours, clang = normalize_argv(argv)
    parser = argparse.ArgumentParser(prog="python -m translator", description="Translate CUDA sources to HIP.",
                                     formatter_class=_formatter)
    parser.add_argument("src", type=Path, nargs="+", help="a source tree, or one or more files")
    parser.add_argument("-o", "--output", type=Path, help="destination tree (or file); default: print one file")
    parser.add_argument("--o-dir", type=Path, help="write each translated file into this folder")
    parser.add_argument("--launch-style", choices=("chevron", "ggl"), default=None)
    parser.add_argument("--roc-libraries", action="store_true", help="same as --roc")
    parser.add_argument("--rename-cu-to-hip", action="store_true")
    parser.add_argument("--exclude", action="append", default=None, type=_exclude_glob,
                        help="glob to copy untouched, with .gitignore rules (repeatable)")
    parser.add_argument("--target-hip-version", default="", help="HIP version to translate for (default 6.4)")
    parser.add_argument("--declared-names", type=Path, help="identifiers the target toolchain declares, one a line")
    parser.add_argument("--keep-strings", action="store_true", help="leave string literals untouched")
    parser.add_argument("--header-layout", choices=("rocm", "hipify"), default="rocm",
                        help="rocm (default): what ROCm 6+ builds (<hipblas/hipblas.h>, struct _hipGraphicsResource); "
                             "hipify: hipify-clang's spelling (<hipblas.h>, struct hipGraphicsResource, HIPIFY's "
                             "latest HIP as hipGetProcAddress's version), as HIPIFY's own tests expect")
    parser.add_argument("--cuda-version", default="", help="the CUDA version the code is built against, for "
                        "#if CUDART_VERSION tests (default 12.0; hipify-clang takes it from its CUDA installation)")
    parser.add_argument("--account", type=Path, help="write the full JSON account here")
    parser.add_argument("--print-stats", action="store_true", help="print the account summary to stderr")
    parser.add_argument("--no-cache", action="store_true", help="do not keep built rule tables on disk")
    parser.add_argument("--disable-fix-rule", action="append", default=[], metavar="RULE",
                        help="a wavefront fix rule not to apply, e.g. wavefront.full-mask-64 (repeatable)")
    parser.add_argument("--no-wavefront-scan", action="store_true",
                        help="do not look for code that assumes 32-lane warps")
    for name in FLAG_NAMES:
        parser.add_argument(f"--{name}", action="store_true", help="as hipify-clang")
    return parser.parse_args(ours), clang


def _formatter(prog: str) -> argparse.HelpFormatter:
    """argparse's own, with the terminal width read here: its default imports shutil (and shutil bz2 and
    lzma) at every start only to learn that width."""
    try:
        width = os.get_terminal_size().columns - 2
    except OSError:
        width = 78
    return argparse.HelpFormatter(prog, width=width)


def _exclude_glob(text: str) -> str:
    try:
        check_glob(text)
    except GlobError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from exc
    return text


def build_options(args: argparse.Namespace, clang: list[str]) -> TranslateOptions:
    switches = [f"--{name}" for name, attr in FLAG_NAMES.items() if getattr(args, attr)]
    flags = parse_flags(switches + clang)
    base = TranslateOptions(
        rename_cu_to_hip=args.rename_cu_to_hip, target_hip_version=args.target_hip_version,
        exclude_globs=tuple(args.exclude) if args.exclude is not None else DEFAULT_EXCLUDES,
        translate_strings=not args.keep_strings, declared_names=_declared(args.declared_names),
        hipify_spelling=args.header_layout == "hipify",
        disabled_rules=frozenset(args.disable_fix_rule), wavefront_scan=not args.no_wavefront_scan,
    )
    if args.cuda_version:
        base = base.replace(assumed_cuda_version=args.cuda_version)
    options = to_options(flags, base)
    if args.launch_style is not None:
        options = options.replace(launch_style=args.launch_style)
    if args.roc_libraries:
        options = options.replace(roc_libraries=True)
    return options


def _declared(path: Path | None) -> frozenset[str] | None:
    if path is None:
        return None
    return frozenset(line.strip() for line in path.read_text().splitlines() if line.strip())


def main(argv: list[str], patterns_loaded: bool = False) -> int:
    """Run the command line; ``patterns_loaded``: the caller has enabled the cache and loaded the stored
    patterns already (only when ``--no-cache`` cannot be among ``argv``)."""
    args, clang = parse_args(argv)
    options = build_options(args, clang)
    if not args.no_cache and not patterns_loaded:
        rulecache.enable(rulecache.default_directory())
        rulecache.load_patterns()  # before the engine's modules compile theirs
    try:
        return _run(args, options)
    finally:
        if not args.no_cache:
            rulecache.store_patterns()


def _run(args: argparse.Namespace, options: TranslateOptions) -> int:
    if len(args.src) == 1 and args.src[0].is_dir():
        return _tree(args, options)
    missing = [str(p) for p in args.src if not p.is_file()]
    if missing:
        print(f"no such file: {', '.join(missing)}", file=sys.stderr)
        return 2
    if len(args.src) > 1 and args.o_dir is None:
        print("several files need --o-dir DIR", file=sys.stderr)
        return 2
    from translator.files import translate_files  # the engine loads only when there is work

    accounts = translate_files(args.src, options, output=args.output, out_dir=args.o_dir)
    _report(args, {"files": accounts})
    return 0


def _tree(args: argparse.Namespace, options: TranslateOptions) -> int:
    destination = args.output or args.o_dir
    if destination is None:
        print("a tree needs -o DST", file=sys.stderr)
        return 2
    from translator.tree import translate_tree

    tree = translate_tree(args.src[0], destination, options, log=lambda line: print(line, end=""))
    totals = tree.totals()
    print(f"{totals['files']} files, {totals['changed']} changed, {totals['converted_total']} references converted, "
          f"{totals['unconverted_total']} unconverted, {totals['deprecated_total']} deprecated, "
          f"{totals['wavefront_total']} wavefront hazards ({totals['wavefront_fixed']} fixed)")
    if args.account or args.print_stats:  # the whole account is costly to build for a large tree
        _report(args, tree.to_dict())
    return 0


def _report(args: argparse.Namespace, account: Mapping[str, object]) -> None:
    import json  # only for --account and --print-stats: a fresh process need not load it otherwise

    if args.account:
        args.account.write_text(json.dumps(account, indent=1))
    if args.print_stats:
        print(json.dumps(account, indent=1), file=sys.stderr)

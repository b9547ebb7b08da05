"""python -m translator SRC [-o DST] [options]: translate a tree (or one file) and print a summary."""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from translator.options import DEFAULT_EXCLUDES, TranslateOptions
from translator.source import translate_source
from translator.tree import translate_tree


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m translator", description="Translate CUDA sources to HIP.")
    parser.add_argument("src", type=Path, help="a source tree or a single file")
    parser.add_argument("-o", "--output", type=Path, help="destination tree (or file); default: print a single file")
    parser.add_argument("--launch-style", choices=("chevron", "ggl"), default="chevron")
    parser.add_argument("--roc-libraries", action="store_true", help="emit rocBLAS/rocRAND/... directly")
    parser.add_argument("--rename-cu-to-hip", action="store_true")
    parser.add_argument("--exclude", action="append", default=None, help="glob to copy untouched (repeatable)")
    parser.add_argument("--target-hip-version", default="", help="default: the installed HIP")
    parser.add_argument("--account", type=Path, help="write the full JSON account here")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    options = TranslateOptions(
        launch_style=args.launch_style, roc_libraries=args.roc_libraries, rename_cu_to_hip=args.rename_cu_to_hip,
        exclude_globs=tuple(args.exclude) if args.exclude is not None else DEFAULT_EXCLUDES,
        target_hip_version=args.target_hip_version,
    )
    if args.src.is_file():
        result = translate_source(args.src.read_text(errors="surrogateescape"), str(args.src), options)
        if args.output:
            args.output.write_text(result.text, errors="surrogateescape")
        else:
            sys.stdout.write(result.text)
        account: dict[str, object] = result.account.to_dict()
        print(json.dumps(account, indent=1), file=sys.stderr)
    else:
        if args.output is None:
            print("a tree needs -o DST", file=sys.stderr)
            return 2
        tree = translate_tree(args.src, args.output, options, log=lambda line: print(line, end=""))
        account = tree.to_dict()
        totals = tree.totals()
        print(f"{totals['files']} files, {totals['changed']} changed, {totals['converted_total']} references converted, "
              f"{totals['unconverted_total']} unconverted, {totals['deprecated_total']} deprecated")
    if args.account:
        args.account.write_text(json.dumps(account, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""python -m translator SRC... [-o DST | --o-dir DIR] [options] [-- clang options]

Translates a tree (SRC a folder, ``-o`` the destination tree) or files. hipify-clang's option names
are accepted with one or two dashes (``-roc``, ``--hip-kernel-execution-syntax``, ``-o=out.hip``), so
scripts written for it keep working; ``-DNAME=VALUE`` after ``--`` feeds ``#if`` evaluation.
"""
from __future__ import annotations

import sys

from translator import rulecache  # imports nothing that compiles a regular expression


def main(argv: list[str] | None = None) -> int:
    """The command line (``translator/cli.py``), with the stored compiled patterns put into ``re``'s cache
    first: the standard library's modules it imports (argparse, json, dataclasses and what inspect pulls
    in) compile patterns of their own, and those are stored with the engine's."""
    arguments = sys.argv[1:] if argv is None else argv
    cached = not may_turn_off_cache(arguments)
    if cached:
        rulecache.enable(rulecache.default_directory())
        rulecache.load_patterns()
    from translator import cli

    return cli.main(arguments, patterns_loaded=cached)


def may_turn_off_cache(argv: list[str]) -> bool:
    """Whether an argument before ``--`` could be ``--no-cache`` as argparse reads it (any abbreviation it
    takes, one dash or two); when unsure the command line loads the patterns after parsing instead."""
    for argument in argv:
        if argument == "--":
            return False
        name = argument.lstrip("-").partition("=")[0]
        if argument.startswith("-") and len(name) >= 4 and "no-cache".startswith(name):
            return True
    return False


if __name__ == "__main__":
    sys.exit(main())

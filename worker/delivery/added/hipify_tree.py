"""Translate this repository's CUDA sources to HIP for a build on AMD GPUs.

Run by the build (CMake with -DGPU_PLATFORM=amd, make GPU_PLATFORM=amd), not by hand:
    python3 rocm/hipify_tree.py SOURCE_DIR OUTPUT_DIR [--exclude GLOB ...]
The CUDA sources stay the source of truth; OUTPUT_DIR is rebuilt from them on every run. It uses
Migrator's translation engine (``python3 -m translator``): installed, or found in the folder that
MIGRATOR_ENGINE names.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path


def main(argv: list[str]) -> int:
    if len(argv) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    source, output = Path(argv[1]).resolve(), Path(argv[2]).resolve()
    # Folders outside the tree (a build folder beside it) need no excluding.
    excludes = [word for word in argv[3:] if word != "--exclude" and not word.startswith(("..", "/"))]
    if output.is_relative_to(source) and output != source:
        excludes.append(output.relative_to(source).as_posix())
    env = dict(os.environ)
    engine = os.environ.get("MIGRATOR_ENGINE", "")
    if engine:
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [engine, env.get("PYTHONPATH", "")]))
    staging = output.with_name(output.name + ".new")
    shutil.rmtree(staging, ignore_errors=True)
    command = [sys.executable, "-m", "translator", str(source), "-o", str(staging), "--no-cache"]
    for glob in [".git", *excludes]:
        command += ["--exclude", glob]
    done = subprocess.run(command, env=env, check=False)
    if done.returncode != 0:
        return done.returncode
    shutil.rmtree(output, ignore_errors=True)
    staging.rename(output)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

"""source_subdir on real code, another checkout (the baseline, e.g. main) against this one, side by side.

Each unit is one ``manage.py migrate_repo`` run with default settings plus ``source_subdir``, the way a user
sets it, made by each checkout's own code (its ``.venv``, its ``bench/_benchdb.py`` scratch database) in a
child process; the order of the two checkouts alternates from unit to unit. Repositories are read from bare
git directories (``git archive HEAD``) into a scratch folder at run time, never committed:

- ``--rodinia GIT_DIR`` (e.g. yuhc/gpu-rodinia): one run with ``source_subdir: cuda``; counted are the build
  folders of ``cuda/`` (a Makefile beside CUDA sources, as ``auto`` picks them) that built;
- ``--cuda-samples GIT_DIR`` (NVIDIA/cuda-samples): one run per sample with ``source_subdir:
  Samples/0_Introduction/<sample>``; a sample counts as built when compile and link passed.

    .venv/bin/python bench/subdir_bench.py --baseline ../main [--rodinia GIT] [--cuda-samples GIT] [--samples a,b]
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ("vectorAdd", "asyncAPI", "clock", "simpleTemplates", "matrixMul", "simpleAtomicIntrinsics",
           "mergeSort", "simpleVoteIntrinsics")
REDIS = os.environ.get("SUBDIR_BENCH_REDIS", "redis://127.0.0.1:6379")
# Run by each checkout's Python in that checkout: only what both sides have (migrate_repo, _benchdb).
CHILD = r"""
import io, json, sys
sys.path.insert(0, "bench")
from _benchdb import scratch_django
tree, subdir, name, redis_url, db = sys.argv[1:6]
with scratch_django("subdir", broker_db=int(db), cache_db=int(db) + 1, redis_url=redis_url):
    from django.core.management import call_command
    from migrator.accounts.actions import create_user_and_team
    from migrator.projects.models import Run
    create_user_and_team("bench", "bench-password-1", "Bench")
    try:
        call_command("migrate_repo", tree, "--project", name, "--project-settings",
                     json.dumps({"source_subdir": subdir}), stdout=io.StringIO())
    except SystemExit:
        pass
    run = Run.objects.filter(project__name=name).latest("pk")
    stages = {s.name: {"state": s.state, "summary": s.summary, "data": s.data} for s in run.stages.all()}
    print("RESULT " + json.dumps(stages, default=str))
"""


def export(git_dir: Path, into: Path) -> Path:
    """HEAD's files (the mirror may lack its largest blobs: those are left out and counted)."""
    listing = subprocess.run(["git", "--git-dir", str(git_dir), "ls-tree", "-r", "-z", "HEAD"], check=True,
                             capture_output=True).stdout.decode().split("\0")
    blobs = [(meta.split()[2], path) for meta, _, path in (e.partition("\t") for e in listing if e)
             if meta.split()[1] == "blob" and meta.split()[0] != "120000"]
    batch = subprocess.run(["git", "--git-dir", str(git_dir), "cat-file", "--batch"], check=True, capture_output=True,
                           input="".join(f"{oid}\n" for oid, _ in blobs).encode()).stdout
    offset, missing = 0, 0
    for _oid, path in blobs:
        header_end = batch.index(b"\n", offset)
        header = batch[offset:header_end].split()
        offset = header_end + 1
        if header[-1] == b"missing":
            missing += 1
            continue
        size = int(header[2])
        target = into / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(batch[offset:offset + size])
        offset += size + 1
    print(f"{git_dir}: {len(blobs) - missing} files exported, {missing} absent from the mirror")
    return into


def migrate(checkout: Path, tree: Path, subdir: str, name: str, db: int) -> tuple[dict[str, dict[str, object]], float]:
    started = time.monotonic()
    done = subprocess.run([str(checkout / ".venv" / "bin" / "python"), "-c", CHILD, str(tree), subdir, name, REDIS,
                           str(db)], cwd=checkout, capture_output=True, text=True, check=False)
    line = next((ln for ln in done.stdout.splitlines() if ln.startswith("RESULT ")), "")
    if not line:
        raise SystemExit(f"{checkout}: no result for {name}:\n{done.stderr[-3000:]}")
    return json.loads(line[len("RESULT "):]), time.monotonic() - started


def folders_built(stages: dict[str, dict[str, object]]) -> tuple[int, list[str]]:
    """Build folders make built (a run that did not run make built none), and the failing ones."""
    data = stages.get("compile", {}).get("data") or {}
    units = (data.get("project_build") or {}).get("units", []) if isinstance(data, dict) else []
    ok = [str(u["folder"]) for u in units if u.get("ok")]
    return len(ok), [f"{u['folder']}: {str(u.get('error'))[:90]}" for u in units if not u.get("ok")]


def rodinia(git_dir: Path, checkouts: list[tuple[str, Path]], scratch: Path) -> None:
    sys.path.insert(0, str(ROOT))
    from worker.toolchain.build_folders import make_folders

    tree = export(git_dir, scratch / "rodinia")
    total = len(make_folders(tree / "cuda").folders)
    for label, checkout in checkouts:
        stages, seconds = migrate(checkout, tree, "cuda", f"rodinia-{label}", 1)
        built, failing = folders_built(stages)
        fetched = stages["fetch"]["data"] or {}
        kept = fetched.get("kept_beside", []) if isinstance(fetched, dict) else []
        print(f"rodinia cuda/ [{label:8}] build folders built {built}/{total} in {seconds:.0f}s; compile "
              f"{stages['compile']['state']}; kept beside: {kept or 'nothing'}")
        for line in failing[:30]:
            print(f"    {line}")


def samples(git_dir: Path, names: list[str], checkouts: list[tuple[str, Path]], scratch: Path) -> None:
    tree = export(git_dir, scratch / "cuda-samples")
    built = {label: 0 for label, _ in checkouts}
    for index, sample in enumerate(names):
        order = checkouts if index % 2 == 0 else checkouts[::-1]
        for label, checkout in order:
            stages, seconds = migrate(checkout, tree, f"Samples/0_Introduction/{sample}", f"{sample}-{label}", 3)
            ok = stages["compile"]["state"] == "passed" and stages["link"]["state"] == "passed"
            built[label] += ok
            print(f"{sample:24} [{label:8}] compile {stages['compile']['state']:8} link {stages['link']['state']:8} "
                  f"{seconds:5.0f}s  {'' if ok else str(stages['compile']['summary'])[:110]}")
    print("cuda-samples 0_Introduction built: " + ", ".join(f"{label} {n}/{len(names)}" for label, n in built.items()))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline", type=Path, required=True, help="the other checkout (with its .venv)")
    parser.add_argument("--rodinia", type=Path, help="bare git directory of a Rodinia repository")
    parser.add_argument("--cuda-samples", type=Path, help="bare git directory of NVIDIA/cuda-samples")
    parser.add_argument("--samples", default=",".join(SAMPLES), help="Samples/0_Introduction folders, comma-separated")
    args = parser.parse_args()
    checkouts = [("baseline", args.baseline.resolve()), ("this", ROOT)]
    print(f"load average at start: {Path('/proc/loadavg').read_text().split()[:3]}")
    with tempfile.TemporaryDirectory(prefix="subdir-bench-") as scratch:
        if args.rodinia:
            rodinia(args.rodinia, checkouts, Path(scratch))
        if args.cuda_samples:
            samples(args.cuda_samples, args.samples.split(","), checkouts, Path(scratch))
    print(f"load average at end: {Path('/proc/loadavg').read_text().split()[:3]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

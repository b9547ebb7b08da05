"""Webhook benchmark: signed GitHub deliveries through gunicorn, each turned into exactly one run.

Run: .venv/bin/python bench/webhook_bench.py [--deliveries 2000] [--replays 400] [--workers 4] [--clients 16]

Makes a scratch PostgreSQL database and uses a scratch Redis database as the Celery broker,
starts gunicorn and a Celery worker for the ``hooks`` queue on them, sends signed
``pull_request`` deliveries from client threads (replays of already-sent delivery ids mixed in,
some while the original is still in flight), waits until the worker has turned every recorded
delivery into a run, then counts runs, deliveries and queued first-stage messages. Prints the
endpoint's deliveries/s, the end-to-end runs/s, and duplicates (runs or messages beyond one per
unique delivery; must be 0). Target: 200 deliveries/s at the endpoint.
"""
from __future__ import annotations

import argparse
import hashlib
import hmac
import http.client
import json
import os
import random
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PYTHON = ROOT / ".venv" / "bin" / "python"
GUNICORN = ROOT / ".venv" / "bin" / "gunicorn"
BROKER_DB, CACHE_DB = 12, 11
SECRET = "bench-secret"


def scratch_env(db_name: str, var_dir: str) -> dict[str, str]:
    return {
        **os.environ, "DJANGO_SETTINGS_MODULE": "migrator.settings", "MIGRATOR_DB_NAME": db_name,
        "MIGRATOR_BROKER_URL": f"redis://127.0.0.1:6379/{BROKER_DB}",
        "MIGRATOR_CACHE_URL": f"redis://127.0.0.1:6379/{CACHE_DB}", "MIGRATOR_VAR_DIR": var_dir,
        "MIGRATOR_SECRET_KEY": "bench-only-secret-key", "MIGRATOR_LOG_LEVEL": "WARNING", "MIGRATOR_DEBUG": "false",
        # Thousands of distinct pushes per project within a minute: far over the default hourly bound
        # (60 webhook runs per project), which this benchmark is not about.
        "MIGRATOR_WEBHOOK_RUNS_PER_HOUR": "1000000",
    }


def admin_sql(statement: str) -> None:
    import psycopg

    with psycopg.connect(host="127.0.0.1", user="postgres", dbname="postgres", autocommit=True) as conn:
        conn.execute(statement)


def manage(env: dict[str, str], *args: str) -> str:
    done = subprocess.run([str(PYTHON), "manage.py", *args], cwd=ROOT, env=env, capture_output=True, text=True, check=False)
    if done.returncode:
        raise SystemExit(f"manage.py {' '.join(args)} failed:\n{done.stderr}")
    return done.stdout


SETUP = """
from migrator.accounts.models import Team
from migrator.integrations.models import ProjectIntegration
from migrator.projects.actions import create_project
team = Team.objects.create(name="bench", slug="bench")
ids = []
for i in range({projects}):
    project = create_project(team, f"bench-{{i}}", user=None, git_url=f"https://github.com/bench/repo{{i}}.git")
    ProjectIntegration.objects.create(project=project, webhook_secret="{secret}")
    ids.append(project.pk)
print(",".join(map(str, ids)))
"""

COUNT = """
from migrator.projects.models import Run, Stage
from migrator.integrations.models import WebhookDelivery
import json
runs = Run.objects.count()
print(json.dumps({"runs": runs, "deliveries": WebhookDelivery.objects.count(),
  "distinct_pr_refs": Run.objects.values("ref").distinct().count(),
  "fetch_enqueued": Stage.objects.filter(name="fetch").exclude(task_id="").count()}))
"""


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def wait_for_port(port: int, proc: subprocess.Popen[bytes], timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise SystemExit("gunicorn exited at start")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return
        except OSError:
            time.sleep(0.1)
    raise SystemExit("gunicorn did not start listening")


def make_delivery(index: int, project_id: int) -> tuple[str, bytes, dict[str, str]]:
    sha = hashlib.sha1(f"commit-{index}".encode()).hexdigest()
    payload = {"action": "synchronize", "number": index,
               "pull_request": {"html_url": f"https://github.com/bench/repo/pull/{index}", "head": {"sha": sha}}}
    body = json.dumps(payload).encode()
    signature = "sha256=" + hmac.new(SECRET.encode(), body, hashlib.sha256).hexdigest()
    headers = {"Content-Type": "application/json", "X-GitHub-Event": "pull_request",
               "X-GitHub-Delivery": f"bench-{index}", "X-Hub-Signature-256": signature}
    return f"/hooks/github/{project_id}", body, headers


def schedule(deliveries: int, replays: int, project_ids: list[int]) -> list[tuple[str, bytes, dict[str, str]]]:
    """Unique deliveries in order; each replay goes a few places after its original (often still in flight)."""
    items = [make_delivery(i, project_ids[i % len(project_ids)]) for i in range(deliveries)]
    rng = random.Random(7)
    for _ in range(replays):
        original = rng.randrange(deliveries)
        position = min(len(items), original + rng.randrange(1, 40))
        items.insert(position, items[original])
    return items


def send(port: int, item: tuple[str, bytes, dict[str, str]]) -> int:
    path, body, headers = item
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        conn.request("POST", path, body=body, headers=headers)
        response = conn.getresponse()
        response.read()
        return response.status
    finally:
        conn.close()


def cpu_seconds(pids: list[int]) -> float:
    """User + system CPU time of processes, from /proc (0 for any that is gone)."""
    total = 0
    for pid in pids:
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += int(fields[11]) + int(fields[12])
    return total / os.sysconf("SC_CLK_TCK")


def server_pids(gunicorn: subprocess.Popen[bytes], db_name: str) -> tuple[list[int], list[int]]:
    """The gunicorn workers and the PostgreSQL backends serving the scratch database."""
    import psycopg

    workers = Path(f"/proc/{gunicorn.pid}/task/{gunicorn.pid}/children").read_text().split()
    with psycopg.connect(host="127.0.0.1", user="postgres", dbname="postgres") as conn:
        rows = conn.execute("SELECT pid FROM pg_stat_activity WHERE datname = %s", [db_name]).fetchall()
    return [int(w) for w in workers], [int(r[0]) for r in rows]


def start_worker(env: dict[str, str]) -> subprocess.Popen[bytes]:
    """The hooks worker at low CPU priority: answering deliveries comes first, runs are created from the backlog."""
    return subprocess.Popen(
        ["nice", "-n", "19", str(PYTHON), "-m", "celery", "-A", "migrator", "worker", "-Q", "hooks", "-c", "1", "-P", "prefork",
         "--without-mingle", "--without-gossip", "-l", "WARNING", "-n", f"bench-hooks-{os.getpid()}@%h"],
        cwd=ROOT, env=env,
    )


def wait_for_runs(env: dict[str, str], expected: int, timeout: float = 600) -> float:
    """Seconds until the worker has created ``expected`` runs (or the timeout)."""
    import psycopg

    started = time.monotonic()
    with psycopg.connect(host="127.0.0.1", user="postgres", dbname=env["MIGRATOR_DB_NAME"], autocommit=True) as conn:
        while time.monotonic() - started < timeout:
            count = conn.execute("SELECT count(*) FROM projects_run").fetchone()
            if count and int(count[0]) >= expected:
                break
            time.sleep(0.2)
    return time.monotonic() - started


def queued_messages() -> int:
    import redis

    client = redis.Redis(host="127.0.0.1", port=6379, db=BROKER_DB)
    return sum(int(client.llen(key)) for key in client.scan_iter("cpu*") if client.type(key) == b"list")


def flush_broker() -> None:
    import redis

    redis.Redis(host="127.0.0.1", port=6379, db=BROKER_DB).flushdb()


def run(args: argparse.Namespace) -> int:
    db_name = f"migrator_bench_{os.getpid()}"
    var_dir = tempfile.mkdtemp(prefix="webhook-bench-")
    env = scratch_env(db_name, var_dir)
    admin_sql(f'CREATE DATABASE "{db_name}"')
    gunicorn = worker = None
    try:
        manage(env, "migrate", "-v", "0")
        project_ids = [int(x) for x in manage(env, "shell", "-c", SETUP.format(projects=args.projects, secret=SECRET)).strip().splitlines()[-1].split(",")]
        flush_broker()
        port = free_port()
        gunicorn = subprocess.Popen(
            [str(GUNICORN), "migrator.wsgi", "-w", str(args.workers), "-b", f"127.0.0.1:{port}", "--log-level", "warning"],
            cwd=ROOT, env=env,
        )
        wait_for_port(port, gunicorn)
        worker = start_worker(env)
        items = schedule(args.deliveries, args.replays, project_ids)
        ping = b"{}"
        ping_headers = {"X-GitHub-Event": "ping", "X-Hub-Signature-256": "sha256=" + hmac.new(SECRET.encode(), ping, hashlib.sha256).hexdigest()}
        with ThreadPoolExecutor(args.workers) as pool:  # let every worker connect to the database before timing
            list(pool.map(lambda _: send(port, (f"/hooks/github/{project_ids[0]}", ping, ping_headers)), range(args.workers * 4)))
        web_pids, db_pids = server_pids(gunicorn, db_name)
        load_before, client_before = os.getloadavg()[0], time.process_time()
        web_before, db_before = cpu_seconds(web_pids), cpu_seconds(db_pids)
        started = time.monotonic()
        with ThreadPoolExecutor(args.clients) as pool:
            statuses = Counter(pool.map(lambda item: send(port, item), items))
        elapsed = time.monotonic() - started
        drain = wait_for_runs(env, args.deliveries)
        end_to_end = elapsed + drain
        web_cpu, db_cpu = cpu_seconds(web_pids) - web_before, cpu_seconds(db_pids) - db_before
        server_cpu, client_cpu = web_cpu + db_cpu, time.process_time() - client_before
        print(f"load average (1 min) before/after: {load_before:.1f}/{os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
        print(f"CPU per delivery: gunicorn {1000 * web_cpu / len(items):.1f} ms + PostgreSQL {1000 * db_cpu / len(items):.1f} ms, "
              f"client {1000 * client_cpu / len(items):.1f} ms; capacity of {os.cpu_count()} idle CPUs for the server: "
              f"{len(items) * (os.cpu_count() or 1) / max(server_cpu, 1e-9):.0f} deliveries/s")
        print(f"end to end: every run created {drain:.2f} s after the last response; "
              f"{args.deliveries / end_to_end:.1f} runs/s overall (the hooks worker runs beside the endpoint)")
        counts = json.loads(manage(env, "shell", "-c", COUNT).strip().splitlines()[-1])
        messages = queued_messages()
    finally:
        for proc in (gunicorn, worker):
            if proc is not None:
                proc.terminate()
                proc.wait(timeout=30)
        flush_broker()
        admin_sql(f'DROP DATABASE IF EXISTS "{db_name}" WITH (FORCE)')
        shutil.rmtree(var_dir, ignore_errors=True)
    return report(args, statuses, elapsed, counts, messages)


def report(args: argparse.Namespace, statuses: Counter[int], elapsed: float, counts: dict[str, int], messages: int) -> int:
    total = args.deliveries + args.replays
    duplicates = max(0, counts["runs"] - args.deliveries) + max(0, messages - args.deliveries)
    print(f"gunicorn workers: {args.workers}, client threads: {args.clients}, projects: {args.projects}")
    print(f"responses: {dict(sorted(statuses.items()))} (202 = recorded and queued, 200 = replay, nothing queued)")
    print(f"deliveries/s: {total / elapsed:.1f} ({total} signed deliveries answered in {elapsed:.2f} s)")
    print(f"runs in DB: {counts['runs']} for {args.deliveries} unique deliveries; delivery rows: {counts['deliveries']}; "
          f"fetch stages enqueued: {counts['fetch_enqueued']}; broker messages: {messages}")
    print(f"duplicates: {duplicates}")
    ok = (duplicates == 0 and counts["runs"] == args.deliveries == messages == counts["fetch_enqueued"]
          and statuses.get(202) == args.deliveries and statuses.get(200) == args.replays)
    print("OK" if ok else "FAILED: runs, messages and responses must match the unique deliveries exactly")
    return 0 if ok else 1


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--deliveries", type=int, default=2000)
    parser.add_argument("--replays", type=int, default=400)
    parser.add_argument("--workers", type=int, default=4)
    parser.add_argument("--clients", type=int, default=16)
    parser.add_argument("--projects", type=int, default=4)
    return run(parser.parse_args())


if __name__ == "__main__":
    sys.exit(main())

"""A scratch PostgreSQL database, Redis databases and var folder for one benchmark run.

Usage (before anything imports Django models)::

    from _benchdb import scratch_django
    with scratch_django("run_page", broker_db=10, cache_db=9) as bench:
        ...  # Django is set up on migrator_bench_<pid>, migrations applied

The database ``migrator_bench_<pid>`` on 127.0.0.1:5432 (user postgres) is created, migrated,
and dropped at the end (also after an error or Ctrl-C); the var folder is a temporary directory
that is removed; the two Redis databases are flushed before and after, so each benchmark must
use numbers of its own (see bench/README.md). Nothing touches a developer's data or the tests'.
"""
from __future__ import annotations

import math
import os
import shutil
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

PG_HOST, PG_PORT, PG_USER = "127.0.0.1", 5432, "postgres"
REDIS = "redis://127.0.0.1:6379"


@dataclass(frozen=True)
class BenchEnv:
    db_name: str
    var_dir: Path
    broker_url: str
    cache_url: str

    def environ(self) -> dict[str, str]:
        """The environment a Django process (this one or a worker) needs to use the scratch resources."""
        return {
            "DJANGO_SETTINGS_MODULE": "migrator.settings",
            "MIGRATOR_DB_NAME": self.db_name,
            "MIGRATOR_DB_HOST": PG_HOST,
            "MIGRATOR_DB_PORT": str(PG_PORT),
            "MIGRATOR_DB_USER": PG_USER,
            "MIGRATOR_BROKER_URL": self.broker_url,
            "MIGRATOR_CACHE_URL": self.cache_url,
            "MIGRATOR_VAR_DIR": str(self.var_dir),
            "MIGRATOR_SECRET_KEY": "bench-only-secret-key",
            "MIGRATOR_DEBUG": "false",
            "MIGRATOR_LOG_LEVEL": "WARNING",
        }


def _admin_sql(statement: str) -> None:
    import psycopg

    with psycopg.connect(host=PG_HOST, port=PG_PORT, user=PG_USER, dbname="postgres", autocommit=True) as conn:
        conn.execute(statement)


def _flush_redis(url: str) -> None:
    import redis

    client = redis.Redis.from_url(url)
    try:
        client.flushdb()
    finally:
        client.close()


def _setup_django(env: BenchEnv) -> None:
    os.environ.update(env.environ())
    import django
    from django.core.management import call_command

    django.setup()
    call_command("migrate", verbosity=0, interactive=False)


def _close_django() -> None:
    from django.db import connections

    connections.close_all()


@contextmanager
def scratch_django(name: str, *, broker_db: int, cache_db: int, redis_url: str = REDIS) -> Iterator[BenchEnv]:
    """Create the scratch database and folders, set Django up on them, and clean everything after.

    ``redis_url`` (``redis://host:port``) names another Redis server, e.g. one the benchmark runs itself."""
    env = BenchEnv(
        db_name=f"migrator_bench_{name}_{os.getpid()}",
        var_dir=Path(tempfile.mkdtemp(prefix=f"migrator-bench-{name}-")),
        broker_url=f"{redis_url}/{broker_db}",
        cache_url=f"{redis_url}/{cache_db}",
    )
    for url in (env.broker_url, env.cache_url):
        _flush_redis(url)
    _admin_sql(f'CREATE DATABASE "{env.db_name}"')
    try:
        _setup_django(env)
        yield env
    finally:
        try:
            _close_django()
        finally:
            _admin_sql(f'DROP DATABASE IF EXISTS "{env.db_name}" WITH (FORCE)')
            for url in (env.broker_url, env.cache_url):
                _flush_redis(url)
            shutil.rmtree(env.var_dir, ignore_errors=True)


def percentile(values: list[float], fraction: float) -> float:
    """Nearest-rank percentile (fraction 0.5 = median, 0.95 = p95) of a non-empty list."""
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, math.ceil(fraction * len(ordered)) - 1))
    return ordered[index]


def load_note() -> str:
    """CPU count and load average: the figures depend on what else the machine is doing."""
    one, five, fifteen = os.getloadavg()
    return f"machine: {os.cpu_count()} CPUs, load average {one:.2f} {five:.2f} {fifteen:.2f}"

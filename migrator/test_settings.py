"""Settings for the test suite: the real PostgreSQL and Redis, on their own Redis databases and folders,
so tests never touch a dashboard or worker running on the same machine."""
from __future__ import annotations

import os
from pathlib import Path

from django.core.exceptions import ImproperlyConfigured

from migrator.localdb import database_credentials

# The database role ./dev made is kept in the installation's var folder; the tests' own files go elsewhere.
# Exported, so the worker processes that tests start find the same role.
_db_credentials = database_credentials(Path(os.environ.get("MIGRATOR_VAR_DIR", Path(__file__).parent.parent / "var")))
os.environ.setdefault("MIGRATOR_DB_USER", _db_credentials.user)
os.environ.setdefault("MIGRATOR_DB_PASSWORD", _db_credentials.password)
os.environ["MIGRATOR_MODE"] = "test"  # fake GPUs allowed (the runner tests lease them)
os.environ.setdefault("MIGRATOR_VAR_DIR", str(Path(os.environ.get("TMPDIR", "/tmp")) / "migrator-tests"))
# Under pytest-xdist (`pytest -n`), each worker process gets a folder, a broker database and cache keys of its own: run
# ids restart in every worker's test database, so two workers would otherwise share run folders and queues. The
# processes a test starts (Celery workers, gunicorn) inherit the environment, so they land in the same place.
XDIST_WORKER = os.environ.get("PYTEST_XDIST_WORKER", "")
if XDIST_WORKER and not os.environ["MIGRATOR_VAR_DIR"].endswith(f"-{XDIST_WORKER}"):
    os.environ["MIGRATOR_VAR_DIR"] += f"-{XDIST_WORKER}"

from migrator.settings import *  # noqa: E402,F401,F403
from migrator.settings import VAR_DIR  # noqa: E402

# The Redis database the suite's broker uses: 13 in a plain run, one per pytest-xdist worker otherwise (14 holds
# the cache, with a key prefix per worker). The others belong to a developer's instance (0/1) and the benchmarks
# (3-12, bench/README.md), so at most three workers.
_BROKER_DBS = (13, 15, 2)
_XDIST_INDEX = int(XDIST_WORKER.removeprefix("gw") or 0)
if _XDIST_INDEX >= len(_BROKER_DBS):
    raise ImproperlyConfigured(f"the test suite runs on at most {len(_BROKER_DBS)} workers (MIGRATOR_TEST_WORKERS)")
REDIS_TEST_URL = os.environ.get("MIGRATOR_TEST_REDIS_URL", f"redis://127.0.0.1:6379/{_BROKER_DBS[_XDIST_INDEX]}")
CELERY_BROKER_URL = REDIS_TEST_URL
CACHES = {
    "default": {"BACKEND": "django.core.cache.backends.redis.RedisCache", "LOCATION": "redis://127.0.0.1:6379/14",
                "KEY_PREFIX": XDIST_WORKER},
    # Per process and cleared before each test (tests/conftest.py): counts never leak between tests.
    "throttle": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache", "LOCATION": "throttle"},
}
MIGRATOR_WORKSPACE_ROOT = Path(os.environ.get("MIGRATOR_WORKSPACE_ROOT", str(VAR_DIR / "workspaces")))
MIGRATOR_CACHE_ROOT = Path(os.environ.get("MIGRATOR_CACHE_ROOT", str(VAR_DIR / "cache")))
MEDIA_ROOT = VAR_DIR / "uploads"
PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]  # fast logins in tests

# One test database per pytest process, so parallel runs on one machine never collide.
DATABASES["default"]["TEST"] = {"NAME": f"test_migrator_{os.getpid()}"}  # noqa: F405

# A run of the command line whose compile failed builds its CUDA reference with the local nvcc (real work: the
# original units compiled in the sandbox). Off here; the tests about that evidence turn it on.
MIGRATOR_LOCAL_CUDA_REFERENCE = False

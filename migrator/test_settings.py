"""Settings for the test suite: the real PostgreSQL and Redis, on their own Redis databases and folders,
so tests never touch a dashboard or worker running on the same machine."""
from __future__ import annotations

import os
from pathlib import Path

from migrator.localdb import database_credentials

# The database role ./dev made is kept in the installation's var folder; the tests' own files go elsewhere.
# Exported, so the worker processes that tests start find the same role.
_db_credentials = database_credentials(Path(os.environ.get("MIGRATOR_VAR_DIR", Path(__file__).parent.parent / "var")))
os.environ.setdefault("MIGRATOR_DB_USER", _db_credentials.user)
os.environ.setdefault("MIGRATOR_DB_PASSWORD", _db_credentials.password)
os.environ["MIGRATOR_MODE"] = "test"  # fake GPUs allowed (the runner tests lease them)
os.environ.setdefault("MIGRATOR_VAR_DIR", str(Path(os.environ.get("TMPDIR", "/tmp")) / "migrator-tests"))

from migrator.settings import *  # noqa: E402,F401,F403
from migrator.settings import VAR_DIR  # noqa: E402

REDIS_TEST_URL = os.environ.get("MIGRATOR_TEST_REDIS_URL", "redis://127.0.0.1:6379/13")
CELERY_BROKER_URL = REDIS_TEST_URL
CACHES = {
    "default": {"BACKEND": "django.core.cache.backends.redis.RedisCache", "LOCATION": "redis://127.0.0.1:6379/14"},
    # Per process and cleared before each test (tests/conftest.py): counts never leak between tests.
    "throttle": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache", "LOCATION": "throttle"},
}
MIGRATOR_WORKSPACE_ROOT = Path(os.environ.get("MIGRATOR_WORKSPACE_ROOT", str(VAR_DIR / "workspaces")))
MIGRATOR_CACHE_ROOT = Path(os.environ.get("MIGRATOR_CACHE_ROOT", str(VAR_DIR / "cache")))
MEDIA_ROOT = VAR_DIR / "uploads"
PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]  # fast logins in tests

# One test database per pytest process, so parallel runs on one machine never collide.
DATABASES["default"]["TEST"] = {"NAME": f"test_migrator_{os.getpid()}"}  # noqa: F405

"""Settings for the test suite: the real PostgreSQL and Redis, on their own Redis databases and folders,
so tests never touch a dashboard or worker running on the same machine."""
from __future__ import annotations

import os
from pathlib import Path

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

"""Django settings. Every deployment setting comes from the environment (see README, "Settings")."""
from __future__ import annotations

import secrets
from pathlib import Path

from kombu import Queue  # type: ignore[attr-defined]

from migrator.envconf import env_bool, env_fake_gpus, env_int, env_list, env_mode, env_str

BASE_DIR = Path(__file__).resolve().parent.parent
VAR_DIR = Path(env_str("MIGRATOR_VAR_DIR", str(BASE_DIR / "var")))

DEBUG = env_bool("MIGRATOR_DEBUG", False)
# production (default), demo, or test (set by migrator/test_settings.py). Only demo and test accept
# MIGRATOR_FAKE_GPUS; every result obtained on a fake device is labelled "[fake GPU]".
MIGRATOR_MODE = env_mode()
MIGRATOR_FAKE_GPUS = env_fake_gpus(MIGRATOR_MODE)


def _local_secret_key() -> str:
    """A key generated once per installation and kept in VAR_DIR, used when none is configured."""
    path = VAR_DIR / "secret_key"
    if not path.exists():
        VAR_DIR.mkdir(parents=True, exist_ok=True)
        path.write_text(secrets.token_urlsafe(48))
        path.chmod(0o600)
    return path.read_text().strip()


SECRET_KEY = env_str("MIGRATOR_SECRET_KEY", "") or _local_secret_key()
ALLOWED_HOSTS = env_list("MIGRATOR_ALLOWED_HOSTS", ["localhost", "127.0.0.1", "[::1]", "testserver"])
CSRF_TRUSTED_ORIGINS = env_list("MIGRATOR_CSRF_TRUSTED_ORIGINS", [])
# The dashboard's address as seen from outside (links in PR comments and commit statuses).
MIGRATOR_PUBLIC_URL = env_str("MIGRATOR_PUBLIC_URL", "http://localhost:8000").rstrip("/")

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "django.contrib.postgres",
    "django_htmx",
    "template_partials",
    "migrator.accounts",
    "migrator.projects",
    "migrator.runners",
    "migrator.notebook",
    "ninja",
    "migrator.reports",
    "migrator.integrations",
    "migrator.api",
    "migrator.review",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
]

ROOT_URLCONF = "migrator.urls"
WSGI_APPLICATION = "migrator.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    }
]

# PostgreSQL is the production database (full-text search). SQLite is a fallback only for machines
# where PostgreSQL cannot be had; search then degrades to substring matching.
DB_ENGINE = env_str("MIGRATOR_DB_ENGINE", "postgresql")
DATABASES: dict[str, dict[str, object]]
if DB_ENGINE == "sqlite":
    DATABASES = {"default": {"ENGINE": "django.db.backends.sqlite3", "NAME": str(VAR_DIR / "migrator.sqlite3")}}
else:
    DATABASES = {
        "default": {
            "ENGINE": "django.db.backends.postgresql",
            "NAME": env_str("MIGRATOR_DB_NAME", "migrator"),
            "USER": env_str("MIGRATOR_DB_USER", "postgres"),
            "PASSWORD": env_str("MIGRATOR_DB_PASSWORD", ""),
            "HOST": env_str("MIGRATOR_DB_HOST", "127.0.0.1"),
            "PORT": env_int("MIGRATOR_DB_PORT", 5432),
            "CONN_MAX_AGE": env_int("MIGRATOR_DB_CONN_MAX_AGE", 60),
        }
    }
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
]
LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "projects:list"
LOGOUT_REDIRECT_URL = "login"

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = False
USE_TZ = True

STATIC_URL = "/static/"
STATIC_ROOT = BASE_DIR / "var" / "static"
STATICFILES_DIRS = [BASE_DIR / "static"]
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"},
}
WHITENOISE_USE_FINDERS = True  # serve straight from app/static dirs without a collectstatic step in dev
MEDIA_ROOT = VAR_DIR / "uploads"

# Uploads: the archive is streamed to a temporary file, never held in memory.
MIGRATOR_MAX_UPLOAD_BYTES = env_int("MIGRATOR_MAX_UPLOAD_BYTES", 200 * 1024 * 1024, minimum=1024)
DATA_UPLOAD_MAX_MEMORY_SIZE = 10 * 1024 * 1024
FILE_UPLOAD_MAX_MEMORY_SIZE = 2 * 1024 * 1024

# Archive safety limits (zip bombs, file floods).
MIGRATOR_MAX_ARCHIVE_FILES = env_int("MIGRATOR_MAX_ARCHIVE_FILES", 50_000, minimum=1)
MIGRATOR_MAX_UNPACKED_BYTES = env_int("MIGRATOR_MAX_UNPACKED_BYTES", 2 * 1024 * 1024 * 1024, minimum=1024)
MIGRATOR_MAX_FILE_BYTES = env_int("MIGRATOR_MAX_FILE_BYTES", 512 * 1024 * 1024, minimum=1024)
# git sources: file:// and local paths are refused unless an operator allows them.
MIGRATOR_ALLOW_LOCAL_GIT = env_bool("MIGRATOR_ALLOW_LOCAL_GIT", False)
MIGRATOR_GIT_TIMEOUT_S = env_int("MIGRATOR_GIT_TIMEOUT_S", 300, minimum=1)

MIGRATOR_WORKSPACE_ROOT = Path(env_str("MIGRATOR_WORKSPACE_ROOT", str(VAR_DIR / "workspaces")))
MIGRATOR_CACHE_ROOT = Path(env_str("MIGRATOR_CACHE_ROOT", str(VAR_DIR / "cache")))

# Stage time limits (seconds): soft raises inside the task so the stage records a clean failure,
# hard kills the worker child. The heartbeat sweep fails stages whose worker died.
MIGRATOR_STAGE_SOFT_LIMIT_S = env_int("MIGRATOR_STAGE_SOFT_LIMIT_S", 3600, minimum=10)
MIGRATOR_STAGE_HARD_LIMIT_S = env_int("MIGRATOR_STAGE_HARD_LIMIT_S", 3900, minimum=20)
MIGRATOR_HEARTBEAT_STALE_S = env_int("MIGRATOR_HEARTBEAT_STALE_S", 120, minimum=5)
MIGRATOR_SWEEP_INTERVAL_S = env_int("MIGRATOR_SWEEP_INTERVAL_S", 30, minimum=1)
MIGRATOR_QUEUE_TIMEOUT_S = env_int("MIGRATOR_QUEUE_TIMEOUT_S", 6 * 3600, minimum=10)
MIGRATOR_RUNNER_OFFLINE_S = env_int("MIGRATOR_RUNNER_OFFLINE_S", 30, minimum=2)

# Stages an operator switched off (e.g. a web-only host); they are recorded as not available.
MIGRATOR_DISABLED_STAGES = env_list("MIGRATOR_DISABLED_STAGES", [])

REDIS_URL = env_str("MIGRATOR_REDIS_URL", "redis://127.0.0.1:6379/0")

# --- Celery -------------------------------------------------------------------------------
CELERY_BROKER_URL = env_str("MIGRATOR_BROKER_URL", REDIS_URL)
CELERY_RESULT_BACKEND = None  # results live in our own tables; nothing reads Celery results
CELERY_TASK_IGNORE_RESULT = True
# A stage message is acknowledged only after the stage finished, so a worker that dies mid-stage
# leaves the message to be redelivered (the idempotent claim then decides whether to rerun).
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
# Stages are long: never let one worker child reserve work another idle worker could take.
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
# Redis redelivers unacked messages after the visibility timeout: it must exceed the longest hard limit.
CELERY_BROKER_TRANSPORT_OPTIONS = {"visibility_timeout": MIGRATOR_STAGE_HARD_LIMIT_S + 600}
CELERY_TASK_DEFAULT_QUEUE = "cpu"
CELERY_TASK_QUEUES = (Queue("cpu"), Queue("hooks"), Queue("rocm"), Queue("cuda"))  # type: ignore[no-untyped-call]
CELERY_TASK_SOFT_TIME_LIMIT = MIGRATOR_STAGE_SOFT_LIMIT_S
CELERY_TASK_TIME_LIMIT = MIGRATOR_STAGE_HARD_LIMIT_S
CELERY_WORKER_SEND_TASK_EVENTS = False
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
CELERY_TASK_ALWAYS_EAGER = env_bool("MIGRATOR_CELERY_EAGER", False)
CELERY_BEAT_SCHEDULE = {
    "sweep-dead-stages": {"task": "worker.tasks.sweep", "schedule": float(MIGRATOR_SWEEP_INTERVAL_S)},
}

CACHES = {
    "default": {
        "BACKEND": "django.core.cache.backends.redis.RedisCache",
        "LOCATION": env_str("MIGRATOR_CACHE_URL", "redis://127.0.0.1:6379/1"),
        "TIMEOUT": 3600,
    }
}

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": env_str("MIGRATOR_LOG_LEVEL", "INFO")},
}

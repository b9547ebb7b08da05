"""Django settings. Every deployment setting comes from the environment (see README, "Settings")."""
from __future__ import annotations

import secrets
from pathlib import Path
from urllib.parse import urlsplit

import django_stubs_ext
from kombu import Queue  # type: ignore[attr-defined]

from migrator.envconf import (
    env_bool,
    env_fake_gpus,
    env_fake_torch,
    env_https_urls,
    env_int,
    env_list,
    env_mode,
    env_networks,
    env_str,
    is_loopback_host,
    public_url_from_bind,
    redis_url_next_db,
)
from migrator.localdb import database_credentials, database_engine

# Lets generic Django classes take type arguments at run time (ModelAdmin[Run], ModelForm[...]), so the
# admin and form classes are checked by mypy like the rest.
django_stubs_ext.monkeypatch()

BASE_DIR = Path(__file__).resolve().parent.parent
VAR_DIR = Path(env_str("MIGRATOR_VAR_DIR", str(BASE_DIR / "var")))

DEBUG = env_bool("MIGRATOR_DEBUG", False)
# production (default), demo, or test (set by migrator/test_settings.py). Only demo and test accept
# MIGRATOR_FAKE_GPUS; every result obtained on a fake device is labelled "[fake GPU]".
MIGRATOR_MODE = env_mode()
MIGRATOR_FAKE_GPUS = env_fake_gpus(MIGRATOR_MODE)
MIGRATOR_FAKE_ROCM_TORCH = env_fake_torch(MIGRATOR_MODE)  # likewise: results built with it are labelled fake


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
# Where gunicorn listens (./dev up and the Procfile use it).
MIGRATOR_BIND = env_str("MIGRATOR_BIND", "127.0.0.1:8000")
# The dashboard's address as seen from outside (links in reports, PR comments and commit statuses). Unset, it
# follows MIGRATOR_BIND; behind a bind other than loopback, start-up warns that it should be set
# (migrator/checks.py), since only the operator knows the name clients use.
MIGRATOR_PUBLIC_URL_SET = bool(env_str("MIGRATOR_PUBLIC_URL", ""))
MIGRATOR_PUBLIC_URL = (env_str("MIGRATOR_PUBLIC_URL", "") or public_url_from_bind(MIGRATOR_BIND)).rstrip("/")



def _plain_http_on_loopback(url: str) -> bool:
    parts = urlsplit(url)
    return parts.scheme == "http" and is_loopback_host((parts.hostname or "").lower())


# --- Deployment behind TLS ----------------------------------------------------------------
# On unless the site is plain http on this machine (the development default); MIGRATOR_TLS says so
# explicitly either way. On: session and CSRF cookies are sent over https only, and browsers are
# told (HSTS) to use https for MIGRATOR_HSTS_SECONDS.
# A public URL derived from the bind address (none set) is a development set-up: TLS stays off unless asked for.
MIGRATOR_TLS = env_bool("MIGRATOR_TLS", MIGRATOR_PUBLIC_URL_SET and not _plain_http_on_loopback(MIGRATOR_PUBLIC_URL))
SESSION_COOKIE_SECURE = MIGRATOR_TLS
CSRF_COOKIE_SECURE = MIGRATOR_TLS
SECURE_HSTS_SECONDS = env_int("MIGRATOR_HSTS_SECONDS", 365 * 24 * 3600 if MIGRATOR_TLS else 0, minimum=0)
SECURE_HSTS_INCLUDE_SUBDOMAINS = env_bool("MIGRATOR_HSTS_INCLUDE_SUBDOMAINS", False)
SECURE_SSL_REDIRECT = env_bool("MIGRATOR_SSL_REDIRECT", False)
# Only behind a proxy that sets X-Forwarded-Proto itself (and strips the client's): tells Django the
# request came over https, which HSTS and the redirect depend on.
if env_bool("MIGRATOR_TRUST_X_FORWARDED_PROTO", False):
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
SESSION_COOKIE_HTTPONLY = True
SECURE_REFERRER_POLICY = "same-origin"
X_FRAME_OPTIONS = "DENY"
# Always sent: pages load scripts and styles from our own static files only (no inline code).
MIGRATOR_CONTENT_SECURITY_POLICY = env_str(
    "MIGRATOR_CONTENT_SECURITY_POLICY",
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; font-src 'self'; "
    "connect-src 'self'; object-src 'none'; base-uri 'self'; form-action 'self'; frame-ancestors 'none'",
)

# --- Sign-in and API token throttling (migrator/accounts/throttle.py) ----------------------
# Growing delays on whoever failed: per (account, address) or (account, device), per address; valid
# tokens always pass. While Redis is down the counts go on per process (the operator log says so).
MIGRATOR_LOGIN_FREE_ATTEMPTS = env_int("MIGRATOR_LOGIN_FREE_ATTEMPTS", 5, minimum=1)  # per account and address/device
MIGRATOR_LOGIN_ADDRESS_FREE_ATTEMPTS = env_int("MIGRATOR_LOGIN_ADDRESS_FREE_ATTEMPTS", 20, minimum=1)
# A browser that signed in keeps a signed device cookie this long: its attempts count on their own.
MIGRATOR_LOGIN_DEVICE_DAYS = env_int("MIGRATOR_LOGIN_DEVICE_DAYS", 90, minimum=1)
MIGRATOR_TOKEN_FREE_ATTEMPTS = env_int("MIGRATOR_TOKEN_FREE_ATTEMPTS", 10, minimum=1)  # bad tokens per address
MIGRATOR_THROTTLE_BASE_S = env_int("MIGRATOR_THROTTLE_BASE_S", 30, minimum=1)  # doubled per further failure
MIGRATOR_THROTTLE_MAX_S = env_int("MIGRATOR_THROTTLE_MAX_S", 900, minimum=1)
# Trusted reverse proxies in front of the app: the client address is taken from X-Forwarded-For.
MIGRATOR_PROXY_HOPS = env_int("MIGRATOR_PROXY_HOPS", 0, minimum=0)

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
    "migrator.pipeline",
    "migrator.notebook",
    "ninja",
    "migrator.reports",
    "migrator.integrations",
    "migrator.api",
    "migrator.review",
    "migrator.dependencies",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "migrator.csp.ContentSecurityPolicyMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "migrator.unreadable.UnreadableRequestMiddleware",
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
# where PostgreSQL cannot be had; search then degrades to substring matching. Without MIGRATOR_DB_* in the
# environment, the engine and the role that ./dev set up are read from VAR_DIR (see migrator/localdb.py).
DB_ENGINE = database_engine(VAR_DIR)
_db_credentials = database_credentials(VAR_DIR)  # lower case: never shown among settings
DATABASES: dict[str, dict[str, object]]
if DB_ENGINE == "sqlite":
    DATABASES = {"default": {"ENGINE": "django.db.backends.sqlite3", "NAME": str(VAR_DIR / "migrator.sqlite3")}}
else:
    DATABASES = {
        "default": {
            "ENGINE": "django.db.backends.postgresql",
            "NAME": env_str("MIGRATOR_DB_NAME", "migrator"),
            "USER": _db_credentials.user,
            "PASSWORD": _db_credentials.password,
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
# git URLs must lead to public addresses (checked after DNS, and on every redirect; git connects to the
# checked address). Loopback and private addresses are allowed inside the networks listed here (a GitLab
# on the company network); link-local and cloud metadata addresses never.
MIGRATOR_GIT_TRUSTED_NETWORKS = env_networks("MIGRATOR_GIT_TRUSTED_NETWORKS", [])
# Code-host APIs the worker may post statuses and comments to: GitHub's and GitLab's public APIs plus
# the self-hosted https bases listed here. Their names must resolve to public addresses, except inside
# the networks listed in MIGRATOR_HOST_API_TRUSTED_NETWORKS (a GitLab on the company network).
MIGRATOR_ALLOWED_HOST_API_BASES = [
    "https://api.github.com", "https://gitlab.com/api/v4",
    *env_https_urls("MIGRATOR_ALLOWED_HOST_API_BASES", []),
]
MIGRATOR_HOST_API_TRUSTED_NETWORKS = env_networks("MIGRATOR_HOST_API_TRUSTED_NETWORKS", [])

MIGRATOR_WORKSPACE_ROOT = Path(env_str("MIGRATOR_WORKSPACE_ROOT", str(VAR_DIR / "workspaces")))
MIGRATOR_CACHE_ROOT = Path(env_str("MIGRATOR_CACHE_ROOT", str(VAR_DIR / "cache")))
# The most any project may set for these limits (worker/project_settings.py CAPPED): a save above one is
# refused with the setting and the cap named; a stored value above a cap lowered later runs at the cap.
MIGRATOR_SETTING_CAPS = {
    "build_memory_mb": env_int("MIGRATOR_MAX_BUILD_MEMORY_MB", 32768, minimum=256),
    "build_timeout_s": env_int("MIGRATOR_MAX_BUILD_TIMEOUT_S", 3600, minimum=1),
    "compile_timeout_s": env_int("MIGRATOR_MAX_COMPILE_TIMEOUT_S", 1800, minimum=1),  # each compile and link
    "smoke_timeout_s": env_int("MIGRATOR_MAX_SMOKE_TIMEOUT_S", 3600, minimum=1),
    "smoke_output_limit_bytes": env_int("MIGRATOR_MAX_SMOKE_OUTPUT_LIMIT_BYTES", 64 * 1024 * 1024, minimum=1024),
    "workspace_mb": env_int("MIGRATOR_MAX_WORKSPACE_MB", 51200, minimum=64),
}
# Retention: the work volumes of finished runs are removed after MIGRATOR_WORK_RETENTION_H hours, whole
# workspaces of runs older than MIGRATOR_RUN_RETENTION_DAYS days (their pages then say "expired"); 0 keeps them.
MIGRATOR_WORK_RETENTION_H = env_int("MIGRATOR_WORK_RETENTION_H", 24, minimum=0)
MIGRATOR_RUN_RETENTION_DAYS = env_int("MIGRATOR_RUN_RETENTION_DAYS", 30, minimum=0)
MIGRATOR_RETENTION_INTERVAL_S = env_int("MIGRATOR_RETENTION_INTERVAL_S", 3600, minimum=10)

# Stage time limits (seconds): soft raises inside the task so the stage records a clean failure,
# hard kills the worker child. The heartbeat sweep fails stages whose worker died.
MIGRATOR_STAGE_SOFT_LIMIT_S = env_int("MIGRATOR_STAGE_SOFT_LIMIT_S", 3600, minimum=10)
MIGRATOR_STAGE_HARD_LIMIT_S = env_int("MIGRATOR_STAGE_HARD_LIMIT_S", 3900, minimum=20)
MIGRATOR_HEARTBEAT_STALE_S = env_int("MIGRATOR_HEARTBEAT_STALE_S", 120, minimum=5)
MIGRATOR_SWEEP_INTERVAL_S = env_int("MIGRATOR_SWEEP_INTERVAL_S", 30, minimum=1)
# A queued stage whose message the broker no longer holds is published again by the sweep once it
# has waited this long (a message just being published or taken is not mistaken for a lost one).
# At most half a sweep interval, so a lost message is re-sent by the first or second sweep after the loss.
MIGRATOR_REPUBLISH_GRACE_S = env_int(
    "MIGRATOR_REPUBLISH_GRACE_S", max(1, min(10, MIGRATOR_SWEEP_INTERVAL_S // 2)), minimum=1
)
# Answered with 503 when a run cannot be queued because the broker is down.
MIGRATOR_BROKER_RETRY_AFTER_S = env_int("MIGRATOR_BROKER_RETRY_AFTER_S", 30, minimum=1)
MIGRATOR_QUEUE_TIMEOUT_S = env_int("MIGRATOR_QUEUE_TIMEOUT_S", 6 * 3600, minimum=10)
MIGRATOR_RUNNER_OFFLINE_S = env_int("MIGRATOR_RUNNER_OFFLINE_S", 30, minimum=2)
# A run of the command line (migrate_repo) whose compile failed builds its CUDA reference with the local nvcc,
# when one is on PATH (its results are evidence on the run's causes); off: the reference is recorded as not run.
MIGRATOR_LOCAL_CUDA_REFERENCE = env_bool("MIGRATOR_LOCAL_CUDA_REFERENCE", True)
# A delivery's CUDA check handed to a cuda runner: sent again after this long unclaimed (or ended "not
# checked" when no CUDA runner is online), and ended "runner lost" when running twice as long.
MIGRATOR_PORT_CUDA_CHECK_WAIT_S = env_int("MIGRATOR_PORT_CUDA_CHECK_WAIT_S", 1800, minimum=10)
# Dependency resolves (queue "deps"): the time limit of one resolve, and how long a result is reused
# before the next run that asks for it resolves again (indexes gain releases).
MIGRATOR_DEPS_TIMEOUT_S = env_int("MIGRATOR_DEPS_TIMEOUT_S", 600, minimum=10)
MIGRATOR_DEPS_CACHE_DAYS = env_int("MIGRATOR_DEPS_CACHE_DAYS", 7, minimum=0)

# Webhooks: the same change (project, event, commit, pull request) delivered again under a fresh delivery
# id within this window starts nothing; nor does a delivery once a project's webhooks started this many
# runs within an hour. Both answer 200 and are recorded with the reason.
MIGRATOR_WEBHOOK_DEDUP_WINDOW_S = env_int("MIGRATOR_WEBHOOK_DEDUP_WINDOW_S", 24 * 3600, minimum=0)
MIGRATOR_WEBHOOK_RUNS_PER_HOUR = env_int("MIGRATOR_WEBHOOK_RUNS_PER_HOUR", 60, minimum=1)

# Stages an operator switched off (e.g. a web-only host); they are recorded as not available.
MIGRATOR_DISABLED_STAGES = env_list("MIGRATOR_DISABLED_STAGES", [])

# One Redis base for the instance: the broker uses it, the cache the database after it, unless each is set on
# its own (MIGRATOR_BROKER_URL, MIGRATOR_CACHE_URL). A second instance on the same Redis needs only another base.
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
# "deps": dependency resolves, served by a worker of their own so a long resolve never holds a compile slot.
CELERY_TASK_QUEUES = (Queue("cpu"), Queue("hooks"), Queue("rocm"), Queue("cuda"), Queue("deps"))  # type: ignore[no-untyped-call]
CELERY_TASK_SOFT_TIME_LIMIT = MIGRATOR_STAGE_SOFT_LIMIT_S
CELERY_TASK_TIME_LIMIT = MIGRATOR_STAGE_HARD_LIMIT_S
CELERY_WORKER_SEND_TASK_EVENTS = False
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
CELERY_TASK_ALWAYS_EAGER = env_bool("MIGRATOR_CELERY_EAGER", False)
CELERY_BEAT_SCHEDULE = {
    "sweep-dead-stages": {"task": "worker.tasks.sweep", "schedule": float(MIGRATOR_SWEEP_INTERVAL_S)},
    # Webhook deliveries whose hand-off message was lost (their app's own periodic task).
    "requeue-stale-deliveries": {
        "task": "integrations.requeue_stale_deliveries", "schedule": float(MIGRATOR_SWEEP_INTERVAL_S),
    },
    # Work areas and workspaces of old finished runs (migrator/pipeline/retention.py).
    "sweep-retention": {"task": "pipeline.sweep_retention", "schedule": float(MIGRATOR_RETENTION_INTERVAL_S)},
    # Dependency resolves whose worker died or whose message was lost (the dependencies app's own task).
    "sweep-dependency-resolves": {"task": "dependencies.sweep", "schedule": float(MIGRATOR_SWEEP_INTERVAL_S)},
    # Deliveries whose CUDA check no cuda runner took or finished (the reports app's own task).
    "sweep-port-cuda-checks": {"task": "reports.sweep_port_cuda_checks", "schedule": float(MIGRATOR_SWEEP_INTERVAL_S)},
}

CACHE_URL = env_str("MIGRATOR_CACHE_URL", "") or redis_url_next_db(REDIS_URL)
CACHES = {
    "default": {"BACKEND": "django.core.cache.backends.redis.RedisCache", "LOCATION": CACHE_URL, "TIMEOUT": 3600},
    # Failed sign-in and token counts (shared by every web process, so limits hold across them).
    "throttle": {"BACKEND": "django.core.cache.backends.redis.RedisCache", "LOCATION": CACHE_URL, "KEY_PREFIX": "t",
                 # A Redis that stopped answering must not hold sign-ins: give up soon, count per process.
                 "OPTIONS": {"socket_connect_timeout": 1, "socket_timeout": 1}},
}

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": env_str("MIGRATOR_LOG_LEVEL", "INFO")},
}
